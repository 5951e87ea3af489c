//! [`Finite`]: a metric float whose serializer and deserializer refuse NaN and infinity.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::fmt;

/// A metric float of a file: written and read only when finite (serde_json would silently write
/// a NaN or an infinity as `null`). It is written exactly as its `f64` (the same JSON bytes);
/// a non-finite value is a serialization error, so it never reaches a file, and a non-finite
/// value offered by a deserializer is refused. In memory it holds whatever was computed: the rule
/// is checked where the number crosses a file boundary, as before.
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd)]
pub struct Finite(f64);

impl Finite {
    /// The value.
    pub const fn get(self) -> f64 {
        self.0
    }

    /// The value if it is finite (what a file may hold).
    pub(crate) fn checked(x: f64) -> Option<Finite> {
        x.is_finite().then_some(Finite(x))
    }

    /// Whether the value is finite (whether a file may hold it).
    pub(crate) fn is_finite(self) -> bool {
        self.0.is_finite()
    }

    /// The larger of the two values ([`f64::max`]).
    pub(crate) fn max(self, other: Finite) -> Finite {
        Finite(self.0.max(other.0))
    }
}

impl From<f64> for Finite {
    fn from(x: f64) -> Self {
        Finite(x)
    }
}

impl From<Finite> for f64 {
    fn from(x: Finite) -> Self {
        x.0
    }
}

impl PartialEq<f64> for Finite {
    fn eq(&self, other: &f64) -> bool {
        self.0 == *other
    }
}

impl PartialOrd<f64> for Finite {
    fn partial_cmp(&self, other: &f64) -> Option<Ordering> {
        self.0.partial_cmp(other)
    }
}

impl PartialEq<Finite> for f64 {
    fn eq(&self, other: &Finite) -> bool {
        *self == other.0
    }
}

impl PartialOrd<Finite> for f64 {
    fn partial_cmp(&self, other: &Finite) -> Option<Ordering> {
        self.partial_cmp(&other.0)
    }
}

impl fmt::Display for Finite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::LowerExp for Finite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerExp::fmt(&self.0, f)
    }
}

impl Serialize for Finite {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            s.serialize_f64(self.0)
        } else {
            Err(serde::ser::Error::custom(format!(
                "refusing to write non-finite number {}",
                self.0
            )))
        }
    }
}

impl<'de> Deserialize<'de> for Finite {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let x = f64::deserialize(d)?;
        Finite::checked(x)
            .ok_or_else(|| serde::de::Error::custom(format!("expected a finite number, found {x}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::IntoDeserializer;
    use serde::de::value::{Error as ValueError, F64Deserializer};

    proptest::proptest! {
        /// The bytes are those of the plain `f64` (float_roundtrip included), and they read back.
        #[test]
        fn writes_the_bytes_of_its_f64(x in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO) {
            let plain = serde_json::to_string(&x).unwrap();
            proptest::prop_assert_eq!(serde_json::to_string(&Finite::from(x)).unwrap(), plain.clone());
            let back: Finite = serde_json::from_str(&plain).unwrap();
            proptest::prop_assert_eq!(back.get().to_bits(), x.to_bits());
        }
    }

    #[test]
    fn non_finite_is_refused_both_ways() {
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = serde_json::to_string(&Finite::from(x)).unwrap_err();
            assert!(
                e.to_string()
                    .contains("refusing to write non-finite number"),
                "{e}"
            );
            let d: F64Deserializer<ValueError> = x.into_deserializer();
            let e = Finite::deserialize(d).unwrap_err();
            assert!(e.to_string().contains("expected a finite number"), "{e}");
        }
        assert!(serde_json::from_str::<Finite>("1e400").is_err());
        assert_eq!(
            serde_json::from_str::<Option<Finite>>("null").unwrap(),
            None
        );
    }

    #[test]
    fn compares_and_prints_as_its_f64() {
        let x = Finite::from(1.5);
        assert!(x > 1.0 && x == 1.5 && x < Finite::from(2.0));
        assert!(1.0 < x && 1.5 == x && 2.0 > x);
        assert!((40.0..55.0).contains(&Finite::from(50.0)));
        assert_eq!(x.to_string(), 1.5f64.to_string());
        assert_eq!(
            format!("{x:+.2} {x:.3e}"),
            format!("{:+.2} {:.3e}", 1.5, 1.5)
        );
        assert_eq!(Finite::checked(f64::NAN), None);
        assert!(x.is_finite() && !Finite::from(f64::INFINITY).is_finite());
        assert_eq!(x.max(Finite::from(-2.0)), 1.5);
        assert_eq!(Finite::from(f64::NAN).max(x), 1.5);
    }
}
