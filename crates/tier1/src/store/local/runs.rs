//! A local store's workflow runs: starting one (leased or not), completing it, and completing
//! the runs whose process died.

use super::{LocalStore, NewRun};
use crate::store::local_check::check_counters;
use crate::store::local_lease::{self, RunLease};
use crate::store::{ArtifactStore, StoreError, WorkflowRun};

impl LocalStore {
    /// Start a run (status `in_progress`, created now).
    pub fn create_run(&self, new: &NewRun) -> Result<WorkflowRun, StoreError> {
        self.new_run(new, false).map(|(run, _)| run)
    }

    /// Start a run owned by this process: its lease (`leases/<id>.lock`) is taken before the run
    /// is recorded and held until the returned [`RunLease`] is dropped or the process ends, so
    /// [`LocalStore::complete_abandoned_runs`] can complete it if the process dies first.
    pub(crate) fn create_run_leased(
        &self,
        new: &NewRun,
    ) -> Result<(WorkflowRun, RunLease), StoreError> {
        let (run, lease) = self.new_run(new, true)?;
        let lease = lease.ok_or_else(|| StoreError::NotFound {
            what: format!("the lease of run {}", run.id),
        })?;
        Ok((run, lease))
    }

    fn new_run(
        &self,
        new: &NewRun,
        leased: bool,
    ) -> Result<(WorkflowRun, Option<RunLease>), StoreError> {
        let now = self.now();
        let dir = self.dir.clone();
        self.update(|state| {
            check_counters(&dir, &state.counters())?;
            let repository = new
                .repository
                .clone()
                .unwrap_or_else(|| state.repository.clone());
            let run = WorkflowRun {
                id: state.next_run_id,
                workflow_id: None,
                path: new.workflow_path.clone(),
                head_branch: new.head_branch.clone(),
                head_sha: new.head_sha.clone(),
                event: new.event.clone(),
                status: "in_progress".into(),
                conclusion: None,
                head_repository: new
                    .head_repository
                    .clone()
                    .unwrap_or_else(|| repository.clone()),
                repository,
                run_attempt: new.run_attempt.max(1),
                created_at: now,
                provenance: None,
            };
            let lease = if leased {
                Some(local_lease::take(&dir, run.id)?)
            } else {
                None
            };
            state.next_run_id += 1;
            state.runs.push(run.clone());
            Ok((run, lease))
        })
    }

    /// Complete every `in_progress` run whose lease no process holds any more (its process was
    /// killed) with `conclusion`, as GitHub completes the run of a runner that vanished: what it
    /// uploaded stays, and restore sees it like any completed run's artifacts. Returns them.
    pub(crate) fn complete_abandoned_runs(
        &self,
        conclusion: &str,
    ) -> Result<Vec<WorkflowRun>, StoreError> {
        let dir = self.dir.clone();
        self.update(|state| {
            let mut done = Vec::new();
            for run in state.runs.iter_mut().filter(|r| r.status == "in_progress") {
                if local_lease::is_abandoned(&dir, run.id)? {
                    run.status = "completed".into();
                    run.conclusion = Some(conclusion.to_string());
                    done.push(run.clone());
                }
            }
            Ok(done)
        })
        .inspect(|done| {
            for run in done {
                let _ = local_lease::remove(&self.dir, run.id);
            }
        })
    }

    /// Finish a run with a conclusion (`success`, `failure`, ...).
    pub fn complete_run(&self, run_id: u64, conclusion: &str) -> Result<WorkflowRun, StoreError> {
        self.update(|state| {
            let run = state
                .runs
                .iter_mut()
                .find(|r| r.id == run_id)
                .ok_or_else(|| StoreError::NotFound {
                    what: format!("run {run_id}"),
                })?;
            run.status = "completed".into();
            run.conclusion = Some(conclusion.to_string());
            Ok(run.clone())
        })
        .inspect(|_| {
            let _ = local_lease::remove(&self.dir, run_id);
        })
    }
}
