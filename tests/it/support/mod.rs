//! Helpers shared by the integration tests, one module each (declared once, here).
#![allow(dead_code)]

pub mod class_history;
pub mod command;
pub mod dashboard_history;
pub mod exit_code;
pub mod fake_github;
pub mod faults;
pub mod git_http;
pub mod hostile_zip;
pub mod http_wire;
pub mod nightly_repo;
pub mod nvrtc_wheel;
pub mod repo_files;
pub mod segment_forge;
pub mod sharded_repo;
pub mod skip;
pub mod synthetic_history;
pub mod workflow_adapters;
pub mod workflow_checkout;
pub mod workflow_harness;
pub mod workflow_release;
