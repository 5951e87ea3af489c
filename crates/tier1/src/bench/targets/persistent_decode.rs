//! `persistent_decode`: `steps` decode steps of `out_t = v_t · sum(q_t ⊙ k_t)` over
//! `(batch, head_dim)`. Baseline dispatches each small op (mul, sum, mul) of each step as its own
//! task to a worker and waits for it (the CPU analogue of per-op kernel launches); optimized
//! dispatches one persistent task that loops over every step.

use super::math::dim;
use super::params::ShapeParams;
use super::variant::{signature, tensor};
use crate::bench::backend::{BackendError, Shapes, Variant, VariantRun, Workload};
use crate::bench::result::Work;
use serde::Deserialize;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

/// Source of the baseline (repo-relative).
pub(crate) const FILE: &str = "crates/tier1/src/bench/targets/persistent_decode.rs";

/// Problem size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) struct Params {
    /// Sequences decoded together.
    pub(crate) batch: usize,
    /// Decode steps.
    pub(crate) steps: usize,
    /// Head dimension.
    pub(crate) head_dim: usize,
}

impl ShapeParams for Params {
    const KEY: &'static str = "persistent_decode";
}

/// `q`, `k`, `v`: `[steps, batch, head_dim]`.
#[derive(Debug, Clone)]
pub(crate) struct Inputs {
    /// Sizes.
    pub(crate) p: Params,
    /// Queries.
    pub(crate) q: Vec<f32>,
    /// Keys.
    pub(crate) k: Vec<f32>,
    /// Values.
    pub(crate) v: Vec<f32>,
}

/// Seeded inputs.
pub(crate) fn inputs(p: Params, seed: u64) -> Inputs {
    let n = p.steps * p.batch * p.head_dim;
    let mut r = crate::bench::rng::Rng::new(seed, 20);
    Inputs {
        p,
        q: r.normal_vec(n, 1.0),
        k: r.normal_vec(n, 1.0),
        v: r.normal_vec(n, 1.0),
    }
}

/// One fused step: `out[b,:] = v[b,:] * dot(q[b,:], k[b,:])` for every row `b`.
pub(crate) fn fused_step(p: Params, inp: &Inputs, t: usize, out: &mut [f32]) {
    let d = p.head_dim;
    for b in 0..p.batch {
        let o = (t * p.batch + b) * d;
        let s = super::math::dot_naive(&inp.q[o..o + d], &inp.k[o..o + d]);
        for (dst, vv) in out[o..o + d].iter_mut().zip(&inp.v[o..o + d]) {
            *dst = vv * s;
        }
    }
}

/// The whole decode in one loop (the optimized variant's task body).
pub(crate) fn persistent(inp: &Inputs, out: &mut [f32]) {
    for t in 0..inp.p.steps {
        fused_step(inp.p, inp, t, out);
    }
}

/// f64 reference.
pub(crate) fn reference(inp: &Inputs) -> Vec<f64> {
    let d = inp.p.head_dim;
    let mut out = vec![0.0; inp.q.len()];
    for o in (0..inp.q.len()).step_by(d) {
        let s: f64 = (o..o + d)
            .map(|i| f64::from(inp.q[i]) * f64::from(inp.k[i]))
            .sum();
        for (dst, v) in out[o..o + d].iter_mut().zip(&inp.v[o..o + d]) {
            *dst = f64::from(*v) * s;
        }
    }
    out
}

type Job = Box<dyn FnOnce() + Send>;

/// A one-thread worker that runs submitted tasks in order (the "stream").
struct Worker {
    jobs: Option<Sender<Job>>,
    done: Receiver<()>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Worker {
    fn new() -> Result<Worker, BackendError> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (done_tx, done) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("tier1-decode-worker".into())
            .spawn(move || {
                for job in rx {
                    job();
                    if done_tx.send(()).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| BackendError::Device(format!("could not start the decode worker: {e}")))?;
        Ok(Worker {
            jobs: Some(jobs),
            done,
            handle: Some(handle),
        })
    }

    /// Submit one task and wait for it ("launch and synchronize").
    fn launch(&self, job: Job) -> Result<(), BackendError> {
        let lost = || BackendError::Device("decode worker stopped".into());
        self.jobs
            .as_ref()
            .ok_or_else(lost)?
            .send(job)
            .map_err(|_| lost())?;
        self.done.recv().map_err(|_| lost())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

struct State {
    tmp: Vec<f32>,
    sums: Vec<f32>,
    out: Vec<f32>,
}

struct DecodeRun {
    inp: Arc<Inputs>,
    state: Arc<Mutex<State>>,
    worker: Worker,
    persistent: bool,
}

fn lock(s: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    s.lock().unwrap_or_else(PoisonError::into_inner)
}

impl VariantRun for DecodeRun {
    fn run(&mut self) -> Result<Option<f64>, BackendError> {
        let p = self.inp.p;
        let d = p.head_dim;
        if self.persistent {
            let (inp, st) = (Arc::clone(&self.inp), Arc::clone(&self.state));
            return self
                .worker
                .launch(Box::new(move || persistent(&inp, &mut lock(&st).out)))
                .map(|_| None);
        }
        for t in 0..p.steps {
            let base = t * p.batch * d;
            let (inp, st) = (Arc::clone(&self.inp), Arc::clone(&self.state));
            self.worker.launch(Box::new(move || {
                let tmp = &mut lock(&st).tmp;
                for (i, x) in tmp.iter_mut().enumerate() {
                    *x = inp.q[base + i] * inp.k[base + i];
                }
            }))?;
            let st = Arc::clone(&self.state);
            self.worker.launch(Box::new(move || {
                let s = &mut *lock(&st);
                for (b, sum) in s.sums.iter_mut().enumerate() {
                    *sum = s.tmp[b * d..(b + 1) * d].iter().sum();
                }
            }))?;
            let (inp, st) = (Arc::clone(&self.inp), Arc::clone(&self.state));
            self.worker.launch(Box::new(move || {
                let s = &mut *lock(&st);
                for b in 0..p.batch {
                    let o = base + b * d;
                    for i in 0..d {
                        s.out[o + i] = inp.v[o + i] * s.sums[b];
                    }
                }
            }))?;
        }
        Ok(None)
    }

    fn output(&mut self) -> Result<Vec<f32>, BackendError> {
        lock(&self.state).out.fill(0.0);
        self.run()?;
        Ok(lock(&self.state).out.clone())
    }
}

fn variant(
    name: &str,
    inp: &Arc<Inputs>,
    sig: crate::bench::result::InputSignature,
    persistent: bool,
) -> Result<Variant, BackendError> {
    let p = inp.p;
    Ok(Variant {
        name: name.into(),
        signature: sig,
        runner: Box::new(DecodeRun {
            inp: Arc::clone(inp),
            state: Arc::new(Mutex::new(State {
                tmp: vec![0.0; p.batch * p.head_dim],
                sums: vec![0.0; p.batch],
                out: vec![0.0; inp.q.len()],
            })),
            worker: Worker::new()?,
            persistent,
        }),
    })
}

/// Upper estimate, in bytes, of what the CPU workload allocates for `p` (inputs, every
/// variant's output and scratch, the reference), in floating point so no shape overflows it.
pub(crate) fn footprint(p: &Params) -> f64 {
    let n = dim(p.steps) * dim(p.batch) * dim(p.head_dim);
    n * 24.0 + dim(p.batch) * dim(p.head_dim) * 8.0
}

/// The CPU workload.
pub(crate) fn workload(shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
    workload_with(Arc::new(inputs(Params::from_shapes(shapes)?, seed)), seed)
}

/// The CPU workload over inputs already generated (the CUDA backend takes its work, input
/// signature and reference from here, so both backends describe the same problem).
pub(crate) fn workload_with(inp: Arc<Inputs>, seed: u64) -> Result<Workload, BackendError> {
    let p = inp.p;
    let dims = [p.steps, p.batch, p.head_dim];
    let sig = signature(
        seed,
        vec![
            tensor("q", "f32", &dims),
            tensor("k", "f32", &dims),
            tensor("v", "f32", &dims),
        ],
    );
    let n = inp.q.len() as f64;
    let r = Arc::clone(&inp);
    Ok(Workload {
        variants: vec![
            variant("baseline", &inp, sig.clone(), false)?,
            variant("optimized_persistent_loop", &inp, sig, true)?,
        ],
        work: Work {
            flops: Some((3.0 * n).into()),
            bytes: Some((4.0 * n * 4.0).into()),
        },
        baseline_file: FILE.into(),
        reference: Some(Box::new(move || reference(&r))),
    })
}
