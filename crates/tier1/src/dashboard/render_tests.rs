//! Rendering tests of each dashboard section (HTML) and a snapshot of the Markdown summary.

use super::readiness::assess;
use super::testkit::*;
use super::{html, markdown};

fn page(runs: Vec<super::model::RunView>) -> String {
    let d = dash(runs);
    html::render(&d, &assess(&d))
}

fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("section {id} present"));
    let rest = &html[start..];
    let end = rest.find("</section>").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn verdict_lists_blockers_and_notes() {
    let ready = page(healthy());
    assert!(section(&ready, "verdict").contains("Release ready"));
    let mut runs = healthy();
    if let Some(r) = runs.last_mut() {
        r.regression.regressions.push(gemm_speedup_change(2.0, 1.5));
        r.regression
            .anchor_declines
            .push(gemm_speedup_change(2.0, 1.5));
    }
    let blocked = page(runs);
    let v = section(&blocked, "verdict");
    assert!(v.contains("Not ready for release"));
    assert!(v.contains("latest run r3 has 1 confirmed regression(s)"));
    assert!(
        !v.contains("below the thresholds"),
        "a regression is not a decline below the thresholds: {v}"
    );
}

#[test]
fn cards_show_environment_and_the_acceptance_record_escaped() {
    let mut runs = healthy();
    runs[0].row.baseline_acceptance_note = Some("ok <script>alert(1)</script> & done".into());
    runs[0].row.baseline_acceptance_reviewers = vec!["rev-a".into(), "rev-b".into()];
    let html = page(runs.clone());
    let anchor = section(&html, "cards");
    assert!(anchor.contains("id=\"anchor\""), "distinct anchor card");
    assert!(anchor.contains("ok &lt;script&gt;alert(1)&lt;/script&gt; &amp; done"));
    assert!(anchor.contains("rev-a, rev-b"));
    assert!(anchor.contains("<a href=\"https://github.com/o/r/actions/runs/1\">"));
    assert!(anchor.contains("cuda · NVIDIA H100 · driver 570.1"));
    assert!(!html.contains("<script"));

    runs[0].row.baseline_acceptance_workflow_run = Some("javascript:alert(1)".into());
    let html = page(runs);
    assert!(
        !html.contains("href=\"javascript:"),
        "only https URLs are links"
    );
    assert!(html.contains("javascript:alert(1)"));
}

#[test]
fn target_table_shows_goal_values_change_threshold_and_flags() {
    let mut runs = healthy();
    if let Some(r) = runs.last_mut() {
        r.regression.regressions.push(gemm_speedup_change(2.0, 1.5));
    }
    let html = page(runs);
    let t = section(&html, "targets");
    assert!(
        t.contains("<span class=\"status bad\">regressed</span>"),
        "{t}"
    );
    assert!(
        t.contains("speedup +0.50 %"),
        "gemm 2.01 vs anchor 2.0: {t}"
    );
    assert!(t.contains("speedup −5% or latency +5% (if |Δ| ≥ 0.05 ms)"));
    assert!(t.contains("40.0 % saved"), "memory target shows savings");
    assert!(t.contains("savings −5 pts or memory +5%"));
    assert!(t.contains("rtol 1e-2, atol 1e-1"), "tolerance of the run");
}

#[test]
fn changes_show_before_after_delta_and_evidence() {
    let mut runs = healthy();
    if let Some(r) = runs.last_mut() {
        r.regression.regressions.push(gemm_speedup_change(2.0, 1.5));
    }
    let html = page(runs);
    let c = section(&html, "changes");
    assert!(c.contains("<td>labs/gemm:gemm</td><td>speedup</td><td>2.00×</td><td>1.50×</td><td>−25.00 % (+1.667 ms)</td>"), "{c}");
    assert!(c.contains("artifact://tier1-evidence-r3/r3/artifacts/gemm.nsys-rep"));
}

#[test]
fn charts_mark_anchor_and_clip_rejected_outliers() {
    let mut runs = healthy();
    runs.push(compared(run("r4", 4, "rejected", 2000.0), "r1"));
    let html = page(runs);
    let t = section(&html, "trends");
    assert!(t.contains("id=\"best-seen\">2.02×</strong>"), "{t}");
    assert!(t.contains("class=\"anchor\""));
    assert!(t.contains("class=\"clipped\""));
    assert!(t.contains("gemm speedup over time"));
    assert!(t.contains("kv memory savings over time"));
}

#[test]
fn run_table_lists_the_most_recent_and_counts_the_rest() {
    let mut runs = vec![run("r000", 1, "anchor", 2.0)];
    for i in 1..120u32 {
        let mut r = compared(run(&format!("r{i:03}"), 1, "accepted", 2.0), "r000");
        r.time = r.time.map(|t| t + chrono::Duration::hours(i64::from(i)));
        runs.push(r);
    }
    let html = page(runs);
    let t = section(&html, "runs");
    assert_eq!(t.matches("<tr class=").count(), html::RUN_TABLE_ROWS);
    assert!(t.contains("<code>r119</code>"));
    assert!(!t.contains("<code>r069</code>"));
    assert!(t.contains("Showing the 50 most recent of 120 runs; 70 older runs are not listed."));
}

#[test]
fn a_chain_reset_is_shown_escaped() {
    let index: crate::history::model::Index = serde_json::from_value(serde_json::json!({
        "suite_name": "tier1", "suite_version": 2, "runs": [],
        "chain_reset": {"at": "2026-06-01T00:00:00Z", "reason": "suite v2 <new shapes>",
            "actor": "octo", "first_run_id": "r1"}
    }))
    .expect("index");
    let now = super::model::parse_time(NOW).expect("now");
    let d = super::model::Dashboard::from_runs(Some(&index), healthy(), None, now);
    let page = html::render(&d, &assess(&d));
    assert!(page.contains("History restarted 2026-06-01 00:00 UTC by octo (first run <code>r1</code>): suite v2 &lt;new shapes&gt;"));
    assert!(page.contains("tier1 benchmark history v2"));
    assert!(markdown::render(&d, &assess(&d)).contains("suite v2 &lt;new shapes&gt;"));
}

#[test]
fn markdown_summary_snapshot() {
    let mut runs = healthy();
    runs[0].row.baseline_acceptance_note = Some("reviewed <b>|</b> ok".into());
    if let Some(r) = runs.last_mut() {
        r.regression
            .anchor_declines
            .push(gemm_speedup_change(2.02, 2.01));
    }
    let d = dash(runs);
    insta::assert_snapshot!(markdown::render(&d, &assess(&d)));
}

fn suppressed(run: &mut super::model::RunView) {
    run.regression
        .suppressed_regressions
        .push(crate::history::model::SuppressedRegression {
            row: gemm_speedup_change(2.0, 1.8),
            suppression_reason: "recheck_not_regressed".into(),
            recheck_run_id: "r3__recheck__gemm".into(),
            recheck_speedup: Some(2.0.into()),
            recheck_optimized_time_ms: Some(5.0.into()),
        });
}

#[test]
fn suppressed_regressions_are_shown_as_the_gate_treats_them() {
    let mut runs = healthy();
    if let Some(r) = runs.last_mut() {
        suppressed(r);
    }
    let html = page(runs);
    let v = section(&html, "verdict");
    assert!(v.contains("Release ready"), "the gate passes them: {v}");
    assert!(v.contains("cleared only by a recheck"), "{v}");
    let c = section(&html, "changes");
    assert!(!c.contains("block release"), "{c}");
    assert!(c.contains("the gate passes them"), "{c}");
}

#[test]
fn declines_beyond_the_thresholds_are_not_listed_below_them() {
    let mut runs = healthy();
    if let Some(r) = runs.last_mut() {
        // +6.6 % optimized latency: a regression, and (as every worsening) an anchor decline.
        let row = change(
            serde_json::json!({"target": "labs/gemm:gemm", "reason": "optimized_latency",
            "before": 5.0, "after": 5.33, "delta_pct": 6.6, "optimized_time_delta_ms": 0.33}),
        );
        r.regression.regressions.push(row.clone());
        r.regression.anchor_declines.push(row);
        // A 0.5 % speedup decline: below the thresholds.
        let small = gemm_speedup_change(2.0, 1.99);
        r.regression.anchor_declines.push(small);
    }
    let html = page(runs);
    let declines = section(&html, "declines");
    assert!(declines.contains("1.99×"), "{declines}");
    assert!(!declines.contains("optimized_latency"), "{declines}");
    let v = section(&html, "verdict");
    assert!(
        v.contains("1 anchor decline(s) below the thresholds"),
        "{v}"
    );
}

#[test]
fn each_target_of_the_latest_run_says_how_it_was_decided() {
    let mut runs = healthy();
    if let Some(r) = runs.last_mut() {
        r.regression.detection = Some(
            serde_json::from_value(serde_json::json!({
                "method": "statistical", "alpha": 0.005, "prior_noise_pct": 2.0, "prior_runs": 4.0,
                "targets": [
                    {"target": "labs/gemm:gemm", "method": "statistical", "noise_runs": 3},
                    {"target": "labs/kv:kv", "method": "reference", "reason": "memory goal", "noise_runs": 0}
                ]
            }))
            .unwrap(),
        );
        r.regression
            .within_noise
            .push(gemm_speedup_change(2.0, 1.88));
    }
    let html = page(runs.clone());
    let t = section(&html, "targets");
    assert!(t.contains("within noise"), "{t}");
    assert!(t.contains("reference rules (memory goal)"), "{t}");
    let c = section(&html, "changes");
    assert!(c.contains("id=\"within-noise\""), "{c}");

    if let Some(r) = runs.last_mut() {
        r.regression.within_noise.clear();
        r.regression.inconclusive = vec![
            serde_json::from_value(serde_json::json!({
                "target": "labs/gemm:gemm", "reason": "speedup interval ±4.2 % exceeds ±1 %"
            }))
            .unwrap(),
        ];
    }
    let t = page(runs.clone());
    let t = section(&t, "targets");
    assert!(
        t.contains(
            "inconclusive: speedup interval ±4.2 % exceeds ±1 %; the reference rules decided"
        ),
        "{t}"
    );
    if let Some(r) = runs.last_mut() {
        r.regression.inconclusive.clear();
    }
    let t = page(runs);
    assert!(section(&t, "targets").contains("statistical test"));
}

#[test]
fn side_by_side_checks_are_one_line_per_target() {
    let mut runs = healthy();
    if let Some(r) = runs.last_mut() {
        r.regression.side_by_side = serde_json::from_value(serde_json::json!({
            "enabled": true,
            "reason": "on: anchor commit a against current commit b",
            "checks": [{
                "target": "labs/gemm:gemm", "key": "gemm", "suspected_as": "unknown",
                "verdict": "same", "reason": "figures", "threshold_pct": 5.0,
                "decided_on": "both", "rounds": 12, "seconds": 3.0,
                "optimized_time_ratio": {"ratio": 1.01, "low": 0.99, "high": 1.03},
                "speedup_ratio": {"ratio": 1.0, "low": 0.98, "high": 1.02}
            }]
        }))
        .unwrap();
    }
    let html = page(runs);
    let c = section(&html, "changes");
    assert!(c.contains("Side by side with the anchor"), "{c}");
    assert!(
        c.contains("on: anchor commit a against current commit b"),
        "{c}"
    );
    assert!(
        c.contains(
            "labs/gemm:gemm: same (suspected as unknown; current/anchor optimized time x1.010 [0.990, 1.030], speedup x1.000 [0.980, 1.020]; 12 rounds)"
        ),
        "{c}"
    );
}
