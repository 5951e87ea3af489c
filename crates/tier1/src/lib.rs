//! tier1: the core library of a canonical, tamper-evident tier-1 GPU benchmark release gate.
//! Binaries under `bins/` are thin: parse arguments, call one function here, map to an exit code.

pub mod aggregate;
pub mod archive;
pub mod artifacts;
pub mod bench;
pub mod cli;
pub mod digest;
pub mod evidence;
pub mod exit;
pub mod fsx;
pub mod gate;
pub mod gha;
pub mod github;
pub mod gpu;
pub mod history;
pub mod history_check;
pub mod json;
pub mod nightly;
pub mod preview;
pub mod process;
pub mod promote;
pub mod publish;
pub mod recheck;
pub mod regress;
pub mod regress_md;
pub mod report;
pub mod restore;
pub mod run;
pub mod runner;
pub mod stats;
pub mod store;
pub mod suite;
pub mod text;

pub use exit::{Classify, Exit};
