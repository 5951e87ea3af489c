//! `tier1-bisect.yml`, run as GitHub would run it (the scenario harness, docs/workflow-tests.md):
//! a manual dispatch on the GPU runner checks out the full history, builds tier1-bisect, finds the
//! culprit of a synthetic history (its command target's work doubles in one commit), writes it to
//! the job's step summary and uploads the report; builds go to the runner's tool cache. A second
//! dispatch reuses those builds. A good commit that does not build fails the job and says why.
//! Issue 36, N3: the bisection builds commits no one ratified, so it runs on the preview runner
//! class, never on the canonical runner, and builds into its own cache (`tier1-bisect-builds`),
//! never the nightly's (`tier1-builds`).

use crate::support::exit_code::{Exit, exit_code};
use crate::support::synthetic_history::{self as sh, Spec};
use crate::support::workflow_harness;

use serde_json::{Value, json};
use workflow_harness::{Harness, REPOSITORY, Report, RunSpec, harness_or_skip, manifest_dir};

const WORKFLOW: &str = ".github/workflows/tier1-bisect.yml";

fn spec(unbuildable: Vec<usize>) -> Spec {
    Spec {
        commits: 8,
        culprit: Some(5),
        factor: 2.0,
        unbuildable,
        crashing: Vec::new(),
        timed: false,
        noise: 0.0,
    }
}

/// A scenario repository holding the bisect workflow, the NVRTC step's scripts and the synthetic
/// history (its first commit is the harness's; returns the ids, oldest first).
fn scenario(spec: &Spec) -> Option<(Harness, Vec<String>)> {
    harness_or_skip("workflow_bisect")?;
    let h = Harness::with_source(REPOSITORY, |src| {
        for rel in [WORKFLOW, ".ci/nvrtc.sh"] {
            let to = src.join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(manifest_dir().join(rel), &to).unwrap();
        }
        // The requirements pin the stand-in wheel the runners' tool caches hold.
        let (_, wheel) = workflow_harness::nvrtc_stand_in();
        std::fs::write(
            src.join(".ci/nvrtc-requirements.txt"),
            crate::support::nvrtc_wheel::requirements(
                &workflow_harness::pinned_nvrtc_version(),
                &wheel,
            ),
        )
        .unwrap();
        sh::write_base(src, spec);
        sh::write_commit(src, spec, 0);
    });
    let mut commits = vec![h.sha.clone()];
    commits.extend(sh::commit_range(&h.source, spec, 1..spec.commits));
    Some((h, commits))
}

fn dispatch(h: &Harness, good: &str, bad: &str) -> Report {
    let mut run =
        RunSpec::dispatch(json!({"good": good, "bad": bad, "target": "loop"})).workflow(WORKFLOW);
    run.0["sha"] = json!(bad);
    h.run(&[run])
}

fn uploaded_report(h: &Harness, r: &Report) -> Value {
    let run_id = r.run(0)["id"].as_u64().unwrap();
    let names = h.artifact_names(run_id);
    assert_eq!(names, [format!("tier1-bisect-{run_id}-1")]);
    assert_eq!(r.step(0, "bisect", "bisect")["outputs"]["report"], "true");
    let out = r.log(0, "bisect", "bisect");
    let line = out
        .lines()
        .find(|l| l.starts_with('{') && l.contains("tier1.bisect.v1"))
        .unwrap_or_else(|| panic!("no report on stdout: {out}"));
    serde_json::from_str(line).unwrap()
}

#[test]
fn a_dispatch_finds_the_culprit_and_writes_it_to_the_step_summary() {
    let spec = spec(Vec::new());
    let Some((h, commits)) = scenario(&spec) else {
        return;
    };
    let r = dispatch(&h, &commits[0], &commits[7]);
    let job = r.job(0, "bisect");
    assert_eq!(job["result"], "success", "{}", r.diagnose(0));
    assert_eq!(
        r.step(0, "bisect", "Checkout with the full history")["outputs"]["commit"],
        commits[7]
    );
    let report = uploaded_report(&h, &r);
    assert_eq!(report["culprit"], commits[5].as_str(), "{report:#}");
    assert!(report["builds"].as_u64().unwrap() <= 4, "{report:#}");
    let summary = job["summary"].as_str().unwrap();
    assert!(
        summary.contains(&format!(
            "First commit that shows the change: **`{}`**",
            commits[5]
        )),
        "{summary}"
    );
    assert!(summary.contains("| step | commit | verdict |"), "{summary}");
    assert_eq!(job["runner"], "b200-preview-01", "{}", r.diagnose(0));
    let (canonical, preview) = h.tool_caches();
    for cache in ["tier1-builds", "tier1-bisect-builds"] {
        assert!(
            !canonical.join(cache).exists(),
            "the bisection wrote the canonical runner's {cache}"
        );
    }
    assert!(
        preview.join("tier1-bisect-builds").is_dir() && !preview.join("tier1-builds").exists(),
        "the builds are not in the bisection's own cache"
    );
    // The builds live in the runner's tool cache, so a second dispatch builds nothing.
    let again = dispatch(&h, &commits[0], &commits[7]);
    assert_eq!(
        again.job(0, "bisect")["result"],
        "success",
        "{}",
        again.diagnose(0)
    );
    let report = uploaded_report(&h, &again);
    assert_eq!(
        (report["culprit"].clone(), report["builds"].clone()),
        (json!(commits[5]), json!(0))
    );
}

#[test]
fn a_good_commit_that_does_not_build_fails_the_job_with_the_reason() {
    let spec = spec(vec![0]);
    let Some((h, commits)) = scenario(&spec) else {
        return;
    };
    let r = dispatch(&h, &commits[0], &commits[7]);
    assert_eq!(r.job(0, "bisect")["result"], "failure", "{}", r.diagnose(0));
    let step = r.step(0, "bisect", "bisect");
    assert_eq!(
        step["exit_code"],
        exit_code(Exit::Unavailable),
        "{}",
        r.diagnose(0)
    );
    let log = r.log(0, "bisect", "bisect");
    assert!(
        log.contains(&format!(
            "the good commit {} cannot serve as the reference",
            commits[0]
        )),
        "{log}"
    );
    let run_id = r.run(0)["id"].as_u64().unwrap();
    assert!(
        h.artifact_names(run_id).is_empty(),
        "no report, no artifact"
    );
}
