//! `uses:` steps: actions/upload-artifact and actions/download-artifact run as node actions over
//! GitHub's own `@actions/artifact` client (./actions/*.mjs) against the fake GitHub's artifact
//! service; actions/checkout is stood in for by an adapter served by the fake GitHub of the Rust
//! tests (tests/it/support/workflow_checkout.rs: the real git CLI against a local remote). Every
//! other action is refused loudly, so no scenario passes by skipping a step it cannot run.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { asString, evaluate, toPlain } from "./expressions.mjs";

export const ADAPTED = ["actions/checkout", "actions/upload-artifact", "actions/download-artifact"];

const here = path.dirname(fileURLToPath(import.meta.url));

/** The node actions the harness runs, by `owner/name`: their entry point. */
export const NODE_ACTIONS = {
  "actions/upload-artifact": path.join(here, "actions", "upload-artifact.mjs"),
  "actions/download-artifact": path.join(here, "actions", "download-artifact.mjs"),
};

/**
 * The inputs of each node action with their defaults, as its `action.yml` declares them
 * (actions/upload-artifact@bbbca2d, actions/download-artifact@484a0b5); a default that is an
 * expression is evaluated in the step's contexts, as the runner does.
 */
const NODE_ACTION_INPUTS = {
  "actions/upload-artifact": {
    name: "artifact", path: undefined, "if-no-files-found": "warn", "retention-days": undefined,
    "compression-level": "6", overwrite: "false", "include-hidden-files": "false", archive: "true",
  },
  "actions/download-artifact": {
    name: undefined, "artifact-ids": undefined, path: undefined, pattern: undefined, "merge-multiple": "false",
    "github-token": undefined, repository: "${{ github.repository }}", "run-id": "${{ github.run_id }}",
    "skip-decompress": "false", "digest-mismatch": "error",
  },
};

/**
 * The `INPUT_*` variables of a node action step: every declared input (given, else its default),
 * named as the runner names them (upper case, spaces as `_`). An undeclared input is refused by
 * name (the runner only warns; no tier1 workflow may rely on one).
 */
export function nodeActionInputs(uses, given, ctx) {
  const action = uses.split("@")[0];
  const declared = NODE_ACTION_INPUTS[action];
  for (const k of Object.keys(given)) {
    if (!(k in declared)) throw new Error(`${action}: input '${k}' is not an input of the action (known: ${Object.keys(declared).join(", ")})`);
  }
  const env = {};
  for (const [k, def] of Object.entries(declared)) {
    let v = given[k];
    if (v === undefined && def !== undefined) {
      const m = /^\$\{\{(.*)\}\}$/s.exec(def);
      v = m ? asString(toPlain(evaluate(m[1].trim(), ctx))) : def;
    }
    if (v !== undefined) env[`INPUT_${k.replace(/ /g, "_").toUpperCase()}`] = v;
  }
  return env;
}

/** Why a `uses:` value is not emulated, or null when an adapter stands in for it. */
export function refusal(uses) {
  const m = /^([^@/]+\/[^@/]+)@([0-9a-f]{40})$/.exec(uses);
  if (!m) return `uses: ${uses}: only SHA-pinned ${ADAPTED.join(", ")} are emulated`;
  if (!ADAPTED.includes(m[1])) return `uses: ${uses}: no adapter for ${m[1]} (emulated: ${ADAPTED.join(", ")})`;
  return null;
}

/** Call the fake GitHub's harness endpoint `path` with a JSON body; returns the JSON answer. */
export async function harnessCall(apiUrl, path, body) {
  const res = await fetch(`${apiUrl}/_harness/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`harness endpoint ${path}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
  }
  if (!res.ok) throw new Error(json.error ?? `harness endpoint ${path}: HTTP ${res.status}`);
  return json;
}

/** Run an adapted action: `{outputs}` on success; throws with the adapter's message on failure. */
export async function runAdapter(apiUrl, uses, request) {
  const name = uses.split("@")[0].split("/")[1];
  return harnessCall(apiUrl, `actions/${name}`, request);
}
