//! Harness behaviour on the smoke profile: every built-in target green, verification failures, injected
//! slowdowns, signature mismatches, panics and timeouts fail only their target, and the results
//! file round-trips through `validate` and `summarize`.

use std::sync::Arc;
use std::time::Duration;
use tier1::bench::backend::{BackendError, Variant, VariantRun, Workload};
use tier1::bench::result::{self, ResultsFile, status};
use tier1::bench::{CpuBackend, HarnessOptions, alloc::CountingAlloc, run_suite, write_results};
use tier1::suite::Suite;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

fn run(only: &[&str], hook: Option<tier1::bench::harness::Hook>) -> ResultsFile {
    let mut opts = HarnessOptions::new("smoke", "20260101_000000_tier1_test");
    opts.only = only.iter().map(|s| s.to_string()).collect();
    opts.hook = hook;
    run_suite(&Suite::embedded(), Arc::new(CpuBackend), &opts).expect("suite runs")
}

/// Wraps a variant: `times` runs per run, an optional output corruption, optional panic or sleep.
struct Wrapped {
    inner: Box<dyn VariantRun>,
    times: u32,
    corrupt: bool,
    panic: bool,
    sleep: Duration,
}

impl VariantRun for Wrapped {
    fn run(&mut self) -> Result<Option<f64>, BackendError> {
        assert!(!self.panic, "injected panic");
        for _ in 0..self.times {
            self.inner.run()?;
        }
        Ok(None)
    }
    fn output(&mut self) -> Result<Vec<f32>, BackendError> {
        assert!(!self.panic, "injected panic");
        std::thread::sleep(self.sleep);
        let mut out = self.inner.output()?;
        if self.corrupt {
            out[0] += 1000.0;
        }
        Ok(out)
    }
}

fn wrap(v: Variant, f: impl FnOnce(&mut Wrapped)) -> Variant {
    let mut w = Wrapped {
        inner: v.runner,
        times: 1,
        corrupt: false,
        panic: false,
        sleep: Duration::ZERO,
    };
    f(&mut w);
    Variant {
        name: v.name,
        signature: v.signature,
        runner: Box::new(w),
    }
}

fn modify_optimized(key: &'static str, f: fn(&mut Wrapped)) -> tier1::bench::harness::Hook {
    Arc::new(move |k: &str, w: &mut Workload| {
        if k == key {
            let v = w.variants.pop().expect("optimized variant");
            w.variants.push(wrap(v, f));
        }
    })
}

#[test]
fn smoke_profile_runs_every_builtin_target_green_and_summarizes() {
    let r = run(&[], None);
    let builtin: Vec<&str> = tier1::bench::builtin_keys().collect();
    assert_eq!(
        r.targets.iter().map(|t| t.key.as_str()).collect::<Vec<_>>(),
        builtin
    );
    for t in &r.targets {
        assert_eq!(t.status, status::SUCCEEDED, "{}: {:?}", t.key, t.message);
        assert_eq!(t.variants.len(), 2);
        // Rounds: at least the smoke profile's minimum (6), one sample per variant each.
        let rounds = t.sampling.as_ref().expect("sampled").rounds as usize;
        assert!(rounds >= 6, "{}: {rounds} rounds", t.key);
        assert_eq!(t.variants[0].samples_ms.len(), rounds);
        assert_eq!(t.variants[1].samples_ms.len(), rounds);
        let m = t.metrics.measurement.as_ref().expect("measurement record");
        assert_eq!(m.rounds as usize, rounds);
        assert!(m.clean_rounds >= 1 && m.clean_rounds as usize <= rounds);
        let v = t.variants[1].verification.as_ref().expect("verification");
        assert!(v.passed && v.elements > 0, "{}: {v:?}", t.key);
        // Every built-in target's results name the peak its fraction of peak is measured against.
        assert!(t.peak_class.is_some(), "{}: no peak class", t.key);
    }
    let kv = r.targets.iter().find(|t| t.key == "kv_standard").unwrap();
    assert_eq!(kv.peak_class, Some(result::PeakClass::Memory));
    let savings = kv.metrics.best_memory_savings_pct.unwrap().get();
    assert!((40.0..55.0).contains(&savings), "kv savings {savings}");
    result::validate(&r).expect("valid");
    let rows = result::summarize(&r, &Suite::embedded()).expect("summary rows");
    assert_eq!(rows.len(), builtin.len());
    for row in &rows {
        let (b, s) = (row.baseline_time_ms.unwrap(), row.best_speedup.unwrap());
        assert_eq!(row.best_optimized_time_ms, Some((b.get() / s.get()).into()));
        assert!(
            row.baseline_file
                .as_deref()
                .unwrap()
                .starts_with("crates/tier1/src/bench/targets/")
        );
    }
    let kv_row = rows.iter().find(|r| r.key == "kv_standard").unwrap();
    let mb = kv_row.baseline_memory_mb.unwrap().get();
    assert_eq!(
        kv_row.best_optimized_memory_mb,
        Some((mb * (1.0 - savings / 100.0)).into())
    );

    // The file round-trips and is never overwritten.
    let dir = tempfile::tempdir().unwrap();
    let path = write_results(dir.path(), &r).unwrap();
    let before = std::fs::read(&path).unwrap();
    let back: ResultsFile = tier1::json::read(&path).unwrap();
    assert_eq!(back, r);
    assert_eq!(result::summarize(&back, &Suite::embedded()).unwrap(), rows);
    let err = write_results(dir.path(), &r).unwrap_err().to_string();
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn wrong_optimized_output_fails_verification() {
    let r = run(
        &["block_scaling"],
        Some(modify_optimized("block_scaling", |w| w.corrupt = true)),
    );
    let t = &r.targets[0];
    assert_eq!(t.status, status::FAILED_VERIFICATION);
    let msg = t.message.as_deref().unwrap();
    assert!(
        msg.contains("optimized_fused_dequant_blocked output differs from baseline"),
        "{msg}"
    );
    let v = t.variants[1].verification.as_ref().unwrap();
    assert!(
        !v.passed && v.mismatches >= 1 && v.max_abs_err >= 999.0,
        "{v:?}"
    );
    assert_eq!(t.metrics.best_speedup, None);
}

#[test]
fn injected_slowdown_variant_has_a_lower_speedup() {
    let hook: tier1::bench::harness::Hook = Arc::new(|k: &str, w: &mut Workload| {
        if k == "flashattention4_alibi" {
            // A second copy of the optimized variant that does its work three times per run.
            let again = tier1::bench::cpu_workload(k, &w_shapes(), tier1::bench::rng::SEED)
                .unwrap()
                .variants
                .pop()
                .unwrap();
            let mut slow = wrap(again, |w| w.times = 3);
            slow.name = "optimized_slow".into();
            w.variants.push(slow);
        }
    });
    let r = run(&["flashattention4_alibi"], Some(hook));
    let t = &r.targets[0];
    assert_eq!(t.variants.len(), 3);
    let speed =
        |i: usize| t.variants[0].stats.median_ms.get() / t.variants[i].stats.median_ms.get();
    assert!(
        speed(2) < speed(1),
        "slow {} vs fast {}",
        speed(2),
        speed(1)
    );
    assert_eq!(
        t.metrics.best_optimization.as_deref(),
        Some("optimized_flash_online_softmax")
    );
}

fn w_shapes() -> tier1::bench::backend::Shapes {
    Suite::embedded()
        .target("flashattention4_alibi")
        .unwrap()
        .shapes["smoke"]
        .clone()
}

#[test]
fn input_signature_mismatch_fails_the_target() {
    let hook: tier1::bench::harness::Hook = Arc::new(|k: &str, w: &mut Workload| {
        if k == "gradient_fusion" {
            w.variants[1].signature.seed = 7;
        }
    });
    let r = run(&["gradient_fusion"], Some(hook));
    let t = &r.targets[0];
    assert_eq!(t.status, status::FAILED_VERIFICATION);
    let msg = t.message.as_deref().unwrap();
    assert!(
        msg.contains("input signature of optimized_bucketed (seed=7")
            && msg.contains("baseline (seed=42"),
        "{msg}"
    );
}

#[test]
fn panic_and_timeout_fail_only_their_target() {
    let r = run(
        &["persistent_decode", "gradient_fusion"],
        Some(modify_optimized("persistent_decode", |w| w.panic = true)),
    );
    assert_eq!(r.targets[0].status, status::FAILED_ERROR);
    assert!(
        r.targets[0]
            .message
            .as_deref()
            .unwrap()
            .contains("panicked: injected panic")
    );
    assert_ran_to_completion(&r.targets[1]);
    result::validate(&r).expect("a failed target still makes a valid file");

    let mut opts = HarnessOptions::new("smoke", "timeout_run");
    opts.only = vec!["gradient_fusion".into(), "kv_standard".into()];
    opts.timeout = Some(Duration::from_millis(300));
    opts.hook = Some(modify_optimized("gradient_fusion", |w| {
        w.sleep = Duration::from_secs(2)
    }));
    let r = run_suite(&Suite::embedded(), Arc::new(CpuBackend), &opts).unwrap();
    // Suite order: kv_standard comes before gradient_fusion.
    assert_eq!(r.targets[1].key, "gradient_fusion");
    assert_eq!(r.targets[1].status, status::FAILED_TIMEOUT);
    let msg = r.targets[1].message.as_deref().unwrap();
    assert!(msg.contains("did not finish within 0.3 s"), "{msg}");
    assert_ran_to_completion(&r.targets[0]);
}

/// The other target was measured and verified (its speed verdict is not this test's concern).
fn assert_ran_to_completion(t: &tier1::bench::result::TargetResult) {
    assert!(t.failure.is_none(), "{}: {:?}", t.key, t.failure);
    assert_eq!(t.variants.len(), 2, "{}", t.key);
    assert!(
        t.variants[1]
            .verification
            .as_ref()
            .is_some_and(|v| v.passed)
    );
    assert_ne!(t.status, status::FAILED_VERIFICATION);
}

#[test]
fn tampered_or_foreign_results_are_refused() {
    let mut r = run(&["persistent_decode"], None);
    let suite = Suite::embedded();
    let rows = result::summarize(&r, &suite).unwrap();
    assert_eq!(rows.iter().filter(|x| x.status == "missing").count(), 5);
    r.targets[0].variants[1].samples_ms[0] *= 0.5;
    let e = result::summarize(&r, &suite).unwrap_err().to_string();
    assert!(e.contains("stored statistics differ"), "{e}");
    let mut r2 = run(&["persistent_decode"], None);
    r2.targets[0].status = status::SUCCEEDED.into();
    r2.targets[0].metrics.best_speedup = Some(100.0.into());
    let e = result::validate(&r2).unwrap_err().to_string();
    assert!(e.contains("differs from the one derived"), "{e}");
    r2.suite_version = 9;
    let e = result::summarize(&r2, &suite).unwrap_err().to_string();
    assert!(
        e.contains("results are for suite tier1 v9, expected tier1 v1"),
        "{e}"
    );
}

#[test]
fn unknown_profile_and_backend_mismatch_are_refused() {
    let opts = HarnessOptions::new("nope", "r1");
    let e = run_suite(&Suite::embedded(), Arc::new(CpuBackend), &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("profile \"nope\" is not in suite tier1"), "{e}");
    let opts = HarnessOptions::new("minimal", "r1");
    let e = run_suite(&Suite::embedded(), Arc::new(CpuBackend), &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("is for the cuda backend, found backend cpu"),
        "{e}"
    );
}
