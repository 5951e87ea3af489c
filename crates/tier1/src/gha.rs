//! GitHub-facing output, in one place: log groups, step summary, step outputs, annotations and
//! masks. Outside Actions (`GITHUB_ACTIONS` unset) the group markers and annotations are not printed
//! and the file-based outputs are skipped.

use std::io::Write;
use std::path::PathBuf;

/// True inside a GitHub Actions job.
pub(crate) fn in_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// Write one line of a workflow command on stderr; a stderr that cannot be written (closed, on a
/// full disk) is ignored, never a panic.
fn command_line(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Open a collapsible log group (on stderr, so stdout stays machine output).
pub(crate) fn group(title: &str) {
    if in_actions() {
        command_line(&format!("::group::{}", command_data(title)));
    }
}

/// Close the current log group.
pub(crate) fn endgroup() {
    if in_actions() {
        command_line("::endgroup::");
    }
}

/// Emit an error annotation.
pub(crate) fn error(message: &str) {
    if in_actions() {
        command_line(&format!("::error::{}", command_data(message)));
    }
}

/// Emit a warning annotation.
pub(crate) fn warning(message: &str) {
    if in_actions() {
        eprintln!("::warning::{}", command_data(message));
    }
}

/// Ask the runner to mask a secret in all later log output (on stderr, which the runner scans like
/// stdout, so stdout stays machine output). A multi-line value is not printed: the command would
/// leak its second line.
pub(crate) fn mask(secret: &str) {
    if in_actions() && !secret.is_empty() && !secret.contains(['\r', '\n']) {
        command_line(&format!("::add-mask::{secret}"));
    }
}

fn env_file(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn append(var: &str, text: &str) -> std::io::Result<bool> {
    let Some(path) = env_file(var) else {
        return Ok(false);
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    Ok(true)
}

/// Append Markdown to `$GITHUB_STEP_SUMMARY` when set; returns whether it was written.
pub fn step_summary(markdown: &str) -> std::io::Result<bool> {
    let mut text = markdown.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    append("GITHUB_STEP_SUMMARY", &text)
}

/// Append single-line `name=value` pairs to a step-outputs file in one write; a name or value with a
/// newline is refused before anything is written.
pub(crate) fn append_outputs(
    path: &std::path::Path,
    pairs: &[(&str, String)],
) -> std::io::Result<()> {
    let mut text = String::new();
    for (name, value) in pairs {
        if name.is_empty() || name.contains(['=', '\r', '\n']) || value.contains(['\r', '\n']) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("step output {name:?} must be a single-line name=value pair"),
            ));
        }
        text.push_str(&format!("{name}={value}\n"));
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

/// Write `name=value` to `$GITHUB_OUTPUT` when set (multi-line values use a heredoc delimiter).
pub fn set_output(name: &str, value: &str) -> std::io::Result<bool> {
    let line = if value.contains('\n') {
        let delim = format!(
            "tier1_eof_{}",
            crate::digest::Digest::of_bytes(value.as_bytes())
                .hex()
                .get(..16)
                .unwrap_or("x")
        );
        format!("{name}<<{delim}\n{value}\n{delim}\n")
    } else {
        format!("{name}={value}\n")
    };
    append("GITHUB_OUTPUT", &line)
}

/// `$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID` when all three are set.
pub fn run_url() -> Option<String> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let (server, repo, id) = (
        var("GITHUB_SERVER_URL")?,
        var("GITHUB_REPOSITORY")?,
        var("GITHUB_RUN_ID")?,
    );
    Some(format!(
        "{}/{}/actions/runs/{}",
        server.trim_end_matches('/'),
        repo.trim(),
        id.trim()
    ))
}

/// Text for a workflow command: URLs redacted and control characters made visible
/// ([`crate::text::for_humans`]), then escaped with [`escape_data`].
fn command_data(s: &str) -> String {
    escape_data(&crate::text::for_humans(s))
}

/// Escape a workflow-command message (`%`, CR, LF).
pub(crate) fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_append_and_refuse_newlines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        std::fs::write(&p, "a=1\n").unwrap();
        append_outputs(&p, &[("b", "2".into()), ("c", "x y".into())]).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a=1\nb=2\nc=x y\n");
        assert!(append_outputs(&p, &[("d", "x\ny".into())]).is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a=1\nb=2\nc=x y\n");
    }

    #[test]
    fn escapes_workflow_command_data() {
        assert_eq!(escape_data("a%b\nc\rd"), "a%25b%0Ac%0Dd");
    }
}
