//! Forging sealed segments the way an attacker who understands the format would: a segment
//! re-sealed with one file changed or two sealed runs swapped, its manifest's file digests, the
//! archive, and the record's digest, size, run ids and own link all recomputed, so only what the
//! chain binds the record to (and a deep check) can tell. The record's link is recomputed with the
//! same predecessor it had (whatever the format's rule for that predecessor is).

use serde_json::Value;
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use tier1::history::segment_io::{archive_bytes, archive_members};

/// Canonical compact JSON (keys sorted at every depth), as the hash chain hashes it.
pub fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, &Value> = m.iter().collect();
            let body: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), canonical(v)))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// SHA-256 hex of `prev` followed by the canonical `record` without `chain_sha256`.
pub fn link(prev: &str, record: &Value) -> String {
    let mut r = record.clone();
    r.as_object_mut().expect("object").remove("chain_sha256");
    let mut h = Sha256::new();
    h.update(prev.as_bytes());
    h.update(canonical(&r).as_bytes());
    format!("{:x}", h.finalize())
}

fn read_index(root: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(root.join("index.json")).expect("index")).expect("json")
}

/// Every link the index holds (rows, records, `chain_prev` and `chain_head` of records, and the
/// empty start of a chain): the candidates for a record's predecessor.
fn known_links(idx: &Value) -> Vec<String> {
    let mut v = vec![String::new()];
    for list in ["runs", "segments"] {
        for item in idx[list].as_array().into_iter().flatten() {
            for field in ["chain_sha256", "chain_prev", "chain_head"] {
                if let Some(s) = item[field].as_str() {
                    v.push(s.to_string());
                }
            }
        }
    }
    v
}

/// The predecessor the record's stored link was computed from.
fn predecessor(idx: &Value, record: &Value) -> String {
    let stored = record["chain_sha256"].as_str().expect("a linked record");
    known_links(idx)
        .into_iter()
        .find(|p| link(p, record) == stored)
        .expect("the record's link verifies from a link of the index")
}

/// Re-seal segment `seg` of the history at `root`: `edit` changes the manifest (a JSON value) and
/// the files (member name to bytes); the manifest's file digests and sizes, the archive, and the
/// record's digest, bytes, run ids (when it lists them), `run_count` and own link are recomputed.
pub fn reseal(
    root: &Path,
    seg: usize,
    edit: impl FnOnce(&mut Value, &mut BTreeMap<String, Vec<u8>>),
) {
    let mut idx = read_index(root);
    let record = idx["segments"][seg].clone();
    let prev = predecessor(&idx, &record);
    let rel = record["path"].as_str().expect("path").to_string();
    let bytes = std::fs::read(root.join(&rel)).expect("archive");
    let mut members = archive_members(&bytes).expect("readable segment");
    let (_, manifest) = members.remove(0);
    let mut manifest: Value = serde_json::from_slice(&manifest).expect("manifest");
    let mut files: BTreeMap<String, Vec<u8>> = members.into_iter().collect();
    edit(&mut manifest, &mut files);
    let mut out = Vec::new();
    for run in manifest["runs"].as_array_mut().expect("runs") {
        for f in run["files"].as_array_mut().expect("files") {
            let path = f["path"].as_str().expect("path").to_string();
            let body = files.get(&path).expect("listed file archived");
            f["digest"] = Value::from(format!("sha256:{:x}", Sha256::digest(body)));
            f["bytes"] = Value::from(body.len());
            out.push((path, body.clone()));
        }
    }
    let ids: Vec<Value> = manifest["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["row"]["run_id"].clone())
        .collect();
    out.insert(
        0,
        (
            "segment.json".to_string(),
            serde_json::to_vec_pretty(&manifest).unwrap(),
        ),
    );
    let archive = archive_bytes(&out).expect("archive written");
    std::fs::write(root.join(&rel), &archive).expect("write archive");
    let mut record = record;
    record["digest"] = Value::from(format!("sha256:{:x}", Sha256::digest(&archive)));
    record["bytes"] = Value::from(archive.len());
    if record.get("run_ids").is_some() {
        record["run_ids"] = Value::Array(ids.clone());
    }
    if record.get("first_run_id").is_some() {
        record["first_run_id"] = ids[0].clone();
        record["last_run_id"] = ids[ids.len() - 1].clone();
    }
    record["run_count"] = Value::from(ids.len());
    let l = link(&prev, &record);
    record["chain_sha256"] = Value::from(l);
    idx["segments"][seg] = record;
    std::fs::write(
        root.join("index.json"),
        serde_json::to_vec_pretty(&idx).unwrap(),
    )
    .expect("write index");
}

/// One file of the first sealed run changed (a line appended to its Markdown summary).
pub fn change_one_file(manifest: &mut Value, files: &mut BTreeMap<String, Vec<u8>>) {
    let run = &manifest["runs"][0];
    let md = run["row"]["regression_summary_path"]
        .as_str()
        .expect("md path")
        .to_string();
    files
        .get_mut(&md)
        .expect("sealed Markdown")
        .extend_from_slice(b"\nEdited after sealing.\n");
}

/// The first two sealed runs swapped (their rows keep their own links).
pub fn swap_two_runs(manifest: &mut Value, _files: &mut BTreeMap<String, Vec<u8>>) {
    manifest["runs"].as_array_mut().expect("runs").swap(0, 1);
}

/// One item of a chain: a segment record (`true`) or a live row, by its index in its list.
pub type Item = (bool, usize);

/// The chain's order over `runs` and `segments` of an index, read from its links as a forger
/// reads them (`schema_version` 3): a segment record comes where its `chain_prev` continues the
/// chain, each live row after the item before it.
pub fn chain_order(idx: &Value) -> Vec<Item> {
    let mut order = Vec::new();
    let (mut prev, mut next_seg) = (String::new(), 0);
    let runs = idx["runs"].as_array().map_or(0, Vec::len);
    for i in 0..=runs {
        while let Some(seg) = idx["segments"].get(next_seg)
            && seg["chain_prev"].as_str() == Some(prev.as_str())
        {
            order.push((true, next_seg));
            prev = seg["chain_sha256"]
                .as_str()
                .expect("a linked record")
                .to_string();
            next_seg += 1;
        }
        if i < runs {
            order.push((false, i));
            prev = idx["runs"][i]["chain_sha256"]
                .as_str()
                .expect("a linked row")
                .to_string();
        }
    }
    order
}

/// Relink every item of `order` from position `at` on: each one's own link after the item's
/// before it (the empty start of the chain for the first), as a forger would after changing the
/// item at `at`.
pub fn relink_from(idx: &mut Value, order: &[Item], at: usize) {
    let mut head = match at.checked_sub(1).map(|k| order[k]) {
        None => String::new(),
        Some((is_seg, j)) => idx[list(is_seg)][j]["chain_sha256"]
            .as_str()
            .expect("a linked item")
            .to_string(),
    };
    for &(is_seg, j) in &order[at..] {
        let item = &mut idx[list(is_seg)][j];
        head = link(&head, item);
        item["chain_sha256"] = Value::from(head.clone());
    }
}

fn list(is_seg: bool) -> &'static str {
    if is_seg { "segments" } else { "runs" }
}
