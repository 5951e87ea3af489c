//! Real-shaped histories for the scale figures. Real nights of the README's `tier1-nightly`
//! (`smoke` profile, in a clone of this checkout, against a local store: a bootstrap anchor and
//! compared nights with their rechecks and evidence; at least four, and more
//! until a night after the third is one promotion accepts onto its previous night's package, which
//! promotion itself is asked; the clone's suite holds smoke speed changes as noise, see
//! `SUITE_EDITS`), then a history grown from that previous night's package the way
//! publication grows one: its run cloned with a new id and time (recorded on another machine, an
//! environment key of its own, so the real nights keep their noise window and the promotable
//! night can still be promoted onto the grown history) is appended
//! night after night, and every night at which a publication compacts is published by the real
//! `tier1-publish` (merge), its sealed segment stored in the vault (`tier1-vault`), its package
//! uploaded and restored (`tier1-restore`), as the workflow does. The other nights' files and
//! rows are appended as their publication appends them (their trend snapshot from the last real
//! publication's).

use std::path::{Path, PathBuf};
use std::process::Command;
use tier1::archive::{ExtractPolicy, extract_safe};
use tier1::compaction::Policy;
use tier1::history::chain;
use tier1::history::package::IndexDoc;
use tier1::store::ArtifactStore;
use tier1::store::local::{LocalStore, NewRun};

/// The workflow the nights are recorded under.
pub const WORKFLOW: &str = "tier1-nightly.yml";

/// The most real nights run while looking for one that promotion accepts.
const MAX_NIGHTS: usize = 12;

/// One real night, as `tier1-nightly` printed it.
#[derive(Debug, Clone)]
pub struct Night {
    /// The tier1 run id.
    pub run_id: String,
    /// The local workflow run id.
    pub workflow_run_id: u64,
    /// `success` or `failure`.
    pub conclusion: String,
    /// The history package it published (absent when it did not publish).
    pub history_artifact: Option<String>,
    /// Its evidence artifact's name and digest.
    pub evidence: Option<(String, String)>,
}

/// The real nights.
pub struct Nights {
    /// The checkout they ran in (a clone of this one).
    pub repo: PathBuf,
    /// Their local store.
    pub store: PathBuf,
    /// The commit they measured.
    pub commit: String,
    /// The nights, in order.
    pub nights: Vec<Night>,
    /// The night promoted onto the grown histories (an index into `nights`): the first night
    /// after the third that promotion itself accepts onto the package its previous night
    /// published. The grown histories start from that package.
    pub promoted: usize,
    /// The promoted night's published package and its unpacked evidence (kept for the bench).
    pub promoted_package: PathBuf,
    pub promoted_evidence: PathBuf,
}

impl Nights {
    /// The night whose package the grown histories start from.
    pub fn base(&self) -> &Night {
        &self.nights[self.promoted - 1]
    }

    /// The night promoted onto the grown histories.
    pub fn promotable(&self) -> &Night {
        &self.nights[self.promoted]
    }

    /// The run ids of the nights.
    pub fn run_ids(&self) -> Vec<&str> {
        self.nights.iter().map(|n| n.run_id.as_str()).collect()
    }
}

fn ok(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One night of the README's `tier1-nightly --profile smoke` (a night whose gate fails is kept:
/// it is a real night too, just never the one promoted).
fn night(repo: &Path, store: &Path, n: usize) -> Night {
    let out = Command::new(env!("CARGO_BIN_EXE_tier1-nightly"))
        .current_dir(repo)
        .args(["--profile", "smoke", "--store"])
        .arg(store)
        .env("TIER1_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("night {n}: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "night {n}: no JSON outcome ({e}): {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let evidence = match (
        v["evidence"]["name"].as_str(),
        v["evidence"]["digest"].as_str(),
    ) {
        (Some(name), Some(digest)) => Some((name.to_string(), digest.to_string())),
        _ => None,
    };
    Night {
        run_id: v["run_id"].as_str().expect("run_id").to_string(),
        workflow_run_id: v["workflow_run_id"].as_u64().expect("workflow_run_id"),
        conclusion: v["conclusion"].as_str().unwrap_or_default().to_string(),
        history_artifact: v["history_artifact"].as_str().map(str::to_string),
        evidence,
    }
}

/// The request that promotes `night` (its package at `candidate`, its evidence unpacked at
/// `evidence`) onto the history at `live`, written to `output`: the bench's and its check's.
#[allow(clippy::too_many_arguments)]
pub fn promote_request(
    night: &Night,
    commit: &str,
    repo: &Path,
    candidate: &Path,
    evidence: &Path,
    live: &Path,
    output: &Path,
) -> tier1::promote::PromoteRequest {
    let (name, digest) = night.evidence.clone().expect("the night's evidence");
    tier1::promote::PromoteRequest {
        history_root: candidate.to_path_buf(),
        evidence_root: evidence.to_path_buf(),
        run_id: night.run_id.clone(),
        requester: "bench".into(),
        note: "benchmark promotion onto a long history".into(),
        workflow_run: format!("local://store/actions/runs/{}", night.workflow_run_id),
        expected_git_commit: commit.to_string(),
        expected_evidence_artifact: name,
        expected_evidence_digest: digest,
        canonical_history_root: Some(live.to_path_buf()),
        output_history_root: output.to_path_buf(),
        runner_class: None,
        shard_archives: Vec::new(),
        suite_config: None,
        repo_root: repo.to_path_buf(),
        allow_bootstrap: false,
        reviewers: vec![],
        allow_local_workflow_run: true,
    }
}

/// Whether promotion accepts night `i` onto the package night `i - 1` published: promotion
/// itself decides (into a scratch output). On success its package and evidence stay unpacked
/// under `dir` and their paths are returned.
fn promotes(
    store: &Path,
    repo: &Path,
    commit: &str,
    nights: &[Night],
    i: usize,
    dir: &Path,
) -> Result<(PathBuf, PathBuf), String> {
    let (night, prev) = (&nights[i], &nights[i - 1]);
    let (Some(pkg), Some(base)) = (&night.history_artifact, &prev.history_artifact) else {
        return Err("it or the night before it published no history".into());
    };
    if night.conclusion != "success" || prev.conclusion != "success" {
        return Err(format!(
            "conclusions {} (night before) and {}",
            prev.conclusion, night.conclusion
        ));
    }
    let Some((name, digest)) = &night.evidence else {
        return Err("no evidence".into());
    };
    let work = dir.join(format!("check-{}", i + 1));
    let (cand, live, ev) = (
        work.join("package"),
        work.join("base"),
        work.join("evidence"),
    );
    extract_artifact(store, pkg, &cand);
    extract_artifact(store, base, &live);
    tier1::promote::inputs::unpack_evidence_archive(&artifact_path(store, name), digest, &ev)
        .map_err(|e| e.to_string())?;
    let req = promote_request(night, commit, repo, &cand, &ev, &live, &work.join("out"));
    tier1::promote::promote(&req).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(work.join("out"));
    Ok((cand, ev))
}

/// The suite of the clone the nights run in: the canonical suite with a floor that holds every
/// speed change of the `smoke` shapes as noise (`min_optimized_time_delta_ms`) and no
/// side-by-side check (`side_by_side: off`; the clone's commit is not the running binary's, so
/// side by side would build both). Smoke shapes measured on a loaded machine otherwise leave
/// targets unknown or regressed on noise alone, cleared only by a recheck or side by side, and
/// such a night is rightly never an anchor: the promoted night could never be one. The files the
/// nights write keep their real shape (same targets, fields and records).
const SUITE_EDITS: [(&str, &str); 2] = [
    (
        "  min_optimized_time_delta_ms: 0.05\n",
        "  min_optimized_time_delta_ms: 1000.0\n",
    ),
    ("\nthresholds:\n", "\nside_by_side: off\n\nthresholds:\n"),
];

/// Clone this checkout into `repo` and commit [`SUITE_EDITS`] there; returns the commit.
fn checkout(repo: &Path) -> String {
    ok(
        Command::new("git")
            .args(["clone", "-q"])
            .arg(env!("CARGO_MANIFEST_DIR"))
            .arg(repo),
        "git clone",
    );
    let suite = repo.join("configs/benchmark_suites/tier1.yaml");
    let mut text = std::fs::read_to_string(&suite).expect("suite");
    for (from, to) in SUITE_EDITS {
        assert!(text.contains(from), "the suite has {from:?}");
        text = text.replacen(from, to, 1);
    }
    std::fs::write(&suite, text).expect("suite");
    ok(
        Command::new("git")
            .args(["-c", "user.name=bench", "-c", "user.email=bench@localhost"])
            .args(["commit", "-qam", "bench: smoke speed changes are noise"])
            .current_dir(repo),
        "git commit",
    );
    ok(
        Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(repo),
        "git rev-parse",
    )
    .trim()
    .to_string()
}

/// Real nights of the README's `tier1-nightly --profile smoke` in a clone of this checkout (its
/// suite edited, see [`SUITE_EDITS`]): at least four, then one more at a time until a night after
/// the third is one promotion accepts onto its previous night's package (promotion is asked).
pub fn real_nights(dir: &Path) -> Nights {
    let repo = dir.join("checkout");
    let commit = checkout(&repo);
    let store = dir.join("store");
    let mut nights = Vec::new();
    for n in 1..=MAX_NIGHTS {
        nights.push(night(&repo, &store, n));
        if n < 4 {
            continue;
        }
        match promotes(&store, &repo, &commit, &nights, n - 1, dir) {
            Ok((promoted_package, promoted_evidence)) => {
                return Nights {
                    repo,
                    store,
                    commit,
                    nights,
                    promoted: n - 1,
                    promoted_package,
                    promoted_evidence,
                };
            }
            Err(why) => eprintln!("real night {n} is not promotable ({why}); one more night"),
        }
    }
    panic!("none of {MAX_NIGHTS} real nights after the third is promotable: {nights:?}")
}

/// The file of artifact `name` of the local store at `store`.
fn artifact_path(store: &Path, name: &str) -> PathBuf {
    let s = LocalStore::open(store).expect("store");
    let id = s
        .load()
        .expect("store.json")
        .artifacts
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("artifact {name}"))
        .id;
    s.artifact_path(id)
}

/// Extract artifact `name` of the local store at `store` into `dest`.
pub fn extract_artifact(store: &Path, name: &str, dest: &Path) {
    extract_safe(&artifact_path(store, name), dest, &ExtractPolicy::history()).expect("extract");
}

/// A history grown night after night from the real nights.
pub struct Grower<'a> {
    pub nights: &'a Nights,
    pub work: PathBuf,
    /// The live history (the last restored package plus the nights appended since).
    pub live: PathBuf,
    /// Runs in the history, live and sealed.
    pub total: usize,
    /// Clones made so far.
    clones: usize,
    /// The file template of a clone: the third night's run directory.
    template: PathBuf,
    /// A trend snapshot of the last real publication, for the appended nights.
    snapshot: Vec<u8>,
    /// The id `snapshot` was written for.
    snapshot_id: String,
    policy: Policy,
    /// Real publications (merges) so far, and the segments they sealed.
    pub publications: usize,
    /// The last uploaded package's zip size.
    pub zip_bytes: u64,
}

/// Append `row`, linked onto the chain, to the index of the history at `dir` (rewritten, not
/// overwritten through a hard link).
pub fn append_row(dir: &Path, mut row: serde_json::Value) {
    let mut doc = IndexDoc::load(dir).unwrap().unwrap();
    let mut rows = doc.raw_rows().to_vec();
    let head = rows
        .last()
        .and_then(|r| r[chain::CHAIN_FIELD].as_str())
        .map(str::to_string);
    chain::seal(head.as_deref(), row.as_object_mut().unwrap());
    rows.push(row);
    doc.set_field("runs", serde_json::Value::Array(rows))
        .expect("rows");
    std::fs::remove_file(dir.join("index.json")).expect("unlink");
    std::fs::write(dir.join("index.json"), doc.to_bytes().unwrap()).expect("index");
}

/// The run id of clone `k`.
pub fn clone_id(base_run: &str, k: usize) -> String {
    format!("{base_run}-c{k:06}")
}

impl<'a> Grower<'a> {
    /// Start from the package the third night published.
    pub fn new(nights: &'a Nights, work: &Path) -> Grower<'a> {
        let live = work.join("live-0");
        let base = nights.base();
        let pkg = base
            .history_artifact
            .as_deref()
            .expect("the base night's package");
        extract_artifact(&nights.store, pkg, &live);
        let base_run = &base.run_id;
        let template = work.join("template");
        tier1::fsx::copy_tree(&live.join(base_run), &template).expect("template");
        let snapshot = std::fs::read(template.join("trend_snapshot.json")).expect("snapshot");
        let doc = IndexDoc::load(&live).unwrap().unwrap();
        let row = doc
            .raw_rows()
            .iter()
            .find(|r| r["run_id"] == base_run.as_str())
            .cloned()
            .expect("the base night's row");
        std::fs::write(work.join("template-row.json"), row.to_string()).expect("template row");
        let total = doc.total_run_count();
        Grower {
            nights,
            work: work.to_path_buf(),
            live,
            total,
            clones: 0,
            snapshot,
            snapshot_id: base_run.clone(),
            template,
            policy: Policy::for_window(20),
            publications: 0,
            zip_bytes: 0,
        }
    }

    /// Write clone `k`'s run directory under `root` and return its id and row.
    fn write_clone(&mut self, root: &Path) -> (String, serde_json::Value) {
        self.clones += 1;
        let k = self.clones;
        let base_run = &self.nights.base().run_id;
        let id = clone_id(base_run, k);
        let dir = root.join(&id);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let at = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap()
            + chrono::Duration::minutes(k as i64);
        let at = at
            .with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        for entry in std::fs::read_dir(&self.template).expect("template") {
            let name = entry.expect("entry").file_name();
            let text = if name == "trend_snapshot.json" {
                String::from_utf8_lossy(&self.snapshot).replace(&self.snapshot_id, &id)
            } else {
                std::fs::read_to_string(self.template.join(&name))
                    .expect("template file")
                    .replace(base_run.as_str(), &id)
            };
            let text = if name == "summary.json" {
                let mut v: serde_json::Value = serde_json::from_str(&text).expect("summary");
                v["generated_at"] = at.clone().into();
                if let Some(env) = v.get_mut("environment") {
                    env["device_names"] = serde_json::json!(["bench clone (another machine)"]);
                }
                serde_json::to_string_pretty(&v).expect("json") + "\n"
            } else {
                text
            };
            std::fs::write(dir.join(&name), text).expect("write");
        }
        let text = std::fs::read_to_string(self.work.join("template-row.json"))
            .expect("template row")
            .replace(base_run.as_str(), &id);
        let mut row: serde_json::Value = serde_json::from_str(&text).expect("row");
        row["generated_at"] = at.into();
        (id, row)
    }

    /// Append `n` nights that do not compact: files and chained rows, as publication appends them.
    pub fn append(&mut self, n: usize) {
        let mut doc = IndexDoc::load(&self.live).unwrap().unwrap();
        let mut rows = doc.raw_rows().to_vec();
        let mut head = rows
            .last()
            .and_then(|r| r[chain::CHAIN_FIELD].as_str())
            .map(str::to_string);
        let live = self.live.clone();
        for _ in 0..n {
            let (_, mut row) = self.write_clone(&live);
            let m = row.as_object_mut().unwrap();
            head = Some(chain::seal(head.as_deref(), m));
            rows.push(row);
            self.total += 1;
        }
        doc.set_field("runs", serde_json::Value::Array(rows))
            .expect("rows");
        std::fs::write(self.live.join("index.json"), doc.to_bytes().unwrap()).expect("index");
    }

    /// Live rows now.
    pub fn live_rows(&self) -> usize {
        IndexDoc::load(&self.live)
            .unwrap()
            .unwrap()
            .index
            .runs
            .len()
    }

    /// Append nights until the next publication compacts (the most live runs a package holds).
    pub fn fill(&mut self) {
        let live = self.live_rows();
        self.append(self.policy.max_live_runs.saturating_sub(live));
    }

    /// The candidate of the next night (live plus a new clone) under `dir`; returns its run id.
    pub fn candidate(&mut self, dir: &Path) -> String {
        tier1::fsx::link_tree(&self.live, dir).expect("candidate");
        let (id, row) = self.write_clone(dir);
        append_row(dir, row);
        id
    }

    /// One real night's publication: the real merge of the next clone, the vault job, the upload
    /// as a successful night's artifacts, and the real restore the next night starts from.
    pub fn publish(&mut self) {
        self.publications += 1;
        let p = self.publications;
        let cand = self.work.join(format!("cand-{p}"));
        let run_id = self.candidate(&cand);
        let out = self.work.join(format!("published-{p}"));
        tier1::publish::merge(
            &tier1::publish::MergeRequest {
                candidate_root: cand.clone(),
                canonical_root: self.live.clone(),
                output_root: out.clone(),
                run_id: run_id.clone(),
                runner_class: None,
            },
            &tier1::suite::Suite::embedded(),
        )
        .expect("publication");
        self.total += 1;
        self.snapshot = std::fs::read(out.join(&run_id).join("trend_snapshot.json")).unwrap();
        self.snapshot_id = run_id;
        let store = LocalStore::open(&self.nights.store).expect("store");
        tier1::vault::push(
            &store,
            &tier1::vault::VaultRequest {
                history_root: out.clone(),
                artifact_prefix: Default::default(),
                deep: false,
            },
        )
        .expect("vault");
        let run = store
            .create_run(&NewRun::new(WORKFLOW, "main", &self.nights.commit))
            .expect("run");
        let ev = self.work.join("evidence-stand-in");
        std::fs::write(&ev, b"this night's evidence").unwrap();
        store
            .upload_file(run.id, &format!("tier1-evidence-{}-1", run.id), &ev, 90)
            .expect("evidence");
        let meta = store
            .upload_dir_zipped(run.id, &format!("tier1-history-{}-1", run.id), &out, 90)
            .expect("history");
        self.zip_bytes = meta.size_in_bytes;
        store.complete_run(run.id, "success").expect("complete");
        forget_old_packages(&store, meta.id);
        let restored = self.work.join(format!("live-{p}"));
        let o = tier1::restore::restore(
            &store,
            &tier1::restore::RestoreOptions {
                repository: store.repository().to_string(),
                workflow: WORKFLOW.into(),
                branch: "main".into(),
                current_run_id: None,
                runner_class: None,
                destination: restored.clone(),
                allow_bootstrap: false,
                allow_anchor_renewal: true,
                artifact_prefix: Default::default(),
            },
        )
        .expect("restore");
        assert!(o.history_restored);
        for old in [&cand, &out, &self.live] {
            let _ = std::fs::remove_dir_all(old);
        }
        self.live = restored;
    }

    /// Grow to at least `total` runs, night by night: the nights that compact are published for
    /// real, the others appended.
    pub fn grow_to(&mut self, total: usize) {
        while self.total < total {
            let room = self.policy.max_live_runs.saturating_sub(self.live_rows());
            let n = room.min(total - self.total);
            if n == 0 || self.total + n < total {
                self.append(n);
                self.publish();
            } else {
                self.append(n);
            }
        }
    }
}

/// The bytes of every history package but the newest (`keep`) are dropped from the store, as
/// they expire, so a long build does not fill the disk.
fn forget_old_packages(store: &LocalStore, keep: u64) {
    let state = store.load().expect("state");
    for a in state
        .artifacts
        .iter()
        .filter(|a| a.id != keep && !a.expired)
    {
        if a.name.contains("-history-") {
            let _ = std::fs::remove_file(store.artifact_path(a.id));
            let id = a.id;
            store
                .update(|s| {
                    if let Some(x) = s.artifacts.iter_mut().find(|x| x.id == id) {
                        x.expired = true;
                    }
                    Ok(())
                })
                .expect("expire");
        }
    }
}
