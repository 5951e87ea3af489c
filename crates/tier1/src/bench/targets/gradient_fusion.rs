//! `gradient_fusion`: `tensors` small gradient tensors all-reduced across `ranks` worker threads,
//! `repeats` times, into an accumulator. Baseline all-reduces each tensor separately (one barrier
//! per tensor); optimized all-reduces each rank's tensors as one flat buffer in `bucket_elems`
//! buckets (one barrier per bucket). The flat buffers are the fused gradient layout (what
//! DDP's bucket views give): packed once, on the first (untimed, verifying) execution, and
//! reused, so a timed execution allocates and copies nothing and measures the fusion itself.

use super::math::dim;
use super::math::split_ranges;
use super::params::ShapeParams;
use super::variant::{fn_variant, signature, tensor};
use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::result::Work;
use serde::Deserialize;
use std::sync::{Arc, Barrier, OnceLock};

/// Source of the baseline (repo-relative).
pub(crate) const FILE: &str = "crates/tier1/src/bench/targets/gradient_fusion.rs";

/// Problem size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) struct Params {
    /// Gradient tensors per rank.
    pub(crate) tensors: usize,
    /// Elements per tensor.
    pub(crate) tensor_elems: usize,
    /// All-reduce repetitions per run.
    pub(crate) repeats: usize,
    /// Worker threads ("ranks").
    pub(crate) ranks: usize,
    /// Elements per fused bucket.
    pub(crate) bucket_elems: usize,
}

impl ShapeParams for Params {
    const KEY: &'static str = "gradient_fusion";
}

/// Per rank, per tensor gradients (`grads[rank][tensor]`, separate allocations like real ones).
#[derive(Debug, Clone)]
pub(crate) struct Inputs {
    /// Sizes.
    pub(crate) p: Params,
    /// Gradients.
    pub(crate) grads: Vec<Vec<Vec<f32>>>,
    /// Each rank's gradients in one flat buffer (the fused layout), built on first use.
    pub(crate) packed: OnceLock<Vec<Vec<f32>>>,
}

impl Inputs {
    /// Each rank's gradients as one flat buffer (built once).
    pub(crate) fn packed(&self) -> &[Vec<f32>] {
        self.packed
            .get_or_init(|| self.grads.iter().map(|g| g.concat()).collect())
    }
}

/// Seeded inputs.
pub(crate) fn inputs(p: Params, seed: u64) -> Inputs {
    let mut r = crate::bench::rng::Rng::new(seed, 40);
    Inputs {
        p,
        grads: (0..p.ranks)
            .map(|_| {
                (0..p.tensors)
                    .map(|_| r.normal_vec(p.tensor_elems, 0.1))
                    .collect()
            })
            .collect(),
        packed: OnceLock::new(),
    }
}

/// The output slices of `out` (`n` elements in segments of `seg`) that `rank` reduces: chunk
/// `rank` of every segment, in segment order, with its offset.
fn rank_slices(out: &mut [f32], seg: usize, ranks: usize) -> Vec<Vec<(usize, &mut [f32])>> {
    let mut per: Vec<Vec<(usize, &mut [f32])>> = (0..ranks).map(|_| Vec::new()).collect();
    let mut off = 0;
    for s in out.chunks_mut(seg) {
        let len = s.len();
        let mut rest = s;
        for (r, range) in split_ranges(len, ranks).into_iter().enumerate() {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(range.len());
            rest = tail;
            per[r].push((off + range.start, head));
        }
        off += len;
    }
    per
}

/// Baseline: per repeat, per tensor, each rank reduces its chunk across ranks, then a barrier.
pub(crate) fn baseline(inp: &Inputs, out: &mut [f32]) {
    let p = inp.p;
    out.fill(0.0);
    let barrier = Barrier::new(p.ranks);
    let e = p.tensor_elems;
    std::thread::scope(|s| {
        for mine in rank_slices(out, e, p.ranks) {
            let barrier = &barrier;
            s.spawn(move || {
                let mut mine = mine;
                for _ in 0..p.repeats {
                    for (off, dst) in mine.iter_mut() {
                        let (t, o) = (*off / e, *off % e);
                        for (i, d) in dst.iter_mut().enumerate() {
                            let mut sum = 0.0f32;
                            for g in &inp.grads {
                                sum += g[t][o + i];
                            }
                            *d += sum;
                        }
                        barrier.wait();
                    }
                }
            });
        }
    });
}

/// Optimized: per repeat every rank reduces its chunk of each bucket of the ranks' flat buffers
/// ([`Inputs::packed`]), with one barrier per bucket. Same threads as the baseline: no extra
/// spawns.
pub(crate) fn optimized(inp: &Inputs, out: &mut [f32]) {
    let p = inp.p;
    out.fill(0.0);
    let bufs: Vec<&[f32]> = inp.packed().iter().map(Vec::as_slice).collect();
    let barrier = Barrier::new(p.ranks);
    std::thread::scope(|s| {
        for mine in rank_slices(out, p.bucket_elems, p.ranks) {
            let (barrier, bufs) = (&barrier, &bufs);
            s.spawn(move || {
                let mut mine = mine;
                for _ in 0..p.repeats {
                    for (off, dst) in mine.iter_mut() {
                        for (i, d) in dst.iter_mut().enumerate() {
                            let mut sum = 0.0f32;
                            for g in bufs.iter() {
                                sum += g[*off + i];
                            }
                            *d += sum;
                        }
                        barrier.wait();
                    }
                }
            });
        }
    });
}

/// f64 reference.
pub(crate) fn reference(inp: &Inputs) -> Vec<f64> {
    let p = inp.p;
    let mut out = vec![0.0f64; p.tensors * p.tensor_elems];
    for (i, o) in out.iter_mut().enumerate() {
        let (t, e) = (i / p.tensor_elems, i % p.tensor_elems);
        let s: f64 = inp.grads.iter().map(|g| f64::from(g[t][e])).sum();
        *o = s * p.repeats as f64;
    }
    out
}

/// Upper estimate, in bytes, of what the CPU workload allocates for `p` (inputs, every
/// variant's output and scratch, the reference), in floating point so no shape overflows it.
pub(crate) fn footprint(p: &Params) -> f64 {
    let n = dim(p.tensors) * dim(p.tensor_elems);
    dim(p.ranks) * n * 4.0 + n * 16.0 + dim(p.bucket_elems) * dim(p.ranks) * 4.0
}

/// The CPU workload.
pub(crate) fn workload(shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
    workload_with(Arc::new(inputs(Params::from_shapes(shapes)?, seed)), seed)
}

/// The CPU workload over inputs already generated (the CUDA backend takes its work, input
/// signature and reference from here, so both backends describe the same problem).
pub(crate) fn workload_with(inp: Arc<Inputs>, seed: u64) -> Result<Workload, BackendError> {
    let p = inp.p;
    let sig = signature(
        seed,
        vec![tensor(
            "grads",
            "f32",
            &[p.ranks, p.tensors, p.tensor_elems],
        )],
    );
    let n = p.tensors * p.tensor_elems;
    let r = Arc::clone(&inp);
    let (rep, ranks, nf) = (p.repeats as f64, p.ranks as f64, n as f64);
    Ok(Workload {
        variants: vec![
            fn_variant("baseline", sig.clone(), Arc::clone(&inp), n, baseline),
            fn_variant("optimized_bucketed", sig, Arc::clone(&inp), n, optimized),
        ],
        work: Work {
            flops: Some((rep * ranks * nf).into()),
            bytes: Some((rep * (ranks + 2.0) * nf * 4.0).into()),
        },
        baseline_file: FILE.into(),
        reference: Some(Box::new(move || reference(&r))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucketed_equals_per_tensor_for_uneven_buckets() {
        let p = Params {
            tensors: 5,
            tensor_elems: 7,
            repeats: 3,
            ranks: 3,
            bucket_elems: 11,
        };
        let inp = inputs(p, 42);
        let (mut a, mut b) = (vec![0.0; 35], vec![0.0; 35]);
        baseline(&inp, &mut a);
        optimized(&inp, &mut b);
        assert_eq!(a, b);
        let want = reference(&inp);
        assert!(
            a.iter()
                .zip(&want)
                .all(|(x, w)| (f64::from(*x) - w).abs() < 1e-5)
        );
    }
}
