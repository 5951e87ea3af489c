//! Output verification, outside the timed region: elementwise `|out - want| <= atol + rtol * |want|`
//! against the baseline output and, where one exists, an f64 reference.

use crate::bench::result::{ReferenceCheck, VariantVerification};
use crate::suite::Tolerance;

/// Largest finite value written in place of a non-finite error (JSON cannot hold infinities).
const NON_FINITE_ERR: f64 = f64::MAX;

struct Errs {
    elements: u64,
    mismatches: u64,
    max_abs: f64,
    max_rel: f64,
}

fn errors(out: &[f32], want: impl Iterator<Item = f64>, tol: Tolerance) -> Errs {
    let mut e = Errs {
        elements: 0,
        mismatches: 0,
        max_abs: 0.0,
        max_rel: 0.0,
    };
    for (o, w) in out.iter().map(|&o| f64::from(o)).zip(want) {
        e.elements += 1;
        let abs = (o - w).abs();
        if !abs.is_finite() {
            e.mismatches += 1;
            e.max_abs = NON_FINITE_ERR;
            e.max_rel = NON_FINITE_ERR;
            continue;
        }
        if abs > tol.atol + tol.rtol * w.abs() {
            e.mismatches += 1;
        }
        e.max_abs = e.max_abs.max(abs);
        if w != 0.0 {
            e.max_rel = e.max_rel.max(abs / w.abs());
        }
    }
    e
}

/// Compare an optimized output with the baseline output (and the f64 reference when given).
pub fn compare(
    out: &[f32],
    baseline: &[f32],
    reference: Option<&[f64]>,
    tol: Tolerance,
) -> VariantVerification {
    if out.len() != baseline.len() {
        return VariantVerification {
            passed: false,
            elements: out.len() as u64,
            mismatches: out.len().abs_diff(baseline.len()) as u64,
            max_abs_err: NON_FINITE_ERR.into(),
            max_rel_err: NON_FINITE_ERR.into(),
            reference: None,
            message: Some(format!(
                "output has {} elements, baseline has {}",
                out.len(),
                baseline.len()
            )),
        };
    }
    let e = errors(out, baseline.iter().map(|&b| f64::from(b)), tol);
    let reference = reference.map(|r| check_reference(out, r, tol));
    let ref_ok = reference.as_ref().is_none_or(|r| r.passed);
    VariantVerification {
        passed: e.mismatches == 0 && ref_ok,
        elements: e.elements,
        mismatches: e.mismatches,
        max_abs_err: e.max_abs.into(),
        max_rel_err: e.max_rel.into(),
        message: (!ref_ok).then(|| "output differs from the f64 reference".to_string()),
        reference,
    }
}

/// Compare an output with the f64 reference.
pub(crate) fn check_reference(out: &[f32], reference: &[f64], tol: Tolerance) -> ReferenceCheck {
    if out.len() != reference.len() {
        return ReferenceCheck {
            passed: false,
            max_abs_err: NON_FINITE_ERR.into(),
            max_rel_err: NON_FINITE_ERR.into(),
        };
    }
    let e = errors(out, reference.iter().copied(), tol);
    ReferenceCheck {
        passed: e.mismatches == 0,
        max_abs_err: e.max_abs.into(),
        max_rel_err: e.max_rel.into(),
    }
}

/// The baseline's own record: its output against the f64 reference (no baseline to compare with).
pub(crate) fn baseline_record(
    out: &[f32],
    reference: &[f64],
    tol: Tolerance,
) -> VariantVerification {
    let r = check_reference(out, reference, tol);
    VariantVerification {
        passed: r.passed,
        elements: out.len() as u64,
        mismatches: 0,
        max_abs_err: 0.0.into(),
        max_rel_err: 0.0.into(),
        message: (!r.passed).then(|| "baseline output differs from the f64 reference".to_string()),
        reference: Some(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOL: Tolerance = Tolerance {
        rtol: 1e-2,
        atol: 1e-3,
    };

    #[test]
    fn within_tolerance_passes_and_records_errors() {
        let v = compare(&[1.005, 2.0], &[1.0, 2.0], Some(&[1.0, 2.0]), TOL);
        assert!(v.passed, "{v:?}");
        assert!((v.max_abs_err.get() - 0.005).abs() < 1e-6);
        assert!((v.max_rel_err.get() - 0.005).abs() < 1e-6);
        assert_eq!(v.elements, 2);
    }

    #[test]
    fn outside_tolerance_nan_and_length_fail() {
        let v = compare(&[1.1, 2.0], &[1.0, 2.0], None, TOL);
        assert!(!v.passed && v.mismatches == 1);
        let v = compare(&[f32::NAN], &[1.0], None, TOL);
        assert!(!v.passed && v.max_abs_err == f64::MAX);
        let v = compare(&[1.0], &[1.0, 2.0], None, TOL);
        assert!(!v.passed && v.message.unwrap().contains("1 elements, baseline has 2"));
        let v = compare(&[1.0], &[1.0], Some(&[1.5]), TOL);
        assert!(!v.passed && v.message.unwrap().contains("f64 reference"));
    }
}
