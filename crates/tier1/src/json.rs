//! JSON I/O rules: pretty output with a trailing newline, refusal of NaN and infinities (serde_json
//! would silently write `null`), canonical compact form with sorted keys for hashing.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;

/// Failure to read or write a JSON file, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid JSON of the expected shape.
    #[error("{path}: invalid JSON: {source}")]
    Parse {
        /// The file.
        path: String,
        /// The cause (with line and column).
        source: serde_json::Error,
    },
}

impl crate::exit::Classify for JsonError {
    fn exit(&self) -> crate::exit::Exit {
        match self {
            JsonError::Io { .. } => crate::exit::Exit::Io,
            _ => crate::exit::Exit::Invalid,
        }
    }
}

/// Read and parse a JSON file into `T`.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<T, JsonError> {
    let bytes = std::fs::read(path).map_err(|source| JsonError::Io {
        path: path.display().to_string(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|source| JsonError::Parse {
        path: path.display().to_string(),
        source,
    })
}

/// Serialize to pretty JSON (2-space indent, trailing newline), refusing non-finite floats.
pub fn to_pretty<T: Serialize>(value: &T, what: &str) -> Result<Vec<u8>, JsonError> {
    let v = serde_json::to_value(value).map_err(|source| JsonError::Parse {
        path: what.to_string(),
        source,
    })?;
    let mut out = serde_json::to_vec_pretty(&v).map_err(|source| JsonError::Parse {
        path: what.to_string(),
        source,
    })?;
    out.push(b'\n');
    Ok(out)
}

/// Write `value` as pretty JSON to `path`, atomically.
pub fn write<T: Serialize>(path: &Path, value: &T) -> Result<(), JsonError> {
    let bytes = to_pretty(value, &path.display().to_string())?;
    crate::fsx::write_atomic(path, &bytes).map_err(|source| JsonError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Canonical compact JSON: object keys sorted at every depth, no whitespace.
pub fn canonical(value: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&sort(value)).expect("a Value always serializes")
}

/// `serialize_with` for `f64` metrics: a NaN or infinity is a serialization error, never `null`.
pub fn ser_finite<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        Err(serde::ser::Error::custom(format!(
            "refusing to write non-finite number {x}"
        )))
    }
}

/// `serialize_with` for optional `f64` metrics: `None` is `null`; NaN or infinity is an error.
pub fn ser_finite_opt<S: serde::Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(v) => ser_finite(v, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_sorts_keys() {
        let v: Value =
            serde_json::from_str(r#"{"b":1,"a":{"d":[{"z":1,"y":2}],"c":null}}"#).unwrap();
        assert_eq!(
            canonical(&v),
            r#"{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}"#
        );
    }

    #[derive(serde::Serialize)]
    struct M {
        #[serde(serialize_with = "ser_finite_opt")]
        x: Option<f64>,
    }

    #[test]
    fn nan_is_refused_not_nulled() {
        assert!(to_pretty(&M { x: Some(f64::NAN) }, "m").is_err());
        assert!(
            to_pretty(
                &M {
                    x: Some(f64::INFINITY)
                },
                "m"
            )
            .is_err()
        );
        assert_eq!(
            to_pretty(&M { x: None }, "m").unwrap(),
            b"{\n  \"x\": null\n}\n"
        );
    }
}
