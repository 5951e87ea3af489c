//! Reports a person reads: the dashboard (one self-contained HTML page with inline CSS and SVG) and
//! the Markdown summary for `$GITHUB_STEP_SUMMARY`, both built from one `model::Dashboard`.

pub(crate) mod axis;
pub(crate) mod changes;
pub mod classes;
pub(crate) mod declines;
mod error;
pub(crate) mod format;
pub mod freshness;
pub mod from_store;
#[cfg(test)]
mod glance_tests;
pub(crate) mod html;
pub(crate) mod markdown;
pub(crate) mod model;
mod options;
mod outcome;
pub(crate) mod readiness;
#[cfg(test)]
mod render_tests;
pub(crate) mod sealed;
pub(crate) mod status;
pub(crate) mod svg;
pub(crate) mod targets;
#[cfg(test)]
pub(crate) mod testkit;
pub(crate) mod trends;
mod write;

pub(crate) use error::ReportError;
pub use options::DashboardOptions;
pub(crate) use outcome::DashboardOutcome;
pub(crate) use write::parse_now;
pub use write::write_dashboard;
