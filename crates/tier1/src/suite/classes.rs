//! Runner classes and shards (docs/sharding.md): the suite's `shards` count and its
//! `runner_classes` (a runner label set, the expected device name and count, a profile, an own
//! shard count), validated so that a class name always forms a valid artifact prefix
//! `<prefix>-<class>` and names a profile of the suite.

use super::Suite;
use crate::artifacts::ArtifactPrefix;
use serde::{Deserialize, Serialize};

/// Most shards one night may be split over (one target per shard at most).
pub(crate) const MAX_SHARDS: u32 = super::limits::MAX_TARGETS as u32;
/// Most runner classes of one suite.
pub(crate) const MAX_CLASSES: usize = 16;
/// Most labels of one class.
pub(crate) const MAX_LABELS: usize = 32;
/// Most devices a class may expect.
pub(crate) const MAX_DEVICES: u32 = 64;
/// Longest class name, in bytes.
pub(crate) const MAX_CLASS_NAME_BYTES: usize = 32;

/// One runner class (`runner_classes.<name>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunnerClass {
    /// The labels every runner of the class carries (`runs-on` of its jobs; `tier1-attest`).
    pub(crate) labels: Vec<String>,
    /// The exact name every visible GPU must have (`tier1-preflight`); absent: no GPU check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) device_name: Option<String>,
    /// The exact number of GPUs (`tier1-preflight`); absent: at least one when `device_name` is
    /// set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) device_count: Option<u32>,
    /// The profile the class measures with.
    pub(crate) profile: String,
    /// Shards a night of this class is split over (over the suite's `shards`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shards: Option<u32>,
}

impl RunnerClass {
    /// The labels.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }
    /// The expected device name, if any.
    pub fn device_name(&self) -> Option<&str> {
        self.device_name.as_deref()
    }
    /// The expected device count, if any.
    pub fn device_count(&self) -> Option<u32> {
        self.device_count
    }
    /// The class's profile.
    pub fn profile(&self) -> &str {
        &self.profile
    }
}

/// Whether `name` is a valid class name: 1-32 characters of `[a-z0-9_.-]`, starting with a
/// letter or digit, not ending in `-`.
fn name_problem(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_CLASS_NAME_BYTES
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && !name.ends_with('-')
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-')
        });
    (!ok).then(|| {
        format!(
            "expected a class name of 1-{MAX_CLASS_NAME_BYTES} characters of [a-z0-9_.-] starting with a letter or digit, found {name:?}"
        )
    })
}

/// The artifact prefix of class `class` under the base prefix `base`: `<base>-<class>` (the
/// unnamed class keeps `base`).
pub fn class_prefix(base: &ArtifactPrefix, class: Option<&str>) -> Result<ArtifactPrefix, String> {
    match class {
        None => Ok(base.clone()),
        Some(c) => ArtifactPrefix::parse(&format!("{base}-{c}"))
            .map_err(|m| format!("runner class {c:?}: its artifact prefix is invalid: {m}")),
    }
}

/// The first problem of the suite's `shards` and `runner_classes`: the field (a dotted path)
/// and the message.
pub(crate) fn problem(suite: &Suite) -> Option<(String, String)> {
    let shards = |at: String, n: u32| {
        (!(1..=MAX_SHARDS).contains(&n))
            .then(|| (at, format!("expected 1 to {MAX_SHARDS} shards, found {n}")))
    };
    if let Some(p) = suite.shards.and_then(|n| shards("shards".into(), n)) {
        return Some(p);
    }
    if suite.runner_classes.len() > MAX_CLASSES {
        return Some((
            "runner_classes".into(),
            format!(
                "expected at most {MAX_CLASSES} runner classes, found {}",
                suite.runner_classes.len()
            ),
        ));
    }
    let base = match suite.artifact_prefix.as_deref().map(ArtifactPrefix::parse) {
        Some(Ok(p)) => p,
        _ => ArtifactPrefix::default(),
    };
    for (name, c) in &suite.runner_classes {
        let at = |f: &str| format!("runner_classes.{name}.{f}");
        if let Some(m) = name_problem(name) {
            return Some((format!("runner_classes.{name}"), m));
        }
        if let Err(m) = class_prefix(&base, Some(name)) {
            return Some((format!("runner_classes.{name}"), m));
        }
        if c.labels.is_empty() || c.labels.len() > MAX_LABELS {
            return Some((
                at("labels"),
                format!(
                    "class {name:?}: expected 1 to {MAX_LABELS} runner labels, found {}",
                    c.labels.len()
                ),
            ));
        }
        if let Some(l) = c.labels.iter().find(|l| {
            l.trim().is_empty()
                || l.len() > 64
                || l.contains(',')
                || l.chars().any(char::is_control)
        }) {
            return Some((
                at("labels"),
                format!(
                    "class {name:?}: expected labels of 1-64 printable characters without commas, found {l:?}"
                ),
            ));
        }
        if let Some(d) = &c.device_name
            && (d.trim().is_empty() || d.len() > 128 || d.chars().any(char::is_control))
        {
            return Some((
                at("device_name"),
                format!(
                    "class {name:?}: expected a device name of 1-128 printable characters, found {d:?}"
                ),
            ));
        }
        if let Some(n) = c.device_count
            && !(1..=MAX_DEVICES).contains(&n)
        {
            return Some((
                at("device_count"),
                format!("class {name:?}: expected 1 to {MAX_DEVICES} devices, found {n}"),
            ));
        }
        if !suite.profiles.is_empty() && !suite.profiles.contains_key(&c.profile) {
            return Some((
                at("profile"),
                format!(
                    "class {name:?}: profile {:?} is not among the profiles {:?}",
                    c.profile,
                    suite.profiles.keys().collect::<Vec<_>>()
                ),
            ));
        }
        if let Some(p) = c.shards.and_then(|n| shards(at("shards"), n)) {
            return Some(p);
        }
    }
    None
}

impl Suite {
    /// The runner class `name`, or why it cannot be used (not declared).
    pub fn runner_class(&self, name: &str) -> Result<&RunnerClass, String> {
        self.runner_classes.get(name).ok_or_else(|| {
            format!(
                "--runner-class {name:?}: the suite {:?} declares no such runner class (declared: {:?})",
                self.suite_name,
                self.runner_classes.keys().collect::<Vec<_>>()
            )
        })
    }

    /// The shard count of a night of `class`: the class's `shards`, else the suite's, else 1.
    pub(crate) fn shards_for(&self, class: Option<&str>) -> u32 {
        class
            .and_then(|c| self.runner_classes.get(c))
            .and_then(|c| c.shards)
            .or(self.shards)
            .unwrap_or(1)
    }

    /// The profile a run of `class` must use: the class's; with `asked` another one, why not.
    pub(crate) fn class_profile(
        &self,
        class: Option<&str>,
        asked: Option<&str>,
    ) -> Result<Option<String>, String> {
        let Some(name) = class else {
            return Ok(asked.map(str::to_string));
        };
        let c = self.runner_class(name)?;
        match asked {
            Some(p) if p != c.profile => Err(format!(
                "--profile {p:?}: runner class {name:?} measures with profile {:?}",
                c.profile
            )),
            _ => Ok(Some(c.profile.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::EMBEDDED_TIER1_YAML;

    fn with_classes(extra: &str) -> Result<Suite, crate::suite::SuiteError> {
        Suite::parse(&format!("{EMBEDDED_TIER1_YAML}\n{extra}"), "t.yaml")
    }

    const TWO: &str = "shards: 2\nrunner_classes:\n  b200:\n    labels: [self-hosted, gpu, b200]\n    device_name: NVIDIA B200\n    device_count: 8\n    profile: minimal\n    shards: 4\n  cpu:\n    labels: [ubuntu-latest]\n    profile: cpu\n";

    #[test]
    fn classes_and_shards_parse_and_resolve() {
        let s = with_classes(TWO).unwrap();
        assert_eq!(s.shards_for(None), 2);
        assert_eq!(s.shards_for(Some("b200")), 4);
        assert_eq!(s.shards_for(Some("cpu")), 2);
        let b = s.runner_class("b200").unwrap();
        assert_eq!(b.device_name(), Some("NVIDIA B200"));
        assert_eq!(b.device_count(), Some(8));
        assert_eq!(b.labels(), ["self-hosted", "gpu", "b200"]);
        assert_eq!(
            s.class_profile(Some("cpu"), None).unwrap().as_deref(),
            Some("cpu")
        );
        let e = s.class_profile(Some("cpu"), Some("minimal")).unwrap_err();
        assert!(e.contains("measures with profile \"cpu\""), "{e}");
        let e = s.runner_class("h100").unwrap_err();
        assert!(
            e.contains("no such runner class") && e.contains("b200"),
            "{e}"
        );
        assert_eq!(Suite::embedded().shards_for(None), 1);
        assert_eq!(
            class_prefix(&ArtifactPrefix::default(), Some("b200"))
                .unwrap()
                .to_string(),
            "tier1-b200"
        );
    }

    #[test]
    fn the_embedded_digest_is_unchanged_without_classes() {
        // Absent fields are not serialized: every existing suite keeps its config digest.
        let plain = Suite::embedded();
        let v = serde_json::to_value(&plain).unwrap();
        assert!(v.get("shards").is_none() && v.get("runner_classes").is_none());
        assert_ne!(
            with_classes(TWO).unwrap().config_digest(),
            plain.config_digest()
        );
    }

    #[test]
    fn bad_classes_are_refused_naming_the_field() {
        for (extra, want) in [
            ("shards: 0\n", "shards: expected 1 to 64 shards, found 0"),
            ("shards: 65\n", "found 65"),
            (
                "runner_classes:\n  B200:\n    labels: [x]\n    profile: cpu\n",
                "runner_classes.B200: expected a class name",
            ),
            (
                "runner_classes:\n  history:\n    labels: [x]\n    profile: cpu\n",
                "its artifact prefix is invalid",
            ),
            (
                "runner_classes:\n  a:\n    labels: []\n    profile: cpu\n",
                "runner_classes.a.labels: class \"a\": expected 1 to 32 runner labels, found 0",
            ),
            (
                "runner_classes:\n  a:\n    labels: ['x,y']\n    profile: cpu\n",
                "without commas",
            ),
            (
                "runner_classes:\n  a:\n    labels: [x]\n    profile: nightly\n",
                "profile \"nightly\" is not among the profiles",
            ),
            (
                "runner_classes:\n  a:\n    labels: [x]\n    profile: cpu\n    device_count: 0\n",
                "expected 1 to 64 devices, found 0",
            ),
            (
                "runner_classes:\n  a:\n    labels: [x]\n    profile: cpu\n    shards: 0\n",
                "runner_classes.a.shards",
            ),
            (
                "runner_classes:\n  a:\n    labels: [x]\n    profile: cpu\n    colour: red\n",
                "colour",
            ),
        ] {
            let e = with_classes(extra).unwrap_err().to_string();
            assert!(e.contains(want), "{extra}: {e}");
        }
    }
}
