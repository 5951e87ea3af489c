//! The history package: model types, validation, the hash chain, trend snapshots and rendering.

pub mod chain;
pub mod model;
pub mod package;
pub mod render;
pub mod sanitize;
pub mod trend;
pub mod validate;

pub use model::*;
