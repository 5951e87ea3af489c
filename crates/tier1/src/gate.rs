//! The release gate (contract §3.3-3.4, §5.5 step 4): complete metrics, accepted provenance,
//! run acceptance, baseline eligibility of a normal publication, the eligible-anchor rules restore
//! re-derives, and the exit verdict. Every check returns the reasons it failed, not just a bool.

mod acceptance;
mod check;
mod eligibility;
mod outcome;

pub use acceptance::run_accepted;
pub(crate) use acceptance::{baseline_metrics, is_commit_hex, provenance, run_acceptance};
pub(crate) use check::Check;
pub(crate) use eligibility::{anchor_precision, baseline_eligibility, eligible_anchor_rules};
pub(crate) use outcome::{RunOutcome, Verdict, verdict};

#[cfg(test)]
mod tests;
