//! Which suite file a binary uses, one rule for all of them (docs/suite.md, "Which suite file"):
//! the file named by `--suite-config` / `TIER1_SUITE_CONFIG`; else, where a history exists, the
//! suite its `index.json` records, looked up by name under `configs/benchmark_suites/` (or the
//! embedded tier1 suite when that is the one recorded); else the only suite file under
//! `configs/benchmark_suites/`; else the embedded tier1 suite. A history naming a suite that cannot
//! be found is refused, never silently replaced by another suite.

use super::{Suite, SuiteError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where suite files are looked for, relative to the repository root.
pub(crate) const SUITE_DIR: &str = "configs/benchmark_suites";

/// A suite's identity as a history records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SuiteId {
    /// `suite_name`.
    #[serde(rename = "suite_name")]
    pub(crate) name: String,
    /// `suite_version`.
    #[serde(rename = "suite_version")]
    pub(crate) version: u32,
}

impl std::fmt::Display for SuiteId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/v{}", self.name, self.version)
    }
}

/// How the suite was chosen (printed in the binaries' JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "chosen_by", rename_all = "snake_case")]
pub enum SuiteSource {
    /// `--suite-config` / `TIER1_SUITE_CONFIG`.
    Given {
        /// The file.
        path: PathBuf,
    },
    /// The file under `configs/benchmark_suites/` whose `suite_name` the history records.
    Recorded {
        /// The file.
        path: PathBuf,
    },
    /// The only file under `configs/benchmark_suites/` (no history yet).
    Only {
        /// The file.
        path: PathBuf,
    },
    /// The suite embedded in tier1.
    Embedded,
}

/// A suite and how it was chosen.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The suite.
    pub suite: Suite,
    /// Where it came from.
    pub(crate) source: SuiteSource,
}

/// The suite identity `<history>/index.json` records, None when it has no index.
pub(crate) fn recorded_identity(history: &Path) -> Result<Option<SuiteId>, SuiteError> {
    let index = history.join("index.json");
    if !index.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&index).map_err(|source| SuiteError::Io {
        path: index.display().to_string(),
        source,
    })?;
    serde_json::from_str::<SuiteId>(&text)
        .map(Some)
        .map_err(|e| SuiteError::Parse {
            path: index.display().to_string(),
            message: format!("suite_name and suite_version: {e}"),
        })
}

fn choice(message: String) -> SuiteError {
    SuiteError::Choice { message }
}

/// The suite files under `<repo_root>/configs/benchmark_suites/`, sorted, each parsed.
fn suite_files(repo_root: &Path) -> Result<Vec<(PathBuf, Suite)>, SuiteError> {
    let dir = repo_root.join(SUITE_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(SuiteError::Io {
                path: dir.display().to_string(),
                source,
            });
        }
    };
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| SuiteError::Io {
            path: dir.display().to_string(),
            source,
        })?;
        let path = entry.path();
        let yaml = path.extension().is_some_and(|x| x == "yaml" || x == "yml");
        if yaml && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| Suite::load(&p).map(|s| (p, s)))
        .collect()
}

fn names(files: &[(PathBuf, Suite)]) -> String {
    files
        .iter()
        .map(|(p, s)| format!("{} ({})", p.display(), s.suite_name))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Suite {
    /// Every suite [`Suite::discover`] could choose before the history is known: the `explicit`
    /// file alone, else every file under `configs/benchmark_suites/` and the embedded suite.
    pub(crate) fn candidates(
        explicit: Option<&Path>,
        repo_root: &Path,
    ) -> Result<Vec<Suite>, SuiteError> {
        if let Some(path) = explicit.filter(|p| !p.as_os_str().is_empty()) {
            return Ok(vec![Suite::load(path)?]);
        }
        let mut all: Vec<Suite> = suite_files(repo_root)?
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        all.push(Suite::embedded());
        Ok(all)
    }

    /// Choose and load the suite by the rule in the module docs. `explicit` is the flag's value
    /// (an empty path counts as absent); `repo_root` holds `configs/benchmark_suites/`;
    /// `history` is the history root the binary reads, if any.
    pub fn discover(
        explicit: Option<&Path>,
        repo_root: &Path,
        history: Option<&Path>,
    ) -> Result<Discovered, SuiteError> {
        let recorded = match history {
            Some(h) => recorded_identity(h)?.map(|id| (h, id)),
            None => None,
        };
        if let Some(path) = explicit.filter(|p| !p.as_os_str().is_empty()) {
            let suite = Suite::load(path)?;
            if let Some((h, id)) = &recorded
                && id.name != suite.suite_name
            {
                return Err(choice(format!(
                    "{} defines suite {:?}, but the history {} records suite {:?}: pass the suite file of {:?}",
                    path.display(),
                    suite.suite_name,
                    h.join("index.json").display(),
                    id.name,
                    id.name
                )));
            }
            return Ok(Discovered {
                suite,
                source: SuiteSource::Given {
                    path: path.to_path_buf(),
                },
            });
        }
        let files = suite_files(repo_root)?;
        if let Some((h, id)) = recorded {
            let mut matching: Vec<(PathBuf, Suite)> = files
                .into_iter()
                .filter(|(_, s)| s.suite_name == id.name)
                .collect();
            return match matching.len() {
                1 => {
                    let (path, suite) = matching.remove(0);
                    Ok(Discovered {
                        suite,
                        source: SuiteSource::Recorded { path },
                    })
                }
                0 if Suite::embedded().suite_name == id.name => Ok(Discovered {
                    suite: Suite::embedded(),
                    source: SuiteSource::Embedded,
                }),
                0 => Err(choice(format!(
                    "the history {} records suite {id}, and no file under {} defines suite {:?}: pass its file with --suite-config (TIER1_SUITE_CONFIG)",
                    h.join("index.json").display(),
                    repo_root.join(SUITE_DIR).display(),
                    id.name
                ))),
                _ => Err(choice(format!(
                    "the history {} records suite {id}, and several files define it: {}; pass one with --suite-config (TIER1_SUITE_CONFIG)",
                    h.join("index.json").display(),
                    names(&matching)
                ))),
            };
        }
        match files.len() {
            0 => {
                tracing::warn!(
                    "no --suite-config and no suite file under {}: running the embedded tier1 suite",
                    repo_root.join(SUITE_DIR).display()
                );
                Ok(Discovered {
                    suite: Suite::embedded(),
                    source: SuiteSource::Embedded,
                })
            }
            1 => {
                let (path, suite) = files.into_iter().next().expect("one file");
                Ok(Discovered {
                    suite,
                    source: SuiteSource::Only { path },
                })
            }
            _ => Err(choice(format!(
                "no history yet and several suite files under {}: {}; pass one with --suite-config (TIER1_SUITE_CONFIG)",
                repo_root.join(SUITE_DIR).display(),
                names(&files)
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACME: &str = "suite_name: acme\nversion: 2\ntargets:\n  - key: a\n    category: gemm\n    target: acme:a\n    tolerance: { rtol: 0.0, atol: 0.0 }\n    kind: command\n    command: [python3, a.py]\n";

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let p = t.path().join(SUITE_DIR).join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        t
    }

    fn history(root: &Path, name: &str, version: u32) -> PathBuf {
        let h = root.join("history");
        std::fs::create_dir_all(&h).unwrap();
        std::fs::write(
            h.join("index.json"),
            format!(r#"{{"suite_name": "{name}", "suite_version": {version}, "runs": []}}"#),
        )
        .unwrap();
        h
    }

    #[test]
    fn the_only_suite_file_is_used_before_any_history() {
        let r = repo(&[("acme.yaml", ACME)]);
        let d = Suite::discover(None, r.path(), Some(&r.path().join("none"))).unwrap();
        assert_eq!(d.suite.suite_name, "acme");
        assert!(matches!(d.source, SuiteSource::Only { .. }));
    }

    #[test]
    fn the_suite_the_history_records_is_found_by_name_in_any_file() {
        let other = crate::suite::EMBEDDED_TIER1_YAML;
        let r = repo(&[("tier1.yaml", other), ("bench.yml", ACME)]);
        let h = history(r.path(), "acme", 2);
        let d = Suite::discover(None, r.path(), Some(&h)).unwrap();
        assert_eq!(d.suite.suite_name, "acme");
        assert_eq!(
            d.source,
            SuiteSource::Recorded {
                path: r.path().join(SUITE_DIR).join("bench.yml")
            }
        );
    }

    #[test]
    fn a_history_naming_a_suite_that_is_not_there_is_refused() {
        let r = repo(&[]);
        let h = history(r.path(), "acme", 2);
        let e = Suite::discover(None, r.path(), Some(&h)).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("records suite acme/v2") && m.contains("--suite-config"),
            "{m}"
        );
        assert_eq!(crate::exit::Classify::exit(&e), crate::exit::Exit::Invalid);
    }

    #[test]
    fn the_embedded_suite_serves_a_history_of_the_tier1_suite() {
        let r = repo(&[]);
        let h = history(r.path(), "tier1", 1);
        let d = Suite::discover(None, r.path(), Some(&h)).unwrap();
        assert_eq!(d.source, SuiteSource::Embedded);
        let d = Suite::discover(None, r.path(), None).unwrap();
        assert_eq!(d.source, SuiteSource::Embedded);
    }

    #[test]
    fn several_files_without_a_history_are_refused_by_name() {
        let r = repo(&[("a.yaml", ACME), ("b.yaml", &ACME.replace("acme", "beta"))]);
        let m = Suite::discover(None, r.path(), None)
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("a.yaml (acme)") && m.contains("b.yaml (beta)"),
            "{m}"
        );
    }

    #[test]
    fn a_given_file_wins_but_not_against_the_history_s_suite_name() {
        let r = repo(&[("tier1.yaml", crate::suite::EMBEDDED_TIER1_YAML)]);
        let given = r.path().join("elsewhere.yaml");
        std::fs::write(&given, ACME).unwrap();
        let d = Suite::discover(Some(&given), r.path(), None).unwrap();
        assert_eq!(d.suite.suite_name, "acme");
        let empty = PathBuf::new();
        let d = Suite::discover(Some(&empty), r.path(), None).unwrap();
        assert_eq!(
            d.suite.suite_name, "tier1",
            "an empty value counts as absent"
        );
        let h = history(r.path(), "tier1", 1);
        let m = Suite::discover(Some(&given), r.path(), Some(&h))
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("defines suite \"acme\"") && m.contains("records suite \"tier1\""),
            "{m}"
        );
    }
}
