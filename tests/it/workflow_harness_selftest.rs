//! The workflow harness's own tests (tests/workflows/test, `node --test`): file commands, status
//! functions and coercion, concurrency queues, parsing every workflow and action.yml, the step
//! runner and the refusal of actions without an adapter; then GitHub's defaults the harness
//! reproduces (docs/workflow-tests.md, "GitHub's behaviour in the harness"): the checkout adapter
//! (real git against a local remote) and the artifact actions over GitHub's own client against the
//! fake artifact service. Skips as the scenarios do.

use crate::support::nightly_repo::git;
use crate::support::workflow_checkout::CheckoutRemote;
use crate::support::workflow_harness;

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use workflow_harness::{Harness, RunSpec};

#[test]
fn the_node_harness_passes_its_own_tests() {
    if !workflow_harness::ready_or_skip("the_node_harness_passes_its_own_tests") {
        return;
    }
    let out = Command::new("node")
        .current_dir(workflow_harness::node_dir())
        .args(["--import", "./harness/register.mjs", "--test", "test/"])
        .output()
        .expect("node runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("# fail 0"), "{text}");
    assert!(!text.contains("# pass 0\n"), "no test ran: {text}");
}

/// actions/checkout's defaults (support/workflow_checkout.rs cites the source of each): a depth-1
/// clone without tags of the event's commit as its branch, the token persisted in a credentials
/// file the local config includes (removed with `persist-credentials: false`), every branch and
/// tag with `fetch-depth: 0`, a commit `ref` as a detached HEAD; an unknown input is refused.
#[test]
fn the_checkout_adapter_does_what_actions_checkout_does_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("source");
    std::fs::create_dir_all(&source).unwrap();
    git(&source, &["init", "-q", "-b", "main"]);
    for i in 1..=3 {
        std::fs::write(source.join("f"), format!("{i}")).unwrap();
        git(&source, &["add", "f"]);
        git(&source, &["commit", "-q", "-m", &format!("c{i}")]);
        if i == 1 {
            git(&source, &["tag", "v1"]);
        }
    }
    git(&source, &["branch", "feature", "HEAD~1"]);
    let head = git(&source, &["rev-parse", "HEAD"]);
    let first = git(&source, &["rev-parse", "HEAD~2"]);
    let remote = CheckoutRemote::new(&source, &tmp.path().join("source-remote.git"));
    let temp = tmp.path().join("runner-temp");
    let token = "ghs_checkoutAdapterTOKEN";
    let checkout = |name: &str, with: Value| {
        let ws = tmp.path().join(name);
        let out = remote.checkout(&json!({
            "workspace": ws, "runner_temp": temp, "token": token,
            "server_url": "https://github.com", "ref": "refs/heads/main", "sha": head, "with": with
        }));
        (ws, out)
    };
    let header_of = |ws: &Path| {
        Command::new("git")
            .args([
                "config",
                "--get-all",
                "http.https://github.com/.extraheader",
            ])
            .current_dir(ws)
            .output()
            .unwrap()
    };
    let basic = {
        use std::io::Write;
        let mut b = Vec::new();
        // base64 of x-access-token:<token>, by the system's base64 (independent of the adapter's)
        let mut child = Command::new("base64")
            .args(["-w", "0"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("x-access-token:{token}").as_bytes())
            .unwrap();
        b.extend(child.wait_with_output().unwrap().stdout);
        String::from_utf8(b).unwrap()
    };

    // The defaults: depth 1, no tags, branch main at the commit, the token persisted.
    let (ws, out) = checkout("default", json!({}));
    let out = out.unwrap();
    assert_eq!(out["outputs"]["commit"], head.as_str());
    assert_eq!(out["outputs"]["ref"], "refs/heads/main");
    assert_eq!(git(&ws, &["rev-list", "--count", "HEAD"]), "1");
    assert_eq!(git(&ws, &["rev-parse", "--is-shallow-repository"]), "true");
    assert_eq!(git(&ws, &["tag"]), "");
    assert_eq!(git(&ws, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
    assert_eq!(git(&ws, &["remote", "get-url", "origin"]), remote.url());
    let persisted = header_of(&ws);
    assert!(persisted.status.success(), "the header is persisted");
    assert_eq!(
        String::from_utf8_lossy(&persisted.stdout).trim(),
        format!("AUTHORIZATION: basic {basic}")
    );
    let config = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    assert!(config.contains("includeIf"), "{config}");
    assert!(
        !config.contains(&basic) && !config.contains(token),
        "{config}"
    );

    // persist-credentials: false: neither the include nor the file is left.
    let (ws, out) = checkout("no-credentials", json!({"persist-credentials": "false"}));
    out.unwrap();
    assert!(!header_of(&ws).status.success(), "no header left");
    assert!(
        !std::fs::read_to_string(ws.join(".git/config"))
            .unwrap()
            .contains("includeIf")
    );
    let left: Vec<_> = std::fs::read_dir(&temp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "only the first checkout's file: {left:?}");

    // fetch-depth: 0: the whole history, every branch and tag.
    let (ws, out) = checkout(
        "full",
        json!({"fetch-depth": "0", "persist-credentials": "false"}),
    );
    out.unwrap();
    assert_eq!(git(&ws, &["rev-list", "--count", "HEAD"]), "3");
    assert_eq!(git(&ws, &["tag"]), "v1");
    assert_eq!(
        git(&ws, &["rev-parse", "refs/remotes/origin/feature"]),
        git(&source, &["rev-parse", "feature"])
    );

    // A commit as `ref`: that commit alone, a detached HEAD.
    let (ws, out) = checkout(
        "commit",
        json!({"ref": first, "persist-credentials": "false"}),
    );
    out.unwrap();
    assert_eq!(git(&ws, &["rev-parse", "HEAD"]), first);
    assert_eq!(git(&ws, &["rev-list", "--count", "HEAD"]), "1");
    let symbolic = Command::new("git")
        .args(["symbolic-ref", "-q", "HEAD"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(!symbolic.success(), "a detached HEAD");

    let (_, out) = checkout("refused", json!({"submodules": "true"}));
    let e = out.unwrap_err();
    assert!(e.contains("input 'submodules' is not emulated"), "{e}");
}

/// A workflow that exercises the artifact actions: run with `mode` `produce` (uploads, the
/// conflicts, the downloads of its own run) or `consume` (downloads from run `other`).
const ARTIFACTS_WORKFLOW: &str = r#"name: artifacts
on:
  workflow_dispatch:
    inputs:
      mode: { type: string, default: produce }
      other: { type: string, default: "" }
permissions: {}
jobs:
  produce:
    if: inputs.mode == 'produce'
    runs-on: ubuntu-latest
    permissions:
      actions: read
    steps:
      - name: files
        run: |
          mkdir -p dir/sub && echo '{}' > dir/sub/a.json && echo hidden > dir/.hidden
          printf 'packed bytes' > evidence-1-1
      - id: raw
        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a # v7.0.1
        with:
          path: evidence-1-1
          archive: false
          if-no-files-found: error
      - id: zipped
        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a # v7.0.1
        with:
          name: hist
          path: dir
          retention-days: 90
      - id: again
        continue-on-error: true
        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a # v7.0.1
        with:
          name: hist
          path: dir
      - id: replaced
        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a # v7.0.1
        with:
          name: hist
          path: dir
          overwrite: true
      - id: reserve
        continue-on-error: true
        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a # v7.0.1
        with:
          name: reserved
          path: dir
      - id: reserved_again
        continue-on-error: true
        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a # v7.0.1
        with:
          name: reserved
          path: dir
          overwrite: true
      - id: missing
        continue-on-error: true
        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a # v7.0.1
        with:
          path: nothing-here
          if-no-files-found: error
      - uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1
        with:
          artifact-ids: ${{ steps.raw.outputs.artifact-id }}
          path: got-raw
      - uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1
        with:
          name: hist
          path: got-zip
      - uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1
        with:
          pattern: "{hist,evidence-*}"
          path: both
      - id: none
        uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1
        with:
          pattern: nothing-*
          path: none
      - name: check
        run: |
          [[ "$(cat got-raw/evidence-1-1)" == "packed bytes" ]]
          [[ -f got-zip/sub/a.json && ! -e got-zip/.hidden ]]
          [[ -f both/hist/sub/a.json && -f both/evidence-1-1/evidence-1-1 ]]
          [[ ! -e none || -z "$(ls -A none)" ]]
  consume:
    if: inputs.mode == 'consume'
    runs-on: ubuntu-latest
    permissions:
      actions: read
    steps:
      - id: own_run
        continue-on-error: true
        uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1
        with:
          name: hist
          path: mine
      - id: other_run
        uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1
        with:
          name: hist
          path: theirs
          github-token: ${{ github.token }}
          run-id: ${{ inputs.other }}
      - name: check
        run: test -f theirs/sub/a.json
"#;

/// The artifact actions over GitHub's own `@actions/artifact` client against the fake artifact
/// service: names, ids and bare-hex digests as the actions give them; a name the run has is 409,
/// `overwrite: true` replaces a finalized artifact but cannot clear a reservation; hidden files
/// stay out of a zip; `archive: false` downloads as the file; a pattern that matches nothing
/// fails nothing; another run only with a token.
#[test]
fn the_artifact_actions_run_github_s_client_against_the_artifact_service() {
    if !workflow_harness::ready_or_skip("the_artifact_actions_run_github_s_client") {
        return;
    }
    let h = Harness::with_source("o/artifacts", |src| {
        std::fs::create_dir_all(src.join(".github/workflows")).unwrap();
        std::fs::write(
            src.join(".github/workflows/artifacts.yml"),
            ARTIFACTS_WORKFLOW,
        )
        .unwrap();
    });
    h.fake.fail_next_artifact_upload("reserved");
    let spec =
        |inputs: Value| RunSpec::dispatch(inputs).workflow(".github/workflows/artifacts.yml");
    let r = h.run(&[spec(json!({"mode": "produce"}))]);
    let outcome = |step: &str| {
        r.step(0, "produce", step)["outcome"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for (step, expected) in [
        ("raw", "success"),
        ("zipped", "success"),
        ("again", "failure"),
        ("replaced", "success"),
        ("reserve", "failure"),
        ("reserved_again", "failure"),
        ("missing", "failure"),
        ("none", "success"),
    ] {
        assert_eq!(outcome(step), expected, "{step}: {}", r.diagnose(0));
    }
    assert_eq!(
        r.job(0, "produce")["result"],
        "success",
        "{}",
        r.diagnose(0)
    );
    let log = |step: &str| r.log(0, "produce", step);
    let conflict = "Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run";
    assert!(log("again").contains(conflict), "{}", log("again"));
    assert!(
        log("reserved_again").contains(conflict),
        "overwrite cannot clear a reservation: {}",
        log("reserved_again")
    );
    assert!(log("missing").contains("No files were found with the provided path"));
    let raw = &r.step(0, "produce", "raw")["outputs"];
    use sha2::{Digest, Sha256};
    assert_eq!(
        raw["artifact-digest"],
        format!("{:x}", Sha256::digest(b"packed bytes")).as_str()
    );
    let run_id = r.run(0)["id"].as_u64().unwrap();
    let mut names = h.artifact_names(run_id);
    names.sort();
    assert_eq!(
        names,
        ["evidence-1-1", "hist"],
        "the reservation is never listed"
    );
    assert_eq!(h.fake.reserved_artifact_names(run_id), ["reserved"]);
    assert_eq!(
        raw["artifact-url"],
        format!(
            "https://github.com/o/artifacts/actions/runs/{run_id}/artifacts/{}",
            raw["artifact-id"].as_str().unwrap()
        )
        .as_str()
    );

    // Another run's artifact: not without a token, through the REST API with one.
    let r = h.run(&[spec(
        json!({"mode": "consume", "other": run_id.to_string()}),
    )]);
    assert_eq!(r.step(0, "consume", "own_run")["outcome"], "failure");
    assert!(
        r.log(0, "consume", "own_run")
            .contains("Artifact not found for name: hist")
    );
    assert_eq!(
        r.job(0, "consume")["result"],
        "success",
        "{}",
        r.diagnose(0)
    );
}
