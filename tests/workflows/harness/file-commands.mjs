//! The runner's file commands: `$GITHUB_OUTPUT` / `$GITHUB_ENV` (`name=value` or
//! `name<<DELIM` ... `DELIM`, as actions/runner `FileCommandManager.cs` reads them), `$GITHUB_PATH`
//! (one directory a line) and `$GITHUB_STEP_SUMMARY` (Markdown, appended to the job summary).
import fs from "node:fs";

/**
 * Parse a `$GITHUB_OUTPUT` / `$GITHUB_ENV` file into `[name, value]` pairs in file order (a
 * repeated name: the last write wins when the caller folds them). Throws, naming the file and the
 * line, on a line that is neither form or a heredoc without its closing delimiter.
 */
export function parseKeyValueFile(text, file) {
  const lines = text.split(/\r?\n/);
  const pairs = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line === "") continue;
    const eq = line.indexOf("=");
    const heredoc = line.indexOf("<<");
    let name;
    let value;
    if (eq >= 0 && (heredoc < 0 || eq < heredoc)) {
      name = line.slice(0, eq);
      value = line.slice(eq + 1);
    } else if (heredoc >= 0) {
      name = line.slice(0, heredoc);
      const delimiter = line.slice(heredoc + 2);
      if (delimiter === "") throw new Error(`${file}: line ${i + 1}: empty delimiter in '${line}'`);
      const body = [];
      let closed = false;
      for (i++; i < lines.length; i++) {
        if (lines[i] === delimiter) { closed = true; break; }
        body.push(lines[i]);
      }
      if (!closed) throw new Error(`${file}: Matching delimiter not found '${delimiter}'`);
      value = body.join("\n");
    } else {
      throw new Error(`${file}: line ${i + 1}: Invalid format '${line}'`);
    }
    if (name === "") throw new Error(`${file}: line ${i + 1}: Invalid format '${line}' (empty name)`);
    pairs.push([name, value]);
  }
  return pairs;
}

/** Read and fold a key-value file command file into an object (absent file: empty). */
export function readKeyValueFile(file) {
  if (!fs.existsSync(file)) return {};
  const out = {};
  for (const [k, v] of parseKeyValueFile(fs.readFileSync(file, "utf8"), file)) out[k] = v;
  return out;
}

/** Directories a step added with `$GITHUB_PATH`, in order. */
export function readPathFile(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, "utf8").split(/\r?\n/).filter((l) => l.trim() !== "");
}
