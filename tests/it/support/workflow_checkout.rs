//! The `actions/checkout` adapter of the workflow scenarios: the real git CLI against the
//! scenario's local remote (a bare repository served as `file://`, brought up to date with the
//! scenario repository before each checkout), doing what actions/checkout does by default
//! (actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1, v7.0.1):
//! - `action.yml`: `fetch-depth: 1`, `fetch-tags: false`, `persist-credentials: true`, `ref`
//!   defaulting to the event's ref and commit;
//! - `src/input-helper.ts`: no `ref` → `github.ref` at `github.sha`; a 40-hex `ref` → that commit
//!   alone; `fetch-depth` below 0 → 0;
//! - `src/git-source-provider.ts`: `git init`, `git remote add origin <url>`, `gc.auto 0`, the
//!   credentials, the fetch, the checkout, then (unless `persist-credentials`) the credentials
//!   removed;
//! - `src/git-command-manager.ts` `fetch`: `-c protocol.version=2 fetch --no-tags --prune
//!   --no-recurse-submodules --depth=<n> origin <refspec>` (no `--depth` for 0);
//! - `src/ref-helper.ts`: the refspec (`+<sha>:refs/remotes/origin/<branch>` for a branch,
//!   `+<sha>:refs/remotes/pull/<n>/merge` for a pull request, the bare sha otherwise; all
//!   branches and tags for `fetch-depth: 0`) and the checkout (`checkout --force -B <branch>
//!   refs/remotes/origin/<branch>`; a pull request's or a bare commit's is a detached HEAD);
//! - `src/git-auth-helper.ts` `configureToken`: `AUTHORIZATION: basic base64(x-access-token:<token>)`
//!   as `http.<server origin>/.extraheader` in a file under `RUNNER_TEMP` that the repository's
//!   local config includes (`includeIf.gitdir:<repo>/.git.path`, and `…/.git/worktrees/*.path`).
//!
//! Not emulated (refused by name): every other input (`repository`, `path`, `token`, `ssh-*`,
//! `clean`, `filter`, `sparse-checkout`, `lfs`, `submodules`, …). The remote's URL is `file://`, so
//! the header is written as the action writes it but git never sends it here; the product's own
//! credentials are tested over HTTP (tests/it/sidebyside_fetch_auth.rs).
#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// How actions/checkout starts every fetch (`src/git-command-manager.ts` `fetch`, without
/// `--progress`).
pub const CHECKOUT_FETCH: [&str; 7] = [
    "-c",
    "protocol.version=2",
    "fetch",
    "-q",
    "--no-tags",
    "--prune",
    "--no-recurse-submodules",
];

/// The inputs the adapter emulates.
pub const CHECKOUT_INPUTS: [&str; 3] = ["ref", "persist-credentials", "fetch-depth"];

/// The scenario's remote: a bare copy of the scenario repository.
#[derive(Debug)]
pub struct CheckoutRemote {
    source: PathBuf,
    bare: PathBuf,
    sync: Mutex<()>,
}

impl CheckoutRemote {
    /// The remote of `source`, kept at `bare` (created on first use).
    pub fn new(source: &Path, bare: &Path) -> CheckoutRemote {
        CheckoutRemote {
            source: source.to_path_buf(),
            bare: bare.to_path_buf(),
            sync: Mutex::new(()),
        }
    }

    /// `file://` URL of the remote (git honours `--depth` over `file://`, not for a plain path).
    pub fn url(&self) -> String {
        format!("file://{}", self.bare.display())
    }

    /// Bring the remote up to date with the scenario repository (every branch and tag).
    fn sync(&self) -> Result<(), String> {
        let _held = self.sync.lock().expect("lock");
        if !self.bare.join("HEAD").exists() {
            git(None, &["init", "-q", "--bare", "-b", "main"], &[&self.bare])?;
        }
        git(
            Some(&self.bare),
            &[
                "fetch",
                "-q",
                "--prune",
                "--force",
                self.source.to_str().unwrap_or_default(),
                "+refs/heads/*:refs/heads/*",
                "+refs/tags/*:refs/tags/*",
            ],
            &[],
        )
    }

    /// Run `actions/checkout` with the step's inputs in `body.with` into `body.workspace`.
    pub fn checkout(&self, body: &Value) -> Result<Value, String> {
        let with = inputs(body)?;
        self.sync()?;
        let text = |k: &str| {
            body[k]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("actions/checkout: harness field {k} missing"))
        };
        let workspace = PathBuf::from(text("workspace")?);
        let runner_temp = PathBuf::from(text("runner_temp")?);
        let token = text("token")?;
        let server = text("server_url")?;
        // src/input-helper.ts
        let given = with.get("ref").cloned().unwrap_or_default();
        let (git_ref, commit) = if given.is_empty() {
            let r = text("ref")?;
            let r = if r.starts_with("refs/") {
                r
            } else {
                format!("refs/heads/{r}")
            };
            (r, text("sha")?)
        } else if given.len() == 40 && given.bytes().all(|b| b.is_ascii_hexdigit()) {
            (String::new(), given.clone())
        } else {
            return Err(format!(
                "actions/checkout: ref {given:?}: only a commit id (or no ref) is emulated"
            ));
        };
        let depth: i64 = match with.get("fetch-depth").map(String::as_str) {
            None | Some("") => 1,
            Some(d) => d
                .parse::<f64>()
                .map(|d| d.floor() as i64)
                .map_err(|_| format!("actions/checkout: fetch-depth {d:?} is not a number"))?,
        }
        .max(0);
        let persist = with
            .get("persist-credentials")
            .is_none_or(|v| v.eq_ignore_ascii_case("true"));

        if workspace.exists() {
            std::fs::remove_dir_all(&workspace)
                .map_err(|e| format!("{}: {e}", workspace.display()))?;
        }
        std::fs::create_dir_all(&workspace).map_err(|e| format!("{}: {e}", workspace.display()))?;
        let ws = Some(workspace.as_path());
        git(ws, &["init", "-q"], &[])?;
        git(ws, &["remote", "add", "origin", &self.url()], &[])?;
        git(ws, &["config", "--local", "gc.auto", "0"], &[])?;
        let credentials = configure_token(&workspace, &runner_temp, &server, &token)?;

        // src/ref-helper.ts getRefSpec / getRefSpecForAllHistory, getCheckoutInfo
        let branch = git_ref.strip_prefix("refs/heads/").map(str::to_string);
        let pull = git_ref.strip_prefix("refs/pull/").map(str::to_string);
        if !git_ref.is_empty() && branch.is_none() && pull.is_none() {
            return Err(format!(
                "actions/checkout: ref {git_ref}: only branches and pull requests are emulated"
            ));
        }
        let mut fetch: Vec<String> = CHECKOUT_FETCH.map(str::to_string).to_vec();
        if depth > 0 {
            fetch.push(format!("--depth={depth}"));
        }
        fetch.push("origin".into());
        if depth == 0 {
            fetch.push("+refs/heads/*:refs/remotes/origin/*".into());
            fetch.push("+refs/tags/*:refs/tags/*".into());
            if let Some(p) = &pull {
                fetch.push(format!("+{commit}:refs/remotes/pull/{p}"));
            }
        } else if let Some(b) = &branch {
            fetch.push(format!("+{commit}:refs/remotes/origin/{b}"));
        } else if let Some(p) = &pull {
            fetch.push(format!("+{commit}:refs/remotes/pull/{p}"));
        } else {
            fetch.push(commit.clone());
        }
        let args: Vec<&str> = fetch.iter().map(String::as_str).collect();
        git(ws, &args, &[])?;
        if let Some(b) = &branch {
            let tip = git_out(
                &workspace,
                &["rev-parse", &format!("refs/remotes/origin/{b}")],
            )?;
            if tip != commit {
                // testRef failed after fetching all history: fetch the commit itself.
                let refspec = format!("+{commit}:refs/remotes/origin/{b}");
                let mut again: Vec<&str> = CHECKOUT_FETCH.to_vec();
                again.extend(["origin", &refspec]);
                git(ws, &again, &[])?;
            }
            git(
                ws,
                &[
                    "checkout",
                    "-q",
                    "--force",
                    "-B",
                    b,
                    &format!("refs/remotes/origin/{b}"),
                ],
                &[],
            )?;
        } else if let Some(p) = &pull {
            git(
                ws,
                &[
                    "checkout",
                    "-q",
                    "--force",
                    &format!("refs/remotes/pull/{p}"),
                ],
                &[],
            )?;
        } else {
            git(ws, &["checkout", "-q", "--force", &commit], &[])?;
        }
        let checked_out = git_out(&workspace, &["log", "-1", "--format=%H"])?;
        if !persist {
            // src/git-auth-helper.ts removeAuth: the include entries and the credentials file.
            for key in include_keys(&workspace) {
                git(ws, &["config", "--local", "--unset-all", &key], &[])?;
            }
            std::fs::remove_file(&credentials)
                .map_err(|e| format!("{}: {e}", credentials.display()))?;
        }
        let out_ref = if git_ref.is_empty() {
            commit.clone()
        } else {
            git_ref.clone()
        };
        Ok(json!({"outputs": {"ref": out_ref, "commit": checked_out}}))
    }
}

/// The local config keys that include the credentials file.
fn include_keys(workspace: &Path) -> [String; 2] {
    let git_dir = workspace.join(".git").display().to_string();
    [
        format!("includeIf.gitdir:{git_dir}.path"),
        format!("includeIf.gitdir:{git_dir}/worktrees/*.path"),
    ]
}

/// `configureToken`: the header in a credentials file under `RUNNER_TEMP`, included by the
/// repository's local config. Returns the file.
fn configure_token(
    workspace: &Path,
    runner_temp: &Path,
    server: &str,
    token: &str,
) -> Result<PathBuf, String> {
    let origin = url::Url::parse(server)
        .map_err(|e| format!("actions/checkout: server URL {server:?}: {e}"))?
        .origin()
        .ascii_serialization();
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    std::fs::create_dir_all(runner_temp).map_err(|e| format!("{}: {e}", runner_temp.display()))?;
    let file = runner_temp.join(format!("git-credentials-{n:x}.config"));
    let basic = crate::support::git_http::base64_of(&format!("x-access-token:{token}"));
    std::fs::write(
        &file,
        format!("[http \"{origin}/\"]\n\textraheader = AUTHORIZATION: basic {basic}\n"),
    )
    .map_err(|e| format!("{}: {e}", file.display()))?;
    let path = file.display().to_string();
    for key in include_keys(workspace) {
        git(Some(workspace), &["config", "--local", &key, &path], &[])?;
    }
    Ok(file)
}

/// The step's `with:` inputs; an input the adapter does not emulate is refused by name.
fn inputs(body: &Value) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (k, v) in body["with"].as_object().into_iter().flatten() {
        if !CHECKOUT_INPUTS.contains(&k.as_str()) {
            return Err(format!(
                "actions/checkout: input '{k}' is not emulated (known: {})",
                CHECKOUT_INPUTS.join(", ")
            ));
        }
        out.insert(k.clone(), v.as_str().unwrap_or_default().to_string());
    }
    Ok(out)
}

fn git(cwd: Option<&Path>, args: &[&str], paths: &[&Path]) -> Result<(), String> {
    let mut c = Command::new("git");
    if let Some(d) = cwd {
        c.current_dir(d);
    }
    let out = c
        .args(args)
        .args(paths)
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "actions/checkout: git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn git_out(cwd: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .current_dir(cwd)
        .args(args)
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "actions/checkout: git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
