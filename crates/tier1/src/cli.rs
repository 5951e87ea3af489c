//! What every binary does at its edge: logging to stderr, the TLS provider, JSON to stdout, and the
//! mapping of a failure to its documented exit code.

use crate::exit::{Classify, Exit};
use std::fmt::Display;
use std::process::ExitCode;

/// Set up stderr logging (`TIER1_LOG`, default `info`) and install the rustls crypto provider.
pub fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TIER1_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(ansi)
        .try_init();
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Print machine output as one line of JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string(value) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("error: could not serialize output: {e}"),
    }
}

/// Report a failure on stderr as `<tool>: error: <message>` (and, inside GitHub Actions, as an error
/// annotation) and return its exit code.
pub fn fail<E: Classify + Display>(tool: &str, err: &E) -> ExitCode {
    eprintln!("{tool}: error: {err}");
    crate::gha::error(&format!("{tool}: {err}"));
    err.exit().into()
}

/// Say on stderr (and, inside GitHub Actions, as an error annotation) why a gate failed:
/// `<tool>: <message>`.
pub fn gate_failed(tool: &str, message: &str) {
    eprintln!("{tool}: {message}");
    crate::gha::error(&format!("{tool}: {message}"));
}

/// Map a result to an exit code: `Ok(exit)` passes through, `Err` is reported by [`fail`].
pub fn finish<E: Classify + Display>(tool: &str, r: Result<Exit, E>) -> ExitCode {
    match r {
        Ok(e) => e.into(),
        Err(e) => fail(tool, &e),
    }
}
