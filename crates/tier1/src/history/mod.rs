//! The history package (the format layer): model types, its error, the hash chain, trend
//! snapshots, package I/O. Validation, which re-derives stored verdicts, is `history_check`.

pub mod chain;
pub(crate) mod compacted;
pub(crate) mod detection;
pub mod error;
pub mod export_header;
pub(crate) mod measurement;
pub mod model;
pub mod overload;
pub mod package;
pub(crate) mod segment;
pub(crate) mod segment_chart;
pub mod segment_io;
pub(crate) mod settings;
pub mod shards;
pub(crate) mod sidebyside;
pub(crate) mod trend;

pub use detection::Verdict;
pub(crate) use detection::{
    Detection, DetectionMethod, FloorHeld, Inconclusive, MetricTest, TargetDetection,
};
pub(crate) use error::HistoryError;
pub(crate) use measurement::Measurement;
pub use model::*;
pub(crate) use sidebyside::{SbsRatio, SbsVerdict, SideBySideBlock, SideBySideCheck};
