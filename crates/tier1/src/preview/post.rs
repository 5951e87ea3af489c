//! Post a preview on its pull request (`tier1-compare comment`): the comment `tier1-compare run`
//! wrote, or the "did not complete" comment, checked before anything is sent (marker first,
//! within GitHub's size limit) and posted or updated as the one comment of its author with the
//! preview marker.

use super::PreviewError;
use super::markdown::{MARKER, failure_comment};
use crate::github::GithubClient;
use crate::github::comments::{COMMENT_BODY_MAX_CHARS, Upserted, upsert_marked};
use std::path::PathBuf;

/// The author of comments posted with a workflow's `GITHUB_TOKEN`.
pub const DEFAULT_AUTHOR: &str = "github-actions[bot]";

/// What to post.
#[derive(Debug, Clone)]
pub enum Body {
    /// A `comment.md` written by `tier1-compare run`.
    File(PathBuf),
    /// The preview job ended without a comparison; link to its run.
    Failed {
        /// The workflow run.
        run_url: Option<String>,
    },
}

/// The comment's text, checked: the marker on the first line (so the next run finds it) and at
/// most GitHub's 65,536 characters.
pub(crate) fn body_text(body: &Body) -> Result<String, PreviewError> {
    let (text, what) = match body {
        Body::File(p) => {
            let bytes = std::fs::read(p).map_err(|source| PreviewError::Io {
                path: p.display().to_string(),
                source,
            })?;
            let text = String::from_utf8(bytes).map_err(|e| {
                PreviewError::Invalid(format!(
                    "--body-file {}: expected UTF-8 Markdown, found invalid UTF-8 at byte {}",
                    p.display(),
                    e.utf8_error().valid_up_to()
                ))
            })?;
            (text, format!("--body-file {}", p.display()))
        }
        Body::Failed { run_url } => (
            failure_comment(run_url.as_deref()),
            "the failure comment".into(),
        ),
    };
    let first = text.lines().next().unwrap_or_default();
    if first.trim() != MARKER {
        return Err(PreviewError::Invalid(format!(
            "{what}: expected the first line {MARKER:?} (written by tier1-compare run), found {:?}",
            first.chars().take(80).collect::<String>()
        )));
    }
    let chars = text.chars().count();
    if chars > COMMENT_BODY_MAX_CHARS {
        return Err(PreviewError::Invalid(format!(
            "{what}: expected at most {COMMENT_BODY_MAX_CHARS} characters (GitHub's comment limit), found {chars}"
        )));
    }
    Ok(text)
}

/// Check everything about a comment before any request: the pull request number, the author,
/// and the body (`body_text`). Returns the text to post.
pub fn prepare(pr: u64, author: &str, body: &Body) -> Result<String, PreviewError> {
    if pr == 0 {
        return Err(PreviewError::Invalid(
            "--pr: expected a pull request number >= 1, found 0".into(),
        ));
    }
    if author.trim().is_empty() {
        return Err(PreviewError::Invalid(
            "--author: expected the login that posts the comment, found an empty value".into(),
        ));
    }
    body_text(body)
}

/// Post `text` (from [`prepare`]) on pull request `pr`, or update the one comment `author`
/// already posted there with the preview marker.
pub fn post(
    client: &GithubClient,
    pr: u64,
    author: &str,
    text: &str,
) -> Result<Upserted, PreviewError> {
    Ok(upsert_marked(client, pr, MARKER, author.trim(), text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_checked_before_posting() {
        let ok = Body::Failed { run_url: None };
        let e = prepare(0, DEFAULT_AUTHOR, &ok).unwrap_err().to_string();
        assert_eq!(e, "--pr: expected a pull request number >= 1, found 0");
        let e = prepare(7, " ", &ok).unwrap_err().to_string();
        assert!(e.starts_with("--author: expected the login"), "{e}");
        assert!(prepare(7, DEFAULT_AUTHOR, &ok).unwrap().starts_with(MARKER));
    }

    #[test]
    fn bodies_are_checked_before_posting() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok.md");
        std::fs::write(&ok, format!("{MARKER}\n### x\n")).unwrap();
        assert!(body_text(&Body::File(ok)).unwrap().starts_with(MARKER));

        let unmarked = dir.path().join("unmarked.md");
        std::fs::write(&unmarked, "### x\n").unwrap();
        let e = body_text(&Body::File(unmarked)).unwrap_err().to_string();
        assert!(
            e.contains("expected the first line \"<!-- tier1-preview -->\"")
                && e.contains("found \"### x\""),
            "{e}"
        );

        let long = dir.path().join("long.md");
        std::fs::write(
            &long,
            format!("{MARKER}\n{}", "é".repeat(COMMENT_BODY_MAX_CHARS)),
        )
        .unwrap();
        let e = body_text(&Body::File(long)).unwrap_err().to_string();
        assert!(
            e.contains("at most 65536 characters") && e.contains("found 65559"),
            "{e}"
        );

        let binary = dir.path().join("bin.md");
        std::fs::write(&binary, [0xff, 0xfe]).unwrap();
        let e = body_text(&Body::File(binary)).unwrap_err().to_string();
        assert!(e.contains("invalid UTF-8 at byte 0"), "{e}");

        let missing = dir.path().join("missing.md");
        let e = body_text(&Body::File(missing)).unwrap_err();
        assert_eq!(crate::exit::Classify::exit(&e), crate::exit::Exit::Io);

        let failed = body_text(&Body::Failed {
            run_url: Some("https://x/runs/1".into()),
        })
        .unwrap();
        assert!(failed.contains("[the workflow run](https://x/runs/1)"));
    }
}
