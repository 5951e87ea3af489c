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

/// Map a result to an exit code: `Ok(exit)` passes through, `Err` is reported by [`fail`].
pub fn finish<E: Classify + Display>(tool: &str, r: Result<Exit, E>) -> ExitCode {
    match r {
        Ok(e) => e.into(),
        Err(e) => fail(tool, &e),
    }
}

/// The artifact store spec a binary uses: the one given, else `github` inside Actions; outside
/// Actions one must be given (`local:DIR` or `github`).
pub fn store_spec(given: Option<String>) -> Result<String, crate::store::StoreError> {
    match given {
        Some(s) => Ok(s),
        None if crate::gha::in_actions() => Ok("github".into()),
        None => Err(crate::store::StoreError::Invalid(
            "--store is required outside GitHub Actions: expected `local:DIR` or `github`".into(),
        )),
    }
}
