//! Loads workflow files and `action.yml` with GitHub's own `@actions/workflow-parser`: parse,
//! convert (reusable workflows fetched one level deep, as GitHub does), and the raw-tree values the
//! model leaves out (`with`, `working-directory`, `shell`, `defaults`).
import fs from "node:fs";
import path from "node:path";
import { NoOperationTraceWriter, convertWorkflowTemplate, parseWorkflow } from "@actions/workflow-parser";
import { parseAction, convertActionTemplate } from "@actions/workflow-parser/actions/index";

function errorsOf(context) {
  return context.errors.getErrors().map((e) => e.message);
}

/** A reusable-workflow reference (`$/p`, `./p`) -> path relative to the repository root. */
export function localWorkflowPath(ref) {
  if (ref && typeof ref === "object" && typeof ref.value === "string") ref = ref.value;
  const p = typeof ref === "string" ? ref : ref?.path;
  if (!p || typeof ref === "object" && ref.owner) {
    throw new Error(`reusable workflow ${JSON.stringify(ref)}: only this repository's workflows are emulated`);
  }
  return p.replace(/^\$\//, "").replace(/^\.\//, "");
}

/**
 * Parse and convert `rel` (relative to `root`). Throws with every parser error, naming the file.
 * Returns `{file, template, raw}`: the converted model and the raw mapping of the file.
 */
export async function loadWorkflow(root, rel) {
  const file = path.join(root, rel);
  const content = fs.readFileSync(file, "utf8");
  const parsed = parseWorkflow({ name: rel, content }, new NoOperationTraceWriter());
  const parseErrors = errorsOf(parsed.context);
  if (parseErrors.length || !parsed.value) {
    throw new Error(`${rel}: the workflow parser refused it:\n${parseErrors.join("\n")}`);
  }
  const provider = {
    getFileContent: async (ref) => {
      const callee = localWorkflowPath(ref);
      return { name: callee, content: fs.readFileSync(path.join(root, callee), "utf8") };
    },
  };
  const template = await convertWorkflowTemplate(parsed.context, parsed.value, provider,
    { fetchReusableWorkflowDepth: 1 });
  const errors = [...errorsOf(parsed.context), ...(template.errors ?? []).map((e) => e.Message ?? e.message ?? String(e))];
  if (errors.length) throw new Error(`${rel}: conversion failed:\n${errors.join("\n")}`);
  return { file: rel, template, raw: parsed.value.assertMapping(rel) };
}

/** Parse and convert an `action.yml`; `{file, action, raw}`. */
export function loadAction(dir, label) {
  let file = path.join(dir, "action.yml");
  if (!fs.existsSync(file)) file = path.join(dir, "action.yaml");
  const content = fs.readFileSync(file, "utf8");
  const parsed = parseAction({ name: label, content }, new NoOperationTraceWriter());
  const errors = errorsOf(parsed.context);
  if (errors.length || !parsed.value) throw new Error(`${label}: the action parser refused it:\n${errors.join("\n")}`);
  const action = convertActionTemplate(parsed.context, parsed.value);
  const after = errorsOf(parsed.context);
  if (after.length) throw new Error(`${label}: conversion failed:\n${after.join("\n")}`);
  return { file: label, action, raw: parsed.value.assertMapping(label) };
}

/** The raw mapping child `key` of `mapping` (or undefined). */
export function child(mapping, key) {
  if (!mapping) return undefined;
  const v = mapping.find(key);
  return v ?? undefined;
}

/** The raw step mappings of a job (workflow) or of `runs` (action), in order. */
export function rawSteps(container) {
  const steps = child(container, "steps");
  if (!steps) return [];
  const seq = steps.assertSequence("steps");
  const out = [];
  for (let i = 0; i < seq.count; i++) out.push(seq.get(i).assertMapping("step"));
  return out;
}

/** The raw job mapping `id` of a workflow's raw tree. */
export function rawJob(raw, id) {
  return child(raw, "jobs")?.assertMapping("jobs").find(id)?.assertMapping(id);
}

/** `defaults.run` of a raw workflow or job mapping as `{shell, "working-directory"}` strings. */
export function runDefaults(mapping) {
  const run = child(child(mapping, "defaults")?.assertMapping("defaults"), "run")?.assertMapping("run");
  const out = {};
  for (const key of ["shell", "working-directory"]) {
    const v = child(run, key);
    if (v !== undefined) out[key] = v.value;
  }
  return out;
}
