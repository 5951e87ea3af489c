//! The outcome of one gate check ([`Check`]): the reasons it failed, empty when it passed.

use serde::Serialize;

/// The outcome of one gate check: empty `reasons` means it passed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Check {
    /// One line per failed condition, naming the field with expected and found values.
    pub(crate) reasons: Vec<String>,
}

impl Check {
    /// True when no condition failed.
    pub(crate) fn passed(&self) -> bool {
        self.reasons.is_empty()
    }
    pub(super) fn fail(&mut self, reason: impl Into<String>) {
        self.reasons.push(reason.into());
    }
    pub(super) fn require(&mut self, ok: bool, reason: impl FnOnce() -> String) {
        if !ok {
            self.reasons.push(reason());
        }
    }
    pub(super) fn absorb(&mut self, other: Check) {
        self.reasons.extend(other.reasons);
    }
}
