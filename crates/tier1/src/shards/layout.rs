//! Where a shard's evidence lies under the evidence root (docs/sharding.md §3): its own
//! directory `<run_id>/shards/<K>/` (manifest, results, report, `shard.json`), its suspects'
//! side-by-side comparisons `<run_id>/sidebyside/<key>/` and its rechecks
//! `<run_id>__recheck__<key>/`, for its own target keys only, so no two shards write one path.

use crate::recheck::recheck_run_id;

/// `<run_id>/shards/<K>`.
pub(crate) fn shard_dir(run_id: &str, shard: u32) -> String {
    format!("{run_id}/shards/{shard}")
}

/// Whether `rel` (a `/`-separated member path) lies where shard `shard`, measuring `keys`, may
/// write.
pub(crate) fn member_allowed(run_id: &str, shard: u32, keys: &[String], rel: &str) -> bool {
    let under = |dir: &str| {
        rel.strip_prefix(dir)
            .is_some_and(|r| r.starts_with('/') && r.len() > 1)
    };
    under(&shard_dir(run_id, shard))
        || keys.iter().any(|k| {
            under(&format!("{run_id}/sidebyside/{k}")) || under(&recheck_run_id(run_id, k))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_writes_only_its_own_paths() {
        let keys = vec!["a".to_string()];
        let ok = |p: &str| member_allowed("r", 2, &keys, p);
        assert!(ok("r/shards/2/manifest.json"));
        assert!(ok("r/sidebyside/a/outcome.json"));
        assert!(ok("r__recheck__a/results/x.json"));
        assert!(!ok("r/shards/1/manifest.json"));
        assert!(!ok("r/shards/2"));
        assert!(!ok("r/shards/22/x"));
        assert!(!ok("r/sidebyside/b/outcome.json"));
        assert!(!ok("r__recheck__b/x"));
        assert!(!ok("r/manifest.json"));
        assert!(!ok("r2/shards/2/x"));
    }
}
