//! Runner classes (issue 40, docs/sharding.md §1): one repository measures its suite on several
//! classes, each with its own history, anchor and artifact names; restore, publish and promote
//! refuse a package of another class (exit 4 for restore, 3 for publish and promote), leaving
//! every byte as it was; the dashboard shows the classes side by side, each figure naming its
//! class.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::sharded_repo::{
    Repo, artifact_names, index, nightly, repo, restore, run, snapshot, store, tool,
};

use std::path::{Path, PathBuf};

fn night(r: &Repo, class: &str, extra: &[&str]) -> crate::support::sharded_repo::Out {
    let mut args = vec!["--class", class];
    args.extend_from_slice(extra);
    let o = nightly(r, &[], &args);
    assert_eq!(
        o.code,
        exit_code(Exit::Ok),
        "class {class}: {}\n{}",
        o.stderr,
        o.json
    );
    o
}

/// Unzip the store's newest artifact named `name` into `dest`.
fn unzip_artifact(r: &Repo, name: &str, dest: &Path) {
    let s = store(r);
    let meta = s
        .load()
        .unwrap()
        .artifacts
        .iter()
        .filter(|a| a.name == name)
        .max_by_key(|a| a.id)
        .cloned()
        .unwrap_or_else(|| panic!("no artifact {name}"));
    let policy = tier1::archive::ExtractPolicy::history();
    tier1::archive::extract_safe(&s.artifact_path(meta.id), dest, &policy).unwrap();
}

fn newest(names: &[String], prefix: &str) -> String {
    names
        .iter()
        .filter(|n| n.starts_with(prefix))
        .max_by_key(|n| {
            n.rsplit('-')
                .nth(1)
                .and_then(|x| x.parse::<u64>().ok())
                .unwrap_or(0)
        })
        .cloned()
        .unwrap_or_else(|| panic!("no artifact {prefix}* in {names:?}"))
}

struct Classes {
    r: Repo,
    work: tempfile::TempDir,
}

impl Classes {
    fn p(&self, name: &str) -> PathBuf {
        self.work.path().join(name)
    }
}

/// Class `alpha` with two nights, class `beta` with two (sharded: its `shards: 2`).
fn two_classes() -> Classes {
    let r = repo();
    night(&r, "alpha", &[]);
    night(&r, "beta", &[]);
    night(&r, "alpha", &[]);
    let b = night(&r, "beta", &[]);
    assert_eq!(
        b.json["shards"]["plan"]["shards"], 2,
        "beta's own shards: 2"
    );
    Classes {
        r,
        work: tempfile::tempdir().unwrap(),
    }
}

#[test]
fn each_class_keeps_its_own_history_and_refuses_another_class_s_package() {
    let c = two_classes();
    let names = artifact_names(&c.r);
    assert!(
        names.iter().any(|n| n.starts_with("tier1-alpha-history-")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.starts_with("tier1-beta-shard-")),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with("tier1-history-")),
        "no unnamed-class history: {names:?}"
    );

    // Each class restores its own history: its own anchor, the class in every summary.
    for (class, other) in [("alpha", "beta"), ("beta", "alpha")] {
        let dest = c.p(&format!("restored-{class}"));
        let o = restore(&c.r, Some(class), &dest);
        assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
        let idx = index(&dest);
        assert_eq!(idx["runner_class"], class);
        let runs = idx["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(
            runs[0]["baseline_eligible"], true,
            "{class} bootstrapped its own anchor"
        );
        for row in runs {
            let s: serde_json::Value = serde_json::from_slice(
                &std::fs::read(dest.join(row["summary_path"].as_str().unwrap())).unwrap(),
            )
            .unwrap();
            assert_eq!(
                s["environment"]["runner_class"], class,
                "{other} never enters {class}'s history"
            );
        }
    }
    // The unnamed class has no history at all.
    let o = restore(&c.r, None, &c.p("unnamed"));
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    assert_eq!(o.json["status"], "bootstrap");

    // A beta package under alpha's name: restore refuses it (provenance, exit 4), no fallback.
    let beta_history = newest(&names, "tier1-beta-history-");
    let s = store(&c.r);
    let meta = s
        .load()
        .unwrap()
        .artifacts
        .iter()
        .find(|a| a.name == beta_history)
        .cloned()
        .unwrap();
    let sha = crate::support::nightly_repo::git(&c.r.root, &["rev-parse", "HEAD"]);
    let wf = s
        .create_run(&tier1::store::local::NewRun::new(
            "tier1-nightly.yml",
            "main",
            &sha,
        ))
        .unwrap();
    s.upload_file(
        wf.id,
        &format!("tier1-alpha-history-{}-1", wf.id),
        &s.artifact_path(meta.id),
        90,
    )
    .unwrap();
    // Discovery pairs a history with its run's evidence: any file under the evidence name.
    let ev = c.p("evidence.zip");
    std::fs::write(&ev, b"evidence").unwrap();
    s.upload_file(wf.id, &format!("tier1-alpha-evidence-{}-1", wf.id), &ev, 90)
        .unwrap();
    s.complete_run(wf.id, "success").unwrap();
    let dest = c.p("misrouted");
    let o = restore(&c.r, Some("alpha"), &dest);
    assert_eq!(o.code, exit_code(Exit::Integrity), "{}", o.stderr);
    assert!(
        o.stderr.contains("runner_class: expected Some(\"alpha\")"),
        "{}",
        o.stderr
    );
    assert!(!dest.exists() || std::fs::read_dir(&dest).unwrap().next().is_none());
}

#[test]
fn publish_and_promote_refuse_a_run_of_another_class() {
    let c = two_classes();
    let names = artifact_names(&c.r);
    let alpha = c.p("alpha-live");
    assert_eq!(
        restore(&c.r, Some("alpha"), &alpha).code,
        exit_code(Exit::Ok)
    );
    // Beta's last candidate: its newest run is a beta night (not an anchor).
    let cand = c.p("beta-candidate");
    unzip_artifact(
        &c.r,
        &newest(&names, "tier1-beta-candidate-history-"),
        &cand,
    );
    let run_id = index(&cand)["runs"].as_array().unwrap().last().unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let before = (snapshot(&alpha), snapshot(&cand));

    let out = c.p("published");
    let o = run(tool(&c.r, "tier1-publish", &[])
        .args([
            "--suite-config",
            "suite.yaml",
            "--runner-class",
            "alpha",
            "--run-id",
            &run_id,
        ])
        .arg("--candidate-history-root")
        .arg(&cand)
        .arg("--canonical-history-root")
        .arg(&alpha)
        .arg("--output-history-root")
        .arg(&out));
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}", o.stderr);
    assert!(
        o.stderr.contains("runner_class expected Some(\"alpha\")"),
        "{}",
        o.stderr
    );
    assert!(!out.exists(), "nothing published");
    assert_eq!((snapshot(&alpha), snapshot(&cand)), before);

    let ev = c.p("evidence");
    std::fs::create_dir_all(&ev).unwrap();
    let sha = crate::support::nightly_repo::git(&c.r.root, &["rev-parse", "HEAD"]);
    let o = run(tool(&c.r, "tier1-promote", &[])
        .args([
            "--suite-config",
            "suite.yaml",
            "--runner-class",
            "alpha",
            "--run-id",
            &run_id,
        ])
        .args([
            "--requester",
            "alice",
            "--note",
            "Reviewed",
            "--allow-local-workflow-run",
        ])
        .args(["--workflow-run", "local://store/actions/runs/9"])
        .args(["--expected-git-commit", &sha])
        .args(["--expected-evidence-artifact", "tier1-alpha-evidence-9-1"])
        .args(["--expected-evidence-digest", &"0".repeat(64)])
        .arg("--history-root")
        .arg(&cand)
        .arg("--evidence-root")
        .arg(&ev)
        .arg("--canonical-history-root")
        .arg(&alpha)
        .arg("--output-history-root")
        .arg(&out));
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}", o.stderr);
    assert!(
        o.stderr.contains("never becomes another class's anchor"),
        "{}",
        o.stderr
    );
    assert!(!out.exists(), "nothing ratified");
    assert_eq!((snapshot(&alpha), snapshot(&cand)), before);
}

#[test]
fn a_class_must_be_declared_and_measure_with_its_own_profile() {
    let r = repo();
    let o = nightly(&r, &[], &["--class", "gamma"]);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}", o.stderr);
    assert!(
        o.stderr.contains("declares no such runner class"),
        "{}",
        o.stderr
    );
    // A profile the suite does not define is refused before anything is recorded (the request's
    // check); a defined profile other than the class's is refused by the class rule
    // (suite::classes, its unit test).
    let o = nightly(&r, &[], &["--class", "alpha", "--profile", "other"]);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}", o.stderr);
    assert!(
        o.stderr.contains("--profile") && o.stderr.contains("found \"other\""),
        "{}",
        o.stderr
    );
    assert!(
        !r.root.join(".tier1/store/store.json").exists(),
        "refused before anything was created"
    );
}

#[test]
fn one_dashboard_shows_the_classes_side_by_side_each_figure_naming_its_class() {
    let c = two_classes();
    let out = c.p("dashboard");
    let o = run(tool(&c.r, "tier1-dashboard", &[])
        .args([
            "--suite-config",
            "suite.yaml",
            "--store",
            "local:.tier1/store",
        ])
        .args(["--runner-class", "alpha", "--runner-class", "beta"])
        .arg("--output")
        .arg(&out));
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    let classes: Vec<&str> = o.json["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["class"].as_str().unwrap())
        .collect();
    assert_eq!(classes, ["alpha", "beta"]);
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    for class in ["alpha", "beta"] {
        assert!(
            page.contains(&format!("<h2>Runner class {class}</h2>")),
            "{class}"
        );
    }
    // Every figure names its class: each chart's label, and each small multiple's caption.
    let labels: Vec<&str> = page
        .split("aria-label=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    assert!(labels.len() >= 8, "{labels:?}");
    assert!(
        labels
            .iter()
            .all(|l| l.starts_with("class alpha · ") || l.starts_with("class beta · ")),
        "{labels:?}"
    );
    for caption in page.split("<figcaption>").skip(1) {
        assert!(
            caption.starts_with("class alpha · ") || caption.starts_with("class beta · "),
            "{caption}"
        );
    }
    // Element ids stay unique in the one page.
    let ids: Vec<&str> = page
        .split(" id=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    let unique: std::collections::BTreeSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "duplicate ids");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("## Runner class alpha") && md.contains("## Runner class beta"));

    // A history shown under another class's name is refused, nothing written.
    let beta = c.p("beta-live");
    assert_eq!(restore(&c.r, Some("beta"), &beta).code, exit_code(Exit::Ok));
    let out2 = c.p("dashboard-2");
    let o = run(tool(&c.r, "tier1-dashboard", &[])
        .args(["--suite-config", "suite.yaml"])
        .arg("--class-history")
        .arg(format!("alpha={}", beta.display()))
        .arg("--output")
        .arg(&out2));
    assert_eq!(o.code, exit_code(Exit::Integrity), "{}", o.stderr);
    assert!(
        o.stderr.contains("runner_class: expected \"alpha\""),
        "{}",
        o.stderr
    );
    assert!(!out2.exists() || std::fs::read_dir(&out2).unwrap().next().is_none());
}

/// The recovery after the artifacts expired restores a class's history from an export
/// (`tier1-restore --from-export`, the sharded nightly's `history_export` input): an export of
/// another class (or of the unnamed class) is refused as a provenance mismatch (exit 4), the
/// destination left empty, so a recovered class never takes another class's anchor; the class's
/// own export restores.
#[test]
fn a_recovery_from_an_export_restores_only_the_class_s_own_history() {
    let c = two_classes();
    let beta = c.p("beta-live");
    assert_eq!(restore(&c.r, Some("beta"), &beta).code, exit_code(Exit::Ok));
    let file = c.p("exports/tier1-beta-history.zip");
    let e = run(tool(&c.r, "tier1-export", &[])
        .arg("--history-root")
        .arg(&beta)
        .arg("--output")
        .arg(&file));
    assert_eq!(e.code, exit_code(Exit::Ok), "{}", e.stderr);
    let from_export = |class: Option<&str>, dest: &Path| {
        let mut cmd = tool(&c.r, "tier1-restore", &[]);
        cmd.arg("--from-export")
            .arg(&file)
            .arg("--destination")
            .arg(dest);
        if let Some(class) = class {
            cmd.args(["--runner-class", class]);
        }
        run(&mut cmd)
    };
    for (class, found) in [(Some("alpha"), "Some(\"beta\")"), (None, "Some(\"beta\")")] {
        let dest = c.p(&format!("recovered-as-{}", class.unwrap_or("unnamed")));
        let o = from_export(class, &dest);
        assert_eq!(
            o.code,
            exit_code(Exit::Integrity),
            "{class:?}: {}",
            o.stderr
        );
        assert!(
            o.stderr.contains(&format!(
                "runner_class: expected {:?}",
                class.map(str::to_string)
            )) && o.stderr.contains(&format!("found {found}")),
            "{class:?}: {}",
            o.stderr
        );
        assert!(o.json.is_null(), "nothing printed: {}", o.json);
        assert!(!dest.exists() || std::fs::read_dir(&dest).unwrap().next().is_none());
    }
    let dest = c.p("recovered-beta");
    let o = from_export(Some("beta"), &dest);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    assert_eq!(index(&dest)["runner_class"], "beta");
    assert_eq!(snapshot(&dest).len(), snapshot(&beta).len());
}
