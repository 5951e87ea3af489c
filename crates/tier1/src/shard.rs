//! `tier1-shard`: the three steps of a sharded night (docs/sharding.md) as commands: `plan`
//! ([`plan_cmd::plan`]) after restoring the class's history once, `run` ([`run_cmd::run_shard`])
//! on each shard job's runner, and `combine` ([`combine::combine`]), which fetches, verifies and
//! merges the shards' packages into one run, one candidate and one gate verdict.

pub mod combine;
mod error;
pub(crate) mod fetch;
pub(crate) mod pack;
pub mod plan_cmd;
pub mod run_cmd;
pub(crate) mod verify;

pub use error::ShardError;
