//! What a binary writes at its edge: machine output as JSON on stdout, its ending and errors on
//! stderr, and the exit code of a result (a stdout that could not be written included).

use crate::exit::{Classify, Exit};
use std::fmt::Display;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Mutex;

/// The exit code of the first failed write of machine output to stdout, if any.
static STDOUT_FAILED: Mutex<Option<Exit>> = Mutex::new(None);

/// Write one line to stderr, dropping it when stderr cannot be written.
fn stderr_line(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Print machine output as one line of JSON on stdout. A stdout that cannot be written (a closed
/// pipe, a full disk) is said on stderr and remembered for [`exit`].
pub fn print_json<T: serde::Serialize>(value: &T) {
    let line = match serde_json::to_string(value) {
        Ok(s) => s,
        Err(e) => {
            stderr_line(&format!("error: could not serialize output: {e}"));
            return;
        }
    };
    let mut out = std::io::stdout().lock();
    let written = writeln!(out, "{line}").and_then(|()| out.flush());
    if let Err(e) = written {
        stderr_line(&format!(
            "error: could not write the JSON result to stdout: {e}"
        ));
        let mut failed = STDOUT_FAILED.lock().unwrap_or_else(|p| p.into_inner());
        failed.get_or_insert(crate::exit::of_io(&e));
    }
}

/// Print a run's result as JSON on stdout ([`print_json`]) when `--json` was given or stdout is
/// not a terminal (a pipe, a file: every machine consumer); on a terminal without `--json` the
/// ending ([`print_ending`]) says it for people and no JSON is printed (`tier1-run`,
/// `tier1-nightly`; as `gh` and `git` do, machine output when asked or piped).
pub fn print_result<T: serde::Serialize>(value: &T, json: bool) {
    if json || !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        print_json(value);
    }
}

/// Write the ending of a run (its table and the line that says what the exit code means) to
/// stderr, after every log line.
pub fn print_ending(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// The process exit code for `code`: when the work succeeded but its JSON could not be written
/// to stdout, the write's failure ([`Exit::DiskFull`] or [`Exit::Io`]); otherwise `code`.
pub fn exit(code: Exit) -> ExitCode {
    let failed = *STDOUT_FAILED.lock().unwrap_or_else(|p| p.into_inner());
    match (code, failed) {
        (Exit::Ok, Some(out)) => out.into(),
        _ => code.into(),
    }
}

/// Print `<tool>: error: <message>` on stderr (and, inside GitHub Actions, an error annotation),
/// the message with URLs redacted and control characters made visible.
pub fn print_error(tool: &str, message: &dyn Display) {
    let shown = crate::text::for_humans(&message.to_string()).into_owned();
    stderr_line(&format!("{tool}: error: {shown}"));
    crate::gha::error(&format!("{tool}: {shown}"));
}

/// Report a failure with [`print_error`] and return its exit code.
pub fn fail<E: Classify + Display>(tool: &str, err: &E) -> ExitCode {
    print_error(tool, err);
    exit(err.exit())
}

/// Say on stderr (and, inside GitHub Actions, as an error annotation) why a gate failed:
/// `<tool>: <message>`.
pub fn gate_failed(tool: &str, message: &str) {
    stderr_line(&format!("{tool}: {message}"));
    crate::gha::error(&format!("{tool}: {message}"));
}

/// Map a result to an exit code: `Ok(exit)` passes through [`exit`], `Err` is reported by
/// [`fail`].
pub fn finish<E: Classify + Display>(tool: &str, r: Result<Exit, E>) -> ExitCode {
    match r {
        Ok(e) => exit(e),
        Err(e) => fail(tool, &e),
    }
}
