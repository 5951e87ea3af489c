//! docs/adoption.md shows the files of the fixture adopter (tests/fixtures/adopter) verbatim, so
//! the YAML a new user copies is the YAML tests/it/workflow_adoption.rs runs: every
//! `<!-- file: PATH -->` marker is followed by a fenced block identical to PATH, the workflow,
//! the suite and the .gitignore are all shown, and `<tier1 commit>` and `<tier1 sha256>` are the
//! only placeholders. Issue 36, N6: every value of the template an adopter must change is in the
//! "change exactly these" table, every tier1 action that installs gets the pinned digest, and §7
//! lists every input of every action, the producer's in one table.

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
        5,
        "validate, producer, publish, promote, install (dashboard): {tier1:?}"
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
    assert_eq!(
        pins, 4,
        "every tier1 action that installs gets the pinned digest (the dashboard's too)"
    );
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

/// The template's files, as the guide shows them (tests/fixtures/adopter).
const TEMPLATES: [&str; 3] = [
    "tests/fixtures/adopter/.github/workflows/benchmarks.yml",
    "tests/fixtures/adopter/.github/workflows/benchmarks-preview.yml",
    "tests/fixtures/adopter/.github/workflows/history-export.yml",
];

/// Literals of the fixture adopter (its names, versions, labels, schedules) and the placeholders:
/// a line of the template holding one is a value the adopter changes.
const FIXTURE_LITERALS: [&str; 10] = [
    "<",
    "acme",
    "benchmarks.yml",
    "benchmarks-preview",
    "kernels.yaml",
    "NVIDIA B200",
    "0.1.0",
    "b200",
    "tier1-preview",
    "cron:",
];

/// The rows of the guide's "change exactly these" table: (where, fixture values in backticks,
/// the whole row).
fn edits_rows(guide: &str) -> Vec<(String, Vec<String>, String)> {
    let start = guide
        .find("### Every edit, and why")
        .expect("the edits section");
    let end = guide[start..].find("### CPU-only projects").unwrap() + start;
    guide[start..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| where") && !l.starts_with("| ---"))
        .map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").collect();
            assert_eq!(
                cells.len(),
                4,
                "four cells (where, value, change, why): {row}"
            );
            let values = cells[1]
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            (cells[0].to_string(), values, row.to_string())
        })
        .collect()
}

/// Issue 36, N6: the template applied with only the edits the guide lists. Every line of every
/// template file that holds a fixture value or a placeholder holds a value of a row of the edits
/// table, and that row names the file (or "every file"); the edits outside the files (the
/// environment's branch rule for another default branch, an old `gh` on a self-hosted runner)
/// have rows too.
#[test]
fn every_placeholder_of_the_template_is_in_the_edits_table() {
    let guide = std::fs::read_to_string(root().join("docs/adoption.md")).unwrap();
    let rows = edits_rows(&guide);
    for path in TEMPLATES {
        let file = std::path::Path::new(path)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(root().join(path)).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split(" #").next().unwrap_or_default();
            if code.trim_start().starts_with('#')
                || !FIXTURE_LITERALS.iter().any(|l| code.contains(l))
            {
                continue;
            }
            let covered = rows.iter().any(|(where_, values, _)| {
                (where_.contains("every file") || where_.contains(&file))
                    && values
                        .iter()
                        .any(|v| v.len() >= 3 && code.contains(v.as_str()))
            });
            assert!(
                covered,
                "{path}:{}: {line:?} holds a value to change that no row of the edits table (naming {file} or every file) lists",
                n + 1
            );
        }
        // Every placeholder of the file is a value of the table.
        for (i, _) in text.match_indices('<') {
            let end = text[i..].find('>').map_or(text.len(), |j| i + j + 1);
            let placeholder = &text[i..end];
            assert!(
                rows.iter()
                    .any(|(_, v, _)| v.iter().any(|x| x == placeholder)),
                "{path}: {placeholder} is not in the edits table"
            );
        }
    }
    for outside in ["deployment branch", "`gh`"] {
        assert!(
            rows.iter().any(|(_, _, row)| row.contains(outside)),
            "the edits table has no row for {outside}"
        );
    }
}

/// Issue 36, N6: every tier1 action of the template that installs tier1 gets the pinned tarball
/// digest (the dashboard's and the export's installs lacked it, so on a runner without `gh` they
/// refused, or on one with an old `gh` they could not verify).
#[test]
fn every_tier1_install_of_the_template_pins_the_tarball_digest() {
    for path in TEMPLATES {
        let wf: serde_json::Value =
            serde_saphyr::from_str(&std::fs::read_to_string(root().join(path)).unwrap()).unwrap();
        assert_eq!(
            wf["env"]["TIER1_SHA256"], "<tier1 sha256>",
            "{path}: the digest is pinned once, beside the version"
        );
        let mut installs = 0;
        for (job, def) in wf["jobs"].as_object().unwrap() {
            for step in def["steps"].as_array().into_iter().flatten() {
                let uses = step["uses"].as_str().unwrap_or_default();
                if !uses.starts_with("tier1-bench/tier1")
                    || uses.starts_with("tier1-bench/tier1/validate@")
                {
                    continue;
                }
                installs += 1;
                assert_eq!(
                    step["with"]["tier1-sha256"], "${{ env.TIER1_SHA256 }}",
                    "{path} job {job}: {uses} installs tier1 without the pinned digest"
                );
                assert_eq!(
                    step["with"]["tier1-version"], "${{ env.TIER1_VERSION }}",
                    "{path} job {job}: {uses}"
                );
            }
        }
        assert!(installs > 0, "{path}");
    }
}

/// Issue 36, N6: §7 lists the producer's inputs in one table (a paragraph pasted into it had cut
/// it in two, and the `gpu-preflight` and `labels` rows were lost): every input of action.yml has
/// exactly one row of three cells, and every input of the other actions is named in §7.
#[test]
fn section_7_lists_every_input_of_every_action_the_producer_s_in_one_table() {
    let guide = std::fs::read_to_string(root().join("docs/adoption.md")).unwrap();
    let start = guide.find("## 7. The actions' inputs").expect("§7");
    let end = guide[start + 3..]
        .find("\n## ")
        .map_or(guide.len(), |i| start + 3 + i);
    let section = &guide[start..end];
    let producer = section
        .find("### The producer (`tier1-bench/tier1`)")
        .expect("the producer's subsection");
    let sub_end = section[producer + 4..]
        .find("\n### ")
        .map_or(section.len(), |i| producer + 4 + i);
    let lines: Vec<&str> = section[producer..sub_end].lines().collect();
    let first = lines
        .iter()
        .position(|l| l.starts_with('|'))
        .expect("the producer's table");
    let table: Vec<&str> = lines[first..]
        .iter()
        .take_while(|l| l.starts_with('|'))
        .copied()
        .collect();
    let after = &lines[first + table.len()..];
    assert!(
        after.iter().all(|l| !l.starts_with('|')),
        "the producer's table is cut in two: {:?}",
        after.iter().find(|l| !l.starts_with('|'))
    );
    assert_eq!(table[0], "| input | default | meaning |");
    assert!(table[1].starts_with("| ---"), "{}", table[1]);
    let rows = &table[2..];
    for row in rows {
        assert!(
            row.starts_with("| ") && row.ends_with(" |") && row.matches(" | ").count() == 2,
            "three cells: {row}"
        );
    }
    let read = |rel: &str| -> serde_json::Value {
        serde_saphyr::from_str(&std::fs::read_to_string(root().join(rel)).unwrap()).unwrap()
    };
    let producer_inputs = read("action.yml");
    for input in producer_inputs["inputs"].as_object().unwrap().keys() {
        let named = rows
            .iter()
            .filter(|r| {
                r.split(" | ")
                    .next()
                    .is_some_and(|c| c.contains(&format!("`{input}`")))
            })
            .count();
        assert_eq!(named, 1, "the producer's input {input}: {named} rows");
    }
    for action in [
        "install/action.yml",
        "publish/action.yml",
        "promote/action.yml",
        "export/action.yml",
        "validate/action.yml",
    ] {
        for input in read(action)["inputs"].as_object().unwrap().keys() {
            assert!(
                section.contains(&format!("`{input}`")),
                "§7 does not name {action}'s input {input}"
            );
        }
    }
}

/// Issue 36, N7: tier1's workflows and actions run on github.com only, and the README and the
/// guide say so and why: the artifact actions v4 and later (not on GitHub Enterprise Server),
/// `concurrency.queue: max`, the `$/` reference to a reusable workflow, and the installer's API
/// host (tier1's releases are on github.com).
#[test]
fn the_readme_and_the_guide_say_github_com_only_and_why() {
    for doc in ["README.md", "docs/adoption.md"] {
        let text = std::fs::read_to_string(root().join(doc)).unwrap();
        for needle in [
            "github.com only",
            "GitHub Enterprise Server",
            "upload-artifact",
            "queue: max",
            "`$/`",
            "api.github.com",
        ] {
            assert!(text.contains(needle), "{doc} does not say {needle:?}");
        }
    }
}
