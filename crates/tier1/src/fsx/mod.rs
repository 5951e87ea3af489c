//! Filesystem discipline: atomic file writes, staged output trees renamed into place, output-root
//! checks (absent or empty, never a symbolic link, never inside or around an input tree), files
//! opened without following symbolic links, and the safe-name rules for run ids and relative paths.
//! One file per concern: `names`, `atomic` writes, `no_follow` opens, `output_root`
//! checks, `staged` directories, `tree` copies. Temporary names and their collection after a
//! crash live in [`stale`]; the test-only fault injection every write and rename point reports to
//! lives in `fault`.

pub(crate) mod atomic;
pub(crate) mod fault;
pub(crate) mod names;
pub(crate) mod no_follow;
pub(crate) mod output_root;
pub(crate) mod staged;
pub mod stale;
pub(crate) mod tree;

pub(crate) use atomic::{
    overwrite_staged, overwrite_staged_if_changed, write_atomic, write_if_changed,
};
pub(crate) use names::{is_safe_component, is_safe_run_id, join_safe, safe_relative_parts};
pub(crate) use no_follow::{open_no_follow, read_no_follow, read_no_follow_at_most, real_dir};
pub use output_root::is_absent_or_empty;
pub(crate) use output_root::{OutputRootError, check_disjoint, check_output_root, resolve_path};
pub(crate) use staged::StagedDir;
pub use tree::{copy_tree, link_tree, list_files};
