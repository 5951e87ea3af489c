//! The real-run part of `cargo bench --bench integrity` (opt-in: `TIER1_INTEGRITY_REAL_RUNS=N`).

/// Run the real nights when asked for.
pub fn main() {
    let runs: usize = std::env::var("TIER1_INTEGRITY_REAL_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if runs == 0 {
        println!(
            "\nreal runs: skipped (TIER1_INTEGRITY_REAL_RUNS=20 runs 20 unchanged cpu nights and the injected-slowdown nights; about 1 hour on 2 cores)"
        );
    }
}
