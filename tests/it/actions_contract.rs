//! Contract of the composite actions another repository calls by reference (issue 12): the producer
//! (`action.yml`) records a run that fails the gate and exits by the gate only at its end; the
//! evidence artifact name, evidence root and artifact prefix reach every binary; the suite file is
//! left to the discovery rule by default; install-only (`install/`), publish (`publish/`) and
//! promote (`promote/`) install a verified release and never build from the caller's checkout;
//! tier1's own promotion workflow names no producer workflow or suite file.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::repo_files;
use repo_files::{text, yaml};

use serde_json::Value;
use std::process::Command;

fn action_steps(rel: &str) -> Vec<Value> {
    yaml(rel)["runs"]["steps"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn by_id(steps: &[Value], id: &str) -> (usize, Value) {
    steps
        .iter()
        .enumerate()
        .find(|(_, s)| s["id"] == id)
        .map(|(i, s)| (i, s.clone()))
        .unwrap_or_else(|| panic!("no step with id {id}"))
}

fn run_of(s: &Value) -> &str {
    s["run"].as_str().unwrap_or_default()
}

/// Run the producer's "Run the suite" script with a stand-in tier1-run exiting `code`; returns the
/// script's exit code and what it wrote to $GITHUB_OUTPUT.
fn run_step_with_exit(code: i32) -> (i32, String) {
    let (_, step) = by_id(&action_steps("action.yml"), "run");
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("tier1-run");
    std::fs::write(&fake, format!("#!/usr/bin/env bash\nexit {code}\n")).unwrap();
    let mut perms = std::fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&fake, perms).unwrap();
    let output = tmp.path().join("output");
    std::fs::write(&output, "").unwrap();
    let status = Command::new("bash")
        .args([
            "--noprofile",
            "--norc",
            "-eo",
            "pipefail",
            "-c",
            run_of(&step),
        ])
        .env("TIER1_BIN", &bin)
        .env("TIER1_SUITE_CONFIG", "")
        .env("TIER1_PROFILE", "nightly")
        .env("TIER1_HISTORY_PATH", "h")
        .env("TIER1_EVIDENCE_ROOT", "e")
        .env("TIER1_EVIDENCE_ARTIFACT_NAME", "acme-evidence-1-1")
        .env("TIER1_ANCHOR_CANDIDATE", "false")
        .env("RUN_ID", "r")
        .env("RUNNER_TEMP", tmp.path())
        .env("GITHUB_OUTPUT", &output)
        .status()
        .unwrap();
    (
        status.code().unwrap_or(-1),
        std::fs::read_to_string(&output).unwrap(),
    )
}

#[test]
fn a_run_that_fails_the_gate_is_bound_and_packed_and_the_action_exits_by_the_gate_last() {
    // Exit 1 (the gate) is recorded as an output and lets bind and pack run; any other failure
    // stops the action.
    let gate = run_step_with_exit(exit_code(Exit::Gate));
    assert_eq!(gate, (0, "gate=failed\n".into()));
    assert_eq!(
        run_step_with_exit(exit_code(Exit::Ok)),
        (0, "gate=passed\n".into())
    );
    let invalid = exit_code(Exit::Invalid);
    assert_eq!(
        run_step_with_exit(invalid).0,
        invalid,
        "an error is not a gate verdict"
    );

    let steps = action_steps("action.yml");
    let (run, _) = by_id(&steps, "run");
    let (pack, _) = by_id(&steps, "pack");
    assert!(run < pack, "pack comes after the run");
    let last = steps.last().unwrap();
    let cond = last["if"].as_str().unwrap_or_default();
    assert!(
        cond.contains("inputs.fail-on-gate != 'false'")
            && cond.contains("steps.run.outputs.gate == 'failed'"),
        "the last step exits by the gate unless fail-on-gate is false: {cond}"
    );
    assert!(run_of(last).contains("exit 1"));
    let a = yaml("action.yml");
    assert_eq!(a["inputs"]["fail-on-gate"]["default"], "true");
    assert_eq!(
        a["outputs"]["gate"]["value"],
        "${{ steps.run.outputs.gate }}"
    );
}

#[test]
fn the_evidence_artifact_name_and_the_evidence_root_reach_tier1_run() {
    let steps = action_steps("action.yml");
    let (_, run) = by_id(&steps, "run");
    assert_eq!(
        run["env"]["TIER1_EVIDENCE_ARTIFACT_NAME"],
        "${{ steps.run_id.outputs.evidence_name }}"
    );
    assert_eq!(
        run["env"]["TIER1_EVIDENCE_ROOT"],
        "${{ inputs.evidence-root }}"
    );
    let script = run_of(&run);
    assert!(script.contains("--evidence-artifact-name \"$TIER1_EVIDENCE_ARTIFACT_NAME\""));
    assert!(script.contains("--evidence-root \"$TIER1_EVIDENCE_ROOT\""));
    // The packed file is named what the summary records.
    let (_, pack) = by_id(&steps, "pack");
    assert_eq!(
        pack["env"]["TIER1_EVIDENCE_ARTIFACT_NAME"],
        run["env"]["TIER1_EVIDENCE_ARTIFACT_NAME"]
    );
    let (_, names) = by_id(&steps, "run_id");
    assert!(run_of(&names).contains("evidence_name=$TIER1_ARTIFACT_PREFIX-evidence-$suffix"));
}

#[test]
fn every_action_step_honours_the_evidence_root_and_the_artifact_prefix() {
    for rel in ["action.yml", "publish/action.yml", "promote/action.yml"] {
        let mut restores = 0;
        for s in action_steps(rel) {
            let script = run_of(&s);
            let name = s["name"].as_str().unwrap_or_default().to_string();
            if ["tier1-restore", "tier1-compare"]
                .iter()
                .any(|b| script.contains(b))
            {
                restores += 1;
                assert_eq!(
                    s["env"]["TIER1_ARTIFACT_PREFIX"], "${{ inputs.artifact-prefix }}",
                    "{rel}: step {name} does not pass the artifact prefix"
                );
            }
            if ["tier1-run\"", "tier1-evidence\""]
                .iter()
                .any(|b| script.contains(b))
            {
                assert_eq!(
                    s["env"]["TIER1_EVIDENCE_ROOT"], "${{ inputs.evidence-root }}",
                    "{rel}: step {name} does not pass the evidence root"
                );
            }
        }
        assert!(restores >= 1, "{rel}: no restore step");
    }
}

#[test]
fn the_suite_file_defaults_to_the_discovery_rule() {
    for rel in ["action.yml", "publish/action.yml", "promote/action.yml"] {
        let a = yaml(rel);
        assert_eq!(
            a["inputs"]["suite-config"]["default"], "",
            "{rel}: suite-config must default to empty (docs/suite.md decides)"
        );
        for s in action_steps(rel) {
            if s["env"].get("TIER1_SUITE_CONFIG").is_some() {
                assert!(
                    run_of(&s)
                        .contains("[[ -n \"$TIER1_SUITE_CONFIG\" ]] || unset TIER1_SUITE_CONFIG"),
                    "{rel}: {} passes an empty suite file on",
                    s["name"]
                );
            }
        }
    }
}

#[test]
fn publication_and_promotion_install_a_verified_release_and_name_nothing_of_tier1() {
    for rel in [
        "install/action.yml",
        "publish/action.yml",
        "promote/action.yml",
    ] {
        let a = yaml(rel);
        let steps = action_steps(rel);
        // Publish and promote first look for an earlier attempt's publication (rerun_contract.rs).
        let first = steps
            .iter()
            .find(|s| s["if"] != "github.run_attempt != '1'")
            .expect("a step");
        assert!(
            run_of(first).contains("install/install.sh")
                || run_of(first).contains("$GITHUB_ACTION_PATH/install.sh"),
            "{rel}: the first step installs the release"
        );
        assert!(
            !text(rel).contains("cargo "),
            "{rel}: builds from the caller's checkout"
        );
        assert_eq!(a["inputs"]["tier1-version"]["required"], true, "{rel}");
        if rel != "install/action.yml" {
            for input in ["workflow", "suite-config", "artifact-prefix"] {
                assert!(a["inputs"].get(input).is_some(), "{rel}: no input {input}");
            }
            assert_eq!(a["inputs"]["workflow"]["required"], true, "{rel}");
            assert!(!text(rel).contains("tier1-nightly.yml"), "{rel}");
        }
    }
    // Its comments may name the caller; its YAML may not.
    let promote: String = text(".github/workflows/tier1-promote.yml")
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    for literal in [
        "tier1-nightly.yml",
        "configs/benchmark_suites",
        "name: tier1-history",
    ] {
        assert!(
            !promote.contains(literal),
            "tier1-promote.yml hard-codes {literal}"
        );
    }
}

#[test]
fn the_installer_verifies_the_checksum_and_the_provenance() {
    let install = text("install/install.sh");
    for part in [
        "sha256sum --check --ignore-missing --strict SHA256SUMS",
        "\"$gh\" attestation verify",
        "--cert-identity \"$signer\" --deny-self-hosted-runners",
        "signer=\"https://github.com/$TIER1_REPOSITORY/.github/workflows/release.yml@refs/tags/$tag\"",
        "gh_needed=2.49.0",
        "command -v \"$gh\"",
        "Authorization: Bearer $GH_TOKEN",
        "/releases/tags/$tag",
        "browser_download_url",
        "$GITHUB_PATH",
    ] {
        assert!(install.contains(part), "install.sh lacks {part}");
    }
}

#[test]
fn the_default_tier1_repository_is_the_one_cargo_toml_names() {
    let manifest = text("Cargo.toml");
    let slug = manifest
        .lines()
        .find_map(|l| l.strip_prefix("repository = \"https://github.com/"))
        .and_then(|r| r.strip_suffix('"'))
        .expect("Cargo.toml repository");
    for rel in [
        "action.yml",
        "install/action.yml",
        "publish/action.yml",
        "promote/action.yml",
    ] {
        assert_eq!(
            yaml(rel)["inputs"]["tier1-repository"]["default"],
            slug,
            "{rel}: tier1-repository default"
        );
    }
}
