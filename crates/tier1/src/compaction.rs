//! Compaction of a history package before it is written, in large batches with hysteresis: it is
//! due when the live runs outnumber three tails, or the live part of the package (the package
//! without the pending segment archives) passes half of a restore cap; it then seals every run no
//! rule needs live (`keep`), down to one tail plus the pinned runs, but only when at least one tail
//! of runs can be sealed at once (or the live part passed three quarters of a cap), so a segment
//! holds hundreds of runs and is sealed once every few hundred nights, never one run a night. The
//! runs are sealed into segments (`history::segment`), contiguous in the chain, at most
//! `MAX_SEGMENT_RUNS` each. Publication and promotion write their output through
//! [`write_package`], which compacts, rewrites a schema_version 2 index as version 3, writes the
//! trend snapshots and the index, and checks that restore would accept the package before it is
//! renamed into place.

pub(crate) mod keep;
pub(crate) mod package;
mod policy;
mod seal;

pub use package::{PackagePlan, write_package};
pub use policy::Policy;
pub(crate) use seal::{Sealed, plan, seal_ranges};
