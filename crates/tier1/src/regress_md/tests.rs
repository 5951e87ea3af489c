//! Tests of `regression_summary.md`: its cells, and whole summaries against their snapshots.

use super::cells::{inline, num, opt_num, signed};
use super::*;
use crate::aggregate::fixtures::*;
use crate::history::model::ChangeRow;
use crate::recheck::{RecheckResult, apply};
use crate::regress::compare;
use crate::suite::Thresholds;

#[test]
fn cells_are_escaped_and_numbers_look_like_the_reference() {
    assert_eq!(cell("a|b\nc`d"), "a\\|b c'd");
    assert_eq!(inline("a|b"), "a|b");
    assert_eq!(
        (num(2.0), num(2.49), num(-0.5)),
        ("2.0".into(), "2.49".into(), "-0.5".into())
    );
    assert_eq!(
        (signed(5.0), signed(-11.654), signed(0.0)),
        ("+5.00".into(), "-11.65".into(), "+0.00".into())
    );
    assert_eq!(opt_num(None::<f64>), "-");
}

#[test]
fn no_baseline_markdown() {
    let current = summary(
        "20260816_031500_tier1_nightly_abcdef12",
        vec![speed_opt("block_scaling", 1.45, 0.0740689655)],
    );
    let mut r = compare(&current, None, Thresholds::default()).expect("no anchor");
    r.warnings
        .push("Tier-1 history contains runs but no eligible prior baseline".into());
    insta::assert_snapshot!(render(&r));
}

#[test]
fn comparison_markdown() {
    let anchor = summary(
        "tier1_anchor",
        vec![
            speed_opt("llama_3_1_8b", 2.49, 5.278),
            speed_opt("persistent_decode", 11.93, 0.118),
            speed_opt("block_scaling", 1.45, 0.0740689655),
            memory_target("kv_standard", 1024.0, 50.0),
            speed_opt("gradient_fusion", 1.21, 0.826),
            speed_opt("gone", 2.0, 1.0),
            speed_opt("flashattention4_alibi", 10.0, 5.0),
        ],
    );
    let current = summary(
        "tier1_new",
        vec![
            speed_opt("llama_3_1_8b", 2.20, 5.974),
            speed_opt("persistent_decode", 11.93, 0.2),
            speed_opt("block_scaling", 1.60, 0.067),
            memory_target("kv_standard", 1024.0, 40.0),
            with_status(speed_opt("gradient_fusion", 1.0, 1.0), "failed_no_speedup"),
            speed_opt("fresh|pipe", 3.0, 1.0),
            speed_opt("flashattention4_alibi", 12.0, 5.0 * 10.0 / 12.0),
        ],
    );
    let th = Thresholds::default();
    let first = compare(&current, Some(&anchor), th).expect("comparable");
    let recheck = RecheckResult {
        target: "labs/persistent_decode:persistent_decode".into(),
        key: "persistent_decode".into(),
        recheck_output_json: "x.json".into(),
        row: Some(speed_opt("persistent_decode", 11.93, 0.12)),
    };
    let r = apply(
        first,
        &current,
        &anchor,
        &[recheck],
        th,
        &Default::default(),
    );
    assert_eq!(r.suppressed_regressions.len(), 1);
    let md = render(&r);
    assert!(md.contains("| labs/llama_3_1_8b:llama_3_1_8b | speedup | 2.49 | 2.2 | -11.65 |"));
    assert!(md.contains("- Suppressed regressions after recheck: 1"));
    assert!(md.contains("- `labs/fresh|pipe:fresh|pipe` (succeeded)"));
    assert!(!md.contains("## Notes"));
    insta::assert_snapshot!(md);
}

#[test]
fn statistical_markdown_shows_verdicts_noise_and_unknown_targets() {
    // Precise measurements (±0.5 %) on a young history (the prior: 2 % noise over 8 runs).
    let anchor = precise(summary(
        "tier1_anchor",
        vec![
            speed_opt("steady", 2.0, 50.0),
            speed_opt("slower", 2.0, 50.0),
            speed_opt("noisy", 2.0, 50.0),
        ],
    ));
    let current = summary(
        "tier1_new",
        vec![
            // -6 %: over the 5 % threshold but not significant at 2 % run-to-run noise.
            measured(speed_opt("steady", 1.88, 53.2), 0.5),
            // -20 %: over the threshold and significant.
            measured(speed_opt("slower", 1.6, 62.5), 0.5),
            // -7 %, measured imprecisely: the test says unknown, never a regression on
            // noise alone, and never a silent pass either.
            measured(speed_opt("noisy", 1.86, 53.8), 3.0),
        ],
    );
    let r = compare(&current, Some(&anchor), Thresholds::default()).expect("comparable");
    let reasons = |rows: &[ChangeRow]| -> Vec<String> {
        rows.iter()
            .map(|r| format!("{} {}", r.target(), r.reason()))
            .collect()
    };
    assert_eq!(reasons(&r.regressions), ["labs/slower:slower speedup"]);
    assert_eq!(
        reasons(&r.within_noise),
        [
            "labs/steady:steady speedup",
            "labs/steady:steady optimized_latency",
            "labs/noisy:noisy speedup",
            "labs/noisy:noisy optimized_latency"
        ]
    );
    let unknown: Vec<&str> = r.inconclusive.iter().map(|i| i.target.as_str()).collect();
    assert_eq!(unknown, ["labs/steady:steady", "labs/noisy:noisy"]);
    assert!(
        r.inconclusive[1]
            .reason
            .contains("speedup 2.000x -> 1.860x (-7.0 %): a 5.00 % worsening is not ruled out"),
        "{}",
        r.inconclusive[1].reason
    );
    let md = render(&r);
    assert!(md.contains("## Within Noise"));
    assert!(md.contains("## Unknown"));
    assert!(md.contains("| labs/slower:slower | regressed |"), "{md}");
    assert!(md.contains("| labs/noisy:noisy | unknown |"), "{md}");
    insta::assert_snapshot!(md);
}
