//! The history package (the format layer): model types, its error, the hash chain, trend
//! snapshots, package I/O. Validation, which re-derives stored verdicts, is `history_check`.

pub mod chain;
pub mod compacted;
pub mod detection;
pub mod error;
pub mod export_header;
pub mod measurement;
pub mod model;
pub mod package;
pub mod segment;
pub mod segment_io;
pub mod sidebyside;
pub mod trend;

pub use detection::{
    Detection, DetectionMethod, FloorHeld, Inconclusive, MetricTest, TargetDetection, Verdict,
};
pub use error::{HistoryError, HistoryErrorKind};
pub use measurement::Measurement;
pub use model::*;
pub use sidebyside::{SbsRatio, SbsVerdict, SideBySideBlock, SideBySideCheck};
