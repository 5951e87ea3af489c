//! The suite flags the binaries share: the suite file, the profile, and what `tier1-run` and
//! `tier1-compare run` both read before they measure.

use crate::run::RunError;
use crate::run::setup::{Setup, SetupRequest};
use crate::suite::{Suite, SuiteError};
use std::path::{Path, PathBuf};

/// `--suite-config`.
#[derive(Debug, Clone, clap::Args)]
pub struct SuiteFileArg {
    /// Suite YAML; default: the suite the history records (where one is read), else the only file
    /// under configs/benchmark_suites/, else the embedded suite (docs/suite.md, "Which suite
    /// file").
    #[arg(long, env = "TIER1_SUITE_CONFIG")]
    pub suite_config: Option<PathBuf>,
}

/// `--suite-config` and `--profile`.
#[derive(Debug, Clone, clap::Args)]
pub struct SuiteArgs {
    /// `--suite-config`.
    #[command(flatten)]
    pub file: SuiteFileArg,
    /// Profile (default: the suite's default when a GPU is usable, else `cpu`).
    #[arg(long, env = "TIER1_PROFILE")]
    pub profile: Option<String>,
}

impl SuiteArgs {
    /// The suite ([`crate::suite::Suite::discover`] under `repo_root`, no history read) and the
    /// profile: the one given, else `crate::run::default_profile` of the suite.
    pub fn suite_and_profile(&self, repo_root: &Path) -> Result<(Suite, String), SuiteError> {
        let suite = Suite::discover(self.file.suite_config.as_deref(), repo_root, None)?.suite;
        let profile = self
            .profile
            .clone()
            .unwrap_or_else(|| crate::run::default_profile(&suite));
        Ok((suite, profile))
    }

    /// `--emit-target KEY` of `tier1-run` and `tier1-nightly`: measure the built-in target `key`
    /// alone, one short pass, and print its `tier1.command_result.v1` document on stdout
    /// ([`crate::bench::emit::emit_target`]); the exit code says whether it could.
    pub fn emit_target(&self, tool: &str, repo_root: &Path, key: &str) -> std::process::ExitCode {
        let emitted = || -> Result<serde_json::Value, crate::bench::emit::EmitError> {
            let (suite, profile) = self.suite_and_profile(repo_root)?;
            let backend = crate::run::backend_for(&suite, &profile)?;
            let env = |k: &str| std::env::var(k).ok();
            crate::bench::emit::emit_target(&suite, key, &profile, backend, &env)
        };
        match emitted() {
            Ok(doc) => {
                super::print_json(&doc);
                super::exit(crate::exit::Exit::Ok)
            }
            Err(e) => super::fail(tool, &e),
        }
    }
}

/// The suite, the checkout and the attestations of a measuring run (`tier1-run`,
/// `tier1-compare run`).
#[derive(Debug, Clone, clap::Args)]
pub struct RunSetupArgs {
    /// `--suite-config` and `--profile`.
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// The checkout whose commit and cleanliness are recorded.
    #[arg(long, default_value = ".")]
    pub repo_root: PathBuf,
    /// Attestation JSON files (tier1-attest, tier1-preflight output) to embed in the manifest.
    #[arg(long = "environment-json", value_name = "FILE")]
    pub(crate) environment_json: Vec<PathBuf>,
    /// The runner class measured on (a `runner_classes` entry of the suite, docs/sharding.md):
    /// recorded in the evidence and the history, and the class's profile is used.
    #[arg(long, env = "TIER1_RUNNER_CLASS", value_name = "NAME")]
    pub runner_class: Option<String>,
}

impl RunSetupArgs {
    /// `crate::run::setup::prepare` for these flags: `history_root` is the history the suite
    /// may be recorded in, `outputs` the trees the run writes inside the checkout.
    pub fn prepare(
        &self,
        history_root: Option<&Path>,
        outputs: &[&Path],
    ) -> Result<Setup, RunError> {
        crate::run::setup::prepare(&SetupRequest {
            suite_config: self.suite.file.suite_config.as_deref(),
            profile: self.suite.profile.clone(),
            repo_root: &self.repo_root,
            history_root,
            outputs,
            environment_json: &self.environment_json,
            runner_class: self.runner_class.as_deref().filter(|c| !c.is_empty()),
        })
    }
}
