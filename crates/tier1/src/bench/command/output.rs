//! The document a command prints ([`CommandOutput`], protocol in docs/command-targets.md) and what
//! the harness does with it: the samples of several invocations pooled, the variants turned into
//! results.

use crate::bench::result::{InputSignature, Role, VariantResult, VariantVerification, Work};
use crate::bench::stats::Stats;
use serde::Deserialize;

/// `schema` value a command must print.
pub(crate) const COMMAND_SCHEMA: &str = "tier1.command_result.v1";

/// The JSON a command prints.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandOutput {
    /// Must be [`COMMAND_SCHEMA`].
    pub(crate) schema: String,
    /// Repo-relative source of the baseline.
    #[serde(default)]
    pub(crate) baseline_file: Option<String>,
    /// Work per execution.
    #[serde(default)]
    pub(crate) work: Work,
    /// Baseline first.
    pub variants: Vec<CommandVariant>,
}

/// One variant of a command's output.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandVariant {
    /// `baseline` first, then optimized names.
    pub name: String,
    /// Timed samples (ms).
    pub samples_ms: Vec<f64>,
    /// Peak bytes of one execution, when measured.
    #[serde(default)]
    pub(crate) memory_peak_bytes: Option<u64>,
    /// Input signature (must equal the baseline's).
    pub input_signature: InputSignature,
    /// Required for optimized variants.
    #[serde(default)]
    pub(crate) verification: Option<VariantVerification>,
}

impl CommandOutput {
    /// Pool the samples of another invocation into this one: the same variants (names, order,
    /// input signatures) are required; samples are appended, memory peaks keep the maximum, and
    /// a failed verification in any invocation is kept.
    pub(super) fn pool(mut self, next: CommandOutput, key: &str) -> Result<CommandOutput, String> {
        let names = |o: &CommandOutput| {
            o.variants
                .iter()
                .map(|v| v.name.clone())
                .collect::<Vec<_>>()
        };
        if names(&self) != names(&next) {
            return Err(format!(
                "target {key}: invocations disagree on the variants: expected {:?}, found {:?}",
                names(&self),
                names(&next)
            ));
        }
        for (a, b) in self.variants.iter_mut().zip(next.variants) {
            if a.input_signature != b.input_signature {
                return Err(format!(
                    "target {key}: variant {} changed its input signature between invocations ({} then {})",
                    a.name,
                    a.input_signature.describe(),
                    b.input_signature.describe()
                ));
            }
            a.samples_ms.extend(b.samples_ms);
            a.memory_peak_bytes = match (a.memory_peak_bytes, b.memory_peak_bytes) {
                (Some(x), Some(y)) => Some(x.max(y)),
                _ => None,
            };
            // A missing record in any invocation stays missing; the first failure is kept.
            a.verification = match (a.verification.take(), b.verification) {
                (Some(x), Some(y)) => Some(if x.passed { y } else { x }),
                _ => None,
            };
        }
        Ok(self)
    }

    /// The variants as harness results (statistics computed here from the samples).
    pub(super) fn into_results(self) -> Vec<VariantResult> {
        self.variants
            .into_iter()
            .enumerate()
            .filter_map(|(i, v)| {
                Some(VariantResult {
                    stats: Stats::of(&v.samples_ms)?,
                    name: v.name,
                    role: if i == 0 {
                        Role::Baseline
                    } else {
                        Role::Optimized
                    },
                    input_signature: v.input_signature,
                    samples_ms: v.samples_ms,
                    repetitions: 1,
                    memory_peak_bytes: v.memory_peak_bytes,
                    verification: if i == 0 { None } else { v.verification },
                })
            })
            .collect()
    }
}
