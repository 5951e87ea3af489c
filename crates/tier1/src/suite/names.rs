//! The adopter's workflow file and artifact prefix (suite fields `workflow` and
//! `artifact_prefix`), which local runs record and local readers look for, so a laptop's store
//! holds the same names the project's GitHub workflow does. A flag wins; else the suite's field
//! (the suite given, else the only file under `configs/benchmark_suites/`); else tier1's own
//! names (`tier1-nightly.yml`, `tier1`).

use super::{Suite, SuiteError};
use crate::artifacts::ArtifactPrefix;
use std::path::Path;

/// The workflow file tier1's own runs are recorded under.
pub(crate) const DEFAULT_WORKFLOW: &str = "tier1-nightly.yml";

/// The names a local run records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunNames {
    /// Workflow file name (`benchmarks.yml`).
    pub(crate) workflow: String,
    /// Artifact prefix (`acme`).
    pub(crate) artifact_prefix: ArtifactPrefix,
}

/// Check a workflow file name: `<name>.yml` or `<name>.yaml`, a single safe path component.
pub(crate) fn check_workflow(name: &str) -> Result<(), String> {
    let stem = name
        .strip_suffix(".yml")
        .or_else(|| name.strip_suffix(".yaml"));
    if stem.is_some_and(|s| !s.is_empty()) && crate::fsx::is_safe_component(name) {
        return Ok(());
    }
    Err(format!(
        "expected a workflow file name such as benchmarks.yml (the file under .github/workflows/), found {name:?}"
    ))
}

/// The names: `workflow` and `artifact_prefix` (flags) when given, else the suite's fields, else
/// the defaults. The suite is only read when a flag is missing; when it cannot be chosen without
/// a history (several suite files), the defaults apply.
pub(crate) fn run_names(
    workflow: Option<&str>,
    artifact_prefix: Option<&str>,
    suite_config: Option<&Path>,
    repo_root: &Path,
) -> Result<RunNames, SuiteError> {
    let flag = |what: &str, message: String| SuiteError::Choice {
        message: format!("{what}: {message}"),
    };
    let suite = if workflow.is_none() || artifact_prefix.is_none() {
        match Suite::discover(suite_config, repo_root, None) {
            Ok(d) => Some(d.suite),
            Err(SuiteError::Choice { .. }) if suite_config.is_none() => None,
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    let workflow = workflow
        .map(str::to_string)
        .or_else(|| suite.as_ref().and_then(|s| s.workflow.clone()))
        .unwrap_or_else(|| DEFAULT_WORKFLOW.into());
    check_workflow(&workflow).map_err(|m| flag("--workflow", m))?;
    let prefix = artifact_prefix
        .map(str::to_string)
        .or_else(|| suite.as_ref().and_then(|s| s.artifact_prefix.clone()));
    let artifact_prefix = match prefix {
        Some(p) => ArtifactPrefix::parse(&p).map_err(|m| flag("artifact prefix", m))?,
        None => ArtifactPrefix::default(),
    };
    Ok(RunNames {
        workflow,
        artifact_prefix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(suite_extra: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("configs/benchmark_suites");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("acme.yaml"),
            format!(
                "suite_name: acme\nversion: 1\n{suite_extra}targets:\n  - key: k\n    category: c\n    target: a:k\n    tolerance: {{ rtol: 0.0, atol: 0.0 }}\n    kind: command\n    command: [x]\n"
            ),
        )
        .unwrap();
        tmp
    }

    #[test]
    fn flags_win_then_the_suite_then_the_defaults() {
        let r = repo("workflow: benchmarks.yml\nartifact_prefix: acme\n");
        let n = run_names(None, None, None, r.path()).unwrap();
        assert_eq!(
            (n.workflow.as_str(), n.artifact_prefix.as_str()),
            ("benchmarks.yml", "acme")
        );
        let n = run_names(Some("nightly.yaml"), None, None, r.path()).unwrap();
        assert_eq!(
            (n.workflow.as_str(), n.artifact_prefix.as_str()),
            ("nightly.yaml", "acme")
        );
        let n = run_names(None, Some("other"), None, r.path()).unwrap();
        assert_eq!(
            (n.workflow.as_str(), n.artifact_prefix.as_str()),
            ("benchmarks.yml", "other")
        );
        let plain = repo("");
        let n = run_names(None, None, None, plain.path()).unwrap();
        assert_eq!(
            (n.workflow.as_str(), n.artifact_prefix.as_str()),
            ("tier1-nightly.yml", "tier1")
        );
    }

    #[test]
    fn bad_names_are_refused_with_what_was_expected() {
        let r = repo("");
        let e = run_names(Some("../x.yml"), None, None, r.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--workflow: expected a workflow file name") && e.contains("\"../x.yml\""),
            "{e}"
        );
        let e = run_names(None, Some("a-history"), None, r.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("without the word \"history\""), "{e}");
        let e = Suite::parse(
            "suite_name: s\nversion: 1\nworkflow: bench\ntargets: []\n",
            "s.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("workflow") && e.contains("\"bench\""), "{e}");
    }
}
