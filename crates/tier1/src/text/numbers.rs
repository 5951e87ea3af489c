//! Numbers as people read them: a fixed number of significant digits, and a value printed
//! beside a limit with as many decimals as it takes for the two never to read the same when
//! they differ (1.047 against 1.05 reads "1.047x below 1.05x", never "1.05x below 1.05x").

/// `x` with `digits` significant digits (at least one decimal, no exponent).
pub(crate) fn fmt_sig(x: impl Into<f64>, digits: u32) -> String {
    let x: f64 = x.into();
    if !x.is_finite() {
        return x.to_string();
    }
    if x == 0.0 {
        return "0".into();
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - magnitude).clamp(0, 12) as usize;
    format!("{x:.decimals$}")
}

/// `value` and `limit` with `decimals` decimals, more where `value != limit` would otherwise
/// print the same (up to 9 decimals).
pub(crate) fn fmt_apart(value: f64, limit: f64, decimals: usize) -> (String, String) {
    let mut d = decimals;
    loop {
        let (v, l) = (format!("{value:.d$}"), format!("{limit:.d$}"));
        if v != l || value == limit || d >= 9 {
            return (v, l);
        }
        d += 1;
    }
}

/// A signed percentage with `decimals` decimals (`+5.20 %`, `-12.00 %`).
pub(crate) fn fmt_pct(x: impl Into<f64>, decimals: usize) -> String {
    let x: f64 = x.into();
    format!("{x:+.decimals$} %")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_beside_their_limit_never_read_the_same() {
        assert_eq!(fmt_apart(1.047, 1.05, 2), ("1.047".into(), "1.050".into()));
        assert_eq!(fmt_apart(0.97, 1.05, 2), ("0.97".into(), "1.05".into()));
        assert_eq!(fmt_apart(1.05, 1.05, 2), ("1.05".into(), "1.05".into()));
        assert_eq!(fmt_apart(1.049_999, 1.05, 2).0, "1.049999");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(fmt_sig(0.003_14, 3), "0.00314");
        assert_eq!(fmt_sig(12.345, 3), "12.3");
        assert_eq!(fmt_sig(0.05, 3), "0.0500");
        assert_eq!(fmt_sig(0.0, 3), "0");
        assert_eq!(fmt_pct(-5.0, 1), "-5.0 %");
    }
}
