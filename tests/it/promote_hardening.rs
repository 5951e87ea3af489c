//! `tier1-promote` against hostile inputs: duplicate members in the evidence archive, workflow-run
//! URLs that differ from their canonical form, symlinked or nested output roots, control characters
//! in free text, and credentials in URLs. Each refusal names the problem, exits with its documented
//! code and leaves every tree byte-identical.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::hostile_zip;

use crate::history_support::*;
use std::path::Path;
use tier1::promote::PromoteRequest;

const EXE: &str = env!("CARGO_BIN_EXE_tier1-promote");

type World = Scene;

/// Refused with `code` and `needle`, the scene's inputs and `out` byte-identical, and nothing else
/// in the scene's directory changed either (no staging directory, no new directory); returns
/// stderr.
fn refused_here(w: &World, r: &PromoteRequest, code: i32, needle: &str) -> String {
    refused_args_here(w, &promote_args(r), code, needle, &r.output_history_root)
}

fn refused_args_here(w: &World, args: &[String], code: i32, needle: &str, out: &Path) -> String {
    let before = snapshot(&w.w);
    let err = w.refused_args(args, code, needle, out);
    assert_eq!(snapshot(&w.w), before, "the work area changed");
    err
}

/// Stray staging or temporary entries directly under `dir`.
fn strays(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tier1-"))
        .collect()
}

#[test]
fn duplicate_members_of_the_evidence_archive_are_refused_before_extraction() {
    let w = World::new();
    let arch_dir = w.p("download");
    std::fs::create_dir_all(&arch_dir).unwrap();
    let zip = arch_dir.join("tier1-evidence-c");
    hostile_zip::zip_with_duplicate(&w.p("ev"), &zip, "c/report.md", b"# forged report\n");
    let digest = tier1::digest::Digest::of_file(&zip).unwrap();
    let mut r = w.req();
    r.expected_evidence_digest = digest.as_str().to_string();
    let mut args = promote_args(&r);
    let i = args.iter().position(|a| a == "--evidence-root").unwrap();
    args[i] = "--evidence-archive".into();
    args[i + 1] = zip.display().to_string();
    let err = refused_args_here(
        &w,
        &args,
        exit_code(Exit::Integrity),
        "archive member \"c/report.md\": appears 2 times in the central directory",
        &r.output_history_root,
    );
    assert!(err.contains("tier1-promote: error:"), "{err}");
}

#[test]
fn a_workflow_run_url_must_be_exactly_its_canonical_form() {
    let w = World::new();
    for bad in [
        "https://github.example/owner/repo/actions/ru\tns/123",
        "https://github.example/owner/repo/actions/runs/12\n3",
        "https://github.example\\owner\\repo\\actions\\runs\\123",
        "https://GitHub.example/owner/repo/actions/runs/123",
        "https://github.example/owner/repo/./actions/runs/123",
    ] {
        let mut r = w.req();
        r.workflow_run = bad.into();
        let err = refused_here(&w, &r, exit_code(Exit::Invalid), "is not in canonical form");
        assert!(
            err.contains("expected \"https://github."),
            "names the canonical form: {err}"
        );
        assert!(!err.contains('\t') && !err.contains("12\n3"), "{err}");
    }
}

#[test]
fn a_symlinked_output_root_is_refused_up_front_and_nothing_is_staged() {
    let w = World::new();
    let target = w.p("elsewhere");
    std::fs::create_dir_all(&target).unwrap();
    let link = w.p("out");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let r = w.req();
    refused_args_here(
        &w,
        &promote_args(&r),
        exit_code(Exit::Conflict),
        "is a symbolic link",
        &target,
    );
    assert!(link.is_symlink(), "the link itself is untouched");
    assert_eq!(strays(&w.w), Vec::<String>::new());
    // A dangling link is refused the same way (it is not an absent output root).
    std::fs::remove_dir(&target).unwrap();
    refused_args_here(
        &w,
        &promote_args(&r),
        exit_code(Exit::Conflict),
        "is a symbolic link",
        &target,
    );
    assert_eq!(strays(&w.w), Vec::<String>::new());
}

#[test]
fn an_output_root_that_is_a_file_is_refused() {
    let w = World::new();
    std::fs::write(w.p("out"), b"not a directory").unwrap();
    let r = w.req();
    refused_here(&w, &r, exit_code(Exit::Conflict), "is not a directory");
}

#[test]
fn an_output_root_inside_an_input_tree_is_refused_up_front() {
    let w = World::new();
    for (inside, names) in [
        ("cand/nested", "candidate history root"),
        ("live/deep/nested", "canonical history root"),
        ("ev/c/out", "evidence root"),
    ] {
        let mut r = w.req();
        r.output_history_root = w.p(inside);
        refused_here(&w, &r, exit_code(Exit::Invalid), names);
    }
    // Through a `..` detour or a symlinked parent the same tree is recognised.
    let mut r = w.req();
    r.output_history_root = w.p("ev/../cand/x");
    refused_here(&w, &r, exit_code(Exit::Invalid), "candidate history root");
    std::os::unix::fs::symlink(w.p("live"), w.p("alias")).unwrap();
    let mut r = w.req();
    r.output_history_root = w.p("alias/new");
    refused_here(&w, &r, exit_code(Exit::Invalid), "canonical history root");
}

#[test]
fn control_characters_in_free_text_are_refused_and_never_echoed() {
    let w = World::new();
    type Edit = fn(&mut PromoteRequest);
    let cases: [(Edit, &str); 4] = [
        (
            |r| r.note = "Reviewed\u{1b}]0;pwned\u{7}\u{1b}[2J".into(),
            "--note contains control character U+001B",
        ),
        (
            |r| r.requester = "bob\u{9b}31m".into(),
            "--requester contains control character U+009B",
        ),
        (
            |r| r.reviewers = vec!["ann".into(), "eve\u{202e}gpj.exe".into()],
            "--reviewer contains control character U+202E",
        ),
        (
            |r| r.note = "line one\n::error::forged annotation".into(),
            "--note contains control character U+000A",
        ),
    ];
    for (edit, needle) in cases {
        let mut r = w.req();
        edit(&mut r);
        let err = refused_here(&w, &r, exit_code(Exit::Invalid), needle);
        for c in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
            assert!(!err.contains(c), "raw {c:?} reached stderr: {err:?}");
        }
        assert!(!err.contains("\n::error::forged"), "{err:?}");
    }
}

#[test]
fn credentials_and_query_strings_never_reach_messages_or_annotations() {
    let w = World::new();
    for (url, secret) in [
        (
            "https://github.example/owner/repo/actions/runs/123?token=SEKRET1",
            "SEKRET1",
        ),
        (
            "https://alice:SEKRET2@github.example/owner/repo/actions/runs/123",
            "SEKRET2",
        ),
        (
            "https://github.example/owner/repo/actions/runs/123#SEKRET3",
            "SEKRET3",
        ),
    ] {
        let mut r = w.req();
        r.workflow_run = url.into();
        let before = snapshot(&w.w);
        let out = crate::support::command::scrubbed(EXE)
            .args(promote_args(&r))
            .env("GITHUB_ACTIONS", "true")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env("TIER1_LOG", "debug")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(exit_code(Exit::Invalid)), "{err}");
        assert!(err.contains("--workflow-run"), "{err}");
        assert!(err.contains("::error::"), "annotation emitted: {err}");
        assert!(!err.contains(secret), "{secret} leaked: {err}");
        assert_eq!(snapshot(&w.w), before);
    }
}
