//! Tests of parsing and validating a suite file as a whole (`Suite::parse`).

use super::*;

#[test]
fn embedded_suite_has_its_built_in_targets_once_each() {
    // Which targets, in which order, is the table's (`bench::table`'s tests compare the
    // embedded suite with it); here: built-in targets, each key once.
    let s = Suite::embedded();
    let keys: std::collections::BTreeSet<_> = s.targets.iter().map(|t| t.key.as_str()).collect();
    assert_eq!(keys.len(), s.targets.len());
    assert!(!keys.is_empty());
    assert!(s.targets.iter().all(|t| t.kind == TargetKind::Builtin));
    assert_eq!(
        s.target("kv_standard").unwrap().optimization_goal,
        Goal::Memory
    );
    assert!(s.profile("minimal").is_some() && s.profile("cpu").is_some());
    assert_eq!(s.thresholds, Thresholds::default());
}

fn with(replace: &str, by: &str) -> Result<Suite, SuiteError> {
    assert!(
        EMBEDDED_TIER1_YAML.contains(replace),
        "fixture text {replace:?} missing"
    );
    Suite::parse(&EMBEDDED_TIER1_YAML.replacen(replace, by, 1), "t.yaml")
}

#[test]
fn unknown_field_is_an_error_with_a_line() {
    let e = with("suite_name: tier1", "suite_name: tier1\nsuite_nmae: x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("suite_nmae") && e.contains("line"), "{e}");
}

#[test]
fn duplicate_target_and_bad_goal_are_errors() {
    let e = with("key: kv_standard", "key: block_scaling")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("duplicate target key \"block_scaling\"") && e.contains("line"),
        "{e}"
    );
    let e = with("optimization_goal: memory", "optimization_goal: throughput")
        .unwrap_err()
        .to_string();
    assert!(e.contains("throughput"), "{e}");
}

/// The 1-based line of the first line containing `needle` after the first containing `after`.
fn line_after(text: &str, after: &str, needle: &str) -> usize {
    let start = text.lines().position(|l| l.contains(after)).unwrap();
    start
        + 1
        + text
            .lines()
            .skip(start)
            .position(|l| l.contains(needle))
            .unwrap()
}

#[test]
fn rule_errors_point_at_the_item_they_are_about() {
    let text = EMBEDDED_TIER1_YAML;
    let kv = text.find("key: kv_standard").unwrap();
    let tol = kv + text[kv..].find("tolerance: {").unwrap();
    let bad = format!(
        "{}tolerance: {{ rtol: -1.0, atol: 0.0 }}{}",
        &text[..tol],
        &text[tol + text[tol..].find('\n').unwrap()..]
    );
    let e = Suite::parse(&bad, "t.yaml").unwrap_err().to_string();
    let want = line_after(text, "key: kv_standard", "tolerance:");
    assert!(e.contains(&format!("line {want}:")), "{e}");
    assert!(e.contains("targets.3.tolerance"), "{e}");
}

#[test]
fn a_zero_timeout_is_refused_at_its_line() {
    let e = with("timeout_s: 600", "timeout_s: 0")
        .unwrap_err()
        .to_string();
    let want = EMBEDDED_TIER1_YAML
        .lines()
        .position(|l| l.contains("timeout_s: 600"))
        .unwrap()
        + 1;
    assert!(
        e.contains(&format!("line {want}:")) && e.contains("timeout_s must be at least 1, found 0"),
        "{e}"
    );
}

#[test]
fn parser_errors_name_the_file_and_line_in_our_words() {
    let e = with("version: 1", "version: 1\nversion: 2")
        .unwrap_err()
        .to_string();
    let first = EMBEDDED_TIER1_YAML
        .lines()
        .position(|l| l.starts_with("version: 1"))
        .unwrap()
        + 1;
    assert!(
        e.contains(&format!(
            "line {}: duplicate key \"version\" (first at line {first})",
            first + 1
        )),
        "{e}"
    );
    assert!(
        !e.contains("DuplicateKeyPolicy") && !e.contains("Options"),
        "{e}"
    );
    let e = with("    warmup: 5", "    warmup: five")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t.yaml: line "), "{e}");
    assert!(
        !e.contains('\n') && !e.contains("<input>"),
        "one line, no snippet: {e}"
    );
    assert!(e.contains("expected a whole number"), "{e}");
}

#[test]
fn a_single_benchmark_must_be_a_command() {
    let e = with("optimization_goal: memory", "optimization_goal: time")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("targets.3.optimization_goal")
            && e.contains("needs kind: command, found kind: builtin"),
        "{e}"
    );
    assert_eq!(Goal::from_stored(Some("time")), Goal::Time);
    assert_eq!(Goal::Time.as_str(), "time");
}

#[test]
fn the_build_step_is_an_argv_that_leaves_the_digest_alone_when_absent() {
    let s = with(
        "suite_name: tier1",
        "suite_name: tier1\nbuild: [make, -C, bench]",
    )
    .unwrap();
    assert_eq!(s.build, ["make", "-C", "bench"]);
    assert_ne!(s.config_digest(), Suite::embedded().config_digest());
    assert!(Suite::embedded().build.is_empty());
    let line = EMBEDDED_TIER1_YAML
        .lines()
        .position(|l| l.starts_with("suite_name: tier1"))
        .unwrap()
        + 2;
    let e = with("suite_name: tier1", "suite_name: tier1\nbuild: ['']")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "line {line}: build: expected an argv whose first element names the program"
        )),
        "{e}"
    );
    let e = with("suite_name: tier1", "suite_name: tier1\nbuild: make")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(&format!("t.yaml: line {line}")), "{e}");
}

#[test]
fn duplicate_mapping_key_is_an_error() {
    let e = with("version: 1", "version: 1\nversion: 2")
        .unwrap_err()
        .to_string();
    assert!(e.to_lowercase().contains("duplicate"), "{e}");
}
