//! `.ci/nvrtc.sh`'s cache of the pinned NVRTC wheel is checked on every use (issue 20, defect 5):
//! what the runner's tool cache holds is never trusted by its version string. Only a wheel whose
//! SHA-256 is pinned in `.ci/nvrtc-requirements.txt` is used, its files are checked against its
//! `RECORD`, and the library is extracted afresh into a directory of this use; a swapped library
//! (a pull request's job on a shared runner could plant one) never reaches `LD_LIBRARY_PATH`.
//! A stand-in `ldconfig` hides a system libnvrtc.so.12 (which the script would use instead), so
//! these run on every machine, the GPU machine included.

use crate::support::nvrtc_wheel;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const VERSION: &str = "12.9.86";

struct Ci {
    _t: tempfile::TempDir,
    root: PathBuf,
    cache: PathBuf,
    dir: PathBuf,
}

/// A checkout holding `.ci/nvrtc.sh` and `requirements`, an empty cache and no library directory.
fn ci(requirements: &str) -> Ci {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("checkout");
    std::fs::create_dir_all(root.join(".ci")).unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/nvrtc.sh"),
        root.join(".ci/nvrtc.sh"),
    )
    .unwrap();
    std::fs::write(root.join(".ci/nvrtc-requirements.txt"), requirements).unwrap();
    let cache = t.path().join("tool-cache/tier1-nvrtc");
    std::fs::create_dir_all(&cache).unwrap();
    let dir = t.path().join("runner-temp/tier1-nvrtc");
    Ci {
        root,
        cache,
        dir,
        _t: t,
    }
}

/// Run the script as the workflow does; pip may not reach an index.
fn provide(c: &Ci, extra: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg(c.root.join(".ci/nvrtc.sh"))
        .env("TIER1_NVRTC_CACHE", &c.cache)
        .env("TIER1_NVRTC_DIR", &c.dir)
        .env(
            "PATH",
            nvrtc_wheel::path_without_system_nvrtc(&c.root.join("../no-system-nvrtc")),
        )
        .env("PIP_NO_INDEX", "1")
        .env_remove("PIP_FIND_LINKS")
        .env_remove("TIER1_NVRTC_VENV");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.output().expect("bash runs")
}

/// A venv holding the pinned version's metadata and a planted `libnvrtc.so.12`.
fn planted_venv(venv: &Path) {
    let ok = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(venv)
        .status()
        .expect("python3 runs");
    assert!(ok.success());
    let out = Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .expect("venv python runs");
    let site = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let pkg = site.join("nvidia/cuda_nvrtc");
    std::fs::create_dir_all(pkg.join("lib")).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    std::fs::write(pkg.join("lib/libnvrtc.so.12"), b"planted").unwrap();
    let dist = site.join(format!("nvidia_cuda_nvrtc_cu12-{VERSION}.dist-info"));
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(
        dist.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: nvidia-cuda-nvrtc-cu12\nVersion: {VERSION}\n"),
    )
    .unwrap();
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

#[test]
fn a_swapped_library_under_the_pinned_version_is_never_used() {
    let (name, good) = nvrtc_wheel::wheel(VERSION, b"the real libnvrtc");
    let c = ci(&nvrtc_wheel::requirements(VERSION, &good));
    // A cache that says "the pinned version" but holds another library: as a venv (the layout an
    // earlier nvrtc.sh reused by its version string) and as a wheel of that version's name.
    let venv = c.cache.join("venv");
    planted_venv(&venv);
    let (_, planted) = nvrtc_wheel::wheel(VERSION, b"planted");
    std::fs::write(c.cache.join(&name), &planted).unwrap();
    let o = provide(&c, &[("TIER1_NVRTC_VENV", &venv)]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("{name}: its sha256")) && text(&o).contains("is not pinned"),
        "{}",
        text(&o)
    );
    assert!(o.stdout.is_empty(), "no library directory offered");
    assert!(
        !c.cache.join(&name).exists(),
        "the unpinned wheel is discarded"
    );
    assert!(!c.dir.exists(), "nothing extracted");
}

#[test]
fn the_pinned_wheel_is_checked_and_extracted_afresh_on_every_use() {
    let (name, good) = nvrtc_wheel::wheel(VERSION, b"the real libnvrtc");
    let c = ci(&nvrtc_wheel::requirements(VERSION, &good));
    std::fs::write(c.cache.join(&name), &good).unwrap();
    let o = provide(&c, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        c.dir.display().to_string()
    );
    let lib = c.dir.join("libnvrtc.so.12");
    assert_eq!(std::fs::read(&lib).unwrap(), b"the real libnvrtc");
    // A library swapped in the directory after one use is replaced at the next.
    std::fs::write(&lib, b"planted").unwrap();
    std::fs::write(c.dir.join("libextra.so"), b"planted").unwrap();
    let o = provide(&c, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&lib).unwrap(), b"the real libnvrtc");
    assert!(
        !c.dir.join("libextra.so").exists(),
        "only the wheel's files"
    );
}

#[test]
fn a_pinned_wheel_whose_files_disagree_with_its_record_is_refused() {
    // A wheel whose RECORD names other bytes than the library it carries (pinned as it is).
    let (name, good) = nvrtc_wheel::wheel(VERSION, b"the real libnvrtc");
    let (_, bad) = nvrtc_wheel::wheel(VERSION, b"the real libnvrtX");
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bad)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..zip.len() {
        let f = zip.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        if name.ends_with("RECORD") {
            let mut good_zip = zip::ZipArchive::new(std::io::Cursor::new(good.clone())).unwrap();
            out.raw_copy_file(good_zip.by_name(&name).unwrap()).unwrap();
        } else {
            out.raw_copy_file(f).unwrap();
        }
    }
    let mixed = out.finish().unwrap().into_inner();
    let c = ci(&nvrtc_wheel::requirements(VERSION, &mixed));
    std::fs::write(c.cache.join(&name), &mixed).unwrap();
    let o = provide(&c, &[]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(
            "nvidia/cuda_nvrtc/lib/libnvrtc.so.12: its sha256 differs from the wheel's RECORD"
        ),
        "{}",
        text(&o)
    );
    assert!(o.stdout.is_empty());
}
