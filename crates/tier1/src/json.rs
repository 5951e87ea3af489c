//! JSON I/O rules: pretty output with a trailing newline, refusal of NaN and infinities (serde_json
//! would silently write `null`), canonical compact form with sorted keys for hashing.

mod canonical;
mod files;
mod finite;

pub(crate) use canonical::{canonical, canonical_without};
pub(crate) use files::to_pretty;
pub use files::{JsonError, read, write};
pub use finite::Finite;
