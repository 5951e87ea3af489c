//! What a target was measured with (`measurement_settings` of a summary row): the settings that
//! change what is measured (the command and its tool's flags, the format and benchmark names,
//! the shapes, warm-up and sample length, the suite's build step), each as text. A night whose
//! settings differ from the anchor's cannot be compared with it: the comparison says which
//! setting changed, from what to what, and asks for a new anchor (docs/suite.md, "What forces a
//! new anchor"). Rows written before this record existed carry none and are compared as before.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Longest value kept as text; a longer one is kept as its SHA-256 (`sha256:<hex>`), so a
/// summary stays small whatever the command.
pub(crate) const MAX_VALUE_BYTES: usize = 512;

/// Setting name to value, as recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct MeasurementSettings(pub(crate) BTreeMap<String, String>);

/// One setting that differs between the anchor's row and the current one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SettingChange {
    /// The setting (`command`, `shapes`, ...).
    pub(crate) setting: String,
    /// The anchor's value.
    pub(crate) anchor: String,
    /// This run's value.
    pub(crate) current: String,
}

impl MeasurementSettings {
    /// Record `value` under `name` (its digest when longer than [`MAX_VALUE_BYTES`]).
    pub(crate) fn set(&mut self, name: &str, value: String) {
        let value = if value.len() > MAX_VALUE_BYTES {
            format!(
                "sha256:{}",
                crate::digest::Digest::of_bytes(value.as_bytes()).hex()
            )
        } else {
            value
        };
        self.0.insert(name.to_string(), value);
    }

    /// The settings recorded in both whose values differ, by name (settings only one of them
    /// records, from another version of tier1, are not compared).
    pub(crate) fn changes_from(&self, anchor: &MeasurementSettings) -> Vec<SettingChange> {
        self.0
            .iter()
            .filter_map(|(name, current)| {
                let before = anchor.0.get(name)?;
                (before != current).then(|| SettingChange {
                    setting: name.clone(),
                    anchor: before.clone(),
                    current: current.clone(),
                })
            })
            .collect()
    }
}

/// The sentence a person reads: which settings changed, from what to what, and what to do.
pub(crate) fn describe(changes: &[SettingChange]) -> String {
    let each: Vec<String> = changes
        .iter()
        .map(|c| format!("{}: {} -> {}", c.setting, c.anchor, c.current))
        .collect();
    format!(
        "measurement settings changed since the anchor ({}): its figures are not comparable with the anchor's, so it is neither a regression nor a pass; make a new anchor with these settings (an accepted run: `tier1-nightly --accept --note ...`, or the promotion workflow), or restore the anchor's settings",
        each.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(pairs: &[(&str, &str)]) -> MeasurementSettings {
        let mut s = MeasurementSettings::default();
        for (k, v) in pairs {
            s.set(k, v.to_string());
        }
        s
    }

    #[test]
    fn only_settings_both_record_are_compared_and_long_values_are_digests() {
        let anchor = of(&[("command", "[\"a\", \"--r=30\"]"), ("shapes", "{}")]);
        let current = of(&[
            ("command", "[\"a\", \"--r=50\"]"),
            ("shapes", "{}"),
            ("new_setting", "x"),
        ]);
        let changes = current.changes_from(&anchor);
        assert_eq!(
            changes,
            [SettingChange {
                setting: "command".into(),
                anchor: "[\"a\", \"--r=30\"]".into(),
                current: "[\"a\", \"--r=50\"]".into(),
            }]
        );
        assert!(anchor.changes_from(&anchor).is_empty());
        let text = describe(&changes);
        assert!(
            text.starts_with(
                "measurement settings changed since the anchor (command: [\"a\", \"--r=30\"] -> [\"a\", \"--r=50\"])"
            ),
            "{text}"
        );
        let long = of(&[("command", &"x".repeat(MAX_VALUE_BYTES + 1))]);
        assert!(long.0["command"].starts_with("sha256:"), "{long:?}");
        assert_eq!(long.0["command"].len(), "sha256:".len() + 64);
        let json = serde_json::to_value(&current).unwrap();
        assert_eq!(json["shapes"], "{}");
    }
}
