//! The exit-code table in docs/exit-codes.md matches `tier1::exit::Exit`, code for code.

use tier1::exit::Exit;

#[test]
fn docs_table_matches_the_enum() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/exit-codes.md"))
        .unwrap();
    let rows: Vec<(u8, String)> = doc
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let code = cells.get(1)?.parse::<u8>().ok()?;
            Some((code, cells.get(2)?.trim_matches('`').to_string()))
        })
        .collect();
    let expected: Vec<(u8, String)> = Exit::ALL
        .iter()
        .map(|e| (e.code(), e.name().to_string()))
        .collect();
    assert_eq!(rows, expected);
}
