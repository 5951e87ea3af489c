//! Real-shaped histories for the scale figures. Four real nights of the README's `tier1-nightly`
//! (`smoke` profile, in a clone of this checkout, against a local store: a bootstrap anchor and
//! three compared nights with their rechecks, side-by-side checks and evidence), then a history
//! grown from them the way publication grows one: the third night's run cloned with a new id and
//! time (recorded on another machine, an environment key of its own, so the real nights keep their
//! noise window and the fourth night can still be promoted onto the grown history) is appended
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

/// The real nights.
pub struct Nights {
    /// The checkout they ran in (a clone of this one).
    pub repo: PathBuf,
    /// Their local store.
    pub store: PathBuf,
    /// The commit they measured.
    pub commit: String,
    /// The run ids of the four nights.
    pub runs: Vec<String>,
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

/// Four nights of the README's `tier1-nightly --profile smoke` in a clone of this checkout.
pub fn real_nights(dir: &Path) -> Nights {
    let repo = dir.join("checkout");
    ok(
        Command::new("git")
            .args(["clone", "-q"])
            .arg(env!("CARGO_MANIFEST_DIR"))
            .arg(&repo),
        "git clone",
    );
    let commit = ok(
        Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&repo),
        "git rev-parse",
    )
    .trim()
    .to_string();
    let store = dir.join("store");
    let mut runs = Vec::new();
    for night in 1..=4 {
        let out = ok(
            Command::new(env!("CARGO_BIN_EXE_tier1-nightly"))
                .current_dir(&repo)
                .args(["--profile", "smoke", "--store"])
                .arg(&store)
                .env("TIER1_LOG", "warn"),
            &format!("night {night}"),
        );
        let v: serde_json::Value = serde_json::from_str(out.trim()).expect("nightly JSON");
        runs.push(v["run_id"].as_str().expect("run_id").to_string());
    }
    Nights {
        repo,
        store,
        commit,
        runs,
    }
}

/// Extract artifact `name` of the local store at `store` into `dest`.
pub fn extract_artifact(store: &Path, name: &str, dest: &Path) {
    let s = LocalStore::open(store).expect("store");
    let a = s
        .load()
        .expect("store.json")
        .artifacts
        .into_iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("artifact {name}"));
    extract_safe(&s.artifact_path(a.id), dest, &ExtractPolicy::history()).expect("extract");
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
pub fn clone_id(n3: &str, k: usize) -> String {
    format!("{n3}-c{k:06}")
}

impl<'a> Grower<'a> {
    /// Start from the package the third night published.
    pub fn new(nights: &'a Nights, work: &Path) -> Grower<'a> {
        let live = work.join("live-0");
        extract_artifact(&nights.store, "tier1-history-3-1-publication-1", &live);
        let n3 = &nights.runs[2];
        let template = work.join("template");
        tier1::fsx::copy_tree(&live.join(n3), &template).expect("template");
        let snapshot = std::fs::read(template.join("trend_snapshot.json")).expect("snapshot");
        let doc = IndexDoc::load(&live).unwrap().unwrap();
        let row = doc
            .raw_rows()
            .iter()
            .find(|r| r["run_id"] == n3.as_str())
            .cloned()
            .expect("the third night's row");
        std::fs::write(work.join("template-row.json"), row.to_string()).expect("template row");
        let total = doc.total_run_count();
        Grower {
            nights,
            work: work.to_path_buf(),
            live,
            total,
            clones: 0,
            snapshot,
            snapshot_id: n3.clone(),
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
        let n3 = &self.nights.runs[2];
        let id = clone_id(n3, k);
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
                    .replace(n3.as_str(), &id)
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
            .replace(n3.as_str(), &id);
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
        if a.name.contains("-history-") && a.name != "tier1-history-4-1-publication-1" {
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
