//! One invocation's stdout read into a result document: tier1's own (`format: tier1`), or the
//! tool's output read by its importer and checked by the same rules.

use super::output::{COMMAND_SCHEMA, CommandOutput, CommandVariant};
use super::validate::{parse, validate};
use crate::bench::import;
use crate::bench::invocation::Invocation;
use crate::bench::limits::MAX_OUTPUT_BYTES;
use crate::bench::options::Timing;
use crate::bench::result::{InputSignature, VariantVerification, Work};
use crate::suite::Target;

/// The result of one invocation: tier1's document, or the tool's output read by its importer.
pub(super) fn read(
    t: &Target,
    seed: u64,
    timing: Timing,
    stdout: Vec<u8>,
    inv: &Invocation,
) -> Result<CommandOutput, String> {
    let document = inv
        .document(stdout, MAX_OUTPUT_BYTES)
        .map_err(|e| format!("target {}: {e}", t.key))?;
    if t.format.is_tier1() {
        return parse(&t.key, &document);
    }
    let (dir, criterion_home) = (inv.dir(), inv.criterion_home());
    let out = import::ToolOutput {
        document: &document,
        dir: &dir,
        criterion_home: &criterion_home,
        clock: timing.clock,
    };
    let signature = InputSignature {
        seed,
        inputs: Vec::new(),
    };
    let note = format!(
        "outputs not compared: imported from {}, whose run succeeded",
        t.format.as_str()
    );
    let variants = import::variants(t, out)?
        .into_iter()
        .enumerate()
        .map(|(i, v)| CommandVariant {
            name: v.name,
            samples_ms: v.samples_ms,
            memory_peak_bytes: None,
            input_signature: signature.clone(),
            verification: (i > 0).then(|| VariantVerification {
                passed: true,
                elements: 0,
                mismatches: 0,
                max_abs_err: 0.0.into(),
                max_rel_err: 0.0.into(),
                reference: None,
                message: Some(note.clone()),
            }),
        })
        .collect();
    validate(
        &t.key,
        CommandOutput {
            schema: COMMAND_SCHEMA.into(),
            baseline_file: None,
            work: Work::default(),
            variants,
        },
    )
}
