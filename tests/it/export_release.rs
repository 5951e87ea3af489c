//! Issue 36, N5: the monthly export's release (`tier1-export.yml`, and `export/action.yml` for
//! other repositories). Every export gets a release tag of its own, so a second export in a month
//! (a dispatch, a re-run) never replaces the archive an earlier one recorded: its notes carry that
//! archive's digest, and the runbook calls an archive that does not match them tampered. It also
//! works where the repository has immutable releases: GitHub refuses any asset change to a
//! published release ("HTTP 422: Cannot upload assets to an immutable release"), so the assets are
//! attached to a draft, which is then published
//! (https://docs.github.com/en/code-security/concepts/supply-chain-security/immutable-releases,
//! "Best practices for publishing immutable releases"). The steps run under bash as the YAML holds
//! them, with a `gh` stand-in that keeps releases as GitHub does with immutable releases on, and a
//! `tier1-export` stand-in (the archive itself is tested in history_export.rs).

use crate::support::repo_files::{root, yaml};

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `gh release view|create|upload|edit` over `$GH_RELEASES` (a directory per tag, holding the
/// assets and a `state` file, `draft` or `published`), every call logged to `$GH_RELEASES.log`.
/// As GitHub with immutable releases: a published release takes no asset change, and a tag once
/// used is never given out again (`release create` of a used tag fails).
const GH_RELEASES: &str = r#"#!/usr/bin/env bash
set -euo pipefail
echo "gh $*" >> "$GH_RELEASES.log"
[[ "$1" == release ]] || { echo "gh (stand-in): not emulated: gh $*" >&2; exit 1; }
cmd="$2" tag="$3"; shift 3
dir="$GH_RELEASES/$tag"
case "$cmd" in
  view) [[ -d "$dir" ]] || { echo "release not found" >&2; exit 1; }; cat "$dir/state" ;;
  create)
    [[ ! -e "$dir" ]] || { echo "HTTP 422: Validation Failed (tag_name already_exists)" >&2; exit 1; }
    mkdir -p "$dir"; state=published; files=()
    while (($#)); do
      case "$1" in
        --draft) state=draft ;;
        --target|--title|--notes) printf '%s\n' "$2" > "$dir/${1#--}"; shift ;;
        --*) echo "gh (stand-in): option $1 is not emulated" >&2; exit 1 ;;
        *) files+=("$1") ;;
      esac
      shift
    done
    for f in "${files[@]}"; do cp "$f" "$dir/asset-$(basename "$f")"; done
    echo "$state" > "$dir/state" ;;
  upload)
    [[ -d "$dir" ]] || { echo "release not found" >&2; exit 1; }
    [[ "$(cat "$dir/state")" == draft ]] || { echo "HTTP 422: Cannot upload assets to an immutable release." >&2; exit 1; }
    for f in "$@"; do [[ "$f" == --* ]] || cp "$f" "$dir/asset-$(basename "$f")"; done ;;
  edit)
    [[ -d "$dir" && "$*" == "--draft=false" ]] || { echo "gh (stand-in): not emulated: edit $tag $*" >&2; exit 1; }
    echo published > "$dir/state" ;;
  *) echo "gh (stand-in): not emulated: release $cmd" >&2; exit 1 ;;
esac
"#;

/// `tier1-export --history-root R --output FILE`: writes FILE and FILE.sha256 as tier1-export does.
const TIER1_EXPORT: &str = r#"#!/usr/bin/env bash
set -euo pipefail
while (($#)); do [[ "$1" == --output ]] && out="$2"; shift; done
mkdir -p "$(dirname "$out")"
printf 'export made by run %s\n' "$GITHUB_RUN_ID" > "$out"
echo "$(sha256sum "$out" | cut -d' ' -f1)  $(basename "$out")" > "$out.sha256"
echo '{"archive":"made"}'
"#;

fn executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Where the export's steps are: tier1's own workflow or the composite action.
#[derive(Clone, Copy, Debug)]
enum Source {
    Workflow,
    Action,
}

impl Source {
    fn steps(self) -> Vec<Value> {
        let v = match self {
            Source::Workflow => {
                yaml(".github/workflows/tier1-export.yml")["jobs"]["export-history"]["steps"]
                    .clone()
            }
            Source::Action => yaml("export/action.yml")["runs"]["steps"].clone(),
        };
        v.as_array().cloned().unwrap_or_default()
    }

    fn prefix(self) -> &'static str {
        match self {
            Source::Workflow => "tier1",
            Source::Action => "acme",
        }
    }
}

struct World {
    tmp: tempfile::TempDir,
    bin: PathBuf,
    releases: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        executable(&bin.join("gh"), GH_RELEASES);
        executable(&bin.join("tier1-export"), TIER1_EXPORT);
        let releases = tmp.path().join("releases");
        std::fs::create_dir_all(&releases).unwrap();
        World { tmp, bin, releases }
    }

    /// The releases: tag → (state, asset names).
    fn releases(&self) -> BTreeMap<String, (String, Vec<String>)> {
        let mut out = BTreeMap::new();
        for e in std::fs::read_dir(&self.releases).unwrap() {
            let e = e.unwrap();
            let dir = e.path();
            let state = std::fs::read_to_string(dir.join("state")).unwrap_or_default();
            let mut assets: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .filter_map(|a| {
                    let n = a.unwrap().file_name().to_string_lossy().into_owned();
                    n.strip_prefix("asset-").map(str::to_string)
                })
                .collect();
            assets.sort();
            out.insert(
                e.file_name().to_string_lossy().into_owned(),
                (state.trim().to_string(), assets),
            );
        }
        out
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.tmp.path().join("releases.log")).unwrap_or_default()
    }

    /// Run the export and the release steps of `source` as run `run_id`, attempt `attempt`;
    /// (success, the steps' output, the attach step's outputs).
    fn export(&self, source: Source, run_id: u64, attempt: u32) -> (bool, String, String) {
        let steps = source.steps();
        let named = |name: &str| {
            steps
                .iter()
                .find(|s| s["name"] == name)
                .unwrap_or_else(|| panic!("{source:?}: no step {name:?}"))
                .clone()
        };
        let dir = self
            .tmp
            .path()
            .join(format!("run-{run_id}-{attempt}-{source:?}"));
        let temp = dir.join("temp");
        std::fs::create_dir_all(&temp).unwrap();
        let mut transcript = String::new();
        let mut outputs: BTreeMap<String, String> = BTreeMap::new();
        for name in [
            "Export the verified history",
            "Attach the export to a release",
        ] {
            let step = named(name);
            let output = dir.join(format!("{name}.output"));
            std::fs::write(&output, "").unwrap();
            let path = std::env::var("PATH").unwrap_or_default();
            let mut cmd = Command::new("bash");
            cmd.args(["-e", "-c", step["run"].as_str().unwrap()])
                .current_dir(root())
                .env_clear()
                .env("PATH", format!("{}:{path}", self.bin.display()))
                .env("RUNNER_TEMP", &temp)
                .env("GITHUB_OUTPUT", &output)
                .env("GITHUB_RUN_ID", run_id.to_string())
                .env("GITHUB_RUN_ATTEMPT", attempt.to_string())
                .env("GITHUB_SHA", "a".repeat(40))
                .env("GITHUB_REPOSITORY", "acme/kernels")
                .env("GITHUB_ACTION_PATH", root().join("export"))
                .env("GH_RELEASES", &self.releases)
                .env("GH_TOKEN", "token")
                .env("GH_REPO", "acme/kernels")
                .env("TIER1_BIN", &self.bin)
                .env("TIER1_ARTIFACT_PREFIX", source.prefix())
                .env(
                    "ARCHIVE",
                    outputs.get("archive").cloned().unwrap_or_default(),
                )
                .env("DIGEST", outputs.get("digest").cloned().unwrap_or_default());
            let out = cmd.output().unwrap();
            transcript += &String::from_utf8_lossy(&out.stdout);
            transcript += &String::from_utf8_lossy(&out.stderr);
            if !out.status.success() {
                return (false, transcript, String::new());
            }
            for line in std::fs::read_to_string(&output).unwrap().lines() {
                if let Some((k, v)) = line.split_once('=') {
                    outputs.insert(k.to_string(), v.to_string());
                }
            }
        }
        (
            true,
            transcript,
            outputs.get("tag").cloned().unwrap_or_default(),
        )
    }
}

#[test]
fn every_export_gets_a_release_of_its_own_and_never_replaces_a_recorded_archive() {
    for source in [Source::Workflow, Source::Action] {
        let w = World::new();
        let (ok, out, _) = w.export(source, 101, 1);
        assert!(ok, "{source:?}, first export: {out}");
        let first = w.releases();
        assert_eq!(first.len(), 1, "{first:?}");
        // A second export in the same month (a dispatch), then a re-run of it (attempt 2).
        for (run, attempt) in [(102, 1), (102, 2)] {
            let (ok, out, _) = w.export(source, run, attempt);
            assert!(
                ok,
                "{source:?}, export of run {run} attempt {attempt}: {out}"
            );
        }
        let all = w.releases();
        assert_eq!(all.len(), 3, "{source:?}: one release per export: {all:?}");
        for (tag, (state, assets)) in &all {
            assert_eq!(state, "published", "{source:?} {tag}");
            assert!(
                tag.starts_with(&format!("{}-history-", source.prefix())),
                "{tag}"
            );
            assert_eq!(
                assets,
                &[format!("{tag}.zip"), format!("{tag}.zip.sha256")],
                "{source:?} {tag}"
            );
        }
        // The first release is as the first export left it, archive and notes.
        let (tag, _) = first.iter().next().unwrap();
        let archive = w.releases.join(tag).join(format!("asset-{tag}.zip"));
        assert_eq!(
            std::fs::read_to_string(&archive).unwrap(),
            "export made by run 101\n"
        );
        let notes = std::fs::read_to_string(w.releases.join(tag).join("notes")).unwrap();
        let sha =
            std::fs::read_to_string(w.releases.join(tag).join(format!("asset-{tag}.zip.sha256")))
                .unwrap();
        let hex = sha.split_whitespace().next().unwrap();
        assert!(
            notes.contains(&format!("sha256:{hex}")) && notes.contains(&format!("--sha256 {hex}")),
            "{notes}"
        );
        let log = w.log();
        assert!(!log.contains("--clobber"), "{source:?}: {log}");
        assert!(!log.contains("release upload"), "{source:?}: {log}");
    }
}

/// A tag that already has a release is never written to: the export refuses, naming it, and the
/// recorded release stays as it was.
#[test]
fn an_export_whose_tag_already_has_a_release_is_refused_by_name() {
    for source in [Source::Workflow, Source::Action] {
        let w = World::new();
        let (ok, out, tag) = w.export(source, 7, 1);
        assert!(ok, "{out}");
        let before = w.releases();
        let (ok, out, _) = w.export(source, 7, 1);
        assert!(!ok, "{source:?}: the same tag was written twice: {out}");
        assert!(
            out.contains(&format!("release {tag} already exists")),
            "{source:?}: {out}"
        );
        assert_eq!(w.releases(), before, "{source:?}");
    }
}
