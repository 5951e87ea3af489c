//! .ci/glibc-floor.sh, the release's check that its binaries run on glibc 2.28 (issue 20, defect 11):
//! a binary that needs a newer glibc than the floor is refused, naming the version it needs; one
//! within the floor passes; a malformed floor or no binary is a usage error. Run on a binary this
//! test built (on this machine's glibc, so it needs at least the version the machine's toolchain
//! links against).

use std::process::{Command, Output};

/// The exit codes of `.ci/glibc-floor.sh` (its own, not tier1's table): every binary within the
/// floor, one over it, a usage error (malformed floor, no binary, readelf failed).
const WITHIN_THE_FLOOR: i32 = 0;
const OVER_THE_FLOOR: i32 = 1;
const USAGE: i32 = 2;

fn floor(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/glibc-floor.sh"))
        .args(args)
        .output()
        .expect("bash runs")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

#[test]
fn a_binary_needing_a_newer_glibc_than_the_floor_is_refused_by_name() {
    let bin = env!("CARGO_BIN_EXE_tier1-run");
    // Any binary linked against glibc needs at least GLIBC_2.2.5 on x86_64.
    let o = floor(&["2.0", bin]);
    assert_eq!(o.status.code(), Some(OVER_THE_FLOOR), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains(&format!("::error::{bin} needs glibc 2."))
            && t.contains("newer than the supported floor 2.0"),
        "{t}"
    );
    let o = floor(&["99.0", bin]);
    assert_eq!(o.status.code(), Some(WITHIN_THE_FLOOR), "{}", text(&o));
    assert!(text(&o).contains("within the floor 99.0"), "{}", text(&o));
}

#[test]
fn a_malformed_floor_or_no_binary_is_a_usage_error() {
    let o = floor(&["latest", env!("CARGO_BIN_EXE_tier1-run")]);
    assert_eq!(o.status.code(), Some(USAGE));
    assert!(text(&o).contains("expected a version like 2.28, found 'latest'"));
    let o = floor(&["2.28"]);
    assert_eq!(o.status.code(), Some(USAGE));
    assert!(text(&o).contains("expected at least one binary"));
}
