//! The local main job's decisions, each a pure function of values already read:
//! [`run`](super::job::run), the chains ([`single`](super::single),
//! [`sharded`](super::sharded)) and [`publication`](super::publication) read the store and run
//! the steps, these decide what their results mean.
//!
//! | step | decision |
//! |---|---|
//! | request | [`shard_count`]: `--shards` (1 to 64), else the suite's or class's count when more than 1 |
//! | store | [`first_anchor`]: an empty store with `--auto-bootstrap` makes this run the first anchor |
//! | request | [`requester_needs_accept`]: `--requester` only with `--accept` |
//! | record | [`event`]: `workflow_dispatch` for an acceptance, else `schedule` |
//! | shard job | [`shard_failure_stops`]: only a cancelled shard stops the night |
//! | combine | [`incomplete_exit`]: an incomplete night that passed its gate still fails (exit 1) |
//! | publication | [`publication`]: promote, merge, or merge an automatic first anchor that lost a race |
//! | publication | [`published_exit`]: the promotion's verdict, or the run's gate after a merge |
//! | end | [`job_verdict`], [`conclusion`]: the job's verdict and the conclusion recorded |

use super::{NightlyError, NightlyOutcome};
use crate::exit::Exit;

/// A sharded night's shard count, or None for one job: `--shards` (`flag`, 1 to
/// [`MAX_SHARDS`](crate::suite::classes::MAX_SHARDS)), else the suite's count for the class
/// (`suite_shards`) when more than 1.
pub(super) fn shard_count(
    flag: Option<u32>,
    suite_shards: u32,
) -> Result<Option<u32>, NightlyError> {
    match flag {
        Some(n) if !(1..=crate::suite::classes::MAX_SHARDS).contains(&n) => {
            Err(NightlyError::Request(format!(
                "--shards: expected 1 to {}, found {n}",
                crate::suite::classes::MAX_SHARDS
            )))
        }
        Some(n) => Ok(Some(n)),
        None => Ok(Some(suite_shards).filter(|n| *n > 1)),
    }
}

/// This run establishes the first anchor automatically: nothing was `published` to the store
/// yet, `--auto-bootstrap` is on and `--bootstrap` was not asked for.
pub(super) fn first_anchor(published: bool, auto_bootstrap: bool, bootstrap: bool) -> bool {
    !published && auto_bootstrap && !bootstrap
}

/// `--requester` names who accepts an anchor: refused when this run accepts none.
pub(super) fn requester_needs_accept(requester: bool, accept: bool) -> Result<(), NightlyError> {
    if requester && !accept {
        return Err(NightlyError::Request(
            "--requester names who accepts an anchor, and this run accepts none: add --accept --note, or drop --requester".into(),
        ));
    }
    Ok(())
}

/// The event the run is recorded under: an acceptance is dispatched, a night is scheduled.
pub(super) fn event(accept: bool) -> &'static str {
    if accept {
        "workflow_dispatch"
    } else {
        "schedule"
    }
}

/// A shard job that failed with `exit` stops the night only when it was cancelled (fail-fast
/// off: any other failure is recorded and the other shards run).
pub(super) fn shard_failure_stops(exit: Exit) -> bool {
    exit == Exit::Cancelled
}

/// The exit of a sharded night whose combine step recorded nothing: the run's own exit, or the
/// gate's (1) when the run's passed.
pub(super) fn incomplete_exit(run_exit: Exit) -> Exit {
    if run_exit == Exit::Ok {
        Exit::Gate
    } else {
        run_exit
    }
}

/// How the run is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Publication {
    /// Protected promotion (the acceptance path).
    Promote,
    /// A normal publication: merged into live history as evidence.
    Merge,
    /// An automatic first anchor whose store got its first history from another job meanwhile
    /// (two first nights at once): merged as evidence against that anchor, not lost.
    MergeAfterRace,
}

/// How the run is published: `accept` promotes, unless the acceptance was an automatic first
/// anchor (`auto_bootstrap`) and another job published the first history meanwhile (`raced`).
pub(super) fn publication(accept: bool, auto_bootstrap: bool, raced: bool) -> Publication {
    match (accept, auto_bootstrap && raced) {
        (false, _) => Publication::Merge,
        (true, true) => Publication::MergeAfterRace,
        (true, false) => Publication::Promote,
    }
}

/// The job's exit after publication and the failure it reports: on the acceptance path a failing
/// gate does not stop promotion (continue-on-error), and promotion re-checks everything, so the
/// job's verdict is the promotion's; after a merge it is the run's gate.
pub(super) fn published_exit(
    promoted: bool,
    run_exit: Exit,
    gate_message: Option<&str>,
) -> (Exit, Option<String>) {
    if promoted {
        (Exit::Ok, None)
    } else {
        (run_exit, gate_message.map(str::to_string))
    }
}

/// The job's verdict: the run's gate failures, then the failure of whatever step ended the job;
/// `passed` exactly when the exit code is 0.
pub(super) fn job_verdict(outcome: &NightlyOutcome) -> crate::gate::Verdict {
    let mut failures: Vec<String> = outcome
        .run
        .as_ref()
        .and_then(|r| r.get("verdict"))
        .and_then(|v| v.get("failures"))
        .and_then(|f| f.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if let Some(f) = &outcome.failure {
        failures.push(f.clone());
    }
    let passed = outcome.exit == Exit::Ok;
    if passed {
        // An accept dispatch ratifies a run whose own gate failed: the job passed.
        failures.clear();
    } else if failures.is_empty() {
        failures.push(format!("the job exited {}", outcome.exit.code()));
    }
    crate::gate::Verdict { passed, failures }
}

/// The conclusion the run is completed with.
pub(super) fn conclusion(exit: Exit) -> &'static str {
    match exit {
        Exit::Ok => "success",
        Exit::Cancelled => "cancelled",
        _ => "failure",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused<T: std::fmt::Debug>(r: Result<T, NightlyError>) -> String {
        match r {
            Err(NightlyError::Request(m)) => m,
            other => panic!("expected a request refusal, found {other:?}"),
        }
    }

    #[test]
    fn shard_count_rows() {
        let ok: [(Option<u32>, u32, Option<u32>); 6] = [
            (None, 0, None),
            (None, 1, None),
            (None, 4, Some(4)),
            (Some(1), 4, Some(1)),
            (Some(3), 1, Some(3)),
            (Some(64), 1, Some(64)),
        ];
        for (flag, suite, want) in ok {
            assert_eq!(shard_count(flag, suite).unwrap(), want, "{flag:?} {suite}");
        }
        for n in [0, 65] {
            assert_eq!(
                refused(shard_count(Some(n), 4)),
                format!("--shards: expected 1 to 64, found {n}")
            );
        }
    }

    #[test]
    fn first_anchor_and_request_rows() {
        for (published, auto, bootstrap, want) in [
            (false, true, false, true),
            (true, true, false, false),
            (false, false, false, false),
            (false, true, true, false),
        ] {
            assert_eq!(first_anchor(published, auto, bootstrap), want);
        }
        assert!(requester_needs_accept(false, false).is_ok());
        assert!(requester_needs_accept(true, true).is_ok());
        assert!(requester_needs_accept(false, true).is_ok());
        assert!(refused(requester_needs_accept(true, false)).starts_with("--requester names"));
        assert_eq!(
            (event(true), event(false)),
            ("workflow_dispatch", "schedule")
        );
    }

    #[test]
    fn shard_and_combine_rows() {
        for (exit, stops) in [
            (Exit::Cancelled, true),
            (Exit::Invalid, false),
            (Exit::Io, false),
            (Exit::Integrity, false),
        ] {
            assert_eq!(shard_failure_stops(exit), stops, "{exit:?}");
        }
        for (run, want) in [
            (Exit::Ok, Exit::Gate),
            (Exit::Gate, Exit::Gate),
            (Exit::Unavailable, Exit::Unavailable),
            (Exit::Cancelled, Exit::Cancelled),
        ] {
            assert_eq!(incomplete_exit(run), want, "{run:?}");
        }
    }

    #[test]
    fn publication_rows() {
        use Publication::*;
        for (accept, auto, raced, want) in [
            (false, false, false, Merge),
            (false, true, true, Merge),
            (true, false, false, Promote),
            (true, false, true, Promote),
            (true, true, false, Promote),
            (true, true, true, MergeAfterRace),
        ] {
            assert_eq!(
                publication(accept, auto, raced),
                want,
                "{accept} {auto} {raced}"
            );
        }
        for (promoted, run, gate, want) in [
            (true, Exit::Gate, Some("slower"), (Exit::Ok, None)),
            (true, Exit::Ok, None, (Exit::Ok, None)),
            (false, Exit::Ok, None, (Exit::Ok, None)),
            (
                false,
                Exit::Gate,
                Some("slower"),
                (Exit::Gate, Some("slower".to_string())),
            ),
        ] {
            assert_eq!(
                published_exit(promoted, run, gate),
                want,
                "{promoted} {run:?}"
            );
        }
    }

    #[test]
    fn verdict_and_conclusion_rows() {
        for (exit, want) in [
            (Exit::Ok, "success"),
            (Exit::Cancelled, "cancelled"),
            (Exit::Gate, "failure"),
            (Exit::Io, "failure"),
        ] {
            assert_eq!(conclusion(exit), want, "{exit:?}");
        }
        let outcome =
            |run: Option<serde_json::Value>, failure: Option<&str>, exit: Exit| NightlyOutcome {
                run,
                failure: failure.map(str::to_string),
                exit,
                ..blank()
            };
        let gate = Some(serde_json::json!({"verdict": {"failures": ["a slower"]}}));
        let rows: [(NightlyOutcome, bool, Vec<&str>); 5] = [
            (outcome(None, None, Exit::Ok), true, vec![]),
            (outcome(gate.clone(), None, Exit::Ok), true, vec![]),
            (
                outcome(gate.clone(), Some("publish: x"), Exit::Gate),
                false,
                vec!["a slower", "publish: x"],
            ),
            (
                outcome(None, None, Exit::Gate),
                false,
                vec!["the job exited 1"],
            ),
            (
                outcome(None, Some("restore: y"), Exit::Unavailable),
                false,
                vec!["restore: y"],
            ),
        ];
        for (o, passed, failures) in rows {
            let v = job_verdict(&o);
            assert_eq!(
                (v.passed, v.failures),
                (
                    passed,
                    failures.iter().map(|s| s.to_string()).collect::<Vec<_>>()
                )
            );
        }
    }

    /// An outcome with nothing in it.
    fn blank() -> NightlyOutcome {
        NightlyOutcome {
            workflow_run_id: 1,
            workflow: String::new(),
            artifact_prefix: String::new(),
            conclusion: "failure".into(),
            run_id: None,
            bootstrap: false,
            accept: false,
            requester: None,
            restore: None,
            run: None,
            evidence: None,
            publication: None,
            history_artifact: None,
            history_out: None,
            kept_work: None,
            vault: None,
            runner_class: None,
            shards: None,
            failure: None,
            verdict: crate::gate::Verdict {
                passed: false,
                failures: Vec::new(),
            },
            exit: Exit::Ok,
            ending: None,
        }
    }
}
