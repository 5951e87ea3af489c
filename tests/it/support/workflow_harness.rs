//! The workflow scenario harness, Rust side: a source repository holding this checkout's workflows,
//! `action.yml`, scripts and the fixture suite; a local store served by the fake GitHub with the
//! runner adapters installed; the scenario's machines (a B200 runner with the NVML fixture inventory
//! and a tool cache holding a stand-in of the pinned NVRTC wheel, which the scenario repository's
//! requirements pin by hash; an ubuntu-latest runner); and a driver for the
//! node harness in tests/workflows (GitHub's own parser and expression evaluator). See
//! docs/workflow-tests.md for what is emulated and what is not. Needs the `fake_github`,
//! `workflow_adapters` and `nightly_repo` support modules beside it.
#![allow(dead_code)]

use crate::support::fake_github::FakeGithub;
use crate::support::nightly_repo::git;
#[path = "workflow_report.rs"]
mod report;
#[path = "workflow_runspec.rs"]
mod runspec;
use crate::support::workflow_adapters::Adapters;
pub use report::Report;
pub use runspec::RunSpec;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set to `1` (as `.ci/run` does) to make a missing node or npm packages a failure, not a skip.
pub const REQUIRED_ENV: &str = crate::support::skip::WORKFLOW_TESTS.required_env;
/// The token the fake GitHub accepts; the jobs get it as `github.token`.
pub const TOKEN: &str = "ghs_workflowScenarioTOKEN";
/// The repository the scenarios run in.
pub const REPOSITORY: &str = "tier1-bench/tier1";
/// The protected environment the promotions wait on.
pub const ACCEPTANCE_ENVIRONMENT: &str = "tier1-canonical-acceptance";
/// How long after its last job a run is marked completed, as on GitHub, where the run's status
/// turns `completed` some seconds after the jobs ended (and released their concurrency groups).
pub const RUN_COMPLETION_DELAY_MS: u64 = 2000;

/// The tier1 binaries this test built (name, path).
pub const BINS: [(&str, &str); 13] = [
    ("tier1-attest", env!("CARGO_BIN_EXE_tier1-attest")),
    ("tier1-bisect", env!("CARGO_BIN_EXE_tier1-bisect")),
    ("tier1-compare", env!("CARGO_BIN_EXE_tier1-compare")),
    ("tier1-dashboard", env!("CARGO_BIN_EXE_tier1-dashboard")),
    ("tier1-evidence", env!("CARGO_BIN_EXE_tier1-evidence")),
    ("tier1-export", env!("CARGO_BIN_EXE_tier1-export")),
    ("tier1-nightly", env!("CARGO_BIN_EXE_tier1-nightly")),
    ("tier1-preflight", env!("CARGO_BIN_EXE_tier1-preflight")),
    ("tier1-promote", env!("CARGO_BIN_EXE_tier1-promote")),
    ("tier1-publish", env!("CARGO_BIN_EXE_tier1-publish")),
    ("tier1-restore", env!("CARGO_BIN_EXE_tier1-restore")),
    ("tier1-run", env!("CARGO_BIN_EXE_tier1-run")),
    ("tier1-shard", env!("CARGO_BIN_EXE_tier1-shard")),
];

/// Files of this checkout the scenario repository carries, as they are.
const SOURCE_FILES: [&str; 15] = [
    ".github/workflows/tier1-nightly.yml",
    ".github/workflows/tier1-nightly-sharded.yml",
    ".github/workflows/tier1-bisect.yml",
    ".github/workflows/tier1-promote.yml",
    ".github/workflows/tier1-preview.yml",
    ".github/workflows/ci.yml",
    ".github/workflows/release.yml",
    "action.yml",
    "validate/action.yml",
    "validate/validate-request.sh",
    "scripts/gpu-check.sh",
    ".ci/nvrtc.sh",
    ".ci/nvrtc-requirements.txt",
    ".gitignore",
    "Cargo.lock",
];

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// tests/workflows: the node harness and its pinned packages.
pub fn node_dir() -> PathBuf {
    manifest_dir().join("tests/workflows")
}

/// Why the node harness cannot run here, or None when it can.
pub fn unavailable() -> Option<String> {
    let node = Command::new("node").arg("--version").output();
    match node {
        Ok(o) if o.status.success() => {}
        _ => return Some("node is not installed".into()),
    }
    for pkg in [
        "@actions/workflow-parser",
        "@actions/expressions",
        "@actions/artifact",
        "@actions/core",
        "@actions/glob",
        "minimatch",
    ] {
        let p = node_dir().join(format!("node_modules/{pkg}/package.json"));
        if !p.is_file() {
            return Some(format!(
                "{} is missing: run `npm ci --prefix tests/workflows`",
                p.display()
            ));
        }
    }
    None
}

/// The harness, or None (with a printed reason) when node or the npm packages are missing and
/// `TIER1_WORKFLOW_TESTS_REQUIRED` is not `1`.
pub fn harness_or_skip(test: &str) -> Option<Harness> {
    ready_or_skip(test).then(Harness::new)
}

/// Whether the node harness can run; when not, records the skip (`support::skip`) and returns
/// false, or panics when
/// `TIER1_WORKFLOW_TESTS_REQUIRED=1`.
pub fn ready_or_skip(test: &str) -> bool {
    crate::support::skip::unless_missing(test, crate::support::skip::WORKFLOW_TESTS, unavailable())
}

fn run_ok(cmd: &mut Command, what: &str) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The version `.ci/nvrtc-requirements.txt` pins.
pub fn pinned_nvrtc_version() -> String {
    let text = std::fs::read_to_string(manifest_dir().join(".ci/nvrtc-requirements.txt"))
        .expect(".ci/nvrtc-requirements.txt");
    text.lines()
        .find_map(|l| l.trim().strip_prefix("nvidia-cuda-nvrtc-cu12=="))
        .map(|rest| {
            rest.split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .expect("nvidia-cuda-nvrtc-cu12== line")
}

/// A scenario world: source repository, store, fake GitHub, machines.
pub struct Harness {
    pub tmp: tempfile::TempDir,
    pub source: PathBuf,
    pub sha: String,
    pub store_dir: PathBuf,
    pub fake: FakeGithub,
    pub shim_log: PathBuf,
    /// The scenario repository's `owner/name` ([`REPOSITORY`] unless built by
    /// [`Harness::with_source`]).
    pub repository: String,
    /// Remote action repositories (`owner/name` → git directory) `uses:` may name.
    pub action_repositories: serde_json::Map<String, Value>,
    /// The artifact prefix [`Harness::restore_to`] restores (`tier1` by default).
    pub artifact_prefix: String,
    /// The workflow file whose runs [`Harness::restore_to`] restores (`tier1-nightly.yml`).
    pub producer_workflow: String,
    /// How long after its last job a run turns `completed` ([`RUN_COMPLETION_DELAY_MS`]).
    pub completion_delay_ms: u64,
    /// Machines a scenario adds to the standard ones (a runner pool, another runner class).
    pub extra_machines: Vec<Value>,
    prebuilt: PathBuf,
    gpu_tool_cache: PathBuf,
    preview_tool_cache: PathBuf,
    scenarios: std::cell::Cell<usize>,
}

impl Harness {
    /// tier1's own repository: this checkout's workflows, action and scripts, and the fixture suite.
    pub fn new() -> Harness {
        Harness::with_source(REPOSITORY, tier1_source)
    }

    /// tier1's own repository with its fixture suite (`configs/benchmark_suites/tier1.yaml`)
    /// rewritten by `edit`.
    pub fn with_suite(edit: impl FnOnce(&str) -> String) -> Harness {
        Harness::with_source(REPOSITORY, |src| {
            tier1_source(src);
            let path = src.join("configs/benchmark_suites/tier1.yaml");
            let suite = std::fs::read_to_string(&path).unwrap();
            let edited = edit(&suite);
            assert_ne!(edited, suite, "the suite edit changed nothing");
            std::fs::write(&path, edited).unwrap();
        })
    }

    /// A scenario repository `repository` whose files `populate` writes into the directory it is
    /// given (then committed on `main`).
    pub fn with_source(repository: &str, populate: impl FnOnce(&Path)) -> Harness {
        let tmp = tempfile::tempdir().expect("tempdir");
        let source = tmp.path().join("source");
        std::fs::create_dir_all(&source).unwrap();
        populate(&source);
        git(&source, &["init", "-q", "-b", "main"]);
        git(&source, &["add", "-A"]);
        git(&source, &["commit", "-q", "-m", "scenario source"]);
        let sha = git(&source, &["rev-parse", "HEAD"]);

        let prebuilt = tmp.path().join("prebuilt");
        std::fs::create_dir_all(&prebuilt).unwrap();
        for (name, path) in BINS {
            // `IT_BIN_DIR` runs the scenarios on other builds too (support/command.rs).
            let path = std::env::var_os("IT_BIN_DIR")
                .map_or_else(|| PathBuf::from(path), |d| Path::new(&d).join(name));
            std::os::unix::fs::symlink(path, prebuilt.join(name)).unwrap();
        }
        let gpu_tool_cache = tmp.path().join("gpu-tool-cache");
        // The canonical runner and the preview runner are separate machines with separate tool
        // caches (each holding the pinned NVRTC wheel).
        let preview_tool_cache = tmp.path().join("preview-tool-cache");
        let (wheel, bytes) = nvrtc_stand_in();
        for cache in [&gpu_tool_cache, &preview_tool_cache] {
            std::fs::create_dir_all(cache.join("tier1-nvrtc")).unwrap();
            std::fs::write(cache.join("tier1-nvrtc").join(&wheel), &bytes).unwrap();
        }

        let store_dir = tmp.path().join("store");
        tier1::store::local::LocalStore::create(&store_dir, repository).expect("store");
        let fake = FakeGithub::start(&store_dir, TOKEN);
        // The acceptance environment as the setup docs require it: required reviewer bob, and
        // "Prevent self-review" (alice dispatches, bob reviews).
        fake.set_environment(crate::support::fake_github::environment_record(
            ACCEPTANCE_ENVIRONMENT,
            &["bob"],
            true,
        ));
        Adapters::new(&source).install(&fake);
        let shim_log = tmp.path().join("shims.log");
        std::fs::write(&shim_log, "").unwrap();
        Harness {
            tmp,
            source,
            sha,
            store_dir,
            fake,
            shim_log,
            repository: repository.to_string(),
            action_repositories: serde_json::Map::new(),
            artifact_prefix: "tier1".into(),
            producer_workflow: "tier1-nightly.yml".into(),
            completion_delay_ms: RUN_COMPLETION_DELAY_MS,
            extra_machines: Vec::new(),
            prebuilt,
            gpu_tool_cache,
            preview_tool_cache,
            scenarios: std::cell::Cell::new(0),
        }
    }

    fn base_env(&self) -> Value {
        let shims = manifest_dir().join("tests/fixtures/workflows/bin");
        let mut env = serde_json::Map::new();
        for (k, v) in std::env::vars() {
            let runner_owned = ["GITHUB_", "RUNNER_", "TIER1_", "ACTIONS_", "CARGO_"]
                .iter()
                .any(|p| k.starts_with(p))
                || ["CI", "LD_LIBRARY_PATH", "RUST_LOG"].contains(&k.as_str());
            if !runner_owned {
                env.insert(k, json!(v));
            }
        }
        let path = std::env::var("PATH").unwrap_or_default();
        env.insert("PATH".into(), json!(format!("{}:{path}", shims.display())));
        env.insert(
            "TIER1_SHIM_LOG".into(),
            json!(self.shim_log.display().to_string()),
        );
        env.insert(
            "TIER1_SHIM_PREBUILT".into(),
            json!(self.prebuilt.display().to_string()),
        );
        env.insert(
            "TIER1_SHIM_ATTESTATIONS".into(),
            json!(self.attestations().display().to_string()),
        );
        env.insert("TIER1_GITHUB_RETRY_BASE_MS".into(), json!("5"));
        // The build cache's keys: under the test build's directory, never the user's home.
        env.insert(
            "TIER1_STATE_DIR".into(),
            json!(crate::support::command::STATE_DIR),
        );
        Value::Object(env)
    }

    /// Run these workflow runs (started in this order, sharing the concurrency groups).
    pub fn run(&self, runs: &[RunSpec]) -> Report {
        let n = self.scenarios.get() + 1;
        self.scenarios.set(n);
        let dir = self.tmp.path().join(format!("scenario-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let gpu_fixture = manifest_dir().join("tests/fixtures/gpu/b200_x8.json");
        let runs: Vec<Value> = runs
            .iter()
            .map(|r| {
                let mut v = r.0.clone();
                if v.get("sha").is_none() && v.get("rerun").is_none() {
                    v["sha"] = json!(self.sha);
                }
                v
            })
            .collect();
        let scenario = json!({
            "repo_root": self.source, "api_url": self.fake.api_url(), "server_url": "https://github.com",
            "repository": self.repository, "token": TOKEN,
            "action_repositories": self.action_repositories, "work_dir": dir.join("runner"),
            "completion_delay_ms": self.completion_delay_ms,
            "retention_days": self.fake.retention_limit().unwrap_or(90),
            "base_env": self.base_env(),
            "machines": [
                {"name": "b200-node-01", "environment": "self-hosted",
                 "labels": ["self-hosted", "linux", "x64", "gpu", "b200", "node24-actions"],
                 "tool_cache": self.gpu_tool_cache,
                 "env": {"TIER1_INVENTORY_JSON": gpu_fixture, "TIER1_RUNNER_VERSION": "2.327.1"}},
                {"name": "b200-preview-01", "environment": "self-hosted",
                 "labels": ["self-hosted", "linux", "x64", "gpu", "node24-actions", "tier1-preview"],
                 "tool_cache": self.preview_tool_cache,
                 "env": {"TIER1_INVENTORY_JSON": gpu_fixture, "TIER1_RUNNER_VERSION": "2.327.1"}},
                {"name": "GitHub Actions 1", "environment": "github-hosted", "labels": ["ubuntu-latest"],
                 "tool_cache": dir.join("hosted-tool-cache"), "env": {}}
            ],
            "runs": runs,
        });
        let mut scenario = scenario;
        if let Some(m) = scenario["machines"].as_array_mut() {
            m.extend(self.extra_machines.iter().cloned());
        }
        let scenario_file = dir.join("scenario.json");
        let result_file = dir.join("result.json");
        std::fs::write(
            &scenario_file,
            serde_json::to_vec_pretty(&scenario).unwrap(),
        )
        .unwrap();
        let out = Command::new("node")
            .current_dir(node_dir())
            .args(["--import", "./harness/register.mjs", "harness/cli.mjs"])
            .arg(&scenario_file)
            .arg(&result_file)
            .output()
            .expect("node runs");
        assert!(
            out.status.success(),
            "the workflow harness failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Report(serde_json::from_slice(&std::fs::read(&result_file).unwrap()).unwrap())
    }

    /// Bootstrap the first anchor through the dispatch, the approval and the promotion job;
    /// returns the restored `index.json`.
    pub fn bootstrap_anchor(&self) -> Value {
        let r = self.run(&[RunSpec::bootstrap()]);
        for (job, result) in [
            ("tier1", "success"),
            ("publish-history", "skipped"),
            ("authorize-history-anchor", "success"),
            ("promote-history-anchor", "success"),
        ] {
            assert_eq!(r.job(0, job)["result"], result, "{job}: {}", r.diagnose(0));
        }
        self.restored_index()
            .expect("the bootstrap anchor is restorable")
    }

    /// Restore the canonical history as the next nightly would (the real `tier1-restore` against
    /// the store) into `dest`; false when restore reports bootstrap (no history yet).
    pub fn restore_to(&self, dest: &Path) -> bool {
        restore_store_of(
            &self.store_dir,
            &self.repository,
            (&self.producer_workflow, &self.artifact_prefix),
            dest,
        )
    }

    /// The restored history's `index.json`, or None when restore reports bootstrap.
    pub fn restored_index(&self) -> Option<Value> {
        let dest = tempfile::tempdir().unwrap();
        let target = dest.path().join("history");
        if !self.restore_to(&target) {
            return None;
        }
        Some(serde_json::from_slice(&std::fs::read(target.join("index.json")).unwrap()).unwrap())
    }

    /// The tool cache (`RUNNER_TOOL_CACHE`) of the canonical runner (`b200-node-01`) and of the
    /// preview runner (`b200-preview-01`).
    pub fn tool_caches(&self) -> (&Path, &Path) {
        (&self.gpu_tool_cache, &self.preview_tool_cache)
    }

    /// A self-hosted GPU machine `name` with `labels` whose NVML inventory is the fixture
    /// `tests/fixtures/gpu/<inventory>.json`, at runner version 2.327.1, with the GPU tool cache
    /// (the pinned NVRTC wheel).
    pub fn gpu_machine(&self, name: &str, labels: &[&str], inventory: &str) -> Value {
        let fixture = manifest_dir().join(format!("tests/fixtures/gpu/{inventory}.json"));
        json!({"name": name, "environment": "self-hosted", "labels": labels,
               "tool_cache": self.gpu_tool_cache,
               "env": {"TIER1_INVENTORY_JSON": fixture, "TIER1_RUNNER_VERSION": "2.327.1"}})
    }

    /// A directory holding the stand-in `libnvrtc.so.12` (for local runs of the suite).
    pub fn nvrtc_lib_dir(&self) -> PathBuf {
        let dir = self.tmp.path().join("nvrtc-lib");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("libnvrtc.so.12"), b"").unwrap();
        dir
    }

    /// Commit `file` with `text` on a new branch `branch` of the scenario repository (main stays
    /// checked out); returns the commit (a pull request's head).
    pub fn branch_commit(&self, branch: &str, file: &str, text: &str) -> String {
        git(&self.source, &["checkout", "-q", "-b", branch]);
        std::fs::write(self.source.join(file), text).unwrap();
        git(&self.source, &["add", file]);
        git(&self.source, &["commit", "-q", "-m", "pull request change"]);
        let sha = git(&self.source, &["rev-parse", "HEAD"]);
        git(&self.source, &["checkout", "-q", "main"]);
        sha
    }

    /// Commit `file` with `text` on main of the scenario repository; returns the new commit (run a
    /// night on it with [`RunSpec::at`]).
    pub fn main_commit(&self, file: &str, text: &str) -> String {
        std::fs::write(self.source.join(file), text).unwrap();
        git(&self.source, &["add", file]);
        git(
            &self.source,
            &["commit", "-q", "-m", &format!("change {file}")],
        );
        git(&self.source, &["rev-parse", "HEAD"])
    }

    /// The workspace job `job` of run `index` (run id `run_id`) used in the latest scenario.
    pub fn workspace(&self, index: usize, run_id: u64, job: &str) -> PathBuf {
        self.tmp
            .path()
            .join(format!("scenario-{}", self.scenarios.get()))
            .join("runner")
            .join(format!("run-{index}-{run_id}"))
            .join(job)
            .join("workspace")
    }

    /// The store's metadata (runs and artifacts).
    pub fn store_state(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.store_dir.join("store.json")).unwrap()).unwrap()
    }

    /// The names of the artifacts workflow run `run_id` uploaded.
    pub fn artifact_names(&self, run_id: u64) -> Vec<String> {
        self.store_state()["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["workflow_run_id"] == run_id)
            .map(|a| a["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// The bytes of artifact `name` uploaded by workflow run `run_id`.
    pub fn artifact(&self, run_id: u64, name: &str) -> Vec<u8> {
        let state = self.store_state();
        let id = state["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["workflow_run_id"] == run_id && a["name"] == name)
            .unwrap_or_else(|| panic!("run {run_id} uploaded no artifact {name}"))["id"]
            .as_u64()
            .unwrap();
        std::fs::read(self.store_dir.join("artifacts").join(format!("{id}.bin"))).unwrap()
    }

    /// The build provenance attestations the `gh` stand-in accepts: lines `<sha256> <signer
    /// workflow> <source ref>` (tests/fixtures/workflows/bin/gh).
    pub fn attestations(&self) -> PathBuf {
        self.tmp.path().join("attestations.txt")
    }

    /// Record a build provenance attestation of bytes with SHA-256 `sha256`, signed by `signer`
    /// (`owner/repo/.github/workflows/release.yml`) at `source_ref`, for the `gh` stand-in.
    pub fn attest(&self, sha256: &str, signer: &str, source_ref: &str) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.attestations())
            .unwrap();
        writeln!(f, "{sha256} {signer} {source_ref}").unwrap();
    }

    /// Every command the cargo, rustup and gh stand-ins received, one per line.
    pub fn toolchain_calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.shim_log)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// Writes tier1's own scenario repository into `source`: this checkout's workflows, action and
/// scripts, and the fixture suite as `configs/benchmark_suites/tier1.yaml`.
fn tier1_source(source: &Path) {
    let root = manifest_dir();
    for rel in SOURCE_FILES {
        let to = source.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(rel), &to).unwrap_or_else(|e| panic!("{rel}: {e}"));
    }
    // The requirements pin the stand-in wheel the GPU runner's tool cache holds.
    let (_, wheel) = nvrtc_stand_in();
    std::fs::write(
        source.join(".ci/nvrtc-requirements.txt"),
        crate::support::nvrtc_wheel::requirements(&pinned_nvrtc_version(), &wheel),
    )
    .unwrap();
    let fx = root.join("tests/fixtures/workflows");
    std::fs::create_dir_all(source.join("configs/benchmark_suites")).unwrap();
    std::fs::copy(
        fx.join("suite.yaml"),
        source.join("configs/benchmark_suites/tier1.yaml"),
    )
    .unwrap();
    std::fs::create_dir_all(source.join("fixtures")).unwrap();
    std::fs::copy(
        fx.join("nvrtc_target.py"),
        source.join("fixtures/nvrtc_target.py"),
    )
    .unwrap();
    std::fs::copy(
        root.join("tests/fixtures/nightly/fixed_target.py"),
        source.join("fixtures/fixed_target.py"),
    )
    .unwrap();
}

/// Restore the history of the local store at `store_dir` (repository `repository`, branch main)
/// into `dest` with the real `tier1-restore`; false when it reports bootstrap.
pub fn restore_store(store_dir: &Path, repository: &str, dest: &Path) -> bool {
    restore_store_of(store_dir, repository, ("tier1-nightly.yml", "tier1"), dest)
}

/// [`restore_store`] of the runs of `workflow` and the artifacts named with `prefix`
/// (`<prefix>-history-*`).
pub fn restore_store_of(
    store_dir: &Path,
    repository: &str,
    (workflow, prefix): (&str, &str),
    dest: &Path,
) -> bool {
    let out = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-restore"))
        .env("TIER1_ARTIFACT_PREFIX", prefix)
        .args(["--workflow", workflow])
        .arg("--store")
        .arg(format!("local:{}", store_dir.display()))
        .args([
            "--repository",
            repository,
            "--branch",
            "main",
            "--allow-bootstrap",
        ])
        .arg("--destination")
        .arg(dest)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("tier1-restore runs");
    assert!(
        out.status.success(),
        "restore: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    status["status"] != "bootstrap"
}

/// The stand-in of the pinned NVRTC wheel (an empty `libnvrtc.so.12`, the pinned version), which
/// the GPU runner's tool cache holds and the scenario repository's `.ci/nvrtc-requirements.txt`
/// pins by its SHA-256 (support/nvrtc_wheel.rs): `.ci/nvrtc.sh` checks and extracts it as it would
/// the real one, and downloads nothing.
pub fn nvrtc_stand_in() -> (String, Vec<u8>) {
    crate::support::nvrtc_wheel::wheel(&pinned_nvrtc_version(), b"")
}
