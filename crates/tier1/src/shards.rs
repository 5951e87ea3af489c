//! Sharded nights (docs/sharding.md): the plan that splits a suite's targets over a job matrix
//! (balanced by their recorded times), a shard's own record and where its evidence lies, and the
//! merge of the shards' results and side-by-side blocks into one night. Pure rules: the commands
//! (`crate::shard`) fetch, verify and write.

pub(crate) mod layout;
pub(crate) mod merge;
pub(crate) mod plan;
pub(crate) mod record;
#[cfg(test)]
pub(crate) mod testkit;

pub use merge::MergeError;
pub use plan::Plan;
