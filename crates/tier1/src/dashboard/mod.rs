//! Reports a person reads: the dashboard (one self-contained HTML page with inline CSS and SVG) and
//! the Markdown summary for `$GITHUB_STEP_SUMMARY`, both built from one [`model::Dashboard`].

pub mod axis;
pub mod changes;
pub mod declines;
mod error;
pub mod format;
pub mod freshness;
pub mod from_store;
#[cfg(test)]
mod glance_tests;
pub mod html;
pub mod markdown;
pub mod model;
mod options;
mod outcome;
pub mod readiness;
#[cfg(test)]
mod render_tests;
pub mod sealed;
pub mod status;
pub mod svg;
pub mod targets;
#[cfg(test)]
pub(crate) mod testkit;
pub mod trends;
mod write;

pub use error::ReportError;
pub use options::DashboardOptions;
pub use outcome::DashboardOutcome;
pub use write::{HTML_FILE, MARKDOWN_FILE, parse_now, write_dashboard};
