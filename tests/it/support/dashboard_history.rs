//! Synthetic history roots for dashboard tests and the dashboard bench: `n` nightly runs with six
//! targets, an anchor every 100 runs, rejected evidence every 7th run (one a 1000x outlier).

use serde_json::{Value, json};
use std::fs;
use std::path::Path;

const TARGETS: [(&str, &str, &str, &str, f64, f64); 6] = [
    (
        "block_scaling",
        "gemm",
        "labs/block_scaling:block_scaling",
        "performance",
        0.1074,
        1.6,
    ),
    (
        "flashattention4_alibi",
        "attention",
        "labs/flashattention4:flashattention4_alibi",
        "performance",
        5.5622,
        14.45,
    ),
    (
        "persistent_decode",
        "decode",
        "labs/persistent_decode:persistent_decode",
        "performance",
        1.4107,
        11.93,
    ),
    (
        "kv_standard",
        "kv_memory",
        "labs/kv_optimization:kv_standard",
        "memory",
        1585.6,
        1.58,
    ),
    (
        "gradient_fusion",
        "communication",
        "ch04:gradient_fusion",
        "performance",
        1.0,
        1.21,
    ),
    (
        "llama_3_1_8b",
        "end_to_end",
        "labs/real_world_models:llama_3_1_8b",
        "performance",
        13.143,
        2.49,
    ),
];

fn write(path: &Path, v: &Value) {
    fs::write(path, serde_json::to_vec_pretty(v).expect("json")).expect("write fixture file");
}

/// Write a legacy (unchained) history of `n` runs under `root`; returns the run ids, oldest first.
pub fn write_history(root: &Path, n: usize) -> Vec<String> {
    fs::create_dir_all(root).expect("mkdir history root");
    let start = chrono::DateTime::parse_from_rfc3339("2024-01-01T03:15:00Z").expect("time");
    let mut rows = Vec::with_capacity(n);
    let mut ids = Vec::with_capacity(n);
    let mut anchor: Option<String> = None;
    for i in 0..n {
        let t = start + chrono::Duration::hours(24 * i as i64);
        let run_id = format!("{}_tier1_nightly_{:08x}", t.format("%Y%m%d_%H%M%S"), i);
        let generated_at = t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
        let is_anchor = i % 100 == 0;
        let rejected = !is_anchor && i % 7 == 3;
        let outlier = rejected && i / 7 == n / 14 + 1;
        let wobble = 1.0 + ((i * 37 % 11) as f64 - 5.0) / 400.0 + i as f64 / (n as f64 * 50.0);
        let targets: Vec<Value> = TARGETS
            .iter()
            .map(|(key, cat, target, goal, base, sp)| {
                let mut speedup = sp * wobble;
                if outlier && *key == "flashattention4_alibi" {
                    speedup = sp * 1000.0;
                }
                json!({
                    "key": key, "target": target, "category": cat, "rationale": "r",
                    "status": "succeeded", "baseline_time_ms": base, "best_speedup": speedup,
                    "best_optimized_time_ms": base / speedup, "optimization_goal": goal,
                    "baseline_memory_mb": 1024.0, "best_memory_savings_pct": 49.7 * wobble,
                    "best_optimized_memory_mb": 1024.0 * (1.0 - 0.497 * wobble),
                    "artifacts": {"nsys_rep": format!("{run_id}/artifacts/{key}.nsys-rep")}
                })
            })
            .collect();
        let sps: Vec<f64> = targets
            .iter()
            .map(|t| t["best_speedup"].as_f64().unwrap_or(1.0))
            .collect();
        let geo = (sps.iter().map(|x| x.ln()).sum::<f64>() / sps.len() as f64).exp();
        let max = sps.iter().copied().fold(0.0, f64::max);
        let avg = sps.iter().sum::<f64>() / sps.len() as f64;
        let commit = format!("{:040x}", i + 1);
        let dir = root.join(&run_id);
        fs::create_dir_all(&dir).expect("mkdir run");
        write(
            &dir.join("summary.json"),
            &json!({
                "suite_name": "tier1", "suite_version": 1, "description": "d",
                "run_id": run_id, "generated_at": generated_at,
                "source_result_json": format!("{run_id}/results/benchmark_test_results.json"),
                "source_manifest_json": format!("{run_id}/manifest.json"),
                "source_markdown_report": format!("{run_id}/report.md"),
                "source_git_commit": commit, "source_git_dirty": false,
                "source_manifest_git_commit": commit,
                "evidence_artifact_name": format!("tier1-evidence-{i}-1"),
                "environment": {"backend": "cuda", "device_names": ["NVIDIA H100 80GB HBM3"],
                    "driver_version": "570.86.15", "cuda_version": "12.8", "profile": "minimal"},
                "targets": targets,
                "summary": {"target_count": 6, "succeeded": 6, "failed": 0, "skipped": 0,
                    "missing": 0, "avg_speedup": avg, "median_speedup": geo,
                    "geomean_speedup": geo, "representative_speedup": geo, "max_speedup": max}
            }),
        );
        let baseline = if is_anchor && anchor.is_none() {
            None
        } else {
            anchor.clone()
        };
        write(
            &dir.join("regression_summary.json"),
            &json!({"baseline_run_id": baseline, "current_run_id": run_id, "regressions": [],
                "improvements": [], "anchor_declines": [], "new_targets": [],
                "missing_targets": [], "warnings": [], "suppressed_regressions": [],
                "rechecks": []}),
        );
        fs::write(
            dir.join("regression_summary.md"),
            "# Tier-1 Regression Summary\n",
        )
        .expect("write md");
        write(
            &dir.join("trend_snapshot.json"),
            &json!({"suite_name": "tier1"}),
        );
        let mut row = json!({
            "run_id": run_id, "generated_at": generated_at,
            "summary_path": format!("{run_id}/summary.json"),
            "regression_summary_path": format!("{run_id}/regression_summary.md"),
            "regression_json_path": format!("{run_id}/regression_summary.json"),
            "trend_snapshot_path": format!("{run_id}/trend_snapshot.json"),
            "avg_speedup": avg, "median_speedup": geo, "geomean_speedup": geo,
            "representative_speedup": geo, "max_speedup": max,
            "succeeded": 6, "failed": 0, "skipped": 0, "missing": 0,
            "run_accepted": !rejected, "baseline_eligible": is_anchor
        });
        if is_anchor {
            let extra = json!({
                "baseline_acceptance": "accept_history_anchor",
                "baseline_acceptance_actor": "octo-lead",
                "baseline_acceptance_actor_role": "requester",
                "baseline_acceptance_note": "Reviewed the immutable evidence package",
                "baseline_acceptance_workflow_run": format!("https://github.com/o/r/actions/runs/{}", 1000 + i),
                "baseline_evidence_digest": format!("sha256:{}", "b".repeat(64))
            });
            if let (Some(r), Some(e)) = (row.as_object_mut(), extra.as_object()) {
                r.extend(e.clone());
            }
            anchor = Some(run_id.clone());
        }
        rows.push(row);
        ids.push(run_id);
    }
    write(
        &root.join("index.json"),
        &json!({"suite_name": "tier1", "suite_version": 1, "history_root": ".", "runs": rows}),
    );
    ids
}
