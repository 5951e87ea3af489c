//! A hostile segment costs bounded memory: whoever can write an artifact or an export can swap a
//! sealed segment and relink its record without breaking the chain, so a segment padded after its
//! end-of-archive marker with gigabytes of zeros (a few megabytes compressed) is refused, with
//! exit 4 and the padding named, by `tier1-restore --from-export` and by `tier1-export`, each
//! started with its address space capped at 1 GiB (the cap measures memory; nothing is timed).
//! The same binaries restore and export the untouched history under the same cap.

use crate::history_compaction::Long;
use crate::history_export::{exported, forge};
use crate::history_support::Ran;
use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::segment_forge;
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::Path;

/// The address space each binary gets (KiB): 1 GiB.
const CAP: &str = "ulimit -v 1048576";
/// Zeros appended to the segment's tar stream: twice the cap.
const PADDING: u64 = 2 << 30;

fn capped(bin: &str, args: &[&str]) -> Ran {
    let out = command::limited(command::bin(bin), CAP)
        .args(args)
        .env("TIER1_LOG", "warn")
        .output()
        .expect("bash runs");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The newest segment of the history at `root` padded with [`PADDING`] zeros after its end marker,
/// its record's digest and size updated and the chain relinked from it (the record's own link and
/// every live row after it, as `schema_version` 3 chains them), as an attacker who can write the
/// package would: the chain holds, only the archive's padding is left to refuse.
fn pad_newest_segment(root: &Path) {
    let idx_path = root.join("index.json");
    let mut idx: Value = serde_json::from_slice(&std::fs::read(&idx_path).unwrap()).unwrap();
    let last = idx["segments"].as_array().unwrap().len() - 1;
    let rel = idx["segments"][last]["path"].as_str().unwrap().to_string();
    let seg = root.join(&rel);
    let mut tar = Vec::new();
    GzDecoder::new(&std::fs::read(&seg).unwrap()[..])
        .read_to_end(&mut tar)
        .unwrap();
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(&tar).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..PADDING / zeros.len() as u64 {
        gz.write_all(&zeros).unwrap();
    }
    let padded = gz.finish().unwrap();
    assert!(padded.len() < 64 << 20, "{} bytes", padded.len());
    std::fs::remove_file(&seg).unwrap();
    std::fs::write(&seg, &padded).unwrap();
    // The chain's order, read from the untouched links, then every item from the padded record
    // on relinked.
    let order = segment_forge::chain_order(&idx);
    let at = order.iter().position(|&o| o == (true, last)).unwrap();
    let record = &mut idx["segments"][last];
    record["digest"] = Value::from(tier1::digest::Digest::of_bytes(&padded).to_string());
    record["bytes"] = Value::from(padded.len() as u64);
    segment_forge::relink_from(&mut idx, &order, at);
    std::fs::remove_file(&idx_path).unwrap();
    std::fs::write(&idx_path, serde_json::to_vec_pretty(&idx).unwrap()).unwrap();
}

fn refused_in_bounded_memory(r: &Ran, what: &str) {
    assert_eq!(r.code, exit_code(Exit::Integrity), "{what}: {}", r.stderr);
    assert!(
        r.stderr
            .contains("bytes after the end-of-archive marker (expected at most the zero blocks"),
        "{what}: {}",
        r.stderr
    );
    assert!(r.stdout.trim().is_empty(), "{what}: {}", r.stdout);
}

#[test]
fn a_segment_padded_with_gigabytes_of_zeros_is_refused_in_bounded_memory() {
    let l = Long::new(400);
    let (out, file, digest) = exported(&l);
    let t = l.env.tmp.path();
    // Under the cap, the untouched export restores and the history exports.
    let dest = t.join("restored");
    let args = |f: &Path, d: &Path, sha: &str| {
        [
            "--from-export".to_string(),
            f.display().to_string(),
            "--destination".into(),
            d.display().to_string(),
            "--sha256".into(),
            sha.to_string(),
        ]
    };
    let a = args(&file, &dest, &digest);
    let r = capped(
        "tier1-restore",
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    let again = t.join("again.zip");
    let r = capped(
        "tier1-export",
        &[
            "--history-root",
            &out.display().to_string(),
            "--output",
            &again.display().to_string(),
        ],
    );
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);

    // An export whose segment was padded and relinked: refused, the destination left absent.
    let padded = forge(&out, t, "padded", pad_newest_segment);
    let d = tier1::digest::Digest::of_file(&padded).unwrap().to_string();
    let dest = t.join("from-padded");
    let a = args(&padded, &dest, &d);
    let r = capped(
        "tier1-restore",
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    refused_in_bounded_memory(&r, "tier1-restore --from-export");
    assert!(!dest.exists());

    // A history root holding the padded segment: tier1-export refuses it and writes nothing.
    let root = t.join("padded-root");
    tier1::fsx::copy_tree(&out, &root).unwrap();
    pad_newest_segment(&root);
    let before = crate::support::faults::snapshot(&root);
    let target = t.join("exports/padded.zip");
    let r = capped(
        "tier1-export",
        &[
            "--history-root",
            &root.display().to_string(),
            "--output",
            &target.display().to_string(),
        ],
    );
    refused_in_bounded_memory(&r, "tier1-export");
    assert!(!target.exists() && !t.join("exports/padded.zip.sha256").exists());
    crate::support::faults::assert_unchanged(&before, &root, "the history root");
}
