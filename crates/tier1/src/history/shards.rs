//! The shards record of a combined run (docs/sharding.md §4, docs/formats.md): which shard of the
//! plan measured which targets, and whether each delivered its evidence package (its artifact and
//! digest) or is missing. It is written into the combined run's `summary.json` (`shards`) and into
//! its evidence manifest; a run without it was measured by one runner.

use crate::digest::Digest;
use serde::{Deserialize, Serialize};

/// `status` of a shard that delivered its package.
pub(crate) const DELIVERED: &str = "delivered";
/// `status` of a shard whose package is missing (its job failed, was cancelled, or never ran).
pub(crate) const MISSING: &str = "missing";

/// The `shards` record of a combined run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardsRecord {
    /// The plan's shard count.
    pub count: u32,
    /// `sha256:` of the plan's canonical JSON.
    pub plan_digest: Digest,
    /// Every shard delivered its package.
    pub complete: bool,
    /// One entry per shard, in shard order.
    pub shards: Vec<ShardEntry>,
}

/// One shard of a combined run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardEntry {
    /// 1-based shard number.
    pub shard: u32,
    /// The target keys the plan gave it, in suite order.
    pub targets: Vec<String>,
    /// `DELIVERED` or `MISSING`.
    pub status: String,
    /// Its package's artifact name (delivered only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    /// Its package's digest (delivered only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<Digest>,
    /// Why it is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ShardEntry {
    /// Whether the shard delivered its package.
    pub fn delivered(&self) -> bool {
        self.status == DELIVERED
    }
}

impl ShardsRecord {
    /// The shards that delivered.
    pub fn delivered(&self) -> impl Iterator<Item = &ShardEntry> {
        self.shards.iter().filter(|s| s.delivered())
    }

    /// The record's own problem, if any: shards numbered 1..=count in order, every delivered one
    /// with an artifact and a digest, every missing one with neither, `complete` exactly when
    /// every shard delivered, no target in two shards.
    pub(crate) fn problem(&self) -> Option<String> {
        if self.shards.len() != self.count as usize {
            return Some(format!(
                "shards: expected {} entries (count), found {}",
                self.count,
                self.shards.len()
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, s) in self.shards.iter().enumerate() {
            let want = i as u32 + 1;
            if s.shard != want {
                return Some(format!(
                    "shards[{i}].shard: expected {want}, found {}",
                    s.shard
                ));
            }
            let ok = match s.status.as_str() {
                DELIVERED => s.artifact.is_some() && s.digest.is_some() && s.reason.is_none(),
                MISSING => s.artifact.is_none() && s.digest.is_none(),
                _ => false,
            };
            if !ok {
                return Some(format!(
                    "shards[{i}]: expected status delivered (with artifact and digest) or missing (without), found status {:?}",
                    s.status
                ));
            }
            if let Some(t) = s.targets.iter().find(|t| !seen.insert(t.as_str())) {
                return Some(format!("shards[{i}]: target {t:?} is in two shards"));
            }
        }
        let all = self.shards.iter().all(ShardEntry::delivered);
        if self.complete != all {
            return Some(format!(
                "shards.complete: expected {all} (every shard delivered: {all}), found {}",
                self.complete
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(shard: u32, t: &str, delivered: bool) -> ShardEntry {
        ShardEntry {
            shard,
            targets: vec![t.into()],
            status: if delivered { DELIVERED } else { MISSING }.into(),
            artifact: delivered.then(|| format!("tier1-shard-1-1-{shard}")),
            digest: delivered.then(|| Digest::of_bytes(t.as_bytes())),
            reason: (!delivered).then(|| "no package".into()),
        }
    }

    #[test]
    fn a_record_must_agree_with_itself() {
        let mut r = ShardsRecord {
            count: 2,
            plan_digest: Digest::of_bytes(b"plan"),
            complete: false,
            shards: vec![entry(1, "a", true), entry(2, "b", false)],
        };
        assert_eq!(r.problem(), None);
        assert_eq!(r.delivered().count(), 1);
        r.complete = true;
        assert!(
            r.problem()
                .unwrap()
                .contains("shards.complete: expected false")
        );
        r.complete = false;
        r.shards[1] = entry(3, "b", false);
        assert!(r.problem().unwrap().contains("expected 2, found 3"));
        r.shards[1] = entry(2, "a", true);
        assert!(r.problem().unwrap().contains("\"a\" is in two shards"));
        r.shards[1].targets = vec!["b".into()];
        r.shards[1].digest = None;
        assert!(r.problem().unwrap().contains("expected status delivered"));
        let v = serde_json::json!({"count": 1, "plan_digest": Digest::of_bytes(b"p"), "complete": true, "shards": [], "x": 1});
        assert!(
            serde_json::from_value::<ShardsRecord>(v).is_err(),
            "unknown fields are refused"
        );
    }
}
