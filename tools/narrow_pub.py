#!/usr/bin/env python3
"""Narrow the library's `pub` to what its users outside the crate need (issue 25, item 5).

Usage (from the workspace root, CARGO_TARGET_DIR as usual):

    python3 tools/narrow_pub.py [--resume] [--max-rounds N] [--report PATH] [--no-fmt]

Steps, each printed as it goes:

a. Every `pub` visibility in `crates/tier1/src` (items, fields, modules, `use`, lib.rs's module
   declarations) becomes `pub(crate)`; `pub(crate)`, `pub(super)`, `pub(in ..)` are left alone, and
   comments, doc comments and string literals are never touched (a small Rust lexer finds the
   tokens). `--resume` skips this step and carries on from the tree as it is.
b. `cargo check --workspace --all-targets --keep-going --message-format=json` builds the library's
   users (`bins/`, `tests/`, `benches/`, `examples/`, the lib's own tests), and `pub` is restored at
   the definitions the privacy diagnostics point to: E0603 (private item/module: the "defined here"
   note), E0624 (private method/associated item: the "defined here" span), E0616/E0451 (private
   field: the field of that name in every struct of that name), E0364/E0365 (a `pub use` of a
   crate-only item: the re-exported definition, found by resolving the `use` path through the
   module tree), the private constructor of a tuple struct (its private fields), and the
   `private_interfaces`/`private_bounds` warnings ("only usable at visibility" note), E0446 (a
   crate-only type in a public associated type), and E0423 "found module `x`" (a user's import of
   `x` now sees only the public module of a module/function pair: every `x` its path names). A leaf of a
   `use` group is split out of the group rather than publishing its siblings. Repeated until the
   build has no privacy diagnostic (at most `--max-rounds`).
c. `#![warn(unreachable_pub)]` goes into lib.rs (Cargo's `[lints] workspace = true` cannot be
   combined with a package's own lints, and the workspace table would put the lint on the
   binaries and tests too), and each `unreachable_pub` suggestion is applied (`pub` ->
   `pub(crate)`; a leaf of a `use` group is split out instead of narrowing the whole group, which
   would break a `pub use` of one of its siblings with E0364). Step b runs again after it.
   Then each `rustdoc::private_intra_doc_links` link (a public item's docs linking to an item that
   is now crate-only) becomes its plain text (`[`x`]` -> `x` in code), and one last build must
   show no privacy diagnostic and no error.
d. The warnings left in the library (`cargo check -p tier1 --lib`) are printed as
   `file:line: lint: message`, `dead_code` first, and written to `--report`
   (default `target/narrow_pub_report.txt`). Then `cargo fmt --all` (unless `--no-fmt`).

Exit status: 0 when the tree builds with no privacy diagnostic, 1 otherwise (the diagnostics that
could not be mapped to a definition are printed).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

RESTRICTED = {"crate", "self", "super", "in"}
QUALIFIERS = {"async", "unsafe", "default", "safe"}
BODY_KINDS = {"fn", "struct", "enum", "union", "trait", "impl", "mod", "macro_rules", "extern"}


# ---------------------------------------------------------------------------------------------
# Lexer: code tokens of a Rust file, comments and whitespace left out.


def _skip_string(text, i):
    """End of the string literal whose opening quote is at `i`."""
    j, n = i + 1, len(text)
    while j < n:
        if text[j] == "\\":
            j += 2
        elif text[j] == '"':
            return j + 1
        else:
            j += 1
    return n


def _skip_char(text, i):
    """End of the char literal whose opening quote is at `i`."""
    j, n = i + 1, len(text)
    if j < n and text[j] == "\\":
        j += 2
    while j < n and text[j] != "'":
        j += 1
    return j + 1


def _ident_end(text, j):
    n = len(text)
    while j < n and (text[j].isalnum() or text[j] == "_"):
        j += 1
    return j


def lex(text):
    """Tokens (kind, start, end): kind is 'id', 'lit', 'lt' (lifetime) or 'p' (one punct char)."""
    toks = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, j = 0, i
            while j < n:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                    if depth == 0:
                        break
                else:
                    j += 1
            i = j
        elif c.isalpha() or c == "_":
            j = _ident_end(text, i + 1)
            word = text[i:j]
            if word in ("r", "br", "cr") and j < n and text[j] in '"#':
                k = j
                while k < n and text[k] == "#":
                    k += 1
                hashes = k - j
                if k < n and text[k] == '"':
                    end = text.find('"' + "#" * hashes, k + 1)
                    end = n if end < 0 else end + 1 + hashes
                    toks.append(("lit", i, end))
                    i = end
                    continue
                if word == "r" and hashes == 1:  # raw identifier
                    end = _ident_end(text, k)
                    toks.append(("id", i, end))
                    i = end
                    continue
            if word in ("b", "c") and j < n and text[j] == '"':
                end = _skip_string(text, j)
                toks.append(("lit", i, end))
                i = end
            elif word == "b" and j < n and text[j] == "'":
                end = _skip_char(text, j)
                toks.append(("lit", i, end))
                i = end
            else:
                toks.append(("id", i, j))
                i = j
        elif c.isdigit():
            j = _ident_end(text, i + 1)
            if j + 1 < n and text[j] == "." and text[j + 1].isdigit():
                j = _ident_end(text, j + 1)
            toks.append(("lit", i, j))
            i = j
        elif c == '"':
            end = _skip_string(text, i)
            toks.append(("lit", i, end))
            i = end
        elif c == "'":
            if i + 1 < n and text[i + 1] == "\\":
                end = _skip_char(text, i)
                toks.append(("lit", i, end))
                i = end
            elif i + 2 < n and text[i + 2] == "'":
                toks.append(("lit", i, i + 3))
                i += 3
            else:
                end = _ident_end(text, i + 1)
                toks.append(("lt", i, end))
                i = end
        else:
            toks.append(("p", i, i + 1))
            i += 1
    return toks


class Src:
    """One source file: its text, tokens and byte-to-char offsets (rustc's spans are in bytes)."""

    def __init__(self, path):
        self.path = Path(path)
        self.raw = self.path.read_bytes()
        self.text = self.raw.decode("utf-8")
        self.toks = lex(self.text)
        self.starts = [t[1] for t in self.toks]

    def tok(self, i):
        """Text of token `i` ('' past the end)."""
        if 0 <= i < len(self.toks):
            _, s, e = self.toks[i]
            return self.text[s:e]
        return ""

    def char_at(self, byte):
        return len(self.raw[:byte].decode("utf-8", errors="replace"))

    def tok_index_at(self, pos):
        """Index of the first token starting at or after char `pos`."""
        lo, hi = 0, len(self.starts)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.starts[mid] < pos:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def vis_at(self, i):
        """(end token index, text) of a visibility starting at token `i`, or None."""
        if self.tok(i) != "pub":
            return None
        if self.tok(i + 1) == "(" and self.tok(i + 2) in RESTRICTED:
            j = i + 1
            while j < len(self.toks) and self.tok(j) != ")":
                j += 1
            return j + 1, self.text[self.toks[i][1] : self.toks[j][2]]
        return i + 1, "pub"

    def matching(self, i):
        """Index of the token closing the bracket opened at token `i`."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        depth = 0
        for j in range(i, len(self.toks)):
            t = self.tok(j)
            if t in pairs:
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    return j
        return len(self.toks) - 1

    def line_of(self, pos):
        return self.text.count("\n", 0, pos) + 1


# ---------------------------------------------------------------------------------------------
# Items, `use` trees and the module tree (enough of Rust's name resolution for `use` paths).


class UseLeaf:
    def __init__(self, path, alias, name_tok, start_tok, end_tok):
        self.path = path  # full path, the leaf's own name last ('*' for a glob)
        self.alias = alias
        self.name_tok = name_tok
        self.start_tok = start_tok  # first token of the leaf's path inside its innermost group
        self.end_tok = end_tok  # one past its last token

    def binding(self):
        if self.alias:
            return self.alias
        return self.path[-2] if self.path[-1] == "self" else self.path[-1]


def parse_use_tree(src, i, prefix, leaves):
    """Parse the use tree at token `i` below `prefix`; returns (node, next index)."""
    segs = []
    start = i
    while True:
        t = src.tok(i)
        if t == ":" and src.tok(i + 1) == ":":
            segs.append("")
            i += 2
            continue
        if t == "*":
            leaf = UseLeaf(prefix + segs + ["*"], None, i, start, i + 1)
            leaves.append(leaf)
            return ("leaf", segs, leaf), i + 1
        if t == "{":
            i += 1
            children = []
            while src.tok(i) != "}" and i < len(src.toks):
                child, i = parse_use_tree(src, i, prefix + segs, leaves)
                children.append(child)
                if src.tok(i) == ",":
                    i += 1
            return ("group", segs, children), i + 1
        name_tok = i
        i += 1
        if src.tok(i) == ":" and src.tok(i + 1) == ":":
            segs.append(t)
            i += 2
            continue
        alias = None
        if src.tok(i) == "as":
            alias = src.tok(i + 1)
            i += 2
        leaf = UseLeaf(prefix + segs + [t], alias, name_tok, start, i)
        leaves.append(leaf)
        return ("leaf", segs + [t], leaf), i


def render_use_tree(node, keep):
    """Text of `node` with only the leaves `keep` accepts, or None when none is left."""
    kind, segs, payload = node
    if kind == "leaf":
        if not keep(payload):
            return None
        text = "::".join(segs)
        return text + (f" as {payload.alias}" if payload.alias else "")
    kids = [k for k in (render_use_tree(c, keep) for c in payload) if k is not None]
    if not kids:
        return None
    head = "::".join(segs)
    if len(kids) == 1 and kids[0] != "self":
        return f"{head}::{kids[0]}" if segs else kids[0]
    body = "{" + ", ".join(kids) + "}"
    return f"{head}::{body}" if segs else body


class Item:
    def __init__(self, src, kind, name, vis, start_tok, end_tok):
        self.src = src
        self.kind = kind
        self.name = name
        self.vis = vis  # (first token, end token, text) or None
        self.start_tok = start_tok  # first token after the attributes
        self.attr_tok = start_tok  # first token of the attributes
        self.end_tok = end_tok  # one past the last token
        self.body = None  # (first, last) token of an inline module's body
        self.tree = None
        self.leaves = []


def scan_items(src, i, end):
    """The items between tokens `i` and `end` (one nesting level)."""
    items = []
    while i < end:
        attr = i
        while src.tok(i) == "#":
            j = i + 1
            if src.tok(j) == "!":
                j += 1
            if src.tok(j) != "[":
                break
            i = src.matching(j) + 1
        start = i
        vis = None
        v = src.vis_at(i)
        if v:
            vis = (i, v[0], v[1])
            i = v[0]
        kind, name = None, None
        while i < end:
            t = src.tok(i)
            if t in QUALIFIERS or (t == "const" and src.tok(i + 1) in ("fn", "unsafe", "async", "extern")):
                i += 1
            elif t == "extern" and src.tok(i + 1) == "fn":
                i += 1
            elif t == "extern" and i + 1 < len(src.toks) and src.toks[i + 1][0] == "lit":
                i += 2  # `extern "C" fn` or `extern "C" { .. }` (the block ends like a body)
            else:
                break
        t = src.tok(i)
        if t in ("fn", "struct", "enum", "union", "trait", "type", "const", "static", "mod"):
            kind = t
            j = i + 1
            if t == "static" and src.tok(j) == "mut":
                j += 1
            name = src.tok(j)
        elif t == "use":
            kind = "use"
        elif t == "impl":
            kind = "impl"
        elif t == "extern":
            kind = "extern"
        elif t == "macro_rules":
            kind = "macro_rules"
        # the item's end: a `;` at depth 0, or the `}` closing a body
        j = i
        depth = 0
        stop = end
        while j < end:
            t = src.tok(j)
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
                if depth == 0 and t == "}" and (kind in BODY_KINDS or kind is None):
                    if kind == "macro_rules" or kind is None:
                        if src.tok(j + 1) == ";":
                            j += 1
                    stop = j + 1
                    break
                if depth < 0:
                    stop = j
                    break
            elif t == ";" and depth == 0:
                stop = j + 1
                break
            j += 1
        if stop <= start:
            stop = start + 1
        item = Item(src, kind, name, vis, start, stop)
        item.attr_tok = attr
        if kind == "mod" and src.tok(i + 2) == "{":
            item.body = (i + 3, src.matching(i + 2))
        if kind == "use":
            item.tree, _ = parse_use_tree(src, i + 1, [], item.leaves)
        items.append(item)
        i = stop
    return items


class Module:
    def __init__(self, path, src, first, last, parent, child_dir, decl):
        self.path = path
        self.src = src
        self.parent = parent
        self.child_dir = child_dir
        self.decl = decl  # the `mod` item in the parent, None for the crate root
        self.items = scan_items(src, first, last)
        self.children = {}


class Crate:
    """The library's sources and module tree."""

    def __init__(self, src_dir):
        self.src_dir = Path(src_dir)
        self.files = {}
        self.modules = []
        self.root = self._module(("crate",), self.file(self.src_dir / "lib.rs"), None, self.src_dir, None)

    def file(self, path):
        path = Path(path).resolve()
        if path not in self.files:
            self.files[path] = Src(path)
        return self.files[path]

    def _module(self, path, src, parent, child_dir, decl, first=0, last=None):
        last = len(src.toks) if last is None else last
        m = Module(path, src, first, last, parent, child_dir, decl)
        self.modules.append(m)
        for it in m.items:
            if it.kind != "mod" or not it.name:
                continue
            if it.body:
                child = self._module(path + (it.name,), src, m, child_dir / it.name, it, it.body[0], it.body[1])
            else:
                flat, nested = child_dir / f"{it.name}.rs", child_dir / it.name / "mod.rs"
                f = flat if flat.exists() else nested
                if not f.exists():
                    continue
                child = self._module(path + (it.name,), self.file(f), m, child_dir / it.name, it)
            m.children[it.name] = child
        return m

    def module_at(self, src, tok):
        """The innermost module of `src` whose body holds token `tok`."""
        best = None
        for m in self.modules:
            if m.src is not src:
                continue
            lo, hi = (m.decl.body if m.decl and m.decl.body else (0, len(src.toks)))
            if lo <= tok < hi and (best is None or len(m.path) > len(best.path)):
                best = m
        return best

    def use_items(self, src):
        """Every `use` item of `src` (at any module depth)."""
        return [it for m in self.modules if m.src is src for it in m.items if it.kind == "use"]

    def resolve_module(self, mod, name, seen):
        if name == "self":
            return mod
        if name == "super":
            return mod.parent
        if name == "crate":
            return self.root
        if name in mod.children:
            return mod.children[name]
        for it in mod.items:
            if it.kind != "use":
                continue
            for leaf in it.leaves:
                if leaf.path[-1] != "*" and leaf.binding() == name:
                    key = (id(it), leaf.name_tok)
                    if key in seen:
                        continue
                    seen.add(key)
                    target = self.walk(mod, leaf.path[:-1] if leaf.path[-1] == "self" else leaf.path, seen)
                    if target:
                        return target
        return None

    def walk(self, mod, path, seen):
        """The module a whole `path` names, seen from `mod`, or None."""
        for seg in path:
            if mod is None or seg == "":
                return None
            mod = self.resolve_module(mod, seg, seen)
        return mod

    def defs(self, mod, path, seen=None):
        """The chain of definitions (items, `use` leaves, module declarations) `path` names from `mod`."""
        seen = set() if seen is None else seen
        if path and path[-1] == "self":
            path = path[:-1]
        if not path:
            return []
        owner = self.walk(mod, path[:-1], seen)
        if owner is None:
            return []
        name = path[-1]
        if name in ("self", "super", "crate"):
            target = self.resolve_module(owner, name, seen)
            return [("mod", target)] if target and target.decl else []
        out = []
        if name in owner.children:
            out.append(("mod", owner.children[name]))
        for it in owner.items:
            if it.name == name and it.kind not in ("use", "mod", "impl"):
                out.append(("item", it))
        for it in owner.items:
            if it.kind != "use":
                continue
            for leaf in it.leaves:
                if leaf.path[-1] != "*" and leaf.binding() == name:
                    key = (id(it), leaf.name_tok)
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append(("leaf", it, leaf))
                    out.extend(self.defs(owner, leaf.path, seen))
        if not out:
            for it in owner.items:
                if it.kind != "use":
                    continue
                for leaf in it.leaves:
                    if leaf.path[-1] == "*":
                        key = (id(it), leaf.name_tok, name)
                        if key in seen:
                            continue
                        seen.add(key)
                        found = self.defs(owner, leaf.path[:-1] + [name], seen)
                        if found:
                            out.append(("leaf", it, leaf))
                            out.extend(found)
        return out


# ---------------------------------------------------------------------------------------------
# Edits: visibility replacements and `use` statements split by visibility, applied per file.


class Edits:
    def __init__(self, crate):
        self.crate = crate
        self.vis = {}  # (path, first token) -> new visibility text
        self.leaves = {}  # (path, use item start token) -> (item, {leaf name token: vis})
        self.notes = []

    def set_vis(self, src, tok, new):
        v = src.vis_at(tok)
        if v is None or v[1] == new:
            return False
        key = (src.path, tok)
        if self.vis.get(key) == new:
            return False
        self.vis[key] = new
        return True

    def set_leaf(self, item, leaf, new):
        """Give `use` leaf `leaf` of `item` visibility `new` (a group is split by visibility)."""
        if item.vis is None:
            return False
        current = self.leaves.setdefault((item.src.path, item.start_tok), (item, {}))[1]
        if current.get(leaf.name_tok, item.vis[2]) == new:
            return False
        current[leaf.name_tok] = new
        return True

    def count(self):
        return len(self.vis) + sum(len(v[1]) for v in self.leaves.values())

    def apply(self):
        by_file = {}
        for (path, tok), new in self.vis.items():
            src = self.crate.files[path]
            end, _ = src.vis_at(tok)
            by_file.setdefault(path, []).append((src.toks[tok][1], src.toks[end - 1][2], new))
        for (path, _), (item, wanted) in self.leaves.items():
            src = item.src
            old = item.vis[2]
            if all(wanted.get(l.name_tok, old) == wanted.get(item.leaves[0].name_tok, old) for l in item.leaves):
                new = wanted.get(item.leaves[0].name_tok, old)
                if new == old:
                    continue
                by_file.setdefault(path, []).append((src.toks[item.vis[0]][1], src.toks[item.vis[1] - 1][2], new))
                continue
            groups = {}
            for leaf in item.leaves:
                groups.setdefault(wanted.get(leaf.name_tok, old), set()).add(leaf.name_tok)
            attr_start = src.toks[item.attr_tok][1]
            line_start = src.text.rfind("\n", 0, attr_start) + 1
            indent = src.text[line_start:attr_start]
            attrs = src.text[attr_start : src.toks[item.vis[0]][1]]
            stmt_end = src.toks[item.end_tok - 1][2]
            inner = src.text[src.toks[item.vis[1]][1] : stmt_end]
            if "//" in inner or "/*" in inner:
                self.notes.append(f"{src.path}: a comment inside a split `use` was dropped")
            parts = []
            for vis in sorted(groups, key=lambda v: (v != "pub", v)):
                toks = groups[vis]
                text = render_use_tree(item.tree, lambda l, toks=toks: l.name_tok in toks)
                parts.append(f"{vis} use {text};")
            joined = ("\n" + indent + attrs).join(parts)
            by_file.setdefault(path, []).append((src.toks[item.vis[0]][1], stmt_end, joined))
        for path, edits in by_file.items():
            text = self.crate.files[path].text
            edits.sort(reverse=True)
            last = None
            for s, e, new in edits:
                if last is not None and e > last:
                    continue  # overlapping edit (a vis inside a split statement): the split wins
                text = text[:s] + new + text[e:]
                last = s
            Path(path).write_text(text, encoding="utf-8")
        return len(by_file)


# ---------------------------------------------------------------------------------------------
# Step a: narrow.


def narrow(src_dir):
    total = 0
    for path in sorted(Path(src_dir).rglob("*.rs")):
        src = Src(path)
        spots = []
        for i, (kind, s, e) in enumerate(src.toks):
            if kind == "id" and src.text[s:e] == "pub" and not (src.tok(i + 1) == "(" and src.tok(i + 2) in RESTRICTED):
                spots.append((s, e))
        if not spots:
            continue
        text = src.text
        for s, e in reversed(spots):
            text = text[:s] + "pub(crate)" + text[e:]
        path.write_text(text, encoding="utf-8")
        total += len(spots)
    return total


# ---------------------------------------------------------------------------------------------
# Step b: restore what the users need.

PRIVACY_CODES = {"E0603", "E0616", "E0624", "E0451", "E0364", "E0365", "E0446", "E0445", "E0423"}
PRIVACY_LINTS = {"private_interfaces", "private_bounds"}


def cargo_json(args, root):
    cmd = ["cargo"] + args + ["--message-format=json"]
    proc = subprocess.run(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    diags, seen = [], set()
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-message":
            continue
        d = msg["message"]
        key = d.get("rendered") or json.dumps(d, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        diags.append(d)
    if proc.returncode != 0 and not any(d["level"] == "error" for d in diags):
        sys.stderr.write(proc.stderr[-4000:])
    return proc.returncode, diags


def code_of(d):
    return (d.get("code") or {}).get("code") or ""


def all_spans(d):
    for s in d.get("spans", []):
        yield d, s
    for c in d.get("children", []):
        yield from all_spans(c)


class Restorer:
    def __init__(self, root, src_dir):
        self.root = Path(root)
        self.src_dir = Path(src_dir).resolve()
        self.crate = Crate(self.src_dir)
        self.edits = Edits(self.crate)
        self.unmapped = []

    def lib_src(self, span):
        path = (self.root / span["file_name"]).resolve()
        if self.src_dir not in path.parents:
            return None
        return self.crate.file(path)

    def use_item_at(self, src, pos):
        for it in self.crate.use_items(src):
            if src.toks[it.start_tok][1] <= pos < src.toks[it.end_tok - 1][2]:
                return it
        return None

    def restore_def(self, d):
        kind = d[0]
        if kind == "item":
            it = d[1]
            return bool(it.vis) and it.vis[2] != "pub" and self.edits.set_vis(it.src, it.vis[0], "pub")
        if kind == "mod":
            m = d[1]
            return bool(m.decl and m.decl.vis) and self.edits.set_vis(m.decl.src, m.decl.vis[0], "pub")
        _, it, leaf = d
        return self.edits.set_leaf(it, leaf, "pub")

    def restore_leaf(self, src, item, s, e, name):
        """Restore the leaf of `item` that the span [s, e) covers, then what it re-exports."""
        changed = False
        mod = self.crate.module_at(src, item.start_tok)
        for leaf in item.leaves:
            lo, hi = src.toks[leaf.start_tok][1], src.toks[leaf.end_tok - 1][2]
            if not (lo <= s < hi or s <= lo < e):
                continue
            changed |= self.edits.set_leaf(item, leaf, "pub")
            path = leaf.path[:-1] + [name] if leaf.path[-1] == "*" and name else leaf.path
            for d in self.crate.defs(mod, path):
                changed |= self.restore_def(d)
        return changed

    def restore_at(self, span, name=None):
        """Restore the visibility of the definition that starts at (or holds) `span`."""
        src = self.lib_src(span)
        if src is None:
            return False
        s, e = src.char_at(span["byte_start"]), src.char_at(span["byte_end"])
        item = self.use_item_at(src, s)
        if item is not None:
            return self.restore_leaf(src, item, s, e, name)
        # the last visibility at or before s that belongs to the same item
        i = src.tok_index_at(s + 1) - 1
        while i >= 0 and src.tok(i) != "pub":
            i -= 1
        if i < 0:
            return False
        v = src.vis_at(i)
        if v[1] == "pub":
            return False
        depth = 0
        for j in range(v[0], src.tok_index_at(s)):
            t = src.tok(j)
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
                if depth <= 0:
                    return False
            elif t in (";", ",") and depth == 0:
                return False
        return self.edits.set_vis(src, i, "pub")

    def restore_within(self, span):
        """Restore every `pub(crate)` inside `span` (the fields of a tuple struct)."""
        src = self.lib_src(span)
        if src is None:
            return False
        s, e = src.char_at(span["byte_start"]), src.char_at(span["byte_end"])
        changed = False
        for i in range(src.tok_index_at(s), src.tok_index_at(e)):
            v = src.vis_at(i)
            if v and v[1] != "pub":
                changed |= self.edits.set_vis(src, i, "pub")
        return changed

    def restore_field(self, struct, field):
        """Restore field `field` of every struct or union named `struct`."""
        struct = struct.split("<")[0].split("::")[-1]
        changed = False
        for path in sorted(self.src_dir.rglob("*.rs")):
            src = self.crate.file(path)
            for i in range(len(src.toks) - 1):
                if src.tok(i) not in ("struct", "union") or src.tok(i + 1) != struct:
                    continue
                j = i + 2
                while j < len(src.toks) and src.tok(j) not in ("{", "(", ";"):
                    j += 1
                if src.tok(j) == ";":
                    continue
                close = src.matching(j)
                if src.tok(j) == "{":
                    changed |= self._named_field(src, j, close, field)
                else:
                    changed |= self._tuple_field(src, j, close, field)
        return changed

    def _named_field(self, src, open_, close, field):
        depth = 0
        for k in range(open_ + 1, close):
            t = src.tok(k)
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
            elif depth == 0 and t == field and src.tok(k + 1) == ":" and src.tok(k + 2) != ":":
                for back in range(k - 1, open_, -1):
                    if src.tok(back) == "pub":
                        return self.edits.set_vis(src, back, "pub")
                    if src.tok(back) in (",", "]"):
                        break
        return False

    def _tuple_field(self, src, open_, close, field):
        if not field.isdigit():
            return False
        index, depth, angle, k = 0, 0, 0, open_ + 1
        while k < close:
            t = src.tok(k)
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
            elif t == "<":
                angle += 1
            elif t == ">" and src.tok(k - 1) != "-":
                angle -= 1
            elif t == "," and depth == 0 and angle == 0:
                index += 1
            elif t == "pub" and depth == 0 and angle == 0 and index == int(field):
                return self.edits.set_vis(src, k, "pub")
            k += 1
        return False

    def resolve_reexport(self, span):
        """E0364/E0365: restore the crate-only definition a `pub use` leaf re-exports."""
        src = self.lib_src(span)
        if src is None:
            return False
        s, e = src.char_at(span["byte_start"]), src.char_at(span["byte_end"])
        item = self.use_item_at(src, s)
        if item is None:
            return False
        mod = self.crate.module_at(src, item.start_tok)
        changed = False
        for leaf in item.leaves:
            lo, hi = src.toks[leaf.start_tok][1], src.toks[leaf.end_tok - 1][2]
            if lo <= s < hi or s <= lo < e:
                for d in self.crate.defs(mod, leaf.path):
                    if d[0] != "leaf" or d[2] is not leaf:
                        changed |= self.restore_def(d)
        return changed

    def restore_user_import(self, d, name):
        """Restore every definition a user's `use tier1::..` of `name` (or a `tier1::` path) names."""
        span = next((s for s in d["spans"] if s["is_primary"]), None)
        if span is None:
            return False
        path = (self.root / span["file_name"]).resolve()
        if not path.exists() or self.src_dir in path.parents:
            return False
        user = Src(path)
        pos = user.char_at(span["byte_start"])
        paths = []
        i = user.tok_index_at(pos)
        j = i
        while j >= 2 and user.tok(j - 1) == ":" and user.tok(j - 2) == ":":
            j -= 3
        segs = [user.tok(k) for k in range(j, i + 1, 3)]
        if len(segs) > 1:
            paths.append(segs)
        for k in range(len(user.toks)):
            if user.tok(k) == "use" and user.toks[k][0] == "id":
                leaves = []
                try:
                    parse_use_tree(user, k + 1, [], leaves)
                except RecursionError:
                    continue
                paths += [l.path for l in leaves if l.binding() == name]
        changed = False
        for p in paths:
            if p and p[0] == "tier1":
                for dd in self.crate.defs(self.crate.root, p[1:]):
                    changed |= self.restore_def(dd)
        return changed

    def handle(self, d):
        """Restore what diagnostic `d` asks for; True when it was a privacy diagnostic."""
        code = code_of(d)
        msg = d["message"]
        if code not in PRIVACY_CODES and code not in PRIVACY_LINTS:
            return False
        names = re.findall(r"`([^`]+)`", msg)
        changed = False
        if code in ("E0616", "E0451"):
            # "field `a` of struct `S` is private", "fields `a`, `b` and `c` of struct `S` are private"
            m = re.search(r"fields? (.*) of (?:struct|union) `([^`]+)`", msg)
            if m:
                for field in re.findall(r"`([^`]+)`", m.group(1)):
                    changed |= self.restore_field(m.group(2), field)
        elif code in ("E0364", "E0365"):
            for _, span in all_spans({"spans": [s for s in d["spans"] if s["is_primary"]]}):
                changed |= self.resolve_reexport(span)
        elif code == "E0423":
            # "expected function, found module `confirm`": the user imports a name whose other
            # namespace (a function next to a module of the same name) went crate-only.
            if "found module" in msg and names:
                changed = self.restore_user_import(d, names[-1])
        elif code in PRIVACY_LINTS:
            for c in d.get("children", []):
                if "only usable at visibility" in c["message"]:
                    for span in c["spans"]:
                        changed |= self.restore_at(span)
        else:
            name = names[0] if names else None
            for owner, span in all_spans(d):
                label = span.get("label") or ""
                if "constructor is private if any of the fields is private" in label:
                    changed |= self.restore_within(span)
                elif owner is d and span["is_primary"]:
                    continue
                elif owner is not d or "defined here" in label or "declared as" in label:
                    changed |= self.restore_at(span, name)
        if not changed:
            self.unmapped.append(d)
        return True


def check_all(root):
    return cargo_json(["check", "--locked", "--workspace", "--all-targets", "--keep-going"], root)


def restore_rounds(root, src_dir, max_rounds, first_round=1):
    """Step b: rounds of build + restore until no privacy diagnostic is left."""
    for rnd in range(first_round, first_round + max_rounds):
        t0 = time.time()
        rc, diags = check_all(root)
        r = Restorer(root, src_dir)
        privacy = [d for d in diags if r.handle(d)]
        errors = [d for d in diags if d["level"] == "error" and code_of(d) not in PRIVACY_CODES]
        errors = [d for d in errors if not d["message"].startswith("aborting due to")]
        changed = r.edits.count()
        files = r.edits.apply()
        for note in r.edits.notes:
            print("   note:", note)
        print(
            f"  round {rnd}: cargo exit {rc}, {len(errors)} other errors, {len(privacy)} privacy diagnostics, {changed} visibilities restored "
            f"in {files} files ({time.time() - t0:.0f} s)",
            flush=True,
        )
        if not privacy:
            if errors or rc != 0:
                for d in errors[:20]:
                    print(d.get("rendered") or d["message"])
                print("the build fails for another reason than privacy: stopping", file=sys.stderr)
                return False, rnd
            return True, rnd
        if changed == 0:
            for d in r.unmapped[:30]:
                print(d.get("rendered") or d["message"])
            print("no definition found for the privacy diagnostics above: stopping", file=sys.stderr)
            return False, rnd
    print(f"still privacy diagnostics after {max_rounds} rounds", file=sys.stderr)
    return False, first_round + max_rounds


# ---------------------------------------------------------------------------------------------
# Step c: unreachable_pub.

LINT_LINE = "#![warn(unreachable_pub)]"


def enable_unreachable_pub(src_dir):
    lib = Path(src_dir) / "lib.rs"
    text = lib.read_text(encoding="utf-8")
    if LINT_LINE in text:
        return False
    lines = text.split("\n")
    k = 0
    while k < len(lines) and lines[k].startswith("//!"):
        k += 1
    comment = (
        "// The library's users are the binaries, tests and benches of this workspace: a `pub` item\n"
        "// that they cannot reach is `pub(crate)`, so that dead code is reported (`tools/narrow_pub.py`)."
    )
    lines[k:k] = ["", comment, LINT_LINE]
    lib.write_text("\n".join(lines), encoding="utf-8")
    return True


def apply_unreachable(root, src_dir):
    """Apply each `unreachable_pub` suggestion; returns how many were applied."""
    _, diags = cargo_json(["check", "--locked", "-p", "tier1", "--lib"], root)
    r = Restorer(root, src_dir)
    for d in diags:
        if code_of(d) != "unreachable_pub":
            continue
        primary = [s for s in d["spans"] if s["is_primary"]]
        src = r.lib_src(primary[0]) if primary else None
        if src is None:
            continue
        s = src.char_at(primary[0]["byte_start"])
        e = src.char_at(primary[0]["byte_end"])
        item = r.use_item_at(src, s)
        if item is not None and len(item.leaves) > 1:
            for leaf in item.leaves:
                lo, hi = src.toks[leaf.start_tok][1], src.toks[leaf.end_tok - 1][2]
                if lo <= s < hi or s <= lo < e:
                    r.edits.set_leaf(item, leaf, "pub(crate)")
            continue
        for c in d.get("children", []):
            for span in c["spans"]:
                if span.get("suggested_replacement") == "pub(crate)":
                    csrc = r.lib_src(span)
                    pos = csrc.char_at(span["byte_start"])
                    r.edits.set_vis(csrc, csrc.tok_index_at(pos), "pub(crate)")
    n = r.edits.count()
    r.edits.apply()
    return n


# ---------------------------------------------------------------------------------------------
# Step c (docs): a public item's documentation may not link to an item that is now crate-only.

LINK = re.compile(r"\[([^\]]*)\](\(([^)]*)\))?")


def delink_private_docs(root):
    """Each `rustdoc::private_intra_doc_links` link becomes its text (`[`x`]` -> `x` in code)."""
    env = dict(os.environ, RUSTDOCFLAGS="")
    cmd = ["cargo", "doc", "--locked", "--no-deps", "-p", "tier1", "--message-format=json"]
    proc = subprocess.run(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    spots = {}
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        d = msg.get("message") or {}
        if msg.get("reason") != "compiler-message" or code_of(d) != "rustdoc::private_intra_doc_links":
            continue
        for span in d["spans"]:
            if span["is_primary"]:
                spots.setdefault((root / span["file_name"]).resolve(), set()).add(span["byte_start"])
    done = 0
    for path, starts in spots.items():
        src = Src(path)
        text = src.text
        for pos in sorted((src.char_at(b) for b in starts), reverse=True):
            line_start = text.rfind("\n", 0, pos) + 1
            line_end = text.find("\n", pos)
            line_end = len(text) if line_end < 0 else line_end
            line = text[line_start:line_end]
            for m in LINK.finditer(line):
                if m.start() <= pos - line_start < m.end():
                    line = line[: m.start()] + m.group(1) + line[m.end() :]
                    text = text[:line_start] + line + text[line_end:]
                    done += 1
                    break
        path.write_text(text, encoding="utf-8")
    return done


# ---------------------------------------------------------------------------------------------
# Step d: report.


def report(root, out):
    _, diags = cargo_json(["check", "--locked", "-p", "tier1", "--lib"], root)
    rows = []
    for d in diags:
        if d["level"] != "warning" or not d["spans"]:
            continue
        span = next((s for s in d["spans"] if s["is_primary"]), d["spans"][0])
        lint = code_of(d) or "warning"
        rows.append((lint != "dead_code", lint, span["file_name"], span["line_start"], d["message"]))
    rows.sort()
    lines = [f"{f}:{line}: {lint}: {msg}" for _, lint, f, line, msg in rows]
    dead = sum(1 for r in rows if r[1] == "dead_code")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    for line in lines:
        print(line)
    print(f"{dead} dead_code warnings, {len(rows) - dead} other warnings (written to {out})")


def count_pub(src_dir):
    pub = crate = 0
    for path in Path(src_dir).rglob("*.rs"):
        text = path.read_text(encoding="utf-8")
        pub += len(re.findall(r"\bpub fn\b", text))
        crate += len(re.findall(r"\bpub\(crate\) fn\b", text))
    return pub, crate


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".", help="workspace root (default: .)")
    ap.add_argument("--resume", action="store_true", help="skip step a: carry on from the tree as it is")
    ap.add_argument("--max-rounds", type=int, default=30, help="rounds of step b at most (default 30)")
    ap.add_argument("--report", default="target/narrow_pub_report.txt", help="where step d writes its list")
    ap.add_argument("--no-fmt", action="store_true", help="do not run `cargo fmt --all` at the end")
    args = ap.parse_args()
    root = Path(args.root).resolve()
    src_dir = root / "crates" / "tier1" / "src"
    os.environ.setdefault("CARGO_TERM_COLOR", "never")
    t0 = time.time()
    print("pub fn / pub(crate) fn before: %d / %d" % count_pub(src_dir), flush=True)
    if not args.resume:
        print(f"a. narrowed {narrow(src_dir)} visibilities to pub(crate)", flush=True)
    else:
        print("a. skipped (--resume)", flush=True)
    print("b. restoring what the library's users need", flush=True)
    ok, rnd = restore_rounds(root, src_dir, args.max_rounds)
    if not ok:
        return 1
    print("c. unreachable_pub", flush=True)
    if enable_unreachable_pub(src_dir):
        print("  added #![warn(unreachable_pub)] to lib.rs", flush=True)
    for _ in range(5):
        n = apply_unreachable(root, src_dir)
        print(f"  narrowed {n} unreachable `pub`", flush=True)
        if n == 0:
            break
        ok, rnd = restore_rounds(root, src_dir, args.max_rounds, rnd + 1)
        if not ok:
            return 1
    for _ in range(3):
        n = delink_private_docs(root)
        print(f"  {n} doc links to crate-only items made plain text", flush=True)
        if n == 0:
            break
    rc, diags = check_all(root)
    left = [d for d in diags if code_of(d) in PRIVACY_CODES | PRIVACY_LINTS or d["level"] == "error"]
    print(f"  final check: cargo exit {rc}, {len(left)} privacy diagnostics or errors", flush=True)
    if rc != 0 or left:
        return 1
    if not args.no_fmt:
        subprocess.run(["cargo", "fmt", "--all"], cwd=root, check=False)
    print("d. warnings left in the library", flush=True)
    report(root, root / args.report)
    print("pub fn / pub(crate) fn after: %d / %d" % count_pub(src_dir))
    print(f"done in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
