//! `tier1-export`: write the whole verified history (live runs and sealed segments) as one archive
//! with its SHA-256, a record that outlives the 90-day artifacts. See docs/tier1-export.md.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::Exit;
use tier1::export::{ExportRequest, export};

/// Export a verified tier-1 history as one archive and its digest (`FILE` and `FILE.sha256`).
#[derive(Parser, Debug)]
#[command(name = "tier1-export", version, about)]
struct Args {
    /// The history root to export (restored or published; read only).
    #[arg(long, env = "TIER1_HISTORY_ROOT")]
    history_root: PathBuf,
    /// The archive to write (must not exist); its digest is written to `<output>.sha256`.
    #[arg(long)]
    output: PathBuf,
}

fn main() -> ExitCode {
    tier1::cli::init();
    let a = match tier1::cli::parse::<Args>("tier1-export") {
        Ok(a) => a,
        Err(code) => return code,
    };
    let req = ExportRequest {
        history_root: a.history_root,
        output: a.output,
    };
    tier1::cli::finish(
        "tier1-export",
        export(&req).map(|out| {
            tier1::cli::print_json(&out);
            Exit::Ok
        }),
    )
}
