//! docs/adoption.md §0, the local quickstart, followed word for word: in a fresh git repository
//! its files are written as shown (`<!-- quickstart: PATH -->` blocks) and its commands run as
//! shown (the `<!-- quickstart: run -->` block, under bash with the built binaries on PATH and
//! `TIER1_DIST` at this checkout, as after `cargo install --path`). The first run is green and
//! records the suite's workflow and artifact prefix, the dashboard is rendered from the local
//! store, and a second `tier1-nightly` is compared with the anchor and passes.

use crate::support::command;
use crate::support::nightly_repo::git;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// (marker, block text) of every `<!-- quickstart: X -->` block of the guide.
fn blocks(guide: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = guide.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(what) = line
            .trim()
            .strip_prefix("<!-- quickstart: ")
            .and_then(|r| r.strip_suffix(" -->"))
        else {
            continue;
        };
        assert!(
            lines.get(i + 1).is_some_and(|l| l.starts_with("```")),
            "docs/adoption.md line {}: a fenced block must follow the quickstart marker {what}",
            i + 1
        );
        let body: Vec<&str> = lines[i + 2..]
            .iter()
            .take_while(|l| !l.starts_with("```"))
            .copied()
            .collect();
        out.push((what.to_string(), body.join("\n") + "\n"));
    }
    out
}

/// Run the guide's command block in `repo` (bash, binaries on PATH); returns stdout.
fn run_block(repo: &Path, home: &Path, script: &str) -> String {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_tier1-nightly"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = command::scrubbed("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(repo)
        .env("PATH", path)
        .env("TIER1_DIST", root())
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env_remove("USER")
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the quickstart's commands failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The JSON object `tier1-nightly` printed (the line that starts with its first field).
fn nightly_json(stdout: &str) -> Value {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("{\"workflow_run_id\""))
        .unwrap_or_else(|| panic!("no tier1-nightly JSON in:\n{stdout}"));
    serde_json::from_str(line).unwrap()
}

#[test]
fn the_local_quickstart_works_word_for_word() {
    let guide = std::fs::read_to_string(root().join("docs/adoption.md")).unwrap();
    let blocks = blocks(&guide);
    let files: Vec<&(String, String)> = blocks.iter().filter(|(w, _)| w != "run").collect();
    let runs: Vec<&(String, String)> = blocks.iter().filter(|(w, _)| w == "run").collect();
    assert_eq!(runs.len(), 1, "one command block");
    for want in [
        ".gitignore",
        "configs/benchmark_suites/acme.yaml",
        "bench/sort.py",
    ] {
        assert!(
            files.iter().any(|(w, _)| w == want),
            "the quickstart shows {want}"
        );
    }

    let tmp = tempfile::tempdir().unwrap();
    let (home, repo) = (tmp.path().join("home"), tmp.path().join("acme"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    for (rel, body) in &files {
        let path = repo.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    let stdout = run_block(&repo, &home, &runs[0].1);
    let night = nightly_json(&stdout);
    assert_eq!(night["conclusion"], "success", "{night}");
    assert_eq!(night["bootstrap"], true);
    assert_eq!(night["workflow"], "benchmarks.yml");
    assert_eq!(night["artifact_prefix"], "acme");
    assert_eq!(night["history_artifact"], "acme-history-1-1-publication-1");
    let summary = &night["run"]["summary"];
    assert_eq!(
        (summary["succeeded"].as_u64(), summary["failed"].as_u64()),
        (Some(2), Some(0)),
        "{night}"
    );

    let page = std::fs::read_to_string(repo.join(".tier1/dashboard/index.html")).unwrap();
    let md = std::fs::read_to_string(repo.join(".tier1/dashboard/summary.md")).unwrap();
    assert!(
        md.starts_with("# acme benchmark history: ✅ Release ready"),
        "{md}"
    );
    for key in ["sort", "encode"] {
        assert!(
            page.contains(key) && md.contains(key),
            "{key} in the dashboard:\n{md}"
        );
    }
    let store: Value =
        serde_json::from_slice(&std::fs::read(repo.join(".tier1/store/store.json")).unwrap())
            .unwrap();
    assert!(
        store["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["path"] == ".github/workflows/benchmarks.yml"),
        "{store}"
    );

    // The next night is compared with the anchor, and passes.
    let again = nightly_json(&run_block(&repo, &home, "tier1-nightly"));
    assert_eq!(again["conclusion"], "success", "{again}");
    assert_eq!(again["bootstrap"], false);
    assert_eq!(again["restore"]["status"], "restored");
}
