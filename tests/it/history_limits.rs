//! Publication never writes a package its own restore refuses: a merge whose package would break
//! restore's caps (64 MiB expanded, 10,000 members) is refused before the output root appears, with
//! the cap and the value named, inputs untouched.

use crate::history_support::*;
use crate::support::exit_code::{Exit, exit_code};

#[test]
fn publication_refuses_a_package_its_restore_would_refuse() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    let (live, cand, out) = (w.join("live"), w.join("cand"), w.join("out"));
    bootstrap_live(w, &live, &RunSpec::new("anchor", 0));
    candidate(Some(&live), &cand, &RunSpec::new("r1", 1).speedup(2.01));
    // A summary that grew past the expanded-size cap (the suite caps its description at 4 KiB;
    // a hand-made candidate is not bound by it).
    let path = cand.join("r1/summary.json");
    let mut summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    summary["description"] = "x".repeat(65 << 20).into();
    std::fs::write(&path, serde_json::to_vec(&summary).unwrap()).unwrap();
    let (live_before, cand_before) = (snapshot(&live), snapshot(&cand));
    let args: Vec<String> = vec![
        "--candidate-history-root".into(),
        cand.display().to_string(),
        "--canonical-history-root".into(),
        live.display().to_string(),
        "--output-history-root".into(),
        out.display().to_string(),
        "--run-id".into(),
        "r1".into(),
        "--suite-config".into(),
        suite_path().display().to_string(),
    ];
    let r = run(
        &crate::support::command::bin("tier1-publish")
            .display()
            .to_string(),
        &args,
    );
    assert_eq!(r.code, exit_code(Exit::Invalid), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("refusing to write a history package that restore would refuse")
            && r.stderr.contains("67108864")
            && r.stderr.contains("nothing was written"),
        "{}",
        r.stderr
    );
    assert!(!out.exists(), "nothing written");
    assert!(
        std::fs::read_dir(w)
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().starts_with(".tier1-")),
        "no staging left"
    );
    assert!(snapshot(&live) == live_before && snapshot(&cand) == cand_before);
}
