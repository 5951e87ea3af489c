//! The producer step (`tier1-run`): refuse invalid or conflicting history, run the suite, write the
//! evidence package (`<evidence_root>/<run_id>/`: manifest, results, report), compare with the
//! accepted anchor, recheck each speed or latency regression once (`<run_id>__recheck__<key>`),
//! decide the gate, and append the run to the candidate history.

pub mod candidate;
pub mod report;
pub mod setup;
pub mod side_by_side;
pub mod verdicts;

use crate::bench::backend::Backend;
use crate::bench::harness::{self, HarnessError};
use crate::bench::options::{HarnessOptions, Hook};
use crate::bench::result::{self, ResultError, ResultsFile};
use crate::evidence::git::GitInfo;
use crate::evidence::manifest::{
    MANIFEST_SCHEMA_VERSION, Manifest, ManifestFiles, SuiteRecord, Toolchain,
};
use crate::evidence::{self, EvidenceError};
use crate::exit::{Classify, Exit};
use crate::gate::{self, Verdict};
use crate::history::error::HistoryError;
use crate::history::model::{Aggregates, INDEX_FILE, RegressionSummary, Summary};
use crate::history::package::{IndexDoc, load_run};
use crate::history_check::validate_history_root;
use crate::recheck::{self, RecheckResult};
use crate::regress::noise::NoiseHistory;
use crate::regress::{self, RegressError};
use crate::suite::{Suite, SuiteSource};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to run.
pub struct RunRequest<'a> {
    /// The suite.
    pub suite: &'a Suite,
    /// How the suite was chosen ([`Suite::discover`]).
    pub suite_source: SuiteSource,
    /// Profile name.
    pub profile: String,
    /// Run id (safe pattern).
    pub run_id: String,
    /// Candidate history root (the restored live history; updated in place).
    pub history_root: PathBuf,
    /// Evidence root (`artifacts/runs`).
    pub evidence_root: PathBuf,
    /// Backend to measure on.
    pub backend: Arc<dyn Backend>,
    /// `--history-anchor-candidate`: this run may not elect itself as the first anchor.
    pub anchor_candidate: bool,
    /// Attestation records to embed in the manifest.
    pub attestation: Option<Value>,
    /// The checkout.
    pub git: GitInfo,
    /// The checkout's directory (named in the dirty-tree refusal).
    pub repo_root: PathBuf,
    /// Run although the checkout is dirty (the run is recorded dirty: never accepted, never bound).
    pub allow_dirty: bool,
    /// `tier1-evidence-<suffix>` when known.
    pub evidence_artifact_name: Option<String>,
    /// Test hook passed to the harness.
    pub hook: Option<Hook>,
    /// Passes to measure in; `None`: the profile's `anchor_passes` when this run may become the
    /// anchor (no anchor yet, or `anchor_candidate`), else one. A preview, which is never an
    /// anchor, asks for one.
    pub passes: Option<u32>,
}

impl std::fmt::Debug for RunRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRequest")
            .field("run_id", &self.run_id)
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}

/// What a run decided, printed as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutcome {
    /// The run id.
    pub run_id: String,
    /// The suite run: name, version and how it was chosen.
    pub suite: SuiteUsed,
    /// Profile.
    pub profile: String,
    /// Backend.
    pub backend: String,
    /// Counts and aggregates.
    pub summary: Aggregates,
    /// Every target that did not succeed, with its status and why.
    pub failures: Vec<TargetFailed>,
    /// The anchor compared against.
    pub baseline_run_id: Option<String>,
    /// Confirmed regressions.
    pub regressions: usize,
    /// Improvements.
    pub improvements: usize,
    /// Anchor declines (hold advancement, do not block).
    pub anchor_declines: usize,
    /// Regressions cleared by recheck.
    pub suppressed_regressions: usize,
    /// Targets the measurement could not decide (verdict `unknown`).
    pub unknown: usize,
    /// Significant worsenings the absolute floor kept from being regressions.
    pub held_by_floor: usize,
    /// Targets missing against the anchor.
    pub missing_targets: usize,
    /// Recheck run ids executed.
    pub rechecks: Vec<String>,
    /// Gate result.
    pub run_accepted: bool,
    /// Why not accepted.
    pub run_accepted_reasons: Vec<String>,
    /// Anchor eligibility under normal publication.
    pub baseline_eligible: bool,
    /// Why not eligible.
    pub baseline_eligible_reasons: Vec<String>,
    /// The exit verdict.
    pub verdict: Verdict,
    /// History-relative path of the summary.
    pub summary_path: String,
    /// Evidence directories written (evidence-root relative).
    pub evidence_dirs: Vec<String>,
    /// Each compared target's verdict, with its figures and detectable change.
    pub targets: Vec<verdicts::TargetVerdict>,
}

/// A target that did not succeed, as printed.
#[derive(Debug, Clone, Serialize)]
pub struct TargetFailed {
    /// Target key.
    pub key: String,
    /// Target string.
    pub target: String,
    /// Its status (`failed_error`, `failed_timeout`, ...).
    pub status: String,
    /// Why.
    pub message: String,
}

/// The suite a run used, as printed.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteUsed {
    /// `suite_name`.
    pub name: String,
    /// `version`.
    pub version: u32,
    /// How it was chosen.
    pub source: SuiteSource,
}

impl RunOutcome {
    /// The exit code of the run.
    pub fn exit(&self) -> Exit {
        self.verdict.exit()
    }

    /// `gate failed: <every failing condition>` when the gate failed, else None.
    pub fn gate_message(&self) -> Option<String> {
        (!self.verdict.passed).then(|| {
            let mut why = self.verdict.failures.clone();
            why.extend(
                self.failures
                    .iter()
                    .map(|f| format!("{} {}: {}", f.key, f.status, f.message)),
            );
            format!("gate failed: {}", why.join("; "))
        })
    }
}

/// A run that could not start or complete.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The history root fails validation.
    #[error("Refusing to run Tier-1 with invalid canonical history: {0}")]
    InvalidHistory(HistoryError),
    /// The run id or its directories already exist.
    #[error("{0}")]
    Exists(String),
    /// The checkout has changes: refused before anything runs.
    #[error("{0} (or pass --allow-dirty to try the suite without a canonical result)")]
    DirtyCheckout(String),
    /// The harness could not run.
    #[error(transparent)]
    Harness(#[from] HarnessError),
    /// The results file is invalid.
    #[error(transparent)]
    Result(#[from] ResultError),
    /// The comparison was refused.
    #[error(transparent)]
    Regress(#[from] RegressError),
    /// Writing evidence failed.
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    /// Writing the candidate history failed.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// The suite config is invalid.
    #[error(transparent)]
    Suite(#[from] crate::suite::SuiteError),
    /// An input file (attestation JSON) is unreadable or malformed.
    #[error(transparent)]
    Input(#[from] crate::json::JsonError),
}

impl Classify for RunError {
    fn exit(&self) -> Exit {
        match self {
            RunError::InvalidHistory(e) => e.exit(),
            RunError::Exists(_) => Exit::Conflict,
            RunError::DirtyCheckout(_) => Exit::Invalid,
            RunError::Harness(e) => e.exit(),
            RunError::Result(e) => e.exit(),
            RunError::Regress(e) => e.exit(),
            RunError::Evidence(e) => e.exit(),
            RunError::History(e) => e.exit(),
            RunError::Suite(e) => e.exit(),
            RunError::Input(e) => e.exit(),
        }
    }
}

/// Read attestation JSON files into one object keyed by file stem (`attest`, `preflight`, ...).
pub fn read_attestations(files: &[PathBuf]) -> Result<Option<Value>, RunError> {
    if files.is_empty() {
        return Ok(None);
    }
    let mut map = serde_json::Map::new();
    for f in files {
        let v: Value = crate::json::read(f)?;
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "attestation".into());
        map.insert(stem, v);
    }
    Ok(Some(Value::Object(map)))
}

/// The checkout's identity; the job's own output directories (wherever they are inside the
/// checkout, given absolute or relative to the current directory) do not make it dirty.
pub fn detect_git(repo_root: &Path, outputs: &[&Path]) -> GitInfo {
    let mut git = crate::evidence::git::detect(repo_root, outputs);
    if let Some(sha) = crate::evidence::git::expected_commit(&git) {
        git.commit = Some(sha);
    }
    git
}

/// [`default_run_id`] at the current time.
pub fn default_run_id_now(commit: Option<&str>) -> String {
    default_run_id(chrono::Utc::now(), commit)
}

/// `YYYYMMDD_HHMMSS_tier1_nightly_<sha8>` (sha8 `00000000` outside a git checkout).
pub fn default_run_id(now: chrono::DateTime<chrono::Utc>, commit: Option<&str>) -> String {
    let sha8 = commit.and_then(|c| c.get(..8)).unwrap_or("00000000");
    format!("{}_tier1_nightly_{sha8}", now.format("%Y%m%d_%H%M%S"))
}

/// Everything a run decided: its JSON outcome, the summaries it compared and the comparison
/// (after rechecks), as written to the history.
#[derive(Debug, Clone)]
pub struct Ran {
    /// What is printed as JSON.
    pub outcome: RunOutcome,
    /// The run's summary.
    pub summary: Summary,
    /// The anchor's summary (None without an anchor).
    pub anchor: Option<Summary>,
    /// The final comparison.
    pub comparison: RegressionSummary,
}

/// Run the producer step; see the module docs. In Actions it also writes the step summary.
pub fn run(req: &RunRequest<'_>) -> Result<RunOutcome, RunError> {
    let ran = run_and_compare(req)?;
    let _ = crate::gha::step_summary(&report::step_summary(
        &ran.outcome,
        &ran.summary,
        &ran.comparison,
    ));
    Ok(ran.outcome)
}

/// [`run`] without the step summary, returning the summaries and the comparison as well (the
/// preview reports them in its own words).
pub fn run_and_compare(req: &RunRequest<'_>) -> Result<Ran, RunError> {
    let anchor = preflight(req)?;
    let passes = anchor_passes(req, anchor.is_none());
    crate::gha::group(&format!("Tier-1 suite: profile {}", req.profile));
    if passes > 1 {
        tracing::info!(
            passes,
            "this run may become the anchor: every target is measured in {passes} passes, pooled"
        );
    }
    let results = execute(req, &req.run_id, &[], None, passes);
    crate::gha::endgroup();
    let results = results?;
    let summary = build_summary(
        req.suite,
        &results,
        &req.git,
        req.evidence_artifact_name.as_deref(),
    )?;
    let noise = match &anchor {
        Some(_) => NoiseHistory::for_run(&req.history_root, req.suite, &summary)?,
        None => NoiseHistory::default(),
    };
    let th = req.suite.threshold_book();
    let first = regress::compare_in(&summary, anchor.as_ref(), &th, &noise)?;
    let mut evidence_dirs = vec![req.run_id.clone()];
    let comparison = match &anchor {
        Some(anchor) => {
            let checked = run_rechecks(req, &first)?;
            evidence_dirs.extend(
                checked
                    .iter()
                    .map(|r| recheck::recheck_run_id(&req.run_id, &r.key)),
            );
            let rechecked = recheck::apply(first, &summary, anchor, &checked, &th, &noise);
            let suspects = crate::confirmation::suspected(&rechecked, &summary);
            match side_by_side::confirm_suspects(req, &suspects, anchor)? {
                // Its evidence lies inside the run's own directory (`<run_id>/sidebyside/`).
                Some(block) => crate::confirmation::apply(rechecked, &summary, anchor, block),
                None => rechecked,
            }
        }
        None => first,
    };
    let acceptance = gate::run_acceptance(&summary, &comparison, false, false);
    let eligibility = gate::baseline_eligibility(
        &summary,
        &comparison,
        acceptance.passed(),
        !req.anchor_candidate,
    );
    report::write(
        &req.evidence_root.join(&req.run_id),
        &summary,
        &comparison,
        &results,
    )?;
    let row = candidate::append(
        &req.history_root,
        &candidate::CandidateRun {
            summary: &summary,
            regression: &comparison,
            run_accepted: acceptance.passed(),
            baseline_eligible: eligibility.passed(),
        },
    )?;
    let failures: Vec<TargetFailed> = results
        .targets
        .iter()
        .filter(|t| t.status != result::status::SUCCEEDED)
        .map(|t| TargetFailed {
            key: t.key.clone(),
            target: t.target.clone(),
            status: t.status.clone(),
            message: t.message.clone().unwrap_or_default(),
        })
        .collect();
    for f in &failures {
        tracing::error!(target = %f.key, status = %f.status, "{}", f.message);
    }
    let execution_failed = results
        .targets
        .iter()
        .filter(|t| {
            t.status == result::status::FAILED_ERROR || t.status == result::status::FAILED_TIMEOUT
        })
        .count() as u32;
    let verdict = gate::verdict(&gate::RunOutcome {
        summary: Some(&summary),
        comparison: Some(&comparison),
        execution_failed,
        history_integrity_failed: false,
        run_accepted: acceptance.passed(),
    });
    let outcome = RunOutcome {
        run_id: req.run_id.clone(),
        suite: SuiteUsed {
            name: req.suite.suite_name.clone(),
            version: req.suite.version,
            source: req.suite_source.clone(),
        },
        profile: req.profile.clone(),
        backend: results.backend.clone(),
        summary: summary.summary.clone(),
        failures,
        baseline_run_id: comparison.baseline_run_id.clone(),
        regressions: comparison.regressions.len(),
        improvements: comparison.improvements.len(),
        anchor_declines: comparison.anchor_declines.len(),
        suppressed_regressions: comparison.suppressed_regressions.len(),
        unknown: comparison.inconclusive.len(),
        held_by_floor: comparison.held_by_floor.len(),
        missing_targets: comparison.missing_targets.len(),
        rechecks: comparison
            .rechecks
            .iter()
            .map(|r| r.recheck_run_id.clone())
            .collect(),
        run_accepted: acceptance.passed(),
        run_accepted_reasons: acceptance.reasons,
        baseline_eligible: eligibility.passed(),
        baseline_eligible_reasons: eligibility.reasons,
        verdict,
        summary_path: row.summary_path,
        evidence_dirs,
        targets: verdicts::targets(&summary, &comparison),
    };
    verdicts::log(&comparison);
    Ok(Ran {
        outcome,
        summary,
        anchor,
        comparison,
    })
}

/// Refuse invalid history and existing run ids or directories; return the anchor's summary.
fn preflight(req: &RunRequest<'_>) -> Result<Option<Summary>, RunError> {
    if !crate::fsx::is_safe_run_id(&req.run_id) {
        return Err(RunError::Harness(HarnessError::BadRunId(
            req.run_id.clone(),
        )));
    }
    if !req.allow_dirty
        && let Some(message) = req.git.dirty_message(&req.repo_root)
    {
        return Err(RunError::DirtyCheckout(message));
    }
    let history = if req.history_root.join(INDEX_FILE).is_file() {
        Some(validate_history_root(&req.history_root).map_err(RunError::InvalidHistory)?)
    } else {
        None
    };
    let exists = |p: &Path| p.exists().then(|| p.display().to_string());
    if let Some(p) = exists(&req.history_root.join(&req.run_id))
        .or_else(|| exists(&req.evidence_root.join(&req.run_id)))
    {
        return Err(RunError::Exists(format!(
            "{p}: run {:?} already exists; refusing to overwrite",
            req.run_id
        )));
    }
    let Some(history) = history else {
        return Ok(None);
    };
    if history.doc.contains_run(&req.run_id) {
        return Err(RunError::Exists(format!(
            "{}: run {:?} is already in the index",
            req.history_root.join(INDEX_FILE).display(),
            req.run_id
        )));
    }
    let Some(anchor) = history.latest_anchor else {
        return Ok(None);
    };
    let doc = IndexDoc::load(&req.history_root)?
        .ok_or_else(|| HistoryError::structural(INDEX_FILE, "disappeared"))?;
    let row = doc.row(&anchor.run_id).ok_or_else(|| {
        HistoryError::structural(INDEX_FILE, format!("anchor {} has no row", anchor.run_id))
    })?;
    Ok(Some(load_run(&req.history_root, row)?.summary))
}

/// How many passes this run measures in: the profile's `anchor_passes` when the run may become
/// the anchor (no anchor yet, or a candidate for protected promotion), else one.
fn anchor_passes(req: &RunRequest<'_>, no_anchor: bool) -> u32 {
    if let Some(n) = req.passes {
        return n.max(1);
    }
    let profile = req.suite.profile(&req.profile);
    match profile {
        Some(p) if no_anchor || req.anchor_candidate => p.anchor_passes,
        _ => 1,
    }
}

/// Run the harness (optionally a subset) in `passes` passes, write results and manifest under
/// `<evidence>/<run_id>/`.
fn execute(
    req: &RunRequest<'_>,
    run_id: &str,
    only: &[String],
    recheck_of: Option<&str>,
    passes: u32,
) -> Result<ResultsFile, RunError> {
    let mut opts = HarnessOptions::new(&req.profile, run_id);
    opts.only = only.to_vec();
    opts.hook = req.hook.clone();
    opts.passes = passes;
    let results = harness::run_suite(req.suite, req.backend.clone(), &opts)?;
    let dir = req.evidence_root.join(run_id);
    harness::write_results(&dir, &results)?;
    let manifest = Manifest {
        schema_version: MANIFEST_SCHEMA_VERSION,
        run_id: Some(run_id.to_string()),
        recheck_of: recheck_of.map(str::to_string),
        created_at: results.timestamp.clone(),
        git: req.git.clone(),
        suite: SuiteRecord {
            name: req.suite.suite_name.clone(),
            version: req.suite.version,
            config_digest: req.suite.config_digest().to_string(),
            profile: req.profile.clone(),
        },
        toolchain: Toolchain::current(),
        environment: results.environment.clone(),
        attestation: req.attestation.clone(),
        files: ManifestFiles {
            results_json: evidence::results_rel(run_id),
            report_md: evidence::report_rel(run_id),
        },
    };
    let path = dir.join(evidence::MANIFEST_FILE);
    crate::json::write(&path, &manifest).map_err(|e| {
        let _ = std::fs::remove_dir_all(&dir);
        EvidenceError::json_write(e)
    })?;
    Ok(results)
}

/// Re-execute each target with a speed or latency regression once, as `<run_id>__recheck__<key>`.
fn run_rechecks(
    req: &RunRequest<'_>,
    first: &RegressionSummary,
) -> Result<Vec<RecheckResult>, RunError> {
    let mut out = Vec::new();
    for target in recheck::targets_to_recheck(first) {
        let Some(t) = req.suite.targets.iter().find(|t| t.target == target) else {
            continue;
        };
        let id = recheck::recheck_run_id(&req.run_id, &t.key);
        crate::gha::group(&format!("Recheck {}", t.key));
        tracing::info!(target = %t.key, recheck = %id, "measuring once more, pooled with the first measurement (a suspected regression or an unknown verdict)");
        let r = execute(req, &id, std::slice::from_ref(&t.key), Some(&req.run_id), 1);
        crate::gha::endgroup();
        let row = match r {
            Ok(results) => result::summarize(&results, req.suite)?
                .into_iter()
                .find(|s| s.target == target),
            Err(e @ RunError::Harness(HarnessError::Cancelled(..))) => return Err(e),
            Err(e) => {
                tracing::warn!(target = %t.key, error = %e, "recheck failed to run; the regression stands");
                None
            }
        };
        out.push(RecheckResult {
            target,
            key: t.key.clone(),
            recheck_output_json: evidence::results_rel(&id),
            row,
        });
    }
    Ok(out)
}

/// The run's `summary.json` from its results file: targets by [`result::summarize`], aggregates by
/// [`crate::aggregate::compute`], identity from the suite and the checkout.
pub fn build_summary(
    suite: &Suite,
    results: &ResultsFile,
    git: &GitInfo,
    evidence_artifact_name: Option<&str>,
) -> Result<Summary, RunError> {
    let targets = result::summarize(results, suite)?;
    let run_id = &results.run_id;
    Ok(Summary {
        suite_name: suite.suite_name.clone(),
        suite_version: suite.version,
        description: suite.description.trim().to_string(),
        run_id: run_id.clone(),
        generated_at: results.timestamp.clone(),
        source_result_json: Some(evidence::results_rel(run_id)),
        source_manifest_json: Some(evidence::manifest_rel(run_id)),
        source_markdown_report: Some(evidence::report_rel(run_id)),
        source_git_commit: git.commit.clone(),
        source_git_dirty: git.dirty,
        source_manifest_git_commit: git.commit.clone(),
        evidence_artifact_name: evidence_artifact_name.map(str::to_string),
        environment: Some(results.environment.clone()),
        profile: Some(results.profile.clone()),
        summary: crate::aggregate::compute(&targets),
        targets,
        extra: Default::default(),
    })
}

/// The backend for a profile: the profile says which backend it is for; `cpu` is always built.
/// A `cuda` profile on a machine without a usable GPU is refused by the harness, never silently
/// measured on the CPU.
pub fn backend_for(suite: &Suite, profile: &str) -> Result<Arc<dyn Backend>, HarnessError> {
    let kind = suite.profile(profile).map(|p| p.backend);
    match kind {
        Some(crate::suite::BackendKind::Cuda) => {
            crate::bench::cuda_backend().map_err(|e| HarnessError::BackendMismatch {
                profile: profile.to_string(),
                expected: "cuda".into(),
                found: format!("cpu (no usable CUDA device: {e})"),
            })
        }
        _ => Ok(Arc::new(crate::bench::CpuBackend)),
    }
}

/// The profile to use when none is given: the suite's default when a CUDA device is usable, else
/// the first profile for the CPU backend (`cpu` in the canonical suite).
pub fn default_profile(suite: &Suite) -> String {
    if crate::bench::cuda_backend().is_ok() {
        return suite.default_profile.clone();
    }
    if suite.profile("cpu").is_some() {
        return "cpu".into();
    }
    suite
        .profiles
        .iter()
        .find(|(_, p)| p.backend == crate::suite::BackendKind::Cpu)
        .map(|(n, _)| n.clone())
        .unwrap_or_else(|| suite.default_profile.clone())
}
