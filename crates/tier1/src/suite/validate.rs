//! The rules a parsed suite must keep (docs/suite.md), one check per section of the file: the top
//! level, the targets, the profiles, the default profile, the thresholds, then the runner classes
//! (`classes`) and the limits (`limits`). Each check is a pure function of the parsed values that
//! returns the first problem it finds as the dotted path of the item and what is wrong with it;
//! [`suite`] runs them in order and turns the first problem into a [`SuiteError::Rule`] naming the
//! item's line.

use super::lines::Lines;
use super::{
    Goal, Profile, Suite, SuiteError, Target, TargetKind, Thresholds, classes, format, limits,
    names, settings,
};
use std::collections::BTreeMap;

/// A rule a suite breaks: the dotted path of the item (`profiles.nightly.timeout_s`) and what is
/// wrong, with the expected and found values.
type Problem = (String, String);

/// Check `suite` section by section; the first problem is the error, at the line of its item.
pub(super) fn suite(suite: &Suite, lines: &Lines, origin: &str) -> Result<(), SuiteError> {
    let checks = || -> Result<(), Problem> {
        top_level(suite)?;
        targets(&suite.targets, &suite.profiles, lines)?;
        profiles(&suite.profiles)?;
        default_profile(&suite.default_profile, &suite.profiles)?;
        thresholds(&suite.thresholds)?;
        if let Some(problem) = classes::problem(suite) {
            return Err(problem);
        }
        limits::check(suite)
    };
    checks().map_err(|(at, message)| SuiteError::Rule {
        path: origin.to_string(),
        line: lines.line(&at),
        message: format!("{at}: {message}"),
    })
}

fn problem(at: &str, message: String) -> Problem {
    (at.to_string(), message)
}

/// The top-level fields: the suite's name, workflow and artifact prefix, at least one target, and
/// a build step whose first element names a program.
fn top_level(suite: &Suite) -> Result<(), Problem> {
    if suite.suite_name.trim().is_empty() {
        return Err(problem(
            "suite_name",
            "expected a non-empty name, found \"\"".into(),
        ));
    }
    if let Some(w) = &suite.workflow
        && let Err(m) = names::check_workflow(w)
    {
        return Err(problem("workflow", m));
    }
    if let Some(p) = &suite.artifact_prefix
        && let Err(m) = crate::artifacts::ArtifactPrefix::parse(p)
    {
        return Err(problem(
            "artifact_prefix",
            m.replace("--artifact-prefix: ", ""),
        ));
    }
    if suite.targets.is_empty() {
        return Err(problem(
            "targets",
            "expected at least one target, found none".into(),
        ));
    }
    if suite.build.first().is_some_and(|p| p.trim().is_empty()) {
        return Err(problem(
            "build",
            "expected an argv whose first element names the program, found \"\"".into(),
        ));
    }
    Ok(())
}

/// The targets, in order: each one's names, that no key and no target string appears twice (the
/// first one's line named from `lines`), then the rest of its fields.
fn targets(
    targets: &[Target],
    profiles: &BTreeMap<String, Profile>,
    lines: &Lines,
) -> Result<(), Problem> {
    let mut keys = BTreeMap::new();
    let mut strings = BTreeMap::new();
    for (i, t) in targets.iter().enumerate() {
        let at = |field: &str| format!("targets.{i}.{field}");
        target_names(t).map_err(|(field, message)| (at(&field), message))?;
        if let Some(first) = keys.insert(t.key.as_str(), i) {
            return Err((
                at("key"),
                format!(
                    "duplicate target key {:?} (first at line {})",
                    t.key,
                    lines.line(&format!("targets.{first}.key"))
                ),
            ));
        }
        if let Some(first) = strings.insert(t.target.as_str(), i) {
            return Err((
                at("target"),
                format!(
                    "duplicate target {:?} (first at line {})",
                    t.target,
                    lines.line(&format!("targets.{first}.target"))
                ),
            ));
        }
        target(t, profiles).map_err(|(field, message)| (at(&field), message))?;
    }
    Ok(())
}

/// A target's key and target string; the problem's path is the field's, within the target.
fn target_names(t: &Target) -> Result<(), Problem> {
    if !crate::fsx::is_safe_run_id(&t.key) {
        return Err(problem(
            "key",
            format!(
                "target key {:?} must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                t.key
            ),
        ));
    }
    if t.target.trim().is_empty() {
        return Err(problem(
            "target",
            format!("target {:?}: expected a non-empty `target`", t.key),
        ));
    }
    Ok(())
}

/// A target's other fields: tolerance, kind and command, goal, output format, shapes (each for a
/// profile of `profiles`) and its own settings; the problem's path is within the target.
fn target(t: &Target, profiles: &BTreeMap<String, Profile>) -> Result<(), Problem> {
    if !(t.tolerance.rtol.is_finite() && t.tolerance.atol.is_finite())
        || t.tolerance.rtol < 0.0
        || t.tolerance.atol < 0.0
    {
        return Err(problem(
            "tolerance",
            format!(
                "target {:?}: tolerance must be finite and >= 0, found rtol {} and atol {}",
                t.key, t.tolerance.rtol, t.tolerance.atol
            ),
        ));
    }
    match (t.kind, t.command.is_empty()) {
        (TargetKind::Command, true) => {
            return Err(problem(
                "command",
                format!("target {:?}: kind command needs a `command` argv", t.key),
            ));
        }
        (TargetKind::Builtin, false) => {
            return Err(problem(
                "command",
                format!(
                    "target {:?}: `command` is only allowed with kind: command",
                    t.key
                ),
            ));
        }
        _ => {}
    }
    if t.optimization_goal == Goal::Time && t.kind != TargetKind::Command {
        return Err(problem(
            "optimization_goal",
            format!(
                "target {:?}: optimization_goal time (a single benchmark) needs kind: command, found kind: builtin (built-in targets are baseline/optimized pairs)",
                t.key
            ),
        ));
    }
    format::check(t).map_err(|(field, message)| problem(field, message))?;
    for p in t.shapes.keys() {
        if !profiles.contains_key(p) {
            return Err(problem(
                &format!("shapes.{p}"),
                format!(
                    "target {:?}: shapes for unknown profile {p:?} (profiles: {:?})",
                    t.key,
                    profiles.keys().collect::<Vec<_>>()
                ),
            ));
        }
    }
    match settings::target_setting_problem(t) {
        Some(found) => Err(found),
        None => Ok(()),
    }
}

/// Every profile, in name order.
fn profiles(profiles: &BTreeMap<String, Profile>) -> Result<(), Problem> {
    for (name, p) in profiles {
        profile(name, p)
            .map_err(|(field, message)| (format!("profiles.{name}.{field}"), message))?;
    }
    Ok(())
}

/// One profile's sampling knobs; the problem's path is the field's, within the profile.
fn profile(name: &str, p: &Profile) -> Result<(), Problem> {
    if p.warmup < 5 {
        return Err(problem(
            "warmup",
            format!(
                "profile {name:?}: warmup must be at least 5, found {}",
                p.warmup
            ),
        ));
    }
    if p.iterations == 0 {
        return Err(problem(
            "iterations",
            format!("profile {name:?}: iterations must be at least 1, found 0"),
        ));
    }
    if p.max_rounds < p.iterations {
        return Err(problem(
            "max_rounds",
            format!(
                "profile {name:?}: max_rounds must be at least iterations ({}), found {}",
                p.iterations, p.max_rounds
            ),
        ));
    }
    if p.timeout_s == 0 {
        return Err(problem(
            "timeout_s",
            format!("profile {name:?}: timeout_s must be at least 1, found 0"),
        ));
    }
    if !(1..=settings::MAX_ANCHOR_PASSES).contains(&p.anchor_passes) {
        return Err(problem(
            "anchor_passes",
            format!(
                "profile {name:?}: anchor_passes must be between 1 and {}, found {}",
                settings::MAX_ANCHOR_PASSES,
                p.anchor_passes
            ),
        ));
    }
    for (field, v) in [
        ("min_sample_ms", Some(p.min_sample_ms)),
        ("precision_pct", p.precision_pct),
        ("budget_s", Some(p.budget_s)),
    ] {
        let Some(v) = v else { continue };
        if !(v.is_finite() && v > 0.0) {
            return Err(problem(
                field,
                format!("profile {name:?}: {field} must be a finite number > 0, found {v}"),
            ));
        }
    }
    Ok(())
}

/// `default_profile` names one of the profiles, when there are any.
fn default_profile(name: &str, profiles: &BTreeMap<String, Profile>) -> Result<(), Problem> {
    if !profiles.is_empty() && !profiles.contains_key(name) {
        return Err(problem(
            "default_profile",
            format!(
                "default_profile {:?} is not among the profiles {:?}",
                name,
                profiles.keys().collect::<Vec<_>>()
            ),
        ));
    }
    Ok(())
}

/// The thresholds and detection settings.
fn thresholds(t: &Thresholds) -> Result<(), Problem> {
    for (name, v) in t.numbers() {
        if !v.is_finite() || v < 0.0 {
            return Err((
                format!("thresholds.{name}"),
                format!("expected a finite number >= 0, found {v}"),
            ));
        }
    }
    if !(t.alpha > 0.0 && t.alpha < 1.0) {
        return Err(problem(
            "thresholds.alpha",
            format!(
                "expected a number between 0 and 1 (exclusive), found {}",
                t.alpha
            ),
        ));
    }
    if t.prior_noise_pct <= 0.0 {
        return Err(problem(
            "thresholds.prior_noise_pct",
            format!("expected a number > 0, found {}", t.prior_noise_pct),
        ));
    }
    if t.history_window < 2 {
        return Err(problem(
            "thresholds.history_window",
            format!("expected at least 2, found {}", t.history_window),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded suite's `cpu` profile, changed by `edit`.
    fn cpu_profile(edit: fn(&mut Profile)) -> Profile {
        let mut p = Suite::embedded().profile("cpu").unwrap().clone();
        edit(&mut p);
        p
    }

    /// The problem a row expects: its path and message, or none.
    type Want = Option<(&'static str, &'static str)>;
    /// A table row: what it is, how it changes the valid value, what the check says.
    type Row<T> = (&'static str, fn(&mut T), Want);

    fn expect(found: Result<(), Problem>, want: Want, row: &str) {
        let found = found.err();
        let want = want.map(|(at, m)| (at.to_string(), m.to_string()));
        assert_eq!(found, want, "row {row:?}");
    }

    #[test]
    fn profile_rows() {
        let rows: [Row<Profile>; 9] = [
            ("the embedded cpu profile", |_| {}, None),
            (
                "four warm-ups",
                |p| p.warmup = 4,
                Some((
                    "warmup",
                    "profile \"n\": warmup must be at least 5, found 4",
                )),
            ),
            (
                "no iterations",
                |p| p.iterations = 0,
                Some((
                    "iterations",
                    "profile \"n\": iterations must be at least 1, found 0",
                )),
            ),
            (
                "fewer rounds than iterations",
                |p| (p.iterations, p.max_rounds) = (10, 9),
                Some((
                    "max_rounds",
                    "profile \"n\": max_rounds must be at least iterations (10), found 9",
                )),
            ),
            (
                "as many rounds as iterations",
                |p| (p.iterations, p.max_rounds) = (10, 10),
                None,
            ),
            (
                "no timeout",
                |p| p.timeout_s = 0,
                Some((
                    "timeout_s",
                    "profile \"n\": timeout_s must be at least 1, found 0",
                )),
            ),
            (
                "ten anchor passes",
                |p| p.anchor_passes = 10,
                Some((
                    "anchor_passes",
                    "profile \"n\": anchor_passes must be between 1 and 9, found 10",
                )),
            ),
            (
                "a zero precision",
                |p| p.precision_pct = Some(0.0),
                Some((
                    "precision_pct",
                    "profile \"n\": precision_pct must be a finite number > 0, found 0",
                )),
            ),
            (
                "an infinite budget",
                |p| p.budget_s = f64::INFINITY,
                Some((
                    "budget_s",
                    "profile \"n\": budget_s must be a finite number > 0, found inf",
                )),
            ),
        ];
        for (row, edit, want) in rows {
            expect(profile("n", &cpu_profile(edit)), want, row);
        }
    }

    #[test]
    fn threshold_rows() {
        let rows: [Row<Thresholds>; 7] = [
            ("the defaults", |_| {}, None),
            (
                "a negative floor",
                |t| t.min_optimized_time_delta_ms = -1.0,
                Some((
                    "thresholds.min_optimized_time_delta_ms",
                    "expected a finite number >= 0, found -1",
                )),
            ),
            (
                "a NaN speedup threshold",
                |t| t.speedup_regression_pct = f64::NAN,
                Some((
                    "thresholds.speedup_regression_pct",
                    "expected a finite number >= 0, found NaN",
                )),
            ),
            (
                "alpha 1",
                |t| t.alpha = 1.0,
                Some((
                    "thresholds.alpha",
                    "expected a number between 0 and 1 (exclusive), found 1",
                )),
            ),
            (
                "no prior noise",
                |t| t.prior_noise_pct = 0.0,
                Some((
                    "thresholds.prior_noise_pct",
                    "expected a number > 0, found 0",
                )),
            ),
            (
                "a window of one run",
                |t| t.history_window = 1,
                Some(("thresholds.history_window", "expected at least 2, found 1")),
            ),
            ("a window of two runs", |t| t.history_window = 2, None),
        ];
        for (row, edit, want) in rows {
            let mut t = Thresholds::default();
            edit(&mut t);
            expect(thresholds(&t), want, row);
        }
    }

    #[test]
    fn top_level_rows() {
        let rows: [Row<Suite>; 5] = [
            ("the embedded suite", |_| {}, None),
            (
                "a blank name",
                |s| s.suite_name = " ".into(),
                Some(("suite_name", "expected a non-empty name, found \"\"")),
            ),
            (
                "no targets",
                |s| s.targets.clear(),
                Some(("targets", "expected at least one target, found none")),
            ),
            (
                "a build step without a program",
                |s| s.build = vec![String::new(), "x".into()],
                Some((
                    "build",
                    "expected an argv whose first element names the program, found \"\"",
                )),
            ),
            ("a build step", |s| s.build = vec!["make".into()], None),
        ];
        for (row, edit, want) in rows {
            let mut s = Suite::embedded();
            edit(&mut s);
            expect(top_level(&s), want, row);
        }
    }

    #[test]
    fn a_default_profile_must_be_one_of_the_profiles() {
        let profiles = Suite::embedded().profiles;
        assert_eq!(default_profile("cpu", &profiles), Ok(()));
        assert_eq!(default_profile("gone", &BTreeMap::new()), Ok(()));
        let (at, message) = default_profile("gone", &profiles).unwrap_err();
        assert_eq!(at, "default_profile");
        assert!(
            message.starts_with("default_profile \"gone\" is not among the profiles [\"cpu\""),
            "{message}"
        );
    }
}
