//! [`bisect`]: resolve the good and the bad commit (fetching what a shallow checkout lacks from its
//! remote, [`crate::sidebyside::fetch`]), list the commits between them on the bad commit's
//! first-parent chain ([`range`](super::range)), then test candidates
//! ([`crate::bisect::search`]) by comparing each side by side with the good commit
//! ([`step`](super::step), [`decide`](super::decide)): `worse` is bad, `same` is good, `unknown`
//! is skipped. The report and every step's evidence are staged in the output directory and
//! renamed into place only when the search completes.

use super::range::{self, Range};
use super::request::{BisectError, BisectRequest};
use super::{decide, step};
use crate::bisect::report::{BISECT_SCHEMA, BisectReport, BisectStatus, Step};
use crate::bisect::search::Search;
use crate::sidebyside::git;
use std::time::Instant;

impl BisectReport {
    /// The exit code of a completed bisection: 0 with one culprit, 1 when suspects remain.
    pub fn exit(&self) -> crate::exit::Exit {
        match self.status {
            BisectStatus::Found => crate::exit::Exit::Ok,
            BisectStatus::Ambiguous => crate::exit::Exit::Gate,
        }
    }
}

/// Bisect; see the module docs.
pub fn bisect(req: &BisectRequest) -> Result<BisectReport, BisectError> {
    let started = Instant::now();
    // 1. The request, then the range: the repository, both commits and the candidates between.
    range::check_request(req)?;
    let range = range::resolve(req)?;
    // 2. The output directory, staged (stale staging beside it and in the cache goes).
    let stage = stage_output(req)?;
    // 3. The search, one measured step at a time.
    let mut search = Search::new(range.commits.len());
    let mut steps: Vec<Step> = Vec::new();
    let mut builds = 0u32;
    while let Some(i) = search.next() {
        let n = u32::try_from(steps.len()).unwrap_or(u32::MAX) + 1;
        let measured = step::measure(req, &range, stage.path(), n, &range.commits[i])?;
        search.mark(i, measured.step.mark);
        builds += measured.builds;
        steps.push(measured.step);
    }
    // 4. The report, written into the stage, which is renamed into place.
    let suspects: Vec<String> = search
        .suspects()
        .into_iter()
        .map(|i| range.commits[i].clone())
        .collect();
    let report = report(req, range, suspects, steps, builds, started);
    write_report(req, stage, &report)?;
    Ok(report)
}

/// The output directory staged: absent or empty, else a conflict.
fn stage_output(req: &BisectRequest) -> Result<crate::fsx::StagedDir, BisectError> {
    crate::fsx::stale::tidy_beside(&[req.output_dir]);
    crate::fsx::stale::tidy([req.cache_dir.to_path_buf()]);
    crate::fsx::StagedDir::new(req.output_dir).map_err(|e| {
        let m = format!(
            "--output-dir {}: expected an absent or empty directory: {e}",
            req.output_dir.display()
        );
        match e.kind() {
            std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::InvalidInput => {
                BisectError::Conflict(m)
            }
            _ => BisectError::Io(m),
        }
    })
}

/// The report of a completed search.
fn report(
    req: &BisectRequest,
    range: Range,
    suspects: Vec<String>,
    steps: Vec<Step>,
    builds: u32,
    started: Instant,
) -> BisectReport {
    let status = decide::status(suspects.len());
    let culprit = (status == BisectStatus::Found).then(|| suspects[0].clone());
    BisectReport {
        schema: BISECT_SCHEMA.into(),
        target: req.target_key.into(),
        profile: req.profile.into(),
        good: range.good,
        bad: range.bad,
        threshold_pct: req.threshold_pct,
        decided_on: req.decide_on,
        commits_in_range: range.commits.len(),
        status,
        culprit_subject: culprit.as_ref().map(|c| git::subject(&range.repo, c)),
        culprit,
        suspects,
        steps,
        builds,
        seconds: started.elapsed().as_secs_f64(),
        output_dir: Some(req.output_dir.display().to_string()),
    }
}

/// `bisect.json` written into the stage, and the stage renamed into place.
fn write_report(
    req: &BisectRequest,
    stage: crate::fsx::StagedDir,
    report: &BisectReport,
) -> Result<(), BisectError> {
    let bytes = crate::json::to_pretty(report, "bisect report")
        .map_err(|e| BisectError::Io(e.to_string()))?;
    let path = stage.path().join("bisect.json");
    crate::fsx::write_atomic(&path, &bytes)
        .map_err(|e| BisectError::Io(format!("{}: {e}", path.display())))?;
    stage.commit().map_err(|e| {
        BisectError::Io(format!(
            "{}: could not move the report into place: {e}",
            req.output_dir.display()
        ))
    })?;
    Ok(())
}
