//! Every checkout states its depth on purpose (issue 36, N1). GitHub's `actions/checkout` makes a
//! depth-1 clone by default (`fetch-depth: 1`, actions/checkout `action.yml`), which holds no
//! anchor commit: a job that measures side by side (`tier1-run`, `tier1-compare run`, the
//! producer action) keeps depth 1 and says that tier1 fetches the anchor's commit itself; a job
//! that walks history says `fetch-depth: 0` and why; every other job says it needs no history.
//! Read as text (comments are not in the parsed YAML): each workflow, the adopter's workflows and
//! the YAML of docs/adoption.md.

use crate::support::repo_files::{root, text};

/// The files whose checkout steps are read.
fn files() -> Vec<String> {
    let mut out = Vec::new();
    for dir in [
        ".github/workflows",
        "tests/fixtures/adopter/.github/workflows",
    ] {
        let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
            .collect();
        names.sort();
        out.extend(names.into_iter().map(|n| format!("{dir}/{n}")));
    }
    out.push("docs/adoption.md".into());
    out
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// One checkout step: where it is, its lines with the comment lines just above it, its
/// `fetch-depth`, and the rest of its job's text.
struct Checkout {
    at: String,
    lines: Vec<String>,
    depth: Option<String>,
    job_rest: String,
}

fn checkouts(rel: &str) -> Vec<Checkout> {
    let text = text(rel);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if !l.contains("uses: actions/checkout@") {
            continue;
        }
        // The step starts at the `- ` line at or above this one.
        let start = (0..=i)
            .rev()
            .find(|&j| lines[j].trim_start().starts_with("- "))
            .expect("a step start");
        let step_indent = indent(lines[start]);
        let mut first = start;
        while first > 0
            && lines[first - 1].trim_start().starts_with('#')
            && indent(lines[first - 1]) == step_indent
        {
            first -= 1;
        }
        let end = (start + 1..lines.len())
            .find(|&j| !lines[j].trim().is_empty() && indent(lines[j]) <= step_indent)
            .unwrap_or(lines.len());
        let job_end = (end..lines.len())
            .find(|&j| {
                !lines[j].trim().is_empty()
                    && indent(lines[j]) < step_indent.saturating_sub(2)
                    && !lines[j].trim_start().starts_with('#')
            })
            .unwrap_or(lines.len());
        let depth = lines[start..end].iter().find_map(|x| {
            x.trim()
                .strip_prefix("fetch-depth:")
                .map(|v| v.split('#').next().unwrap_or_default().trim().to_string())
        });
        out.push(Checkout {
            at: format!("{rel}:{}", i + 1),
            lines: lines[first..end].iter().map(|s| s.to_string()).collect(),
            depth,
            job_rest: lines[end..job_end].join("\n"),
        });
    }
    out
}

fn comments(c: &Checkout) -> String {
    c.lines
        .iter()
        .filter_map(|l| l.split_once('#').map(|(_, c)| c.to_string()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the job measures side by side after its checkout.
fn measures_side_by_side(c: &Checkout) -> bool {
    [
        "tier1-run",
        "tier1-compare\" run",
        "tier1-compare run",
        "tier1-shard\" run",
        "uses: tier1-bench/tier1@",
    ]
    .iter()
    .any(|m| c.job_rest.contains(m))
}

#[test]
fn every_checkout_states_its_depth_and_why() {
    let mut seen = 0;
    let mut side_by_side = 0;
    for rel in files() {
        for c in checkouts(&rel) {
            seen += 1;
            let depth = c.depth.as_deref().unwrap_or_else(|| {
                panic!("{}: no explicit fetch-depth:\n{}", c.at, c.lines.join("\n"))
            });
            let why = comments(&c);
            match depth {
                "0" => assert!(
                    why.contains("history"),
                    "{}: fetch-depth: 0 without a comment saying which history it needs: {why:?}",
                    c.at
                ),
                "1" if measures_side_by_side(&c) => {
                    side_by_side += 1;
                    assert!(
                        why.contains("tier1 fetches the anchor's commit itself"),
                        "{}: a side-by-side job at depth 1 must say tier1 fetches the anchor's \
                         commit itself: {why:?}",
                        c.at
                    );
                }
                "1" => assert!(
                    why.contains("needs no history"),
                    "{}: depth 1 without saying the job needs no history: {why:?}",
                    c.at
                ),
                other => panic!("{}: fetch-depth {other}: expected 0 or 1", c.at),
            }
        }
    }
    assert!(seen >= 15, "found only {seen} checkouts");
    // The nightly producer, the preview, the adopter's producer and its preview, the guide's two.
    assert!(
        side_by_side >= 6,
        "found only {side_by_side} side-by-side checkouts"
    );
}
