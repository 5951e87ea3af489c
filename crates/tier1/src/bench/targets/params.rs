//! A target's parameters read from the profile's shapes with serde: each target's `Params` derives
//! `Deserialize` and names its key, the smallest value of each field and its cross-field checks
//! ([`ShapeParams`]); [`read`] walks the struct's fields in declaration order, so the first bad
//! field is the one reported, as "missing from the profile's shapes", "expected at least N, found
//! V" or "V does not fit this machine's address size". Shapes the struct does not name are left
//! alone (a suite may carry shapes for other tools).

use crate::bench::backend::{BackendError, Shapes};
use serde::de::value::{StrDeserializer, U64Deserializer};
use serde::de::{DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};

/// A target's parameters, read from the shapes by [`read`].
pub(crate) trait ShapeParams: DeserializeOwned {
    /// Suite target key (named in errors).
    const KEY: &'static str;

    /// The smallest accepted value of `field` (1 unless the target says otherwise).
    fn min(_field: &str) -> u64 {
        1
    }

    /// Checks across fields, after every field was read.
    fn check(self) -> Result<Self, BackendError> {
        Ok(self)
    }

    /// From the profile's shapes: [`read`].
    fn from_shapes(shapes: &Shapes) -> Result<Self, BackendError> {
        read(shapes)
    }
}

/// `P` from `shapes`: every field present, at least its minimum, fitting `usize`, then `P::check`.
pub(crate) fn read<P: ShapeParams>(shapes: &Shapes) -> Result<P, BackendError> {
    P::deserialize(ShapesDe {
        shapes,
        min: P::min,
    })
    .map_err(|e| BackendError::Shape {
        key: P::KEY.into(),
        param: e.param,
        message: e.message,
    })?
    .check()
}

/// Why one field could not be read.
#[derive(Debug)]
struct FieldError {
    param: String,
    message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.param, self.message)
    }
}

impl std::error::Error for FieldError {}

impl serde::de::Error for FieldError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        FieldError {
            param: String::new(),
            message: msg.to_string(),
        }
    }
}

/// The shapes as a struct of unsigned fields.
struct ShapesDe<'a> {
    shapes: &'a Shapes,
    min: fn(&str) -> u64,
}

impl<'de> serde::Deserializer<'de> for ShapesDe<'_> {
    type Error = FieldError;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, FieldError> {
        Err(serde::de::Error::custom(
            "expected a struct of shape fields",
        ))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, FieldError> {
        visitor.visit_map(Fields {
            de: self,
            fields,
            at: 0,
            value: 0,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The struct's fields in declaration order, each checked before serde sees it.
struct Fields<'a> {
    de: ShapesDe<'a>,
    fields: &'static [&'static str],
    at: usize,
    value: u64,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = FieldError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, FieldError> {
        let Some(&name) = self.fields.get(self.at) else {
            return Ok(None);
        };
        self.at += 1;
        let bad = |message: String| FieldError {
            param: name.into(),
            message,
        };
        let v = *self
            .de
            .shapes
            .get(name)
            .ok_or_else(|| bad("missing from the profile's shapes".into()))?;
        let min = (self.de.min)(name);
        if v < min {
            return Err(bad(format!("expected at least {min}, found {v}")));
        }
        if usize::try_from(v).is_err() {
            return Err(bad(format!("{v} does not fit this machine's address size")));
        }
        self.value = v;
        let key: StrDeserializer<'_, FieldError> = name.into_deserializer();
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, FieldError> {
        let value: U64Deserializer<FieldError> = self.value.into_deserializer();
        seed.deserialize(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Two {
        a: usize,
        b: usize,
    }

    impl ShapeParams for Two {
        const KEY: &'static str = "two";
        fn min(field: &str) -> u64 {
            if field == "b" { 4 } else { 1 }
        }
    }

    fn shapes(kv: &[(&str, u64)]) -> Shapes {
        kv.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    fn err(s: &Shapes) -> (String, String) {
        match read::<Two>(s) {
            Err(BackendError::Shape {
                key,
                param,
                message,
            }) => {
                assert_eq!(key, "two");
                (param, message)
            }
            other => panic!("shape error expected, found {other:?}"),
        }
    }

    #[test]
    fn fields_are_read_in_order_with_their_minimums_and_extra_shapes_ignored() {
        let ok = read::<Two>(&shapes(&[("b", 4), ("a", 1), ("extra", 0)])).expect("read");
        assert_eq!(ok, Two { a: 1, b: 4 });
        assert_eq!(
            err(&shapes(&[("b", 4)])),
            ("a".into(), "missing from the profile's shapes".into())
        );
        assert_eq!(
            err(&shapes(&[("a", 0)])),
            ("a".into(), "expected at least 1, found 0".into()),
            "the first field's error wins"
        );
        assert_eq!(
            err(&shapes(&[("a", 2), ("b", 3)])),
            ("b".into(), "expected at least 4, found 3".into())
        );
    }
}
