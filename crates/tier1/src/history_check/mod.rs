//! Validation of a history root: every rule of the reference index loader and restore validator
//! (contract §2.2, §5.5 step 4), plus the hash chain; and restore's in-place sanitizing
//! (`sanitize`). It sits above the format layer (`history`) and the rules it re-derives stored
//! verdicts with (`aggregate` for the status counts, `gate` for acceptance and eligibility,
//! `regress_md` for the re-rendered Markdown), so `history` never imports them. A compacted root's
//! sealed segments are checked by digest on every validation and opened by [`segments::check_deep`];
//! [`restorable::would_restore_accept`] is the check a package passes before it is written.

pub mod restorable;
pub(crate) mod runs;
pub(crate) mod sanitize;
pub mod segments;
pub(crate) mod validate;
pub(crate) mod validated;

pub(crate) use crate::artifacts::is_evidence_artifact_name;
pub use validate::{sanitize_restored, validate_history_root};
pub(crate) use validated::{AnchorRef, ValidatedHistory};
