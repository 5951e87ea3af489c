//! The history package: model types, validation, the hash chain, trend snapshots and rendering.

pub mod model;
pub mod validate;

pub use model::*;
