//! The event that starts a run, as GitHub presents it: the `github` context's `event_name`, `ref`,
//! `ref_name`, `head_ref`, `base_ref` and `event` payload, the branch and head repository the run
//! is recorded with, and the runner variables that go with them (`GITHUB_HEAD_REF`,
//! `GITHUB_BASE_REF`, `GITHUB_EVENT_PATH`). Emulated: `schedule`, `workflow_dispatch` (typed
//! inputs) and `pull_request` (the scenario's payload: `action`, `label`, `number`,
//! `pull_request.head/base` with their `repo.full_name`, `repository.default_branch`). Any other
//! event is refused.
import fs from "node:fs";
import path from "node:path";

export const EMULATED_EVENTS = ["schedule", "workflow_dispatch", "pull_request"];

/** `refs/heads/x` -> `x`, `refs/tags/v1` -> `v1`, `refs/pull/7/merge` -> `7/merge`. */
export function refName(ref) {
  return ref.replace(/^refs\/(heads|tags|pull)\//, "");
}

/** Check a run spec's event; throws naming what is missing or not emulated. */
export function checkEvent(spec) {
  if (!EMULATED_EVENTS.includes(spec.event)) {
    throw new Error(`${spec.workflow}: event '${spec.event}' is not emulated (emulated: ${EMULATED_EVENTS.join(", ")})`);
  }
  if (spec.event === "pull_request") {
    const pr = spec.payload?.pull_request;
    if (!pr?.head?.ref || !pr?.head?.repo?.full_name || !pr?.base?.ref || !spec.payload?.action) {
      throw new Error(`${spec.workflow}: a pull_request run needs a payload with action and pull_request.head/base (ref, repo.full_name)`);
    }
    if (!/^refs\/pull\/\d+\/merge$/.test(spec.ref)) {
      throw new Error(`${spec.workflow}: a pull_request run's ref is refs/pull/<n>/merge, found ${spec.ref}`);
    }
  }
}

/** The branch and head repository the run is recorded with (the head branch of a pull request). */
export function runRecord(spec, repository) {
  if (spec.event === "pull_request") {
    const head = spec.payload.pull_request.head;
    return { head_branch: head.ref, head_repository: head.repo.full_name };
  }
  return { head_branch: spec.ref.replace(/^refs\/heads\//, ""), head_repository: repository };
}

/**
 * The `github` context fields that depend on the event. `inputs` are the typed dispatch inputs;
 * `repository` is the run's `owner/name`. A dispatch's payload carries the repository (with its
 * `default_branch`, `main` unless the spec says otherwise), the ref, the sender and the workflow, as
 * GitHub's `workflow_dispatch` webhook does (github/rest-api-description, `webhook-workflow-dispatch`:
 * required `inputs`, `ref`, `repository`, `sender`, `workflow`); a schedule's only its cron.
 */
export function eventContext(spec, inputs, asString, repository = "") {
  const base = { event_name: spec.event, ref: spec.ref, ref_name: refName(spec.ref), ref_type: "branch", head_ref: "", base_ref: "" };
  switch (spec.event) {
    case "workflow_dispatch":
      return {
        ...base,
        event: {
          inputs: Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, asString(v)])),
          ref: spec.ref,
          repository: { full_name: repository, default_branch: spec.default_branch ?? "main" },
          sender: { login: spec.actor },
          workflow: spec.workflow,
        },
      };
    case "pull_request": {
      const pr = spec.payload.pull_request;
      return { ...base, head_ref: pr.head.ref, base_ref: pr.base.ref, event: spec.payload };
    }
    default:
      return { ...base, event: { schedule: "15 3 * * *" } };
  }
}

/** Write the payload where `GITHUB_EVENT_PATH` points; the runner variables of the event. */
export function eventEnv(github, dir) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "event.json");
  fs.writeFileSync(file, JSON.stringify(github.event, null, 2));
  return { GITHUB_EVENT_PATH: file, GITHUB_HEAD_REF: github.head_ref, GITHUB_BASE_REF: github.base_ref };
}
