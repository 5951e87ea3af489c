//! `tier1-dashboard --store SPEC`: the dashboard of the newest published history in an artifact
//! store (a local store such as tier1-nightly's `.tier1/store`, or `github`), restored into a
//! temporary directory by the same rules as `tier1-restore` (fail closed; "no history yet" when
//! nothing is published), so nobody has to restore by hand to see it. The workflow and artifact
//! prefix come from the flags, else the suite, else tier1's own (`crate::suite::run_names`).

use super::{DashboardOptions, DashboardOutcome, ReportError, parse_now, write_dashboard};
use crate::restore::{self, RestoreOptions};
use crate::store::{StoreConfig, open_store};

/// Where the history comes from.
#[derive(Debug, Clone)]
pub struct StoreSource {
    /// `local:DIR` or `github`.
    pub store: String,
    /// `--workflow`; None: the suite's `workflow`, else `tier1-nightly.yml`.
    pub workflow: Option<String>,
    /// `--artifact-prefix`; None: the suite's `artifact_prefix`, else `tier1`.
    pub artifact_prefix: Option<String>,
    /// Branch whose history is shown.
    pub branch: String,
    /// `owner/name` (github store; a local store knows its own).
    pub repository: Option<String>,
    /// The REST API base URL (github store; `None`: `GITHUB_API_URL`, else github.com's).
    pub api_url: Option<String>,
}

/// The store of `src`, the names restore looks for, and a temporary directory for the histories.
struct Opened {
    names: crate::suite::RunNames,
    store: Box<dyn crate::store::ArtifactStore>,
    tmp: tempfile::TempDir,
}

fn open(src: &StoreSource, opts: &DashboardOptions) -> Result<Opened, ReportError> {
    let now = parse_now(opts.now.as_deref())?;
    let names = crate::suite::run_names(
        src.workflow.as_deref(),
        src.artifact_prefix.as_deref(),
        opts.suite_config.as_deref(),
        &opts.repo_root,
    )?;
    let cfg = StoreConfig {
        repository: src.repository.clone().unwrap_or_default(),
        api_url: src.api_url.clone(),
        now: opts.now.as_ref().map(|_| now),
    };
    let store = open_store(&src.store, &cfg).map_err(restore::RestoreError::from)?;
    let tmp = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("dashboard"))
        .tempdir()
        .map_err(|source| ReportError::Io {
            path: std::env::temp_dir().display().to_string(),
            source,
        })?;
    Ok(Opened { names, store, tmp })
}

/// Restore the newest history of `class` (None: the unnamed class) into `dest`, by
/// `tier1-restore`'s rules (its own artifact names, the class checked).
fn restore_into(
    o: &Opened,
    src: &StoreSource,
    class: Option<&str>,
    dest: &std::path::Path,
) -> Result<(), ReportError> {
    let prefix = crate::suite::class_prefix(&o.names.artifact_prefix, class)
        .map_err(restore::RestoreError::Invalid)?;
    restore::restore(
        o.store.as_ref(),
        &RestoreOptions {
            repository: o.store.repository().to_string(),
            workflow: o.names.workflow.clone(),
            branch: src.branch.clone(),
            current_run_id: None,
            destination: dest.to_path_buf(),
            allow_bootstrap: true,
            allow_anchor_renewal: true,
            artifact_prefix: prefix,
            runner_class: class.map(str::to_string),
        },
    )?;
    Ok(())
}

/// Restore the newest history of each runner class of `classes` from `src` (its artifact names
/// `<prefix>-<class>-*`) into a temporary directory and write their dashboard side by side.
pub fn write_classes_from_store(
    src: &StoreSource,
    classes: &[String],
    opts: &DashboardOptions,
) -> Result<super::classes::ClassesOutcome, ReportError> {
    let o = open(src, opts)?;
    let mut histories = Vec::new();
    for (i, class) in classes.iter().enumerate() {
        let history = o.tmp.path().join(format!("history-{i}"));
        restore_into(&o, src, Some(class), &history)?;
        histories.push(super::classes::ClassHistory {
            class: class.clone(),
            history_root: history,
        });
    }
    super::classes::write_classes_dashboard(opts, &histories)
}

/// Restore the newest history of `src` into a temporary directory and write its dashboard as
/// `opts` asks (`opts.history_root` is replaced by the restored one).
pub fn write_from_store(
    src: &StoreSource,
    opts: &DashboardOptions,
) -> Result<DashboardOutcome, ReportError> {
    let o = open(src, opts)?;
    let history = o.tmp.path().join("history");
    restore_into(&o, src, None, &history)?;
    write_dashboard(&DashboardOptions {
        history_root: history,
        ..opts.clone()
    })
}
