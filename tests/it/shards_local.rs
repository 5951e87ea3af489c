//! Sharded nights on the local store (issue 40, docs/sharding.md): `tier1-nightly --shards N` runs
//! the plan, the shard jobs one after another and the combine step, then publishes or promotes
//! once; a failed shard leaves the night unrecorded; the combine step refuses a tampered package
//! and a shard of another commit, suite, profile or runner class, writing nothing; promotion of a
//! combined run verifies each of its N shard packages.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::sharded_repo::{
    Repo, artifact_names, index, nightly, repo, restore, run, snapshot, store, summary, tool,
};

use serde_json::Value;

/// The published history copy `--history-out .tier1/history`.
fn history(r: &Repo) -> std::path::PathBuf {
    r.root.join(".tier1/history")
}

fn night(r: &Repo, env: &[(&str, &str)], extra: &[&str]) -> crate::support::sharded_repo::Out {
    let mut args = vec!["--history-out", ".tier1/history", "--profile", "smoke"];
    args.extend_from_slice(extra);
    nightly(r, env, &args)
}

#[test]
fn a_sharded_night_bootstraps_publishes_and_restores_as_one_run() {
    let r = repo();
    let first = night(&r, &[], &["--shards", "2"]);
    assert_eq!(
        first.code,
        exit_code(Exit::Ok),
        "{}\n{}",
        first.stderr,
        first.json
    );
    let jobs = first.json["shards"]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert!(jobs.iter().all(|j| j["result"] == "success"), "{jobs:?}");
    let idx = index(&history(&r));
    let runs = idx["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        runs[0]["baseline_eligible"], true,
        "the first sharded night is the anchor"
    );
    let id = runs[0]["run_id"].as_str().unwrap().to_string();
    let s = summary(&history(&r), &id);
    assert_eq!(s["shards"]["count"], 2);
    assert_eq!(s["shards"]["complete"], true);
    let targets: Vec<&str> = s["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["key"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["fixed_a", "fixed_b", "fixed_c"], "suite order");
    assert!(
        s["targets"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["status"] == "succeeded")
    );
    // One night: one plan, two shard packages, one evidence package, one history.
    let names = artifact_names(&r);
    for want in [
        "tier1-shard-1-1-1",
        "tier1-shard-1-1-2",
        "tier1-evidence-1-1",
        "tier1-history-1-1-publication-1",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    // The anchor row carries the combined package's digest; each shard's digest is recorded.
    let delivered = s["shards"]["shards"].as_array().unwrap();
    assert!(delivered.iter().all(
        |e| e["status"] == "delivered" && e["digest"].as_str().unwrap().starts_with("sha256:")
    ));

    let second = night(&r, &[], &["--shards", "2"]);
    assert_eq!(
        second.code,
        exit_code(Exit::Ok),
        "{}\n{}",
        second.stderr,
        second.json
    );
    // The second sharded night ends as a single night does (issue 37, "a human ending"): the
    // combined run's table, a row per target of every shard, then what the exit code means.
    let lines: Vec<&str> = second.stderr.lines().collect();
    let head = lines
        .iter()
        .rposition(|l| l.starts_with("target "))
        .unwrap_or_else(|| panic!("no table at the end of a sharded night:\n{}", second.stderr));
    let ending = &lines[head..];
    for key in ["fixed_a", "fixed_b", "fixed_c"] {
        assert!(
            ending.iter().any(|l| l.starts_with(key)),
            "{key} has no row in the ending {ending:?}"
        );
    }
    assert!(
        ending
            .last()
            .unwrap()
            .starts_with("exit 0: the gate passed"),
        "{ending:?}"
    );
    // A sharded history goes on with a single night, and the other way round.
    let third = night(&r, &[], &[]);
    assert_eq!(third.code, exit_code(Exit::Ok), "{}", third.stderr);
    let idx = index(&history(&r));
    let runs = idx["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[1]["run_accepted"], true);
    assert_eq!(runs[1]["baseline_eligible"], false);
    assert!(summary(&history(&r), runs[2]["run_id"].as_str().unwrap())["shards"].is_null());
    let t = tempfile::tempdir().unwrap();
    let restored = restore(&r, None, &t.path().join("h"));
    assert_eq!(restored.code, exit_code(Exit::Ok), "{}", restored.stderr);
    assert_eq!(
        index(&t.path().join("h"))["runs"].as_array().unwrap().len(),
        3
    );
}

#[test]
fn a_failed_shard_leaves_the_night_unrecorded_and_the_next_night_whole() {
    let r = repo();
    assert_eq!(night(&r, &[], &["--shards", "2"]).code, exit_code(Exit::Ok));
    let before = snapshot(&history(&r));
    let failed = night(&r, &[("TIER1_FAULT", "shard:2:fail")], &["--shards", "2"]);
    assert_eq!(
        failed.code,
        exit_code(Exit::Gate),
        "{}\n{}",
        failed.stderr,
        failed.json
    );
    let jobs = failed.json["shards"]["jobs"].as_array().unwrap();
    assert_eq!(jobs[0]["result"], "success");
    assert_eq!(jobs[1]["result"], "failure");
    let record = &failed.json["shards"]["record"];
    assert_eq!(record["complete"], false);
    assert_eq!(record["shards"][1]["status"], "missing");
    // Its targets are missing and the gate fails with why; nothing half-merged is recorded.
    let why = failed.json["failure"].as_str().unwrap_or_default();
    assert!(why.contains("incomplete night: shard 2 of 2"), "{why}");
    assert!(
        failed.json["run"]["summary"]["missing"].as_u64().unwrap() >= 1,
        "{}",
        failed.json["run"]
    );
    assert_eq!(failed.json["conclusion"], "failure");
    assert_eq!(snapshot(&history(&r)), before, "nothing published");
    let names = artifact_names(&r);
    assert!(names.iter().any(|n| n == "tier1-shard-2-1-1"), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("tier1-evidence-2-") || n.starts_with("tier1-history-2-")),
        "{names:?}"
    );

    let next = night(&r, &[], &["--shards", "2"]);
    assert_eq!(next.code, exit_code(Exit::Ok), "{}", next.stderr);
    assert_eq!(index(&history(&r))["runs"].as_array().unwrap().len(), 2);
}

/// A sharded night driven step by step with `tier1-shard`, as the workflow's jobs do, on workflow
/// run `wf` of the store: restore, plan, both shards (their packages written, not uploaded).
struct Steps {
    work: tempfile::TempDir,
    wf: u64,
}

impl Steps {
    fn dir(&self, p: &str) -> std::path::PathBuf {
        self.work.path().join(p)
    }
}

fn plan_and_measure(r: &Repo) -> Steps {
    plan_and_measure_with(r, &[])
}

/// [`plan_and_measure`] with more `tier1-shard plan` arguments (`--anchor-candidate`).
fn plan_and_measure_with(r: &Repo, plan_args: &[&str]) -> Steps {
    let sha = crate::support::nightly_repo::git(&r.root, &["rev-parse", "HEAD"]);
    let wf = store(r)
        .create_run(&tier1::store::local::NewRun::new(
            "tier1-nightly.yml",
            "main",
            &sha,
        ))
        .unwrap()
        .id;
    let work = tempfile::tempdir().unwrap();
    let steps = Steps { work, wf };
    let h = steps.dir("history");
    assert_eq!(restore(r, None, &h).code, exit_code(Exit::Ok));
    let planned = run(tool(r, "tier1-shard", &[])
        .args([
            "plan",
            "--suite-config",
            "suite.yaml",
            "--profile",
            "smoke",
            "--shards",
            "2",
        ])
        .arg("--history-root")
        .arg(&h)
        .arg("--output")
        .arg(steps.dir("plan.json"))
        .args(["--workflow-run-id", &wf.to_string()])
        .args(plan_args));
    assert_eq!(planned.code, exit_code(Exit::Ok), "{}", planned.stderr);
    for k in ["1", "2"] {
        let o = run(tool(r, "tier1-shard", &[])
            .args(["run", "--suite-config", "suite.yaml", "--shard", k])
            .arg("--plan")
            .arg(steps.dir("plan.json"))
            .arg("--history-root")
            .arg(&h)
            .arg("--evidence-root")
            .arg(steps.dir(&format!("runs-{k}")))
            .arg("--package")
            .arg(steps.dir(&format!("tier1-shard-{wf}-1-{k}"))));
        assert_eq!(o.code, exit_code(Exit::Ok), "shard {k}: {}", o.stderr);
    }
    steps
}

fn upload(r: &Repo, s: &Steps, k: u32) -> tier1::store::ArtifactMeta {
    let name = format!("tier1-shard-{}-1-{k}", s.wf);
    store(r)
        .upload_file(s.wf, &name, &s.dir(&name), 90)
        .unwrap()
}

fn combine(r: &Repo, s: &Steps) -> crate::support::sharded_repo::Out {
    run(tool(r, "tier1-shard", &[])
        .args([
            "combine",
            "--suite-config",
            "suite.yaml",
            "--store",
            "local:.tier1/store",
        ])
        .arg("--plan")
        .arg(s.dir("plan.json"))
        .arg("--history-root")
        .arg(s.dir("history"))
        .arg("--evidence-root")
        .arg(s.dir("combined"))
        .arg("--package")
        .arg(s.dir(&format!("tier1-evidence-{}-1", s.wf)))
        .args([
            "--evidence-artifact-name",
            &format!("tier1-evidence-{}-1", s.wf),
        ]))
}

/// Rewrite `package` (a shard zip): `edit` changes its files, then it is zipped again
/// deterministically (a forged package with a self-consistent digest).
fn forge(package: &std::path::Path, edit: impl FnOnce(&std::path::Path)) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("x");
    let policy = tier1::archive::ExtractPolicy::history();
    tier1::archive::extract_safe(package, &dir, &policy).unwrap();
    edit(&dir);
    std::fs::remove_file(package).unwrap();
    tier1::archive::write_deterministic_zip(&dir, package).unwrap();
}

fn edit_json(path: &std::path::Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

/// The combine step refused: exit `code`, `needle` in the message, the history it would append to
/// unchanged, no evidence and no package written.
fn assert_refused(
    s: &Steps,
    o: &crate::support::sharded_repo::Out,
    code: Exit,
    needle: &str,
    before: &[(std::path::PathBuf, Vec<u8>)],
) {
    assert_eq!(o.code, exit_code(code), "{}", o.stderr);
    assert!(o.stderr.contains(needle), "{needle:?} not in {}", o.stderr);
    assert_eq!(
        snapshot(&s.dir("history")),
        before,
        "the candidate history is untouched"
    );
    assert!(!s.dir("combined").exists(), "no evidence written");
    assert!(
        !s.dir(&format!("tier1-evidence-{}-1", s.wf)).exists(),
        "no package written"
    );
}

/// Combine `s` and assert it refused ([`assert_refused`]), the history snapshotted just before.
fn combine_refused(
    r: &Repo,
    s: &Steps,
    code: Exit,
    needle: &str,
) -> crate::support::sharded_repo::Out {
    let before = snapshot(&s.dir("history"));
    let o = combine(r, s);
    assert_refused(s, &o, code, needle, &before);
    o
}

#[test]
fn the_combine_step_verifies_every_shard_and_refuses_tampered_or_foreign_evidence() {
    let r = repo();
    assert_eq!(night(&r, &[], &["--shards", "2"]).code, exit_code(Exit::Ok));

    // Tampered after upload: the stored bytes no longer hash to the listed digest.
    let s = plan_and_measure(&r);
    upload(&r, &s, 1);
    let meta = upload(&r, &s, 2);
    let path = store(&r).artifact_path(meta.id);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let before = snapshot(&s.dir("history"));
    let o = combine(&r, &s);
    assert_refused(&s, &o, Exit::Integrity, "differs from the listed", &before);

    // A shard of another commit (its package forged consistently, digest and all).
    let s = plan_and_measure(&r);
    upload(&r, &s, 1);
    let run_id = serde_json::from_slice::<Value>(&std::fs::read(s.dir("plan.json")).unwrap())
        .unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    forge(&s.dir(&format!("tier1-shard-{}-1-2", s.wf)), |d| {
        edit_json(&d.join(&run_id).join("shards/2/manifest.json"), |m| {
            m["git"]["commit"] = Value::from("f".repeat(40));
        });
    });
    upload(&r, &s, 2);
    let before = snapshot(&s.dir("history"));
    let o = combine(&r, &s);
    assert_refused(&s, &o, Exit::Integrity, "shard 2: manifest git", &before);

    // A shard measured on another runner class.
    let s = plan_and_measure(&r);
    upload(&r, &s, 2);
    forge(&s.dir(&format!("tier1-shard-{}-1-1", s.wf)), |d| {
        let dir = d.join(run_id_of(&s)).join("shards/1");
        edit_json(&dir.join("manifest.json"), |m| {
            m["runner_class"] = Value::from("beta");
            m["environment"]["runner_class"] = Value::from("beta");
        });
        edit_json(&dir.join("results/benchmark_test_results.json"), |m| {
            m["environment"]["runner_class"] = Value::from("beta");
        });
    });
    upload(&r, &s, 1);
    combine_refused(&r, &s, Exit::Integrity, "shard 1: manifest runner_class");

    // Both shards whole: the night is recorded, the combined package written.
    let s = plan_and_measure(&r);
    upload(&r, &s, 1);
    upload(&r, &s, 2);
    let o = combine(&r, &s);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    assert_eq!(o.json["recorded"], true);
    assert_eq!(o.json["shards"]["complete"], true);
    assert!(s.dir(&format!("tier1-evidence-{}-1", s.wf)).is_file());
    assert_eq!(
        index(&s.dir("history"))["runs"].as_array().unwrap().len(),
        2
    );
}

fn run_id_of(s: &Steps) -> String {
    serde_json::from_slice::<Value>(&std::fs::read(s.dir("plan.json")).unwrap()).unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_shard_refuses_a_plan_of_another_commit_before_it_measures() {
    let r = repo();
    assert_eq!(night(&r, &[], &["--shards", "2"]).code, exit_code(Exit::Ok));
    let s = plan_and_measure(&r);
    std::fs::write(r.root.join("NOTES"), "x").unwrap();
    crate::support::nightly_repo::git(&r.root, &["add", "NOTES"]);
    crate::support::nightly_repo::git(&r.root, &["commit", "-q", "-m", "later"]);
    let o = run(tool(&r, "tier1-shard", &[])
        .args(["run", "--suite-config", "suite.yaml", "--shard", "1"])
        .arg("--plan")
        .arg(s.dir("plan.json"))
        .arg("--history-root")
        .arg(s.dir("history"))
        .arg("--evidence-root")
        .arg(s.dir("again"))
        .arg("--package")
        .arg(s.dir("again.zip")));
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}", o.stderr);
    assert!(
        o.stderr.contains("a shard measures the plan's commit only"),
        "{}",
        o.stderr
    );
    assert!(!s.dir("again").exists() && !s.dir("again.zip").exists());
    // The plan's digest binds what the shard measures.
    let o = run(tool(
        &r,
        "tier1-shard",
        &[("TIER1_PLAN_DIGEST", &format!("sha256:{}", "0".repeat(64)))],
    )
    .args(["run", "--suite-config", "suite.yaml", "--shard", "1"])
    .arg("--plan")
    .arg(s.dir("plan.json"))
    .arg("--history-root")
    .arg(s.dir("history"))
    .arg("--package")
    .arg(s.dir("again.zip")));
    assert_eq!(o.code, exit_code(Exit::Integrity), "{}", o.stderr);
    assert!(
        o.stderr.contains("differs from the plan job's"),
        "{}",
        o.stderr
    );
}

/// `tier1-promote` of the combined run of `s` (its candidate history, combined package and the
/// shard packages under `shards`) against the live history `live`, into `out`.
fn promote(
    r: &Repo,
    s: &Steps,
    live: &std::path::Path,
    shards: &std::path::Path,
    out: &std::path::Path,
) -> crate::support::sharded_repo::Out {
    let sha = crate::support::nightly_repo::git(&r.root, &["rev-parse", "HEAD"]);
    let evidence = format!("tier1-evidence-{}-1", s.wf);
    let digest = tier1::digest::Digest::of_file(&s.dir(&evidence)).unwrap();
    run(tool(r, "tier1-promote", &[])
        .args(["--suite-config", "suite.yaml", "--run-id", &run_id_of(s)])
        .args([
            "--requester",
            "alice",
            "--note",
            "Reviewed",
            "--reviewer",
            "bob",
        ])
        .arg("--allow-local-workflow-run")
        .args([
            "--workflow-run",
            &format!("local://store/actions/runs/{}", s.wf),
        ])
        .args(["--expected-git-commit", &sha])
        .args(["--expected-evidence-artifact", &evidence])
        .args(["--expected-evidence-digest", &digest.to_string()])
        .arg("--history-root")
        .arg(s.dir("history"))
        .arg("--evidence-archive")
        .arg(s.dir(&evidence))
        .arg("--shard-archives")
        .arg(shards)
        .arg("--canonical-history-root")
        .arg(live)
        .arg("--output-history-root")
        .arg(out))
}

/// Promotion ratifies a combined run exactly as a single one, and verifies each of its N shard
/// packages: a package missing (exit 3), one whose bytes changed (exit 4) or one forged with a
/// member changed and zipped again (a self-consistent zip whose digest is not the recorded one,
/// exit 4) refuses the promotion, nothing written and every input as it was; with every package
/// whole the run becomes the anchor.
#[test]
fn promotion_of_a_combined_run_verifies_each_shard_package() {
    let r = repo();
    assert_eq!(night(&r, &[], &["--shards", "2"]).code, exit_code(Exit::Ok));
    let s = plan_and_measure_with(&r, &["--anchor-candidate"]);
    upload(&r, &s, 1);
    upload(&r, &s, 2);
    let o = combine(&r, &s);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    let live = s.dir("live");
    assert_eq!(restore(&r, None, &live).code, exit_code(Exit::Ok));
    let names: Vec<String> = (1..=2)
        .map(|k| format!("tier1-shard-{}-1-{k}", s.wf))
        .collect();
    // As download-artifact leaves them: `DIR/<name>` (archive: false).
    let whole = s.dir("shards-whole");
    std::fs::create_dir_all(&whole).unwrap();
    for n in &names {
        std::fs::copy(s.dir(n), whole.join(n)).unwrap();
    }
    let inputs = |shards: &std::path::Path| {
        (
            snapshot(&s.dir("history")),
            snapshot(&live),
            snapshot(shards),
            std::fs::read(s.dir(&format!("tier1-evidence-{}-1", s.wf))).unwrap(),
        )
    };
    let refused = |shards: &std::path::Path, code: Exit, needle: &str, tag: &str| {
        let before = inputs(shards);
        let out = s.dir(&format!("ratified-{tag}"));
        let o = promote(&r, &s, &live, shards, &out);
        assert_eq!(o.code, exit_code(code), "{tag}: {}", o.stderr);
        assert!(
            o.stderr.contains(needle),
            "{tag}: {needle:?} not in {}",
            o.stderr
        );
        assert!(
            !out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(),
            "{tag}: nothing ratified"
        );
        assert!(inputs(shards) == before, "{tag}: an input changed");
    };

    // Shard 2's package missing.
    let missing = s.dir("shards-missing");
    std::fs::create_dir_all(&missing).unwrap();
    std::fs::copy(s.dir(&names[0]), missing.join(&names[0])).unwrap();
    refused(
        &missing,
        Exit::Invalid,
        &format!("the package {} of shard 2 is not among", names[1]),
        "missing",
    );

    // Shard 1's bytes changed.
    let flipped = s.dir("shards-flipped");
    std::fs::create_dir_all(&flipped).unwrap();
    for n in &names {
        std::fs::copy(s.dir(n), flipped.join(n)).unwrap();
    }
    let mut bytes = std::fs::read(flipped.join(&names[0])).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(flipped.join(&names[0]), bytes).unwrap();
    refused(
        &flipped,
        Exit::Integrity,
        "differs from the recorded",
        "flipped",
    );

    // Shard 2 forged: a measured value changed, the zip written again (valid, self-consistent).
    let forged = s.dir("shards-forged");
    std::fs::create_dir_all(&forged).unwrap();
    for n in &names {
        std::fs::copy(s.dir(n), forged.join(n)).unwrap();
    }
    let id = run_id_of(&s);
    forge(&forged.join(&names[1]), |d| {
        edit_json(
            &d.join(&id)
                .join("shards/2/results/benchmark_test_results.json"),
            |m| {
                m["timestamp"] = Value::from("2000-01-01T00:00:00Z");
            },
        );
    });
    refused(
        &forged,
        Exit::Integrity,
        "differs from the recorded",
        "forged",
    );

    // Every package whole: the combined run is the new anchor.
    let out = s.dir("ratified");
    let o = promote(&r, &s, &live, &whole, &out);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    let runs = index(&out)["runs"].as_array().unwrap().clone();
    let newest = runs.last().unwrap();
    assert_eq!(newest["run_id"], id.as_str());
    assert_eq!(newest["baseline_eligible"], true, "{newest}");
}

/// The combine step refuses a shard package of another suite (its name, or its file's digest), of
/// another profile, or with a member outside the shard's evidence (each forged consistently, so
/// its digest is the listed one): exit 4, nothing recorded, no evidence written.
#[test]
fn the_combine_step_refuses_a_shard_of_another_suite_or_profile_or_with_a_stray_member() {
    let r = repo();
    assert_eq!(night(&r, &[], &["--shards", "2"]).code, exit_code(Exit::Ok));
    type Edit = fn(&mut Value);
    let forgeries: [(&str, Edit); 3] = [
        ("suite name", |m| m["suite"]["name"] = Value::from("other")),
        ("suite file", |m| {
            m["suite"]["config_digest"] = Value::from(format!("sha256:{}", "e".repeat(64)))
        }),
        ("profile", |m| {
            m["suite"]["profile"] = Value::from("minimal")
        }),
    ];
    for (what, edit) in forgeries {
        let s = plan_and_measure(&r);
        upload(&r, &s, 1);
        forge(&s.dir(&format!("tier1-shard-{}-1-2", s.wf)), |d| {
            edit_json(&d.join(run_id_of(&s)).join("shards/2/manifest.json"), edit);
        });
        upload(&r, &s, 2);
        let o = combine_refused(&r, &s, Exit::Integrity, "shard 2: manifest suite");
        assert!(o.stderr.contains("(the plan's)"), "{what}: {}", o.stderr);
    }
    let s = plan_and_measure(&r);
    upload(&r, &s, 2);
    forge(&s.dir(&format!("tier1-shard-{}-1-1", s.wf)), |d| {
        std::fs::write(d.join("stray.json"), b"{}").unwrap();
    });
    upload(&r, &s, 1);
    combine_refused(
        &r,
        &s,
        Exit::Integrity,
        "member \"stray.json\" lies outside shard 1's evidence",
    );
}
