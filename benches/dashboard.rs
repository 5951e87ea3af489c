//! Dashboard rendering time for synthetic histories of 100 and 1000 runs (validation, loading,
//! HTML, SVG and Markdown, staged write). Prints a table; run with `cargo bench --bench dashboard`.
//! `TIER1_DASHBOARD_BENCH_OUT=DIR` keeps the rendered pages in `DIR/runs<N>/`.

#[path = "../tests/it/support/dashboard_history.rs"]
mod dashboard_history;

use std::time::{Duration, Instant};
use tier1::dashboard::{DashboardOptions, write_dashboard};

fn main() {
    println!("| runs | iterations | min ms | median ms | max ms | index.html KiB |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for runs in [100usize, 1000] {
        let t = tempfile::tempdir().expect("tmp");
        let history = t.path().join("history");
        dashboard_history::write_history(&history, runs);
        let mut times: Vec<Duration> = Vec::new();
        let mut size = 0;
        for i in 0..7 {
            let out = t.path().join(format!("site{i}"));
            let opts = DashboardOptions {
                history_root: history.clone(),
                output: out.clone(),
                evidence_root: None,
                now: Some("2026-08-05T00:00:00Z".into()),
                suite_config: None,
                repo_root: std::path::PathBuf::from("."),
                step_summary: false,
                stale_after_days: tier1::dashboard::freshness::DEFAULT_STALE_AFTER_DAYS,
            };
            let start = Instant::now();
            write_dashboard(&opts).expect("dashboard renders");
            times.push(start.elapsed());
            size = std::fs::metadata(out.join("index.html"))
                .map(|m| m.len())
                .unwrap_or(0);
        }
        if let Some(keep) = std::env::var_os("TIER1_DASHBOARD_BENCH_OUT") {
            // Keep the last page for a look in a browser.
            let dest = std::path::Path::new(&keep).join(format!("runs{runs}"));
            tier1::fsx::copy_tree(&t.path().join("site6"), &dest).expect("copy page");
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "| {runs} | {} | {:.1} | {:.1} | {:.1} | {} |",
            times.len(),
            ms(times[0]),
            ms(times[times.len() / 2]),
            ms(times[times.len() - 1]),
            size / 1024
        );
    }
}
