//! The human ending of a run (`tier1-run`, `tier1-nightly`; docs/tier1-run.md "The ending"): one
//! table of the compared targets (target, verdict, change, detectable change, decided by: the
//! history test, side by side or the reference rules) and one line that says what the exit code
//! means. Text for stderr at the end of the run, Markdown at the head of the step summary.

use super::verdicts::TargetVerdict;
use crate::exit::Exit;
use crate::text::fmt_sig;
use std::fmt::Write as _;

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    /// Target key.
    pub(crate) key: String,
    /// `regressed`, `improved`, `unchanged` or `unknown`.
    pub(crate) verdict: String,
    /// The metric that moved most toward a worsening (`speedup -4.1 %`, `time +3.2 %`); `-`
    /// without a tested metric.
    pub(crate) change: String,
    /// The smallest slowdown caught in 95 % of nights (`12.4 %`), `-` when none was stated.
    pub(crate) detectable: String,
    /// `history`, `side by side (x1.098 time)` or `reference`.
    pub(crate) decided_by: String,
    /// `overloaded` when the machine was, else empty.
    pub(crate) note: String,
}

/// The table and the exit line of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Ending {
    pub(crate) rows: Vec<Row>,
    /// Why there is no table (no anchor to compare with), when there is none.
    pub(crate) no_comparison: Option<String>,
    /// A sentence that must be seen below the table (the machine was overloaded ...).
    pub(crate) notes: Vec<String>,
}

/// What the history test's method is called in the table.
fn method(decided_by: &str) -> &'static str {
    match decided_by {
        "side_by_side" => "side by side",
        "reference" => "reference",
        _ => "history",
    }
}

impl Ending {
    /// The ending of the compared `targets` (empty without an anchor: `baseline_run_id`).
    pub(crate) fn of(targets: &[TargetVerdict], baseline_run_id: Option<&str>) -> Ending {
        let rows = targets
            .iter()
            .map(|t| Row {
                key: t.key.clone(),
                verdict: t.verdict.clone(),
                change: change(t),
                detectable: t
                    .detectable_pct
                    .map_or_else(|| "-".into(), |d| format!("{} %", fmt_sig(d, 3))),
                decided_by: method(&t.decided_by).into(),
                note: [
                    t.overloaded.as_ref().map(|_| "overloaded"),
                    t.held_by_floor.as_ref().map(|_| "held by the floor"),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(", "),
            })
            .collect();
        let mut notes: Vec<String> = overload_note(targets).into_iter().collect();
        notes.extend(
            targets
                .iter()
                .filter_map(|t| Some(format!("{}: {}", t.key, t.held_by_floor.as_ref()?))),
        );
        Ending {
            rows,
            no_comparison: baseline_run_id.is_none().then(|| {
                "no anchor yet: this run is measured, not compared (it may become the first anchor)"
                    .into()
            }),
            notes,
        }
    }

    /// The table as aligned text, then the notes and the exit line.
    pub(crate) fn text(&self, exit: Exit, gate: Option<&str>) -> String {
        let mut out = String::new();
        if let Some(why) = &self.no_comparison {
            let _ = writeln!(out, "{why}");
        } else {
            let head = [
                "target",
                "verdict",
                "change",
                "detectable",
                "decided by",
                "",
            ];
            let cells: Vec<[&str; 6]> = self
                .rows
                .iter()
                .map(|r| {
                    [
                        r.key.as_str(),
                        r.verdict.as_str(),
                        r.change.as_str(),
                        r.detectable.as_str(),
                        r.decided_by.as_str(),
                        r.note.as_str(),
                    ]
                })
                .collect();
            let width = |i: usize| {
                cells
                    .iter()
                    .map(|c| c[i].chars().count())
                    .chain([head[i].len()])
                    .max()
                    .unwrap_or(0)
            };
            let widths: Vec<usize> = (0..6).map(width).collect();
            for line in std::iter::once(&head).chain(cells.iter()) {
                let mut l = String::new();
                for (i, cell) in line.iter().enumerate() {
                    let _ = write!(l, "{cell:<w$}  ", w = widths[i]);
                }
                let _ = writeln!(out, "{}", l.trim_end());
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "{n}");
        }
        let _ = writeln!(out, "{}", exit_line(exit, gate));
        out
    }

    /// The table as Markdown, then the notes and the exit line (the head of the step summary).
    pub(crate) fn markdown(&self, exit: Exit, gate: Option<&str>) -> String {
        let mut out = String::new();
        if let Some(why) = &self.no_comparison {
            let _ = writeln!(out, "{why}\n");
        } else {
            out.push_str(
                "| Target | Verdict | Change | Detectable | Decided by |\n|---|---|---|---:|---|\n",
            );
            for r in &self.rows {
                let note = if r.note.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", r.note)
                };
                let _ = writeln!(
                    out,
                    "| `{}` | {}{note} | {} | {} | {} |",
                    r.key, r.verdict, r.change, r.detectable, r.decided_by
                );
            }
            out.push('\n');
        }
        for n in &self.notes {
            let _ = writeln!(out, "- {n}");
        }
        let _ = writeln!(out, "**{}**\n", exit_line(exit, gate));
        out
    }
}

/// One sentence for every target measured while the machine was overloaded: a target's own
/// sentence when it is the only one, else `the machine was overloaded while 2 targets were
/// measured (a, b): load 2.1 on 2 cores (a); load 6.3 on 2 cores (b); rerun on a quieter
/// machine` (each target's figures, from [`crate::history::overload::Overload::note`]).
fn overload_note(targets: &[TargetVerdict]) -> Option<String> {
    use crate::history::overload::{NOTE_HEAD as HEAD, NOTE_TAIL as TAIL};
    let hit: Vec<(&str, &str)> = targets
        .iter()
        .filter_map(|t| Some((t.key.as_str(), t.overloaded.as_deref()?)))
        .collect();
    match hit.as_slice() {
        [] => None,
        [(_, one)] => Some((*one).to_string()),
        many => {
            let keys: Vec<&str> = many.iter().map(|(k, _)| *k).collect();
            let figures: Vec<String> = many
                .iter()
                .map(|(k, n)| {
                    let f = n.strip_prefix(HEAD).unwrap_or(n);
                    format!("{} ({k})", f.strip_suffix(TAIL).unwrap_or(f))
                })
                .collect();
            Some(format!(
                "the machine was overloaded while {} targets were measured ({}): {}{TAIL}",
                many.len(),
                keys.join(", "),
                figures.join("; ")
            ))
        }
    }
}

/// The metric that moved most toward a worsening, as `speedup -4.1 %` or `time +3.2 %`.
fn change(t: &TargetVerdict) -> String {
    t.metrics
        .iter()
        .map(|m| {
            let worsening = if m.metric == "speedup" {
                -m.change_pct
            } else {
                m.change_pct
            };
            let name = if m.metric == "speedup" {
                "speedup"
            } else {
                "time"
            };
            (worsening, format!("{name} {:+.1} %", m.change_pct))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or_else(|| "-".into(), |(_, s)| s)
}

/// One line that says what the exit code means: `exit 0: the gate passed`, `exit 1: the gate
/// failed: <why>`, else the code's meaning (docs/exit-codes.md).
pub(crate) fn exit_line(exit: Exit, gate: Option<&str>) -> String {
    match (exit, gate) {
        (Exit::Ok, _) => format!(
            "exit {}: the gate passed (no regression blocks it; unknown targets pass by the suite's on_unknown rule)",
            exit.code()
        ),
        (Exit::Gate, Some(why)) => format!("exit {}: the {why}", exit.code()),
        _ => format!("exit {}: {}", exit.code(), exit.meaning()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::verdicts::MetricVerdict;

    fn metric(name: &str, change_pct: f64) -> MetricVerdict {
        MetricVerdict {
            metric: name.into(),
            anchor: 1.0,
            current: 1.0,
            change_pct,
            threshold_pct: Some(5.0),
            detectable_pct: 12.0,
            p_value: 0.5,
            verdict: Some("unchanged".into()),
            held_by_floor: false,
        }
    }

    fn target(key: &str, verdict: &str, by: &str, metrics: Vec<MetricVerdict>) -> TargetVerdict {
        TargetVerdict {
            key: key.into(),
            target: format!("c:{key}"),
            verdict: verdict.into(),
            detectable_pct: Some(12.43),
            decided_by: by.into(),
            note: None,
            metrics,
            side_by_side: None,
            overloaded: None,
            held_by_floor: None,
        }
    }

    /// Issue 37: the end of a night was a 1.8 KB JSON line; a person wants which target, what
    /// change, what it could detect and who decided, and what the exit code means.
    #[test]
    fn the_ending_is_a_table_and_an_exit_line() {
        let mut slow = target(
            "gradient_fusion",
            "regressed",
            "side_by_side",
            vec![metric("speedup", -8.0), metric("optimized_latency", 9.5)],
        );
        slow.overloaded = Some(
            "the machine was overloaded: load 8.9 on 2 cores; rerun on a quieter machine".into(),
        );
        let targets = vec![
            target(
                "block_scaling",
                "unchanged",
                "statistical",
                vec![metric("speedup", -1.0), metric("optimized_latency", 0.4)],
            ),
            slow,
            TargetVerdict {
                detectable_pct: None,
                ..target("kv_standard", "unchanged", "reference", Vec::new())
            },
        ];
        let e = Ending::of(&targets, Some("anchor"));
        let text = e.text(Exit::Gate, Some("gate failed: 1 regression"));
        let lines: Vec<&str> = text.lines().collect();
        let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            words(lines[0]),
            "target verdict change detectable decided by"
        );
        assert_eq!(
            words(lines[1]),
            "block_scaling unchanged speedup -1.0 % 12.4 % history"
        );
        assert_eq!(
            words(lines[2]),
            "gradient_fusion regressed time +9.5 % 12.4 % side by side overloaded"
        );
        assert_eq!(words(lines[3]), "kv_standard unchanged - - reference");
        // The columns line up: every row's verdict starts where the header's does.
        let at = lines[0].find("verdict").unwrap();
        assert!(
            lines[1..4]
                .iter()
                .all(|l| l[at..].starts_with(|c: char| c.is_alphabetic()))
        );
        assert!(lines[4].starts_with("the machine was overloaded: load 8.9 on 2 cores"));
        assert_eq!(lines[5], "exit 1: the gate failed: 1 regression");
        let md = e.markdown(Exit::Ok, None);
        assert!(md.starts_with("| Target | Verdict | Change | Detectable | Decided by |"));
        assert!(md.contains("| `gradient_fusion` | regressed (overloaded) | time +9.5 % | 12.4 % | side by side |"), "{md}");
        assert!(md.contains("**exit 0: the gate passed"), "{md}");
        let first = Ending::of(&[], None).text(Exit::Ok, None);
        assert!(first.starts_with("no anchor yet"), "{first}");
        assert!(
            Ending::default()
                .text(Exit::Invalid, None)
                .contains("exit 3: ")
        );
    }

    /// Issue 43: a target whose significant change the floor held says so in its row and in
    /// one line below the table.
    #[test]
    fn a_row_held_by_the_floor_says_so() {
        let held = TargetVerdict {
            held_by_floor: Some(
                "time +29.3 % (0.0331 -> 0.0428 ms) is significant but under the 0.05 ms floor"
                    .into(),
            ),
            ..target(
                "cc_primes",
                "unchanged",
                "statistical",
                vec![metric("optimized_latency", 29.3)],
            )
        };
        let e = Ending::of(&[held], Some("anchor"));
        let text = e.text(Exit::Ok, None);
        let lines: Vec<&str> = text.lines().collect();
        let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            words(lines[1]),
            "cc_primes unchanged time +29.3 % 12.4 % history held by the floor"
        );
        assert!(
            lines[2].starts_with("cc_primes: time +29.3 % (0.0331 -> 0.0428 ms) is significant but under the 0.05 ms floor"),
            "{text}"
        );
    }

    /// Issue 37: a crowded night printed one overload sentence per target; it is one sentence
    /// naming the targets and the range of figures.
    #[test]
    fn overload_is_said_once_for_every_target_it_touched() {
        let note = |load: &str| {
            Some(format!(
                "the machine was overloaded: load {load} on 2 cores; rerun on a quieter machine"
            ))
        };
        let targets: Vec<TargetVerdict> = [("a", "2.1"), ("b", "6.3"), ("c", "")]
            .into_iter()
            .map(|(k, load)| TargetVerdict {
                overloaded: (!load.is_empty()).then(|| note(load)).flatten(),
                ..target(k, "unknown", "statistical", Vec::new())
            })
            .collect();
        let e = Ending::of(&targets, Some("anchor"));
        assert_eq!(e.notes.len(), 1, "{:?}", e.notes);
        assert!(
            e.notes[0]
                .starts_with("the machine was overloaded while 2 targets were measured (a, b): "),
            "{:?}",
            e.notes
        );
        assert!(e.notes[0].contains("load 2.1 on 2 cores"), "{:?}", e.notes);
        assert!(
            e.notes[0].ends_with("rerun on a quieter machine"),
            "{:?}",
            e.notes
        );
        // One overloaded target keeps its own sentence.
        let e = Ending::of(&targets[..1], Some("anchor"));
        assert_eq!(e.notes, [note("2.1").unwrap()]);
    }
}
