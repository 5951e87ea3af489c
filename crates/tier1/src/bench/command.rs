//! Command targets (`kind: command`): run the argv, parse the documented JSON result and validate
//! it like a built-in result.

use crate::bench::backend::Shapes;
use crate::bench::harness::{HarnessOptions, Timing, empty_result};
use crate::bench::result::{TargetFailure, TargetResult, status};
use crate::suite::Target;

/// Run a command target.
pub fn run(t: &Target, shapes: &Shapes, opts: &HarnessOptions, timing: Timing) -> TargetResult {
    let _ = (opts, timing);
    let mut r = empty_result(t, shapes);
    r.failure = Some(TargetFailure {
        status: status::FAILED_ERROR.into(),
        message: "command targets are not implemented yet".into(),
    });
    r
}
