//! A stand-in for the NVRTC wheel `.ci/nvrtc-requirements.txt` pins (`nvidia-cuda-nvrtc-cu12`),
//! shaped as pip leaves it: `nvidia/cuda_nvrtc/lib/libnvrtc.so.12` with the package's `__init__.py`,
//! and a `.dist-info` with `METADATA` and `RECORD` (every file's `sha256=` in URL-safe base64
//! without padding, and its size). Deterministic bytes (fixed member times), so a test can pin its
//! SHA-256 in a requirements file the way the real one is pinned.
#![allow(dead_code)]

use sha2::{Digest, Sha256};
use std::io::Write;

/// The pip package whose wheel this stands for.
pub const PACKAGE: &str = "nvidia-cuda-nvrtc-cu12";

fn b64url_nopad(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// (file name, bytes) of the wheel of `version` whose `libnvrtc.so.12` holds `lib`.
pub fn wheel(version: &str, lib: &[u8]) -> (String, Vec<u8>) {
    let dist = format!("nvidia_cuda_nvrtc_cu12-{version}.dist-info");
    let files: Vec<(String, Vec<u8>)> = vec![
        ("nvidia/__init__.py".into(), Vec::new()),
        ("nvidia/cuda_nvrtc/__init__.py".into(), Vec::new()),
        ("nvidia/cuda_nvrtc/lib/libnvrtc.so.12".into(), lib.to_vec()),
        (
            format!("{dist}/METADATA"),
            format!("Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: {version}\n").into_bytes(),
        ),
    ];
    let mut record = String::new();
    for (name, body) in &files {
        let sum = b64url_nopad(&Sha256::digest(body));
        record.push_str(&format!("{name},sha256={sum},{}\n", body.len()));
    }
    record.push_str(&format!("{dist}/RECORD,,\n"));
    let mut zw = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    for (name, body) in files.iter().chain(std::iter::once(&(
        format!("{dist}/RECORD"),
        record.into_bytes(),
    ))) {
        zw.start_file(name.as_str(), opts).expect("start");
        zw.write_all(body).expect("write");
    }
    let bytes = zw.finish().expect("finish").into_inner();
    (
        format!("nvidia_cuda_nvrtc_cu12-{version}-py3-none-manylinux2014_x86_64.whl"),
        bytes,
    )
}

/// The requirements file that pins exactly `wheel_bytes` (as `.ci/nvrtc-requirements.txt` does).
pub fn requirements(version: &str, wheel_bytes: &[u8]) -> String {
    format!(
        "# stand-in for .ci/nvrtc-requirements.txt\n{PACKAGE}=={version} \\\n    --hash=sha256:{:x}\n",
        Sha256::digest(wheel_bytes)
    )
}

#[test]
fn urlsafe_base64_matches_the_rfc_examples() {
    for (plain, enc) in [
        ("", ""),
        ("f", "Zg"),
        ("fo", "Zm8"),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg"),
    ] {
        assert_eq!(b64url_nopad(plain.as_bytes()), enc);
    }
    assert_eq!(b64url_nopad(&[0xfb, 0xff]), "-_8");
}

/// `PATH` with a stand-in `ldconfig` (in `dir`) first: it lists a cache without libnvrtc.so.12, so
/// `.ci/nvrtc.sh` and `scripts/gpu-check.sh` behave as on a machine whose system lacks NVRTC, also
/// where it has it (the GPU machine). Both scripts ask `ldconfig -p` through `PATH`.
pub fn path_without_system_nvrtc(dir: &std::path::Path) -> std::ffi::OsString {
    std::fs::create_dir_all(dir).unwrap();
    let ldconfig = dir.join("ldconfig");
    std::fs::write(
        &ldconfig,
        "#!/bin/sh\n# ldconfig stand-in: a cache without libnvrtc.so.12\necho \"1 libs found in cache \\`/etc/ld.so.cache'\"\necho \"\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ldconfig, std::fs::Permissions::from_mode(0o755)).unwrap();
    let system = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&system)))
        .unwrap()
}
