//! The policy a canonical run's runner must meet: the labels its job requests, and the runner
//! version node24 actions need.

/// Labels a canonical producer job must carry, in the order the workflow lists them.
pub(crate) const DEFAULT_REQUIRED_LABELS: [&str; 6] = [
    "self-hosted",
    "linux",
    "x64",
    "gpu",
    "b200",
    "node24-actions",
];

/// The label that promises a runner able to run node24 actions.
pub(crate) const NODE24_LABEL: &str = "node24-actions";

/// The oldest runner version node24 actions (upload-artifact v6+, download-artifact v7+) accept.
pub(crate) const MIN_NODE24_RUNNER_VERSION: semver::Version = semver::Version::new(2, 327, 1);

/// What to attest against.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Labels the job must carry (compared case-insensitively, as GitHub does).
    pub required_labels: Vec<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            required_labels: DEFAULT_REQUIRED_LABELS
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }
}

impl Policy {
    /// Whether the policy requires the node24 label (and therefore the minimum runner version).
    pub(crate) fn requires_node24(&self) -> bool {
        self.required_labels
            .iter()
            .any(|l| l.eq_ignore_ascii_case(NODE24_LABEL))
    }
}
