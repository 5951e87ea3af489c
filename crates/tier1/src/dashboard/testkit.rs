//! Test builders for report unit tests: runs with a summary and regression summary, built from
//! compact JSON so each test states only what it varies.

use super::model::{Dashboard, RunView, parse_time};
use crate::history::model::{IndexRow, RegressionSummary, Summary};
use serde_json::{Value, json};

/// Clock of the tests.
pub(crate) const NOW: &str = "2026-08-05T00:00:00Z";

fn target(key: &str, goal: &str, speedup: f64, savings: f64) -> Value {
    json!({
        "key": key, "target": format!("labs/{key}:{key}"), "category": "c", "status": "succeeded",
        "baseline_time_ms": 10.0, "best_speedup": speedup, "best_optimized_time_ms": 10.0 / speedup,
        "optimization_goal": goal, "baseline_memory_mb": 100.0,
        "best_memory_savings_pct": savings, "best_optimized_memory_mb": 100.0 - savings,
        "artifacts": {"nsys_rep": format!("RUN/artifacts/{key}.nsys-rep")},
        "verification_tolerance": {"rtol": 0.01, "atol": 0.1}
    })
}

/// An accepted (or rejected, or anchor) run with two targets (`gemm` speed, `kv` memory).
pub(crate) fn run(id: &str, day: u32, class: &str, gemm_speedup: f64) -> RunView {
    let (accepted, eligible) = match class {
        "anchor" => (true, true),
        "accepted" => (true, false),
        _ => (false, false),
    };
    let generated_at = format!("2026-06-{day:02}T03:15:00Z");
    let mut targets = vec![
        target("gemm", "speed", gemm_speedup, 0.0),
        target("kv", "memory", 1.5, 40.0),
    ];
    for t in &mut targets {
        let a = t["artifacts"]["nsys_rep"]
            .as_str()
            .unwrap_or_default()
            .replace("RUN", id);
        t["artifacts"]["nsys_rep"] = json!(a);
    }
    let geo = (gemm_speedup * 1.5f64).sqrt();
    let summary: Summary = serde_json::from_value(json!({
        "suite_name": "tier1", "suite_version": 1, "run_id": id, "generated_at": generated_at,
        "source_result_json": format!("{id}/results/benchmark_test_results.json"),
        "source_git_commit": "a".repeat(40), "source_git_dirty": false,
        "evidence_artifact_name": format!("tier1-evidence-{id}"),
        "environment": {"backend": "cuda", "device_names": ["NVIDIA H100"], "driver_version": "570.1"},
        "targets": targets,
        "summary": {"target_count": 2, "succeeded": 2, "failed": 0, "skipped": 0, "missing": 0,
            "geomean_speedup": geo, "representative_speedup": geo,
            "max_speedup": gemm_speedup.max(1.5)}
    }))
    .expect("summary");
    let mut row: IndexRow = serde_json::from_value(json!({
        "run_id": id, "generated_at": generated_at,
        "summary_path": format!("{id}/summary.json"),
        "regression_summary_path": format!("{id}/regression_summary.md"),
        "regression_json_path": format!("{id}/regression_summary.json"),
        "trend_snapshot_path": format!("{id}/trend_snapshot.json"),
        "geomean_speedup": geo, "representative_speedup": geo, "max_speedup": gemm_speedup.max(1.5),
        "succeeded": 2, "run_accepted": accepted, "baseline_eligible": eligible
    }))
    .expect("row");
    if eligible {
        row.baseline_acceptance = Some(crate::history::model::Acceptance::AcceptHistoryAnchor);
        row.baseline_acceptance_actor = Some("octo".into());
        row.baseline_acceptance_note = Some("reviewed".into());
        row.baseline_acceptance_workflow_run = Some("https://github.com/o/r/actions/runs/1".into());
    }
    let regression: RegressionSummary = serde_json::from_value(json!({
        "baseline_run_id": null, "current_run_id": id
    }))
    .expect("regression");
    RunView {
        time: parse_time(&generated_at),
        row,
        summary,
        regression,
    }
}

/// Set a run's comparison anchor.
pub(crate) fn compared(mut r: RunView, anchor: &str) -> RunView {
    r.regression.baseline_run_id = Some(anchor.into());
    r
}

/// Parse a change row.
pub(crate) fn change(v: Value) -> crate::history::model::ChangeRow {
    serde_json::from_value(v).expect("change row")
}

/// A speedup change row for target `gemm`.
pub(crate) fn gemm_speedup_change(before: f64, after: f64) -> crate::history::model::ChangeRow {
    change(
        json!({"target": "labs/gemm:gemm", "reason": "speedup", "before": before,
        "after": after, "delta_pct": (after - before) / before * 100.0,
        "optimized_time_before_ms": 10.0 / before, "optimized_time_after_ms": 10.0 / after,
        "optimized_time_delta_ms": 10.0 / after - 10.0 / before}),
    )
}

/// A dashboard at [`NOW`].
pub(crate) fn dash(runs: Vec<RunView>) -> Dashboard {
    Dashboard::from_runs(None, runs, None, parse_time(NOW).expect("now"))
}

/// The usual healthy history: anchor on day 1, accepted runs after it.
pub(crate) fn healthy() -> Vec<RunView> {
    vec![
        run("r1", 1, "anchor", 2.0),
        compared(run("r2", 2, "accepted", 2.02), "r1"),
        compared(run("r3", 3, "accepted", 2.01), "r1"),
    ]
}
