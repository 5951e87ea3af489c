//! The steps of one job as the runner plays them (actions/runner `StepsRunner.cs`): env evaluated
//! before `if`, status functions, outcome versus conclusion under `continue-on-error`, file
//! commands after each step, only explicit ids in the `steps` context, `run:` blocks under bash.
import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";
import { asString, condition, tokenValue } from "./expressions.mjs";
import { readKeyValueFile, readPathFile } from "./file-commands.mjs";
import { child, loadAction, rawSteps } from "./load.mjs";
import { NODE_ACTIONS, nodeActionInputs, refusal, runAdapter } from "./adapters.mjs";
import { remoteActionDir } from "./actions.mjs";

const ANNOTATION = /^::(error|warning|notice)(?: [^:]*)?::(.*)$/;

function stringsOf(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj ?? {})) out[k] = asString(v);
  return out;
}

/** Run `script` with bash as GitHub's `shell: bash` does; resolves to `{code, annotations}`. */
function runBash(script, cwd, env, logFile) {
  const scriptFile = `${logFile}.sh`;
  fs.writeFileSync(scriptFile, script);
  return runProcess("bash", ["--noprofile", "--norc", "-eo", "pipefail", scriptFile], cwd, env, logFile);
}

/** Run `program` with `args`, its output appended to `logFile`; resolves to `{code, annotations}`. */
function runProcess(program, args, cwd, env, logFile) {
  return new Promise((resolve) => {
    const log = fs.openSync(logFile, "a");
    const p = spawn(program, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const annotations = [];
    let pending = "";
    p.stdout.on("data", (chunk) => {
      fs.writeSync(log, chunk);
      pending += chunk.toString();
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const l of lines) {
        const m = ANNOTATION.exec(l);
        if (m) annotations.push({ level: m[1], message: m[2] });
      }
    });
    p.stderr.on("data", (chunk) => fs.writeSync(log, chunk));
    p.on("error", (e) => { fs.closeSync(log); resolve({ code: 127, annotations: [{ level: "error", message: e.message }] }); });
    p.on("close", (code, signal) => {
      const m = ANNOTATION.exec(pending);
      if (m) annotations.push({ level: m[1], message: m[2] });
      fs.closeSync(log);
      resolve({ code: code ?? (signal ? 128 : 1), annotations });
    });
  });
}

/**
 * Run the steps of a job (or of a composite action when `job.composite`). `job` carries:
 * `label`, `dir` (its private directory), `workspace`, `temp`, `processEnv` (runner-provided
 * variables), `baseEnv` (the env context before steps: workflow + job env), `contexts` (github,
 * inputs, needs, runner, ...), `defaults` ({shell, working-directory}), `apiUrl`, `adapterRequest`.
 * Returns `{failed, steps, stepsContext, env, summary}`.
 */
export async function runSteps(job, modelSteps, rawStepList) {
  const stepsContext = {};
  const results = [];
  const githubEnv = {};
  const addedPath = [];
  let summary = "";
  let failed = false;
  let cancelled = false;
  for (let i = 0; i < modelSteps.length; i++) {
    const step = modelSteps[i];
    const raw = rawStepList[i];
    const name = step.name ? asString(tokenValue(step.name, job.contexts)) : (step.uses?.value ?? step.id);
    const record = { id: step.id, name, outcome: "skipped", conclusion: "skipped", outputs: {}, annotations: [] };
    // A scenario's cancellation: this step is cancelled as it starts, as the runner cancels the
    // running step of a cancelled job; later steps run only when their `if` names `always()` or
    // `cancelled()` (actions/runner `StepsRunner.cs`).
    // A scenario's lost runner: this step fails without running.
    if (job.failAt && step.id === job.failAt && !failed && !cancelled) {
      record.outcome = record.conclusion = "failure";
      record.annotations.push({ level: "error", message: "The runner lost communication with the server (the scenario fails this step)" });
      failed = true;
      results.push(record);
      if (!step.id.startsWith("__") && step.id !== "") stepsContext[step.id] = { outcome: "failure", conclusion: "failure", outputs: {} };
      continue;
    }
    if (!cancelled && job.cancelAt && step.id === job.cancelAt) {
      cancelled = true;
      record.outcome = record.conclusion = "cancelled";
      results.push(record);
      if (!step.id.startsWith("__") && step.id !== "") stepsContext[step.id] = { outcome: "cancelled", conclusion: "cancelled", outputs: {} };
      continue;
    }
    const files = path.join(job.dir, `step-${i + 1}`);
    fs.mkdirSync(files, { recursive: true });
    const envContext = { ...job.baseEnv, ...githubEnv };
    const ctx = { ...job.contexts, env: envContext, steps: stepsContext, job: { status: failed ? "failure" : "success" } };
    // In a composite action the failure so far is the action's (github.action_status), not the job's.
    const status = { success: !failed && !cancelled, failure: failed, always: true, cancelled };
    let outcome;
    let stepEnv = {};
    try {
      stepEnv = stringsOf(tokenValue(step.env, ctx));
    } catch (e) {
      outcome = "failure";
      record.annotations.push({ level: "error", message: `step env: ${e.message}` });
    }
    ctx.env = { ...envContext, ...stepEnv };
    if (!outcome) {
      let run;
      try {
        run = condition(step.if?.expression ?? step.if?.expr ?? "success()", ctx, status);
      } catch (e) {
        run = true;
        outcome = "failure";
        record.annotations.push({ level: "error", message: `if: ${e.message}` });
      }
      if (!run) {
        record.outcome = record.conclusion = "skipped";
        results.push(record);
        if (!step.id.startsWith("__") && step.id !== "") stepsContext[step.id] = { outcome: "skipped", conclusion: "skipped", outputs: {} };
        continue;
      }
    }
    if (!outcome) {
      const fileCmd = {
        GITHUB_OUTPUT: path.join(files, "output"),
        GITHUB_ENV: path.join(files, "env"),
        GITHUB_PATH: path.join(files, "path"),
        GITHUB_STEP_SUMMARY: path.join(files, "summary.md"),
      };
      for (const f of Object.values(fileCmd)) fs.writeFileSync(f, "");
      const pathVar = [...addedPath, job.processEnv.PATH].join(":");
      const env = { ...job.processEnv, ...ctx.env, ...fileCmd, PATH: pathVar };
      try {
        outcome = await executeStep(job, step, raw, ctx, env, files, record);
      } catch (e) {
        if (e.fatal) throw e;
        outcome = "failure";
        record.annotations.push({ level: "error", message: e.message });
      }
      try {
        record.outputs = { ...record.outputs, ...readKeyValueFile(fileCmd.GITHUB_OUTPUT) };
        Object.assign(githubEnv, readKeyValueFile(fileCmd.GITHUB_ENV));
        addedPath.unshift(...readPathFile(fileCmd.GITHUB_PATH).reverse());
      } catch (e) {
        outcome = "failure";
        record.annotations.push({ level: "error", message: e.message });
      }
      summary += fs.readFileSync(fileCmd.GITHUB_STEP_SUMMARY, "utf8");
    }
    record.outcome = outcome;
    record.conclusion = outcome;
    if (outcome === "failure") {
      let coe = false;
      try {
        const v = step["continue-on-error"];
        coe = typeof v === "boolean" ? v : v === undefined ? false : condition(v.expression ?? v.expr, ctx, status);
      } catch {
        coe = false;
      }
      if (coe) record.conclusion = "success";
      else failed = true;
    }
    if (!step.id.startsWith("__") && step.id !== "") {
      stepsContext[step.id] = { outcome: record.outcome, conclusion: record.conclusion, outputs: record.outputs };
    }
    results.push(record);
  }
  return { failed, cancelled, steps: results, stepsContext, env: { ...job.baseEnv, ...githubEnv }, summary };
}

function fatal(message) {
  const e = new Error(message);
  e.fatal = true;
  return e;
}

async function executeStep(job, step, raw, ctx, env, files, record) {
  if (step.run !== undefined) {
    const shell = child(raw, "shell")?.value ?? job.defaults.shell ?? (job.composite ? undefined : "bash");
    if (shell !== "bash") throw fatal(`${job.label}: step '${record.name}': shell ${shell ?? "(none)"} is not emulated (only bash)`);
    const wdToken = child(raw, "working-directory");
    const wd = wdToken !== undefined ? asString(tokenValue(wdToken, ctx)) : job.defaults["working-directory"];
    const cwd = wd ? path.resolve(job.workspace, wd) : job.workspace;
    // The parser already turned every `${{ }}` of the script into one expression (format()).
    const script = asString(tokenValue(step.run, ctx));
    const { code, annotations } = await runBash(script, cwd, env, path.join(files, "log"));
    record.annotations.push(...annotations);
    record.exit_code = code;
    record.log = path.join(files, "log");
    return code === 0 ? "success" : "failure";
  }
  const uses = asString(tokenValue(step.uses, ctx));
  const withToken = child(raw, "with");
  const inputs = stringsOf(tokenValue(withToken, ctx));
  if (uses.startsWith("./")) return runComposite(job, path.resolve(job.workspace, uses), uses, inputs, ctx, files, record);
  let remote;
  try {
    remote = remoteActionDir(uses, job.actionRepos, job.actionsDir ?? path.join(job.dir, "_actions"));
  } catch (e) {
    throw fatal(`${job.label}: step '${record.name}': ${e.message}`);
  }
  if (remote) return runComposite(job, remote, uses, inputs, ctx, files, record);
  const why = refusal(uses);
  if (why) throw fatal(`${job.label}: step '${record.name}': ${why}`);
  const nodeAction = NODE_ACTIONS[uses.split("@")[0]];
  if (nodeAction) {
    // A node action: its own process, inputs in INPUT_*, the runtime token only for it (runner
    // NodeScriptActionHandler.cs), outputs through $GITHUB_OUTPUT (read after the step).
    let given;
    try {
      given = nodeActionInputs(uses, inputs, ctx);
    } catch (e) {
      throw fatal(`${job.label}: step '${record.name}': ${e.message}`);
    }
    const actionEnv = { ...env, ...given, ...job.nodeActionEnv };
    const logFile = path.join(files, "log");
    const { code, annotations } = await runProcess(process.execPath, [nodeAction], job.workspace, actionEnv, logFile);
    record.annotations.push(...annotations);
    record.exit_code = code;
    record.log = logFile;
    return code === 0 && !annotations.some((a) => a.level === "error") ? "success" : "failure";
  }
  const answer = await runAdapter(job.apiUrl, uses, { ...job.adapterRequest, with: inputs, workspace: job.workspace, runner_temp: job.temp });
  record.outputs = stringsOf(answer.outputs);
  return "success";
}

/**
 * A composite action in `dir` (a local `./path`, or a remote action's checkout): its steps with
 * `inputs`, its outputs evaluated last.
 */
async function runComposite(job, dir, uses, inputs, ctx, files, record) {
  const { action, raw } = loadAction(dir, `${uses}/action.yml`);
  if (action.runs?.using !== "composite") throw fatal(`${uses}: only composite actions are emulated`);
  const given = {};
  for (const input of action.inputs ?? []) {
    const id = input.id;
    given[id] = inputs[id] ?? (input.default !== undefined ? asString(tokenValue(input.default, ctx)) : "");
  }
  for (const k of Object.keys(inputs)) {
    if (!(action.inputs ?? []).some((x) => x.id === k)) record.annotations.push({ level: "warning", message: `Unexpected input '${k}'` });
  }
  const inner = {
    ...job,
    label: `${job.label} > ${uses}`,
    dir: path.join(files, "composite"),
    composite: true,
    cancelAt: undefined,
    failAt: undefined,
    defaults: {},
    baseEnv: ctx.env,
    contexts: { ...job.contexts, inputs: given },
    processEnv: { ...job.processEnv, GITHUB_ACTION_PATH: dir },
  };
  fs.mkdirSync(inner.dir, { recursive: true });
  const result = await runSteps(inner, action.runs.steps, rawSteps(child(raw, "runs")?.assertMapping("runs")));
  record.composite = result.steps;
  const octx = { ...inner.contexts, steps: result.stepsContext };
  for (const out of action.outputs ?? []) record.outputs[out.id] = asString(tokenValue(out.value, octx));
  return result.failed ? "failure" : "success";
}
