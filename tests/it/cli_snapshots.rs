//! Snapshots of what the binaries print for people and programs: every binary's and subcommand's
//! `--help`, and the shape of `tier1-nightly`'s stdout JSON on its main paths (a bootstrap, a
//! passing night, a failing night). A changed option, help line or JSON field is a reviewed diff
//! of `tests/it/snapshots/` (`INSTA_UPDATE=always cargo test --test it cli_snapshots::` rewrites them).

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo;

use serde_json::Value;

/// (binary, its path, the subcommands whose `--help` is snapshotted too).
const BINARIES: [(&str, &str, &[&str]); 13] = [
    ("tier1-nightly", env!("CARGO_BIN_EXE_tier1-nightly"), &[]),
    ("tier1-run", env!("CARGO_BIN_EXE_tier1-run"), &[]),
    ("tier1-restore", env!("CARGO_BIN_EXE_tier1-restore"), &[]),
    ("tier1-publish", env!("CARGO_BIN_EXE_tier1-publish"), &[]),
    ("tier1-export", env!("CARGO_BIN_EXE_tier1-export"), &[]),
    ("tier1-promote", env!("CARGO_BIN_EXE_tier1-promote"), &[]),
    (
        "tier1-evidence",
        env!("CARGO_BIN_EXE_tier1-evidence"),
        &["bind", "pack", "verify"],
    ),
    ("tier1-attest", env!("CARGO_BIN_EXE_tier1-attest"), &[]),
    (
        "tier1-preflight",
        env!("CARGO_BIN_EXE_tier1-preflight"),
        &[],
    ),
    (
        "tier1-dashboard",
        env!("CARGO_BIN_EXE_tier1-dashboard"),
        &[],
    ),
    (
        "tier1-compare",
        env!("CARGO_BIN_EXE_tier1-compare"),
        &["run", "comment"],
    ),
    ("tier1-bisect", env!("CARGO_BIN_EXE_tier1-bisect"), &[]),
    (
        "tier1-shard",
        env!("CARGO_BIN_EXE_tier1-shard"),
        &["plan", "run", "combine"],
    ),
];

fn help(path: &str, sub: Option<&str>) -> String {
    let mut cmd = command::scrubbed(path);
    cmd.args(sub).arg("--help");
    let out = cmd.output().expect("the binary runs");
    assert!(out.status.success(), "{path} {sub:?} --help: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8 help")
}

#[test]
fn every_binary_and_subcommand_help_is_the_reviewed_one() {
    for (name, path, subs) in BINARIES {
        insta::assert_snapshot!(format!("{name}-help"), help(path, None));
        for sub in subs {
            insta::assert_snapshot!(format!("{name}-{sub}-help"), help(path, Some(sub)));
        }
    }
}

/// The shape of a JSON value: object keys kept in order, every scalar replaced by its type, an
/// array by the shape of its first element (or `[]`): what a consumer of the JSON relies on,
/// without the timestamps, ids and timings that differ on every run.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(a) => Value::Array(a.first().map(shape).into_iter().collect()),
        Value::String(_) => Value::String("string".into()),
        Value::Number(_) => Value::String("number".into()),
        Value::Bool(_) => Value::String("bool".into()),
        Value::Null => Value::Null,
    }
}

fn pretty(v: &Value) -> String {
    let mut v = v.clone();
    without_overload(&mut v);
    serde_json::to_string_pretty(&shape(&v)).expect("JSON")
}

/// `v` without its `overloaded` fields, each checked to be the sentence a verdict carries: they
/// are present only when the machine running the test was overloaded (issue 37), so a reviewed
/// shape with them or without them would depend on the load of that machine.
fn without_overload(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(o) = m.remove("overloaded") {
                assert!(
                    o.as_str()
                        .is_some_and(|s| s.starts_with("the machine was overloaded: load ")),
                    "{o}"
                );
            }
            m.values_mut().for_each(without_overload);
        }
        Value::Array(a) => a.iter_mut().for_each(without_overload),
        _ => {}
    }
}

#[test]
fn the_nightly_json_has_the_reviewed_fields_on_its_main_paths() {
    let r = nightly_repo::repo();
    let boot = nightly_repo::nightly(&r, 2.0, &[]);
    assert_eq!(
        boot.code,
        exit_code(Exit::Ok),
        "{}\n{}",
        boot.json,
        boot.stderr
    );
    insta::assert_snapshot!("tier1-nightly-bootstrap-json", pretty(&boot.json));
    let pass = nightly_repo::nightly(&r, 2.0, &[]);
    assert_eq!(
        pass.code,
        exit_code(Exit::Ok),
        "{}\n{}",
        pass.json,
        pass.stderr
    );
    insta::assert_snapshot!("tier1-nightly-passing-json", pretty(&pass.json));
    let fail = nightly_repo::nightly(&r, 1.5, &[]);
    assert_eq!(
        fail.code,
        exit_code(Exit::Gate),
        "{}\n{}",
        fail.json,
        fail.stderr
    );
    insta::assert_snapshot!("tier1-nightly-failing-json", pretty(&fail.json));
}

#[test]
fn the_overloaded_sentence_leaves_the_reviewed_shape_and_nothing_else_does() {
    let v: Value = serde_json::from_str(
        r#"{"targets": [{"verdict": "pass", "overloaded": "the machine was overloaded: load 8.9 on 2 cores; rerun on a quieter machine"}]}"#,
    )
    .expect("JSON");
    assert_eq!(
        serde_json::from_str::<Value>(&pretty(&v)).expect("JSON"),
        serde_json::json!({"targets": [{"verdict": "string"}]})
    );
    let wrong: Value = serde_json::from_str(r#"{"overloaded": true}"#).expect("JSON");
    assert!(std::panic::catch_unwind(|| pretty(&wrong)).is_err());
}

#[test]
fn shape_keeps_keys_and_types_only() {
    let v: Value =
        serde_json::from_str(r#"{"b": [1, 2], "a": {"x": "s", "y": true, "z": null}, "c": []}"#)
            .expect("JSON");
    assert_eq!(
        shape(&v),
        serde_json::json!({"b": ["number"], "a": {"x": "string", "y": "bool", "z": null}, "c": []})
    );
}
