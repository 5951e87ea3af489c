//! `llama_3_1_8b`: Llama-3.1-shaped decoder blocks (RMSNorm, RoPE, grouped-query causal attention,
//! SwiGLU MLP) with seeded random weights, forward pass only. Baseline: unfused ops, a naive GEMM
//! and naive attention with a materialized causal mask; optimized: fused norms and activations,
//! `matrixmultiply` sgemm split across threads, and fused (flash) causal attention.

use super::flashattention4_alibi::attend_causal;
use super::gemm::{gemm_naive, sgemm_par};
use super::math::dim;
use super::math::{dot_naive, par_rows};
use super::params::ShapeParams;
use super::variant::{fn_variant, signature, tensor};
use crate::bench::backend::{BackendError, Shapes, Workload, threads};
use crate::bench::result::Work;
use serde::Deserialize;
use std::sync::Arc;

/// Source of the baseline (repo-relative).
pub(crate) const FILE: &str = "crates/tier1/src/bench/targets/llama_3_1_8b.rs";
/// RMSNorm epsilon.
pub(crate) const EPS: f32 = 1e-5;
/// RoPE base of Llama 3.1.
pub(crate) const ROPE_THETA: f32 = 500_000.0;

/// Model and input size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) struct Params {
    /// Decoder blocks.
    pub(crate) layers: usize,
    /// Hidden size.
    pub(crate) hidden: usize,
    /// Query heads.
    pub(crate) heads: usize,
    /// Key/value heads (grouped-query attention).
    pub(crate) kv_heads: usize,
    /// MLP inner size.
    pub(crate) mlp: usize,
    /// Tokens.
    pub(crate) seq: usize,
    /// Sequences.
    pub(crate) batch: usize,
}

impl ShapeParams for Params {
    const KEY: &'static str = "llama_3_1_8b";

    fn min(field: &str) -> u64 {
        if field == "hidden" { 2 } else { 1 }
    }

    fn check(self) -> Result<Self, BackendError> {
        let bad = |param: &str, message: String| BackendError::Shape {
            key: Self::KEY.into(),
            param: param.into(),
            message,
        };
        if !self.hidden.is_multiple_of(self.heads) || !(self.hidden / self.heads).is_multiple_of(2)
        {
            return Err(bad(
                "heads",
                format!(
                    "hidden {} must split into heads of even size, found {} heads",
                    self.hidden, self.heads
                ),
            ));
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(bad(
                "kv_heads",
                format!(
                    "expected a divisor of heads {}, found {}",
                    self.heads, self.kv_heads
                ),
            ));
        }
        Ok(self)
    }
}

impl Params {
    /// Head dimension.
    pub(crate) fn head_dim(&self) -> usize {
        self.hidden / self.heads
    }

    /// Width of the K and V projections.
    pub(crate) fn kv_dim(&self) -> usize {
        self.kv_heads * self.head_dim()
    }
}

/// One decoder block's weights (`[in, out]` row-major, so `y = x · W`).
#[derive(Debug, Clone)]
pub(crate) struct Layer {
    /// Attention RMSNorm weight.
    pub(crate) attn_norm: Vec<f32>,
    /// Query projection.
    pub(crate) wq: Vec<f32>,
    /// Key projection.
    pub(crate) wk: Vec<f32>,
    /// Value projection.
    pub(crate) wv: Vec<f32>,
    /// Output projection.
    pub(crate) wo: Vec<f32>,
    /// MLP RMSNorm weight.
    pub(crate) mlp_norm: Vec<f32>,
    /// SwiGLU gate.
    pub(crate) w_gate: Vec<f32>,
    /// SwiGLU up.
    pub(crate) w_up: Vec<f32>,
    /// SwiGLU down.
    pub(crate) w_down: Vec<f32>,
}

/// Weights, RoPE tables and the input activations `[batch, seq, hidden]`.
#[derive(Debug, Clone)]
pub(crate) struct Inputs {
    /// Sizes.
    pub(crate) p: Params,
    /// Blocks.
    pub(crate) layers: Vec<Layer>,
    /// Final RMSNorm weight.
    pub(crate) final_norm: Vec<f32>,
    /// `cos` table `[seq, head_dim/2]`.
    pub(crate) cos: Vec<f32>,
    /// `sin` table `[seq, head_dim/2]`.
    pub(crate) sin: Vec<f32>,
    /// Input activations.
    pub(crate) x: Vec<f32>,
}

/// Seeded weights (`N(0, 1/fan_in)`) and inputs.
pub(crate) fn inputs(p: Params, seed: u64) -> Inputs {
    let mut r = crate::bench::rng::Rng::new(seed, 50);
    let (h, kvd, m) = (p.hidden, p.kv_dim(), p.mlp);
    let mut w = |fan_in: usize, n: usize| r.normal_vec(n, 1.0 / (fan_in as f32).sqrt());
    let layers = (0..p.layers)
        .map(|_| Layer {
            attn_norm: vec![1.0; h],
            wq: w(h, h * h),
            wk: w(h, h * kvd),
            wv: w(h, h * kvd),
            wo: w(h, h * h),
            mlp_norm: vec![1.0; h],
            w_gate: w(h, h * m),
            w_up: w(h, h * m),
            w_down: w(m, m * h),
        })
        .collect();
    let half = p.head_dim() / 2;
    let (mut cos, mut sin) = (
        Vec::with_capacity(p.seq * half),
        Vec::with_capacity(p.seq * half),
    );
    for pos in 0..p.seq {
        for i in 0..half {
            let freq = ROPE_THETA.powf(-2.0 * i as f32 / p.head_dim() as f32);
            let a = pos as f32 * freq;
            cos.push(a.cos());
            sin.push(a.sin());
        }
    }
    let mut r = crate::bench::rng::Rng::new(seed, 51);
    Inputs {
        p,
        layers,
        final_norm: vec![1.0; h],
        cos,
        sin,
        x: r.normal_vec(p.batch * p.seq * h, 1.0),
    }
}

/// Rotate pairs `(2i, 2i+1)` of every head of `x` (`[seq, heads·head_dim]`) by the position angle.
pub(crate) fn rope(p: &Params, inp: &Inputs, x: &mut [f32], heads: usize) {
    let d = p.head_dim();
    let half = d / 2;
    for (pos, row) in x.chunks_mut(heads * d).enumerate() {
        for head in row.chunks_mut(d) {
            for i in 0..half {
                let (c, s) = (inp.cos[pos * half + i], inp.sin[pos * half + i]);
                let (a, b) = (head[2 * i], head[2 * i + 1]);
                head[2 * i] = a * c - b * s;
                head[2 * i + 1] = a * s + b * c;
            }
        }
    }
}

fn rmsnorm_unfused(x: &[f32], w: &[f32], h: usize) -> Vec<f32> {
    let ms: Vec<f32> = x
        .chunks(h)
        .map(|r| r.iter().map(|v| v * v).sum::<f32>() / h as f32)
        .collect();
    let mut y: Vec<f32> = x
        .chunks(h)
        .zip(&ms)
        .flat_map(|(r, m)| r.iter().map(move |v| v / (m + EPS).sqrt()))
        .collect();
    for row in y.chunks_mut(h) {
        for (v, g) in row.iter_mut().zip(w) {
            *v *= g;
        }
    }
    y
}

fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

fn attention_naive(p: &Params, q: &[f32], k: &[f32], v: &[f32]) -> Vec<f32> {
    let (t, d, kvd, h) = (p.seq, p.head_dim(), p.kv_dim(), p.hidden);
    let group = p.heads / p.kv_heads;
    let scale = 1.0 / (d as f32).sqrt();
    let mask = super::math::causal_mask(t);
    let mut out = vec![0.0f32; t * h];
    for head in 0..p.heads {
        let kvh = head / group;
        let mut scores = vec![0.0f32; t * t];
        for i in 0..t {
            for j in 0..t {
                scores[i * t + j] = dot_naive(
                    &q[i * h + head * d..i * h + (head + 1) * d],
                    &k[j * kvd + kvh * d..j * kvd + (kvh + 1) * d],
                ) * scale
                    + mask[i * t + j];
            }
        }
        super::math::softmax_rows(&mut scores, t);
        for i in 0..t {
            for j in 0..t {
                let pij = scores[i * t + j];
                for c in 0..d {
                    out[i * h + head * d + c] += pij * v[j * kvd + kvh * d + c];
                }
            }
        }
    }
    out
}

/// Baseline forward of one sequence `x` (`[seq, hidden]`) into `out`.
fn baseline_seq(inp: &Inputs, x0: &[f32], out: &mut [f32]) {
    let p = inp.p;
    let (t, h, kvd, m) = (p.seq, p.hidden, p.kv_dim(), p.mlp);
    let mut x = x0.to_vec();
    for l in &inp.layers {
        let hn = rmsnorm_unfused(&x, &l.attn_norm, h);
        let (mut q, mut k, mut v) = (vec![0.0; t * h], vec![0.0; t * kvd], vec![0.0; t * kvd]);
        gemm_naive(t, h, h, &hn, &l.wq, &mut q);
        gemm_naive(t, h, kvd, &hn, &l.wk, &mut k);
        gemm_naive(t, h, kvd, &hn, &l.wv, &mut v);
        rope(&p, inp, &mut q, p.heads);
        rope(&p, inp, &mut k, p.kv_heads);
        let a = attention_naive(&p, &q, &k, &v);
        let mut o = vec![0.0; t * h];
        gemm_naive(t, h, h, &a, &l.wo, &mut o);
        x = x.iter().zip(&o).map(|(a, b)| a + b).collect();
        let hn = rmsnorm_unfused(&x, &l.mlp_norm, h);
        let (mut g, mut u) = (vec![0.0; t * m], vec![0.0; t * m]);
        gemm_naive(t, h, m, &hn, &l.w_gate, &mut g);
        gemm_naive(t, h, m, &hn, &l.w_up, &mut u);
        let sg: Vec<f32> = g.iter().map(|v| silu(*v)).collect();
        let act: Vec<f32> = sg.iter().zip(&u).map(|(a, b)| a * b).collect();
        let mut dn = vec![0.0; t * h];
        gemm_naive(t, m, h, &act, &l.w_down, &mut dn);
        x = x.iter().zip(&dn).map(|(a, b)| a + b).collect();
    }
    out.copy_from_slice(&rmsnorm_unfused(&x, &inp.final_norm, h));
}

/// Baseline: every sequence through `baseline_seq`, one thread.
pub(crate) fn baseline(inp: &Inputs, out: &mut [f32]) {
    let n = inp.p.seq * inp.p.hidden;
    for (b, o) in out.chunks_mut(n).enumerate() {
        baseline_seq(inp, &inp.x[b * n..(b + 1) * n], o);
    }
}

fn rmsnorm_fused(x: &[f32], w: &[f32], h: usize, y: &mut [f32]) {
    for (xr, yr) in x.chunks(h).zip(y.chunks_mut(h)) {
        let inv = 1.0 / (super::math::dot(xr, xr) / h as f32 + EPS).sqrt();
        for ((yv, xv), g) in yr.iter_mut().zip(xr).zip(w) {
            *yv = xv * inv * g;
        }
    }
}

/// `[seq, heads·d]` to head-major `[heads, seq, d]`.
fn to_heads(x: &[f32], t: usize, heads: usize, d: usize, out: &mut [f32]) {
    for i in 0..t {
        for hh in 0..heads {
            out[(hh * t + i) * d..(hh * t + i + 1) * d]
                .copy_from_slice(&x[(i * heads + hh) * d..(i * heads + hh + 1) * d]);
        }
    }
}

/// Optimized forward of one sequence.
fn optimized_seq(inp: &Inputs, x0: &[f32], out: &mut [f32], threads: usize) {
    let p = inp.p;
    let (t, h, kvd, m, d) = (p.seq, p.hidden, p.kv_dim(), p.mlp, p.head_dim());
    let group = p.heads / p.kv_heads;
    let mut x = x0.to_vec();
    let mut hn = vec![0.0; t * h];
    let (mut q, mut k, mut v) = (vec![0.0; t * h], vec![0.0; t * kvd], vec![0.0; t * kvd]);
    let (mut qh, mut kh, mut vh) = (vec![0.0; t * h], vec![0.0; t * kvd], vec![0.0; t * kvd]);
    let mut oh = vec![0.0; t * h];
    let mut a = vec![0.0; t * h];
    let (mut g, mut u) = (vec![0.0; t * m], vec![0.0; t * m]);
    for l in &inp.layers {
        rmsnorm_fused(&x, &l.attn_norm, h, &mut hn);
        sgemm_par(t, h, h, &hn, &l.wq, 0.0, &mut q, threads);
        sgemm_par(t, h, kvd, &hn, &l.wk, 0.0, &mut k, threads);
        sgemm_par(t, h, kvd, &hn, &l.wv, 0.0, &mut v, threads);
        rope(&p, inp, &mut q, p.heads);
        rope(&p, inp, &mut k, p.kv_heads);
        to_heads(&q, t, p.heads, d, &mut qh);
        to_heads(&k, t, p.kv_heads, d, &mut kh);
        to_heads(&v, t, p.kv_heads, d, &mut vh);
        let attn_threads = if p.heads * t * t * d < super::gemm::PARALLEL_MIN_MACS {
            1
        } else {
            threads
        };
        par_rows(&mut oh, t * d, attn_threads, |heads, chunk| {
            for (li, hh) in heads.enumerate() {
                let kv = (hh / group) * t * d..(hh / group + 1) * t * d;
                attend_causal(
                    &qh[hh * t * d..(hh + 1) * t * d],
                    &kh[kv.clone()],
                    &vh[kv],
                    t,
                    d,
                    0.0,
                    &mut chunk[li * t * d..(li + 1) * t * d],
                );
            }
        });
        for i in 0..t {
            for hh in 0..p.heads {
                a[(i * p.heads + hh) * d..(i * p.heads + hh + 1) * d]
                    .copy_from_slice(&oh[(hh * t + i) * d..(hh * t + i + 1) * d]);
            }
        }
        sgemm_par(t, h, h, &a, &l.wo, 1.0, &mut x, threads);
        rmsnorm_fused(&x, &l.mlp_norm, h, &mut hn);
        sgemm_par(t, h, m, &hn, &l.w_gate, 0.0, &mut g, threads);
        sgemm_par(t, h, m, &hn, &l.w_up, 0.0, &mut u, threads);
        for (gv, uv) in g.iter_mut().zip(&u) {
            *gv = silu(*gv) * uv;
        }
        sgemm_par(t, m, h, &g, &l.w_down, 1.0, &mut x, threads);
    }
    rmsnorm_fused(&x, &inp.final_norm, h, out);
}

/// Optimized: every sequence through the fused path.
pub(crate) fn optimized(inp: &Inputs, out: &mut [f32], threads: usize) {
    let n = inp.p.seq * inp.p.hidden;
    for (b, o) in out.chunks_mut(n).enumerate() {
        optimized_seq(inp, &inp.x[b * n..(b + 1) * n], o, threads);
    }
}

/// Upper estimate, in bytes, of what the CPU workload allocates for `p` (inputs, every
/// variant's output and scratch, the reference), in floating point so no shape overflows it.
pub(crate) fn footprint(p: &Params) -> f64 {
    let (h, m) = (dim(p.hidden), dim(p.mlp));
    let t = dim(p.batch) * dim(p.seq);
    4.0 * (dim(p.layers) * (4.0 * h * h + 3.0 * h * m) + t * (10.0 * h + 4.0 * m + 2.0 * t))
}

/// The CPU workload (no f64 reference: too costly; verified against the baseline).
pub(crate) fn workload(shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
    workload_with(Arc::new(inputs(Params::from_shapes(shapes)?, seed)), seed)
}

/// The CPU workload over inputs already generated (the CUDA backend takes its work, input
/// signature and reference from here, so both backends describe the same problem).
pub(crate) fn workload_with(inp: Arc<Inputs>, seed: u64) -> Result<Workload, BackendError> {
    let p = inp.p;
    let sig = signature(
        seed,
        vec![
            tensor("x", "f32", &[p.batch, p.seq, p.hidden]),
            tensor(
                "weights",
                "f32",
                &[
                    p.layers,
                    p.hidden,
                    2 * p.hidden + 2 * p.kv_dim() + 3 * p.mlp,
                ],
            ),
        ],
    );
    let n = inp.x.len();
    let th = threads();
    let (b, t, h, kvd, m, nh, d, l) = (
        p.batch as f64,
        p.seq as f64,
        p.hidden as f64,
        p.kv_dim() as f64,
        p.mlp as f64,
        p.heads as f64,
        p.head_dim() as f64,
        p.layers as f64,
    );
    let gemm = 2.0 * t * h * (2.0 * h + 2.0 * kvd) + 6.0 * t * h * m;
    let attn = 2.0 * nh * t * (t + 1.0) * d;
    let weights = l * h * (2.0 * h + 2.0 * kvd + 3.0 * m) * 4.0;
    Ok(Workload {
        variants: vec![
            fn_variant("baseline", sig.clone(), Arc::clone(&inp), n, baseline),
            fn_variant(
                "optimized_sgemm_fused_attention",
                sig,
                Arc::clone(&inp),
                n,
                move |i, o| optimized(i, o, th),
            ),
        ],
        work: Work {
            flops: Some((b * l * (gemm + attn)).into()),
            bytes: Some((weights + 2.0 * b * t * h * 4.0).into()),
        },
        baseline_file: FILE.into(),
        reference: None,
    })
}
