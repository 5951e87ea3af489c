//! What restore prints on success: the restored or bootstrap status and the skipped candidates
//! (contract §5.6, "Success output").

use serde::Serialize;

/// A candidate that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Rejection {
    /// History artifact id.
    pub(crate) artifact_id: u64,
    /// History artifact name.
    pub(crate) artifact_name: String,
    /// Its run.
    pub(crate) workflow_run_id: u64,
    /// Its run's conclusion.
    pub(crate) workflow_run_conclusion: Option<String>,
    /// Why it was skipped.
    pub(crate) reason: String,
}

/// The JSON status printed on success: the reference keys plus additions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestoreOutcome {
    /// `restored` or `bootstrap`.
    pub(crate) status: &'static str,
    /// True when a history tree was installed.
    pub history_restored: bool,
    /// The restored history artifact's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) artifact_id: Option<u64>,
    /// The restored history artifact's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) artifact_name: Option<String>,
    /// The anchor's evidence artifact id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) evidence_artifact_id: Option<u64>,
    /// The anchor's evidence artifact name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) evidence_artifact_name: Option<String>,
    /// True when the evidence is 60 days old or more (allowed only with renewal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) anchor_renewal_required: Option<bool>,
    /// Skipped candidates.
    pub(crate) rejections: Vec<Rejection>,
    /// Addition: the run that uploaded the restored history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) workflow_run_id: Option<u64>,
    /// Addition: the latest eligible anchor's run id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) anchor_run_id: Option<String>,
    /// Addition: whether discovery hit a cap.
    pub(crate) discovery_truncated: bool,
    /// Addition: where the restored history's sealed segments are (absent without segments).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) vault: Option<super::vault::VaultReport>,
}

/// The bootstrap status: nothing restored, with the skipped candidates.
pub(crate) fn bootstrap(rejections: Vec<Rejection>, truncated: bool) -> RestoreOutcome {
    RestoreOutcome {
        status: "bootstrap",
        history_restored: false,
        artifact_id: None,
        artifact_name: None,
        evidence_artifact_id: None,
        evidence_artifact_name: None,
        anchor_renewal_required: None,
        rejections,
        workflow_run_id: None,
        anchor_run_id: None,
        discovery_truncated: truncated,
        vault: None,
    }
}
