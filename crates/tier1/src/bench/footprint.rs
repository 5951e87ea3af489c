//! The memory a built-in target's shapes need, estimated from the shapes (inputs, every variant's
//! output and scratch, the reference) before anything is allocated, and checked against the
//! memory the machine has available: a shape too large for the machine fails that target with a
//! message, instead of aborting the whole run on a failed allocation.

use crate::bench::backend::{BackendError, Shapes};

/// Upper estimate, in bytes, of what the CPU target `key` allocates for `shapes` (None for a key
/// that is not a built-in target; each target's `footprint` in the table, from its typed
/// parameters: shapes they refuse are that error). Computed in floating point: no shape can
/// overflow it.
pub(crate) fn estimate(key: &str, shapes: &Shapes) -> Option<Result<f64, BackendError>> {
    crate::bench::table::spec(key).map(|t| (t.footprint)(shapes))
}

/// Memory available to this process, in bytes (`MemAvailable` of `/proc/meminfo`, else
/// `MemTotal`), or None where the kernel does not say.
pub(crate) fn available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .map(|kb| kb.saturating_mul(1024))
    };
    field("MemAvailable:").or_else(|| field("MemTotal:"))
}

/// Refuse `shapes` for target `key` when their estimate exceeds `available` bytes.
pub(crate) fn check(
    key: &str,
    shapes: &Shapes,
    available: Option<u64>,
) -> Result<(), BackendError> {
    let (Some(need), Some(have)) = (estimate(key, shapes), available) else {
        return Ok(());
    };
    let need = need?;
    if need > have as f64 {
        return Err(BackendError::Shape {
            key: key.into(),
            param: shapes.keys().cloned().collect::<Vec<_>>().join(", "),
            message: format!(
                "these shapes need about {need:.0} bytes of memory, more than the {have} bytes available: expected shapes that fit this machine"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shapes(kv: &[(&str, u64)]) -> Shapes {
        kv.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn a_shape_too_large_for_the_machine_is_refused_before_allocating() {
        let huge = shapes(&[("m", 100_000_000), ("n", 100_000_000), ("k", 1024)]);
        let e = check("block_scaling", &huge, Some(64 << 30)).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("block_scaling") && msg.contains("more than"),
            "{msg}"
        );
        let small = shapes(&[("m", 64), ("n", 64), ("k", 128)]);
        check("block_scaling", &small, Some(64 << 30)).unwrap();
        // No overflow whatever the values.
        let max = shapes(&[
            ("layers", u64::MAX),
            ("hidden", u64::MAX >> 2),
            ("mlp", u32::MAX.into()),
            ("batch", u32::MAX.into()),
            ("seq", u32::MAX.into()),
        ]);
        assert!(check("llama_3_1_8b", &max, Some(1 << 40)).is_err());
        assert!(check("not_builtin", &huge, Some(1)).is_ok());
    }

    #[test]
    fn a_missing_shape_is_the_parameters_error_never_an_estimate_of_zero() {
        let partial = shapes(&[("m", 64), ("n", 64)]);
        let e = estimate("block_scaling", &partial).unwrap().unwrap_err();
        assert!(
            matches!(&e, BackendError::Shape { key, param, .. } if key == "block_scaling" && param == "k"),
            "{e}"
        );
        let e = check("block_scaling", &partial, Some(64 << 30)).unwrap_err();
        assert!(e.to_string().contains("k"), "{e}");
    }

    #[test]
    fn the_embedded_suite_fits_its_estimates() {
        let suite = crate::suite::Suite::embedded();
        for t in &suite.targets {
            for (profile, s) in &t.shapes {
                let need = estimate(&t.key, s).unwrap().unwrap();
                assert!(
                    need > 0.0 && need < (64u64 << 30) as f64,
                    "{} {profile}: {need}",
                    t.key
                );
            }
        }
    }
}
