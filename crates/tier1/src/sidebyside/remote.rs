//! The checkout's remote and the job's credentials for it, as `actions/checkout` sets them up:
//! the remote is `origin` (the only one a checkout makes), and the token travels as the
//! `http.<server origin>/.extraheader` `AUTHORIZATION: basic base64(x-access-token:<token>)` that
//! actions/checkout's `src/git-auth-helper.ts` writes (actions/checkout@3d3c42e5, v7.0.1) — but in
//! the child's environment (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`, git's
//! "command line" scope), so it never reaches an argument list, a log or `.git/config`. An empty
//! value first resets a header the checkout persisted (`persist-credentials: true`, its default),
//! so exactly one `Authorization` header is sent; without a token the persisted one (if any) is
//! used as is. The header is scoped to the server's origin: git never sends it to another host.

use crate::sidebyside::git::git;
use std::path::Path;

/// The name actions/checkout gives the remote (`git remote add origin`, `src/git-source-provider.ts`).
pub(crate) const CHECKOUT_REMOTE: &str = "origin";

/// The server git serves the repository from, when `GITHUB_SERVER_URL` is unset (as
/// actions/checkout's `src/url-helper.ts` defaults it).
pub(crate) const DEFAULT_SERVER_URL: &str = "https://github.com";

/// What a fetch may use: the job's token and the server it belongs to.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Access {
    /// `GITHUB_TOKEN`, when set and not empty.
    pub(crate) token: Option<String>,
    /// `scheme://host[:port]` of `GITHUB_SERVER_URL` (default [`DEFAULT_SERVER_URL`]).
    pub(crate) server_origin: String,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("token", &self.token.as_ref().map(|_| crate::text::REDACTED))
            .field("server_origin", &self.server_origin)
            .finish()
    }
}

impl Access {
    /// From `GITHUB_TOKEN` and `GITHUB_SERVER_URL`; the token is registered for redaction.
    pub(crate) fn from_env() -> Access {
        let token = std::env::var("GITHUB_TOKEN")
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        if let Some(t) = &token {
            crate::text::register_secret(t);
        }
        let server = std::env::var("GITHUB_SERVER_URL")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_SERVER_URL.to_string());
        Access {
            token,
            server_origin: origin_of(&server),
        }
    }

    /// The environment that gives git the token for the server's origin (empty without a token),
    /// appended after any `GIT_CONFIG_COUNT` entries the environment already has.
    pub(crate) fn git_env(&self) -> Vec<(String, String)> {
        let Some(token) = &self.token else {
            return Vec::new();
        };
        let header = format!(
            "AUTHORIZATION: basic {}",
            base64(format!("x-access-token:{token}").as_bytes())
        );
        crate::text::register_secret(&header["AUTHORIZATION: basic ".len()..]);
        let first: usize = std::env::var("GIT_CONFIG_COUNT")
            .ok()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        let key = format!("http.{}/.extraheader", self.server_origin);
        let mut env = vec![("GIT_CONFIG_COUNT".to_string(), (first + 2).to_string())];
        for (i, value) in [String::new(), header].into_iter().enumerate() {
            env.push((format!("GIT_CONFIG_KEY_{}", first + i), key.clone()));
            env.push((format!("GIT_CONFIG_VALUE_{}", first + i), value));
        }
        env
    }
}

/// `scheme://host[:port]` of `url` (the whole string when it does not parse).
fn origin_of(url: &str) -> String {
    match url::Url::parse(url.trim()) {
        Ok(u) if u.has_host() => u.origin().ascii_serialization(),
        _ => url.trim().trim_end_matches('/').to_string(),
    }
}

/// The remote of `repo` to fetch from: `origin`, else the only remote; None when it has none (or
/// several, none of them `origin`).
pub(crate) fn checkout_remote(repo: &Path) -> Option<String> {
    let names = git(repo, &["remote"]).ok()?;
    let names: Vec<&str> = names
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if names.contains(&CHECKOUT_REMOTE) {
        return Some(CHECKOUT_REMOTE.to_string());
    }
    match names.as_slice() {
        [only] => Some((*only).to_string()),
        _ => None,
    }
}

/// The URL of `remote` in `repo`, for messages (redacted by the caller).
pub(crate) fn remote_url(repo: &Path, remote: &str) -> String {
    git(repo, &["remote", "get-url", "--", remote])
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| remote.to_string())
}

/// Standard base64 with padding (RFC 4648 §4), as `Buffer.toString('base64')` gives it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain:?}");
        }
    }

    #[test]
    fn the_header_is_scoped_to_the_server_origin_and_resets_a_persisted_one() {
        let a = Access {
            token: Some("ghs_abcdef123456".into()),
            server_origin: origin_of("https://github.example:8443/some/path/"),
        };
        let env = a.git_env();
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let first: usize = std::env::var("GIT_CONFIG_COUNT")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let key = |i: usize| format!("GIT_CONFIG_KEY_{}", first + i);
        let value = |i: usize| format!("GIT_CONFIG_VALUE_{}", first + i);
        assert_eq!(
            get("GIT_CONFIG_COUNT"),
            Some((first + 2).to_string().as_str())
        );
        for i in 0..2 {
            assert_eq!(
                get(&key(i)),
                Some("http.https://github.example:8443/.extraheader")
            );
        }
        assert_eq!(
            get(&value(0)),
            Some(""),
            "the persisted header is reset first"
        );
        assert_eq!(
            get(&value(1)),
            Some(
                format!(
                    "AUTHORIZATION: basic {}",
                    base64(b"x-access-token:ghs_abcdef123456")
                )
                .as_str()
            )
        );
        let none = Access {
            token: None,
            server_origin: "https://github.com".into(),
        };
        assert!(none.git_env().is_empty());
        assert!(!format!("{a:?}").contains("ghs_abcdef123456"));
    }
}
