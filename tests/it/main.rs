//! The integration tests, one binary (`cargo test --test it`; a file's tests: `cargo test --test it
//! <file>::`). Helpers are shared one way, `crate::support` (and the history and restore
//! fixtures); every command they start has a scrubbed environment (`support::command`). The
//! allocator-counting harness tests keep their own binaries (`bench_command`, `bench_harness`).

mod history_support;
mod restore_support;
mod support;

mod actions_contract;
mod adoption_guide;
mod attest_runner;
mod bisect_cli;
mod cli_snapshots;
mod cuda_kernels;
mod dashboard_chromium;
mod dashboard_cli;
mod evidence_retention;
mod exit_codes_doc;
mod fuzz_parsers;
mod github_evidence;
mod github_lifecycle;
mod github_shaped_zips;
mod github_shapes;
mod github_store;
mod gpu_check_script;
mod helpers;
mod history_compaction;
mod history_compaction_faults;
mod history_compaction_promote;
mod history_export;
mod history_promote;
mod history_property;
mod history_publish;
mod history_validate;
mod importers;
mod install_release;
mod layers;
mod nightly_anchor;
mod nightly_e2e;
mod nightly_local_loop;
mod nvrtc_cache;
mod preflight_gpu;
mod preview_comment;
mod preview_compare;
mod promote_hardening;
mod promote_reviews;
mod quickstart;
mod release_glibc;
mod rerun_contract;
mod restore_archive;
mod restore_policy;
mod run_cli;
mod sidebyside;
mod single_benchmark;
mod workflow_adoption;
mod workflow_bisect;
mod workflow_github_behaviours;
mod workflow_harness_selftest;
mod workflow_matches_local_chain;
mod workflow_preview;
mod workflow_scenarios;
mod workflows_contract;
