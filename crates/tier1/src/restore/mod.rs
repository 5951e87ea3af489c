//! Restore of canonical history (contract §5): discovery of the runs that can be provenance
//! ([`provenance`]), per-candidate download with digest check, safe extraction, validation and
//! sanitizing, the sealed segments against the vault by metadata (`vault`), evidence provenance
//! by metadata, renewal and expiry, the skip-versus-refuse policy
//! (§5.6, `decide`), bootstrap, and the atomic install into an empty destination. Restoring from
//! a `tier1-export` archive instead, offline, is [`export`].

mod attempt;
pub(crate) mod decide;
pub(crate) mod discovery;
pub(crate) mod error;
pub(crate) mod evidence;
pub mod export;
pub(crate) mod options;
pub(crate) mod outcome;
pub mod provenance;
pub(crate) mod select;
pub(crate) mod vault;

pub(crate) use error::CandidateError;
pub use error::RestoreError;
pub use options::RestoreOptions;
pub(crate) use options::{DEFAULT_WORKFLOW, MAX_ARTIFACT_CANDIDATES, MAX_RUNS_TO_SCAN};
pub(crate) use outcome::{Rejection, RestoreOutcome};
pub use select::restore;
