//! How much one run may record, in one place, derived from the cap of the package its results
//! must fit: promotion extracts the evidence package under [`EVIDENCE_MAX_BYTES`] (restore's cap,
//! `archive::MAX_EXPANDED_BYTES`), so every run tier1 accepts can be packed, promoted and restored.
//! A results file (the run's own, or a recheck's) may take a quarter of it, which leaves room for
//! the rechecks, the side-by-side evidence and the report; at [`SAMPLE_MAX_BYTES`] per sample
//! that is [`MAX_RUN_SAMPLES`] samples in all (every variant, target, invocation and pass). A
//! command's stdout, a tool's output file and an nvbench sample file are bounded by the same
//! budget. A run that would record more is refused before anything is written (exit 3), never
//! packed and then refused by its own promotion.

use crate::archive::MAX_EXPANDED_BYTES;

/// Decompressed bytes of the evidence package promotion accepts (restore's cap).
pub(crate) const EVIDENCE_MAX_BYTES: u64 = MAX_EXPANDED_BYTES;
/// Largest results file: a quarter of the evidence package.
pub(crate) const RESULTS_MAX_BYTES: u64 = EVIDENCE_MAX_BYTES / 4;
/// Most bytes one sample takes in a results file: its indentation (12 spaces), the longest number
/// serde_json writes for a sample in range (`2.2250738585072014e-308`, 23 bytes) and `,\n`.
pub(crate) const SAMPLE_MAX_BYTES: u64 = 12 + 24 + 2;
/// Most samples one run records in all.
pub(crate) const MAX_RUN_SAMPLES: usize = (RESULTS_MAX_BYTES / SAMPLE_MAX_BYTES) as usize;
/// Largest stdout (or `{output}` file) read from one command invocation.
pub(crate) const MAX_OUTPUT_BYTES: u64 = RESULTS_MAX_BYTES;
/// Largest nvbench `--jsonbin` sample file (float32 samples).
pub(crate) const MAX_JSONBIN_BYTES: u64 = 4 * MAX_RUN_SAMPLES as u64;

/// Why a run would record more than its evidence can hold, in words: `what` holds `found`
/// samples, and the budget.
pub(crate) fn too_many_samples(what: &str, found: usize) -> String {
    format!(
        "{what} would record {found} samples, over the {MAX_RUN_SAMPLES} one run may record (a results file holds at most {RESULTS_MAX_BYTES} bytes, {SAMPLE_MAX_BYTES} per sample, so that the evidence package stays within the {EVIDENCE_MAX_BYTES} bytes promotion extracts): lower the samples the command reports (TIER1_ITERATIONS), the profile's iterations or anchor_passes, or split the target; nothing was written"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_a_whole_number_of_samples_of_the_evidence_cap() {
        assert_eq!(EVIDENCE_MAX_BYTES, 64 << 20);
        assert_eq!(MAX_RUN_SAMPLES, 441_505);
        const { assert!(RESULTS_MAX_BYTES * 4 <= EVIDENCE_MAX_BYTES) };
        assert_eq!(MAX_OUTPUT_BYTES, 16 << 20);
    }
}
