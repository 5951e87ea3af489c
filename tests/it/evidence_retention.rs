//! `tier1-evidence verify` reads the evidence artifact's effective retention (issue 20, suspected
//! defect 9, confirmed: `retention-days` above the repository's or organization's maximum is cut to
//! that maximum without an error). The retention is `expires_at - created_at` of the REST record.
//! Evidence that would expire by the 60-day renewal age can never be renewed: refused (exit 3),
//! naming the field and both values. A retention under the 90 days tier1 asks for shortens the
//! renewal window: verified, with a warning that says how many days the window has.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::fake_github;

use crate::restore_support::*;
use chrono::Duration;
use fake_github::{FakeGithub, Fault};
use std::process::Output;
use tier1::digest::Digest;

const TOKEN: &str = "ghs_retentionTOKEN";

/// Verify the nightly's evidence with its REST `expires_at` set `days` after its `created_at`.
fn verify_with_retention(days: i64) -> (Output, Published, String) {
    verify_with_span(Duration::days(days))
}

/// Verify the nightly's evidence with its REST `expires_at` set `span` after its `created_at`.
fn verify_with_span(span: Duration) -> (Output, Published, String) {
    let env = Env::new();
    let p = env.good_nightly(t0(), 1);
    let fake = FakeGithub::start(&env.store_dir, TOKEN);
    fake.set_now(t0() + Duration::minutes(1));
    let expires = p.evidence.created_at + span;
    fake.inject(Fault::ArtifactField {
        id: p.evidence.id,
        field: "expires_at".into(),
        value: Some(serde_json::json!(expires.to_rfc3339())),
    });
    let file = env.tmp.path().join(format!("evidence-{}.zip", p.run.id));
    let hex = Digest::of_file(&file).unwrap().hex().to_string();
    let outputs = env.tmp.path().join("github_output");
    std::fs::write(&outputs, "").unwrap();
    let o = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-evidence"))
        .env("GITHUB_API_URL", fake.api_url())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &outputs)
        .args([
            "verify",
            "--workflow-run-id",
            &p.run.id.to_string(),
            "--file",
        ])
        .arg(&file)
        .args([
            "--artifact-name",
            &p.evidence.name,
            "--expected-digest",
            &hex,
        ])
        .output()
        .unwrap();
    let written = std::fs::read_to_string(&outputs).unwrap();
    (o, p, written)
}

#[test]
fn evidence_that_expires_by_the_renewal_age_is_refused_naming_its_retention() {
    for days in [1, 30, 60] {
        let (o, p, outputs) = verify_with_retention(days);
        let err = stderr(&o);
        assert_eq!(
            o.status.code(),
            Some(exit_code(Exit::Invalid)),
            "{days} days: {err}"
        );
        assert!(
            err.contains(&format!(
                "evidence artifact {} (id {}): effective retention (expires_at - created_at): expected more than 60 days (the anchor renewal age), found {days} days",
                p.evidence.name, p.evidence.id
            )),
            "{days} days: {err}"
        );
        assert!(err.contains("retention-days"), "{err}");
        assert!(o.stdout.is_empty(), "{days} days");
        assert_eq!(outputs, "", "{days} days: no step output written");
    }
}

#[test]
fn a_retention_under_ninety_days_is_verified_with_the_shorter_renewal_window_named() {
    let (o, _, outputs) = verify_with_retention(75);
    assert!(outputs.contains("evidence_artifact_digest="), "{outputs}");
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(v["retention_days"], 75);
    assert_eq!(v["renewal_window_days"], 15);
    assert!(
        stderr(&o).contains("::warning::")
            && stderr(&o).contains("renewal window is 15 days instead of 30"),
        "{}",
        stderr(&o)
    );
    let (o, _, _) = verify_with_retention(90);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(
        (
            v["retention_days"].as_i64(),
            v["renewal_window_days"].as_i64()
        ),
        (Some(90), Some(30))
    );
    assert!(!stderr(&o).contains("::warning::"), "{}", stderr(&o));
}

/// Issue 36, N10: GitHub's client computes `expires_at` (now + `retention-days`, in calendar days
/// of the runner's local time: @actions/artifact `getExpiration`, src/internal/upload/retention.ts)
/// before the service stamps `created_at`, so a 90-day artifact's span is a little under 90 days,
/// and an hour off across a daylight-saving change. Counted in whole days it was read as 89 (a
/// warning for a retention nobody cut) and a 61-day one as 60 (refused): the span is read as the
/// nearest whole day.
#[test]
fn a_span_a_little_under_whole_days_is_read_as_those_days() {
    for (span, days) in [
        (Duration::days(90) - Duration::seconds(1), 90),
        (Duration::days(90) - Duration::hours(1), 90),
        (Duration::days(61) - Duration::seconds(2), 61),
    ] {
        let (o, _, _) = verify_with_span(span);
        assert_eq!(
            o.status.code(),
            Some(exit_code(Exit::Ok)),
            "{span}: {}",
            stderr(&o)
        );
        let v = stdout_json(&o);
        assert_eq!(v["retention_days"].as_i64(), Some(days), "{span}");
        if days == 90 {
            assert!(
                !stderr(&o).contains("::warning::"),
                "{span}: {}",
                stderr(&o)
            );
        }
    }
}
