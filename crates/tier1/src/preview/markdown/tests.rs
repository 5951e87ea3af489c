//! Unit tests of the preview Markdown: verdict first, the table, folded details, the size limit.

use super::*;
use crate::aggregate::fixtures::*;
use crate::preview::rows::rows;
use crate::regress::compare;
use crate::suite::Thresholds;

fn fixture(n: usize, slower_every: usize) -> (RegressionSummary, Vec<TargetRow>) {
    let anchor = summary(
        "anchor",
        (0..n)
            .map(|i| speed_opt(&format!("t{i:04}"), 2.0, 5.0))
            .collect(),
    );
    let current = summary(
        "pr",
        (0..n)
            .map(|i| {
                let s = if i % slower_every == 0 { 1.5 } else { 2.0 };
                speed_opt(&format!("t{i:04}"), s, 10.0 / s)
            })
            .collect(),
    );
    let cmp = compare(&current, Some(&anchor), Thresholds::default()).unwrap();
    let rows = rows(&current, &anchor, &cmp);
    (cmp, rows)
}

fn ctx<'a>(cmp: &'a RegressionSummary, rows: &'a [TargetRow], gate: &'a Verdict) -> Context<'a> {
    Context {
        run_id: "20260816_031500_tier1_preview_abcdef12",
        commit: Some("abcdef1234567890abcdef1234567890abcdef12"),
        anchor_run_id: "20260801_031500_tier1_nightly_0123abcd",
        anchor_commit: Some(COMMIT),
        branch: "main",
        profile: "minimal",
        devices: &[],
        run_url: Some("https://github.com/o/r/actions/runs/7"),
        gate,
        rows,
        comparison: cmp,
        notes: &[],
    }
}

fn failed(n: usize) -> Verdict {
    Verdict {
        passed: false,
        failures: vec![format!("the comparison has {n} confirmed regression(s)")],
    }
}

#[test]
fn a_small_comparison_is_whole_verdict_first_table_then_folded_details() {
    let (cmp, rows) = fixture(3, 2);
    let gate = failed(2);
    let r = comment(&ctx(&cmp, &rows, &gate), 65_536);
    let lines: Vec<&str> = r.body.lines().collect();
    assert_eq!(lines[0], MARKER);
    assert_eq!(
        lines[1],
        "### ❌ Tier-1 preview, not canonical: the nightly gate would fail this commit"
    );
    assert!(r.body.contains("Commit `abcdef12` against the `main` anchor `20260801_031500_tier1_nightly_0123abcd` (commit `01234567`) · profile `minimal` · [workflow run](https://github.com/o/r/actions/runs/7)"), "{}", r.body);
    assert!(
        r.body
            .contains("2 regressions · 1 unchanged of 3 target(s)."),
        "{}",
        r.body
    );
    assert!(
        r.body.contains(
            "| `t0000` | 2.00× · 5.00 ms | 1.50× · 6.67 ms | -25.0 % speedup | ❌ regression |"
        ),
        "{}",
        r.body
    );
    assert!(
        r.body.contains(
            "| `t0001` | 2.00× · 5.00 ms | 2.00× · 5.00 ms | +0.0 % speedup | unchanged |"
        )
    );
    let table = r.body.find("| Target |").unwrap();
    let details = r.body.find("<details><summary>Details</summary>").unwrap();
    assert!(table < details && r.body.contains("</details>"));
    assert!(
        r.body
            .contains("\n#### Tier-1 Regression Summary (preview, not canonical)\n")
    );
    assert!(r.body.contains("\n##### Regressions\n"));
    assert!(r.body.contains("Detection: `statistical`") || cmp.detection.is_none());
    assert!(
        r.body
            .contains("- the comparison has 2 confirmed regression(s)")
    );
    assert_eq!((r.rows_shown, r.full_details), (3, true));
}

#[test]
fn a_passing_gate_says_so() {
    let (cmp, rows) = fixture(2, usize::MAX);
    let gate = Verdict {
        passed: true,
        failures: vec![],
    };
    let r = comment(&ctx(&cmp, &rows, &gate), 65_536);
    assert!(
        r.body.contains(
            "### ✅ Tier-1 preview, not canonical: the nightly gate would pass this commit"
        )
    );
    assert!(!r.body.contains("Why the nightly gate would fail"));
}

#[test]
fn many_targets_stay_under_the_limit_with_regressions_first() {
    // 3,000 targets, every seventh regressed: far more than a comment holds.
    let (cmp, rows) = fixture(3000, 7);
    let regressions = rows
        .iter()
        .filter(|r| r.verdict == super::super::rows::TargetVerdict::Regression)
        .count();
    assert_eq!(regressions, 429);
    let gate = failed(regressions);
    let r = comment(&ctx(&cmp, &rows, &gate), 65_536);
    let chars = r.body.chars().count();
    assert!(chars <= 65_536, "{chars} characters");
    assert!(chars > 60_000, "the room is used: {chars}");
    assert!(!r.full_details);
    assert!(
        r.rows_shown > regressions && r.rows_shown < 3000,
        "{}",
        r.rows_shown
    );
    let note = format!("_{} more target(s) not shown", 3000 - r.rows_shown);
    assert!(r.body.contains(&note), "{note}");
    // Every regression is shown before any unchanged row.
    let first_unchanged = r.body.find("| unchanged |").unwrap();
    assert!(r.body.rfind("| ❌ regression |").unwrap() < first_unchanged);
    assert!(r.body.ends_with(&format!("{FOOTER}\n")));
    assert!(r.body.contains("</details>"));
}

#[test]
fn the_short_details_are_used_before_rows_are_cut() {
    let (cmp, rows) = fixture(60, 3);
    let gate = failed(20);
    let whole = comment(&ctx(&cmp, &rows, &gate), 65_536);
    assert!(whole.full_details);
    let limit = whole.body.chars().count() - 1;
    let r = comment(&ctx(&cmp, &rows, &gate), limit);
    assert_eq!((r.rows_shown, r.full_details), (60, false));
    assert!(r.body.contains("did not fit in a comment"));
    assert!(r.body.chars().count() <= limit);
}

#[test]
fn clamp_cuts_at_a_line_with_a_note() {
    let body = "a\n".repeat(100);
    let c = clamp(body.clone(), 80);
    assert!(c.chars().count() <= 80 && c.ends_with("limit._\n"), "{c}");
    assert_eq!(clamp(body.clone(), 1000), body);
}

#[test]
fn cells_are_formatted_and_escaped() {
    assert_eq!(time(5.0), "5.00 ms");
    assert_eq!(time(123.4), "123 ms");
    assert_eq!(time(12.34), "12.3 ms");
    assert_eq!(time(0.1184), "0.118 ms");
    assert_eq!(time(0.05), "50.0 µs");
    let weird = TargetRow {
        key: "a|b`c".into(),
        target: "x".into(),
        goal: "speed",
        anchor: None,
        current: None,
        change: None,
        verdict: super::super::rows::TargetVerdict::New,
        detectable_pct: None,
    };
    assert_eq!(row_line(&weird), "| `a\\|b'c` | — | — | — | 🆕 new | — |\n");
    assert!(
        failure_comment(Some("https://x/runs/1"))
            .starts_with(&format!("{MARKER}\n### ⚠️ Tier-1 preview, not canonical"))
    );
}

#[test]
fn side_by_side_checks_are_listed_one_line_per_target() {
    let (mut cmp, rows) = fixture(2, usize::MAX);
    cmp.side_by_side = serde_json::from_value(serde_json::json!({
        "enabled": true,
        "reason": "on: anchor commit a against current commit b",
        "checks": [{
            "target": "labs/t0:t0", "key": "t0", "suspected_as": "regressed",
            "verdict": "worse", "reason": "figures", "threshold_pct": 5.0,
            "decided_on": "optimized_time", "rounds": 10, "seconds": 2.0,
            "optimized_time_ratio": {"ratio": 1.3, "low": 1.29, "high": 1.31}
        }]
    }))
    .unwrap();
    let gate = failed(1);
    let r = comment(&ctx(&cmp, &rows, &gate), 65_536);
    assert!(
        r.body.contains("**Side by side with the anchor's code**"),
        "{}",
        r.body
    );
    assert!(
        r.body.contains(
            "- labs/t0:t0: worse (suspected as regressed; current/anchor optimized time x1.300 [1.290, 1.310]; 10 rounds)"
        ),
        "{}",
        r.body
    );
}

#[test]
fn a_side_by_side_that_could_not_run_is_a_warning_above_the_table() {
    let (mut cmp, rows) = fixture(2, usize::MAX);
    cmp.side_by_side = serde_json::from_value(serde_json::json!({
        "enabled": false,
        "reason": "off: the anchor's commit is not reachable",
        "warning": "side by side did not run: the remote refused the request (no token was given); remedy: give the step `GITHUB_TOKEN` with `permissions: contents: read`"
    }))
    .unwrap();
    let gate = failed(1);
    for max in [65_536, 2_000] {
        let r = comment(&ctx(&cmp, &rows, &gate), max);
        let warning = r
            .body
            .find("> ⚠️ **Warning:** side by side did not run: the remote refused the request")
            .unwrap_or_else(|| panic!("{}", r.body));
        let table = r.body.find("| Target |").expect("the table");
        assert!(warning < table, "above the table: {}", r.body);
        assert!(r.body.contains("contents: read"), "{}", r.body);
    }
}
