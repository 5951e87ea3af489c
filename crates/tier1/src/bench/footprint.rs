//! The memory a built-in target's shapes need, estimated from the shapes (inputs, every variant's
//! output and scratch, the reference) before anything is allocated, and checked against the
//! memory the machine has available: a shape too large for the machine fails that target with a
//! message, instead of aborting the whole run on a failed allocation.

use crate::bench::backend::{BackendError, Shapes};

fn get(shapes: &Shapes, name: &str) -> f64 {
    shapes.get(name).copied().map_or(0.0, |v| v as f64)
}

/// Upper estimate, in bytes, of what the CPU target `key` allocates for `shapes` (None for a key
/// that is not a built-in target). Computed in floating point: no shape can overflow it.
pub fn estimate(key: &str, shapes: &Shapes) -> Option<f64> {
    let g = |n: &str| get(shapes, n);
    let bytes = match key {
        "block_scaling" => {
            let (m, n, k) = (g("m"), g("n"), g("k"));
            (m + n) * k * 5.0 + m * n * 16.0
        }
        "flashattention4_alibi" => {
            let n = g("batch") * g("heads") * g("seq") * g("head_dim");
            n * 28.0 + g("seq") * g("seq") * 8.0
        }
        "persistent_decode" => {
            let n = g("steps") * g("batch") * g("head_dim");
            n * 24.0 + g("batch") * g("head_dim") * 8.0
        }
        "kv_standard" => {
            let token = 2.0 * g("batch") * g("heads") * g("head_dim");
            let cache = g("layers") * g("max_seq") * token;
            cache * 3.0
                + g("layers") * g("max_seq") * 4.0
                + g("steps") * g("active_layers") * token * 16.0
        }
        "gradient_fusion" => {
            let n = g("tensors") * g("tensor_elems");
            g("ranks") * n * 4.0 + n * 16.0 + g("bucket_elems") * g("ranks") * 4.0
        }
        "llama_3_1_8b" => {
            let (h, m) = (g("hidden"), g("mlp"));
            let t = g("batch") * g("seq");
            4.0 * (g("layers") * (4.0 * h * h + 3.0 * h * m) + t * (10.0 * h + 4.0 * m + 2.0 * t))
        }
        _ => return None,
    };
    Some(bytes)
}

/// Memory available to this process, in bytes (`MemAvailable` of `/proc/meminfo`, else
/// `MemTotal`), or None where the kernel does not say.
pub fn available() -> Option<u64> {
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
pub fn check(key: &str, shapes: &Shapes, available: Option<u64>) -> Result<(), BackendError> {
    let (Some(need), Some(have)) = (estimate(key, shapes), available) else {
        return Ok(());
    };
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
    fn the_embedded_suite_fits_its_estimates() {
        let suite = crate::suite::Suite::embedded();
        for t in &suite.targets {
            for (profile, s) in &t.shapes {
                let need = estimate(&t.key, s).unwrap();
                assert!(
                    need > 0.0 && need < (64u64 << 30) as f64,
                    "{} {profile}: {need}",
                    t.key
                );
            }
        }
    }
}
