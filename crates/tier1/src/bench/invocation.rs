//! The files of one command invocation: a fresh temporary directory outside the checkout, the
//! argv with its placeholders filled in (`{output}`: a file in that directory the command
//! writes its result to, read instead of stdout; `{rounds}`, `{warmup}`: the profile's timed
//! rounds and warm-up runs, for a tool's own flags), and reading the result back, bounded.

use std::io::Read;
use std::path::PathBuf;

/// Replaced by the path of the invocation's output file.
pub(crate) const OUTPUT: &str = "{output}";
/// Replaced by the timed rounds per invocation (`TIER1_ITERATIONS`).
pub(crate) const ROUNDS: &str = "{rounds}";
/// Replaced by the warm-up runs per variant (`TIER1_WARMUP`).
pub(crate) const WARMUP: &str = "{warmup}";

/// One invocation's directory and argv.
#[derive(Debug)]
pub(crate) struct Invocation {
    dir: tempfile::TempDir,
    /// The argv with the placeholders replaced.
    pub(crate) argv: Vec<String>,
    /// The argv names `{output}`: the result is that file, not stdout.
    pub(crate) reads_output_file: bool,
}

impl Invocation {
    /// A fresh directory and the filled-in argv of `command`.
    pub(crate) fn prepare(
        command: &[String],
        warmup: u32,
        rounds: u32,
    ) -> Result<Invocation, String> {
        let dir = tempfile::Builder::new()
            .prefix(&crate::fsx::stale::temp_prefix("command"))
            .tempdir()
            .map_err(|e| format!("could not create a temporary directory: {e}"))?;
        let output = dir.path().join("output.json").display().to_string();
        let argv = command
            .iter()
            .map(|a| {
                a.replace(OUTPUT, &output)
                    .replace(ROUNDS, &rounds.to_string())
                    .replace(WARMUP, &warmup.to_string())
            })
            .collect();
        Ok(Invocation {
            dir,
            argv,
            reads_output_file: command.iter().any(|a| a.contains(OUTPUT)),
        })
    }

    /// The directory of the output file.
    pub(crate) fn dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// The `{output}` file (also given as `TIER1_OUTPUT`).
    pub(crate) fn output_file(&self) -> PathBuf {
        self.dir.path().join("output.json")
    }

    /// The `CRITERION_HOME` of a criterion target.
    pub(crate) fn criterion_home(&self) -> PathBuf {
        self.dir.path().join("criterion")
    }

    /// The result document: the `{output}` file (at most `max` bytes) when the argv names it,
    /// else `stdout`.
    pub(crate) fn document(&self, stdout: Vec<u8>, max: u64) -> Result<Vec<u8>, String> {
        if !self.reads_output_file {
            return Ok(stdout);
        }
        let path = self.output_file();
        let file = crate::fsx::open_no_follow(&path, std::fs::OpenOptions::new().read(true))
            .map_err(|e| {
                format!(
                    "the command did not write its {OUTPUT} file {}: {e}",
                    path.display()
                )
            })?;
        let mut buf = Vec::new();
        file.take(max + 1)
            .read_to_end(&mut buf)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if buf.len() as u64 > max {
            return Err(format!("{}: more than {max} bytes", path.display()));
        }
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_in_and_the_file_is_read_back() {
        let cmd: Vec<String> = [
            "tool",
            "--json={output}",
            "--runs",
            "{rounds}",
            "-w{warmup}",
        ]
        .map(String::from)
        .to_vec();
        let inv = Invocation::prepare(&cmd, 5, 12).unwrap();
        let out = inv.output_file().display().to_string();
        assert_eq!(
            inv.argv,
            ["tool", &format!("--json={out}"), "--runs", "12", "-w5"]
        );
        assert!(inv.reads_output_file && inv.dir().is_dir());
        let e = inv.document(b"stdout".to_vec(), 16).unwrap_err();
        assert!(e.contains("did not write its {output} file"), "{e}");
        std::fs::write(inv.output_file(), b"{\"a\": 1}").unwrap();
        assert_eq!(inv.document(Vec::new(), 16).unwrap(), b"{\"a\": 1}");
        assert!(
            inv.document(Vec::new(), 4)
                .unwrap_err()
                .contains("more than 4 bytes")
        );
        let plain = Invocation::prepare(&["tool".to_string()], 5, 6).unwrap();
        assert_eq!(plain.document(b"doc".to_vec(), 16).unwrap(), b"doc");
        let dir = plain.dir();
        drop(plain);
        assert!(!dir.exists(), "the directory goes with the invocation");
    }
}
