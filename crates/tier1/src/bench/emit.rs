//! A built-in target invoked like a command target (`tier1-run --emit-target KEY`): one short pass
//! of the target (its profile's minimum rounds, no adaptive rounds, no pinning of its own: the
//! caller pins), with the parameters of the command protocol taken from the environment when set
//! (`TIER1_SHAPES`, `TIER1_SEED`, `TIER1_WARMUP`, `TIER1_ITERATIONS`, `TIER1_MIN_SAMPLE_MS`,
//! `TIER1_RTOL`, `TIER1_ATOL`; docs/command-targets.md), printed as a `tier1.command_result.v1`
//! document. So any build of tier1 measures its own built-in kernels for a side-by-side comparison
//! exactly as a command target's two builds are measured.

use crate::bench::backend::{Backend, Shapes};
use crate::bench::command::COMMAND_SCHEMA;
use crate::bench::harness::{HarnessError, HarnessOptions, run_suite};
use crate::bench::result::Role;
use crate::suite::{Suite, TargetKind};
use serde_json::{Value, json};
use std::sync::Arc;

/// Why a target could not be emitted.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// The suite run could not start.
    #[error(transparent)]
    Harness(#[from] HarnessError),
    /// The suite could not be chosen or read.
    #[error(transparent)]
    Suite(#[from] crate::suite::SuiteError),
    /// A protocol variable has a bad value.
    #[error("environment variable {var}: expected {expected}, found {found:?}")]
    Env {
        /// The variable.
        var: &'static str,
        /// What it must hold.
        expected: &'static str,
        /// What it holds.
        found: String,
    },
    /// The key names a target that is not built in.
    #[error(
        "target {0:?} is not a built-in target of the suite (--emit-target measures built-in targets; run a command target's own command)"
    )]
    NotBuiltin(String),
    /// The target failed (error, timeout, verification).
    #[error("target {key}: {status}: {message}")]
    Failed {
        /// The key.
        key: String,
        /// Its status.
        status: String,
        /// Why.
        message: String,
    },
}

impl crate::exit::Classify for EmitError {
    fn exit(&self) -> crate::exit::Exit {
        match self {
            EmitError::Harness(e) => e.exit(),
            EmitError::Suite(e) => e.exit(),
            EmitError::Failed { .. } => crate::exit::Exit::Gate,
            _ => crate::exit::Exit::Invalid,
        }
    }
}

/// The protocol's value of `var` parsed, or `None` when unset or empty.
fn var<T: std::str::FromStr>(
    env: &dyn Fn(&str) -> Option<String>,
    name: &'static str,
    expected: &'static str,
) -> Result<Option<T>, EmitError> {
    match env(name).filter(|v| !v.trim().is_empty()) {
        None => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| EmitError::Env {
            var: name,
            expected,
            found: v,
        }),
    }
}

/// Measure the built-in target `key` of `suite` with `profile` once and return its
/// `tier1.command_result.v1` document; `env` reads the protocol variables.
pub fn emit_target(
    suite: &Suite,
    key: &str,
    profile: &str,
    backend: Arc<dyn Backend>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, EmitError> {
    let mut suite = suite.clone();
    let target = suite
        .targets
        .iter_mut()
        .find(|t| t.key == key)
        .ok_or_else(|| EmitError::Harness(HarnessError::UnknownTarget(key.into())))?;
    if target.kind != TargetKind::Builtin {
        return Err(EmitError::NotBuiltin(key.into()));
    }
    if let Some(text) = env("TIER1_SHAPES").filter(|v| !v.trim().is_empty()) {
        let shapes: Shapes = serde_json::from_str(&text).map_err(|_| EmitError::Env {
            var: "TIER1_SHAPES",
            expected: "a JSON object of whole numbers",
            found: text.clone(),
        })?;
        target.shapes.insert(profile.into(), shapes);
    }
    let nonneg = "a finite number >= 0";
    if let Some(x) = var::<f64>(env, "TIER1_RTOL", nonneg)? {
        target.tolerance.rtol = x;
    }
    if let Some(x) = var::<f64>(env, "TIER1_ATOL", nonneg)? {
        target.tolerance.atol = x;
    }
    if let Some(p) = suite.profiles.get_mut(profile) {
        if let Some(w) = var(env, "TIER1_WARMUP", "a whole number")? {
            p.warmup = w;
        }
        if let Some(i) = var(env, "TIER1_ITERATIONS", "a whole number >= 1")? {
            p.iterations = i;
        }
        if let Some(m) = var::<f64>(env, "TIER1_MIN_SAMPLE_MS", "a number > 0")?
            .filter(|m| m.is_finite() && *m > 0.0)
        {
            p.min_sample_ms = m;
        }
        // The caller pins.
        p.pin_cpu = false;
    }
    let mut opts = HarnessOptions::new(profile, "emit");
    // One short pass of exactly the warm-up and samples asked for: its caller sizes it.
    opts.pass_as_given = true;
    opts.only = vec![key.to_string()];
    if let Some(seed) = var(env, "TIER1_SEED", "a whole number")? {
        opts.seed = seed;
    }
    let results = run_suite(&suite, backend, &opts)?;
    let Some(r) = results.targets.into_iter().next() else {
        return Err(EmitError::Harness(HarnessError::UnknownTarget(key.into())));
    };
    if let Some(f) = &r.failure {
        return Err(EmitError::Failed {
            key: key.into(),
            status: f.status.clone(),
            message: f.message.clone(),
        });
    }
    let variants: Vec<Value> = r
        .variants
        .iter()
        .map(|v| {
            let mut doc = json!({
                "name": v.name,
                "samples_ms": v.samples_ms,
                "memory_peak_bytes": v.memory_peak_bytes,
                "input_signature": v.input_signature,
            });
            if v.role == Role::Optimized {
                doc["verification"] = json!(v.verification);
            }
            doc
        })
        .collect();
    Ok(json!({
        "schema": COMMAND_SCHEMA,
        "baseline_file": r.baseline_file,
        "work": r.work,
        "variants": variants,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn a_builtin_target_prints_a_valid_command_result_with_the_protocol_parameters() {
        let env = env_of(&[
            ("TIER1_ITERATIONS", "6"),
            ("TIER1_WARMUP", "5"),
            ("TIER1_MIN_SAMPLE_MS", "0.2"),
            ("TIER1_SEED", "7"),
        ]);
        let doc = emit_target(
            &Suite::embedded(),
            "gradient_fusion",
            "smoke",
            Arc::new(crate::bench::CpuBackend),
            &env,
        )
        .expect("emits");
        let bytes = serde_json::to_vec(&doc).unwrap();
        let parsed = crate::bench::command::parse("gradient_fusion", &bytes).expect("valid");
        assert_eq!(parsed.variants[0].samples_ms.len(), 6, "one short pass");
        assert_eq!(parsed.variants[0].input_signature.seed, 7);
        assert!(parsed.variants[1].verification.as_ref().unwrap().passed);
    }

    #[test]
    fn bad_requests_are_refused_with_the_variable_or_target() {
        let suite = Suite::embedded();
        let cpu = || Arc::new(crate::bench::CpuBackend) as Arc<dyn Backend>;
        let e = emit_target(&suite, "nope", "smoke", cpu(), &env_of(&[])).unwrap_err();
        assert_eq!(e.to_string(), "target \"nope\" is not in the suite");
        let e = emit_target(
            &suite,
            "gradient_fusion",
            "smoke",
            cpu(),
            &env_of(&[("TIER1_ITERATIONS", "many")]),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "environment variable TIER1_ITERATIONS: expected a whole number >= 1, found \"many\""
        );
        let e = emit_target(
            &suite,
            "gradient_fusion",
            "smoke",
            cpu(),
            &env_of(&[("TIER1_SHAPES", "[1]")]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("TIER1_SHAPES"), "{e}");
        let mut cmd = suite.clone();
        cmd.targets[0].kind = TargetKind::Command;
        let e = emit_target(
            &cmd,
            &cmd.targets[0].key.clone(),
            "smoke",
            cpu(),
            &env_of(&[]),
        )
        .unwrap_err();
        assert!(matches!(e, EmitError::NotBuiltin(_)), "{e}");
    }
}
