//! Output-root checks: absent or empty, never a symbolic link, never inside or around an input
//! tree (paths compared with every existing prefix resolved).

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

/// True when `dir` does not exist or is an empty directory.
pub fn is_absent_or_empty(dir: &Path) -> io::Result<bool> {
    match fs::read_dir(dir) {
        Ok(mut it) => Ok(it.next().is_none()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(e),
    }
}

/// Why an output root cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputRootError {
    /// The output root is a symbolic link (dangling or not): the write could land elsewhere.
    #[error(
        "output root {path} is a symbolic link: expected a path that does not exist or an empty directory"
    )]
    Symlink {
        /// The output root.
        path: String,
    },
    /// Something other than a directory is there.
    #[error(
        "output root {path} is not a directory: expected a path that does not exist or an empty directory, found a {found}"
    )]
    NotDirectory {
        /// The output root.
        path: String,
        /// What is there (`file`, `special file`).
        found: &'static str,
    },
    /// The directory holds data.
    #[error("output root {path} exists and is not empty")]
    NotEmpty {
        /// The output root.
        path: String,
    },
    /// The output root lies inside (or is) an input tree.
    #[error(
        "output root {path} lies inside the {input} {input_path}: expected a path outside every input tree"
    )]
    InsideInput {
        /// The output root.
        path: String,
        /// Which input (`candidate history root`, ...).
        input: String,
        /// The input's path.
        input_path: String,
    },
    /// The output root holds (or is above) an input tree: replacing or filling it could destroy
    /// that input.
    #[error(
        "output root {path} contains the {input} {input_path}: expected a path outside every input tree"
    )]
    ContainsInput {
        /// The output root.
        path: String,
        /// Which input.
        input: String,
        /// The input's path.
        input_path: String,
    },
    /// The path could not be inspected.
    #[error("output root {path}: {source}")]
    Io {
        /// The path that failed.
        path: String,
        /// The cause.
        source: io::Error,
    },
}

impl crate::exit::Classify for OutputRootError {
    fn exit(&self) -> crate::exit::Exit {
        use crate::exit::Exit;
        match self {
            OutputRootError::Symlink { .. }
            | OutputRootError::NotDirectory { .. }
            | OutputRootError::NotEmpty { .. } => Exit::Conflict,
            OutputRootError::InsideInput { .. } | OutputRootError::ContainsInput { .. } => {
                Exit::Invalid
            }
            OutputRootError::Io { source, .. } => crate::exit::of_io(source),
        }
    }
}

/// `p` made absolute with every existing prefix resolved through the filesystem (symbolic links,
/// `..`) and the non-existent rest normalised lexically (it holds no links).
pub(crate) fn resolve_path(p: &Path) -> io::Result<PathBuf> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()?.join(p)
    };
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    let mut base = loop {
        match (fs::canonicalize(existing), existing.parent()) {
            (Ok(c), _) => break c,
            (Err(_), Some(parent)) => {
                rest.extend(existing.components().next_back());
                existing = parent;
            }
            (Err(e), None) => return Err(e),
        }
    };
    for c in rest.into_iter().rev() {
        match c {
            Component::ParentDir => {
                base.pop();
            }
            Component::Normal(n) => base.push(n),
            _ => {}
        }
    }
    Ok(base)
}

/// Check an output root before anything is read or written: it must not be a symbolic link, must
/// be absent or an empty directory, and must neither lie inside nor contain any of `inputs`
/// (`(name, path)`, compared once every existing prefix is resolved).
pub(crate) fn check_output_root(
    out: &Path,
    inputs: &[(&str, &Path)],
) -> Result<(), OutputRootError> {
    let path = out.display().to_string();
    let io_at = |p: &Path| {
        let path = p.display().to_string();
        move |source| OutputRootError::Io { path, source }
    };
    match fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => return Err(OutputRootError::Symlink { path }),
        Ok(m) if !m.is_dir() => {
            let found = if m.is_file() { "file" } else { "special file" };
            return Err(OutputRootError::NotDirectory { path, found });
        }
        Ok(_) => {
            if !is_absent_or_empty(out).map_err(io_at(out))? {
                return Err(OutputRootError::NotEmpty { path });
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_at(out)(e)),
    }
    check_disjoint(out, inputs)
}

/// Refuse an output `out` that is, lies inside or contains one of `inputs` (`(name, path)`),
/// comparing paths with every existing prefix resolved (symbolic links, `..`).
pub(crate) fn check_disjoint(out: &Path, inputs: &[(&str, &Path)]) -> Result<(), OutputRootError> {
    let path = out.display().to_string();
    let io_at = |p: &Path| {
        let path = p.display().to_string();
        move |source| OutputRootError::Io { path, source }
    };
    let resolved = resolve_path(out).map_err(io_at(out))?;
    for (name, input) in inputs {
        let root = resolve_path(input).map_err(io_at(input))?;
        let (input, input_path) = ((*name).to_string(), input.display().to_string());
        if resolved.starts_with(&root) {
            return Err(OutputRootError::InsideInput {
                path,
                input,
                input_path,
            });
        }
        if root.starts_with(&resolved) {
            return Err(OutputRootError::ContainsInput {
                path,
                input,
                input_path,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_roots_are_absent_or_empty_real_directories_outside_the_inputs() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        let input = w.join("cand");
        fs::create_dir_all(input.join("r1")).unwrap();
        fs::write(input.join("r1/summary.json"), b"{}").unwrap();
        let inputs = [("candidate history root", input.as_path())];
        check_output_root(&w.join("out"), &inputs).unwrap();
        fs::create_dir(w.join("empty")).unwrap();
        check_output_root(&w.join("empty"), &inputs).unwrap();
        let msg = |p: &Path| check_output_root(p, &inputs).unwrap_err().to_string();
        assert!(msg(&input).contains("is not empty"));
        fs::write(w.join("file"), b"x").unwrap();
        assert!(msg(&w.join("file")).contains("is not a directory"));
        std::os::unix::fs::symlink(w.join("empty"), w.join("link")).unwrap();
        std::os::unix::fs::symlink(w.join("gone"), w.join("dangling")).unwrap();
        for l in ["link", "dangling"] {
            assert!(msg(&w.join(l)).contains("is a symbolic link"), "{l}");
        }
        for inside in [
            "cand/new",
            "cand/r1/new/deeper",
            "empty/../cand/x",
            "link/../cand/y",
        ] {
            let m = msg(&w.join(inside));
            assert!(
                m.contains("lies inside the candidate history root"),
                "{inside}: {m}"
            );
        }
        assert!(matches!(
            check_output_root(&w.join("cand/new"), &inputs),
            Err(e) if crate::exit::Classify::exit(&e) == crate::exit::Exit::Invalid
        ));
        std::os::unix::fs::symlink(&input, w.join("alias")).unwrap();
        assert!(msg(&w.join("alias/new")).contains("lies inside"));
        check_output_root(&w.join("candidate-sibling"), &inputs).unwrap();
        // An output above an input (absent or empty today, a parent of the input tomorrow).
        let deep = [("store", w.join("out2/store"))];
        let deep: Vec<(&str, &Path)> = deep.iter().map(|(n, p)| (*n, p.as_path())).collect();
        let e = check_output_root(&w.join("out2"), &deep).unwrap_err();
        assert!(e.to_string().contains("contains the store"), "{e}");
        assert_eq!(crate::exit::Classify::exit(&e), crate::exit::Exit::Invalid);
    }
}
