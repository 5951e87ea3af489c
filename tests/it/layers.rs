//! The library's layers (the map at the top of `crates/tier1/src/lib.rs`): every top-level module
//! is in exactly one layer, and no module imports from a layer above its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/tier1/src");

/// The layer table of the map, top layer first: (layer, modules).
fn layers(lib: &str) -> Vec<(String, Vec<String>)> {
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! | "))
        .filter(|l| !l.starts_with("layer |") && !l.starts_with("---"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_end_matches(" |").split(" | ").collect();
            assert_eq!(cells.len(), 2, "a layer row has two cells: {l:?}");
            let modules = cells[1].split(',').map(|m| m.trim().to_string()).collect();
            (cells[0].trim().to_string(), modules)
        })
        .collect()
}

/// The modules lib.rs declares: `mod m;` lines, whatever their visibility (`pub`, `pub(crate)`,
/// none).
fn top_level_modules(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|l| {
            let l = l
                .strip_prefix("pub(crate) ")
                .or_else(|| l.strip_prefix("pub "))
                .unwrap_or(l);
            l.strip_prefix("mod ")
        })
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read the source directory") {
        let p = e.expect("directory entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules a source file names as `crate::<module>` (comments left out).
fn imports(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let rest = rest.trim_start_matches('{').trim_start();
            // `crate::{a::x, b}`: every name directly inside the braces.
            let names: Vec<&str> = if code[i + "crate::".len()..].starts_with('{') {
                rest.split(['}'])
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(|n| n.trim().split("::").next().unwrap_or("").trim())
                    .collect()
            } else {
                vec![
                    rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .next()
                        .unwrap_or(""),
                ]
            };
            for n in names {
                if modules.contains(n) {
                    found.insert(n.to_string());
                }
            }
        }
    }
    found
}

#[test]
fn every_module_is_in_one_layer_and_imports_only_its_own_layer_or_lower() {
    let lib = std::fs::read_to_string(Path::new(SRC).join("lib.rs")).expect("lib.rs");
    let table = layers(&lib);
    assert!(
        table.len() >= 3,
        "the map's layer table is missing from lib.rs"
    );
    let modules = top_level_modules(&lib);
    let mut rank: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for (i, (layer, mods)) in table.iter().enumerate() {
        for m in mods {
            assert!(
                modules.contains(m),
                "the map names {m:?} (layer {layer}), which is not a module"
            );
            let before = rank.insert(m.clone(), (i, layer.clone()));
            assert!(before.is_none(), "{m:?} is in two layers");
        }
    }
    let unmapped: Vec<&String> = modules.iter().filter(|m| !rank.contains_key(*m)).collect();
    assert!(
        unmapped.is_empty(),
        "modules missing from the map: {unmapped:?}"
    );

    let mut files = Vec::new();
    rust_files(Path::new(SRC), &mut files);
    let mut violations = Vec::new();
    for f in files {
        let rel = f.strip_prefix(SRC).expect("under src");
        let first = rel.components().next().expect("a component");
        let top = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let Some((own, own_layer)) = rank.get(&top) else {
            continue;
        };
        let text = std::fs::read_to_string(&f).expect("read a source file");
        for m in imports(&text, &modules) {
            let (theirs, their_layer) = &rank[&m];
            if theirs < own {
                violations.push(format!(
                    "{} ({own_layer}) imports crate::{m} ({their_layer}, a higher layer)",
                    rel.display()
                ));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_checker_sees_an_upward_import() {
    let modules: BTreeSet<String> = ["run", "json", "history"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let text =
        "use crate::{history::Index, json};\n// crate::run in a comment\nlet x = crate::run::go();";
    let found = imports(text, &modules);
    assert_eq!(
        found,
        ["history", "json", "run"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    let decls = "pub mod run;\npub(crate) mod json;\nmod history;\n// mod not_code;\nuse std::fmt;";
    assert_eq!(
        top_level_modules(decls),
        ["history", "json", "run"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    let lib = "//! | layer | modules |\n//! | --- | --- |\n//! | top | run |\n//! | low | json, history |\npub mod run;";
    assert_eq!(
        layers(lib),
        vec![
            ("top".to_string(), vec!["run".to_string()]),
            (
                "low".to_string(),
                vec!["json".to_string(), "history".to_string()]
            )
        ]
    );
}

/// The crates checked for module cycles by `scripts/mod_cycles.py` (docs/development.md): the
/// library, the integration tests, and the benches that span several files.
const CYCLE_CHECKED: [&str; 4] = [
    "crates/tier1/src",
    "tests/it",
    "benches/core",
    "benches/integrity",
];

/// The exit code of `scripts/mod_cycles.py` when it finds a cycle (its own, not tier1's table).
const CYCLES_FOUND: i32 = 1;

/// `scripts/mod_cycles.py DIR...` from the repository root.
fn mod_cycles(dirs: &[&Path]) -> std::process::Output {
    std::process::Command::new("python3")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("scripts/mod_cycles.py")
        .args(dirs)
        .output()
        .expect("python3 runs scripts/mod_cycles.py")
}

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs: Vec<PathBuf> = CYCLE_CHECKED.iter().map(|d| root.join(d)).collect();
    let out = mod_cycles(&dirs.iter().map(PathBuf::as_path).collect::<Vec<_>>());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/mod_cycles.py found cycles:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.matches(" 0 cycles among ").count(),
        CYCLE_CHECKED.len(),
        "{stdout}"
    );
}

#[test]
fn the_cycle_check_sees_a_cycle() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let src = tmp.path();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
    std::fs::create_dir(src.join("b")).unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::inner::Thing;\n").unwrap();
    std::fs::write(src.join("b.rs"), "mod inner;\n").unwrap();
    std::fs::write(
        src.join("b/inner.rs"),
        "use crate::a::Thing;\n// use crate::c::Other;\n",
    )
    .unwrap();
    std::fs::write(src.join("c.rs"), "use crate::a::{self};\n").unwrap();
    let out = mod_cycles(&[src]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(CYCLES_FOUND), "{stdout}");
    // The files' cycle, the top-level modules' pair it makes; `c` importing `a` and a commented
    // import close no cycle.
    assert!(stdout.contains("cycle: a, b::inner\n"), "{stdout}");
    assert!(stdout.contains("cycle: a, b\n"), "{stdout}");
    assert!(stdout.contains(" 2 cycles among 5 modules"), "{stdout}");
}
