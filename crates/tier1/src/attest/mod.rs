//! Runner attestation: what the machine itself shows (the runner's version from its own
//! `Runner.Listener`, the process's OS and architecture), what the runner reports (`RUNNER_*`), and
//! the labels the job requested (jobs API: its `runs-on`, never the runner's own labels), checked
//! against the policy a canonical run requires. Produces an [`Attestation`] record that says what
//! it proves ([`SCOPE`]).

pub mod checks;
pub mod error;
pub mod jobs;
pub mod jobs_api;
pub mod machine;
pub mod policy;
pub mod record;
pub mod sources;
pub mod version;

pub use checks::{RunnerEnv, attest};
pub use error::RunnerError;
pub use jobs::{Job, JobsPage, read_jobs_file};
pub use machine::Machine;
pub use policy::{DEFAULT_REQUIRED_LABELS, MIN_NODE24_RUNNER_VERSION, NODE24_LABEL, Policy};
pub use record::{Attestation, Check, SCOPE};
pub use sources::{JobsSource, VersionSource, attest_from};
