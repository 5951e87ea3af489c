//! One invocation of a command target: the child started in its own process group with the
//! harness's environment, waited for under the deadline, whatever it left running killed, its
//! stdout read on a thread and never waited for past the timeout (a process that left the group
//! and keeps the pipe open fails the target after [`STDOUT_GRACE`]).

use super::output::CommandOutput;
use super::read::read;
use crate::bench::backend::Shapes;
use crate::bench::import;
use crate::bench::invocation::Invocation;
use crate::bench::limits::MAX_OUTPUT_BYTES;
use crate::bench::options::{HarnessOptions, Timing};
use crate::bench::result::status;
use crate::suite::{OutputFormat, Target};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long after a command exits its stdout may stay open (held by a process it started outside
/// its process group) before the target fails.
pub(crate) const STDOUT_GRACE: Duration = Duration::from_secs(2);

/// One invocation of a command target from the directory `dir` (the side-by-side comparison runs
/// each build's command in its own worktree), finished but not read yet: the comparison runs both
/// invocations of a round back to back and reads their results after the second
/// ([`Finished::read`]), so nothing of its own work falls between them.
pub(crate) fn invoke_in(
    t: &Target,
    shapes: &Shapes,
    opts: &HarnessOptions,
    timing: Timing,
    dir: &Path,
    process: u32,
) -> Result<Finished, String> {
    let deadline = Instant::now() + timing.timeout;
    let (stdout, inv) =
        execute(t, shapes, opts, timing, deadline, process, Some(dir)).map_err(|e| e.1)?;
    Ok(Finished {
        stdout,
        inv,
        timing,
    })
}

/// A finished invocation: its stdout and its files (kept until it is read).
#[derive(Debug)]
pub(crate) struct Finished {
    stdout: Vec<u8>,
    inv: Invocation,
    timing: Timing,
}

impl Finished {
    /// Its raw stdout and the validated document.
    pub(crate) fn read(self, t: &Target, seed: u64) -> Result<(Vec<u8>, CommandOutput), String> {
        let out = read(t, seed, self.timing, self.stdout.clone(), &self.inv)?;
        Ok((self.stdout, out))
    }
}

/// Runs target `t`'s command once (process `process` of the target) under `deadline`: its
/// invocation prepared, the child started in its own process group with the harness's
/// environment, waited for, whatever it left running killed, its stdout read. A failure is its
/// status and message.
pub(super) fn execute(
    t: &Target,
    shapes: &Shapes,
    opts: &HarnessOptions,
    timing: Timing,
    deadline: Instant,
    process: u32,
    dir: Option<&Path>,
) -> Result<(Vec<u8>, Invocation), Failure> {
    let err = |m: String| (status::FAILED_ERROR, m);
    // A tool's command runs only the target's benchmarks, on the profile's clock.
    let mut command = t.command.clone();
    command.extend(import::command_flags(t, timing.clock));
    let inv = Invocation::prepare(&command, timing.warmup, timing.iterations)
        .map_err(|e| err(format!("target {}: {e}", t.key)))?;
    let env = Launch {
        t,
        shapes,
        opts,
        timing,
        process,
        dir,
    };
    let mut child = env.spawn(&inv)?;
    let rx = read_stdout(&mut child);
    let status = wait(&mut child, deadline, t, timing)?;
    // Whatever the command left running (and holding its stdout) is killed, not waited for.
    if crate::process::kill_group(child.id()) {
        tracing::warn!(target = %t.key, "the command left processes running after it exited; they were killed");
    }
    let out = drain(&rx, deadline, t, timing)?;
    if !status.success() {
        return Err(err(format!(
            "target {}: command exited with {status}",
            t.key
        )));
    }
    if out.len() as u64 > MAX_OUTPUT_BYTES {
        return Err(err(format!(
            "target {}: command printed more than {MAX_OUTPUT_BYTES} bytes",
            t.key
        )));
    }
    if inv.reads_output_file || t.format == OutputFormat::Criterion {
        // The result is a file: what the tool printed is for the person reading the log.
        let _ = std::io::stderr().write_all(&out);
    }
    Ok((out, inv))
}

/// Why a command failed: its status and message.
pub(super) type Failure = (&'static str, String);

/// What one process of a command target runs with.
struct Launch<'a> {
    t: &'a Target,
    shapes: &'a Shapes,
    opts: &'a HarnessOptions,
    timing: Timing,
    process: u32,
    dir: Option<&'a Path>,
}

impl Launch<'_> {
    /// The command of `inv` started in its own process group, with the `TIER1_*` environment,
    /// stdin closed, stdout piped and stderr forwarded to tier1's (by a detached thread).
    fn spawn(&self, inv: &Invocation) -> Result<std::process::Child, Failure> {
        let (t, opts, timing) = (self.t, self.opts, self.timing);
        let err = |m: String| (status::FAILED_ERROR, m);
        let (prog, args) = inv
            .argv
            .split_first()
            .ok_or_else(|| err(format!("target {}: empty command", t.key)))?;
        let shapes_json = serde_json::to_string(self.shapes).unwrap_or_else(|_| "{}".into());
        let mut command = Command::new(prog);
        if t.format == OutputFormat::Criterion {
            command.env("CRITERION_HOME", inv.criterion_home());
        }
        let mut child = command
            .args(args)
            .env("TIER1_OUTPUT", inv.output_file())
            .env("TIER1_TARGET", &t.key)
            .env("TIER1_PROFILE", &opts.profile)
            .env("TIER1_SEED", opts.seed.to_string())
            .env("TIER1_WARMUP", timing.warmup.to_string())
            .env("TIER1_ITERATIONS", timing.iterations.to_string())
            .env("TIER1_MIN_SAMPLE_MS", timing.min_sample_ms.to_string())
            .env("TIER1_PROCESS", self.process.to_string())
            .env("TIER1_CLOCK", timing.clock.as_str())
            .env("TIER1_SHAPES", shapes_json)
            .env("TIER1_RTOL", t.tolerance.rtol.to_string())
            .env("TIER1_ATOL", t.tolerance.atol.to_string())
            // Interpreted targets must not write into the checkout (it is checked clean after the run).
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir(self.dir.unwrap_or(Path::new(".")))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            // Piped and forwarded, never inherited: a process that escapes the group keeps only this
            // pipe open, never tier1's own stderr (which would hold whoever reads tier1's output).
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| err(format!("target {}: could not start {prog:?}: {e}", t.key)))?;
        if let Some(mut err) = child.stderr.take() {
            // Detached, like the stdout reader; a failed write to tier1's stderr is ignored.
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut err, &mut std::io::stderr());
            });
        }
        Ok(child)
    }
}

/// The child's stdout, read (up to one byte past [`MAX_OUTPUT_BYTES`]) by a detached thread: a
/// reader blocked on a pipe held open by an escaped process is left behind.
fn read_stdout(child: &mut std::process::Child) -> mpsc::Receiver<Vec<u8>> {
    let mut pipe = child.stdout.take();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = pipe.as_mut() {
            let _ = p.take(MAX_OUTPUT_BYTES + 1).read_to_end(&mut buf);
        }
        let _ = tx.send(buf);
    });
    rx
}

/// The child's exit status; past `deadline` or on a cancellation its process group is killed and
/// the target fails.
fn wait(
    child: &mut std::process::Child,
    deadline: Instant,
    t: &Target,
    timing: Timing,
) -> Result<std::process::ExitStatus, Failure> {
    let group = child.id();
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Ok(s),
            Ok(None) if Instant::now() >= deadline => {
                crate::process::kill_group(group);
                let _ = child.wait();
                return Err((
                    status::FAILED_TIMEOUT,
                    format!(
                        "target {}: command did not finish within {} s (its process group was killed)",
                        t.key,
                        timing.timeout.as_secs_f64()
                    ),
                ));
            }
            Ok(None) if let Some(c) = crate::process::requested() => {
                crate::process::kill_group(group);
                let _ = child.wait();
                return Err((
                    status::FAILED_ERROR,
                    format!("target {}: {c} (its process group was killed)", t.key),
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                return Err((
                    status::FAILED_ERROR,
                    format!("target {}: waiting for the command: {e}", t.key),
                ));
            }
        }
    }
}

/// Wait for the stdout reader of a command that exited: at most [`STDOUT_GRACE`], never past the
/// target's deadline, and not at all once a cancellation is requested.
fn drain(
    rx: &mpsc::Receiver<Vec<u8>>,
    deadline: Instant,
    t: &Target,
    timing: Timing,
) -> Result<Vec<u8>, (&'static str, String)> {
    let until = crate::bench::deadline::deadline(Instant::now(), STDOUT_GRACE).min(deadline);
    loop {
        if let Some(c) = crate::process::requested() {
            return Err((status::FAILED_ERROR, format!("target {}: {c}", t.key)));
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let (st, why) = if until >= deadline {
                (
                    status::FAILED_TIMEOUT,
                    format!("did not finish within {} s", timing.timeout.as_secs_f64()),
                )
            } else {
                (
                    status::FAILED_ERROR,
                    format!(
                        "exited, but its stdout was still open {} s later",
                        STDOUT_GRACE.as_secs()
                    ),
                )
            };
            return Err((
                st,
                format!(
                    "target {}: the command {why}: a process it started outside its process group (setsid?) holds the pipe; its output is not used",
                    t.key
                ),
            ));
        }
        match rx.recv_timeout(left.min(Duration::from_millis(50))) {
            Ok(out) => return Ok(out),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Ok(Vec::new()),
        }
    }
}
