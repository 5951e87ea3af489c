//! This checkout's files for the contract tests: the text of a file, or its YAML as
//! `serde_json::Value` (parsed with serde-saphyr).
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;

/// The checkout's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The text of `rel`.
pub fn text(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The YAML of `rel`.
pub fn yaml(rel: &str) -> Value {
    serde_saphyr::from_str::<Value>(&text(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}
