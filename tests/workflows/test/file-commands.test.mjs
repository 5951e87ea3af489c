//! The `$GITHUB_OUTPUT` / `$GITHUB_ENV` reader follows the runner's rules.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseKeyValueFile } from "../harness/file-commands.mjs";

test("name=value splits at the first =, empty lines are skipped, the last write wins when folded", () => {
  assert.deepEqual(parseKeyValueFile("a=1\n\nb=x=y\na=2\n", "f"), [["a", "1"], ["b", "x=y"], ["a", "2"]]);
});

test("an = before << is a plain value; a heredoc keeps inner newlines and drops the last one", () => {
  assert.deepEqual(parseKeyValueFile("a=b<<c\n", "f"), [["a", "b<<c"]]);
  assert.deepEqual(parseKeyValueFile("m<<EOF\nline 1\nline 2\nEOF\nn=1\n", "f"), [["m", "line 1\nline 2"], ["n", "1"]]);
});

test("a heredoc without its delimiter and a line of neither form are refused, naming the file", () => {
  assert.throws(() => parseKeyValueFile("m<<EOF\nno end\n", "out"), /out: Matching delimiter not found 'EOF'/);
  assert.throws(() => parseKeyValueFile("just text\n", "out"), /out: line 1: Invalid format 'just text'/);
  assert.throws(() => parseKeyValueFile("=v\n", "out"), /empty name/);
});
