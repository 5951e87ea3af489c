//! Unit tests of the moments.

use super::*;

#[test]
fn mean_and_sample_variance() {
    assert_eq!(mean(&[]), None);
    assert_eq!(mean(&[1.0, 2.0, 3.0]), Some(2.0));
    assert_eq!(sample_variance(&[1.0]), None);
    assert_eq!(sample_variance(&[1.0, 2.0, 3.0]), Some(1.0));
}
