//! A workflow run as GitHub plays it: jobs start when their `needs` are done, a job's `if` (with its
//! status function) decides whether it runs, environments with required reviewers wait for the
//! scenario's approval (without them the job runs at once and nothing is recorded),
//! concurrency groups queue, reusable workflows run their callee's jobs, and job outputs are
//! evaluated when the job ends. A run is completed `completion_delay_ms` after its last job ended.
//! A job with a `strategy` runs one leg per matrix combination (matrix.mjs). A scenario may cancel
//! a job (or one leg) at one of its steps (`cancel`: the step and every later step whose `if` does
//! not name `always()` or `cancelled()` are cancelled or skipped, and the job's result is
//! `cancelled`). Re-running a job of a finished run (a new attempt of the same run) is in reruns.mjs.
import fs from "node:fs";
import path from "node:path";
import { asString, condition, tokenValue } from "./expressions.mjs";
import { loadWorkflow, localWorkflowPath, rawJob, rawSteps, runDefaults } from "./load.mjs";
import { groupOf } from "./groups.mjs";
import { harnessCall } from "./adapters.mjs";
import { checkEvent, eventContext, eventEnv, runRecord } from "./events.mjs";
import { runSteps } from "./steps.mjs";
import { aggregateResult, combineOutputs, legName, plan as matrixPlan, runLegs, strategyContext } from "./matrix.mjs";

function stamp() {
  return new Date().toISOString();
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** The machine whose labels include every `runs-on` label. */
function machineFor(scenario, runsOn, where) {
  const wanted = (Array.isArray(runsOn) ? runsOn : [runsOn]).map((l) => String(l).toLowerCase());
  const m = scenario.machines.find((x) => wanted.every((l) => x.labels.map((y) => y.toLowerCase()).includes(l)));
  if (!m) throw new Error(`${where}: no scenario machine has every label of runs-on ${JSON.stringify(runsOn)}`);
  return m;
}

/** Inputs of a callee from its `on.workflow_call.inputs` definitions and the caller's values. */
function calleeInputs(definitions, values, where) {
  const out = {};
  for (const [id, def] of Object.entries(definitions ?? {})) {
    let v = values[id];
    if (v === undefined || v === null) {
      if (def.required) throw new Error(`${where}: required input '${id}' not provided`);
      v = def.default ?? (def.type === "boolean" ? false : def.type === "number" ? 0 : "");
    }
    if (def.type === "boolean" && typeof v !== "boolean") throw new Error(`${where}: input '${id}': expected a boolean, found ${JSON.stringify(v)}`);
    if (def.type === "string") v = asString(v);
    out[id] = v;
  }
  for (const id of Object.keys(values)) {
    if (!(id in (definitions ?? {}))) throw new Error(`${where}: input '${id}' is not defined by the called workflow`);
  }
  return out;
}

/** The shortest time a job holds its concurrency group (see `runJob`). */
const MIN_JOB_MS = 1100;

export class WorkflowRun {
  /**
   * `scenario`: the shared scenario (machines, api, paths); `spec`: this run (workflow, event,
   * ref, sha, inputs, approvals, env, hold); `loaded`: `{template, raw}` of the workflow;
   * `groups`: the shared concurrency groups; `trace`: shared event list.
   */
  constructor(scenario, spec, loaded, groups, trace) {
    Object.assign(this, { scenario, spec, loaded, groups, trace });
    this.jobs = {};
  }

  event(kind, job, extra = {}) {
    this.trace.push({ seq: this.trace.length, at: stamp(), run: this.index, kind, job, ...extra });
  }

  async start(index) {
    const s = this.spec;
    this.index = index;
    checkEvent(s);
    const created = await harnessCall(this.scenario.api_url, "runs", {
      workflow_path: s.workflow, head_sha: s.sha, event: s.event, ...runRecord(s, this.scenario.repository),
    });
    this.id = created.id;
    this.attempt = created.run_attempt;
    const isDispatch = s.event === "workflow_dispatch";
    const inputs = {};
    if (isDispatch) {
      const defs = this.loaded.template.events?.workflow_dispatch?.inputs ?? {};
      for (const [k, def] of Object.entries(defs)) {
        const given = s.inputs?.[k];
        inputs[k] = given !== undefined ? given : (def.default ?? (def.type === "boolean" ? false : ""));
      }
    }
    this.inputs = inputs;
    this.github = {
      ...eventContext(s, inputs, asString, this.scenario.repository), sha: s.sha, repository: this.scenario.repository,
      repository_owner: this.scenario.repository.split("/")[0], run_id: String(this.id), run_attempt: String(this.attempt),
      run_number: String(this.id), actor: s.actor, triggering_actor: s.actor, workflow: this.loaded.template.name ?? s.workflow,
      workflow_ref: `${this.scenario.repository}/${s.workflow}@${s.ref}`, server_url: this.scenario.server_url,
      api_url: this.scenario.api_url, token: this.scenario.token,
    };
    this.eventEnv = eventEnv(this.github, path.join(this.scenario.work_dir, `run-${this.index}-${this.id}`));
    if (this.loaded.template.concurrency) throw new Error(`${s.workflow}: workflow-level concurrency is not emulated`);
    this.done = this.runGraph(this.loaded, this.inputs, this.jobs, "").then(() => this.complete());
  }

  /** End the attempt: the run's conclusion, then `completed` some seconds after its last job. */
  async complete() {
    const results = Object.values(this.jobs).map((j) => j.result);
    this.conclusion = results.includes("failure") ? "failure" : results.includes("cancelled") ? "cancelled" : "success";
    // GitHub marks a run completed some seconds after its last job ended (the jobs release
    // their concurrency groups before that): the run stays in_progress meanwhile.
    this.event("jobs_done", null);
    await sleep(this.scenario.completion_delay_ms ?? 0);
    await harnessCall(this.scenario.api_url, `runs/${this.id}/complete`, { conclusion: this.conclusion });
    this.event("completed", null, { conclusion: this.conclusion });
  }

  /** Run a job graph (the workflow's, or a callee's) to the end. */
  async runGraph(wf, inputs, into, prefix) {
    // Jobs already in `into` (carried over from an earlier attempt of a re-run) are not run again.
    const pending = new Map(wf.template.jobs.filter((j) => !into[j.id.value]).map((j) => [j.id.value, j]));
    const running = new Map();
    while (pending.size || running.size) {
      for (const [id, def] of [...pending]) {
        const needs = (def.needs ?? []).map((n) => n.value);
        if (needs.every((n) => into[n]?.result)) {
          pending.delete(id);
          running.set(id, this.runJob(def, wf, inputs, into, prefix).then(() => running.delete(id)));
        }
      }
      if (!running.size && pending.size) throw new Error(`jobs ${[...pending.keys()].join(", ")}: needs never satisfied`);
      await Promise.race(running.values());
    }
  }

  ancestorsOf(def, into, seen = new Set()) {
    for (const n of (def.needs ?? []).map((x) => x.value)) {
      if (seen.has(n)) continue;
      seen.add(n);
      const nd = into[n]?.def;
      if (nd) this.ancestorsOf(nd, into, seen);
    }
    return [...seen];
  }

  async runJob(def, wf, inputs, into, prefix) {
    const id = def.id.value;
    const raw = rawJob(wf.raw, id);
    const label = `${this.spec.workflow}#${this.index}/${prefix}${id}`;
    const rec = { def, result: null, outputs: {}, steps: [] };
    into[id] = rec;
    const needs = {};
    for (const n of (def.needs ?? []).map((x) => x.value)) needs[n] = { result: into[n].result, outputs: into[n].outputs };
    const ancestors = this.ancestorsOf(def, into).map((n) => into[n].result);
    const status = {
      success: ancestors.every((r) => r === "success"), failure: ancestors.includes("failure"), always: true, cancelled: false,
    };
    const contexts = { github: this.github, inputs, needs, vars: {} };
    for (const key of ["container", "services"]) {
      if (def[key] !== undefined && def[key] !== null) throw new Error(`${label}: jobs.<id>.${key} is not emulated`);
    }
    const finish = (result) => {
      rec.result = result;
      this.event("finished", prefix + id, { result });
      return rec;
    };
    if (!condition(def.if?.expression ?? def.if?.expr ?? "success()", contexts, status)) return finish("skipped");
    const envName = def.environment === undefined ? undefined : tokenValue(def.environment, contexts);
    if (envName !== undefined) {
      const name = typeof envName === "string" ? envName : envName.name;
      // An environment without required reviewers (all a private repository gets without GitHub
      // Enterprise) lets the job run at once and records no approval.
      const rules = await harnessCall(this.scenario.api_url, `environments/${name}`, {});
      if (!rules.required_reviewers) {
        this.event("review", prefix + id, { environment: name, state: "no required reviewers" });
      } else {
        const decision = this.spec.approvals?.[name];
        if (!decision) throw new Error(`${label}: environment '${name}' needs a scenario approval decision`);
        await harnessCall(this.scenario.api_url, `runs/${this.id}/approvals`, { environment: name, ...decision });
        this.event("review", prefix + id, { environment: name, state: decision.state });
        if (decision.state !== "approved") return finish("failure");
      }
    }
    if (def.strategy !== undefined && def.strategy !== null) {
      if (def.type === "reusableWorkflowJob") throw new Error(`${label}: a matrix of reusable workflows is not emulated`);
      return this.runMatrix(def, wf, raw, contexts, rec, label, prefix, finish);
    }
    const group = groupOf(tokenValue(def.concurrency, contexts), label);
    this.event("queued", prefix + id, { group });
    const release = group ? await this.groups.acquire(group) : () => {};
    const startedAt = Date.now();
    this.event("started", prefix + id, { group });
    try {
      if (def.type === "reusableWorkflowJob") {
        const values = tokenValue(def["input-values"], contexts) ?? {};
        const callee = calleeInputs(tokenValue(def["input-definitions"], {}) ?? {}, values, label);
        rec.jobs = {};
        const calleeWf = await loadWorkflow(this.scenario.repo_root, localWorkflowPath(def.ref));
        await this.runGraph(calleeWf, callee, rec.jobs, `${id}/`);
        const results = Object.values(rec.jobs).map((j) => j.result);
        const octx = { ...contexts, inputs: callee, jobs: Object.fromEntries(Object.entries(rec.jobs).map(([k, j]) => [k, { result: j.result, outputs: j.outputs }])) };
        for (const [k, v] of Object.entries(tokenValue(def.outputs, {}) ?? {})) rec.outputs[k] = asString(tokenValue(v?.value, octx));
        return finish(results.includes("failure") ? "failure" : "success");
      }
      await this.runSteppedJob(def, wf, raw, contexts, rec, label, prefix, null);
      await this.holdFor(this.spec.hold?.[prefix + id], label);
      return finish(rec.cancelled ? "cancelled" : rec.failed ? "failure" : "success");
    } finally {
      // A job keeps its concurrency group for at least MIN_JOB_MS, as on GitHub, where runner
      // assignment alone takes longer: the next job in the queue never starts within the same
      // second (the workflow stamps run ids to the second; two would collide).
      if (group) await new Promise((r) => setTimeout(r, Math.max(0, MIN_JOB_MS - (Date.now() - startedAt))));
      release();
    }
  }

  /**
   * A matrix job (matrix.mjs): one leg per combination, each a stepped job with the `matrix` and
   * `strategy` contexts, under `fail-fast` and `max-parallel`; the legs of an earlier attempt that a
   * re-run keeps (`this.carriedLegs`) are not run again. The job's outputs and result combine the
   * legs'.
   */
  async runMatrix(def, wf, raw, contexts, rec, label, prefix, finish) {
    const id = def.id.value;
    const p = matrixPlan(tokenValue(def.strategy, contexts), label);
    const carried = this.carriedLegs?.[prefix + id];
    rec.legs = p.legs.map((_, i) => (carried && !carried.rerun.has(i) && carried.legs[i] ? { ...carried.legs[i], carried: true } : null));
    const ended = rec.legs.filter(Boolean);
    const toRun = p.legs.map((_, i) => i).filter((i) => !rec.legs[i]);
    const named = (i, lctx) => (def.name ? asString(tokenValue(def.name, lctx)) : legName(id, p.legs[i]));
    const legContext = (i) => ({ ...contexts, matrix: p.legs[i], strategy: strategyContext(p, i) });
    await runLegs(p, toRun, async (i) => {
      const lctx = legContext(i);
      const name = named(i, lctx);
      const leg = { name, matrix: p.legs[i], index: i, result: null, outputs: {}, steps: [] };
      rec.legs[i] = leg;
      const where = `${label} [${name}]`;
      const group = groupOf(tokenValue(def.concurrency, lctx), where);
      this.event("queued", prefix + name, { group });
      const release = group ? await this.groups.acquire(group) : () => {};
      const startedAt = Date.now();
      this.event("started", prefix + name, { group });
      try {
        await this.runSteppedJob(def, wf, raw, lctx, leg, where, prefix, { index: i, name });
        await this.holdFor(this.spec.hold?.[prefix + name], where);
        leg.result = leg.cancelled ? "cancelled" : leg.failed ? "failure" : "success";
      } finally {
        if (group) await new Promise((r) => setTimeout(r, Math.max(0, MIN_JOB_MS - (Date.now() - startedAt))));
        release();
      }
      this.event("finished", prefix + name, { result: leg.result });
      ended.push(leg);
      return leg.result;
    }, (i) => {
      const name = named(i, legContext(i));
      rec.legs[i] = { name, matrix: p.legs[i], index: i, result: "cancelled", outputs: {}, steps: [] };
      this.event("finished", prefix + name, { result: "cancelled", reason: "fail-fast" });
    });
    rec.outputs = combineOutputs(ended);
    return finish(aggregateResult(rec.legs.map((l) => l.result)));
  }

  /**
   * A scenario's hold on a job after its steps, keeping its concurrency group: a number of
   * milliseconds, or `{until_queued: {run, job}}` (until that job of that run is queued).
   */
  async holdFor(hold, label) {
    if (!hold) return;
    if (typeof hold === "number") return sleep(hold);
    // `until_started`: until that job holds its concurrency group and runs (proof that two groups
    // are independent: with one group it would wait for this job, and the hold would time out).
    const kind = hold.until_started ? "started" : "queued";
    const { run, job } = hold.until_started ?? hold.until_queued;
    for (let waited = 0; ; waited += 50) {
      if (this.trace.some((e) => e.run === run && e.job === job && e.kind === kind)) return;
      if (waited > 300000) throw new Error(`${label}: held 300 s, but run ${run} never ${kind === "started" ? "started" : "queued"} ${job}`);
      await sleep(50);
    }
  }

  /** The step a scenario map (`cancel`, `fail`) names for this job or leg, if any. */
  scenarioStep(map, prefix, id, leg) {
    if (!map) return undefined;
    if (leg) return map[prefix + leg.name] ?? map[`${prefix}${id}#${leg.index + 1}`];
    return map[prefix + id];
  }

  /** A stepped job on a machine of its `runs-on` (a self-hosted one held for the job, machines.mjs). */
  async runSteppedJob(def, wf, raw, contexts, rec, label, prefix, leg) {
    const runsOn = tokenValue(def["runs-on"], contexts);
    const pool = this.scenario.pool;
    const { machine, release } = pool ? await pool.acquire(runsOn, label) : { machine: machineFor(this.scenario, runsOn, label), release: () => {} };
    try {
      await this.runOnMachine(def, wf, raw, contexts, rec, label, prefix, leg, machine);
    } finally {
      release();
    }
  }

  async runOnMachine(def, wf, raw, contexts, rec, label, prefix, leg, machine) {
    const id = def.id.value;
    const jobDir = `${prefix}${id}`.replace(/\//g, "__") + (leg ? `__leg${leg.index + 1}` : "");
    const dir = path.join(this.scenario.work_dir, `run-${this.index}-${this.id}`, jobDir);
    const workspace = path.join(dir, "workspace");
    const temp = path.join(dir, "temp");
    fs.mkdirSync(workspace, { recursive: true });
    fs.mkdirSync(temp, { recursive: true });
    const runner = { name: machine.name, os: "Linux", arch: "X64", temp, tool_cache: machine.tool_cache ?? path.join(dir, "tool-cache"), environment: machine.environment ?? "github-hosted", debug: "" };
    const name = leg ? leg.name : def.name ? asString(tokenValue(def.name, contexts)) : id;
    const registered = await harnessCall(this.scenario.api_url, `runs/${this.id}/jobs`, { name, labels: machine.labels, runner_name: machine.name, attempt: this.attempt });
    const github = { ...this.github, job: id, workspace };
    const ctx = { ...contexts, github, runner };
    const wfEnv = tokenValue(wf.template.env, ctx) ?? {};
    const jobEnv = tokenValue(def.env, { ...ctx, env: wfEnv }) ?? {};
    const baseEnv = Object.fromEntries(Object.entries({ ...wfEnv, ...jobEnv }).map(([k, v]) => [k, asString(v)]));
    const processEnv = {
      ...this.scenario.base_env, ...machine.env, ...this.spec.env,
      CI: "true", GITHUB_ACTIONS: "true", GITHUB_ACTOR: github.actor, GITHUB_API_URL: github.api_url,
      GITHUB_EVENT_NAME: github.event_name, GITHUB_JOB: id, GITHUB_REF: github.ref, GITHUB_REF_NAME: github.ref_name,
      GITHUB_REF_TYPE: github.ref_type, GITHUB_REPOSITORY: github.repository, GITHUB_REPOSITORY_OWNER: github.repository_owner,
      GITHUB_RUN_ATTEMPT: github.run_attempt, GITHUB_RUN_ID: github.run_id, GITHUB_RUN_NUMBER: github.run_number,
      GITHUB_SERVER_URL: github.server_url, GITHUB_SHA: github.sha, GITHUB_WORKFLOW: github.workflow,
      GITHUB_WORKFLOW_REF: github.workflow_ref, GITHUB_WORKSPACE: workspace, GITHUB_TRIGGERING_ACTOR: github.triggering_actor,
      RUNNER_ARCH: "X64", RUNNER_ENVIRONMENT: runner.environment, RUNNER_NAME: machine.name, RUNNER_OS: "Linux",
      RUNNER_TEMP: temp, RUNNER_TOOL_CACHE: runner.tool_cache, ...this.eventEnv,
      // The repository's artifact retention (the runner's GITHUB_RETENTION_DAYS; 90 by default).
      GITHUB_RETENTION_DAYS: String(this.scenario.retention_days ?? 90),
    };
    const defaults = { ...runDefaults(wf.raw), ...runDefaults(raw) };
    const job = {
      label, dir, workspace, temp, processEnv, baseEnv, contexts: ctx, defaults, apiUrl: this.scenario.api_url,
      adapterRequest: { run_id: this.id, sha: github.sha, ref: github.ref, token: github.token, server_url: github.server_url },
      actionRepos: this.scenario.action_repositories ?? {},
      // What the runner gives node actions only (NodeScriptActionHandler.cs), never `run:` steps.
      nodeActionEnv: {
        ACTIONS_RUNTIME_TOKEN: registered.runtime_token, ACTIONS_RESULTS_URL: `${this.scenario.api_url}/`,
        ACTIONS_RUNTIME_URL: `${this.scenario.api_url}/`,
      },
      actionsDir: path.join(this.scenario.work_dir, "_actions"),
      // A scenario's cancellation of this job (or leg) at one of its steps, or its runner lost there
      // (the step fails without running). A leg is named by its display name or `<job>#<n>`.
      cancelAt: this.scenarioStep(this.spec.cancel, prefix, id, leg),
      failAt: this.scenarioStep(this.spec.fail, prefix, id, leg),
    };
    rec.runner = machine.name;
    const result = await runSteps(job, def.steps ?? [], rawSteps(raw));
    rec.steps = result.steps;
    rec.failed = result.failed;
    rec.cancelled = result.cancelled;
    rec.summary = result.summary;
    const octx = { ...ctx, env: result.env, steps: result.stepsContext, job: { status: result.failed ? "failure" : "success" } };
    for (const pair of def.outputs?.map ?? []) rec.outputs[pair.key.value] = asString(tokenValue(pair.value, octx));
    // The jobs API lists the job completed once it ended (the runner's next job is the one in progress).
    const conclusion = result.cancelled ? "cancelled" : result.failed ? "failure" : "success";
    if (registered?.id) await harnessCall(this.scenario.api_url, `runs/${this.id}/jobs/${registered.id}/complete`, { attempt: this.attempt, conclusion });
  }
}
