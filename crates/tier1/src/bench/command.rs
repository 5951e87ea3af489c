//! Command targets (`kind: command`): run the argv (no shell) with the run's parameters in the
//! environment, parse the JSON result it prints on stdout (protocol in docs/command-targets.md),
//! validate it like a built-in result (finite non-negative samples, baseline first, unique safe
//! names, verification present on every optimized variant) and turn it into a
//! [`TargetResult`](crate::bench::result::TargetResult).
//! When one invocation's samples do not reach the profile's precision, the command runs again
//! in a new process (as asv does) and the samples are pooled, until precise, out of budget or
//! `MAX_PROCESSES` invocations. Each invocation leads its own process group: on a timeout, a
//! cancellation, or when it exits leaving processes behind, the whole group is killed. Its stdout
//! is read on a thread and never waited for past the timeout: a process that left the group
//! (`setsid`) and keeps the pipe open fails the target after `STDOUT_GRACE`, it cannot hang the
//! run.
//!
//! The document and its pooling (`output`), its protocol checks (`validate`), one invocation's
//! stdout read into a document (`read`), the measurement of one target by invocations until
//! precise (`measure`) and one invocation in its own process group (`invoke`).

mod invoke;
mod measure;
mod output;
mod read;
mod validate;

pub(crate) use invoke::{Finished, invoke_in};
pub(crate) use measure::run;
pub(crate) use output::COMMAND_SCHEMA;
pub use output::{CommandOutput, CommandVariant};
pub use validate::parse;
