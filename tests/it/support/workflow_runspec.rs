//! The workflow runs a scenario starts ([`RunSpec`]): the event, ref, actor, inputs, the machines'
//! environment, environment reviews and holds, and re-runs of a job of an earlier run, as the node
//! harness reads them. Part of
//! workflow_harness.rs.

use super::REPOSITORY;
use serde_json::{Value, json};

/// One workflow run a scenario starts.
#[derive(Debug, Clone)]
pub struct RunSpec(pub Value);

impl RunSpec {
    /// The nightly schedule on main.
    pub fn nightly() -> RunSpec {
        RunSpec(json!({
            "workflow": ".github/workflows/tier1-nightly.yml", "event": "schedule",
            "ref": "refs/heads/main", "actor": "github-actions[bot]", "inputs": {}, "env": {},
            "approvals": {}, "hold": {}
        }))
    }

    /// A manual dispatch on main by `alice` with these inputs.
    pub fn dispatch(inputs: Value) -> RunSpec {
        let mut s = RunSpec::nightly();
        s.0["event"] = json!("workflow_dispatch");
        s.0["actor"] = json!("alice");
        s.0["inputs"] = inputs;
        s
    }

    /// Bootstrap and accept the first anchor with a note.
    pub fn bootstrap() -> RunSpec {
        RunSpec::dispatch(json!({
            "bootstrap_history": true, "accept_history_anchor": true,
            "acceptance_note": "First canonical anchor, reviewed by bob"
        }))
        .review("approved")
    }

    /// Accept this run as the new anchor with a note.
    pub fn accept(note: &str) -> RunSpec {
        RunSpec::dispatch(json!({"accept_history_anchor": true, "acceptance_note": note}))
    }

    /// The reviewer `bob` decides the `tier1-canonical-acceptance` deployment.
    pub fn review(mut self, state: &str) -> RunSpec {
        self.0["approvals"]["tier1-canonical-acceptance"] =
            json!({"state": state, "reviewer": "bob", "comment": format!("{state} by the test")});
        self
    }

    /// Start `workflow` (a path in the scenario repository) instead of tier1-nightly.yml.
    pub fn workflow(mut self, workflow: &str) -> RunSpec {
        self.0["workflow"] = json!(workflow);
        self
    }

    /// Run on another branch.
    pub fn on_branch(mut self, branch: &str) -> RunSpec {
        self.0["ref"] = json!(format!("refs/heads/{branch}"));
        self
    }

    /// A pull request event (`types: [labeled]`): pull request `number` from branch `head_branch`
    /// at `head_sha` into `main` at `base_sha`, labelled `label` by the maintainer `carol`, from
    /// this repository (see [`RunSpec::opened_from_fork`]). The run's commit is the head commit (it
    /// stands for GitHub's merge commit).
    pub fn pull_request(
        number: u64,
        head_branch: &str,
        head_sha: &str,
        base_sha: &str,
        label: &str,
    ) -> RunSpec {
        let repo = json!({"full_name": REPOSITORY, "fork": false});
        RunSpec(json!({
            "workflow": ".github/workflows/tier1-preview.yml", "event": "pull_request",
            "ref": format!("refs/pull/{number}/merge"), "sha": head_sha, "actor": "carol",
            "inputs": {}, "env": {}, "approvals": {}, "hold": {},
            "payload": {
                "action": "labeled", "number": number, "label": {"name": label},
                "sender": {"login": "carol"},
                "pull_request": {
                    "number": number, "labels": [{"name": label}],
                    "head": {"ref": head_branch, "sha": head_sha, "repo": repo},
                    "base": {"ref": "main", "sha": base_sha, "repo": repo}
                },
                "repository": {"full_name": REPOSITORY, "default_branch": "main"}
            }
        }))
    }

    /// The pull request is in the repository `full_name` (not a fork) instead of [`REPOSITORY`].
    pub fn in_repository(mut self, full_name: &str) -> RunSpec {
        let repo = json!({"full_name": full_name, "fork": false});
        self.0["payload"]["pull_request"]["head"]["repo"] = repo.clone();
        self.0["payload"]["pull_request"]["base"]["repo"] = repo;
        self.0["payload"]["repository"]["full_name"] = json!(full_name);
        self
    }

    /// The pull request comes from the fork `full_name`.
    pub fn opened_from_fork(mut self, full_name: &str) -> RunSpec {
        self.0["payload"]["pull_request"]["head"]["repo"] =
            json!({"full_name": full_name, "fork": true});
        self
    }

    /// Run on commit `sha` of the scenario repository (default: its first commit on main).
    pub fn at(mut self, sha: &str) -> RunSpec {
        self.0["sha"] = json!(sha);
        self
    }

    /// An environment variable of the machines for this run (the fixture target's knobs).
    pub fn env(mut self, key: &str, value: &str) -> RunSpec {
        self.0["env"][key] = json!(value);
        self
    }

    /// "Re-run this job" on run `run` (an earlier run of the scenario) once it completed: the next
    /// attempt of the same run re-runs `job` and every job that needs it; the others keep their
    /// results and outputs (tests/workflows/harness/reruns.mjs).
    pub fn rerun(run: usize, job: &str) -> RunSpec {
        RunSpec(json!({
            "rerun": {"run": run, "jobs": [job]}, "env": {}, "approvals": {}, "hold": {}
        }))
    }

    /// The re-run is started by `actor` (`github.triggering_actor`, `GITHUB_TRIGGERING_ACTOR`);
    /// `github.actor` stays the run's first actor, as on GitHub.
    pub fn by(mut self, actor: &str) -> RunSpec {
        assert!(
            self.0.get("rerun").is_some(),
            "by() names who re-runs a run"
        );
        self.0["actor"] = json!(actor);
        self
    }

    /// Keep job `job` (and its concurrency group) after its steps until job `other_job` of run
    /// `other_run` is queued: makes a queue on a group certain instead of a matter of timing.
    pub fn hold_until_queued(mut self, job: &str, other_run: usize, other_job: &str) -> RunSpec {
        self.0["hold"][job] = json!({"until_queued": {"run": other_run, "job": other_job}});
        self
    }

    /// Keep job `job` (and its concurrency group) after its steps until job `other_job` of run
    /// `other_run` has started (holds its own group and runs).
    pub fn hold_until_started(mut self, job: &str, other_run: usize, other_job: &str) -> RunSpec {
        self.0["hold"][job] = json!({"until_started": {"run": other_run, "job": other_job}});
        self
    }

    /// Cancel `job` (a job id, or a matrix leg `<job>#<n>`) as its step `step` starts: the step is
    /// cancelled, later steps run only when their `if` names `always()` or `cancelled()`.
    pub fn cancel_at(mut self, job: &str, step: &str) -> RunSpec {
        self.0["cancel"][job] = json!(step);
        self
    }

    /// Lose `job`'s runner (a job id or a matrix leg `<job>#<n>`) at its step `step`: the step
    /// fails without running, as when a runner stops answering.
    pub fn fail_at(mut self, job: &str, step: &str) -> RunSpec {
        self.0["fail"][job] = json!(step);
        self
    }

    /// "Re-run this job" on legs `legs` (1-based) of the matrix job `job` of run `run`: only those
    /// legs and the jobs that need `job` run again.
    pub fn rerun_legs(run: usize, job: &str, legs: &[u32]) -> RunSpec {
        RunSpec(json!({
            "rerun": {"run": run, "jobs": [job], "legs": {job: legs}}, "env": {}, "approvals": {}, "hold": {}
        }))
    }
}
