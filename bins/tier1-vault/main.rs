//! `tier1-vault`: store a published history's sealed segments in the vault (immutable releases on
//! GitHub, `vault/` of a local store) and check the vault by its metadata. See docs/tier1-vault.md.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::Exit;
use tier1::store::open_store;
use tier1::vault::{VaultError, VaultRequest, push};

/// Store the pending sealed segments of a history in the vault, and check the vaulted ones.
#[derive(Parser, Debug)]
#[command(name = "tier1-vault", version, about)]
struct Args {
    /// The history root (a published or restored history; read only).
    #[arg(long, env = "TIER1_HISTORY_ROOT")]
    history_root: PathBuf,
    #[command(flatten)]
    github: tier1::cli::GithubArgs,
    #[command(flatten)]
    history: tier1::cli::HistoryArtifactsArgs,
    #[command(flatten)]
    store: tier1::cli::StoreArgs,
    /// Also download and open every vaulted segment (the deep check of tier1-export).
    #[arg(long)]
    deep: bool,
}

fn run(a: Args) -> Result<Exit, VaultError> {
    let spec = a.store.spec()?;
    let store = open_store(&spec, &a.store.config(&a.github))?;
    let req = VaultRequest {
        history_root: a.history_root,
        artifact_prefix: a.history.artifact_prefix,
        deep: a.deep,
    };
    let out = push(store.as_ref(), &req)?;
    tier1::cli::print_json(&out);
    Ok(Exit::Ok)
}

fn main() -> ExitCode {
    tier1::cli::init();
    let a = match tier1::cli::parse::<Args>("tier1-vault") {
        Ok(a) => a,
        Err(code) => return code,
    };
    tier1::cli::finish("tier1-vault", run(a))
}
