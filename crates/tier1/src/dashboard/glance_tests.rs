//! Rendering tests of what the page says at a glance (issue 22): section titles that match their
//! rows, one status per target that agrees with its verdict, a time axis that separates nights of
//! one day, absolute times beside speedups, and the detectable change of each target.

use super::readiness::assess;
use super::testkit::*;
use super::{html, markdown};

fn page(runs: &[super::model::RunView]) -> String {
    let d = dash(runs.to_vec());
    html::render(&d, &assess(&d))
}

/// The `<h3 id="{id}">` group up to the next heading (or the end of its section).
fn group<'a>(html: &'a str, id: &str) -> Option<&'a str> {
    let start = html.find(&format!("<h3 id=\"{id}\""))?;
    let rest = &html[start..];
    let end = rest[4..]
        .find("<h3")
        .map(|e| e + 4)
        .or_else(|| rest.find("</section>"))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The `<tr>` of target `key` in the targets table.
fn target_row<'a>(html: &'a str, key: &str) -> &'a str {
    let t = &html[html.find("id=\"targets\"").expect("targets")..];
    let start = t
        .find(&format!("<strong>{key}</strong>"))
        .expect("target row");
    let row_start = t[..start].rfind("<tr>").expect("row start");
    let end = t[start..].find("</tr>").expect("row end") + start;
    &t[row_start..end]
}

fn latency(target: &str, before: f64, after: f64) -> crate::history::model::ChangeRow {
    change(
        serde_json::json!({"target": target, "reason": "optimized_latency",
        "before": before, "after": after, "delta_pct": (after - before) / before * 100.0,
        "optimized_time_delta_ms": after - before}),
    )
}

/// A history whose latest run regressed gemm (speedup −25 %, latency +33 % counted with it) and
/// has a +28 % latency worsening of a microsecond kernel kept from the gate by the floor.
fn misleading_before() -> Vec<super::model::RunView> {
    let mut runs = healthy();
    if let Some(r) = runs.last_mut() {
        let reg = &mut r.regression;
        reg.regressions.push(gemm_speedup_change(2.0, 1.5));
        reg.anchor_declines.push(gemm_speedup_change(2.0, 1.5));
        reg.anchor_declines
            .push(latency("labs/gemm:gemm", 5.0, 6.667));
        reg.anchor_declines
            .push(latency("labs/kv:kv", 0.01, 0.0128));
        reg.anchor_declines
            .push(change(serde_json::json!({"target": "labs/kv:kv",
            "reason": "speedup", "before": 1.5, "after": 1.49, "delta_pct": -0.667,
            "optimized_time_delta_ms": 0.0001})));
    }
    runs
}

#[test]
fn section_titles_match_their_rows() {
    let html = page(&misleading_before());
    let below = group(&html, "declines").expect("declines group");
    assert!(below.contains("below the thresholds"), "{below}");
    assert!(
        below.contains("labs/kv:kv</td><td>speedup</td><td>1.50×</td><td>1.49×"),
        "{below}"
    );
    assert!(!below.contains("optimized_latency"), "{below}");
    let floor = group(&html, "under-floor").expect("under-floor group");
    assert!(floor.contains("kept from the gate by the floor"), "{floor}");
    assert!(floor.contains("labs/kv:kv"), "{floor}");
    assert!(floor.contains("+28.00 %"), "{floor}");
    assert!(floor.contains("under the 0.0500 ms floor"), "{floor}");
    let also = group(&html, "regressed-also").expect("regressed-also group");
    assert!(
        also.contains("labs/gemm:gemm</td><td>optimized_latency"),
        "{also}"
    );
    let v = &html[html.find("id=\"verdict\"").expect("verdict")..];
    let v = &v[..v.find("</section>").unwrap_or(v.len())];
    assert!(
        v.contains("1 anchor decline(s) below the thresholds"),
        "{v}"
    );
    let md = markdown::render(
        &dash(misleading_before()),
        &assess(&dash(misleading_before())),
    );
    assert!(md.contains("## Worsenings beyond the thresholds kept from the gate by the floor"));
}

#[test]
fn one_status_per_target_agrees_with_the_verdict() {
    let html = page(&misleading_before());
    let gemm = target_row(&html, "gemm");
    assert!(
        gemm.contains("<span class=\"status bad\">regressed</span>"),
        "{gemm}"
    );
    assert!(
        !gemm.contains("succeeded"),
        "no green succeeded beside regressed: {gemm}"
    );
    assert_eq!(gemm.matches("class=\"status").count(), 1, "{gemm}");
    let kv = target_row(&html, "kv");
    assert!(
        kv.contains("<span class=\"status warn\">held by floor</span>"),
        "{kv}"
    );
    let calm = page(&healthy());
    assert!(target_row(&calm, "kv").contains("<span class=\"status ok\">unchanged</span>"));
}

#[test]
fn the_time_axis_separates_nights_of_one_day() {
    let mut runs = healthy();
    let mut late = compared(run("r4", 3, "accepted", 2.0), "r1");
    late.row.generated_at = "2026-06-03T21:40:00Z".into();
    late.time = super::model::parse_time(&late.row.generated_at);
    runs.push(late);
    let html = page(&runs);
    let t = &html[html.find("id=\"trends\"").expect("trends")..];
    assert!(t.contains(">2026-06-01 03:15 UTC</text>"), "first tick");
    assert!(t.contains(">2026-06-03 21:40 UTC</text>"), "last tick");
    assert!(t.contains("class=\"axis x-tick\""), "ticks");
    assert!(
        t.contains("r3 · 2026-06-03 03:15 UTC"),
        "each point says its time"
    );
}

#[test]
fn absolute_times_and_the_detectable_change_are_shown() {
    let mut runs = healthy();
    if let Some(r) = runs.last_mut() {
        r.regression.detection = Some(
            serde_json::from_value(serde_json::json!({
                "method": "statistical", "alpha": 0.005, "prior_noise_pct": 2.0, "prior_runs": 4.0,
                "targets": [{"target": "labs/gemm:gemm", "method": "statistical",
                    "noise_runs": 3, "verdict": "unchanged", "detectable_pct": 4.21}]
            }))
            .expect("detection"),
        );
    }
    let html = page(&runs);
    let gemm = target_row(&html, "gemm");
    assert!(gemm.contains("10.000 ms"), "baseline time: {gemm}");
    assert!(gemm.contains("4.975 ms"), "optimized time: {gemm}");
    assert!(gemm.contains("2.01×"), "{gemm}");
    assert!(
        gemm.contains("<td class=\"num\">4.21 %</td>"),
        "detectable change: {gemm}"
    );
    assert!(html.contains(
        "the smallest slowdown the comparison detects with 95 % probability\">Detects</th>"
    ));
    let t = &html[html.find("id=\"trends\"").expect("trends")..];
    assert!(t.contains("gemm optimized time over time"), "time chart");
    assert!(
        !t.contains("kv optimized time over time"),
        "memory goal: no time chart"
    );
    let md = markdown::render(&dash(runs.clone()), &assess(&dash(runs)));
    assert!(md.contains("| 4.21 % | unchanged |"), "{md}");
}
