//! tier1: the core library of a canonical, tamper-evident tier-1 GPU benchmark release gate.
//! Binaries under `bins/` are thin: parse arguments, call one function here, map to an exit code.
//!
//! # Map
//!
//! Four layers, top to bottom (the domain in two: the rules above the formats they read). **A
//! module imports only from its own layer or the layers below it, never from a layer above**
//! (`tests/it/layers.rs` checks it against this table, and `python3 scripts/mod_cycles.py
//! crates/tier1/src` finds no module cycle; the conventions are in `docs/development.md`). The
//! behaviour the code follows is the upstream contract, `docs/contract.md`; a "§" in a comment is
//! a section of it.
//!
//! | layer | modules |
//! | --- | --- |
//! | edge | cli |
//! | commands | nightly, shard, preview, promote, publish, restore, export, vault, run, evidence, dashboard, attest, bisect |
//! | domain: rules | shards, sidebyside, compaction, bench, gpu, history_check, confirmation, recheck, regress_md, gate, regress, aggregate |
//! | domain: formats | history, suite |
//! | plumbing | store, github, gha, archive, artifacts, json, fsx, digest, stats, process, text, par, exit |
//!
//! **Edge** — what every binary does at its boundary:
//! - [`cli`] — logging to stderr, JSON to stdout, errors to their documented exit codes.
//!
//! **Commands** — one entry point per binary (binary → entry point):
//! - [`nightly`] — `tier1-nightly` → [`nightly::run`], the workflow's job chain against the local
//!   store (restore → run → bind → pack → upload → verify → publish or promote).
//! - [`run`] — `tier1-run` → [`run::run`], the producer step: the suite, evidence, candidate history.
//! - [`shard`] — `tier1-shard plan | run | combine` → [`shard::plan_cmd::plan`],
//!   [`shard::run_cmd::run_shard`], [`shard::combine::combine`]: a sharded night's steps.
//! - [`restore`] — `tier1-restore` → [`restore::restore`], the newest verified history, fail closed;
//!   `--from-export` → [`restore::export::restore_from_export`], offline from an export.
//! - [`export`] — `tier1-export` → [`export::export`], the whole verified history as one archive.
//! - [`vault`] — `tier1-vault` → [`vault::push`], a published history's sealed segments stored
//!   in the vault (immutable, never-expiring storage), checked by the vault's metadata.
//! - [`publish`] — `tier1-publish` → [`publish::merge`], a candidate into live history.
//! - [`promote`] — `tier1-promote` → [`promote::promote`], a reviewed run as the new anchor.
//! - [`evidence`] — `tier1-evidence bind | pack | verify` → [`evidence::bind`], [`evidence::pack`],
//!   [`evidence::verify`].
//! - [`dashboard`] — `tier1-dashboard` → [`dashboard::write_dashboard`], the HTML and Markdown
//!   dashboard.
//! - [`attest`] — `tier1-attest` → [`attest::attest_from`], the policy check of the job's runner.
//! - [`preview`] — `tier1-compare run | comment` → [`preview::preview`], [`preview::post`].
//! - [`bisect`] — `tier1-bisect` → [`bisect::bisect`], the first commit whose side-by-side
//!   comparison with a good commit shows a change.
//! - `tier1-preflight` → [`gpu::preflight`] (the GPU inventory lives in the domain layer).
//!
//! **Domain** — the rules of the product, then the formats they read and write:
//! - [`shards`] — a sharded night's plan (targets balanced over a job matrix by their recorded
//!   times), a shard's record and evidence layout, and the merge of the shards into one night.
//! - [`sidebyside`] — the anchor's own code built from a clean worktree (cached by commit) and
//!   measured interleaved with the current build: `worse`, `same` or `unknown` ([`sidebyside::confirm()`]).
//! - [`bench`](mod@bench) — the harness (sampling, estimates, machine state), the built-in targets on CPU and CUDA,
//!   command targets, results files.
//! - [`compaction`] — sealing old runs into segments before a package would approach restore's
//!   caps, with every run the live rules need kept live; the package write publish and promote share.
//! - [`gpu`] — the GPU inventory (NVML or a fixture) and the preflight policy.
//! - [`history_check`] — a history tree validated against every rule: the index, the hash chain,
//!   and each run's verdicts re-derived with the rules below (restore's sanitizing too).
//! - `confirmation` — where a side-by-side comparison enters the verdict of a suspected target.
//! - [`recheck`] — one re-measurement of flagged speed regressions.
//! - [`regress_md`] — `regression_summary.md`.
//! - [`gate`] — run acceptance and anchor eligibility (the release gate).
//! - [`regress`] — the comparison with the anchor: reference rules, noise history, significance.
//! - [`aggregate`] — per-target derived metrics and a summary's aggregate block.
//! - [`history`] — the history package: model, errors, hash chain, trends, package I/O.
//! - [`suite`] — the suite file: targets, profiles, thresholds, and the rule that picks the file.
//!
//! **Plumbing** — no product rules:
//! - [`store`] — the artifact store trait, the local store and the GitHub Actions artifacts store,
//!   each with its vault of sealed history segments (a directory; immutable GitHub releases).
//! - [`github`] — the GitHub REST client (pagination, retries, redirects without the token).
//! - [`gha`] — workflow commands, outputs and the step summary.
//! - [`archive`] — deterministic zips and safe bounded extraction.
//! - [`artifacts`] — artifact names (`<prefix>-evidence-*`, `<prefix>-history-*`).
//! - [`json`], [`fsx`], [`digest`], [`stats`], [`process`], `text`, `par`, [`exit`]: JSON rules,
//!   atomic files and staged trees (temporary names collected after a crash, the test-only fault
//!   injection), SHA-256 digests, statistics, process groups and signals, text made safe for people
//!   (credentials redacted), a map over a slice on a few threads, the exit-code table.

// The library's users are the binaries, tests and benches of this workspace: a `pub` item
// that they cannot reach is `pub(crate)`, so that dead code is reported (`docs/development.md`).
#![warn(unreachable_pub)]

pub mod aggregate;
pub mod archive;
pub mod artifacts;
pub mod attest;
pub mod bench;
pub mod bisect;
pub mod cli;
pub mod compaction;
pub(crate) mod confirmation;
pub mod dashboard;
pub mod digest;
pub mod evidence;
pub mod exit;
pub mod export;
pub mod fsx;
pub mod gate;
pub mod gha;
pub mod github;
pub mod gpu;
pub mod history;
pub mod history_check;
pub mod json;
pub mod nightly;
pub(crate) mod par;
pub mod preview;
pub mod process;
pub mod promote;
pub mod publish;
pub mod recheck;
pub mod regress;
pub mod regress_md;
pub mod restore;
pub mod run;
pub mod shard;
pub mod shards;
pub mod sidebyside;
pub mod stats;
pub mod store;
pub mod suite;
pub(crate) mod text;
pub mod vault;

pub use exit::{Classify, Exit};
