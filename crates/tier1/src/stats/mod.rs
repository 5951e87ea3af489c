//! Pure statistics used by the harness and the regression engine: distribution functions
//! (normal, Student t), order statistics (medians and their distribution-free confidence
//! intervals), robust spread (MAD, Tukey fences) and the Hodges-Lehmann shift of paired
//! differences with its signed-rank interval. No I/O, no randomness, no dependencies.

pub(crate) mod dist;
mod moments;
pub mod order;
pub(crate) mod robust;
pub(crate) mod shift;

pub(crate) use dist::{normal_quantile, t_cdf, t_quantile};
pub use moments::{mean, sample_variance};
pub(crate) use order::{MedianCi, median_ci};
pub use order::{median, percentile};
pub(crate) use robust::{mad, tukey_outliers};
pub(crate) use shift::{ShiftCi, hodges_lehmann};
