//! Test helper for history tests: builds valid candidate packages, live histories and evidence
//! trees through the library (the same rules the producer follows), so tests never hand-edit JSON
//! in many places. Each test then breaks exactly one thing.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use tier1::bench::result::{
    InputSignature, RESULTS_SCHEMA_VERSION, ResultsFile, Role, Sampling, TargetResult,
    VariantResult, VariantVerification, summarize,
};
use tier1::bench::stats::Stats;
use tier1::history::model::{
    Aggregates, IndexRow, RECHECKS_FILE, REGRESSION_JSON_FILE, REGRESSION_MD_FILE, SUMMARY_FILE,
    Summary, TREND_FILE,
};
use tier1::history::package::{self, IndexDoc};
use tier1::suite::Goal;
use tier1::suite::Suite;

/// The commit every fixture run is built from.
pub const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
/// A valid evidence digest.
pub const DIGEST: &str = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/// The fixture suite file.
pub fn suite_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history/suite.yaml")
}

/// The fixture suite.
pub fn suite() -> Suite {
    Suite::load(&suite_path()).expect("fixture suite")
}

/// What one producer run measured.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Run id.
    pub run_id: String,
    /// `generated_at`.
    pub generated_at: String,
    /// Speedup of the speed target.
    pub speedup: f64,
    /// Memory savings percent of the memory target.
    pub savings_pct: f64,
    /// Relative spread of the timing samples (0: constant samples, every interval of zero width).
    pub noise: f64,
    /// The suite file the run belongs to (default: the fixture suite).
    pub suite_file: Option<PathBuf>,
    /// Measured under `anchor_precision: required` (default: `measured`).
    pub precision_required: bool,
}

impl RunSpec {
    /// A run with default metrics at minute `n`.
    pub fn new(run_id: &str, n: u32) -> Self {
        RunSpec {
            run_id: run_id.into(),
            generated_at: format!("2026-08-16T{:02}:{:02}:00Z", n / 60 % 24, n % 60),
            speedup: 2.0,
            savings_pct: 50.0,
            noise: 0.0,
            suite_file: None,
            precision_required: false,
        }
    }
    /// Measured under `anchor_precision: required`.
    pub fn precision_required(mut self) -> Self {
        self.precision_required = true;
        self
    }
    /// Belong to the suite in `file` (its targets must be the fixture's).
    pub fn in_suite(mut self, file: &Path) -> Self {
        self.suite_file = Some(file.to_path_buf());
        self
    }
    /// The run's suite.
    pub fn suite(&self) -> Suite {
        match &self.suite_file {
            Some(f) => Suite::load(f).expect("suite file"),
            None => suite(),
        }
    }
    /// Spread the timing samples by ± `noise` (relative), so the intervals are wide.
    pub fn noise(mut self, noise: f64) -> Self {
        self.noise = noise;
        self
    }
    /// Override the speedup.
    pub fn speedup(mut self, s: f64) -> Self {
        self.speedup = s;
        self
    }
}

/// The harness results file of a run: every target measured with constant samples so the derived
/// speedup is `spec.speedup` (memory target: 1.2x and `spec.savings_pct` savings).
pub fn results(spec: &RunSpec, suite: &Suite) -> ResultsFile {
    let sig = InputSignature {
        seed: 1,
        inputs: vec![],
    };
    let variant = |name: &str, role: Role, ms: f64, mem: Option<u64>| {
        // A deterministic spread, different for the two roles so per-round ratios vary too.
        let phase = if role == Role::Baseline { 0 } else { 3 };
        let samples: Vec<f64> = (0..ROUNDS as usize)
            .map(|i| ms * (1.0 + spec.noise * SPREAD[(i + phase) % SPREAD.len()]))
            .collect();
        VariantResult {
            name: name.into(),
            role,
            input_signature: sig.clone(),
            stats: Stats::of(&samples).unwrap(),
            samples_ms: samples,
            repetitions: 1,
            memory_peak_bytes: mem,
            verification: (role == Role::Optimized).then_some(VariantVerification {
                passed: true,
                elements: 1,
                mismatches: 0,
                max_abs_err: 0.0.into(),
                max_rel_err: 0.0.into(),
                reference: None,
                message: None,
            }),
        }
    };
    let targets = suite
        .targets
        .iter()
        .map(|t| {
            let memory = t.optimization_goal == Goal::Memory;
            let base_mem = 1u64 << 30;
            let opt_mem = (base_mem as f64 * (1.0 - spec.savings_pct / 100.0)).round() as u64;
            let speedup = if memory { 1.2 } else { spec.speedup };
            let mut tr = TargetResult {
                key: t.key.clone(),
                target: t.target.clone(),
                kind: t.kind,
                optimization_goal: t.optimization_goal,
                shapes: Default::default(),
                tolerance: t.tolerance,
                work: Default::default(),
                baseline_file: None,
                artifacts: Default::default(),
                failure: None,
                min_speedup: None,
                peak_class: None,
                variants: vec![
                    variant(
                        "baseline",
                        Role::Baseline,
                        100.0,
                        memory.then_some(base_mem),
                    ),
                    variant(
                        "optimized_fast",
                        Role::Optimized,
                        100.0 / speedup,
                        memory.then_some(opt_mem),
                    ),
                ],
                sampling: Some(Sampling {
                    rounds: ROUNDS,
                    processes: 1,
                    precision_pct: 1.0.into(),
                    order_seed: 1,
                    budget_exhausted: false,
                    remeasured: false,
                    throttled: vec![],
                    machine: vec![],
                    clock: None,
                    precision_required: spec.precision_required,
                    passes: vec![],
                }),
                status: String::new(),
                message: None,
                metrics: Default::default(),
            };
            tr.finalize(suite.thresholds.min_speedup);
            tr
        })
        .collect();
    ResultsFile {
        schema_version: RESULTS_SCHEMA_VERSION,
        run_id: spec.run_id.clone(),
        timestamp: spec.generated_at.clone(),
        suite_name: suite.suite_name.clone(),
        suite_version: suite.version,
        profile: "smoke".into(),
        backend: "cpu".into(),
        environment: serde_json::from_value(serde_json::json!({"backend": "cpu"})).unwrap(),
        seed: 1,
        min_speedup: suite.thresholds.min_speedup.into(),
        warmup: 5,
        iterations: ROUNDS,
        max_rounds: Some(ROUNDS),
        min_sample_ms: Some(1.0.into()),
        precision_pct: Some(1.0.into()),
        budget_s: Some(1.0.into()),
        targets,
    }
}

/// Rounds of every fixture measurement: with `noise` 0 the samples are constant, so every
/// interval has zero width and every target is precise.
pub const ROUNDS: u32 = 8;
/// The pattern a noisy fixture spreads its samples by.
const SPREAD: [f64; 8] = [-1.0, 0.5, 1.0, -0.5, 0.25, -0.75, 0.75, -0.25];

/// Publish `spec` normally (tier1-publish's merge) on top of the live history `live`, returning
/// the new live root (`<work>/live-<run_id>`).
pub fn publish_on(work: &Path, live: &Path, spec: &RunSpec) -> PathBuf {
    let cand = work.join(format!("cand-{}", spec.run_id));
    candidate(Some(live), &cand, spec);
    let out = work.join(format!("live-{}", spec.run_id));
    tier1::publish::merge(
        &tier1::publish::MergeRequest {
            candidate_root: cand,
            canonical_root: live.into(),
            output_root: out.clone(),
            run_id: spec.run_id.clone(),
            runner_class: None,
        },
        &suite(),
    )
    .expect("normal publication");
    out
}

/// The summary of a run, derived from its results file as the producer does.
pub fn summary(spec: &RunSpec, suite: &Suite) -> Summary {
    let targets = summarize(&results(spec, suite), suite).unwrap();
    let aggregates: Aggregates = tier1::aggregate::compute(&targets);
    let id = &spec.run_id;
    serde_json::from_value(serde_json::json!({
        "suite_name": suite.suite_name, "suite_version": suite.version, "description": "",
        "run_id": id, "generated_at": spec.generated_at,
        "source_result_json": format!("{id}/results/benchmark_test_results.json"),
        "source_manifest_json": format!("{id}/manifest.json"),
        "source_markdown_report": format!("{id}/report.md"),
        "source_git_commit": COMMIT, "source_git_dirty": false, "source_manifest_git_commit": COMMIT,
        "evidence_artifact_name": format!("tier1-evidence-{id}"),
        "targets": targets, "summary": aggregates,
    }))
    .unwrap()
}

/// Build a candidate history in `out`: a copy of `live` (if any) plus the run, compared against
/// live's latest compatible anchor, with `run_accepted` from the gate and `baseline_eligible: false`.
pub fn candidate(live: Option<&Path>, out: &Path, spec: &RunSpec) -> IndexRow {
    let suite = spec.suite();
    std::fs::create_dir_all(out).unwrap();
    let mut doc = match live {
        Some(l) if l.join("index.json").is_file() => {
            tier1::fsx::copy_tree(l, out).unwrap();
            IndexDoc::load(out).unwrap().unwrap()
        }
        _ => IndexDoc::new_chained(&suite.suite_name, suite.version),
    };
    let anchor = doc
        .index
        .runs
        .iter()
        .rev()
        .find(|r| r.is_eligible())
        .map(|r| package::read_json::<Summary>(out, &r.summary_path).unwrap());
    let s = summary(spec, &suite);
    // As the producer does: the accepted runs already in the tree are the noise history.
    let noise = tier1::regress::noise::NoiseHistory::for_run(out, &suite, &s).unwrap();
    let mut reg =
        tier1::regress::compare_in(&s, anchor.as_ref(), suite.thresholds, &noise).unwrap();
    let id = spec.run_id.as_str();
    let dir = out.join(id);
    std::fs::create_dir_all(&dir).unwrap();
    if anchor.is_some() {
        reg.regression_rechecks_path = Some(format!("{id}/{RECHECKS_FILE}"));
        std::fs::write(dir.join(RECHECKS_FILE), "[]\n").unwrap();
    }
    let accepted = tier1::gate::run_accepted(&s, &reg, !reg.warnings.is_empty(), false);
    package::write_json(out, &format!("{id}/{SUMMARY_FILE}"), &s).unwrap();
    package::write_json(out, &format!("{id}/{REGRESSION_JSON_FILE}"), &reg).unwrap();
    std::fs::write(
        dir.join(REGRESSION_MD_FILE),
        tier1::regress_md::render(&reg),
    )
    .unwrap();
    std::fs::write(dir.join(TREND_FILE), "{}\n").unwrap();
    let a = &s.summary;
    let row: IndexRow = serde_json::from_value(serde_json::json!({
        "run_id": id, "generated_at": spec.generated_at,
        "summary_path": format!("{id}/{SUMMARY_FILE}"),
        "regression_summary_path": format!("{id}/{REGRESSION_MD_FILE}"),
        "regression_json_path": format!("{id}/{REGRESSION_JSON_FILE}"),
        "trend_snapshot_path": format!("{id}/{TREND_FILE}"),
        "avg_speedup": a.avg_speedup, "median_speedup": a.median_speedup,
        "geomean_speedup": a.geomean_speedup, "representative_speedup": a.representative_speedup,
        "max_speedup": a.max_speedup, "succeeded": a.succeeded, "failed": a.failed,
        "skipped": a.skipped, "missing": a.missing,
        "run_accepted": accepted, "baseline_eligible": false,
    }))
    .unwrap();
    doc.adopt_chain().unwrap();
    doc.push_row(&row).unwrap();
    std::fs::write(out.join("index.json"), doc.to_bytes().unwrap()).unwrap();
    row
}

/// Write the evidence package of a run under `root`: manifest, results file, report.
pub fn evidence(root: &Path, spec: &RunSpec) {
    let run_id = spec.run_id.as_str();
    let dir = root.join(run_id);
    std::fs::create_dir_all(dir.join("results")).unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::json!({"run_id": run_id, "git": {"commit": COMMIT, "dirty": false}})
            .to_string(),
    )
    .unwrap();
    tier1::json::write(
        &dir.join("results/benchmark_test_results.json"),
        &results(spec, &spec.suite()),
    )
    .unwrap();
    std::fs::write(dir.join("report.md"), "# report\n").unwrap();
}

/// A promotion request for `run_id` with valid defaults.
pub fn promote_request(
    cand: &Path,
    evidence: &Path,
    live: Option<&Path>,
    out: &Path,
    run_id: &str,
) -> tier1::promote::PromoteRequest {
    tier1::promote::PromoteRequest {
        history_root: cand.into(),
        evidence_root: evidence.into(),
        run_id: run_id.into(),
        requester: "dispatcher".into(),
        note: "Reviewed the immutable evidence package".into(),
        workflow_run: "https://github.example/owner/repo/actions/runs/123".into(),
        expected_git_commit: COMMIT.into(),
        expected_evidence_artifact: format!("tier1-evidence-{run_id}"),
        expected_evidence_digest: DIGEST.into(),
        canonical_history_root: live.map(Into::into),
        output_history_root: out.into(),
        suite_config: Some(suite_path()),
        repo_root: ".".into(),
        allow_bootstrap: live.is_none(),
        reviewers: vec![],
        allow_local_workflow_run: false,
        runner_class: None,
        shard_archives: Vec::new(),
    }
}

/// The promotion request as `tier1-promote` arguments.
pub fn promote_args(r: &tier1::promote::PromoteRequest) -> Vec<String> {
    let mut v: Vec<String> = [
        ("--history-root", r.history_root.display().to_string()),
        ("--evidence-root", r.evidence_root.display().to_string()),
        ("--run-id", r.run_id.clone()),
        ("--requester", r.requester.clone()),
        ("--note", r.note.clone()),
        ("--workflow-run", r.workflow_run.clone()),
        ("--expected-git-commit", r.expected_git_commit.clone()),
        (
            "--expected-evidence-artifact",
            r.expected_evidence_artifact.clone(),
        ),
        (
            "--expected-evidence-digest",
            r.expected_evidence_digest.clone(),
        ),
        (
            "--output-history-root",
            r.output_history_root.display().to_string(),
        ),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_string(), v])
    .collect();
    if let Some(l) = &r.canonical_history_root {
        v.extend(["--canonical-history-root".into(), l.display().to_string()]);
    }
    if let Some(s) = &r.suite_config {
        v.extend(["--suite-config".into(), s.display().to_string()]);
    }
    if r.allow_bootstrap {
        v.push("--allow-bootstrap".into());
    }
    for rev in &r.reviewers {
        v.extend(["--reviewer".into(), rev.clone()]);
    }
    if r.allow_local_workflow_run {
        v.push("--allow-local-workflow-run".into());
    }
    v
}

/// A promotion scene in a temporary directory: live history `live` anchored at run `anchor`, and
/// the candidate `cand` of run `c` built on it (speedup 2.5) with its evidence `ev`.
pub struct Scene {
    _t: tempfile::TempDir,
    /// The scene's directory.
    pub w: PathBuf,
}

impl Scene {
    /// Build the scene.
    pub fn new() -> Self {
        let t = tempfile::tempdir().unwrap();
        let w = t.path().to_path_buf();
        bootstrap_live(&w, &w.join("live"), &RunSpec::new("anchor", 0));
        let spec = RunSpec::new("c", 1).speedup(2.5);
        candidate(Some(&w.join("live")), &w.join("cand"), &spec);
        evidence(&w.join("ev"), &spec);
        Scene { _t: t, w }
    }
    /// A path in the scene.
    pub fn p(&self, name: &str) -> PathBuf {
        self.w.join(name)
    }
    /// The valid promotion request (output `out`).
    pub fn req(&self) -> tier1::promote::PromoteRequest {
        let (cand, ev, live) = (self.p("cand"), self.p("ev"), self.p("live"));
        promote_request(&cand, &ev, Some(&live), &self.p("out"), "c")
    }
    /// `tier1-promote` refuses `r` with `code` and `needle`; candidate, live, evidence and the
    /// output byte-identical. Returns stderr.
    pub fn refused(&self, r: &tier1::promote::PromoteRequest, code: i32, needle: &str) -> String {
        self.refused_args(&promote_args(r), code, needle, &r.output_history_root)
    }
    /// [`Scene::refused`] for raw arguments and an explicit output root.
    pub fn refused_args(&self, args: &[String], code: i32, needle: &str, out: &Path) -> String {
        let exe = env!("CARGO_BIN_EXE_tier1-promote");
        let (cand, live, ev) = (self.p("cand"), self.p("live"), self.p("ev"));
        assert_refused(exe, args, code, needle, &[&cand, &live, &ev], out);
        run(exe, args).stderr
    }
}

/// Bootstrap a live history in `live` whose only run `run_id` is the ratified anchor.
pub fn bootstrap_live(work: &Path, live: &Path, spec: &RunSpec) {
    let cand = work.join(format!("cand-{}", spec.run_id));
    let ev = work.join(format!("ev-{}", spec.run_id));
    candidate(None, &cand, spec);
    evidence(&ev, spec);
    let mut req = promote_request(&cand, &ev, None, live, &spec.run_id);
    req.suite_config = Some(spec.suite_file.clone().unwrap_or_else(suite_path));
    tier1::promote::promote(&req).expect("bootstrap promotion");
}

/// Every entry under `root` (or `root` itself when it is not a directory) with its content, for
/// byte-identical assertions: a file's bytes, a directory as `dir/` with no bytes (so an added empty
/// directory counts as a change), a symbolic link as `-> target`. Nothing is followed.
pub fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn entry(path: &Path, rel: String, out: &mut Vec<(String, Vec<u8>)>) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(path).unwrap();
            out.push((rel, format!("-> {}", target.display()).into_bytes()));
        } else if meta.is_dir() {
            out.push((format!("{rel}/"), Vec::new()));
            let mut names: Vec<_> = std::fs::read_dir(path)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            for n in names {
                let child = format!("{rel}/{}", n.to_string_lossy());
                entry(&path.join(&n), child, out);
            }
        } else {
            out.push((rel, std::fs::read(path).unwrap()));
        }
    }
    let mut out = Vec::new();
    entry(root, String::new(), &mut out);
    out
}

/// Result of running a binary.
#[derive(Debug)]
pub struct Ran {
    /// Exit code.
    pub code: i32,
    /// stdout.
    pub stdout: String,
    /// stderr.
    pub stderr: String,
}

impl Ran {
    /// The stdout JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout not JSON ({e}): {self:?}"))
    }
}

/// Run a binary with arguments.
pub fn run(exe: &str, args: &[String]) -> Ran {
    let out = crate::support::command::scrubbed(exe)
        .args(args)
        .env_remove("GITHUB_ACTOR")
        .env("TIER1_LOG", "warn")
        .output()
        .expect("spawn binary");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Run and assert a refusal: exit code, message fragment, output absent, inputs byte-identical.
pub fn assert_refused(
    exe: &str,
    args: &[String],
    code: i32,
    needle: &str,
    inputs: &[&Path],
    output: &Path,
) {
    let before: Vec<_> = inputs.iter().map(|p| snapshot(p)).collect();
    let out_before = snapshot(output);
    let r = run(exe, args);
    assert_eq!(r.code, code, "exit code; stderr: {}", r.stderr);
    assert!(
        r.stderr.contains(needle),
        "stderr {:?} lacks {needle:?}",
        r.stderr
    );
    assert!(
        r.stdout.trim().is_empty(),
        "no machine output on refusal: {}",
        r.stdout
    );
    for (p, b) in inputs.iter().zip(before) {
        assert_eq!(snapshot(p), b, "input {} changed", p.display());
    }
    assert_eq!(
        snapshot(output),
        out_before,
        "output {} changed",
        output.display()
    );
    if out_before.is_empty() {
        assert!(
            !output.exists() || tier1::fsx::is_absent_or_empty(output).unwrap(),
            "output written"
        );
    }
}
