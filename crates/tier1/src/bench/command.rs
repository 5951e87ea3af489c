//! Command targets (`kind: command`): run the argv (no shell) with the run's parameters in the
//! environment, parse the JSON result it prints on stdout (protocol in docs/command-targets.md),
//! validate it like a built-in result (finite non-negative samples, baseline first, unique safe
//! names, verification present on every optimized variant) and turn it into a [`TargetResult`].
//! When one invocation's samples do not reach the profile's precision, the command runs again
//! in a new process (as asv does) and the samples are pooled, until precise, out of budget or
//! `MAX_PROCESSES` invocations. Each invocation leads its own process group: on a timeout, a
//! cancellation, or when it exits leaving processes behind, the whole group is killed. Its stdout
//! is read on a thread and never waited for past the timeout: a process that left the group
//! (`setsid`) and keeps the pipe open fails the target after `STDOUT_GRACE`, it cannot hang the
//! run.

use crate::bench::backend::Shapes;
use crate::bench::estimate::precise_now;
use crate::bench::import;
use crate::bench::invocation::Invocation;
use crate::bench::machine::{MachineState, MachineWindow};
use crate::bench::options::{HarnessOptions, Timing};
use crate::bench::result::{
    BASELINE, InputSignature, Role, Sampling, TargetFailure, TargetResult, VariantResult,
    VariantVerification, Work, empty_result, status,
};
use crate::bench::single;
use crate::bench::stats::Stats;
use crate::suite::{Goal, OutputFormat, Target};
use serde::Deserialize;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long after a command exits its stdout may stay open (held by a process it started outside
/// its process group) before the target fails.
pub(crate) const STDOUT_GRACE: Duration = Duration::from_secs(2);

/// `schema` value a command must print.
pub(crate) const COMMAND_SCHEMA: &str = "tier1.command_result.v1";
/// Largest stdout accepted from a command (the budget of a results file, `limits`).
pub(crate) use crate::bench::limits::MAX_OUTPUT_BYTES;
/// Most invocations of one command target per measurement.
pub(crate) const MAX_PROCESSES: u32 = 10;
/// How much of a malformed stdout a message quotes.
const SNIPPET_CHARS: usize = 200;
/// Largest sample a command may report (ms): a day.
pub(crate) const MAX_SAMPLE_MS: f64 = 86_400_000.0;
/// Most variants of a command result.
pub(crate) const MAX_VARIANTS: usize = 64;
/// Longest variant name, `baseline_file`, and input name or dtype, in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 256;
/// Most inputs of an input signature, and most dimensions of one input.
pub(crate) const MAX_INPUTS: usize = 64;
/// Largest work count (`flops`, `bytes`).
pub(crate) const MAX_WORK: f64 = 1e30;

/// The JSON a command prints.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandOutput {
    /// Must be [`COMMAND_SCHEMA`].
    pub(crate) schema: String,
    /// Repo-relative source of the baseline.
    #[serde(default)]
    pub(crate) baseline_file: Option<String>,
    /// Work per execution.
    #[serde(default)]
    pub(crate) work: Work,
    /// Baseline first.
    pub variants: Vec<CommandVariant>,
}

/// One variant of a command's output.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandVariant {
    /// `baseline` first, then optimized names.
    pub name: String,
    /// Timed samples (ms).
    pub samples_ms: Vec<f64>,
    /// Peak bytes of one execution, when measured.
    #[serde(default)]
    pub(crate) memory_peak_bytes: Option<u64>,
    /// Input signature (must equal the baseline's).
    pub input_signature: InputSignature,
    /// Required for optimized variants.
    #[serde(default)]
    pub(crate) verification: Option<VariantVerification>,
}

/// Run a command target; every failure is recorded on the result, never raised.
pub(crate) fn run(
    t: &Target,
    shapes: &Shapes,
    opts: &HarnessOptions,
    timing: Timing,
) -> TargetResult {
    let mut r = empty_result(t, shapes);
    let fail = |r: &mut TargetResult, st: &str, message: String| {
        r.failure = Some(TargetFailure {
            status: st.into(),
            message,
        });
    };
    let started = Instant::now();
    let deadline = crate::bench::deadline::deadline(started, timing.timeout);
    let mut pooled: Option<CommandOutput> = None;
    let mut sampling = Sampling {
        rounds: 0,
        processes: 0,
        precision_pct: timing.precision_pct.into(),
        order_seed: timing.seed,
        budget_exhausted: false,
        remeasured: false,
        throttled: Vec::new(),
        machine: Vec::new(),
        clock: None,
        precision_required: timing.precision_required,
        passes: Vec::new(),
    };
    loop {
        let before = MachineState::cpu_now();
        let out = execute(t, shapes, opts, timing, deadline, sampling.processes, None).and_then(
            |(stdout, inv)| {
                read(t, opts.seed, timing, stdout, &inv).map_err(|m| (status::FAILED_ERROR, m))
            },
        );
        sampling.machine.push(MachineWindow {
            before,
            after: MachineState::cpu_now(),
        });
        sampling.processes += 1;
        let out = match out {
            Ok(out) => out,
            Err((st, msg)) => {
                fail(&mut r, st, msg);
                break;
            }
        };
        let merged = match pooled.take() {
            None => Ok(out),
            Some(p) => p.pool(out, &t.key),
        };
        let p = match merged {
            Ok(p) => pooled.insert(p),
            Err(msg) => {
                fail(&mut r, status::FAILED_ERROR, msg);
                break;
            }
        };
        let samples: Vec<Vec<f64>> = p.variants.iter().map(|v| v.samples_ms.clone()).collect();
        let verified: Vec<bool> = p
            .variants
            .iter()
            .enumerate()
            .map(|(i, v)| i > 0 && v.verification.as_ref().is_some_and(|x| x.passed))
            .collect();
        sampling.rounds = u32::try_from(samples[0].len()).unwrap_or(u32::MAX);
        let precise = match t.optimization_goal {
            Goal::Time => single::precise_now(&samples[0], timing.precision_pct),
            Goal::Speed | Goal::Memory => precise_now(&samples, &verified, timing.precision_pct),
        };
        if precise {
            break;
        }
        let pooled_samples: usize = samples.iter().map(Vec::len).sum();
        if pooled_samples > crate::bench::limits::MAX_RUN_SAMPLES {
            // More than a run may record: the harness refuses the run; never invoke again.
            break;
        }
        if sampling.processes >= MAX_PROCESSES || started.elapsed() >= timing.budget {
            sampling.budget_exhausted = true;
            break;
        }
        tracing::debug!(target = %t.key, processes = sampling.processes, "not yet precise; running the command again");
    }
    if let Some(mut out) = pooled {
        r.work = out.work;
        r.baseline_file = out.baseline_file.take();
        r.variants = out.into_results();
    }
    r.sampling = Some(sampling);
    r
}

/// The result of one invocation: tier1's document, or the tool's output read by its importer.
fn read(
    t: &Target,
    seed: u64,
    timing: Timing,
    stdout: Vec<u8>,
    inv: &Invocation,
) -> Result<CommandOutput, String> {
    let document = inv
        .document(stdout, MAX_OUTPUT_BYTES)
        .map_err(|e| format!("target {}: {e}", t.key))?;
    if t.format.is_tier1() {
        return parse(&t.key, &document);
    }
    let (dir, criterion_home) = (inv.dir(), inv.criterion_home());
    let out = import::ToolOutput {
        document: &document,
        dir: &dir,
        criterion_home: &criterion_home,
        clock: timing.clock,
    };
    let signature = InputSignature {
        seed,
        inputs: Vec::new(),
    };
    let note = format!(
        "outputs not compared: imported from {}, whose run succeeded",
        t.format.as_str()
    );
    let variants = import::variants(t, out)?
        .into_iter()
        .enumerate()
        .map(|(i, v)| CommandVariant {
            name: v.name,
            samples_ms: v.samples_ms,
            memory_peak_bytes: None,
            input_signature: signature.clone(),
            verification: (i > 0).then(|| VariantVerification {
                passed: true,
                elements: 0,
                mismatches: 0,
                max_abs_err: 0.0.into(),
                max_rel_err: 0.0.into(),
                reference: None,
                message: Some(note.clone()),
            }),
        })
        .collect();
    validate(
        &t.key,
        CommandOutput {
            schema: COMMAND_SCHEMA.into(),
            baseline_file: None,
            work: Work::default(),
            variants,
        },
    )
}

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
fn execute(
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
type Failure = (&'static str, String);

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

/// Parse and validate a command's stdout into variant results (baseline first).
pub fn parse(key: &str, stdout: &[u8]) -> Result<CommandOutput, String> {
    let bad = |m: String| format!("target {key}: malformed command result: {m}");
    let raw: CommandOutput = serde_json::from_slice(stdout)
        .map_err(|e| bad(format!("{e}; stdout began: {:?}", snippet(stdout))))?;
    validate(key, raw)
}

/// Check a result document (parsed, or built by an importer) against the protocol's rules.
fn validate(key: &str, raw: CommandOutput) -> Result<CommandOutput, String> {
    let bad = |m: String| format!("target {key}: malformed command result: {m}");
    if raw.schema != COMMAND_SCHEMA {
        return Err(bad(format!(
            "schema: expected {COMMAND_SCHEMA:?}, found {:?}",
            raw.schema
        )));
    }
    if let Some(f) = &raw.baseline_file
        && crate::fsx::safe_relative_parts(f).is_none()
    {
        return Err(bad(format!(
            "baseline_file: expected a repo-relative path, found {f:?}"
        )));
    }
    if let Some(f) = &raw.baseline_file
        && f.len() > MAX_NAME_BYTES
    {
        return Err(bad(format!(
            "baseline_file: expected at most {MAX_NAME_BYTES} bytes, found {}",
            f.len()
        )));
    }
    for (name, v) in [("flops", raw.work.flops), ("bytes", raw.work.bytes)] {
        if let Some(x) = v.map(f64::from)
            && !(x.is_finite() && (0.0..=MAX_WORK).contains(&x))
        {
            return Err(bad(format!(
                "work.{name}: expected a finite number in 0..={MAX_WORK:e}, found {x}"
            )));
        }
    }
    if raw.variants.len() > MAX_VARIANTS {
        return Err(bad(format!(
            "variants: expected at most {MAX_VARIANTS}, found {}",
            raw.variants.len()
        )));
    }
    match raw.variants.first() {
        Some(v) if v.name == BASELINE => {}
        Some(v) => {
            return Err(bad(format!(
                "variants[0].name: expected {BASELINE:?}, found {:?}",
                v.name
            )));
        }
        None => return Err(bad("variants: expected at least a baseline".into())),
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, v) in raw.variants.iter().enumerate() {
        if !crate::fsx::is_safe_component(&v.name)
            || v.name.len() > MAX_NAME_BYTES
            || !names.insert(v.name.as_str())
        {
            return Err(bad(format!(
                "variants[{i}].name: expected a unique safe name of at most {MAX_NAME_BYTES} bytes, found {:?}",
                v.name
            )));
        }
        let sig = &v.input_signature;
        let oversized = sig.inputs.len() > MAX_INPUTS
            || sig.inputs.iter().any(|t| {
                t.name.len() > MAX_NAME_BYTES
                    || t.dtype.len() > MAX_NAME_BYTES
                    || t.shape.len() > MAX_INPUTS
            });
        if oversized {
            return Err(bad(format!(
                "variants[{i}] ({}).input_signature: expected at most {MAX_INPUTS} inputs of at most {MAX_INPUTS} dimensions, names and dtypes of at most {MAX_NAME_BYTES} bytes",
                v.name
            )));
        }
        if let Some((j, x)) = v
            .samples_ms
            .iter()
            .enumerate()
            .find(|(_, x)| !(x.is_finite() && (0.0..=MAX_SAMPLE_MS).contains(*x)))
        {
            return Err(bad(format!(
                "variants[{i}] ({}).samples_ms[{j}]: expected a finite number of milliseconds in 0..={MAX_SAMPLE_MS}, found {x:?}",
                v.name
            )));
        }
        if Stats::of(&v.samples_ms).is_none() {
            return Err(bad(format!(
                "variants[{i}] ({}).samples_ms: expected at least one finite, non-negative sample",
                v.name
            )));
        }
        if let Some(ver) = &v.verification
            && (!ver.max_abs_err.is_finite() || !ver.max_rel_err.is_finite())
        {
            return Err(bad(format!(
                "variants[{i}] ({}).verification: errors must be finite",
                v.name
            )));
        }
    }
    Ok(raw)
}

/// The first [`SNIPPET_CHARS`] characters of a command's stdout (lossy UTF-8).
fn snippet(stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(stdout);
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.into_owned(),
    }
}

impl CommandOutput {
    /// Pool the samples of another invocation into this one: the same variants (names, order,
    /// input signatures) are required; samples are appended, memory peaks keep the maximum, and
    /// a failed verification in any invocation is kept.
    fn pool(mut self, next: CommandOutput, key: &str) -> Result<CommandOutput, String> {
        let names = |o: &CommandOutput| {
            o.variants
                .iter()
                .map(|v| v.name.clone())
                .collect::<Vec<_>>()
        };
        if names(&self) != names(&next) {
            return Err(format!(
                "target {key}: invocations disagree on the variants: expected {:?}, found {:?}",
                names(&self),
                names(&next)
            ));
        }
        for (a, b) in self.variants.iter_mut().zip(next.variants) {
            if a.input_signature != b.input_signature {
                return Err(format!(
                    "target {key}: variant {} changed its input signature between invocations ({} then {})",
                    a.name,
                    a.input_signature.describe(),
                    b.input_signature.describe()
                ));
            }
            a.samples_ms.extend(b.samples_ms);
            a.memory_peak_bytes = match (a.memory_peak_bytes, b.memory_peak_bytes) {
                (Some(x), Some(y)) => Some(x.max(y)),
                _ => None,
            };
            // A missing record in any invocation stays missing; the first failure is kept.
            a.verification = match (a.verification.take(), b.verification) {
                (Some(x), Some(y)) => Some(if x.passed { y } else { x }),
                _ => None,
            };
        }
        Ok(self)
    }

    /// The variants as harness results (statistics computed here from the samples).
    fn into_results(self) -> Vec<VariantResult> {
        self.variants
            .into_iter()
            .enumerate()
            .filter_map(|(i, v)| {
                Some(VariantResult {
                    stats: Stats::of(&v.samples_ms)?,
                    name: v.name,
                    role: if i == 0 {
                        Role::Baseline
                    } else {
                        Role::Optimized
                    },
                    input_signature: v.input_signature,
                    samples_ms: v.samples_ms,
                    repetitions: 1,
                    memory_peak_bytes: v.memory_peak_bytes,
                    verification: if i == 0 { None } else { v.verification },
                })
            })
            .collect()
    }
}
