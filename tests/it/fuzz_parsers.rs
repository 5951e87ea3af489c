//! Property-based fuzzing on stable Rust (proptest) of every parser that reads untrusted bytes, each
//! fed mutations of real files: the zip extractor (a real history archive, deflated and stored),
//! the history validators (index, summary and regression JSON of a chained and of a legacy history;
//! strict validation and restore's sanitizing mode), the suite YAML parser (the canonical suite and
//! the fixtures) and the command-result parser (a real `examples/command_target.py` output).
//! Properties: no panic, nothing written outside the destination, every input either accepted or
//! refused with a documented, non-zero exit code (for command results: a target failure that names
//! the target).
//!
//! `TIER1_FUZZ_CASES` sets the cases per parser (default 256, so `cargo test` stays fast); the
//! recorded 100,000-case run and its time are in docs/performance.md:
//! `TIER1_FUZZ_CASES=100000 TMPDIR=/dev/shm cargo test --locked --test it fuzz_parsers:: -- --nocapture`.

use crate::history_support;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;
use tier1::Classify;
use tier1::archive::{ExtractPolicy, extract_safe};
use tier1::exit::Exit;

fn cases() -> u32 {
    std::env::var("TIER1_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(256)
}

/// What a case ended in (both are fine; a violation is an `Err`).
enum Verdict {
    Accepted,
    Refused,
}

/// Run `check` on `cases()` inputs from `strategy`, report count, accepted share and time, fail on
/// any violation.
fn fuzz<S: Strategy>(name: &str, strategy: S, check: impl Fn(S::Value) -> Result<Verdict, String>)
where
    S::Value: std::fmt::Debug,
{
    use std::sync::atomic::{AtomicU64, Ordering};
    let config = Config {
        cases: cases(),
        failure_persistence: None,
        max_shrink_iters: 2_000,
        ..Config::default()
    };
    let start = Instant::now();
    let accepted = AtomicU64::new(0);
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |v| match check(v) {
        Ok(Verdict::Accepted) => {
            accepted.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        Ok(Verdict::Refused) => Ok(()),
        Err(m) => Err(TestCaseError::fail(m)),
    });
    eprintln!(
        "fuzz {name}: {} cases in {:.1} s, {} accepted, the rest refused",
        cases(),
        start.elapsed().as_secs_f64(),
        accepted.load(Ordering::Relaxed)
    );
    if let Err(e) = result {
        panic!("fuzz {name}: {e}");
    }
}

/// Tokens that tend to reach edge cases of the parsers.
const INTERESTING: &[&str] = &[
    "",
    "0",
    "-1",
    "1e309",
    "-0.0",
    "NaN",
    "null",
    "true",
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "[]",
    "{}",
    "\"\"",
    "../",
    "/etc/passwd",
    "a\\b",
    "C:/x",
    "\u{1b}[2J",
    "\u{202e}",
    "\u{0}",
    "18446744073709551616",
    "4294967295",
    "sha256:",
    "tier1-evidence-",
    "&a [*a, *a]",
    "!!binary",
    "? x",
    "---",
    "\n  - ",
    "~",
    "'",
    "\t",
];

/// One byte-level change; positions are taken modulo the input length.
#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(usize, u8),
    SetByte(usize, u8),
    Insert(usize, Vec<u8>),
    Token(usize, usize),
    Delete(usize, usize),
    Duplicate(usize, usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        (at, 0u8..8).prop_map(|(a, b)| Mutation::FlipBit(a, b)),
        (at, any::<u8>()).prop_map(|(a, b)| Mutation::SetByte(a, b)),
        (at, proptest::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(a, b)| Mutation::Insert(a, b)),
        (at, 0..INTERESTING.len()).prop_map(|(a, t)| Mutation::Token(a, t)),
        (at, 1usize..64).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (at, 1usize..64, any::<usize>()).prop_map(|(a, n, t)| Mutation::Duplicate(a, n, t)),
        at.prop_map(Mutation::Truncate),
    ]
}

fn mutate(seed: &[u8], ms: &[Mutation]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for m in ms {
        let len = b.len().max(1);
        match m {
            Mutation::FlipBit(a, bit) if !b.is_empty() => b[a % len] ^= 1 << bit,
            Mutation::SetByte(a, v) if !b.is_empty() => b[a % len] = *v,
            Mutation::Insert(a, bytes) => {
                let at = a % (b.len() + 1);
                b.splice(at..at, bytes.iter().copied());
            }
            Mutation::Token(a, t) => {
                let at = a % (b.len() + 1);
                b.splice(at..at, INTERESTING[*t].bytes());
            }
            Mutation::Delete(a, n) if !b.is_empty() => {
                let at = a % len;
                let end = (at + n).min(b.len());
                b.drain(at..end);
            }
            Mutation::Duplicate(a, n, to) if !b.is_empty() => {
                let at = a % len;
                let chunk: Vec<u8> = b[at..(at + n).min(b.len())].to_vec();
                let to = to % (b.len() + 1);
                b.splice(to..to, chunk);
            }
            Mutation::Truncate(a) => b.truncate(a % (b.len() + 1)),
            _ => {}
        }
    }
    b
}

/// A change of a parsed JSON document at the `path`-th node (pre-order, modulo the node count).
#[derive(Debug, Clone)]
enum JsonEdit {
    Replace(usize, Value),
    Remove(usize),
    Duplicate(usize),
    WrapInArray(usize),
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![
            Just(-1.0f64),
            Just(0.0),
            Just(1e300),
            Just(-1e-300),
            Just(2.5)
        ]
        .prop_map(Value::from),
        (0..INTERESTING.len()).prop_map(|i| Value::from(INTERESTING[i])),
        "[a-z_]{0,12}".prop_map(Value::from),
        Just(Value::Array(vec![])),
        Just(Value::Object(serde_json::Map::new())),
    ]
}

fn json_edit() -> impl Strategy<Value = JsonEdit> {
    let at = any::<usize>();
    prop_oneof![
        (at, json_leaf()).prop_map(|(a, v)| JsonEdit::Replace(a, v)),
        at.prop_map(JsonEdit::Remove),
        at.prop_map(JsonEdit::Duplicate),
        at.prop_map(JsonEdit::WrapInArray),
    ]
}

fn count(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count).sum(),
        Value::Object(m) => m.values().map(count).sum(),
        _ => 0,
    }
}

/// Apply `edit` at node `*n` of `v` (counting down in pre-order); true once applied.
fn apply(v: &mut Value, n: &mut usize, edit: &JsonEdit) -> bool {
    let children: Vec<String> = match v {
        Value::Object(m) => m.keys().cloned().collect(),
        _ => vec![],
    };
    match v {
        Value::Array(a) => {
            for i in 0..a.len() {
                if *n == 1 {
                    match edit {
                        JsonEdit::Remove(_) => {
                            a.remove(i);
                        }
                        JsonEdit::Duplicate(_) => {
                            let c = a[i].clone();
                            a.insert(i, c);
                        }
                        JsonEdit::Replace(_, x) => a[i] = x.clone(),
                        JsonEdit::WrapInArray(_) => a[i] = Value::Array(vec![a[i].take()]),
                    }
                    return true;
                }
                *n -= 1;
                if apply(&mut a[i], n, edit) {
                    return true;
                }
            }
        }
        Value::Object(m) => {
            for k in children {
                if *n == 1 {
                    match edit {
                        JsonEdit::Remove(_) => {
                            m.shift_remove(&k);
                        }
                        JsonEdit::Duplicate(_) => {
                            let c = m[&k].clone();
                            m.insert(format!("{k}_"), c);
                        }
                        JsonEdit::Replace(_, x) => {
                            m.insert(k, x.clone());
                        }
                        JsonEdit::WrapInArray(_) => {
                            let x = m[&k].take();
                            m.insert(k, Value::Array(vec![x]));
                        }
                    }
                    return true;
                }
                *n -= 1;
                if let Some(child) = m.get_mut(&k)
                    && apply(child, n, edit)
                {
                    return true;
                }
            }
        }
        _ => {}
    }
    false
}

fn edit_json(seed: &[u8], edits: &[JsonEdit]) -> Vec<u8> {
    let Ok(mut v) = serde_json::from_slice::<Value>(seed) else {
        return seed.to_vec();
    };
    for e in edits {
        let at = match e {
            JsonEdit::Replace(a, _)
            | JsonEdit::Remove(a)
            | JsonEdit::Duplicate(a)
            | JsonEdit::WrapInArray(a) => *a,
        };
        let mut n = 1 + at % count(&v).max(1);
        apply(&mut v, &mut n, e);
    }
    serde_json::to_vec_pretty(&v).expect("serializes")
}

/// A byte-level or structure-aware change set.
#[derive(Debug, Clone)]
enum Change {
    Bytes(Vec<Mutation>),
    Json(Vec<JsonEdit>),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        proptest::collection::vec(mutation(), 1..6).prop_map(Change::Bytes),
        proptest::collection::vec(json_edit(), 1..4).prop_map(Change::Json),
    ]
}

fn changed(seed: &[u8], c: &Change) -> Vec<u8> {
    match c {
        Change::Bytes(ms) => mutate(seed, ms),
        Change::Json(es) => edit_json(seed, es),
    }
}

/// Entries directly under `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|it| {
            it.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn refused_with(e: &impl Classify, allowed: &[Exit]) -> Result<Verdict, String> {
    let code = e.exit();
    if allowed.contains(&code) && Exit::ALL.contains(&code) && code != Exit::Ok {
        Ok(Verdict::Refused)
    } else {
        Err(format!(
            "refused with {code:?}, expected one of {allowed:?}"
        ))
    }
}

/// Real inputs, built once: a valid chained history (two runs) and the legacy dashboard fixture.
struct Seeds {
    _tmp: tempfile::TempDir,
    chained: PathBuf,
    legacy: PathBuf,
    zips: Vec<Vec<u8>>,
}

fn seeds() -> &'static Seeds {
    static SEEDS: OnceLock<Seeds> = OnceLock::new();
    SEEDS.get_or_init(|| {
        use history_support::*;
        let tmp = tempfile::tempdir().expect("tmp");
        let w = tmp.path();
        bootstrap_live(w, &w.join("live"), &RunSpec::new("anchor", 0));
        candidate(
            Some(&w.join("live")),
            &w.join("cand"),
            &RunSpec::new("c", 1),
        );
        let legacy = w.join("legacy");
        tier1::fsx::copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dashboard/history"),
            &legacy,
        )
        .expect("copy fixture");
        let deflated = w.join("deflated.zip");
        tier1::archive::write_deterministic_zip(&w.join("cand"), &deflated).expect("zip");
        let stored = w.join("stored.zip");
        let mut zw = zip::ZipWriter::new(std::fs::File::create(&stored).expect("create"));
        for rel in tier1::fsx::list_files(&w.join("live")).expect("list") {
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored);
            zw.start_file(format!("history/tier1/{rel}"), opts)
                .expect("start");
            std::io::Write::write_all(&mut zw, &std::fs::read(w.join("live").join(&rel)).unwrap())
                .expect("write");
        }
        zw.finish().expect("finish");
        let zips = vec![
            std::fs::read(&deflated).expect("read"),
            std::fs::read(&stored).expect("read"),
        ];
        Seeds {
            chained: w.join("cand"),
            legacy,
            zips,
            _tmp: tmp,
        }
    })
}

#[test]
fn zip_extractor_never_panics_or_writes_outside_the_destination() {
    let s = seeds();
    // Half the cases only rename a member (CRCs stay valid, so the path rules are reached).
    let strategy = (
        0..s.zips.len(),
        prop_oneof![Just(vec![]), proptest::collection::vec(mutation(), 1..6)],
        proptest::option::of((any::<usize>(), 0..INTERESTING.len())),
    );
    fuzz("zip extractor", strategy, |(which, ms, rename)| {
        let case = tempfile::tempdir().map_err(|e| e.to_string())?;
        let zip = case.path().join("in.zip");
        let mut bytes = mutate(&s.zips[which], &ms);
        if let Some((at, t)) = rename {
            // Rename one member in place (same length, both headers): path rules, not CRCs.
            let names = ["index.json", "anchor/summary.json", "c/trend_snapshot.json"];
            let from = names[at % names.len()];
            let token = INTERESTING[t].as_bytes();
            let mut to = from.as_bytes().to_vec();
            for (i, b) in token.iter().enumerate().take(to.len()) {
                to[i] = *b;
            }
            let mut i = 0;
            while i + from.len() <= bytes.len() {
                if &bytes[i..i + from.len()] == from.as_bytes() {
                    bytes[i..i + from.len()].copy_from_slice(&to);
                }
                i += 1;
            }
        }
        std::fs::write(&zip, &bytes).map_err(|e| e.to_string())?;
        let dest = case.path().join("out");
        match extract_safe(&zip, &dest, &ExtractPolicy::history()) {
            Ok(report) => {
                let written = tier1::fsx::list_files(&dest).map_err(|e| e.to_string())?;
                if written != report.files {
                    return Err(format!("wrote {written:?}, reported {:?}", report.files));
                }
                if entries(case.path()) != ["in.zip", "out"] {
                    return Err(format!("stray entries: {:?}", entries(case.path())));
                }
                Ok(Verdict::Accepted)
            }
            Err(e) => {
                if entries(case.path()) != ["in.zip"] {
                    return Err(format!("refused ({e}) but left {:?}", entries(case.path())));
                }
                refused_with(&e, &[Exit::Integrity])
            }
        }
    });
}

#[test]
fn history_validators_never_panic_and_refuse_with_documented_codes() {
    let s = seeds();
    let strategy = (any::<bool>(), any::<usize>(), change(), any::<bool>());
    fuzz(
        "index/summary/regression validators",
        strategy,
        |(legacy, pick, change, restore_mode)| {
            let src = if legacy { &s.legacy } else { &s.chained };
            let files: Vec<String> = tier1::fsx::list_files(src)
                .map_err(|e| e.to_string())?
                .into_iter()
                .filter(|f| f.ends_with(".json"))
                .collect();
            let target = &files[pick % files.len()];
            let case = tempfile::tempdir().map_err(|e| e.to_string())?;
            let root = case.path().join("history");
            tier1::fsx::copy_tree(src, &root).map_err(|e| e.to_string())?;
            let seed = std::fs::read(root.join(target)).map_err(|e| e.to_string())?;
            std::fs::write(root.join(target), changed(&seed, &change))
                .map_err(|e| e.to_string())?;
            let allowed = [Exit::Invalid, Exit::Integrity];
            let result = if restore_mode {
                tier1::history_check::sanitize_restored(&root).map(|_| ())
            } else {
                tier1::history_check::validate_history_root(&root).map(|_| ())
            };
            if entries(case.path()) != ["history"] {
                return Err(format!(
                    "wrote outside the root: {:?}",
                    entries(case.path())
                ));
            }
            match result {
                Ok(()) => Ok(Verdict::Accepted),
                Err(e) if e.path.is_empty() => Err(format!("error names no file: {e}")),
                Err(e) => refused_with(&e, &allowed),
            }
        },
    );
}

#[test]
fn suite_yaml_parser_never_panics_and_refuses_as_invalid_input() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds: Vec<Vec<u8>> = [
        "configs/benchmark_suites/tier1.yaml",
        "tests/fixtures/history/suite.yaml",
        "tests/fixtures/nightly/suite.yaml",
    ]
    .iter()
    .map(|p| std::fs::read(root.join(p)).expect("seed suite"))
    .collect();
    let dir = tempfile::tempdir().expect("tmp");
    let strategy = (0..seeds.len(), proptest::collection::vec(mutation(), 1..6));
    fuzz("suite YAML parser", strategy, |(which, ms)| {
        let bytes = mutate(&seeds[which], &ms);
        let path = dir.path().join("suite.yaml");
        std::fs::write(&path, &bytes).map_err(|e| e.to_string())?;
        match tier1::suite::Suite::load(&path) {
            Ok(_) => Ok(Verdict::Accepted),
            // Bytes that are not UTF-8 cannot be read as text: an I/O failure of the read.
            Err(e) if std::str::from_utf8(&bytes).is_err() => {
                refused_with(&e, &[Exit::Invalid, Exit::Io])
            }
            Err(e) => refused_with(&e, &[Exit::Invalid]),
        }
    });
}

#[test]
fn command_result_parser_never_panics_and_names_the_target() {
    let seed = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz/command_result.json"),
    )
    .expect("seed");
    tier1::bench::command::parse("demo", &seed).expect("the real output parses");
    fuzz(
        "command result parser",
        change(),
        |c| match tier1::bench::command::parse("demo", &changed(&seed, &c)) {
            Ok(out) => {
                if out.variants.first().map(|v| v.name.as_str()) != Some("baseline") {
                    return Err("accepted a result whose first variant is not the baseline".into());
                }
                Ok(Verdict::Accepted)
            }
            Err(m) if m.starts_with("target demo: malformed command result: ") => {
                Ok(Verdict::Refused)
            }
            Err(m) => Err(format!("refusal does not name the target: {m}")),
        },
    );
}
