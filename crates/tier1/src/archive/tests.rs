//! Tests of deterministic writing and safe extraction.

use super::policy::normalize_member;
use super::*;
use crate::digest::Digest;
use crate::exit::{Classify, Exit};
use std::fs;
use std::io::Write;
use std::path::Path;
use zip::write::SimpleFileOptions;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for (rel, body) in files {
        let p = t.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }
    t
}

fn raw_zip(path: &Path, members: &[(&str, &[u8])]) {
    let f = fs::File::create(path).unwrap();
    let mut zw = zip::ZipWriter::new(f);
    for (name, body) in members {
        zw.start_file(*name, SimpleFileOptions::default()).unwrap();
        zw.write_all(body).unwrap();
    }
    zw.finish().unwrap();
}

#[test]
fn deterministic_and_round_trips() {
    let src = tree(&[("b/x.json", "{}"), ("a.md", "# hi\n"), ("index.json", "[]")]);
    let out = tempfile::tempdir().unwrap();
    let z1 = out.path().join("1.zip");
    let z2 = out.path().join("2.zip");
    let d1 = write_deterministic_zip(src.path(), &z1).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let d2 = write_deterministic_zip(src.path(), &z2).unwrap();
    assert_eq!(d1, d2);
    assert_eq!(fs::read(&z1).unwrap(), fs::read(&z2).unwrap());
    assert_eq!(Digest::of_file(&z1).unwrap(), d1);
    let mut zip = zip::ZipArchive::new(fs::File::open(&z1).unwrap()).unwrap();
    let names: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().unwrap().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["a.md", "b/x.json", "index.json"],
        "sorted entries"
    );
    let e = zip.by_name("a.md").unwrap();
    assert_eq!(e.unix_mode().unwrap() & 0o777, 0o644);
    assert_eq!(e.last_modified().unwrap().year(), 1980);
    drop(e);
    let dest = out.path().join("x");
    let rep = extract_safe(&z1, &dest, &ExtractPolicy::history()).unwrap();
    assert_eq!(rep.files, vec!["a.md", "b/x.json", "index.json"]);
    assert_eq!(fs::read_to_string(dest.join("b/x.json")).unwrap(), "{}");
}

#[test]
fn strips_prefixes_and_refuses_duplicates() {
    let out = tempfile::tempdir().unwrap();
    let z = out.path().join("a.zip");
    raw_zip(&z, &[("code/artifacts/history/tier1/index.json", b"{}")]);
    let dest = out.path().join("d");
    let rep = extract_safe(&z, &dest, &ExtractPolicy::history()).unwrap();
    assert_eq!(rep.files, vec!["index.json"]);
    raw_zip(
        &z,
        &[("history/tier1/index.json", b"{}"), ("index.json", b"{}")],
    );
    let dest2 = out.path().join("d2");
    let err = extract_safe(&z, &dest2, &ExtractPolicy::history()).unwrap_err();
    assert!(err.to_string().contains("duplicate"), "{err}");
    assert!(!dest2.exists());
}

/// Replace every occurrence of `from` with `to` (same length) in the file: names are stored
/// twice (local header and central directory) and are not covered by the CRC.
fn patch(path: &Path, from: &str, to: &str, occurrences: usize) {
    assert_eq!(from.len(), to.len());
    let mut bytes = fs::read(path).unwrap();
    let mut done = 0;
    let mut i = 0;
    while i + from.len() <= bytes.len() && done < occurrences {
        if &bytes[i..i + from.len()] == from.as_bytes() {
            bytes[i..i + from.len()].copy_from_slice(to.as_bytes());
            done += 1;
        }
        i += 1;
    }
    assert_eq!(done, occurrences, "patched {from:?}");
    fs::write(path, bytes).unwrap();
}

#[test]
fn refuses_exact_duplicate_names_from_the_central_directory() {
    let out = tempfile::tempdir().unwrap();
    let z = out.path().join("dup.zip");
    raw_zip(
        &z,
        &[
            ("r1/manifest.json", b"{\"run_id\": \"r1\"}"),
            ("r1/manifesX.json", b"{}"),
        ],
    );
    patch(&z, "r1/manifesX.json", "r1/manifest.json", 2);
    let dest = out.path().join("d");
    let err = extract_safe(&z, &dest, &ExtractPolicy::history()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("\"r1/manifest.json\""), "{msg}");
    assert!(msg.contains("2 times in the central directory"), "{msg}");
    assert_eq!(err.exit(), Exit::Integrity);
    assert!(!dest.exists());
    assert_eq!(
        fs::read_dir(out.path()).unwrap().count(),
        1,
        "nothing staged"
    );
}

#[test]
fn refuses_a_local_header_that_disagrees_with_the_central_directory() {
    let out = tempfile::tempdir().unwrap();
    let z = out.path().join("split.zip");
    raw_zip(
        &z,
        &[("r1/report.md", b"# ok\n"), ("r1/summary.json", b"{}")],
    );
    // Only the local header (the first occurrence) is renamed: a streaming reader would see
    // another file than the central directory promises.
    patch(&z, "r1/report.md", "r1/rePort.md", 1);
    let dest = out.path().join("d");
    let err = extract_safe(&z, &dest, &ExtractPolicy::history()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("local header"), "{msg}");
    assert!(msg.contains(&z.display().to_string()), "{msg}");
    assert_eq!(err.exit(), Exit::Integrity);
    assert!(!dest.exists());
}

#[test]
fn accepts_streamed_members_with_data_descriptors() {
    let out = tempfile::tempdir().unwrap();
    let z = out.path().join("stream.zip");
    let mut zw = zip::ZipWriter::new_stream(fs::File::create(&z).unwrap());
    for (name, body) in [("r1/index.json", &b"{}"[..]), ("r1/a.md", b"# a\n")] {
        zw.start_file(name, SimpleFileOptions::default()).unwrap();
        zw.write_all(body).unwrap();
    }
    zw.finish().unwrap();
    let dest = out.path().join("d");
    let rep = extract_safe(&z, &dest, &ExtractPolicy::history()).unwrap();
    assert_eq!(rep.files, ["r1/a.md", "r1/index.json"]);
}

#[test]
fn refuses_unsafe_names() {
    let p = ExtractPolicy::history();
    for bad in [
        "/etc/x.json",
        "../x.json",
        "a/../../x.json",
        "a b.json",
        "c:/x.json",
    ] {
        assert!(normalize_member(bad, &p).is_err(), "{bad}");
    }
    assert_eq!(
        normalize_member("r1/summary.json", &p).unwrap(),
        "r1/summary.json"
    );
}

#[test]
fn expanded_cap_counts_real_bytes() {
    let out = tempfile::tempdir().unwrap();
    let z = out.path().join("a.zip");
    raw_zip(&z, &[("a.json", &[b'x'; 2000]), ("b.json", &[b'y'; 2000])]);
    let mut p = ExtractPolicy::history();
    p.max_expanded_bytes = 3000;
    let dest = out.path().join("d");
    let err = extract_safe(&z, &dest, &p).unwrap_err();
    assert!(err.to_string().contains("b.json"), "{err}");
    assert!(err.to_string().contains("cap of 3000"), "{err}");
    assert!(!dest.exists());
    assert_eq!(
        fs::read_dir(out.path()).unwrap().count(),
        1,
        "no stray staging dir"
    );
}
