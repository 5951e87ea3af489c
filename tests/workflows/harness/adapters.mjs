//! `uses:` steps: only actions/checkout, actions/upload-artifact and actions/download-artifact are
//! stood in for, by adapters served by the fake GitHub of the Rust tests (tests/support); every
//! other action is refused loudly, so no scenario passes by skipping a step it cannot run.
export const ADAPTED = ["actions/checkout", "actions/upload-artifact", "actions/download-artifact"];

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
