//! The two Actions runner protocols the GitHub backend speaks: `::add-mask::` (on stderr, which the
//! runner scans like stdout, so stdout stays pure JSON) and `$GITHUB_OUTPUT` step outputs.

use std::io::{self, Write};
use std::path::Path;

/// Ask the runner to mask `secret` in the job log.
pub fn add_mask(secret: &str) {
    if !secret.is_empty() && !secret.contains(['\r', '\n']) {
        eprintln!("::add-mask::{secret}");
    }
}

/// Append `name=value` lines to the `$GITHUB_OUTPUT` file at `path` in one write. Names and values
/// must be single-line (the heredoc form is not needed for tier1's outputs).
pub fn append_outputs(path: &Path, pairs: &[(&str, String)]) -> io::Result<()> {
    let mut text = String::new();
    for (name, value) in pairs {
        if name.is_empty() || name.contains(['=', '\r', '\n']) || value.contains(['\r', '\n']) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("step output {name:?} must be a single-line name=value pair"),
            ));
        }
        text.push_str(&format!("{name}={value}\n"));
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    f.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_append_and_refuse_newlines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        std::fs::write(&p, "a=1\n").unwrap();
        append_outputs(&p, &[("b", "2".into()), ("c", "x y".into())]).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a=1\nb=2\nc=x y\n");
        assert!(append_outputs(&p, &[("d", "x\ny".into())]).is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a=1\nb=2\nc=x y\n");
    }
}
