//! The vault on GitHub, against the fake API (which serves the store's `vault/` as immutable
//! releases): `tier1-vault --store github` stores a pending segment as a draft release, uploads
//! its asset with the token to the release's `upload_url`, publishes it and reads the asset's
//! `digest` back; `tier1-restore --store github` checks it by the release's metadata (never
//! downloading it) and leaves the archive out of the restored tree; `--deep` downloads it through
//! the storage redirect without the token; an upload that fails leaves no published release and
//! no draft, and the token is never printed.

use crate::history_compaction::Long;
use crate::restore_support::*;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::fake_github::{FakeGithub, Fault};
use chrono::Duration;
use std::path::Path;
use std::process::{Command, Output};

const TOKEN: &str = "ghs_vaultTOKENvalue321";

fn github_cmd(bin: &str, fake: &FakeGithub) -> Command {
    let mut c = crate::support::command::scrubbed(bin);
    c.env("GITHUB_API_URL", fake.api_url())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", REPO)
        .env("TIER1_GITHUB_RETRY_BASE_MS", "5")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("TIER1_STORE");
    c
}

fn vault(fake: &FakeGithub, root: &Path, extra: &[&str]) -> Output {
    github_cmd(env!("CARGO_BIN_EXE_tier1-vault"), fake)
        .args(["--store", "github", "--history-root"])
        .arg(root)
        .args(extra)
        .output()
        .unwrap()
}

fn restore(fake: &FakeGithub, dest: &Path) -> Output {
    github_cmd(env!("CARGO_BIN_EXE_tier1-restore"), fake)
        .args(["--store", "github", "--branch", "main"])
        .args(["--current-run-id", "999999", "--now"])
        .arg((t0() + Duration::days(2)).to_rfc3339())
        .arg("--destination")
        .arg(dest)
        .output()
        .unwrap()
}

fn no_token(o: &Output) {
    assert!(!String::from_utf8_lossy(&o.stdout).contains(TOKEN));
    assert!(!stderr(o).contains(TOKEN));
}

/// A 400-run history published once (one pending segment), uploaded as a successful night.
fn published() -> (Long, std::path::PathBuf) {
    let l = Long::new(400);
    let out = l.env.tmp.path().join("published");
    let o = l.publish(&l.live, &out);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    l.upload(&out, 1);
    (l, out)
}

#[test]
fn a_segment_is_vaulted_as_an_immutable_release_and_checked_by_its_metadata() {
    let (l, out) = published();
    let fake = FakeGithub::start(&l.env.store_dir, TOKEN);
    fake.set_now(t0() + Duration::days(2));
    let o = vault(&fake, &out, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    no_token(&o);
    assert_eq!(stdout_json(&o)["stored"], serde_json::json!(["seg-000001"]));
    let idx: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    let hex = idx["segments"][0]["digest"]
        .as_str()
        .unwrap()
        .trim_start_matches("sha256:")
        .to_string();
    let tag = format!("tier1-segment-{hex}");
    // Draft, upload to its upload_url (with the token), publish; nothing else was written.
    let create = fake.requests_to(&format!("/repos/{REPO}/releases"));
    assert!(
        create.iter().any(|r| r.method == "POST"),
        "{:?}",
        create
            .iter()
            .map(|r| (&r.method, &r.target))
            .collect::<Vec<_>>()
    );
    let upload = fake.requests_to("/uploads/");
    assert_eq!(upload.len(), 1);
    assert_eq!(upload[0].method, "POST");
    assert!(
        upload[0].target.contains("name=seg-000001.tar.gz"),
        "{}",
        upload[0].target
    );
    assert_eq!(
        upload[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert!(
        fake.requests_to("/releases/")
            .iter()
            .any(|r| r.method == "PATCH")
    );
    assert!(fake.vault_drafts().is_empty(), "the draft was published");
    // Restore checks the release by tag, never downloads it, and leaves the archive out.
    let dest = l.env.tmp.path().join("restored");
    let o = restore(&fake, &dest);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    no_token(&o);
    assert_eq!(
        stdout_json(&o)["segments_left_in_vault"],
        serde_json::json!(["seg-000001"])
    );
    assert!(!dest.join("segments").exists());
    assert!(
        !fake
            .requests_to(&format!("/releases/tags/{tag}"))
            .is_empty()
    );
    assert!(
        fake.requests_to("/releases/assets/").is_empty(),
        "restore downloaded the vaulted segment"
    );
    // The deep check downloads it through the redirect, without the token at the storage host.
    let o = vault(&fake, &dest, &["--deep"]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    assert_eq!(stdout_json(&o)["deep_checked_segments"], 1);
    let blobs: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.listener == "blob" && r.path().starts_with("/vault/"))
        .collect();
    assert_eq!(blobs.len(), 1);
    assert!(blobs[0].header("authorization").is_none());
}

#[test]
fn a_failed_upload_publishes_nothing_and_leaves_no_draft() {
    let (l, out) = published();
    let fake = FakeGithub::start(&l.env.store_dir, TOKEN);
    fake.set_now(t0() + Duration::days(2));
    fake.inject(Fault::Status {
        on: "/uploads/".into(),
        status: 500,
        headers: vec![],
        times: 1,
    });
    let o = vault(&fake, &out, &[]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Remote)),
        "{}",
        stderr(&o)
    );
    no_token(&o);
    assert!(fake.vault_drafts().is_empty(), "the draft was deleted");
    assert!(
        !l.env.store_dir.join("vault").exists()
            || std::fs::read_dir(l.env.store_dir.join("vault"))
                .unwrap()
                .next()
                .is_none(),
        "nothing was published"
    );
    // The segment stays in the package; the next vault run stores it.
    let dest = l.env.tmp.path().join("restored");
    let o = restore(&fake, &dest);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    assert_eq!(stdout_json(&o)["segments_pending"], 1);
    assert!(dest.join("segments/seg-000001.tar.gz").is_file());
    let o = vault(&fake, &out, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
}

/// Many segments are looked up through the releases listing (paginated), not one request each.
#[test]
fn many_segments_are_found_through_the_paginated_listing() {
    use tier1::store::ArtifactStore;
    let env = Env::new();
    let store = env.store_at(t0());
    let mut names = Vec::new();
    for i in 0..12 {
        let f = env.tmp.path().join(format!("seg-{i}.tar.gz"));
        std::fs::write(&f, format!("segment {i}")).unwrap();
        let name = format!("tier1-segment-{i:064}");
        if i % 3 != 0 {
            store.vault_put(&name, "seg.tar.gz", &f).unwrap();
        }
        names.push(name);
    }
    let fake = FakeGithub::start(&env.store_dir, TOKEN);
    fake.set_max_per_page(3);
    let cfg =
        tier1::github::GithubConfig::new(&fake.api_url(), REPO, tier1::github::Token::new(TOKEN))
            .unwrap();
    let gh = tier1::store::github::GithubStore::new(cfg).unwrap();
    let found = gh.vault_find(&names).unwrap();
    let want: Vec<&String> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 != 0)
        .map(|(_, n)| n)
        .collect();
    assert_eq!(found.keys().collect::<Vec<_>>(), want);
    for n in &want {
        let o = &found[*n];
        let local = &store.vault_find(&[n.to_string()]).unwrap()[*n];
        assert_eq!(
            (o.size_in_bytes, &o.digest),
            (local.size_in_bytes, &local.digest)
        );
    }
    assert!(
        fake.requests_to("/releases/tags/").is_empty(),
        "no request per segment"
    );
    assert_eq!(
        fake.requests_to(&format!("/repos/{REPO}/releases")).len(),
        3
    );
}
