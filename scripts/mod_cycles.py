#!/usr/bin/env python3
"""Module cycles in a Rust crate's source tree, from the `crate::`, `super::` and `self::` paths
in its files (docs/development.md, "No module cycles").

Usage: python3 scripts/mod_cycles.py DIR [DIR ...]   (from the repository root; e.g.
`crates/tier1/src`, `benches/integrity`). For each DIR it prints each cycle (the modules of one
strongly connected component of the import graph, and each pair of top-level modules that import
each other through their children) and, last, the count. Exits 1 when any DIR has a cycle.

A module is a `.rs` file (`mod.rs`, `lib.rs` and `main.rs` stand for their folder); `*_tests.rs`
files and what follows a `#[cfg(test)] mod x {` are left out, as are comments. A path names the
longest module prefix it resolves to; a child naming its own ancestor module by its bare path
(`use super::*`, `super::Item` resolved to the parent itself) is not an edge.
"""
import os
import re
import sys

PATH = re.compile(r"\b(crate|super|self)((?:::\w+)+)")
GROUP = re.compile(r"\buse\s+(crate|super|self)((?:::\w+)*)::\{([^;]*)\}", re.S)
TEST_MODULE = re.compile(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{")


def modules(src):
    """{module path (tuple of names): file}."""
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs") or f.endswith("_tests.rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            out[tuple(rel)] = os.path.join(root, f)
    return out


def base(module, kind):
    """The module a path starting with `kind` (crate, super, self) is relative to: a module is
    named by its file, so `super` of `a/b.rs`, `a/b/mod.rs` and `a/b.rs` beside `a/b/` is `a`."""
    if kind == "crate":
        return []
    return list(module) if kind == "self" else list(module[:-1])


def imports(module, path):
    """The module paths (lists of names) the file of `module` refers to."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"//[^\n]*", "", f.read())
    text = TEST_MODULE.split(text)[0]
    found = []
    for kind, rest, inner in GROUP.findall(text):
        prefix = base(module, kind) + [p for p in rest.split("::") if p]
        for item in re.split(r"[,\s]+", inner):
            names = item.strip().split("::")
            if names and names[0] and names[0] != "self":
                found.append(prefix + names)
            else:
                found.append(prefix)
    for kind, rest in PATH.findall(text):
        found.append(base(module, kind) + [p for p in rest.split("::") if p])
    return found


def graph(mods):
    """{module: set of modules it imports}."""
    def resolve(parts):
        for n in range(len(parts), 0, -1):
            if tuple(parts[:n]) in mods:
                return tuple(parts[:n])
        return None

    edges = {m: set() for m in mods}
    for m, path in mods.items():
        for target in imports(m, path):
            r = resolve(target)
            if r is None or r == m:
                continue
            if len(r) < len(m) and m[: len(r)] == r and len(target) == len(r):
                continue  # the module's own ancestor, named by its bare path
            edges[m].add(r)
    return edges


def cycles(edges):
    """Strongly connected components of more than one module (Tarjan), then each pair of
    top-level modules that import each other through any of their children."""
    sys.setrecursionlimit(10000)
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in edges:
        if v not in index:
            strong(v)
    top = {}
    for v, ws in edges.items():
        for w in ws:
            if v[:1] and w[:1] and v[:1] != w[:1]:
                top.setdefault(v[0], set()).add(w[0])
    for a in sorted(top):
        for b in sorted(top[a]):
            if a < b and a in top.get(b, set()):
                found.append([(a,), (b,)])
    return found


def main(dirs):
    if not dirs:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    any_cycle = False
    for src in dirs:
        mods = modules(os.path.abspath(src))
        found = cycles(graph(mods))
        for c in found:
            print(f"{src}: cycle:", ", ".join("::".join(x) or "root" for x in sorted(c)))
        print(f"{src}: {len(found)} cycles among {len(mods)} modules")
        any_cycle = any_cycle or bool(found)
    return 1 if any_cycle else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
