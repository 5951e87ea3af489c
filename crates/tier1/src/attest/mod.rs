//! Runner attestation: what the machine itself shows (the runner's version from its own
//! `Runner.Listener`, the process's OS and architecture), what the runner reports (`RUNNER_*`), and
//! the labels the job requested (jobs API: its `runs-on`, never the runner's own labels), checked
//! against the policy a canonical run requires. Produces an `Attestation` record that says what
//! it proves (`SCOPE`).

pub(crate) mod checks;
pub(crate) mod error;
pub(crate) mod jobs;
pub mod jobs_api;
pub(crate) mod machine;
pub(crate) mod policy;
pub(crate) mod record;
pub(crate) mod sources;
pub(crate) mod version;

pub use checks::RunnerEnv;
pub use error::RunnerError;
pub(crate) use jobs::Job;
#[cfg(test)]
pub(crate) use policy::DEFAULT_REQUIRED_LABELS;
pub use policy::Policy;
pub(crate) use record::Check;
pub use sources::{JobsSource, VersionSource, attest_from};
