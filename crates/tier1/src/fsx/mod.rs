//! Filesystem discipline: atomic file writes, staged output trees renamed into place, output-root
//! checks (absent or empty, never a symbolic link, never inside or around an input tree), files
//! opened without following symbolic links, and the safe-name rules for run ids and relative paths.
//! One file per concern: [`names`], [`atomic`] writes, [`no_follow`] opens, [`output_root`]
//! checks, [`staged`] directories, [`tree`] copies. Temporary names and their collection after a
//! crash live in [`stale`]; the test-only fault injection every write and rename point reports to
//! lives in [`fault`].

pub mod atomic;
pub mod fault;
pub mod names;
pub mod no_follow;
pub mod output_root;
pub mod staged;
pub mod stale;
pub mod tree;

pub use atomic::{overwrite_staged, overwrite_staged_if_changed, write_atomic, write_if_changed};
pub use names::{is_safe_component, is_safe_run_id, join_safe, safe_relative_parts};
pub use no_follow::{open_no_follow, read_no_follow, real_dir, symlink_refused};
pub use output_root::{
    OutputRootError, check_disjoint, check_output_root, is_absent_or_empty, resolve_path,
};
pub use staged::StagedDir;
pub use tree::{copy_tree, link_tree, list_files};
