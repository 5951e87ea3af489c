//! The preview's output files, written through a staged directory renamed into place.

use super::error::io_err;
use super::{PreviewError, PreviewOutcome, markdown};
use crate::history::model::RegressionSummary;
use std::path::Path;

/// `preview.json`.
pub(crate) const PREVIEW_JSON: &str = "preview.json";
/// The comment body.
pub(crate) const COMMENT_MD: &str = "comment.md";
/// The comparison, as the nightly would record it.
pub(crate) const REGRESSION_JSON: &str = "regression_summary.json";
/// The comparison in Markdown, titled as a preview.
pub(crate) const REGRESSION_MD: &str = "regression_summary.md";
/// Characters of the step summary: GitHub takes at most 1 MiB per step, and a character is at most
/// 4 bytes.
pub(crate) const STEP_SUMMARY_MAX_CHARS: usize = 1024 * 1024 / 4;
/// Write the four output files through a staged directory renamed into place.
pub(super) fn write_outputs(
    dir: &Path,
    outcome: &PreviewOutcome,
    comparison: &RegressionSummary,
    comment: &str,
) -> Result<(), PreviewError> {
    let stage = crate::fsx::StagedDir::new(dir).map_err(io_err(dir))?;
    let json = |bytes: Result<Vec<u8>, crate::json::JsonError>, file: &str| {
        bytes.map_err(|e| PreviewError::Io {
            path: dir.join(file).display().to_string(),
            source: std::io::Error::other(e.to_string()),
        })
    };
    let files: [(&str, Vec<u8>); 4] = [
        (
            PREVIEW_JSON,
            json(crate::json::to_pretty(outcome, PREVIEW_JSON), PREVIEW_JSON)?,
        ),
        (
            REGRESSION_JSON,
            json(
                crate::json::to_pretty(comparison, REGRESSION_JSON),
                REGRESSION_JSON,
            )?,
        ),
        (
            REGRESSION_MD,
            crate::regress_md::render_titled(comparison, markdown::SUMMARY_TITLE).into_bytes(),
        ),
        (COMMENT_MD, comment.as_bytes().to_vec()),
    ];
    for (name, bytes) in files {
        let p = stage.path().join(name);
        crate::fsx::write_atomic(&p, &bytes).map_err(io_err(&dir.join(name)))?;
    }
    stage.commit().map_err(io_err(dir))?;
    Ok(())
}
