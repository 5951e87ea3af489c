//! The history package: model types, validation, the hash chain, trend snapshots, package I/O.

pub mod chain;
pub mod model;
pub mod package;
pub mod sanitize;
pub mod trend;
pub mod validate;

pub use model::*;
