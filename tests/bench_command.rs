//! Command targets: the example Python target runs green; malformed, non-finite, unverified and
//! timed-out command results fail only that target with a message naming the problem.

use std::sync::Arc;
use std::time::Duration;
use tier1::bench::result::status;
use tier1::bench::{CpuBackend, HarnessOptions, alloc::CountingAlloc, run_suite};
use tier1::suite::Suite;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

fn suite(argv: &[&str]) -> Suite {
    let argv: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    let yaml = format!(
        "suite_name: t\nversion: 1\ndefault_profile: smoke\nprofiles:\n  smoke: {{ backend: cpu, warmup: 5, iterations: 5 }}\n\
         targets:\n  - key: ext\n    category: demo\n    target: demo:ext\n    kind: command\n    tolerance: {{ rtol: 1.0e-6, atol: 1.0e-9 }}\n    command: [{}]\n    shapes:\n      smoke: {{ n: 1024, rows: 8 }}\n",
        argv.join(", ")
    );
    Suite::parse(&yaml, "t.yaml").expect("test suite parses")
}

fn run_one(argv: &[&str], timeout: Option<Duration>) -> tier1::bench::result::TargetResult {
    let mut opts = HarnessOptions::new("smoke", "cmd_run");
    opts.timeout = timeout;
    let mut r = run_suite(&suite(argv), Arc::new(CpuBackend), &opts).expect("runs");
    tier1::bench::result::validate(&r).expect("valid file");
    r.targets.remove(0)
}

fn example() -> String {
    format!("{}/examples/command_target.py", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn example_command_target_runs_and_verifies() {
    let t = run_one(&["python3", &example()], None);
    assert_eq!(t.status, status::SUCCEEDED, "{:?}", t.message);
    assert_eq!(t.variants.len(), 2);
    // Every invocation gives one sample per round (at least 6 rounds); invocations are pooled.
    let sampling = t.sampling.as_ref().expect("sampled");
    assert!((1..=10).contains(&sampling.processes), "{sampling:?}");
    assert_eq!(
        t.variants[0].samples_ms.len() as u32,
        6 * sampling.processes
    );
    assert_eq!(
        t.variants[1].samples_ms.len(),
        t.variants[0].samples_ms.len()
    );
    assert!(t.variants[1].verification.as_ref().unwrap().passed);
    assert_eq!(
        t.baseline_file.as_deref(),
        Some("examples/command_target.py")
    );
    assert_eq!(t.work.flops, Some((2.0 * 8.0 * 1024.0).into()));
}

const SIG: &str = r#"{"seed":42,"inputs":[{"name":"x","shape":[4],"dtype":"f32"}]}"#;

fn printer(json: &str) -> Vec<String> {
    vec![
        "python3".into(),
        "-c".into(),
        format!("import sys; sys.stdout.write({json:?})"),
    ]
}

fn run_json(json: &str) -> tier1::bench::result::TargetResult {
    let argv = printer(json);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    run_one(&argv, None)
}

#[test]
fn missing_verification_fails_verification() {
    let t = run_json(&format!(
        r#"{{"schema":"tier1.command_result.v1","variants":[{{"name":"baseline","samples_ms":[2.0],"input_signature":{SIG}}},{{"name":"optimized_x","samples_ms":[1.0],"input_signature":{SIG}}}]}}"#
    ));
    assert_eq!(t.status, status::FAILED_VERIFICATION);
    assert!(
        t.message
            .unwrap()
            .contains("missing verification for optimized_x")
    );
}

#[test]
fn malformed_and_non_finite_results_are_refused() {
    for (json, want) in [
        ("not json".to_string(), "malformed command result"),
        (
            format!(
                r#"{{"schema":"tier1.command_result.v1","variants":[{{"name":"baseline","samples_ms":[NaN],"input_signature":{SIG}}}]}}"#
            ),
            "malformed command result",
        ),
        (
            format!(
                r#"{{"schema":"tier1.command_result.v1","variants":[{{"name":"baseline","samples_ms":[-1.0],"input_signature":{SIG}}}]}}"#
            ),
            "variants[0] (baseline).samples_ms[0]: expected a finite number of milliseconds in 0..=86400000, found -1.0",
        ),
        (
            format!(
                r#"{{"schema":"tier1.command_result.v1","variants":[{{"name":"baseline","samples_ms":[],"input_signature":{SIG}}}]}}"#
            ),
            "samples_ms: expected at least one finite, non-negative sample",
        ),
        (
            format!(
                r#"{{"schema":"other","variants":[{{"name":"baseline","samples_ms":[1.0],"input_signature":{SIG}}}]}}"#
            ),
            "schema: expected \"tier1.command_result.v1\", found \"other\"",
        ),
        (
            format!(
                r#"{{"schema":"tier1.command_result.v1","variants":[{{"name":"fast","samples_ms":[1.0],"input_signature":{SIG}}}]}}"#
            ),
            "variants[0].name: expected \"baseline\"",
        ),
        (
            format!(
                r#"{{"schema":"tier1.command_result.v1","baseline_file":"/abs/x.py","variants":[{{"name":"baseline","samples_ms":[1.0],"input_signature":{SIG}}}]}}"#
            ),
            "baseline_file: expected a repo-relative path",
        ),
    ] {
        let t = run_json(&json);
        assert_eq!(t.status, status::FAILED_ERROR, "{json}");
        let msg = t.message.unwrap();
        assert!(msg.contains(want), "{msg} should contain {want}");
        assert!(t.variants.is_empty());
    }
}

#[test]
fn failing_and_slow_commands_fail_the_target() {
    let t = run_one(&["python3", "-c", "import sys; sys.exit(3)"], None);
    assert_eq!(t.status, status::FAILED_ERROR);
    assert!(t.message.unwrap().contains("exited with exit status: 3"));
    let t = run_one(&["tier1-no-such-program"], None);
    assert!(t.message.unwrap().contains("could not start"));
    let t = run_one(
        &["python3", "-c", "import time; time.sleep(5)"],
        Some(Duration::from_millis(300)),
    );
    assert_eq!(t.status, status::FAILED_TIMEOUT);
    assert!(t.message.unwrap().contains("did not finish within 0.3 s"));
}

#[test]
fn malformed_output_is_shown_in_the_message() {
    let t = run_json("Traceback: oops, not the result\nsecond line");
    let msg = t.message.unwrap();
    assert!(
        msg.contains(r#"stdout began: "Traceback: oops, not the result\nsecond line""#),
        "{msg}"
    );
    let long = format!("{}TAIL", "x".repeat(5000));
    let msg = run_json(&long).message.unwrap();
    assert!(
        msg.contains("xxxx") && !msg.contains("TAIL"),
        "snippet is bounded: {}",
        msg.len()
    );
    assert!(msg.len() < 1000, "{}", msg.len());
}

/// Whether process `pid` is alive (a zombie counts as dead: it only waits to be reaped).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

#[test]
fn a_timed_out_command_target_takes_its_children_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let script = format!("sleep 60 & echo $! > {}; wait", pidfile.display());
    let t = run_one(&["sh", "-c", &script], Some(Duration::from_millis(500)));
    assert_eq!(t.status, status::FAILED_TIMEOUT);
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !alive(pid)
    });
    if !gone {
        let _ = std::process::Command::new("kill")
            .arg(pid.to_string())
            .status();
    }
    assert!(gone, "the target's child {pid} outlived the timeout");
}

#[test]
fn a_process_that_escapes_the_group_and_holds_stdout_cannot_hang_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let ok = format!(
        r#"{{"schema":"tier1.command_result.v1","variants":[{{"name":"baseline","samples_ms":[1.0],"input_signature":{SIG}}}]}}"#
    );
    // The escaped process (its own session and group) keeps the command's stdout open. Each run
    // has its own pid file: the command prints only once its escapee has left the group (a stale
    // file let it exit first, and the group kill took the escapee before its setsid).
    let script = |p: &std::path::Path| {
        format!(
            "setsid sh -c 'echo $$ > {p}; exec sleep 60' & while [ ! -s {p} ]; do sleep 0.01; done; printf '%s' '{ok}'",
            p = p.display()
        )
    };
    let kill_escaped = |p: &std::path::Path| {
        if let Ok(pid) = std::fs::read_to_string(p) {
            let _ = std::process::Command::new("kill").arg(pid.trim()).status();
        }
    };
    let first = dir.path().join("escaped-1.pid");
    let started = std::time::Instant::now();
    let t = run_one(
        &["sh", "-c", &script(&first)],
        Some(Duration::from_secs(30)),
    );
    let took = started.elapsed();
    kill_escaped(&first);
    assert_eq!(t.status, status::FAILED_ERROR, "{:?}", t.message);
    let msg = t.message.unwrap();
    assert!(msg.contains("stdout was still open"), "{msg}");
    // Well under the 30 s timeout (the harness's process-wide lock may queue it behind others).
    assert!(took < Duration::from_secs(20), "waited {took:?}");
    // A timeout shorter than the grace is enforced too.
    let second = dir.path().join("escaped-2.pid");
    let started = std::time::Instant::now();
    let t = run_one(
        &["sh", "-c", &script(&second)],
        Some(Duration::from_millis(500)),
    );
    let took = started.elapsed();
    kill_escaped(&second);
    assert_eq!(t.status, status::FAILED_TIMEOUT, "{:?}", t.message);
    assert!(took < Duration::from_secs(20), "waited {took:?}");
}

#[test]
fn extreme_finite_samples_fail_that_target_only() {
    let huge = printer(&format!(
        r#"{{"schema":"tier1.command_result.v1","variants":[{{"name":"baseline","samples_ms":[1e308,1e308],"input_signature":{SIG}}}]}}"#
    ));
    let tiny = printer(&format!(
        r#"{{"schema":"tier1.command_result.v1","variants":[{{"name":"baseline","samples_ms":[1.0,1.0],"input_signature":{SIG}}},{{"name":"optimized_x","samples_ms":[1e-300,1e-300],"input_signature":{SIG},"verification":{{"passed":true,"elements":4,"mismatches":0,"max_abs_err":0.0,"max_rel_err":0.0}}}}]}}"#
    ));
    let good = printer(&format!(
        r#"{{"schema":"tier1.command_result.v1","variants":[{{"name":"baseline","samples_ms":[2.0,2.0,2.0,2.0,2.0,2.0],"input_signature":{SIG}}},{{"name":"optimized_x","samples_ms":[1.0,1.0,1.0,1.0,1.0,1.0],"input_signature":{SIG},"verification":{{"passed":true,"elements":4,"mismatches":0,"max_abs_err":0.0,"max_rel_err":0.0}}}}]}}"#
    ));
    let list = |argv: &[String]| {
        argv.iter()
            .map(|a| format!("{a:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let target = |key: &str, argv: &[String]| {
        format!(
            "  - key: {key}\n    category: demo\n    target: demo:{key}\n    kind: command\n    tolerance: {{ rtol: 1.0e-6, atol: 1.0e-9 }}\n    command: [{}]\n",
            list(argv)
        )
    };
    let yaml = format!(
        "suite_name: t\nversion: 1\ndefault_profile: smoke\nprofiles:\n  smoke: {{ backend: cpu, warmup: 5, iterations: 5, budget_s: 0.1 }}\ntargets:\n{}{}{}",
        target("huge", &huge),
        target("tiny", &tiny),
        target("good", &good)
    );
    let suite = Suite::parse(&yaml, "t.yaml").unwrap();
    let r = run_suite(
        &suite,
        Arc::new(CpuBackend),
        &HarnessOptions::new("smoke", "extreme"),
    )
    .expect("the run goes on");
    let by = |k: &str| r.targets.iter().find(|t| t.key == k).unwrap();
    assert_eq!(by("huge").status, status::FAILED_ERROR);
    let msg = by("huge").message.clone().unwrap();
    assert!(
        msg.contains("samples_ms[0]") && msg.contains("1e308"),
        "{msg}"
    );
    assert_eq!(by("tiny").status, status::FAILED_ERROR);
    let msg = by("tiny").message.clone().unwrap();
    assert!(msg.contains("best_speedup"), "{msg}");
    assert_eq!(
        by("good").status,
        status::SUCCEEDED,
        "{:?}",
        by("good").message
    );
    tier1::bench::result::validate(&r).expect("valid file");
    let dir = tempfile::tempdir().unwrap();
    tier1::bench::harness::write_results(&dir.path().join("run"), &r).expect("written");
}
