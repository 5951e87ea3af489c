//! The suite config (`configs/benchmark_suites/tier1.yaml`): targets, goals, profiles and regression
//! thresholds, parsed strictly (unknown fields, duplicate keys or targets and bad goals are errors
//! that name the line).

pub(crate) mod classes;
mod definition;
mod discover;
mod error;
mod format;
pub(crate) mod limits;
mod lines;
mod names;
mod parse_error;
mod profile;
pub(crate) mod settings;
mod target;
mod thresholds;
mod validate;

pub use classes::{RunnerClass, class_prefix};
pub use definition::{EMBEDDED_TIER1_YAML, Suite};
pub(crate) use discover::SuiteSource;
pub use error::SuiteError;
pub(crate) use format::{OutputFormat, VariantMap, variant_name};
pub(crate) use names::{RunNames, run_names};
pub use profile::Profile;
pub(crate) use profile::{BackendKind, MIN_ROUNDS};
pub use settings::Clock;
pub(crate) use settings::{
    AnchorPrecision, SideBySideSetting, TargetSettings, ThresholdBook, ThresholdOverrides,
};
pub use target::{Goal, Target, TargetKind, Tolerance};
pub use thresholds::{DetectionMethod, Thresholds, UnknownRule};

#[cfg(test)]
mod tests;
