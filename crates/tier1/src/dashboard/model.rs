//! The dashboard model: a validated history root read into runs sorted by time (each with its
//! summary and regression summary), the latest evidence run, the latest accepted run, the anchor,
//! and the evidence-reference rule (local path when the file is under `--evidence-root`, else
//! `artifact://<evidence_artifact_name>/<path>`).

use super::ReportError;
use crate::fsx::{is_safe_component, join_safe, safe_relative_parts};
use crate::history::model::{
    ChainReset, Index, IndexRow, RegressionSummary, Summary, TargetSummary,
};
use crate::history::package::load_run;
use crate::history_check::validate_history_root;
use crate::suite::Suite;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One run of the history with its files.
#[derive(Debug, Clone)]
pub(crate) struct RunView {
    /// The `index.json` row.
    pub(crate) row: IndexRow,
    /// Parsed `generated_at` (None when unparsable: sorts first).
    pub(crate) time: Option<DateTime<Utc>>,
    /// `<run_id>/summary.json`.
    pub(crate) summary: Summary,
    /// `<run_id>/regression_summary.json`.
    pub(crate) regression: RegressionSummary,
}

/// How a run counts in the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunClass {
    /// `baseline_eligible`: a comparison anchor.
    Anchor,
    /// `run_accepted` but not an anchor.
    Accepted,
    /// Neither: rejected evidence (shown, never counted in trends).
    Rejected,
}

impl RunClass {
    /// The class of a run with these flags.
    pub(crate) fn of(eligible: bool, accepted: bool) -> RunClass {
        if eligible {
            RunClass::Anchor
        } else if accepted {
            RunClass::Accepted
        } else {
            RunClass::Rejected
        }
    }
    /// Lower-case label.
    pub(crate) fn label(self) -> &'static str {
        match self {
            RunClass::Anchor => "anchor",
            RunClass::Accepted => "accepted",
            RunClass::Rejected => "rejected",
        }
    }
}

impl RunView {
    /// Accepted or eligible (the trend `history` rule).
    pub(crate) fn counts_as_accepted(&self) -> bool {
        self.row.is_accepted() || self.row.is_eligible()
    }
    /// Anchor, accepted or rejected.
    pub(crate) fn class(&self) -> RunClass {
        RunClass::of(self.row.is_eligible(), self.row.is_accepted())
    }
    /// The suite representative (geomean) speedup.
    pub(crate) fn representative(&self) -> Option<f64> {
        crate::aggregate::finite(self.row.representative_speedup.or(self.row.geomean_speedup))
    }
    /// The summary's target row with this target string.
    pub(crate) fn target(&self, target: &str) -> Option<&TargetSummary> {
        self.summary.targets.iter().find(|t| t.target == target)
    }
    /// The name of the evidence artifact that holds this run's files.
    pub(crate) fn evidence_artifact(&self) -> String {
        match &self.summary.evidence_artifact_name {
            Some(n) if is_safe_component(n) => n.clone(),
            _ => format!("tier1-evidence-{}", self.row.run_id),
        }
    }
}

/// Where an evidence file can be found, as shown to a reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EvidenceRef {
    /// Present under `--evidence-root` at this relative path.
    Local(String),
    /// `artifact://<evidence_artifact_name>/<path>`.
    Artifact(String),
    /// The stored reference is not a portable relative path; it is not shown.
    Withheld,
}

/// Everything the renderers need.
#[derive(Debug, Clone)]
pub(crate) struct Dashboard {
    /// Suite identity from the index (None for an empty history).
    pub(crate) suite_name: Option<String>,
    /// Suite version from the index.
    pub(crate) suite_version: Option<u32>,
    /// Runs, oldest first (parsed time, then run id).
    pub(crate) runs: Vec<RunView>,
    /// Index in `runs` of the latest eligible anchor (publication order).
    pub(crate) anchor: Option<usize>,
    /// Bootstrap reset record of the hash chain, if any.
    pub(crate) chain_reset: Option<ChainReset>,
    /// The clock the report is judged against.
    pub(crate) now: DateTime<Utc>,
    /// The canonical suite (thresholds, tolerances).
    pub(crate) suite: Suite,
    /// The sealed runs of a compacted history (chart points only), in chain order.
    pub(crate) sealed: Vec<super::sealed::SealedPoint>,
    /// Warn when the latest run is more than this many days old.
    pub(crate) stale_after_days: i64,
    /// The runner class whose history this is (docs/sharding.md): named on the page and on every
    /// figure; None: the unnamed class.
    pub(crate) runner_class: Option<String>,
    evidence_root: Option<PathBuf>,
    by_id: HashMap<String, usize>,
}

/// Default of `--stale-after-days` (`freshness`).
pub const DEFAULT_STALE_AFTER_DAYS: i64 = 3;

/// Parse an RFC 3339 time to UTC.
pub(crate) fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

impl Dashboard {
    /// `class <name> · ` for a runner class's history (every figure names its class), else empty.
    pub(crate) fn class_label(&self) -> String {
        self.runner_class
            .as_deref()
            .map(|c| format!("class {c} · "))
            .unwrap_or_default()
    }

    /// A dashboard over the given runs (any order), with the anchor taken as the last eligible run
    /// in `publication` order. Used by `load` and by tests.
    pub(crate) fn from_runs(
        index: Option<&Index>,
        runs: Vec<RunView>,
        evidence_root: Option<&Path>,
        now: DateTime<Utc>,
    ) -> Dashboard {
        let anchor_id = runs
            .iter()
            .rev()
            .find(|r| r.row.is_eligible())
            .map(|r| r.row.run_id.clone());
        let mut runs = runs;
        runs.sort_by(|a, b| {
            a.time
                .cmp(&b.time)
                .then_with(|| a.row.run_id.cmp(&b.row.run_id))
        });
        let by_id: HashMap<String, usize> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.row.run_id.clone(), i))
            .collect();
        let anchor = anchor_id.and_then(|id| by_id.get(&id).copied());
        Dashboard {
            suite_name: index.map(|i| i.suite_name.clone()),
            suite_version: index.map(|i| i.suite_version),
            runs,
            anchor,
            chain_reset: index.and_then(|i| i.chain_reset.clone()),
            now,
            suite: Suite::embedded(),
            sealed: Vec::new(),
            stale_after_days: DEFAULT_STALE_AFTER_DAYS,
            runner_class: index.and_then(|i| i.runner_class.clone()),
            evidence_root: evidence_root.map(Path::to_path_buf),
            by_id,
        }
    }

    /// Read a history root. An absent or empty root is an empty history; anything else must
    /// pass `validate_history_root` (the rules publish, promote and restore apply).
    pub(crate) fn load(
        root: &Path,
        evidence_root: Option<&Path>,
        now: DateTime<Utc>,
    ) -> Result<Dashboard, ReportError> {
        let empty = crate::fsx::is_absent_or_empty(root).map_err(|source| ReportError::Io {
            path: root.display().to_string(),
            source,
        })?;
        if empty {
            return Ok(Dashboard::from_runs(None, vec![], evidence_root, now));
        }
        let index = validate_history_root(root)?.index;
        let mut runs = Vec::with_capacity(index.runs.len());
        for row in &index.runs {
            let files = load_run(root, row)?;
            runs.push(RunView {
                time: parse_time(&row.generated_at),
                row: row.clone(),
                summary: files.summary,
                regression: files.regression,
            });
        }
        let sealed = super::sealed::load(root, &index)?;
        let mut dash = Dashboard::from_runs(Some(&index), runs, evidence_root, now);
        dash.sealed = sealed;
        Ok(dash)
    }

    /// Runs of the whole history (live and sealed).
    pub(crate) fn total_runs(&self) -> usize {
        self.runs.len() + self.sealed_runs()
    }
    /// Runs sealed in segments.
    pub(crate) fn sealed_runs(&self) -> usize {
        self.sealed.iter().map(|p| p.runs).sum()
    }
    /// Accepted or eligible runs of the whole history.
    pub(crate) fn accepted_runs(&self) -> usize {
        self.runs.iter().filter(|r| r.counts_as_accepted()).count()
            + self.sealed.iter().map(|p| p.accepted_runs).sum::<usize>()
    }

    /// The run with this id.
    pub(crate) fn run(&self, run_id: &str) -> Option<&RunView> {
        self.by_id.get(run_id).map(|&i| &self.runs[i])
    }
    /// Newest run of any kind.
    pub(crate) fn latest_evidence(&self) -> Option<&RunView> {
        self.runs.last()
    }
    /// Newest accepted or eligible run.
    pub(crate) fn latest_accepted(&self) -> Option<&RunView> {
        self.runs.iter().rev().find(|r| r.counts_as_accepted())
    }
    /// The latest eligible anchor.
    pub(crate) fn anchor_run(&self) -> Option<&RunView> {
        self.anchor.map(|i| &self.runs[i])
    }
    /// The anchor, when it is neither the latest evidence run nor the latest accepted run.
    pub(crate) fn distinct_anchor(&self) -> Option<&RunView> {
        let anchor = self.anchor_run()?;
        let same = |r: Option<&RunView>| r.is_some_and(|r| r.row.run_id == anchor.row.run_id);
        (!same(self.latest_evidence()) && !same(self.latest_accepted())).then_some(anchor)
    }
    /// The anchor a run was compared with (its `baseline_run_id`).
    pub(crate) fn compared_anchor(&self, run: &RunView) -> Option<&RunView> {
        run.regression
            .baseline_run_id
            .as_deref()
            .and_then(|id| self.run(id))
    }
    /// True when the only runs are anchors that were compared with nothing (a bootstrap).
    pub(crate) fn is_bootstrap_only(&self) -> bool {
        !self.runs.is_empty()
            && self
                .runs
                .iter()
                .all(|r| r.row.is_eligible() && r.regression.baseline_run_id.is_none())
    }
    /// "Best speedup seen": the max of `max_speedup` over accepted or eligible runs only (sealed
    /// runs included).
    pub(crate) fn best_speedup_seen(&self) -> Option<f64> {
        let live = self
            .runs
            .iter()
            .filter(|r| r.counts_as_accepted())
            .filter_map(|r| crate::aggregate::finite(r.row.max_speedup));
        let sealed = self.sealed.iter().filter_map(|r| r.max_speedup);
        live.chain(sealed).reduce(f64::max)
    }
    /// How to show an evidence reference of `run` (a path relative to the evidence root).
    pub(crate) fn evidence_ref(&self, run: &RunView, rel: &str) -> EvidenceRef {
        if safe_relative_parts(rel).is_none() {
            return EvidenceRef::Withheld;
        }
        if let Some(root) = &self.evidence_root
            && join_safe(root, rel).is_some_and(|p| p.is_file())
        {
            return EvidenceRef::Local(rel.to_string());
        }
        EvidenceRef::Artifact(format!("artifact://{}/{}", run.evidence_artifact(), rel))
    }
}

#[cfg(test)]
mod tests {
    use crate::dashboard::testkit::*;

    #[test]
    fn rejected_1000x_outlier_never_moves_best_speedup_seen() {
        let base = dash(healthy());
        let mut runs = healthy();
        runs.push(compared(run("r4", 4, "rejected", 2000.0), "r1"));
        let with = dash(runs);
        assert_eq!(base.best_speedup_seen(), Some(2.02));
        assert_eq!(with.best_speedup_seen(), base.best_speedup_seen());
        assert_eq!(
            with.latest_evidence().map(|r| r.row.run_id.as_str()),
            Some("r4")
        );
        assert_eq!(
            with.latest_accepted().map(|r| r.row.run_id.as_str()),
            Some("r3")
        );
    }

    #[test]
    fn runs_sort_by_time_and_anchor_is_the_last_eligible() {
        let mut runs = healthy();
        runs.reverse();
        runs.push(compared(run("r0", 5, "anchor", 2.1), "r1"));
        let d = dash(runs);
        let ids: Vec<&str> = d.runs.iter().map(|r| r.row.run_id.as_str()).collect();
        assert_eq!(ids, ["r1", "r2", "r3", "r0"]);
        assert_eq!(d.anchor_run().map(|r| r.row.run_id.as_str()), Some("r0"));
    }

    #[test]
    fn evidence_refs_are_local_artifact_or_withheld() {
        let t = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(t.path().join("r3/results")).expect("mkdir");
        std::fs::write(t.path().join("r3/results/x.json"), b"{}").expect("write");
        let now = crate::dashboard::model::parse_time(NOW).expect("now");
        let d = super::Dashboard::from_runs(None, healthy(), Some(t.path()), now);
        let r = d.run("r3").expect("r3");
        use super::EvidenceRef::*;
        assert_eq!(
            d.evidence_ref(r, "r3/results/x.json"),
            Local("r3/results/x.json".into())
        );
        assert_eq!(
            d.evidence_ref(r, "r3/manifest.json"),
            Artifact("artifact://tier1-evidence-r3/r3/manifest.json".into())
        );
        assert_eq!(d.evidence_ref(r, "/home/runner/x.json"), Withheld);
        assert_eq!(d.evidence_ref(r, "../x.json"), Withheld);
    }
}
