//! Contract of the workflows and the composite action: triggers, job graph, locks, environment,
//! permissions, pinning, retention, upload order and conditions, request validation, and no `${{`
//! inside any `run:` script. The YAML is parsed with serde-saphyr into `serde_json::Value`.

use crate::support::repo_files;
use repo_files::{text, yaml};

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const NIGHTLY: &str = ".github/workflows/tier1-nightly.yml";
/// The sharded nightly (issue 40): the producer's steps split over a plan job, a matrix of shard
/// jobs and a combine job; the same publication, authorization and promotion jobs.
const SHARDED: &str = ".github/workflows/tier1-nightly-sharded.yml";
const PROMOTE: &str = ".github/workflows/tier1-promote.yml";
const CI: &str = ".github/workflows/ci.yml";
const RELEASE: &str = ".github/workflows/release.yml";
const PREVIEW: &str = ".github/workflows/tier1-preview.yml";
const BISECT: &str = ".github/workflows/tier1-bisect.yml";
const EXPORT: &str = ".github/workflows/tier1-export.yml";
const ACTION: &str = "action.yml";
/// Every composite action (the producer, install-only, publish, promote, export, validate).
const ACTIONS: [&str; 6] = [
    ACTION,
    "install/action.yml",
    "publish/action.yml",
    "promote/action.yml",
    "export/action.yml",
    "validate/action.yml",
];
/// The installer every action runs.
const INSTALLER: &str = "install/install.sh";
const WORKFLOWS: [&str; 8] = [
    NIGHTLY, SHARDED, PROMOTE, CI, RELEASE, PREVIEW, BISECT, EXPORT,
];

fn jobs(wf: &Value) -> &serde_json::Map<String, Value> {
    wf["jobs"].as_object().expect("jobs mapping")
}

fn steps(job: &Value) -> &Vec<Value> {
    job["steps"].as_array().expect("steps list")
}

/// The step with this `id`, and its position.
fn step<'a>(job: &'a Value, id: &str) -> (usize, &'a Value) {
    steps(job)
        .iter()
        .enumerate()
        .find(|(_, s)| s["id"] == id)
        .unwrap_or_else(|| panic!("no step with id {id}"))
}

fn step_named<'a>(job: &'a Value, name: &str) -> (usize, &'a Value) {
    steps(job)
        .iter()
        .enumerate()
        .find(|(_, s)| s["name"] == name)
        .unwrap_or_else(|| panic!("no step named {name}"))
}

fn producer() -> Value {
    yaml(NIGHTLY)["jobs"]["tier1"].clone()
}

/// The sharded nightly's job `name` (`plan`, `shard`, `combine`, ...).
fn sharded(name: &str) -> Value {
    yaml(SHARDED)["jobs"][name].clone()
}

/// The job of each nightly that validates the request and restores the history: the producer of
/// the one-runner nightly, the plan job of the sharded one.
fn requesters() -> [(&'static str, Value); 2] {
    [(NIGHTLY, producer()), (SHARDED, sharded("plan"))]
}

#[test]
fn nightly_triggers_are_the_schedule_and_dispatch_with_five_inputs() {
    let wf = yaml(NIGHTLY);
    assert_eq!(wf["name"], "Tier-1 Nightly");
    let on = wf["on"]
        .as_object()
        .expect("`on` parsed as a mapping key, not a boolean");
    assert_eq!(
        on.keys().collect::<Vec<_>>(),
        ["schedule", "workflow_dispatch"]
    );
    assert_eq!(on["schedule"], serde_json::json!([{"cron": "15 3 * * *"}]));
    let inputs = &on["workflow_dispatch"]["inputs"];
    assert_eq!(inputs["bootstrap_history"]["type"], "boolean");
    assert_eq!(inputs["bootstrap_history"]["default"], false);
    assert_eq!(inputs["accept_history_anchor"]["type"], "boolean");
    assert_eq!(inputs["accept_history_anchor"]["default"], false);
    assert_eq!(inputs["acceptance_note"]["type"], "string");
    assert_eq!(inputs["acceptance_note"]["default"], "");
    // The recovery from an export (docs/runbook.md section 4a).
    for name in ["history_export", "history_export_sha256"] {
        assert_eq!(inputs[name]["type"], "string", "{name}");
        assert_eq!(inputs[name]["default"], "", "{name}");
    }
    assert_eq!(inputs.as_object().unwrap().len(), 5);
    // The sharded nightly: the same five inputs, in the same order, after its class and shards.
    let sharded = yaml(SHARDED);
    assert_eq!(
        sharded["on"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["schedule", "workflow_dispatch"]
    );
    let sharded_inputs = sharded["on"]["workflow_dispatch"]["inputs"]
        .as_object()
        .unwrap();
    assert_eq!(
        sharded_inputs.keys().collect::<Vec<_>>(),
        [
            "runner_class",
            "shards",
            "bootstrap_history",
            "accept_history_anchor",
            "acceptance_note",
            "history_export",
            "history_export_sha256"
        ]
    );
    for (name, input) in inputs.as_object().unwrap() {
        assert_eq!(
            (
                &sharded_inputs[name]["type"],
                &sharded_inputs[name]["default"]
            ),
            (&input["type"], &input["default"]),
            "{name}"
        );
    }
    let promote = yaml(PROMOTE);
    assert_eq!(
        promote["on"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["workflow_call"]
    );
}

#[test]
fn job_graph() {
    let wf = yaml(NIGHTLY);
    let j = jobs(&wf);
    assert_eq!(
        j.keys().collect::<Vec<_>>(),
        [
            "tier1",
            "publish-history",
            "authorize-history-anchor",
            "promote-history-anchor"
        ]
    );
    assert!(j["tier1"].get("needs").is_none());
    assert_eq!(j["publish-history"]["needs"], "tier1");
    assert_eq!(j["authorize-history-anchor"]["needs"], "tier1");
    assert_eq!(
        j["promote-history-anchor"]["needs"],
        serde_json::json!(["tier1", "authorize-history-anchor"])
    );
    assert_eq!(
        j["promote-history-anchor"]["uses"],
        "$/.github/workflows/tier1-promote.yml"
    );
    assert_eq!(j["tier1"]["runs-on"], gpu_runner());
    // Publication only on the normal path and only for bound evidence; promotion only after approval.
    let publish_if = j["publish-history"]["if"].as_str().unwrap();
    for part in [
        "always()",
        "!inputs.accept_history_anchor",
        "candidate_history_artifact_id != ''",
        "evidence_identity_bound == 'success'",
    ] {
        assert!(
            publish_if.contains(part),
            "publish-history if lacks {part}: {publish_if}"
        );
    }
    let authorize_if = j["authorize-history-anchor"]["if"].as_str().unwrap();
    for part in [
        "github.event_name == 'workflow_dispatch'",
        "inputs.accept_history_anchor",
        "needs.tier1.result == 'success'",
    ] {
        assert!(
            authorize_if.contains(part),
            "authorize if lacks {part}: {authorize_if}"
        );
    }
    let promote_if = j["promote-history-anchor"]["if"].as_str().unwrap();
    assert!(
        promote_if.contains("needs.authorize-history-anchor.result == 'success'"),
        "{promote_if}"
    );
    // The producer's outputs carry what publication and promotion need.
    let outputs = j["tier1"]["outputs"].as_object().unwrap();
    for key in [
        "run_id",
        "artifact_suffix",
        "candidate_history_artifact_id",
        "evidence_artifact_id",
        "evidence_artifact_name",
        "evidence_artifact_digest",
        "evidence_identity_bound",
    ] {
        assert!(outputs.contains_key(key), "producer output {key}");
    }
    assert_eq!(
        outputs["evidence_artifact_digest"],
        "${{ steps.upload_evidence.outputs.artifact-digest }}"
    );
    assert_eq!(
        outputs["evidence_identity_bound"],
        "${{ steps.bind_evidence.outcome }}"
    );
}

/// The canonical GPU runner's labels.
fn gpu_runner() -> Value {
    serde_json::json!([
        "self-hosted",
        "linux",
        "x64",
        "gpu",
        "b200",
        "node24-actions"
    ])
}

fn assert_lock(job: &Value, group: &str) {
    let c = &job["concurrency"];
    assert_eq!(c["group"], group);
    assert_eq!(c["cancel-in-progress"], false);
    assert_eq!(c["queue"], "max");
    assert_eq!(c.as_object().unwrap().len(), 3);
}

#[test]
fn two_locks_queue_max_never_cancel() {
    let wf = yaml(NIGHTLY);
    let promote = yaml(PROMOTE);
    for w in [&wf, &promote] {
        assert!(
            w.get("concurrency").is_none(),
            "no workflow-level concurrency"
        );
    }
    assert_lock(&wf["jobs"]["tier1"], "tier1-nightly-producer");
    assert_lock(&wf["jobs"]["publish-history"], "tier1-history-publication");
    // The sharded nightly publishes under its class's lock.
    assert_lock(
        &sharded("publish-history"),
        "tier1-history-publication-${{ inputs.runner_class || 'b200' }}",
    );
    // A runner class's promotion takes the class's lock; the unnamed class's is the original one.
    assert_lock(
        &promote["jobs"]["promote"],
        "tier1-history-publication${{ inputs.runner_class != '' && format('-{0}', inputs.runner_class) || '' }}",
    );
    assert!(
        wf["jobs"]["authorize-history-anchor"]
            .get("concurrency")
            .is_none(),
        "approval wait must not hold a lock"
    );
    assert!(
        wf["jobs"]["promote-history-anchor"]
            .get("concurrency")
            .is_none()
    );
}

#[test]
fn environment_only_on_the_authorize_job() {
    let mut with_env = Vec::new();
    for rel in WORKFLOWS {
        for (name, job) in jobs(&yaml(rel)) {
            if job.get("environment").is_some() {
                with_env.push((rel, name.clone(), job["environment"].clone()));
            }
        }
    }
    assert_eq!(
        with_env,
        [NIGHTLY, SHARDED].map(|rel| (
            rel,
            "authorize-history-anchor".to_string(),
            Value::from("tier1-canonical-acceptance")
        ))
    );
}

#[test]
fn permissions_empty_at_top_and_granted_per_job() {
    for rel in WORKFLOWS {
        let wf = yaml(rel);
        assert_eq!(
            wf["permissions"],
            serde_json::json!({}),
            "{rel}: top-level permissions"
        );
        for (name, job) in jobs(&wf) {
            let perms = job
                .get("permissions")
                .unwrap_or_else(|| panic!("{rel}/{name}: no permissions"));
            for (scope, level) in perms.as_object().unwrap() {
                let allowed_write = (rel == RELEASE
                    && ["contents", "id-token", "attestations"].contains(&scope.as_str()))
                    || (rel == PREVIEW && name == "comment" && scope == "pull-requests")
                    || (rel == EXPORT && name == "export-history" && scope == "contents");
                assert!(
                    level == "read" || allowed_write,
                    "{rel}/{name}: {scope}: {level}"
                );
            }
        }
    }
    assert_eq!(
        yaml(NIGHTLY)["jobs"]["authorize-history-anchor"]["permissions"],
        serde_json::json!({})
    );
}

/// Every `uses:` (workflows and action.yml) is local or pinned by a 40-hex SHA with a `# v` comment.
#[test]
fn every_uses_is_pinned_by_full_sha() {
    let mut seen = 0;
    for rel in WORKFLOWS.iter().chain(&ACTIONS) {
        for (n, line) in text(rel).lines().enumerate() {
            let t = line.trim_start().trim_start_matches("- ");
            let Some(rest) = t.strip_prefix("uses:") else {
                continue;
            };
            let rest = rest.trim();
            seen += 1;
            if rest.starts_with("$/") || rest.starts_with("./") {
                continue;
            }
            let (target, comment) = rest
                .split_once(" # ")
                .unwrap_or_else(|| panic!("{rel}:{}: no version comment: {line}", n + 1));
            let (_, sha) = target
                .split_once('@')
                .unwrap_or_else(|| panic!("{rel}:{}: no ref: {line}", n + 1));
            assert!(
                sha.len() == 40
                    && sha
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{rel}:{}: not a full SHA: {sha}",
                n + 1
            );
            assert!(
                comment.starts_with('v'),
                "{rel}:{}: comment {comment:?}",
                n + 1
            );
        }
    }
    assert!(seen >= 10, "found only {seen} uses: lines");
}

/// The job name [`all_steps`] gives a composite action's steps (`runs.steps`).
const ACTION_RUNS: &str = "runs";

/// Every step of every workflow's jobs and of every composite action, as (file, job, step).
fn all_steps() -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for rel in WORKFLOWS {
        for (name, job) in jobs(&yaml(rel)) {
            for s in job
                .get("steps")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.push((rel.to_string(), name.clone(), s.clone()));
            }
        }
    }
    for rel in ACTIONS {
        for s in steps(&yaml(rel)["runs"]) {
            out.push((rel.to_string(), ACTION_RUNS.to_string(), s.clone()));
        }
    }
    out
}

/// [`ACTIONS`] is every `action.yml` in the repository, and [`all_steps`] holds each one's steps,
/// so the step rules (uploads, checkouts) check the composite actions too.
#[test]
fn all_steps_include_every_composite_action_s_steps() {
    let listed = Command::new("git")
        .args(["ls-files", "action.yml", "**/action.yml"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("git runs");
    assert!(listed.status.success());
    let mut found: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter(|l| !l.starts_with("tests/"))
        .map(str::to_string)
        .collect();
    found.sort();
    let mut known: Vec<String> = ACTIONS.iter().map(|s| s.to_string()).collect();
    known.sort();
    assert_eq!(found, known, "an action.yml the contract does not walk");
    let all = all_steps();
    for rel in ACTIONS {
        let expected = steps(&yaml(rel)["runs"]).len();
        assert!(expected > 0, "{rel}: no runs.steps");
        let seen = all
            .iter()
            .filter(|(r, job, _)| r == rel && job == ACTION_RUNS)
            .count();
        assert_eq!(seen, expected, "{rel}: steps walked");
    }
}

#[test]
fn every_upload_keeps_ninety_days_and_fails_without_files() {
    let uploads: Vec<_> = all_steps()
        .into_iter()
        .filter(|(_, _, s)| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .collect();
    assert_eq!(
        uploads.len(),
        14,
        "evidence, candidate, published, ratified (in the workflows) and published, ratified (in \
         publish/action.yml, promote/action.yml); the preview; the release hand-off; the bisection; \
         the sharded nightly's plan, shard packages, evidence, candidate and published history"
    );
    for (rel, job, s) in uploads {
        // The preview's comparison is kept two weeks, a bisection's report a month: neither is
        // history nor evidence. The release's files pass from its build job to its publish job;
        // the release keeps them.
        let days = match rel.as_str() {
            PREVIEW => 14,
            RELEASE => 1,
            BISECT => 30,
            _ => 90,
        };
        assert_eq!(
            s["with"]["retention-days"], days,
            "{rel}/{job}: {}",
            s["name"]
        );
        assert_eq!(
            s["with"]["if-no-files-found"], "error",
            "{rel}/{job}: {}",
            s["name"]
        );
    }
}

#[test]
fn producer_steps_in_order() {
    let job = producer();
    let names: Vec<&str> = steps(&job)
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Compute run id",
            "Checkout",
            "Validate canonical request",
            "Build tier1",
            "Provide NVRTC",
            "Attest runner",
            "Restore latest Tier-1 history",
            "GPU preflight",
            "GPU check (driver and NVRTC, with the binaries just built)",
            "Run canonical tier-1 suite",
            "Bind immutable Tier-1 evidence identity",
            "Pack Tier-1 evidence",
            "Upload Tier-1 evidence artifact",
            "Verify uploaded evidence digest",
            "Upload Tier-1 candidate history artifact",
        ]
    );
    let run = |name: &str| {
        step_named(&job, name).1["run"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(run("Attest runner").contains("tier1-attest"));
    assert!(run("GPU preflight").contains("tier1-preflight"));
    // The check uses the binaries just built (one toolchain) and does not run the suite a second
    // time (a failing target must reach the canonical step and be recorded).
    assert_eq!(
        run("GPU check (driver and NVRTC, with the binaries just built)"),
        "bash scripts/gpu-check.sh --bin-dir \"$TIER1_BIN\" --no-suite"
    );
    let restore = run("Restore latest Tier-1 history");
    for part in [
        "tier1-restore",
        "--destination artifacts/history/tier1",
        "--allow-bootstrap",
        "--allow-anchor-renewal",
        "--workflow tier1-nightly.yml",
    ] {
        assert!(restore.contains(part), "restore lacks {part}");
    }
    let suite = step(&job, "run_tier1").1;
    assert_eq!(
        suite["continue-on-error"],
        "${{ env.TIER1_ACCEPT_HISTORY_ANCHOR == 'true' }}"
    );
    let suite_run = suite["run"].as_str().unwrap();
    for part in [
        "tier1-run",
        "--run-id \"$RUN_ID\"",
        "--history-root artifacts/history/tier1",
        "--profile minimal",
        "--environment-json \"$RUNNER_TEMP/tier1-attestation.json\"",
        "--environment-json \"$RUNNER_TEMP/tier1-environment.json\"",
        "--history-anchor-candidate",
    ] {
        assert!(suite_run.contains(part), "run lacks {part}");
    }
    for forbidden in [
        "--accept-history-anchor",
        "--acceptance-note",
        "--update-expectations",
    ] {
        assert!(!suite_run.contains(forbidden), "run passes {forbidden}");
    }
    let checkout = step_named(&job, "Checkout").1;
    assert_eq!(checkout["with"]["persist-credentials"], false);
}

/// The sharded nightly splits the producer's steps over its plan and shard jobs: each job's steps
/// in the producer's order, and each step the two share the same step (the same `run:` script and
/// `env:`; GPU preflight only where the class names a device, as a CPU class has none).
#[test]
fn sharded_jobs_take_the_producer_s_steps_in_its_order() {
    let names = |job: &Value| -> Vec<String> {
        steps(job)
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&sharded("plan")),
        [
            "Checkout",
            "Validate canonical request",
            "Build tier1",
            "Restore the class's history",
            "Plan the shards",
            "Upload the plan and the restored history",
        ]
    );
    const GPU_CHECK: &str = "GPU check (driver and NVRTC, with the binaries just built)";
    assert_eq!(
        names(&sharded("shard")),
        [
            "Checkout",
            "Build tier1",
            "Provide NVRTC",
            "Attest runner",
            "Download the plan",
            "GPU preflight",
            GPU_CHECK,
            "Measure the shard",
            "Upload the shard's evidence package",
            "Verify the uploaded package's digest",
        ]
    );
    let producer = producer();
    let order = names(&producer);
    for job in ["plan", "shard"] {
        let job = sharded(job);
        let shared: Vec<String> = names(&job)
            .into_iter()
            .filter(|n| order.contains(n))
            .collect();
        let in_producer: Vec<String> = order
            .iter()
            .filter(|n| shared.contains(n))
            .cloned()
            .collect();
        assert_eq!(shared, in_producer, "the producer's order");
    }
    for (job, name) in [
        ("plan", "Validate canonical request"),
        ("shard", "Provide NVRTC"),
        ("shard", "Attest runner"),
        ("shard", GPU_CHECK),
    ] {
        let (_, mine) = step_named(&producer, name);
        let theirs = sharded(job);
        let (_, theirs) = step_named(&theirs, name);
        assert_eq!(
            (&theirs["run"], &theirs["env"]),
            (&mine["run"], &mine["env"]),
            "{job}: {name}"
        );
    }
    let shard = sharded("shard");
    for name in ["GPU preflight", GPU_CHECK] {
        assert_eq!(
            step_named(&shard, name).1["if"],
            "env.TIER1_EXPECTED_GPU_NAME != ''",
            "{name}"
        );
    }
    // NVRTC reaches the GPU check and the measuring step; the attestation reaches the measurement.
    let at = |name: &str| step_named(&shard, name).0;
    assert!(at("Provide NVRTC") < at(GPU_CHECK) && at(GPU_CHECK) < at("Measure the shard"));
    let measure = step(&shard, "measure").1["run"].as_str().unwrap();
    assert!(
        measure.contains("--environment-json \"$RUNNER_TEMP/tier1-attestation.json\"")
            && measure.contains("--environment-json \"$RUNNER_TEMP/tier1-environment.json\""),
        "{measure}"
    );
    for job in ["plan", "shard"] {
        let job = sharded(job);
        assert_eq!(
            step_named(&job, "Checkout").1["with"]["persist-credentials"],
            false
        );
    }
}

#[test]
fn candidate_upload_follows_evidence_upload_and_requires_its_success() {
    let job = producer();
    let (bind_at, bind) = step(&job, "bind_evidence");
    let (pack_at, pack) = step(&job, "pack_evidence");
    let (evidence_at, evidence) = step(&job, "upload_evidence");
    let (verify_at, verify) = step(&job, "verify_evidence");
    let (candidate_at, candidate) = step(&job, "upload_candidate");
    assert!(
        bind_at < pack_at
            && pack_at < evidence_at
            && evidence_at < verify_at
            && verify_at < candidate_at
    );
    assert_eq!(
        bind["if"],
        "always() && steps.run_tier1.outcome != 'skipped'"
    );
    // After a failed gate the job has failed: each later step names a status function, or GitHub
    // adds success() and skips it (the night would never be published).
    assert_eq!(
        pack["if"],
        "${{ !cancelled() && steps.bind_evidence.outcome == 'success' }}"
    );
    assert_eq!(
        evidence["if"],
        "${{ !cancelled() && steps.pack_evidence.outcome == 'success' }}"
    );
    assert_eq!(
        verify["if"],
        "${{ !cancelled() && steps.upload_evidence.outcome == 'success' }}"
    );
    assert_eq!(evidence["with"]["archive"], false);
    assert_eq!(
        evidence["with"]["path"],
        "${{ runner.temp }}/${{ env.TIER1_EVIDENCE_ARTIFACT_NAME }}"
    );
    assert_eq!(
        verify["env"]["TIER1_EXPECTED_DIGEST"],
        "${{ steps.upload_evidence.outputs.artifact-digest }}"
    );
    let verify_run = verify["run"].as_str().unwrap();
    for part in [
        "tier1-evidence\" verify",
        "--expected-digest \"$TIER1_EXPECTED_DIGEST\"",
        "--file \"$RUNNER_TEMP/$TIER1_EVIDENCE_ARTIFACT_NAME\"",
        "--artifact-id \"$TIER1_EVIDENCE_ARTIFACT_ID\"",
    ] {
        assert!(verify_run.contains(part), "verify lacks {part}");
    }
    assert_eq!(
        candidate["if"],
        "${{ !cancelled() && steps.upload_evidence.outcome == 'success' && steps.verify_evidence.outcome == 'success' }}"
    );
    assert_eq!(
        candidate["with"]["name"],
        "tier1-candidate-history-${{ env.TIER1_ARTIFACT_SUFFIX }}"
    );
    assert_eq!(candidate["with"]["path"], "artifacts/history/tier1");
}

#[test]
fn promotion_restores_with_renewal_and_reads_the_approvals() {
    let promote = yaml(PROMOTE);
    let job = &promote["jobs"]["promote"];
    assert!(job.get("environment").is_none());
    let names: Vec<&str> = steps(job)
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let at = |n: &str| {
        names
            .iter()
            .position(|x| *x == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    assert!(at("Restore live canonical history") < at("Ratify the new history anchor"));
    let restore = step_named(job, "Restore live canonical history").1["run"]
        .as_str()
        .unwrap();
    assert!(restore.contains("--allow-anchor-renewal"));
    let ratify = step_named(job, "Ratify the new history anchor").1;
    assert_eq!(ratify["env"]["GITHUB_TOKEN"], "${{ github.token }}");
    let run = ratify["run"].as_str().unwrap();
    for part in [
        "tier1-promote",
        // tier1-promote reads the environment approvals itself and refuses without an approval.
        "--approvals-from-run \"$GITHUB_RUN_ID\"",
        // The evidence is the packed file as uploaded: digest-checked, then safely extracted.
        "--evidence-archive \"$RUNNER_TEMP/tier1-evidence/$TIER1_EVIDENCE_ARTIFACT_NAME\"",
        // Who started this attempt (issue 36, N11): on a re-run $GITHUB_ACTOR is still the run's
        // first actor, and whoever re-ran it could approve their own promotion.
        "--requester \"$GITHUB_TRIGGERING_ACTOR\"",
        "--expected-git-commit \"$GITHUB_SHA\"",
        "--expected-evidence-digest",
        "--expected-evidence-artifact",
    ] {
        assert!(run.contains(part), "promote lacks {part}");
    }
    // The suite file, the producer workflow and the artifact prefix are the caller's inputs.
    for (var, input) in [
        ("TIER1_SUITE_CONFIG", "suite_config"),
        ("TIER1_WORKFLOW", "workflow"),
        ("TIER1_ARTIFACT_PREFIX", "artifact_prefix"),
    ] {
        assert_eq!(
            job["env"][var],
            format!("${{{{ inputs.{input} }}}}"),
            "{var}"
        );
    }
    // The one-runner nightly passes every input but those of a runner class and a combined run;
    // the sharded nightly every input, the recovery from an export included. Both in the declared
    // order; what a caller leaves out defaults to none.
    let declared = promote["on"]["workflow_call"]["inputs"]
        .as_object()
        .unwrap();
    let passed = |wf: &str| {
        yaml(wf)["jobs"]["promote-history-anchor"]["with"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    let all_but = |left_out: &[&str]| {
        for input in left_out {
            assert_eq!(declared[*input]["default"], "", "{input}");
            assert_ne!(declared[*input]["required"], true, "{input}");
        }
        declared
            .keys()
            .filter(|k| !left_out.contains(&k.as_str()))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        all_but(&["runner_class", "shard_artifact_ids"]),
        passed(NIGHTLY)
    );
    assert_eq!(all_but(&[]), passed(SHARDED));
}

/// Collect every `run:` script of a parsed workflow or action.
fn run_scripts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "run" {
                    if let Some(s) = x.as_str() {
                        out.push(s.to_string());
                    }
                } else {
                    run_scripts(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| run_scripts(x, out)),
        _ => {}
    }
}

#[test]
fn no_expression_inside_any_run_script() {
    let mut total = 0;
    for rel in WORKFLOWS.iter().chain(&ACTIONS) {
        let mut scripts = Vec::new();
        // `defaults.run` is a mapping, not a script: only string values count.
        run_scripts(&yaml(rel), &mut scripts);
        assert!(!scripts.is_empty(), "{rel}: no run scripts found");
        total += scripts.len();
        for s in scripts {
            assert!(!s.contains("${{"), "{rel}: expression inside run: {s}");
        }
    }
    assert!(total >= 25, "found only {total} scripts");
}

#[test]
fn checkouts_never_persist_credentials() {
    for (rel, job, s) in all_steps() {
        if s["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/checkout@"))
        {
            assert_eq!(s["with"]["persist-credentials"], false, "{rel}/{job}");
        }
    }
}

#[test]
fn composite_action_runs_the_chain_and_verifies_the_release() {
    let a = yaml(ACTION);
    assert_eq!(a["runs"]["using"], "composite");
    let inputs = a["inputs"].as_object().unwrap();
    for key in [
        "suite-config",
        "profile",
        "expected-gpu-name",
        "expected-gpu-count",
        "labels",
        "artifact-prefix",
        "history-path",
        "tier1-version",
        "build-from-source",
    ] {
        assert!(inputs.contains_key(key), "action input {key}");
    }
    let steps = a["runs"]["steps"].as_array().unwrap();
    let mut order = Vec::new();
    for s in steps {
        assert_eq!(s["shell"], "bash", "{}", s["name"]);
        let run = s["run"].as_str().unwrap();
        for bin in [
            "tier1-attest\"",
            "tier1-restore",
            "tier1-preflight",
            "tier1-run",
            "tier1-evidence\" bind",
            "tier1-evidence\" pack",
        ] {
            if run.contains(bin) {
                order.push(bin);
            }
        }
    }
    assert_eq!(
        order,
        [
            "tier1-attest\"",
            "tier1-restore",
            "tier1-preflight",
            "tier1-run",
            "tier1-evidence\" bind",
            "tier1-evidence\" pack"
        ]
    );
    assert!(
        steps[0]["run"]
            .as_str()
            .unwrap()
            .contains("$GITHUB_ACTION_PATH/install/install.sh"),
        "the producer installs with the installer of install/"
    );
    let install = text(INSTALLER);
    for part in [
        "SHA256SUMS",
        "sha256sum --check",
        "cargo build --release --locked",
        "$TIER1_SHA256",
    ] {
        assert!(install.contains(part), "install lacks {part}");
    }
    assert!(
        steps.iter().all(|s| s.get("uses").is_none()),
        "uploads stay in the caller's workflow"
    );
}

#[test]
fn release_publishes_tarball_checksums_and_provenance() {
    let wf = yaml(RELEASE);
    assert_eq!(wf["on"]["push"]["tags"], serde_json::json!(["v*"]));
    let job = &wf["jobs"]["build"];
    let publish = &wf["jobs"]["publish"];
    let uses: Vec<&str> = steps(publish)
        .iter()
        .filter_map(|s| s["uses"].as_str())
        .collect();
    assert!(
        uses.iter()
            .any(|u| u.starts_with("actions/attest-build-provenance@"))
    );
    let step_run = step(job, "package").1["run"].as_str().unwrap();
    assert!(
        step_run.contains("tier1-${GITHUB_REF_NAME}-${TIER1_TARGET}")
            && step_run.contains("scripts/package-release.sh \"$name\" target/release dist"),
        "release asset name must match what action.yml downloads: {step_run}"
    );
    let package = text("scripts/package-release.sh");
    assert!(
        package.contains("sha256sum")
            && package.contains("SHA256SUMS")
            && package.contains(".tar.gz")
    );
    // Every binary of the workspace is in the tarball (the action calls them from it).
    let manifest = text("Cargo.toml");
    let bins: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("name = \"tier1-"))
        .filter_map(|rest| rest.strip_suffix('"'))
        .filter(|n| *n != "tools")
        .collect();
    assert!(bins.len() >= 10, "{bins:?}");
    for bin in bins {
        assert!(
            package
                .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
                .any(|w| w == format!("tier1-{bin}")),
            "tier1-{bin} is not packaged"
        );
    }
    let installer = text(INSTALLER);
    assert!(installer.contains("tier1-v${TIER1_VERSION}-x86_64-unknown-linux-gnu"));
    assert_eq!(job["env"]["TIER1_TARGET"], "x86_64-unknown-linux-gnu");
}

/// Issue 20, defect 11: the release runs on older GPU hosts (glibc 2.28, checked on the binaries)
/// and no step that runs the repository's code can sign the provenance.
#[test]
fn the_release_is_built_for_glibc_2_28_and_its_build_cannot_sign() {
    let wf = yaml(RELEASE);
    let build = &wf["jobs"]["build"];
    let image = build["container"]["image"].as_str().unwrap_or_default();
    let digest = image
        .strip_prefix("quay.io/pypa/manylinux_2_28_x86_64@sha256:")
        .unwrap_or_else(|| panic!("the build runs in manylinux_2_28 pinned by digest: {image}"));
    assert!(
        digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()),
        "{image}"
    );
    assert_eq!(build["env"]["TIER1_GLIBC_FLOOR"], "2.28");
    assert_eq!(
        build["permissions"],
        serde_json::json!({"contents": "read"}),
        "no id-token: the build steps get no ACTIONS_ID_TOKEN_REQUEST_*"
    );
    let floor = step_named(build, "Check the glibc floor").1["run"]
        .as_str()
        .unwrap();
    assert!(
        floor.contains(".ci/glibc-floor.sh \"$TIER1_GLIBC_FLOOR\""),
        "{floor}"
    );
    let (check, _) = step_named(build, "Check the glibc floor");
    let (package, _) = step(build, "package");
    assert!(check < package, "checked before it is packaged");
    // The job that can sign runs nothing of the repository: no checkout, no build.
    let publish = &wf["jobs"]["publish"];
    assert_eq!(publish["permissions"]["id-token"], "write");
    for s in steps(publish) {
        let uses = s["uses"].as_str().unwrap_or_default();
        assert!(!uses.starts_with("actions/checkout@"), "{s}");
        let run = s["run"].as_str().unwrap_or_default();
        assert!(
            !run.contains("cargo") && !run.contains(".ci/") && !run.contains("bash "),
            "{run}"
        );
    }
    for (id, job) in jobs(&wf) {
        if id != "publish" {
            assert!(
                job["permissions"].get("id-token").is_none(),
                "{id} may sign"
            );
        }
    }
}

/// The release tarball holds what an adopter needs besides the binaries: the references, the
/// protocol helpers and the examples written with them (scripts/package-release.sh, run here on
/// stand-in binaries).
#[test]
fn release_tarball_packs_docs_helpers_and_examples() {
    let tmp = tempfile::tempdir().unwrap();
    let bins = tmp.path().join("bin");
    std::fs::create_dir_all(&bins).unwrap();
    let manifest = text("Cargo.toml");
    for bin in manifest
        .lines()
        .filter_map(|l| l.strip_prefix("name = \"tier1-"))
        .filter_map(|rest| rest.strip_suffix('"'))
        .filter(|n| *n != "tools")
    {
        std::fs::write(bins.join(format!("tier1-{bin}")), "stand-in").unwrap();
    }
    let out = tmp.path().join("dist");
    let name = "tier1-v0.0.0-x86_64-unknown-linux-gnu";
    let run = Command::new("bash")
        .arg(crate::support::repo_files::root().join("scripts/package-release.sh"))
        .args([name])
        .arg(&bins)
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let list = Command::new("tar")
        .arg("-tzf")
        .arg(out.join(format!("{name}.tar.gz")))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    for want in [
        "tier1-nightly",
        "tier1-dashboard",
        "README.md",
        "docs/suite.md",
        "docs/adoption.md",
        "docs/command-targets.md",
        "helpers/python/tier1_bench.py",
        "helpers/c/tier1_bench.h",
        "examples/command_target.py",
        "examples/command_target.c",
    ] {
        assert!(
            listed.lines().any(|l| l == format!("{name}/{want}")),
            "{want} is not in the tarball:\n{listed}"
        );
    }
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    assert!(sums.ends_with(&format!("  {name}.tar.gz\n")), "{sums}");
    // A missing binary is refused by name, nothing half-packed is published as a tarball.
    std::fs::remove_file(bins.join("tier1-run")).unwrap();
    let again = tmp.path().join("again");
    let run = Command::new("bash")
        .arg(crate::support::repo_files::root().join("scripts/package-release.sh"))
        .args([name])
        .arg(&bins)
        .arg(&again)
        .output()
        .unwrap();
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("tier1-run: expected a built binary"));
    assert!(!again.join(format!("{name}.tar.gz")).exists());
}

/// Run `job`'s "Validate canonical request" script under bash with the given environment (and
/// `extra`: the sharded nightly's class and shards).
fn validate(
    job: &Value,
    (reference, event): (&str, &str),
    bootstrap: bool,
    accept: bool,
    note: &str,
    extra: &[(&str, &str)],
) -> (bool, String) {
    let script = step_named(job, "Validate canonical request").1["run"]
        .as_str()
        .unwrap()
        .to_string();
    let out = Command::new("bash")
        .args(["-e", "-c", &script])
        .env_clear()
        .envs(extra.iter().copied())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GITHUB_REF", reference)
        .env("GITHUB_EVENT_NAME", event)
        .env("TIER1_BOOTSTRAP_HISTORY", bootstrap.to_string())
        .env("TIER1_ACCEPT_HISTORY_ANCHOR", accept.to_string())
        .env("TIER1_ACCEPTANCE_NOTE", note)
        .env("TIER1_DEFAULT_BRANCH", "main")
        .current_dir(repo_files::root())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn request_validation_accepts_and_refuses_as_the_reference() {
    for (rel, job) in requesters() {
        request_validation_of(rel, &job);
    }
    // The sharded nightly's own inputs, through the same script.
    let plan = sharded("plan");
    let dispatch = ("refs/heads/main", "workflow_dispatch");
    let class = |c: &str, n: &str| {
        validate(
            &plan,
            dispatch,
            false,
            false,
            "",
            &[("TIER1_RUNNER_CLASS", c), ("TIER1_SHARDS", n)],
        )
    };
    assert!(class("b200", "").0);
    assert!(class("h100.pool-2", "4").0);
    for (c, n, message) in [
        ("B200", "", "runner_class must be a class name"),
        ("b200;rm", "", "runner_class must be a class name"),
        (&"a".repeat(33), "", "runner_class must be a class name"),
        (
            "b200",
            "two",
            "shards must be a whole number of at least 1, found 'two'",
        ),
        (
            "b200",
            "0",
            "shards must be a whole number of at least 1, found '0'",
        ),
    ] {
        let (ok, out) = class(c, n);
        assert!(!ok && out.contains(message), "{c} {n}: {out}");
    }
    let env = plan["env"].as_object().unwrap();
    assert_eq!(env["TIER1_SHARDS"], "${{ inputs.shards }}");
    assert_eq!(
        yaml(SHARDED)["env"]["TIER1_RUNNER_CLASS"],
        "${{ inputs.runner_class || 'b200' }}"
    );
}

/// The reference's accepted and refused requests, through `job`'s validation step.
fn request_validation_of(rel: &str, job: &Value) {
    let main = "refs/heads/main";
    let ok = |event, bootstrap, accept, note| {
        validate(job, (main, event), bootstrap, accept, note, &[]).0
    };
    assert!(ok("schedule", false, false, ""), "{rel}");
    assert!(ok("workflow_dispatch", false, false, ""), "{rel}");
    assert!(
        ok("workflow_dispatch", false, true, "reviewed in #12"),
        "{rel}"
    );
    assert!(ok("workflow_dispatch", true, true, "first anchor"), "{rel}");
    let refusals = [
        (
            "refs/heads/feature",
            "workflow_dispatch",
            false,
            false,
            "",
            "only run on the default branch main, found refs/heads/feature",
        ),
        (
            main,
            "schedule",
            false,
            true,
            "note",
            "Scheduled Tier-1 runs cannot accept a new history anchor",
        ),
        (
            main,
            "workflow_dispatch",
            false,
            true,
            "  \t",
            "A public acceptance note is required",
        ),
        (
            main,
            "workflow_dispatch",
            false,
            false,
            "stray note",
            "acceptance_note requires accept_history_anchor",
        ),
        (
            main,
            "workflow_dispatch",
            true,
            false,
            "",
            "bootstrap_history requires protected anchor acceptance",
        ),
    ];
    for (r, event, bootstrap, accept, note, message) in refusals {
        let (ok, out) = validate(job, (r, event), bootstrap, accept, note, &[]);
        assert!(
            !ok,
            "{rel}: {r} {event} bootstrap={bootstrap} accept={accept} note={note:?} accepted"
        );
        assert!(out.contains(message), "{rel}: {message} not in {out}");
    }
    // The one script of the `validate` action, with the event's default branch.
    let (_, step) = step_named(job, "Validate canonical request");
    assert_eq!(step["run"], "bash validate/validate-request.sh", "{rel}");
    assert_eq!(
        step["env"]["TIER1_DEFAULT_BRANCH"], "${{ github.event.repository.default_branch }}",
        "{rel}"
    );
    // Inputs reach the script only through env.
    let env = job["env"].as_object().unwrap();
    assert_eq!(
        env["TIER1_ACCEPT_HISTORY_ANCHOR"],
        "${{ inputs.accept_history_anchor == true }}"
    );
    assert_eq!(
        env["TIER1_BOOTSTRAP_HISTORY"],
        "${{ inputs.bootstrap_history == true }}"
    );
    assert_eq!(
        env["TIER1_ACCEPTANCE_NOTE"],
        "${{ inputs.acceptance_note }}"
    );
    for name in ["history_export", "history_export_sha256"] {
        assert_eq!(
            env[&format!("TIER1_{}", name.to_uppercase())],
            format!("${{{{ inputs.{name} }}}}"),
            "{rel}"
        );
    }
    if rel == NIGHTLY {
        assert_eq!(env["TIER1_EXPECTED_GPU_NAME"], "NVIDIA B200");
    }
}

#[test]
fn nvrtc_is_the_hash_pinned_wheel_and_reaches_every_later_step() {
    let req = text(".ci/nvrtc-requirements.txt");
    let pins: Vec<&str> = req
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && l.contains("nvidia-cuda-nvrtc-cu12"))
        .collect();
    assert_eq!(pins.len(), 1, "{req}");
    let version = pins[0]
        .trim()
        .strip_prefix("nvidia-cuda-nvrtc-cu12==")
        .and_then(|v| v.split_whitespace().next())
        .unwrap_or_else(|| panic!("not an exact pin: {}", pins[0]));
    assert!(
        version.split('.').count() == 3 && version.bytes().all(|b| b.is_ascii_digit() || b == b'.'),
        "{version}"
    );
    let hashes = req.matches("--hash=sha256:").count();
    assert!(hashes >= 1, "no hash in {req}");
    let script = text(".ci/nvrtc.sh");
    assert!(
        !script.contains("pip install"),
        "nothing is installed into the cache: only the pinned wheel is kept there"
    );
    let downloads: Vec<&str> = script
        .lines()
        .filter(|l| l.contains("pip download") && !l.trim_start().starts_with('#'))
        .collect();
    assert_eq!(downloads.len(), 1, "one download: {downloads:?}");
    assert!(
        script.contains("--require-hashes -r \"$req\"") && script.contains("--no-deps"),
        "nvrtc.sh downloads only the hash-checked requirements"
    );
    assert!(
        !script.contains("'nvidia-cuda-nvrtc-cu12>="),
        "an unpinned range"
    );
    // The workflow provides NVRTC through $GITHUB_ENV before the GPU check and the canonical run.
    let job = producer();
    let (nvrtc_at, nvrtc) = step_named(&job, "Provide NVRTC");
    let run = nvrtc["run"].as_str().unwrap();
    assert!(
        run.contains("bash .ci/nvrtc.sh") && run.contains(">> \"$GITHUB_ENV\""),
        "{run}"
    );
    assert!(run.contains("LD_LIBRARY_PATH="), "{run}");
    assert_eq!(
        nvrtc["env"]["TIER1_NVRTC_CACHE"],
        "${{ runner.tool_cache }}/tier1-nvrtc"
    );
    // The library itself is extracted into this job's temp, never reused from the cache.
    assert_eq!(
        nvrtc["env"]["TIER1_NVRTC_DIR"],
        "${{ runner.temp }}/tier1-nvrtc"
    );
    assert!(nvrtc_at < step(&job, "gpu_check").0 && nvrtc_at < step(&job, "run_tier1").0);
}

#[test]
fn every_suite_run_records_the_runner_attestation() {
    let job = producer();
    let attest = step_named(&job, "Attest runner").1["run"]
        .as_str()
        .unwrap()
        .to_string();
    let action = yaml(ACTION);
    let action_steps = action["runs"]["steps"].as_array().unwrap();
    let action_attest = action_steps
        .iter()
        .find(|s| s["name"] == "Attest runner")
        .unwrap()["run"]
        .as_str()
        .unwrap();
    let action_run = action_steps.iter().find(|s| s["id"] == "run").unwrap()["run"]
        .as_str()
        .unwrap();
    for (attest, run) in [
        (
            attest.as_str(),
            step(&job, "run_tier1").1["run"].as_str().unwrap(),
        ),
        (action_attest, action_run),
    ] {
        assert!(
            attest.contains("--output \"$RUNNER_TEMP/tier1-attestation.json\""),
            "{attest}"
        );
        assert!(
            run.contains("--environment-json \"$RUNNER_TEMP/tier1-attestation.json\""),
            "the attestation does not reach tier1-run: {run}"
        );
        assert!(run.contains("--environment-json \"$RUNNER_TEMP/tier1-environment.json\""));
    }
}

#[test]
fn bisect_is_manual_on_the_preview_runner_with_the_full_history() {
    let wf = yaml(BISECT);
    let on = wf["on"].as_object().unwrap();
    assert_eq!(on.keys().collect::<Vec<_>>(), ["workflow_dispatch"]);
    let inputs = on["workflow_dispatch"]["inputs"].as_object().unwrap();
    assert_eq!(
        inputs.keys().collect::<Vec<_>>(),
        [
            "good",
            "bad",
            "target",
            "profile",
            "threshold_pct",
            "metric"
        ]
    );
    for required in ["good", "bad", "target"] {
        assert_eq!(inputs[required]["required"], true, "{required}");
    }
    let job = &wf["jobs"]["bisect"];
    // The preview runner class, never the canonical one (issue 36, N3).
    assert_eq!(
        job["runs-on"],
        serde_json::json!([
            "self-hosted",
            "linux",
            "x64",
            "gpu",
            "node24-actions",
            "tier1-preview"
        ])
    );
    assert_eq!(job["permissions"], serde_json::json!({"contents": "read"}));
    assert_lock(job, "tier1-bisect");
    let (_, checkout) = step_named(job, "Checkout with the full history");
    assert_eq!(checkout["with"]["fetch-depth"], 0);
    let (_, run) = step(job, "bisect");
    // Inputs reach the script only through env.
    for k in [
        "GOOD",
        "BAD",
        "TARGET",
        "PROFILE",
        "THRESHOLD_PCT",
        "METRIC",
    ] {
        assert!(
            run["env"][format!("TIER1_BISECT_{k}")]
                .as_str()
                .is_some_and(|v| v.starts_with("${{ inputs.")),
            "{k}"
        );
    }
    assert!(
        run["run"]
            .as_str()
            .unwrap()
            .contains("\"$TIER1_BIN/tier1-bisect\"")
    );
}

/// The monthly export: a schedule and a dispatch, one job that restores (with renewal, so an aging
/// anchor never stops the export), writes the dashboard's step summary, exports and attaches the
/// archive and its digest to a release; the composite action for other repositories does the same.
#[test]
fn the_monthly_export_restores_exports_and_attaches_to_a_release() {
    let wf = yaml(EXPORT);
    assert_eq!(wf["on"]["schedule"][0]["cron"], "45 4 1 * *");
    assert!(wf["on"].get("workflow_dispatch").is_some());
    let job = &wf["jobs"]["export-history"];
    assert_eq!(
        job["permissions"],
        serde_json::json!({"actions": "read", "contents": "write"})
    );
    for (rel, scripts) in [
        (EXPORT, job.clone()),
        ("export/action.yml", yaml("export/action.yml")),
    ] {
        let mut runs = Vec::new();
        run_scripts(&scripts, &mut runs);
        let all = runs.join("\n");
        let at = |needle: &str| {
            all.find(needle)
                .unwrap_or_else(|| panic!("{rel}: no {needle:?} in its scripts"))
        };
        assert!(at("tier1-restore") < at("tier1-dashboard"), "{rel}");
        assert!(at("tier1-dashboard") < at("tier1-export"), "{rel}");
        // A release of its own per export, never onto an existing one (export_release.rs).
        assert!(at("tier1-export") < at("attach-release.sh"), "{rel}");
        assert!(!all.contains("--clobber"), "{rel}");
        assert!(all.contains("--allow-anchor-renewal"), "{rel}");
        assert!(
            all.contains(".sha256"),
            "{rel}: the digest file is attached"
        );
    }
}

/// The recovery inputs: an export only on the acceptance path, never with a bootstrap, and always
/// with its recorded digest; the producer and the promotion restore from it.
#[test]
fn a_recovery_from_an_export_is_validated_and_restored_from_the_export() {
    for (rel, job) in requesters() {
        recovery_validated_by(rel, &job);
    }
    for (rel, step) in [
        (
            NIGHTLY,
            step_named(&producer(), "Restore latest Tier-1 history")
                .1
                .clone(),
        ),
        (
            SHARDED,
            step_named(&sharded("plan"), "Restore the class's history")
                .1
                .clone(),
        ),
        (
            PROMOTE,
            step_named(
                &yaml(PROMOTE)["jobs"]["promote"],
                "Restore live canonical history",
            )
            .1
            .clone(),
        ),
    ] {
        let script = step["run"].as_str().unwrap();
        assert!(
            script.contains("gh release download \"$TIER1_HISTORY_EXPORT\"")
                && script.contains("--from-export")
                && script.contains("--sha256 \"$TIER1_HISTORY_EXPORT_SHA256\""),
            "{rel}: {script}"
        );
        // The export branch comes first and ends the step: never a restore from the store too.
        let export_at = script.find("--from-export").unwrap();
        assert!(script[export_at..].contains("exit 0"), "{rel}");
        assert!(
            script
                .find("if [[ -n \"$TIER1_HISTORY_EXPORT\" ]]")
                .unwrap()
                < export_at,
            "{rel}"
        );
        // gh reads its token and repository from the step's env.
        assert_eq!(step["env"]["GH_TOKEN"], "${{ github.token }}", "{rel}");
        assert_eq!(step["env"]["GH_REPO"], "${{ github.repository }}", "{rel}");
    }
}

/// The recovery's rules through `job`'s validation step.
fn recovery_validated_by(rel: &str, job: &Value) {
    let script = step_named(job, "Validate canonical request").1["run"]
        .as_str()
        .unwrap()
        .to_string();
    let run = |accept: bool, bootstrap: bool, export: &str, sha: &str| {
        let out = Command::new("bash")
            .args(["-e", "-c", &script])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GITHUB_REF", "refs/heads/main")
            .env("GITHUB_EVENT_NAME", "workflow_dispatch")
            .env("TIER1_BOOTSTRAP_HISTORY", bootstrap.to_string())
            .env("TIER1_ACCEPT_HISTORY_ANCHOR", accept.to_string())
            .env(
                "TIER1_ACCEPTANCE_NOTE",
                if accept { "recovered" } else { "" },
            )
            .env("TIER1_HISTORY_EXPORT", export)
            .env("TIER1_HISTORY_EXPORT_SHA256", sha)
            .env("TIER1_DEFAULT_BRANCH", "main")
            .current_dir(repo_files::root())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let hex = "a".repeat(64);
    assert!(run(true, false, "tier1-history-2026-09", &hex).0, "{rel}");
    for (accept, bootstrap, export, sha, needle) in [
        (
            false,
            false,
            "tier1-history-2026-09",
            hex.as_str(),
            "requires accept_history_anchor",
        ),
        (
            true,
            true,
            "tier1-history-2026-09",
            hex.as_str(),
            "cannot be combined with bootstrap",
        ),
        (
            true,
            false,
            "tier1-history-2026-09",
            "",
            "needs history_export_sha256",
        ),
        (
            true,
            false,
            "tier1-history-2026-09",
            "abc",
            "needs history_export_sha256",
        ),
        (true, false, "", hex.as_str(), "requires history_export"),
    ] {
        let (ok, out) = run(accept, bootstrap, export, sha);
        assert!(!ok && out.contains(needle), "{rel}: {export} {sha}: {out}");
    }
}

/// The labels of a job's `runs-on` (a string or a list).
fn runs_on(job: &Value) -> Vec<String> {
    match &job["runs-on"] {
        Value::String(l) => vec![l.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// Issue 36, N3: the canonical runner class (`b200`) runs only the nightly's producer, which
/// builds nothing but the commit it measures and the anchor's. A job that builds or runs commits
/// no one ratified — a bisection of any two commits a writer names, a pull request's preview —
/// runs on another class, so it can leave nothing behind that a later night measures or installs;
/// and a bisection builds into its own cache, never `$RUNNER_TOOL_CACHE/tier1-builds` (the cache
/// the nightly's side by side reuses). The adopter's template (docs/adoption.md) keeps the same
/// rule.
#[test]
fn no_job_that_builds_arbitrary_commits_runs_on_the_canonical_runner_or_writes_its_cache() {
    let templates = [
        "tests/fixtures/adopter/.github/workflows/benchmarks.yml",
        "tests/fixtures/adopter/.github/workflows/benchmarks-preview.yml",
        "tests/fixtures/adopter/.github/workflows/history-export.yml",
    ];
    let canonical_jobs = [(NIGHTLY, "tier1"), (templates[0], "benchmark")];
    let mut canonical_seen = 0;
    for rel in WORKFLOWS.iter().chain(&templates) {
        let wf = yaml(rel);
        for (id, job) in jobs(&wf) {
            let labels = runs_on(job);
            let on_canonical = labels.iter().any(|l| l == "b200");
            if canonical_jobs.contains(&(*rel, id.as_str())) {
                assert!(on_canonical, "{rel} job {id}: {labels:?}");
                canonical_seen += 1;
            } else {
                assert!(
                    !on_canonical,
                    "{rel} job {id} runs on the canonical runner class b200 ({labels:?}): only the nightly's producer may"
                );
            }
        }
    }
    assert_eq!(canonical_seen, canonical_jobs.len());
    // Every step that runs tier1-bisect names a cache of its own.
    let mut bisections = 0;
    for (rel, job, s) in all_steps() {
        let Some(run) = s["run"].as_str() else {
            continue;
        };
        if !run.contains("tier1-bisect\"") {
            continue;
        }
        bisections += 1;
        let wf_job = &yaml(&rel)["jobs"][&job];
        let cache = s["env"]["TIER1_BUILD_CACHE"]
            .as_str()
            .or(wf_job["env"]["TIER1_BUILD_CACHE"].as_str())
            .unwrap_or_else(|| {
                panic!("{rel} job {job}: tier1-bisect without TIER1_BUILD_CACHE builds into the nightly's cache")
            });
        assert_eq!(
            cache, "${{ runner.tool_cache }}/tier1-bisect-builds",
            "{rel} job {job}"
        );
        assert!(!run.contains("--cache-dir"), "{rel} job {job}: {run}");
    }
    assert_eq!(bisections, 1, "tier1-bisect.yml's bisect step");
}

/// The repository scripts a `run:` text invokes (tokens ending in `.sh`), as paths from the
/// checkout's root; `$GITHUB_ACTION_PATH` is the directory of the action `rel`.
fn scripts_invoked(rel: &str, run: &str) -> Vec<String> {
    let action_dir = Path::new(rel)
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    run.split(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '(' || c == ')')
        .filter(|t| t.ends_with(".sh"))
        .map(|t| {
            let t = t.replace("$GITHUB_ACTION_PATH", &action_dir);
            let mut parts: Vec<&str> = Vec::new();
            for p in t.split('/') {
                match p {
                    "" | "." => {}
                    ".." => {
                        parts.pop();
                    }
                    p => parts.push(p),
                }
            }
            parts.join("/")
        })
        .collect()
}

/// Issue 36, N9: every variable a step passes in `env:` to a repository script is one that script
/// reads (or the step's own `run:` text uses). tier1-bisect.yml passed `TIER1_NVRTC_VENV`, which
/// `.ci/nvrtc.sh` no longer reads: the wheel cache silently moved into the checkout's `target/`.
#[test]
fn every_variable_a_step_passes_to_a_script_is_read_by_it() {
    let mut checked = 0;
    for (rel, job, s) in all_steps() {
        let (Some(run), Some(env)) = (s["run"].as_str(), s["env"].as_object()) else {
            continue;
        };
        let scripts = scripts_invoked(&rel, run);
        if scripts.is_empty() {
            continue;
        }
        let texts: Vec<String> = scripts.iter().map(|p| text(p)).collect();
        for key in env.keys() {
            checked += 1;
            assert!(
                run.contains(key.as_str()) || texts.iter().any(|t| t.contains(key.as_str())),
                "{rel} job {job}: step {:?} passes {key}, which neither its run: text nor {scripts:?} reads",
                s["name"].as_str().or(s["id"].as_str()).unwrap_or_default()
            );
        }
    }
    assert!(checked >= 20, "checked only {checked} variables");
}
