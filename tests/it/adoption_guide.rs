//! docs/adoption.md shows the files of the fixture adopter (tests/fixtures/adopter) verbatim, so
//! the YAML a new user copies is the YAML tests/it/workflow_adoption.rs runs: every
//! `<!-- file: PATH -->` marker is followed by a fenced block identical to PATH, the workflow,
//! the suite and the .gitignore are all shown, and `<tier1 commit>` and `<tier1 sha256>` are the
//! only placeholders.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// (path, block text) of every marked block of the guide.
fn marked_blocks(guide: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = guide.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(path) = line
            .trim()
            .strip_prefix("<!-- file: ")
            .and_then(|r| r.strip_suffix(" -->"))
        else {
            continue;
        };
        let open = lines.get(i + 1).copied().unwrap_or_default();
        assert!(
            open.starts_with("```"),
            "docs/adoption.md line {}: expected a fenced block after the marker of {path}, found {open:?}",
            i + 2
        );
        let body: Vec<&str> = lines[i + 2..]
            .iter()
            .take_while(|l| !l.starts_with("```"))
            .copied()
            .collect();
        out.push((path.to_string(), body.join("\n") + "\n"));
    }
    out
}

#[test]
fn the_guide_shows_the_tested_adopter_files_verbatim() {
    let guide = std::fs::read_to_string(root().join("docs/adoption.md")).unwrap();
    let blocks = marked_blocks(&guide);
    for want in [
        "tests/fixtures/adopter/.github/workflows/benchmarks.yml",
        "tests/fixtures/adopter/configs/benchmark_suites/kernels.yaml",
        "tests/fixtures/adopter/.gitignore",
        "tests/fixtures/adopter/.github/workflows/benchmarks-preview.yml",
        "tests/fixtures/adopter/.github/workflows/benchmarks-sharded.yml",
    ] {
        assert!(
            blocks.iter().any(|(p, _)| p == want),
            "docs/adoption.md does not show {want}"
        );
    }
    for (path, body) in &blocks {
        let file = std::fs::read_to_string(root().join(path))
            .unwrap_or_else(|e| panic!("docs/adoption.md shows {path}: {e}"));
        if *body != file {
            let line = body
                .lines()
                .zip(file.lines())
                .position(|(a, b)| a != b)
                .map_or(body.lines().count().min(file.lines().count()) + 1, |n| {
                    n + 1
                });
            panic!(
                "docs/adoption.md's block of {path} differs from the file at its line {line}: expected {:?}, found {:?}",
                file.lines().nth(line - 1).unwrap_or("<end>"),
                body.lines().nth(line - 1).unwrap_or("<end>")
            );
        }
    }
}

/// The two placeholders a user fills in: the commit of the release tag (every `uses:` of tier1)
/// and the tarball's SHA-256 (`tier1-sha256` of every tier1 action, issue 20: SHA256SUMS of the
/// same release proves nothing about who built it, and `gh` may be absent).
#[test]
fn the_adopter_workflow_pins_tier1_by_its_commit_and_its_tarball_digest() {
    let wf = std::fs::read_to_string(
        root().join("tests/fixtures/adopter/.github/workflows/benchmarks.yml"),
    )
    .unwrap();
    let tier1: Vec<&str> = wf
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("- uses: ")
                .or(l.trim().strip_prefix("uses: "))
        })
        .filter(|u| u.starts_with("tier1-bench/tier1"))
        .collect();
    assert_eq!(
        tier1.len(),
        4,
        "producer, publish, promote, install (dashboard): {tier1:?}"
    );
    for u in tier1 {
        assert!(u.contains("@<tier1 commit> # v"), "{u}");
    }
    assert!(!wf.contains("<40-hex sha>"), "another placeholder");
    assert!(
        wf.contains("\n  TIER1_SHA256: <tier1 sha256> #"),
        "the tarball digest is pinned once, beside the version"
    );
    let pins = wf
        .lines()
        .filter(|l| l.trim() == "tier1-sha256: ${{ env.TIER1_SHA256 }}")
        .count();
    assert_eq!(pins, 3, "every tier1 action gets the pinned digest");
    assert!(
        !wf.contains("allow-unverified"),
        "the guide never opts out of verification"
    );
    let placeholders: Vec<&str> = wf
        .match_indices('<')
        .map(|(i, _)| &wf[i..wf[i..].find('>').map_or(wf.len(), |j| i + j + 1)])
        .collect();
    assert!(
        placeholders
            .iter()
            .all(|p| *p == "<tier1 commit>" || *p == "<tier1 sha256>"),
        "{placeholders:?}"
    );
}

/// The guide's table of edits names every value of the template an adopter must change, each
/// with its reason, and warns against a virtualenv inside the checkout.
#[test]
fn the_guide_lists_every_edit_of_the_template() {
    let guide = std::fs::read_to_string(root().join("docs/adoption.md")).unwrap();
    let start = guide
        .find("### Every edit, and why")
        .expect("the edits section");
    let table = &guide[start..guide[start..].find("### CPU-only projects").unwrap() + start];
    for edit in [
        "<tier1 commit>",
        "TIER1_VERSION",
        "tier1-sha256",
        "env.SUITE",
        "artifact-prefix:",
        "workflow:",
        "runs-on:",
        "labels:",
        "expected-gpu-name:",
        "profile:",
        "requirements.txt",
        "benchmarks-preview",
    ] {
        let row = table
            .lines()
            .find(|l| l.starts_with('|') && l.contains(edit))
            .unwrap_or_else(|| panic!("the edits table does not name {edit}"));
        assert_eq!(
            row.matches(" | ").count(),
            3,
            "four cells (where, value, change, why): {row}"
        );
    }
    assert!(table.contains("never create a virtualenv or build output inside the checkout"));
    // Every value the table names is in the template (the fixture's workflows).
    let wf = std::fs::read_to_string(
        root().join("tests/fixtures/adopter/.github/workflows/benchmarks.yml"),
    )
    .unwrap();
    for value in [
        "artifact-prefix: acme",
        "workflow: benchmarks.yml",
        "expected-gpu-name: NVIDIA B200",
        "--artifact-prefix acme",
        "--workflow benchmarks.yml",
        "bench/requirements.txt",
        "RUNNER_TEMP/bench-venv",
    ] {
        assert!(wf.contains(value), "benchmarks.yml lacks {value}");
    }
}
