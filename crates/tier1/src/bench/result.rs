//! The harness result file `<run_dir>/results/benchmark_test_results.json`: raw samples, statistics,
//! verification, memory and input signature per variant, and the derived per-target verdict.
//! `derive()` turns a target's raw facts into its verdict and metrics; [`summarize`] turns the file
//! into `summary.json` target rows. Both are pure functions of the file (and the suite's labels), so
//! promotion can re-derive a summary and [`validate`] can refuse a file whose stored verdicts or
//! statistics do not match its own samples.

mod derived;
mod error;
mod format;
mod settings;
mod summary;
mod validation;

#[cfg(test)]
pub(crate) use derived::{derive, no_speedup_message};
pub(crate) use error::ResultError;
#[cfg(test)]
pub(crate) use format::Metrics;
pub(crate) use format::{
    BASELINE, RESULTS_REL_PATH, ReferenceCheck, TargetFailure, TensorSpec, Work, empty_result,
};
pub use format::{
    InputSignature, PeakClass, RESULTS_SCHEMA_VERSION, ResultsFile, Role, Sampling, TargetResult,
    VariantResult, VariantVerification, status,
};
pub use summary::summarize;
pub use validation::validate;

#[cfg(test)]
mod tests;
