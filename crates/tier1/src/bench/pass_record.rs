//! One pass of an anchor's measurement as the results file records it (`sampling.passes`): the
//! merged samples of a target are its passes' samples one after the other (`bench::passes`).

use serde::{Deserialize, Serialize};

/// How one pass of a target was sampled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassRecord {
    /// Rounds of the pass (its samples follow the previous passes' in every variant).
    pub(crate) rounds: u32,
    /// Processes its samples came from.
    pub(crate) processes: u32,
    /// Executions per sample of each variant, in variant order.
    pub(crate) repetitions: Vec<u32>,
    /// Seed of the pass's round order.
    pub(crate) order_seed: u64,
    /// The budget ended the pass before the precision was reached.
    pub(crate) budget_exhausted: bool,
    /// Samples of each variant in the pass, in variant order, where some count differs from
    /// `rounds` (an imported tool reports its own number per benchmark); empty: `rounds` each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) samples: Vec<u32>,
}

impl PassRecord {
    /// The samples variant `index` has in this pass.
    pub(crate) fn samples_of(&self, index: usize) -> u32 {
        self.samples.get(index).copied().unwrap_or(self.rounds)
    }
}
