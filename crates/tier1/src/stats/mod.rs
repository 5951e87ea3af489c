//! Pure statistics used by the harness and the regression engine: distribution functions
//! (normal, Student t), order statistics (medians and their distribution-free confidence
//! intervals), robust spread (MAD, Tukey fences) and the Hodges-Lehmann shift of paired
//! differences with its signed-rank interval. No I/O, no randomness, no dependencies.

pub mod dist;
mod moments;
pub mod order;
pub mod robust;
pub mod shift;

pub use dist::{normal_cdf, normal_quantile, t_cdf, t_quantile};
pub use moments::{mean, sample_variance};
pub use order::{MedianCi, median, median_ci, percentile};
pub use robust::{mad, tukey_outliers};
pub use shift::{ShiftCi, hodges_lehmann};
