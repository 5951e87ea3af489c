//! Promotion and the live rules on compacted histories: a promotion into a long history compacts
//! its output, the next producer compares against the promoted anchor with the noise history it
//! would have had without compaction (for every environment, seen or not), and a second promotion
//! on the compacted history recomputes the same comparison.

use crate::history_support::*;
use serde_json::{Value, json};
use std::path::Path;
use tier1::history::chain;
use tier1::regress::noise::NoiseHistory;

/// The environments the clones record, in turn (`None`: no environment recorded).
const ENVS: [Option<&str>; 3] = [None, Some("Box A"), Some("Box B")];

fn read(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn write(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// Append `n` accepted copies of the run `template` (a normal run of `root`) to the history at
/// `root`, one minute apart from `start` (minutes after 2026-08-16), cycling through [`ENVS`]. The
/// template's id must occur in its files only where it names the run.
pub fn clone_runs(root: &Path, template: &str, n: usize, start: i64) {
    let mut idx = read(&root.join("index.json"));
    let rows = idx["runs"].as_array().unwrap().clone();
    let row = rows
        .iter()
        .find(|r| r["run_id"] == template)
        .unwrap()
        .clone();
    let mut head = rows.last().unwrap()[chain::CHAIN_FIELD]
        .as_str()
        .map(str::to_string);
    let base: chrono::DateTime<chrono::Utc> = "2026-08-16T00:00:00Z".parse().unwrap();
    let mut out = rows;
    for k in 0..n {
        let id = format!("{template}-{k:05}");
        let at = (base + chrono::Duration::minutes(start + k as i64))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let dir = root.join(&id);
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(root.join(template)).unwrap() {
            let name = entry.unwrap().file_name();
            let text = std::fs::read_to_string(root.join(template).join(&name)).unwrap();
            std::fs::write(dir.join(&name), text.replace(template, &id)).unwrap();
        }
        let mut s = read(&dir.join("summary.json"));
        s["generated_at"] = json!(at);
        if let Some(device) = ENVS[k % ENVS.len()] {
            s["environment"] = json!({"backend": "cpu", "device_names": [device]});
        }
        write(&dir.join("summary.json"), &s);
        let text = serde_json::to_string(&row).unwrap().replace(template, &id);
        let mut r: Value = serde_json::from_str(&text).unwrap();
        r["generated_at"] = json!(at);
        head = Some(chain::seal(head.as_deref(), r.as_object_mut().unwrap()));
        out.push(r);
    }
    idx["runs"] = Value::Array(out);
    write(&root.join("index.json"), &idx);
}

fn noise_ids(root: &Path, env: Option<&str>) -> Vec<String> {
    NoiseHistory::load(root, ("tier1", 1), env, 20, None)
        .unwrap()
        .run_ids()
}

fn env_key(device: &str) -> String {
    tier1::history::model::Environment {
        backend: "cpu".into(),
        device_names: vec![device.into()],
        device_uuids: vec![],
        driver_version: None,
        cuda_version: None,
        runner: None,
        profile: None,
        clock: None,
        runner_class: None,
    }
    .key()
}

#[test]
fn promotion_compacts_and_the_live_rules_see_what_they_saw_before() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    bootstrap_live(w, &w.join("live0"), &RunSpec::new("anchor", 0));
    let live = publish_on(w, &w.join("live0"), &RunSpec::new("nightly0", 1));
    clone_runs(&live, "nightly0", 700, 2);
    let spec = RunSpec::new("c", 0);
    let spec = RunSpec {
        generated_at: "2026-08-17T00:00:00Z".into(),
        ..spec
    };
    let cand = w.join("cand-c");
    candidate(Some(&live), &cand, &spec);
    evidence(&w.join("ev"), &spec);
    let out = w.join("promoted");
    tier1::promote::promote(&promote_request(
        &cand,
        &w.join("ev"),
        Some(&live),
        &out,
        "c",
    ))
    .expect("promotion into a 700-run history");
    let idx = read(&out.join("index.json"));
    assert_eq!(idx["schema_version"], 3, "the promotion compacted");
    let live_ids: Vec<&str> = idx["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(*live_ids.last().unwrap(), "c");
    assert!(live_ids.len() < 300, "{} live runs", live_ids.len());
    let v = tier1::history_check::validate_history_root(&out).expect("valid");
    assert_eq!(v.latest_anchor.unwrap().run_id, "c");
    // Every later noise query selects the runs it would select without compaction.
    for env in [
        None,
        Some(env_key("Box A")),
        Some(env_key("Box B")),
        Some(env_key("Box C")),
    ] {
        assert_eq!(
            noise_ids(&out, env.as_deref()),
            noise_ids(&cand, env.as_deref()),
            "environment {env:?}"
        );
    }
    // The next night compares against the promoted anchor; a second promotion on the compacted
    // history recomputes the same comparison.
    let next = RunSpec {
        generated_at: "2026-08-18T00:00:00Z".into(),
        ..RunSpec::new("d", 0)
    };
    let cand2 = w.join("cand-d");
    candidate(Some(&out), &cand2, &next);
    evidence(&w.join("ev-d"), &next);
    let out2 = w.join("promoted-2");
    tier1::promote::promote(&promote_request(
        &cand2,
        &w.join("ev-d"),
        Some(&out),
        &out2,
        "d",
    ))
    .expect("promotion on a compacted history");
    let v = tier1::history_check::validate_history_root(&out2).expect("valid");
    assert_eq!(v.latest_anchor.unwrap().run_id, "d");
    let doc = tier1::history::package::IndexDoc::load(&out2)
        .unwrap()
        .unwrap();
    assert_eq!(doc.total_run_count(), 704);
    tier1::history_check::segments::check_deep(&out2, &doc).expect("deep check");
}
