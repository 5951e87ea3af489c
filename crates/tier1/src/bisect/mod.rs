//! `tier1-bisect`: the first commit between a good and a bad commit whose side-by-side comparison
//! with the good commit shows the change, in about log2(N) builds, skipping commits that cannot
//! be built, run or decided (after a second, longer measurement) as `git bisect skip` does
//! (`search`); the request (`request`), the run, its report and its evidence (`run`, `report`),
//! the range it searches (`range`), each step's measurement (`step`) and what a step's
//! comparison decides (`decide`). History is only read: no ref, branch or checkout changes.

pub(crate) mod decide;
pub(crate) mod range;
pub(crate) mod report;
pub(crate) mod request;
pub(crate) mod run;
pub(crate) mod search;
pub(crate) mod step;

pub use report::{BisectReport, BisectStatus};
pub use request::{BisectError, BisectRequest};
pub use run::bisect;
pub use search::Mark;
