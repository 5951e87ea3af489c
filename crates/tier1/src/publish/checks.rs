//! A normal publication's decisions (docs/tier1-publish.md, "Rules (in order)"; contract §6.5),
//! each a pure function of values already read that returns its decision or the
//! [`PublishError`] with its message and exit code; [`merge`](super::merge) reads the trees and
//! runs them in order.
//!
//! | rule | check | refusal |
//! |---|---|---|
//! | 1 | [`run_id`]: `--run-id` is a safe run id | exit 3 |
//! | 3 | [`newest_row`]: the candidate's newest row is `--run-id` | exit 3 |
//! | 3 | [`not_an_anchor`]: not eligible, no acceptance field | exit 3 |
//! | 4, 6 | [`check_suite_identity`], [`check_summary_identity`]: the config's suite | exit 3 |
//! | 4, 6 | [`runner_class`]: the class published, in the candidate, its run and live history | exit 3 |
//! | 5 | [`check_paths_bound`]: the row's paths are `<run_id>/…` | exit 3 |
//! | 6 | [`live_index`]: the canonical history has an index | exit 3 |
//! | 6 | [`not_yet_published`]: the run is not in canonical history | exit 8 |
//! | 6 | [`live_anchor`]: canonical history has an eligible anchor | exit 3 |
//! | 7 | [`published_row`]: the row as merged, stale when its anchor was superseded | — |
//! | 10 | [`trend_paths`]: the trend snapshots rebuilt | — |

use super::error::PublishError;
use crate::history::model::{Index, IndexRow, Summary};
use crate::history::{package, trend};
use crate::history_check::AnchorRef;
use crate::suite::Suite;
use std::path::Path;

/// Rule 1: `--run-id` is a safe run id (it names a directory of the output).
pub(super) fn run_id(run_id: &str) -> Result<(), PublishError> {
    if !crate::fsx::is_safe_run_id(run_id) {
        return Err(PublishError::Invalid(format!(
            "--run-id {run_id:?} must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$"
        )));
    }
    Ok(())
}

/// Rule 3: only the candidate's newest row is published, and only when it is `--run-id`.
/// Returns that row.
pub(super) fn newest_row<'a>(
    runs: &'a [IndexRow],
    run_id: &str,
) -> Result<&'a IndexRow, PublishError> {
    let Some(row) = runs.last() else {
        return Err(PublishError::Invalid(
            "candidate history has no runs".into(),
        ));
    };
    if row.run_id != run_id {
        return Err(PublishError::Invalid(format!(
            "candidate's newest run must be --run-id {:?}, found {:?}",
            run_id, row.run_id
        )));
    }
    Ok(row)
}

/// Rule 3: a normal publication is evidence, never an anchor: the row is not eligible and carries
/// no acceptance field.
pub(super) fn not_an_anchor(row: &IndexRow) -> Result<(), PublishError> {
    if row.is_eligible() || !acceptance_fields(row).is_empty() {
        return Err(PublishError::Invalid(format!(
            "evidence merge cannot publish a canonical anchor: run {:?} carries baseline_eligible={:?} and acceptance fields {:?}",
            row.run_id,
            row.baseline_eligible,
            acceptance_fields(row)
        )));
    }
    Ok(())
}

/// Rules 4 and 6: a history's or run's runner class (`found`) against the class published
/// (`want`, docs/sharding.md): one class's run is never published into another's history.
pub(super) fn runner_class(
    what: &str,
    found: Option<&str>,
    want: Option<&str>,
) -> Result<(), PublishError> {
    if found == want {
        return Ok(());
    }
    Err(PublishError::Invalid(format!(
        "{what}: runner_class expected {want:?} (--runner-class), found {found:?}: a run of one runner class is never published into another class's history"
    )))
}

/// Rule 6: the canonical history at `root` has an index (`live`, its validation, is there):
/// without one there is no anchor, and a bootstrap goes through `tier1-promote`.
pub(super) fn live_index<T>(live: Option<T>, root: &Path) -> Result<T, PublishError> {
    live.ok_or_else(|| {
        PublishError::Invalid(format!(
            "canonical history {} has no index.json: normal publication needs an eligible anchor (bootstrap goes through tier1-promote)",
            root.display()
        ))
    })
}

/// Rule 6: a run is published once (`already`: canonical history holds `run_id`).
pub(super) fn not_yet_published(already: bool, run_id: &str) -> Result<(), PublishError> {
    if already {
        return Err(PublishError::Conflict(format!(
            "run {run_id:?} is already in canonical history"
        )));
    }
    Ok(())
}

/// Rule 6: the evidence is merged against canonical history's latest eligible anchor.
pub(super) fn live_anchor(anchor: Option<&AnchorRef>) -> Result<&AnchorRef, PublishError> {
    anchor.ok_or_else(|| PublishError::Invalid("canonical history has no eligible anchor".into()))
}

/// Rule 7: the candidate's `row` as merged (unchained, never eligible) and whether it is stale:
/// compared against a baseline (`baseline_run_id`) other than the latest live anchor, and then
/// never accepted.
pub(super) fn published_row(
    row: &IndexRow,
    anchor_run_id: &str,
    baseline_run_id: Option<&str>,
) -> (IndexRow, bool) {
    let stale = baseline_run_id != Some(anchor_run_id);
    let mut new_row = row.clone();
    new_row.chain_sha256 = None;
    new_row.baseline_eligible = Some(false);
    if stale {
        new_row.run_accepted = Some(false);
    }
    (new_row, stale)
}

/// Rule 10: the trend snapshots rebuilt from the output `index`: the new run's, and the latest
/// run's by time when that is another run.
pub(super) fn trend_paths(new_row: &IndexRow, index: &Index) -> Vec<String> {
    let mut paths = vec![new_row.trend_snapshot_path.clone()];
    if let Some(latest) = trend::sorted_by_time(&index.runs).last()
        && latest.run_id != new_row.run_id
    {
        paths.push(latest.trend_snapshot_path.clone());
    }
    paths
}

/// The acceptance fields a normal publication must not carry.
fn acceptance_fields(row: &IndexRow) -> Vec<&'static str> {
    let mut v = Vec::new();
    let present = [
        ("baseline_acceptance", row.baseline_acceptance.is_some()),
        (
            "baseline_acceptance_actor",
            row.baseline_acceptance_actor.is_some(),
        ),
        (
            "baseline_acceptance_actor_role",
            row.baseline_acceptance_actor_role.is_some(),
        ),
        (
            "baseline_acceptance_note",
            row.baseline_acceptance_note.is_some(),
        ),
        (
            "baseline_acceptance_workflow_run",
            row.baseline_acceptance_workflow_run.is_some(),
        ),
        (
            "baseline_acceptance_reviewers",
            !row.baseline_acceptance_reviewers.is_empty(),
        ),
        (
            "baseline_evidence_digest",
            row.baseline_evidence_digest.is_some(),
        ),
    ];
    for (name, here) in present {
        if here {
            v.push(name);
        }
    }
    v
}

/// Check that a row's four paths are `<run_id>/...`.
pub(crate) fn check_paths_bound(row: &IndexRow) -> Result<(), String> {
    let prefix = format!("{}/", row.run_id);
    for (field, rel) in package::row_paths(row) {
        if !rel.starts_with(&prefix) {
            return Err(format!(
                "run {:?}: `{field}` must be bound to {prefix:?}, found {rel:?}",
                row.run_id
            ));
        }
    }
    Ok(())
}

/// Check a history's and a summary's suite identity against the suite config.
pub(crate) fn check_suite_identity(
    what: &str,
    name: &str,
    version: u32,
    suite: &Suite,
) -> Result<(), String> {
    if name != suite.suite_name || version != suite.version {
        return Err(format!(
            "{what}: suite identity expected {}/v{}, found {name}/v{version}",
            suite.suite_name, suite.version
        ));
    }
    Ok(())
}

/// The summary's suite identity against the config.
pub(crate) fn check_summary_identity(s: &Summary, suite: &Suite) -> Result<(), String> {
    check_suite_identity(
        &format!("{}/summary.json", s.run_id),
        &s.suite_name,
        s.suite_version,
        suite,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::{Classify, Exit};

    fn row(id: &str, fields: serde_json::Value) -> IndexRow {
        let mut v = serde_json::json!({
            "run_id": id, "generated_at": "2026-08-16T00:00:00Z",
            "summary_path": format!("{id}/summary.json"),
            "regression_summary_path": format!("{id}/regression_summary.md"),
            "regression_json_path": format!("{id}/regression_summary.json"),
            "trend_snapshot_path": format!("{id}/trend_snapshot.json"),
        });
        v.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        serde_json::from_value(v).expect("an index row")
    }

    fn plain(id: &str) -> IndexRow {
        row(id, serde_json::json!({}))
    }

    /// The exit and message of a refusal, or None when the check passes.
    type Refused = Option<(Exit, String)>;
    /// A runner class, or none; a candidate's baseline run id, or none.
    type Id<'a> = Option<&'a str>;

    /// The refusal of a check's result.
    fn refusal<T>(r: Result<T, PublishError>) -> Refused {
        r.err().map(|e| (e.exit(), e.to_string()))
    }

    fn invalid(m: &str) -> Refused {
        Some((Exit::Invalid, m.to_string()))
    }

    #[test]
    fn run_id_rows() {
        let rows: [(&str, Refused); 4] = [
            ("n-1.a_b", None),
            (
                ".hidden",
                invalid("--run-id \".hidden\" must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$"),
            ),
            (
                "a/b",
                invalid("--run-id \"a/b\" must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$"),
            ),
            (
                "",
                invalid("--run-id \"\" must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$"),
            ),
        ];
        for (id, want) in rows {
            assert_eq!(refusal(run_id(id)), want, "{id:?}");
        }
    }

    #[test]
    fn newest_row_rows() {
        let rows: [(&[IndexRow], &str, Result<&str, Refused>); 4] = [
            (&[], "b", Err(invalid("candidate history has no runs"))),
            (&[plain("a"), plain("b")], "b", Ok("b")),
            (
                &[plain("a"), plain("b")],
                "a",
                Err(invalid(
                    "candidate's newest run must be --run-id \"a\", found \"b\"",
                )),
            ),
            (&[plain("c")], "c", Ok("c")),
        ];
        for (runs, id, want) in rows {
            let found = newest_row(runs, id)
                .map(|r| r.run_id.as_str())
                .map_err(|e| Some((e.exit(), e.to_string())));
            assert_eq!(found, want, "{id:?}");
        }
    }

    #[test]
    fn not_an_anchor_rows() {
        let rows: [(IndexRow, Refused); 4] = [
            (plain("r"), None),
            (
                row("r", serde_json::json!({"baseline_eligible": false})),
                None,
            ),
            (
                row("r", serde_json::json!({"baseline_eligible": true})),
                invalid(
                    "evidence merge cannot publish a canonical anchor: run \"r\" carries baseline_eligible=Some(true) and acceptance fields []",
                ),
            ),
            (
                row(
                    "r",
                    serde_json::json!({"baseline_acceptance_note": "n", "baseline_acceptance_reviewers": ["x"]}),
                ),
                invalid(
                    "evidence merge cannot publish a canonical anchor: run \"r\" carries baseline_eligible=None and acceptance fields [\"baseline_acceptance_note\", \"baseline_acceptance_reviewers\"]",
                ),
            ),
        ];
        for (i, (r, want)) in rows.into_iter().enumerate() {
            assert_eq!(refusal(not_an_anchor(&r)), want, "row {i}");
        }
    }

    #[test]
    fn runner_class_rows() {
        let rows: [(Id<'_>, Id<'_>, Refused); 4] = [
            (None, None, None),
            (Some("h100"), Some("h100"), None),
            (
                None,
                Some("h100"),
                invalid(
                    "x: runner_class expected Some(\"h100\") (--runner-class), found None: a run of one runner class is never published into another class's history",
                ),
            ),
            (
                Some("a100"),
                None,
                invalid(
                    "x: runner_class expected None (--runner-class), found Some(\"a100\"): a run of one runner class is never published into another class's history",
                ),
            ),
        ];
        for (found, want_class, want) in rows {
            assert_eq!(
                refusal(runner_class("x", found, want_class)),
                want,
                "{found:?} {want_class:?}"
            );
        }
    }

    #[test]
    fn live_history_rows() {
        let root = Path::new("/live");
        assert_eq!(refusal(live_index(Some(1), root)), None);
        assert_eq!(
            refusal(live_index(None::<u8>, root)),
            invalid(
                "canonical history /live has no index.json: normal publication needs an eligible anchor (bootstrap goes through tier1-promote)"
            )
        );
        assert_eq!(refusal(not_yet_published(false, "r")), None);
        assert_eq!(
            refusal(not_yet_published(true, "r")),
            Some((
                Exit::Conflict,
                "run \"r\" is already in canonical history".to_string()
            ))
        );
        let anchor = AnchorRef {
            run_id: "a".into(),
            evidence_artifact_name: "tier1-evidence-a".into(),
            git_commit: "0".repeat(40),
            evidence_digest: None,
        };
        assert_eq!(live_anchor(Some(&anchor)).unwrap(), &anchor);
        assert_eq!(
            refusal(live_anchor(None)),
            invalid("canonical history has no eligible anchor")
        );
    }

    #[test]
    fn published_row_rows() {
        // (baseline of the candidate, accepted as produced) → (stale, accepted as merged)
        let rows: [(Id<'_>, bool, (bool, Option<bool>)); 4] = [
            (Some("a"), true, (false, Some(true))),
            (Some("old"), true, (true, Some(false))),
            (None, true, (true, Some(false))),
            (Some("a"), false, (false, Some(false))),
        ];
        for (baseline, accepted, (stale, merged_accepted)) in rows {
            let r = row(
                "r",
                serde_json::json!({"run_accepted": accepted, "chain_sha256": "ab"}),
            );
            let (new_row, found_stale) = published_row(&r, "a", baseline);
            assert_eq!(found_stale, stale, "{baseline:?}");
            assert_eq!(new_row.run_accepted, merged_accepted, "{baseline:?}");
            assert_eq!(new_row.baseline_eligible, Some(false));
            assert_eq!(new_row.chain_sha256, None);
        }
    }

    #[test]
    fn bound_paths_and_suite_identity_rows() {
        let rows: [(serde_json::Value, Result<(), String>); 3] = [
            (serde_json::json!({}), Ok(())),
            (
                serde_json::json!({"summary_path": "s/summary.json"}),
                Err("run \"r\": `summary_path` must be bound to \"r/\", found \"s/summary.json\"".into()),
            ),
            (
                serde_json::json!({"trend_snapshot_path": "r2/trend_snapshot.json"}),
                Err("run \"r\": `trend_snapshot_path` must be bound to \"r/\", found \"r2/trend_snapshot.json\"".into()),
            ),
        ];
        for (fields, want) in rows {
            assert_eq!(
                check_paths_bound(&row("r", fields.clone())),
                want,
                "{fields}"
            );
        }
        let suite = Suite::embedded();
        let (name, version) = (suite.suite_name.clone(), suite.version);
        let rows: [(&str, u32, Result<(), String>); 3] = [
            (&name, version, Ok(())),
            (
                "other",
                version,
                Err(format!(
                    "x: suite identity expected {name}/v{version}, found other/v{version}"
                )),
            ),
            (
                &name,
                version + 1,
                Err(format!(
                    "x: suite identity expected {name}/v{version}, found {name}/v{}",
                    version + 1
                )),
            ),
        ];
        for (found_name, found_version, want) in rows {
            assert_eq!(
                check_suite_identity("x", found_name, found_version, &suite),
                want,
                "{found_name}/v{found_version}"
            );
        }
    }
}
