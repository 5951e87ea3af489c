//! JSON files: reading one into a type, writing one as pretty JSON (2-space indent, trailing
//! newline, atomically) with NaN and infinities refused, and the error that names the file.

use serde::Serialize;
use serde::de::DeserializeOwned;
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
            JsonError::Io { source, .. } => crate::exit::of_io(source),
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
pub(crate) fn to_pretty<T: Serialize>(value: &T, what: &str) -> Result<Vec<u8>, JsonError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Finite;

    #[derive(serde::Serialize)]
    struct M {
        x: Option<Finite>,
    }

    #[test]
    fn nan_is_refused_not_nulled() {
        let m = |x: Option<f64>| M {
            x: x.map(Finite::from),
        };
        assert!(to_pretty(&m(Some(f64::NAN)), "m").is_err());
        assert!(to_pretty(&m(Some(f64::INFINITY)), "m").is_err());
        assert_eq!(to_pretty(&m(None), "m").unwrap(), b"{\n  \"x\": null\n}\n");
    }
}
