//! Tests of the pair estimates: every round counted, common drift cancelled, the schema-2 clean
//! rounds, and the passes of an anchor.

use super::*;

#[test]
fn paired_ratios_cancel_common_drift() {
    // Both sides drift upward by 50 % over the run; the per-round ratio stays exactly 2.
    let base: Vec<f64> = (0..40)
        .map(|i| 10.0 * (1.0 + 0.0125 * f64::from(i)))
        .collect();
    let opt: Vec<f64> = base.iter().map(|b| b / 2.0).collect();
    let e = pair(&base, &opt).unwrap();
    assert_eq!((e.pairs, e.clean), (40, 40), "every round counts");
    assert!((e.speedup - 2.0).abs() < 1e-12);
    assert!(e.speedup_half_width_pct().unwrap() < 1e-9);
    assert!(e.ratio_cv < 1e-12);
    // The optimized time itself moved with the drift: its interval is wide.
    assert!(e.optimized_half_width_pct().unwrap() > 2.0);
    assert!(!e.within(1.0));
    // baseline / speedup is the optimized estimate.
    assert!((e.baseline_ms / e.speedup - e.optimized_ms).abs() < 1e-12);
}

#[test]
fn interfered_rounds_do_not_move_the_median() {
    // 2:1 pair; every third round one side is stalled by 60 % (interference only adds time).
    let (mut base, mut opt) = (Vec::new(), Vec::new());
    for i in 0..60 {
        let jitter = 1.0 + 0.001 * f64::from(i % 7);
        let (mut b, mut o) = (10.0 * jitter, 5.0 * jitter);
        match i % 6 {
            0 => b *= 1.6,
            3 => o *= 1.6,
            _ => {}
        }
        base.push(b);
        opt.push(o);
    }
    let e = pair(&base, &opt).unwrap();
    assert!((e.speedup - 2.0).abs() < 1e-9, "{e:?}");
    assert!(e.within(1.0), "{e:?}");
    assert!((e.optimized_ms / 5.0 - 1.0).abs() < 0.01, "{e:?}");
    assert!(e.ratio_cv > 0.1, "all rounds: {}", e.ratio_cv);
}

#[test]
fn the_clean_rounds_rule_keeps_a_quarter_of_independent_noise() {
    // Independent noise on both sides: about a quarter of the rounds are clean under schema 2,
    // every round is used under schema 3.
    let mut rng = crate::bench::rng::Rng::new(7, 1);
    let mut noise = || 1.0 + 0.05 * (rng.below(1000) as f64 / 1000.0);
    let base: Vec<f64> = (0..400).map(|_| 10.0 * noise()).collect();
    let opt: Vec<f64> = (0..400).map(|_| 5.0 * noise()).collect();
    let clean = pair_clean(&base, &opt).unwrap();
    let all = pair(&base, &opt).unwrap();
    assert!((80..=120).contains(&clean.clean), "{}", clean.clean);
    assert_eq!(all.clean, 400);
    assert!(
        all.speedup_half_width_pct().unwrap() < clean.speedup_half_width_pct().unwrap(),
        "all rounds give the narrower interval: {all:?} {clean:?}"
    );
    assert_eq!(Estimator::for_schema(2), Estimator::CleanRounds);
    assert_eq!(Estimator::for_schema(3), Estimator::PairedMedian);
}

#[test]
fn few_or_bad_samples() {
    let e = pair(&[2.0, 2.0], &[1.0, 1.0]).unwrap();
    assert_eq!((e.pairs, e.speedup, e.speedup_ci), (2, 2.0, None));
    assert!(!e.within(50.0));
    let e = pair_clean(&[2.0], &[1.0]).unwrap();
    assert_eq!((e.pairs, e.clean, e.speedup), (1, 1, 2.0));
    assert!(pair(&[0.0, 1.0], &[1.0, 0.0]).is_none());
    assert!(pair(&[], &[]).is_none());
}

#[test]
fn precision_is_judged_on_the_best_verified_variant() {
    let base = vec![10.0; 8];
    let tight = vec![5.0; 8];
    let loose: Vec<f64> = (0..8).map(|i| 1.0 + f64::from(i)).collect();
    let samples = vec![base.clone(), tight.clone(), loose.clone()];
    // The loose variant is faster (1-8 ms against 5 ms) but unverified: only the tight counts.
    assert!(precise_now(&samples, &[false, true, false], 1.0));
    assert!(!precise_now(&samples, &[false, true, true], 1.0));
    assert!(precise_now(&[base], &[false], 1.0));
}

/// Three passes of 30 rounds at speedup 2 (times 10 / 5 ms, ±0.2 % jitter); `disturb` scales
/// one pass's optimized times.
fn three_passes(disturbed: Option<(usize, f64)>) -> (Vec<f64>, Vec<f64>) {
    let (mut base, mut opt) = (Vec::new(), Vec::new());
    for pass in 0..3 {
        for i in 0..30 {
            let j = 1.0 + 0.002 * f64::from(i % 5);
            let slow = match disturbed {
                Some((p, f)) if p == pass => f,
                _ => 1.0,
            };
            base.push(10.0 * j);
            opt.push(5.0 * j * slow);
        }
    }
    (base, opt)
}

#[test]
fn a_disturbed_pass_is_left_out_of_the_anchor() {
    let (base, opt) = three_passes(Some((1, 1.3)));
    let e = pooled(Estimator::PairedMedian, &base, &opt, &[(30, 30); 3]).unwrap();
    let flags: Vec<bool> = e.passes.iter().map(|p| p.outlier).collect();
    assert_eq!(flags, [false, true, false], "{e:?}");
    assert!((e.speedup - 2.0).abs() < 1e-9, "{e:?}");
    assert!((e.optimized_ms - 5.0).abs() < 0.02, "{e:?}");
    assert_eq!(e.pairs, 90);
    // The pooled interval is the kept rounds' own.
    assert!(e.optimized_half_width_pct().unwrap() < 1.0, "{e:?}");
}

#[test]
fn agreeing_passes_are_all_kept() {
    let (base, opt) = three_passes(None);
    let e = pooled(Estimator::PairedMedian, &base, &opt, &[(30, 30); 3]).unwrap();
    assert!(e.passes.iter().all(|p| !p.outlier), "{e:?}");
    assert!((e.speedup - 2.0).abs() < 1e-9);
    // A pass 2 % off is within the floor's 3.5 robust SDs: run-to-run noise, not a disturbance.
    let (base, opt) = three_passes(Some((2, 1.02)));
    let e = pooled(Estimator::PairedMedian, &base, &opt, &[(30, 30); 3]).unwrap();
    assert!(e.passes.iter().all(|p| !p.outlier), "{e:?}");
    let slow = e.passes[2].optimized_ms / e.passes[0].optimized_ms;
    assert!(
        (slow - 1.02).abs() < 1e-9,
        "each pass keeps its own estimate: {e:?}"
    );
}

/// An imported tool reports its own number of samples per benchmark: each variant's passes are
/// split by its own counts, and a disturbed pass is still found.
#[test]
fn passes_with_other_counts_per_variant_are_split_by_each_variant_s_own() {
    let (base, opt) = three_passes(Some((1, 1.3)));
    // Keep the first 20 optimized samples of each pass: 20 per pass against the baseline's 30.
    let opt: Vec<f64> = opt.chunks(30).flat_map(|c| c[..20].to_vec()).collect();
    let e = pooled(Estimator::PairedMedian, &base, &opt, &[(30, 20); 3]).unwrap();
    let flags: Vec<bool> = e.passes.iter().map(|p| p.outlier).collect();
    assert_eq!(flags, [false, true, false], "{e:?}");
    assert_eq!(e.passes[0].rounds, 20);
    assert!((e.optimized_ms - 5.0).abs() < 0.05, "{e:?}");
    assert!(pooled(Estimator::PairedMedian, &base, &opt, &[(30, 30); 3]).is_none());
}

#[test]
fn passes_that_do_not_add_up_are_refused() {
    let (base, opt) = three_passes(None);
    assert!(pooled(Estimator::PairedMedian, &base, &opt, &[(30, 30); 2]).is_none());
    assert!(
        pooled(
            Estimator::PairedMedian,
            &base,
            &opt,
            &[(30, 30), (30, 30), (31, 31)]
        )
        .is_none()
    );
}

#[test]
fn never_more_than_a_minority_of_passes_is_left_out() {
    let mut passes: Vec<PassEstimate> = [1.0, 1.0, 1.5, 2.0, 2.5]
        .iter()
        .map(|&s| PassEstimate {
            rounds: 10,
            speedup: s,
            optimized_ms: 1.0,
            outlier: false,
        })
        .collect();
    mark_outlier_passes(&mut passes);
    assert!(passes.iter().filter(|p| p.outlier).count() <= 2);
    let mut two = passes[..2].to_vec();
    two[1].speedup = 9.0;
    mark_outlier_passes(&mut two);
    assert!(
        two.iter().all(|p| !p.outlier),
        "two passes cannot outvote each other"
    );
}
