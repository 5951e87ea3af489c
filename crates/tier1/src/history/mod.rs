//! The history package: model types, validation, the hash chain, trend snapshots, package I/O.

pub mod chain;
pub mod detection;
pub mod measurement;
pub mod model;
pub mod package;
pub mod sanitize;
pub mod trend;
pub mod validate;

pub use detection::{Detection, DetectionMethod, Inconclusive, MetricTest, TargetDetection};
pub use measurement::Measurement;
pub use model::*;
