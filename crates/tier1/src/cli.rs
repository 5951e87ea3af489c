//! What every binary does at its edge: logging to stderr, the TLS provider, JSON to stdout, and the
//! mapping of a failure to its documented exit code. Every log field and error line passes through
//! `crate::text::for_humans` (URLs redacted, control characters made visible). Nothing here
//! panics on an unwritable stdout or stderr: a log or error line that cannot be written is
//! dropped, and JSON that cannot be written to stdout turns a successful exit into the I/O
//! failure's own code ([`exit`]: 12 for a full disk, else 10) once the work is done.
//!
//! The flags several binaries share are declared once, as clap argument groups each binary
//! flattens (`github_args`, `store_args`, `suite_args`), and hand-checked values are parsed
//! by the value parsers of [`parsers`], whose refusals keep the exit code of invalid input.

pub(crate) mod github_args;
mod logging;
mod output;
pub mod parsers;
pub mod run_ids;
pub(crate) mod store_args;
pub(crate) mod suite_args;

pub use github_args::GithubArgs;
pub use logging::{init, init_at};
pub use output::{
    exit, fail, finish, gate_failed, print_ending, print_error, print_json, print_result,
};
pub use parsers::parse;
pub use run_ids::tier1_run_id_env;
pub use store_args::{HistoryArtifactsArgs, StoreArgs, StoreSpecArg};
pub use suite_args::{RunSetupArgs, SuiteArgs, SuiteFileArg};
