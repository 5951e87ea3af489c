//! The human side of a run: `<run_id>/report.md` in the evidence package and the step summary.

use super::RunOutcome;
use crate::bench::result::ResultsFile;
use crate::evidence::{EvidenceError, REPORT_FILE};
use crate::history::model::{RegressionSummary, Summary};
use crate::json::Finite;
use std::fmt::Write as _;
use std::path::Path;

fn num(x: Option<Finite>, unit: &str) -> String {
    x.map(|v| format!("{v:.4}{unit}"))
        .unwrap_or_else(|| "-".into())
}

/// The per-target table shared by the report and the step summary.
pub(crate) fn target_table(summary: &Summary) -> String {
    let mut s = String::from(
        "| Target | Goal | Status | Baseline | Optimized | Speedup | Memory savings |\n|---|---|---|---|---|---|---|\n",
    );
    for t in &summary.targets {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} | {} |",
            t.key,
            t.optimization_goal.as_deref().unwrap_or("speed"),
            t.status,
            num(t.baseline_time_ms, " ms"),
            num(t.best_optimized_time_ms, " ms"),
            num(t.best_speedup, "x"),
            num(t.best_memory_savings_pct, " %"),
        );
    }
    s
}

/// How precisely each target was measured: rounds (clean), the 95 % intervals, spread and
/// whether the precision was reached.
pub(crate) fn measurement_table(summary: &Summary) -> String {
    let mut s = String::from(
        "| Target | Rounds (clean) | Speedup 95 % interval | Optimized 95 % interval | Ratio CV | Outliers | Precise |\n|---|---|---|---|---|---|---|\n",
    );
    let pct = |w: Option<f64>| w.map_or_else(|| "-".into(), |w| format!("±{w:.2} %"));
    for t in &summary.targets {
        let Some(m) = &t.measurement else {
            let _ = writeln!(s, "| `{}` | - | - | - | - | - | not measured |", t.key);
            continue;
        };
        let verdict = match m.imprecision(t.best_speedup) {
            None => "yes".to_string(),
            Some(why) if m.throttled => format!("no: {why}"),
            Some(_) => format!("no (asked ±{:.2} %)", m.precision_pct),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} ({}) | {} | {} | {:.3} | {} | {} |",
            t.key,
            m.rounds,
            m.clean_rounds,
            pct(t.best_speedup.and_then(|x| m.speedup_half_width_pct(x))),
            pct(m.optimized_half_width_pct()),
            m.speedup_cv,
            m.outliers,
            verdict,
        );
    }
    s
}

/// Write `<run_dir>/report.md`.
pub(crate) fn write(
    run_dir: &Path,
    summary: &Summary,
    comparison: &RegressionSummary,
    results: &ResultsFile,
) -> Result<(), EvidenceError> {
    let mut s = format!("# Tier-1 run `{}`\n\n", summary.run_id);
    let _ = writeln!(
        s,
        "- Suite: `{}` v{} profile `{}`",
        summary.suite_name, summary.suite_version, results.profile
    );
    let _ = writeln!(
        s,
        "- Commit: `{}` (dirty: {})",
        summary.source_git_commit.as_deref().unwrap_or("unknown"),
        summary
            .source_git_dirty
            .map_or("unknown".into(), |d| d.to_string())
    );
    let env = &results.environment;
    let _ = writeln!(
        s,
        "- Backend: `{}` on {}",
        env.backend,
        env.device_names.join(", ")
    );
    let _ = writeln!(
        s,
        "- Started: {}; warm-up {} executions per variant; at least {} rounds (variants interleaved, batched samples of at least {} ms) until ±{} % at 95 %; times are medians of the clean rounds",
        results.timestamp,
        results.warmup,
        results.iterations,
        results.min_sample_ms.map_or("-".into(), |x| x.to_string()),
        results.precision_pct.map_or("-".into(), |x| x.to_string()),
    );
    s.push_str("\n## Targets\n\n");
    s.push_str(&target_table(summary));
    s.push_str("\n## Measurement\n\n");
    s.push_str(&measurement_table(summary));
    s.push_str("\n## Machine\n\n| Target | Load before/after | CPU MHz before/after | GPU throttling | Re-measured |\n|---|---|---|---|---|\n");
    for t in &results.targets {
        let Some(sm) = &t.sampling else { continue };
        let Some(w) = sm.machine.last() else { continue };
        let two = |a: Option<Finite>, b: Option<Finite>| {
            let f = |x: Option<Finite>| x.map_or("-".into(), |v| format!("{v:.2}"));
            format!("{} / {}", f(a), f(b))
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} |",
            t.key,
            two(w.before.load_avg_1m, w.after.load_avg_1m),
            two(w.before.cpu_mhz, w.after.cpu_mhz),
            if sm.throttled.is_empty() {
                "none".to_string()
            } else {
                sm.throttled.join(", ")
            },
            sm.remeasured,
        );
    }
    s.push_str("\n## Verification\n\n| Target | Variant | Passed | Max abs err | Max rel err |\n|---|---|---|---|---|\n");
    for t in &results.targets {
        for v in &t.variants {
            if let Some(ver) = &v.verification {
                let _ = writeln!(
                    s,
                    "| `{}` | `{}` | {} | {:.3e} | {:.3e} |",
                    t.key, v.name, ver.passed, ver.max_abs_err, ver.max_rel_err
                );
            }
        }
    }
    s.push('\n');
    s.push_str(&crate::regress_md::render(comparison));
    let path = run_dir.join(REPORT_FILE);
    crate::fsx::write_atomic(&path, s.as_bytes()).map_err(|e| EvidenceError::io(&path, e))
}

/// Markdown for `$GITHUB_STEP_SUMMARY`: the verdict, counts, the measurement table and the
/// regression summary.
pub(crate) fn step_summary(
    o: &RunOutcome,
    summary: &Summary,
    comparison: &RegressionSummary,
) -> String {
    let a = &o.summary;
    let mut s = format!("## Tier-1 run `{}`\n\n", o.run_id);
    s.push_str(&o.ending.markdown(o.exit(), o.gate_message().as_deref()));
    let _ = writeln!(
        s,
        "- Gate: **{}**",
        if o.verdict.passed { "passed" } else { "failed" }
    );
    for f in &o.verdict.failures {
        let _ = writeln!(s, "  - {f}");
    }
    if let Some(w) = comparison
        .side_by_side
        .as_ref()
        .and_then(|b| b.warning.as_ref())
    {
        let _ = writeln!(s, "- **Warning:** {}", crate::text::for_humans(w));
    }
    let _ = writeln!(
        s,
        "- Targets: {} ({} succeeded, {} failed, {} skipped, {} missing)",
        a.target_count, a.succeeded, a.failed, a.skipped, a.missing
    );
    let _ = writeln!(
        s,
        "- Geomean speedup: {}; max: {}",
        num(a.geomean_speedup, "x"),
        num(a.max_speedup, "x")
    );
    let _ = writeln!(s, "- Anchor eligible: {}\n", o.baseline_eligible);
    s.push_str("### Measurement\n\n");
    s.push_str(&measurement_table(summary));
    s.push('\n');
    s.push_str(&crate::regress_md::render(comparison));
    s
}
