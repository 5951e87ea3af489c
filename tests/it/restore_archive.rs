//! tier1-restore refuses hostile or corrupted history artifacts (digest, zip slip, absolute path,
//! symlink, caps, duplicates, member types) and tampered indexes, fatally, installing nothing.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::hostile_zip;

use crate::restore_support::*;
use chrono::Duration;
use std::io::Write;
use tier1::store::local::NewRun;

/// A successful run whose history artifact is the raw zip `members`; returns the restore output.
fn restore_raw(members: &[(&str, &[u8])]) -> (Env, std::process::Output) {
    let env = Env::new();
    let zip = env.raw_zip("hostile.zip", members);
    env.raw_nightly("success", &zip);
    let o = env.restore(
        t0() + Duration::days(1),
        &env.dest(),
        &["--allow-bootstrap"],
    );
    (env, o)
}

fn refused(members: &[(&str, &[u8])], fragment: &str) {
    let (env, o) = restore_raw(members);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "failed integrity validation",
        &env.dest(),
    );
    assert_stderr_has(&o, fragment);
}

#[test]
fn digest_mismatch_is_fatal() {
    let env = Env::new();
    env.good_nightly(t0(), 1);
    let p = env.good_nightly(t0() + Duration::hours(1), 1);
    let store = env.store_at(t0());
    let path = store.artifact_path(p.history.as_ref().unwrap().id);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &["--allow-bootstrap"]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "Tier-1 history artifact digest mismatch",
        &dest,
    );
    assert!(stderr(&o).contains(&format!("expected {}", p.history.unwrap().digest.unwrap())));
}

#[test]
fn missing_digest_metadata_is_fatal() {
    let env = Env::new();
    let p = env.good_nightly(t0(), 1);
    env.edit_artifact(p.history.as_ref().unwrap().id, |a| {
        a.digest = Some("sha256:abc".into())
    });
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &[]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "no valid SHA-256 digest metadata",
        &dest,
    );
}

#[test]
fn zip_slip_is_fatal() {
    refused(
        &[("index.json", b"{}"), ("../escape.json", b"{}")],
        "\"../escape.json\": path escapes the destination",
    );
}

#[test]
fn absolute_path_is_fatal() {
    refused(
        &[("/etc/x.json", b"{}")],
        "\"/etc/x.json\": absolute or non-portable path refused",
    );
}

#[test]
fn unsafe_component_is_fatal() {
    refused(&[("run 1/summary.json", b"{}")], "unsafe path component");
}

#[test]
fn symlink_member_is_fatal() {
    let env = Env::new();
    let p = env.tmp.path().join("sym.zip");
    let mut zw = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
    let opts = zip::write::SimpleFileOptions::default();
    zw.start_file("index.json", opts).unwrap();
    zw.write_all(b"{}").unwrap();
    zw.add_symlink("link.json", "/etc/passwd", opts).unwrap();
    zw.finish().unwrap();
    env.raw_nightly("success", &p);
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &[]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "\"link.json\": symbolic links are refused",
        &dest,
    );
}

#[test]
fn duplicate_path_after_prefix_stripping_is_fatal() {
    refused(
        &[
            ("index.json", b"{}"),
            ("artifacts/history/tier1/index.json", b"{}"),
        ],
        "duplicate path \"index.json\" after prefix stripping",
    );
}

#[test]
fn exact_duplicate_member_names_are_fatal_before_anything_is_read() {
    let env = Env::new();
    let dir = env.tmp.path().join("valid-history");
    write_history(&dir, 2, &anchor("tier1-evidence-1-1"));
    let zip = env.tmp.path().join("dup.zip");
    // The later `index.json` is the one a reader keeps: `{}` would fail validation afterwards.
    hostile_zip::zip_with_duplicate(&dir, &zip, "index.json", b"{}");
    env.raw_nightly("success", &zip);
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &["--allow-bootstrap"]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "failed integrity validation",
        &dest,
    );
    assert_stderr_has(
        &o,
        "archive member \"index.json\": appears 2 times in the central directory",
    );
}

#[test]
fn non_json_member_is_fatal() {
    refused(
        &[("index.json", b"{}"), ("run/notes.txt", b"x")],
        "\"run/notes.txt\": file type refused",
    );
}

#[test]
fn too_many_members_is_fatal() {
    let names: Vec<String> = (0..10_001).map(|i| format!("r/{i}.json")).collect();
    let members: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"{}"[..])).collect();
    refused(&members, "has 10001 members, over the cap of 10000");
}

#[test]
fn oversize_expanded_is_fatal() {
    let big = vec![b' '; 64 * 1024 * 1024 + 1];
    refused(
        &[("index.json", &big)],
        "\"index.json\": expanded size exceeds the cap of 67108864 bytes",
    );
}

#[test]
fn oversize_archive_is_fatal() {
    let env = Env::new();
    let p = env.tmp.path().join("huge.zip");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(128 * 1024 * 1024 + 1).unwrap();
    drop(f);
    env.raw_nightly("success", &p);
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &["--allow-bootstrap"]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "download exceeds the cap of 134217728 bytes",
        &dest,
    );
}

#[test]
fn not_a_zip_is_fatal() {
    let env = Env::new();
    let p = env.tmp.path().join("junk.zip");
    std::fs::write(&p, b"not a zip at all").unwrap();
    env.raw_nightly("failure", &p);
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &["--allow-bootstrap"]);
    assert_refused(&o, exit_code(Exit::Integrity), "is not a valid zip", &dest);
}

/// Upload a good history after `edit` changes its index.json; restore must refuse with `fragment`.
fn tampered_index(edit: impl FnOnce(&mut serde_json::Value), fragment: &str) {
    let env = Env::new();
    env.nightly(
        t0(),
        "success",
        NewRun::new(WORKFLOW, "main", SHA_A),
        |ev, dir| {
            write_history(dir, 3, &anchor(ev));
            let p = dir.join("index.json");
            let mut v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            edit(&mut v);
            std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
            HistoryUpload::Dir
        },
    );
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &["--allow-bootstrap"]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "failed integrity validation",
        &dest,
    );
    assert_stderr_has(&o, fragment);
}

#[test]
fn tampered_index_row_is_fatal() {
    tampered_index(
        |v| v["runs"][1]["max_speedup"] = 9.0.into(),
        "hash chain mismatch",
    );
}

#[test]
fn broken_hash_chain_is_fatal() {
    tampered_index(
        |v| {
            v["runs"].as_array_mut().unwrap().remove(1);
        },
        "hash chain mismatch",
    );
}

#[test]
fn invalid_persisted_digest_is_fatal() {
    tampered_index(
        |v| v["runs"][0]["baseline_evidence_digest"] = "sha256:xyz".into(),
        "baseline_evidence_digest",
    );
}
