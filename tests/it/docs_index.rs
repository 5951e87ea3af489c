//! The documentation's index, `docs/README.md`: it links every page of `docs/`, and every page it
//! links exists, so a new page cannot be left out of it.

use std::collections::BTreeSet;
use std::path::Path;

const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs");

/// The `.md` pages a Markdown text links by a relative name, `](name.md)` or `](name.md#part)`.
fn linked_pages(text: &str) -> BTreeSet<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|target| target.split('#').next().unwrap_or(target))
        .filter(|target| target.ends_with(".md") && !target.contains('/'))
        .map(str::to_string)
        .collect()
}

/// The pages of `docs/` (its `.md` files but the index itself).
fn pages(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("read docs/")
        .map(|e| {
            e.expect("an entry of docs/")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".md") && name != "README.md")
        .collect()
}

#[test]
fn the_index_links_every_page_of_docs_and_only_pages_that_exist() {
    let index = std::fs::read_to_string(Path::new(DOCS).join("README.md")).expect("docs/README.md");
    let linked = linked_pages(&index);
    let present = pages(Path::new(DOCS));
    let missing: Vec<&String> = present.difference(&linked).collect();
    let dangling: Vec<&String> = linked.difference(&present).collect();
    assert!(
        missing.is_empty(),
        "docs/README.md: expected a link to every page of docs/, found none to {missing:?}"
    );
    assert!(
        dangling.is_empty(),
        "docs/README.md links pages that docs/ does not hold: {dangling:?}"
    );
    assert!(
        index.contains("](../README.md)"),
        "docs/README.md: expected a link back to the repository's README"
    );
}

#[test]
fn the_index_check_sees_a_missing_page_and_a_dangling_link() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    for page in ["README.md", "a.md", "b.md", "notes.txt"] {
        std::fs::write(tmp.path().join(page), "").unwrap();
    }
    let linked = linked_pages("[A](a.md#part), [C](c.md), [up](../README.md), [x](https://e/d.md)");
    let present = pages(tmp.path());
    assert_eq!(present, ["a.md", "b.md"].map(String::from).into());
    assert_eq!(linked, ["a.md", "c.md"].map(String::from).into());
    assert_eq!(
        present.difference(&linked).collect::<Vec<_>>(),
        [&"b.md".to_string()]
    );
    assert_eq!(
        linked.difference(&present).collect::<Vec<_>>(),
        [&"c.md".to_string()]
    );
}
