//! Hostile zip archives the zip crate refuses to write: a member name listed twice (written under a
//! placeholder name of the same length, then renamed in both the local header and the central
//! directory, which the CRC does not cover).
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;

/// Zip every file under `dir` (sorted), then add `dup_name` again with `dup_body` as the last member.
pub fn zip_with_duplicate(dir: &Path, out: &Path, dup_name: &str, dup_body: &[u8]) {
    let placeholder: String = dup_name
        .chars()
        .enumerate()
        .map(|(i, c)| if i + 1 == dup_name.len() { '~' } else { c })
        .collect();
    let f = std::fs::File::create(out).expect("create zip");
    let mut zw = zip::ZipWriter::new(f);
    let opts = zip::write::SimpleFileOptions::default();
    for rel in tier1::fsx::list_files(dir).expect("list") {
        zw.start_file(rel.as_str(), opts).expect("start");
        zw.write_all(&std::fs::read(dir.join(&rel)).expect("read"))
            .expect("write");
    }
    zw.start_file(placeholder.as_str(), opts).expect("start");
    zw.write_all(dup_body).expect("write");
    zw.finish().expect("finish");
    rename_member(out, &placeholder, dup_name);
}

/// Rename member `from` to `to` (same length) in its local header and central directory entry.
pub fn rename_member(zip: &Path, from: &str, to: &str) {
    assert_eq!(from.len(), to.len(), "names must have the same length");
    let mut bytes = std::fs::read(zip).expect("read zip");
    let mut hits = 0;
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        if &bytes[i..i + from.len()] == from.as_bytes() {
            bytes[i..i + from.len()].copy_from_slice(to.as_bytes());
            hits += 1;
            i += from.len();
        } else {
            i += 1;
        }
    }
    assert_eq!(
        hits, 2,
        "{from:?} appears in one local header and one central entry"
    );
    std::fs::write(zip, bytes).expect("write zip");
}
