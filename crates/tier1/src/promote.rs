//! Protected promotion (`tier1-promote`, contract §6): ratify the candidate's newest run as the
//! canonical anchor after every check of §6.2 in order, then write live history plus the ratified
//! row (chained) to a staged output root, compacted like a publication (`compaction`). A bootstrap
//! promotion starts a new chain.

mod evidence;
pub mod inputs;
pub mod reviews;
mod shards;

use crate::digest::Digest;
use crate::exit::{Classify, Exit};
use crate::gate;
use crate::history::INDEX_FILE;
use crate::history::error::HistoryError;
use crate::history::model::{Acceptance, ChainReset, IndexRow, RegressionSummary, Summary};
use crate::history::package::{self, IndexDoc, RunFiles};
use crate::history_check::{ValidatedHistory, is_evidence_artifact_name, validate_history_root};
use crate::publish::{check_paths_bound, check_suite_identity, check_summary_identity};
use crate::regress::noise::{NoiseHistory, anchor_outliers};
use crate::suite::{Suite, SuiteError};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Why a promotion was refused.
#[derive(Debug, thiserror::Error)]
pub enum PromoteError {
    /// A rule of §6.2 failed.
    #[error("{0}")]
    Invalid(String),
    /// The output root holds data, or the run is already in live history.
    #[error("{0}")]
    Conflict(String),
    /// The suite config cannot be used.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// A history root fails validation.
    #[error("{which} history: {source}")]
    History {
        /// `candidate` or `canonical`.
        which: &'static str,
        /// The failure.
        source: HistoryError,
    },
    /// The run's measurements are not good enough for an anchor (imprecise, throttled, or an
    /// outlier against the accepted runs).
    #[error("refusing to promote {run_id}: it is not a good anchor: {}", reasons.join("; "))]
    AnchorQuality {
        /// The run.
        run_id: String,
        /// One line per target, with the figures.
        reasons: Vec<String>,
    },
    /// The comparison cannot be recomputed.
    #[error(transparent)]
    Compare(#[from] crate::regress::RegressError),
    /// The downloaded evidence is not what was uploaded.
    #[error("{0}")]
    Integrity(String),
    /// The evidence archive is unsafe or unreadable.
    #[error(transparent)]
    Archive(#[from] crate::archive::ArchiveError),
    /// The output root is unusable (a symbolic link, occupied, or inside an input tree).
    #[error(transparent)]
    OutputRoot(#[from] crate::fsx::OutputRootError),
    /// The approvals could not be read from GitHub.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// Writing the output failed.
    #[error("{path}: {source}")]
    Io {
        /// The output root.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The output package could not be compacted, or restore would refuse it.
    #[error(transparent)]
    Package(#[from] crate::compaction::package::PackageError),
}

impl Classify for PromoteError {
    fn exit(&self) -> Exit {
        match self {
            PromoteError::Invalid(_)
            | PromoteError::Compare(_)
            | PromoteError::AnchorQuality { .. } => Exit::Invalid,
            PromoteError::Conflict(_) => Exit::Conflict,
            PromoteError::Suite(e) => e.exit(),
            PromoteError::History { source, .. } => source.exit(),
            PromoteError::Io { source, .. } => crate::exit::of_io(source),
            PromoteError::Integrity(_) => Exit::Integrity,
            PromoteError::Archive(e) => e.exit(),
            PromoteError::Store(e) => e.exit(),
            PromoteError::OutputRoot(e) => e.exit(),
            PromoteError::Package(e) => e.exit(),
        }
    }
}

/// The promotion request (contract §6.1 plus tier1's `reviewers` and local workflow-run form).
#[derive(Debug, Clone)]
pub struct PromoteRequest {
    /// The immutable candidate history tree.
    pub history_root: PathBuf,
    /// The downloaded evidence artifact root.
    pub evidence_root: PathBuf,
    /// The run to ratify (the candidate's newest row).
    pub run_id: String,
    /// Who requested the promotion: who started this attempt (`$GITHUB_TRIGGERING_ACTOR`).
    pub requester: String,
    /// Public acceptance note.
    pub note: String,
    /// The Actions run URL of this promotion.
    pub workflow_run: String,
    /// The commit the evidence must come from.
    pub expected_git_commit: String,
    /// `tier1-evidence-<suffix>`.
    pub expected_evidence_artifact: String,
    /// `sha256:<hex>` or bare hex of the evidence artifact.
    pub expected_evidence_digest: String,
    /// Live canonical history (absent only with bootstrap).
    pub canonical_history_root: Option<PathBuf>,
    /// Where the ratified tree goes (must not exist or be empty).
    pub output_history_root: PathBuf,
    /// The suite file (`--suite-config`); None: the suite the candidate history records, chosen
    /// by [`Suite::discover`] under `repo_root`.
    pub suite_config: Option<PathBuf>,
    /// The checkout whose `configs/benchmark_suites/` discovery looks in.
    pub repo_root: PathBuf,
    /// Allow the audited bootstrap reset.
    pub allow_bootstrap: bool,
    /// Reviewers who approved the protected environment (extension).
    pub reviewers: Vec<String>,
    /// Accept `local://<store>/actions/runs/<n>` as the workflow run (local main job).
    pub allow_local_workflow_run: bool,
    /// The runner class ratified (docs/sharding.md): the run and the live history must be of
    /// it; None: the unnamed class.
    pub runner_class: Option<String>,
    /// The shard packages of a combined run (docs/sharding.md §5), found by artifact name.
    pub shard_archives: Vec<PathBuf>,
}

/// The JSON `tier1-promote` prints (contract §6.4 plus `bootstrap_reset`).
#[derive(Debug, Clone, Serialize)]
pub struct PromoteOutcome {
    /// Always true on success.
    pub(crate) success: bool,
    /// The ratified run.
    pub(crate) run_id: String,
    /// Always `accept_history_anchor`.
    pub(crate) baseline_acceptance: Acceptance,
    /// Confirmed regressions accepted through this path.
    pub(crate) accepted_regression_count: usize,
    /// The live anchor the candidate was compared with (None after a bootstrap reset).
    pub(crate) prior_anchor_run_id: Option<String>,
    /// True when live history was reset and a new chain started.
    pub(crate) bootstrap_reset: bool,
    /// Always `"."`.
    pub(crate) history_root: String,
}

fn invalid<T>(m: impl Into<String>) -> Result<T, PromoteError> {
    Err(PromoteError::Invalid(m.into()))
}

/// Contract §6.2 item 3: an exact HTTPS Actions run URL; with `allow_local`, also
/// `local://<store-name>/actions/runs/<n>`.
pub(crate) fn check_workflow_run(s: &str, allow_local: bool) -> Result<(), String> {
    let err = |why: &str| {
        Err(format!(
            "--workflow-run {s:?} must be an exact https://<host>/<owner>/<repo>/actions/runs/<id> URL{}: {why}",
            if allow_local {
                " or local://<store>/actions/runs/<id>"
            } else {
                ""
            }
        ))
    };
    let Ok(u) = url::Url::parse(s) else {
        return err("not a URL");
    };
    let min_parts = match u.scheme() {
        "https" => 5,
        "local" if allow_local => 3,
        other => return err(&format!("scheme {other:?} is not allowed")),
    };
    if u.host_str().is_none_or(str::is_empty) {
        return err("no host");
    }
    // The URL parser drops tabs and line breaks, turns `\\` into `/`, lowercases the host and
    // resolves dot segments: the value stored must be the one checked.
    if u.as_str() != s {
        return err(&format!(
            "it is not in canonical form (expected {:?})",
            u.as_str()
        ));
    }
    if !u.username().is_empty() || u.password().is_some() {
        return err("credentials are not allowed");
    }
    if u.query().is_some() || u.fragment().is_some() {
        return err("query or fragment is not allowed");
    }
    let parts: Vec<&str> = u.path_segments().map(|p| p.collect()).unwrap_or_default();
    let n = parts.len();
    let tail_ok = n >= 3
        && parts[n - 3] == "actions"
        && parts[n - 2] == "runs"
        && !parts[n - 1].is_empty()
        && parts[n - 1].bytes().all(|b| b.is_ascii_digit());
    if n < min_parts || !tail_ok || parts.iter().any(|p| p.is_empty()) {
        return err("the path must end in actions/runs/<decimal id>");
    }
    Ok(())
}

/// Longest acceptance note, in bytes (it is copied into the index row and the chain reset).
pub(crate) const MAX_NOTE_BYTES: usize = 4096;
/// Longest requester or reviewer name, in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 256;
/// Most reviewers recorded on one acceptance.
pub(crate) const MAX_REVIEWERS: usize = 100;

/// The rules every free text a promotion records follows (the note, the requester, each
/// reviewer), checked by `tier1-promote` and, before anything runs, by `tier1-nightly`: printable
/// (no control, line-break or bidirectional characters) and at most [`MAX_NOTE_BYTES`] for
/// `--note`, [`MAX_NAME_BYTES`] for a name.
pub(crate) fn check_free_text(field: &str, v: &str) -> Result<(), String> {
    let v = v.trim();
    crate::text::check_printable(field, v)?;
    let max = if field == "--note" {
        MAX_NOTE_BYTES
    } else {
        MAX_NAME_BYTES
    };
    if v.len() > max {
        return Err(format!(
            "{field}: expected at most {max} bytes, found {}",
            v.len()
        ));
    }
    Ok(())
}

struct Checked {
    commit: String,
    digest: Digest,
}

fn check_request(r: &PromoteRequest) -> Result<Checked, PromoteError> {
    if !crate::fsx::is_safe_run_id(&r.run_id) {
        return invalid(format!(
            "--run-id {:?} must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$",
            r.run_id
        ));
    }
    for (name, v) in [
        ("--requester", &r.requester),
        ("--note", &r.note),
        ("--workflow-run", &r.workflow_run),
    ] {
        if v.trim().is_empty() {
            return invalid(format!("{name} must be a non-blank string"));
        }
    }
    // The workflow-run URL is held to its canonical form instead (which has no control characters).
    for (name, v) in [("--requester", &r.requester), ("--note", &r.note)]
        .into_iter()
        .chain(r.reviewers.iter().map(|v| ("--reviewer", v)))
    {
        check_free_text(name, v).map_err(PromoteError::Invalid)?;
    }
    if r.reviewers.len() > MAX_REVIEWERS {
        return invalid(format!(
            "--reviewer: expected at most {MAX_REVIEWERS} reviewers, found {}",
            r.reviewers.len()
        ));
    }
    check_workflow_run(r.workflow_run.trim(), r.allow_local_workflow_run)
        .map_err(PromoteError::Invalid)?;
    let commit = r.expected_git_commit.trim().to_ascii_lowercase();
    if !gate::is_commit_hex(&commit) {
        return invalid(format!(
            "--expected-git-commit must be 40 hex characters, found {:?}",
            r.expected_git_commit
        ));
    }
    if !is_evidence_artifact_name(&r.expected_evidence_artifact) {
        return invalid(format!(
            "--expected-evidence-artifact must match {}, found {:?}",
            crate::artifacts::EVIDENCE_NAME_PATTERN,
            r.expected_evidence_artifact
        ));
    }
    let digest = Digest::parse_lenient(&r.expected_evidence_digest)
        .map_err(|e| PromoteError::Invalid(format!("--expected-evidence-digest: {e}")))?;
    for rev in &r.reviewers {
        if rev.trim().is_empty() {
            return invalid("--reviewer must be a non-blank name");
        }
    }
    Ok(Checked { commit, digest })
}

/// Promote the candidate's newest run to the canonical anchor.
pub fn promote(r: &PromoteRequest) -> Result<PromoteOutcome, PromoteError> {
    let checked = check_request(r)?;
    let suite = Suite::discover(
        r.suite_config.as_deref(),
        &r.repo_root,
        Some(&r.history_root),
    )?
    .suite;
    let mut inputs = vec![
        ("candidate history root", r.history_root.as_path()),
        ("evidence root", r.evidence_root.as_path()),
    ];
    if let Some(live) = &r.canonical_history_root {
        inputs.push(("canonical history root", live.as_path()));
    }
    crate::fsx::check_output_root(&r.output_history_root, &inputs)?;
    crate::fsx::stale::tidy_beside(&[&r.output_history_root]);
    // 8. The candidate index and its newest row.
    let cand = validate_history_root(&r.history_root).map_err(|source| PromoteError::History {
        which: "candidate",
        source,
    })?;
    let Some(row) = cand.index.runs.last() else {
        return invalid("candidate history has no runs");
    };
    if row.run_id != r.run_id {
        return invalid(format!(
            "may ratify only the newest immutable candidate: newest run is {:?}, --run-id is {:?}",
            row.run_id, r.run_id
        ));
    }
    if row.is_eligible() {
        return invalid(format!("run {:?} is already baseline_eligible", r.run_id));
    }
    check_suite_identity(
        "candidate index",
        &cand.index.suite_name,
        cand.index.suite_version,
        &suite,
    )
    .map_err(PromoteError::Invalid)?;
    // 9. The run's files and its target list.
    check_paths_bound(row).map_err(PromoteError::Invalid)?;
    let files =
        package::load_run(&r.history_root, row).map_err(|source| PromoteError::History {
            which: "candidate",
            source,
        })?;
    check_summary_identity(&files.summary, &suite).map_err(PromoteError::Invalid)?;
    check_runner_class("candidate index", cand.index.runner_class.as_deref(), r)?;
    check_runner_class(
        &format!("{}/summary.json environment", r.run_id),
        files
            .summary
            .environment
            .as_ref()
            .and_then(|e| e.runner_class.as_deref()),
        r,
    )?;
    let found: Vec<(&str, &str)> = files
        .summary
        .targets
        .iter()
        .map(|t| (t.key.as_str(), t.target.as_str()))
        .collect();
    let want: Vec<(&str, &str)> = suite
        .targets
        .iter()
        .map(|t| (t.key.as_str(), t.target.as_str()))
        .collect();
    if found != want {
        return invalid(format!(
            "summary targets must equal the suite's (key, target) list in order: expected {want:?}, found {found:?}"
        ));
    }
    // 10. Complete metrics, accepted provenance, the expected commit.
    let mut c = gate::baseline_metrics(&files.summary);
    c.reasons.extend(gate::provenance(&files.summary).reasons);
    if !c.passed() {
        return invalid(format!(
            "run {:?} is not an eligible anchor: {}",
            r.run_id,
            c.reasons.join("; ")
        ));
    }
    if files.summary.source_git_commit.as_deref() != Some(checked.commit.as_str()) {
        return invalid(format!(
            "source_git_commit: expected {:?} (--expected-git-commit), found {:?}",
            checked.commit, files.summary.source_git_commit
        ));
    }
    // 10b (tier1). Anchor quality: every target measured precisely, without throttling.
    let precision = gate::anchor_precision(&files.summary);
    if !precision.passed() {
        return Err(PromoteError::AnchorQuality {
            run_id: r.run_id.clone(),
            reasons: precision.reasons,
        });
    }
    // 11. Comparison shape and content.
    check_comparison(r, &files)?;
    // 12. Live history.
    let live = load_live(r, &suite)?;
    if let Some(l) = &live {
        check_runner_class("live index", l.index.runner_class.as_deref(), r)?;
    }
    // 12b (tier1). Anchor quality: no target's speedup an outlier against the live accepted runs,
    // unless a recheck confirmed its regression (a real, re-measured level change).
    if let (Some(_), Some(root)) = (&live, &r.canonical_history_root) {
        let accepted = NoiseHistory::for_run(root, &suite, &files.summary).map_err(|source| {
            PromoteError::History {
                which: "canonical",
                source,
            }
        })?;
        let confirmed: Vec<String> = files
            .regression
            .rechecks
            .iter()
            .filter(|c| c.confirmed_regression)
            .map(|c| c.target.clone())
            .collect();
        let outliers = anchor_outliers(&files.summary, &accepted, &suite.thresholds, &confirmed);
        if !outliers.is_empty() {
            return Err(PromoteError::AnchorQuality {
                run_id: r.run_id.clone(),
                reasons: outliers,
            });
        }
    }
    // 13. Prior anchor and the recomputed comparison.
    let prior = prior_anchor(live.as_ref(), r.canonical_history_root.as_deref(), &suite)?;
    let bootstrap_reset = prior.is_none();
    if bootstrap_reset && !r.allow_bootstrap {
        return invalid(
            "live history has no compatible eligible anchor; promotion without --allow-bootstrap requires one",
        );
    }
    let prior_id = prior.as_ref().map(|(id, _)| id.clone());
    if files.regression.baseline_run_id != prior_id {
        return invalid(format!(
            "regression baseline_run_id: expected {prior_id:?} (the latest compatible live anchor), found {:?} (stale or foreign anchor)",
            files.regression.baseline_run_id
        ));
    }
    // The noise history the run was compared with: the candidate tree's accepted runs before it.
    let noise =
        NoiseHistory::for_run(&r.history_root, &suite, &files.summary).map_err(|source| {
            PromoteError::History {
                which: "candidate",
                source,
            }
        })?;
    let book = suite.threshold_book();
    let first = crate::regress::compare_in(
        &files.summary,
        prior.as_ref().map(|(_, s)| s),
        &book,
        &noise,
    )?;
    // The rechecks as the run recorded them: their rows are pooled with the first measurement
    // again, so the final comparison is recomputed, not trusted.
    let recorded: Vec<crate::recheck::RecheckResult> = files
        .regression
        .rechecks
        .iter()
        .map(|r| crate::recheck::RecheckResult {
            target: r.target.clone(),
            key: files
                .summary
                .targets
                .iter()
                .find(|t| t.target == r.target)
                .map_or_else(|| r.target.clone(), |t| t.key.clone()),
            recheck_output_json: r.recheck_output_json.clone(),
            row: r.recheck_summary.clone(),
        })
        .collect();
    let recomputed = match &prior {
        Some((_, anchor)) => {
            let rechecked =
                crate::recheck::apply(first, &files.summary, anchor, &recorded, &book, &noise);
            // The side-by-side records as the run recorded them: each verdict must be the one
            // its own intervals give, and the comparison is recomputed from them.
            match &files.regression.side_by_side {
                Some(block) => {
                    block.check().map_err(|e| {
                        PromoteError::Invalid(format!("regression_summary.json: {e}"))
                    })?;
                    crate::confirmation::apply(rechecked, &files.summary, anchor, block.clone())
                }
                None => rechecked,
            }
        }
        None => first,
    };
    check_same_comparison(&files.regression, &recomputed)?;
    // 14. Evidence package (a combined run's: with its shards' packages, docs/sharding.md §5).
    let assembled = match &files.summary.shards {
        Some(record) => Some(shards::assemble(
            &r.evidence_root,
            &r.shard_archives,
            &r.run_id,
            record,
            &suite,
        )?),
        None if !r.shard_archives.is_empty() => {
            return invalid(format!(
                "--shard-archives given, but run {:?} was measured by one runner (its summary records no shards)",
                r.run_id
            ));
        }
        None => None,
    };
    evidence::check(
        assembled
            .as_ref()
            .map_or(r.evidence_root.as_path(), |t| t.path()),
        &r.history_root,
        &r.run_id,
        &checked.commit,
        &files,
        &suite,
    )
    .map_err(PromoteError::Invalid)?;

    let entry = ratified_row(r, row, &checked);
    drop(cand);
    // The live index is taken over, not cloned (a long history's index is large).
    let (mut doc, base) = match (live, bootstrap_reset) {
        (Some(l), false) => (l.doc, r.canonical_history_root.as_deref()),
        _ => {
            let mut doc = IndexDoc::new_chained(&suite.suite_name, suite.version);
            doc.set_runner_class(r.runner_class.as_deref())
                .map_err(|source| PromoteError::History {
                    which: "canonical",
                    source,
                })?;
            (doc, None)
        }
    };
    let hist = |source| PromoteError::History {
        which: "canonical",
        source,
    };
    if bootstrap_reset {
        let reset = ChainReset {
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            reason: r.note.trim().to_string(),
            actor: r.requester.trim().to_string(),
            first_run_id: r.run_id.clone(),
        };
        doc.set_field(
            "chain_reset",
            serde_json::to_value(&reset).unwrap_or_default(),
        )
        .map_err(hist)?;
    }
    doc.adopt_chain().map_err(hist)?;
    doc.push_row(&entry).map_err(hist)?;
    let trend_paths = |_: &crate::history::model::Index| vec![entry.trend_snapshot_path.clone()];
    crate::compaction::write_package(crate::compaction::PackagePlan {
        dest: &r.output_history_root,
        base,
        runs: vec![(&r.history_root, &r.run_id)],
        doc,
        trend_paths: &trend_paths,
        policy: crate::compaction::Policy::for_window(suite.thresholds.history_window as usize),
    })?;
    tracing::info!(run_id = %r.run_id, bootstrap_reset, "ratified history anchor");
    Ok(PromoteOutcome {
        success: true,
        run_id: r.run_id.clone(),
        baseline_acceptance: Acceptance::AcceptHistoryAnchor,
        accepted_regression_count: files.regression.regressions.len(),
        prior_anchor_run_id: prior_id,
        bootstrap_reset,
        history_root: ".".into(),
    })
}

/// A history's or run's runner class against the class ratified (docs/sharding.md): a run of one
/// class never becomes another's anchor.
fn check_runner_class(
    what: &str,
    found: Option<&str>,
    r: &PromoteRequest,
) -> Result<(), PromoteError> {
    let want = r.runner_class.as_deref();
    if found == want {
        return Ok(());
    }
    invalid(format!(
        "{what}: runner_class expected {want:?} (--runner-class), found {found:?}: a run of one runner class never becomes another class's anchor"
    ))
}

fn check_comparison(r: &PromoteRequest, f: &RunFiles) -> Result<(), PromoteError> {
    let reg = &f.regression;
    if reg.current_run_id.as_deref() != Some(r.run_id.as_str()) {
        return invalid(format!(
            "regression current_run_id: expected {:?}, found {:?}",
            r.run_id, reg.current_run_id
        ));
    }
    if !reg.suppressed_regressions.is_empty() {
        return invalid(format!(
            "a regression cleared only by a recheck remains rejected even through this path: {} suppressed regression(s)",
            reg.suppressed_regressions.len()
        ));
    }
    // What restore's re-derivation refuses of an anchor (`gate::eligible_anchor_rules`), refused
    // here before anything is written: a ratified run that every later restore refused would
    // stop every later night. The records are read only once their verdicts are the ones their
    // own intervals give (a tampered record is named as such).
    if let Some(block) = &reg.side_by_side {
        block
            .check()
            .map_err(|e| PromoteError::Invalid(format!("regression_summary.json: {e}")))?;
    }
    let cleared: Vec<String> = reg
        .side_by_side
        .iter()
        .flat_map(|b| b.cleared().chain(b.unconfirmed()))
        .map(|c| {
            format!(
                "{} ({}, side by side {})",
                c.key,
                c.suspected_as,
                c.verdict.as_str()
            )
        })
        .collect();
    if !cleared.is_empty() {
        return invalid(format!(
            "run {:?} had suspected targets that only side by side decided ({}): such a run is never an anchor, even through this path; accept another run (`TIER1_SIDE_BY_SIDE=off` for it leaves an unknown target unknown, which does not bar an accepted anchor)",
            r.run_id,
            cleared.join(", ")
        ));
    }
    if !reg.warnings.is_empty() {
        return invalid(format!(
            "the comparison has history warnings: {:?}",
            reg.warnings
        ));
    }
    if f.summary.evidence_artifact_name.as_deref() != Some(r.expected_evidence_artifact.as_str()) {
        return invalid(format!(
            "summary evidence_artifact_name: expected {:?}, found {:?}",
            r.expected_evidence_artifact, f.summary.evidence_artifact_name
        ));
    }
    Ok(())
}

/// Live history: None when it is absent or reset by a bootstrap over a suite-version change.
fn load_live(r: &PromoteRequest, suite: &Suite) -> Result<Option<ValidatedHistory>, PromoteError> {
    let Some(root) = r
        .canonical_history_root
        .as_deref()
        .filter(|p| p.join(INDEX_FILE).is_file())
    else {
        if r.allow_bootstrap {
            return Ok(None);
        }
        return invalid(
            "no live canonical index.json: promotion without --allow-bootstrap needs live history",
        );
    };
    let live = validate_history_root(root).map_err(|source| PromoteError::History {
        which: "canonical",
        source,
    })?;
    if live.index.suite_name != suite.suite_name {
        return invalid(format!(
            "live history suite_name: expected {:?}, found {:?} (never reset, even with bootstrap)",
            suite.suite_name, live.index.suite_name
        ));
    }
    if live.index.suite_version != suite.version {
        if r.allow_bootstrap {
            return Ok(None);
        }
        return invalid(format!(
            "live history suite_version: expected {}, found {} (only a bootstrap may reset it)",
            suite.version, live.index.suite_version
        ));
    }
    if live.doc.contains_run(&r.run_id) {
        return Err(PromoteError::Conflict(format!(
            "run {:?} is already in live history",
            r.run_id
        )));
    }
    Ok(Some(live))
}

/// The last eligible live row whose summary has the config's suite identity, with that summary.
fn prior_anchor(
    live: Option<&ValidatedHistory>,
    root: Option<&Path>,
    suite: &Suite,
) -> Result<Option<(String, Summary)>, PromoteError> {
    let (Some(live), Some(root)) = (live, root) else {
        return Ok(None);
    };
    for row in live.index.runs.iter().rev().filter(|r| r.is_eligible()) {
        let s: Summary = package::read_json(root, &row.summary_path).map_err(|source| {
            PromoteError::History {
                which: "canonical",
                source,
            }
        })?;
        if s.suite_name == suite.suite_name && s.suite_version == suite.version {
            return Ok(Some((row.run_id.clone(), s)));
        }
    }
    Ok(None)
}

fn check_same_comparison(
    stored: &RegressionSummary,
    re: &RegressionSummary,
) -> Result<(), PromoteError> {
    let fields: [(&str, bool); 14] = [
        (
            "baseline_run_id",
            stored.baseline_run_id == re.baseline_run_id,
        ),
        ("current_run_id", stored.current_run_id == re.current_run_id),
        ("regressions", stored.regressions == re.regressions),
        ("improvements", stored.improvements == re.improvements),
        (
            "anchor_declines",
            stored.anchor_declines == re.anchor_declines,
        ),
        ("new_targets", stored.new_targets == re.new_targets),
        (
            "missing_targets",
            stored.missing_targets == re.missing_targets,
        ),
        ("within_noise", stored.within_noise == re.within_noise),
        ("inconclusive", stored.inconclusive == re.inconclusive),
        ("held_by_floor", stored.held_by_floor == re.held_by_floor),
        ("rechecks", stored.rechecks == re.rechecks),
        ("detection", stored.detection == re.detection),
        (
            "suppressed_regressions",
            stored.suppressed_regressions == re.suppressed_regressions,
        ),
        ("side_by_side", stored.side_by_side == re.side_by_side),
    ];
    for (name, same) in fields {
        if !same {
            return invalid(format!(
                "stored comparison field `{name}` differs from the recomputed comparison (tampered comparison)"
            ));
        }
    }
    Ok(())
}

fn ratified_row(r: &PromoteRequest, row: &IndexRow, c: &Checked) -> IndexRow {
    let mut e = row.clone();
    e.chain_sha256 = None;
    e.run_accepted = Some(true);
    e.baseline_eligible = Some(true);
    e.baseline_acceptance = Some(Acceptance::AcceptHistoryAnchor);
    e.baseline_acceptance_actor = Some(r.requester.trim().to_string());
    e.baseline_acceptance_actor_role = Some("requester".into());
    e.baseline_acceptance_note = Some(r.note.trim().to_string());
    e.baseline_acceptance_workflow_run = Some(r.workflow_run.trim().to_string());
    e.baseline_acceptance_reviewers = r.reviewers.iter().map(|s| s.trim().to_string()).collect();
    e.baseline_evidence_digest = Some(c.digest.as_str().to_string());
    e
}
