//! `flashattention4_alibi`: causal attention with ALiBi slopes over `[batch, heads, seq, head_dim]`.
//! Baseline materializes the `seq×seq` scores, adds the bias and mask, softmaxes and multiplies by
//! V; optimized is tiled online-softmax (flash) attention with the bias computed on the fly and the
//! masked tiles skipped, multithreaded over (batch, head).

use super::math::dim;
use super::math::{dot, dot_naive, par_rows};
use super::params::ShapeParams;
use super::variant::{fn_variant, signature, tensor};
use crate::bench::backend::{BackendError, Shapes, Workload, threads};
use crate::bench::result::Work;
use serde::Deserialize;
use std::sync::Arc;

/// Source of the baseline (repo-relative).
pub(crate) const FILE: &str = "crates/tier1/src/bench/targets/flashattention4_alibi.rs";

/// Problem size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) struct Params {
    /// Batch.
    pub(crate) batch: usize,
    /// Heads.
    pub(crate) heads: usize,
    /// Sequence length.
    pub(crate) seq: usize,
    /// Head dimension.
    pub(crate) head_dim: usize,
}

impl ShapeParams for Params {
    const KEY: &'static str = "flashattention4_alibi";
}

/// Q, K, V (`[batch, heads, seq, head_dim]`) and the per-head ALiBi slopes.
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
    /// `2^(-8 (h+1) / heads)`.
    pub(crate) slopes: Vec<f32>,
}

/// The ALiBi slope of head `h` of `heads`.
pub(crate) fn alibi_slope(h: usize, heads: usize) -> f32 {
    2f32.powf(-8.0 * (h + 1) as f32 / heads as f32)
}

/// Seeded inputs.
pub(crate) fn inputs(p: Params, seed: u64) -> Inputs {
    let n = p.batch * p.heads * p.seq * p.head_dim;
    let mut r = crate::bench::rng::Rng::new(seed, 10);
    Inputs {
        p,
        q: r.normal_vec(n, 1.0),
        k: r.normal_vec(n, 1.0),
        v: r.normal_vec(n, 1.0),
        slopes: (0..p.heads).map(|h| alibi_slope(h, p.heads)).collect(),
    }
}

/// Baseline: per (batch, head) materialize scores, add bias and mask, softmax, then P·V.
pub(crate) fn baseline(inp: &Inputs, out: &mut [f32]) {
    let Params {
        seq: s,
        head_dim: d,
        ..
    } = inp.p;
    let scale = 1.0 / (d as f32).sqrt();
    for (bh, o) in out.chunks_mut(s * d).enumerate() {
        let slope = inp.slopes[bh % inp.p.heads];
        let (q, k, v) = (
            &inp.q[bh * s * d..(bh + 1) * s * d],
            &inp.k[bh * s * d..(bh + 1) * s * d],
            &inp.v[bh * s * d..(bh + 1) * s * d],
        );
        let mut scores = vec![0.0f32; s * s];
        for i in 0..s {
            for j in 0..s {
                scores[i * s + j] =
                    dot_naive(&q[i * d..(i + 1) * d], &k[j * d..(j + 1) * d]) * scale;
            }
        }
        let mut bias = vec![0.0f32; s * s];
        for i in 0..s {
            for j in 0..s {
                bias[i * s + j] = if j <= i {
                    -slope * (i - j) as f32
                } else {
                    f32::NEG_INFINITY
                };
            }
        }
        for (x, b) in scores.iter_mut().zip(&bias) {
            *x += b;
        }
        super::math::softmax_rows(&mut scores, s);
        o.fill(0.0);
        for i in 0..s {
            let orow = &mut o[i * d..(i + 1) * d];
            for j in 0..s {
                let pij = scores[i * s + j];
                for (ov, vv) in orow.iter_mut().zip(&v[j * d..(j + 1) * d]) {
                    *ov += pij * vv;
                }
            }
        }
    }
}

const BR: usize = 32;
const BC: usize = 64;

/// Flash attention of one head: `q`, `k`, `v`, `out` are `seq×d`; causal, bias `-slope·(i-j)`.
pub(crate) fn attend_causal(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    s: usize,
    d: usize,
    slope: f32,
    out: &mut [f32],
) {
    let scale = 1.0 / (d as f32).sqrt();
    let mut sc = vec![0.0f32; BR * BC];
    let mut m = [0.0f32; BR];
    let mut l = [0.0f32; BR];
    for i0 in (0..s).step_by(BR) {
        let br = BR.min(s - i0);
        m[..br].fill(f32::NEG_INFINITY);
        l[..br].fill(0.0);
        out[i0 * d..(i0 + br) * d].fill(0.0);
        for j0 in (0..=(i0 + br - 1)).step_by(BC) {
            let bc = BC.min(s - j0);
            for ii in 0..br {
                let i = i0 + ii;
                let qi = &q[i * d..(i + 1) * d];
                let row = &mut sc[ii * BC..ii * BC + bc];
                let mut row_max = f32::NEG_INFINITY;
                for (jj, x) in row.iter_mut().enumerate() {
                    let j = j0 + jj;
                    *x = if j <= i {
                        dot(qi, &k[j * d..(j + 1) * d]) * scale - slope * (i - j) as f32
                    } else {
                        f32::NEG_INFINITY
                    };
                    row_max = row_max.max(*x);
                }
                let new_m = m[ii].max(row_max);
                if new_m == f32::NEG_INFINITY {
                    continue;
                }
                let corr = (m[ii] - new_m).exp();
                let orow = &mut out[i * d..(i + 1) * d];
                for ov in orow.iter_mut() {
                    *ov *= corr;
                }
                let mut sum = 0.0;
                for (jj, x) in row.iter().enumerate() {
                    let pij = (x - new_m).exp();
                    if pij == 0.0 {
                        continue;
                    }
                    sum += pij;
                    let vj = &v[(j0 + jj) * d..(j0 + jj + 1) * d];
                    for (ov, vv) in orow.iter_mut().zip(vj) {
                        *ov += pij * vv;
                    }
                }
                l[ii] = l[ii] * corr + sum;
                m[ii] = new_m;
            }
        }
        for ii in 0..br {
            let inv = 1.0 / l[ii];
            for ov in &mut out[(i0 + ii) * d..(i0 + ii + 1) * d] {
                *ov *= inv;
            }
        }
    }
}

/// Optimized: [`attend_causal`] per (batch, head), heads split across threads (one thread below
/// `gemm::PARALLEL_MIN_MACS` multiply-adds).
pub(crate) fn optimized(inp: &Inputs, out: &mut [f32], threads: usize) {
    let Params {
        seq: s,
        head_dim: d,
        heads,
        batch,
    } = inp.p;
    let threads = if batch * heads * s * s * d < super::gemm::PARALLEL_MIN_MACS {
        1
    } else {
        threads
    };
    par_rows(out, s * d, threads, |bhs, chunk| {
        for (li, bh) in bhs.enumerate() {
            let r = bh * s * d..(bh + 1) * s * d;
            attend_causal(
                &inp.q[r.clone()],
                &inp.k[r.clone()],
                &inp.v[r],
                s,
                d,
                inp.slopes[bh % heads],
                &mut chunk[li * s * d..(li + 1) * s * d],
            );
        }
    });
}

/// f64 reference.
pub(crate) fn reference(inp: &Inputs) -> Vec<f64> {
    let Params {
        seq: s,
        head_dim: d,
        heads,
        ..
    } = inp.p;
    let n = inp.q.len();
    let mut out = vec![0.0f64; n];
    let scale = 1.0 / (d as f64).sqrt();
    let f = |x: &[f32], i: usize| x[i] as f64;
    for bh in 0..n / (s * d) {
        let slope = f64::from(inp.slopes[bh % heads]);
        let base = bh * s * d;
        for i in 0..s {
            let sc: Vec<f64> = (0..=i)
                .map(|j| {
                    (0..d)
                        .map(|t| f(&inp.q, base + i * d + t) * f(&inp.k, base + j * d + t))
                        .sum::<f64>()
                        * scale
                        - slope * (i - j) as f64
                })
                .collect();
            let max = sc.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = sc.iter().map(|x| (x - max).exp()).collect();
            let sum: f64 = e.iter().sum();
            for t in 0..d {
                out[base + i * d + t] = e
                    .iter()
                    .enumerate()
                    .map(|(j, p)| p * f(&inp.v, base + j * d + t))
                    .sum::<f64>()
                    / sum;
            }
        }
    }
    out
}

/// Upper estimate, in bytes, of what the CPU workload allocates for `p` (inputs, every
/// variant's output and scratch, the reference), in floating point so no shape overflows it.
pub(crate) fn footprint(p: &Params) -> f64 {
    let n = dim(p.batch) * dim(p.heads) * dim(p.seq) * dim(p.head_dim);
    n * 28.0 + dim(p.seq) * dim(p.seq) * 8.0
}

/// The CPU workload.
pub(crate) fn workload(shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
    workload_with(Arc::new(inputs(Params::from_shapes(shapes)?, seed)), seed)
}

/// The CPU workload over inputs already generated (the CUDA backend takes its work, input
/// signature and reference from here, so both backends describe the same problem).
pub(crate) fn workload_with(inp: Arc<Inputs>, seed: u64) -> Result<Workload, BackendError> {
    let p = inp.p;
    let dims = [p.batch, p.heads, p.seq, p.head_dim];
    let sig = signature(
        seed,
        vec![
            tensor("q", "f32", &dims),
            tensor("k", "f32", &dims),
            tensor("v", "f32", &dims),
            tensor("alibi_slopes", "f32", &[p.heads]),
        ],
    );
    let n = inp.q.len();
    let t = threads();
    let r = Arc::clone(&inp);
    let (bh, s, d) = ((p.batch * p.heads) as f64, p.seq as f64, p.head_dim as f64);
    Ok(Workload {
        variants: vec![
            fn_variant("baseline", sig.clone(), Arc::clone(&inp), n, baseline),
            fn_variant(
                "optimized_flash_online_softmax",
                sig,
                Arc::clone(&inp),
                n,
                move |i, o| optimized(i, o, t),
            ),
        ],
        // Causal useful work: QKᵀ and P·V over the lower triangle.
        work: Work {
            flops: Some((2.0 * bh * s * (s + 1.0) * d).into()),
            bytes: Some((4.0 * bh * s * d * 4.0).into()),
        },
        baseline_file: FILE.into(),
        reference: (n * p.seq <= 1 << 28)
            .then(|| Box::new(move || reference(&r)) as crate::bench::backend::Reference),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flash_matches_reference_on_ragged_tiles() {
        let p = Params {
            batch: 1,
            heads: 3,
            seq: 77,
            head_dim: 12,
        };
        let inp = inputs(p, 42);
        let want = reference(&inp);
        let n = inp.q.len();
        let (mut b, mut o) = (vec![0.0; n], vec![0.0; n]);
        baseline(&inp, &mut b);
        optimized(&inp, &mut o, 2);
        for ((x, y), w) in b.iter().zip(&o).zip(&want) {
            assert!((f64::from(*x) - w).abs() < 1e-4 && (f64::from(*y) - w).abs() < 1e-4);
        }
    }
}
