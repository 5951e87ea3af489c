//! The `llama_3_1_8b` device plan: per sequence and layer, the unfused baseline (naive GEMMs on
//! views of the packed weights, materialized masked scores, separate residual and activation
//! kernels) and the fused path (tiled GEMMs with the residual in the epilogue, flash attention
//! with GQA, fused SwiGLU). Weights are `[out, in]`: `wqkv` `[(heads + 2 kv_heads)·hd, hidden]`,
//! `wo` `[hidden, hidden]`, `wgu` `[2·mlp, hidden]`, `wdown` `[hidden, mlp]`, layers concatenated.
//! Host side: the weights transposed and RoPE-permuted, and the causal mask.
//!
//! `plan` reads as its steps: `checked_dims` (the shape refusals), then per sequence `sequence`
//! (per layer, over that layer's `LayerWeights` views, a `baseline_layer` and a `fused_layer`),
//! then `buffers`.

use super::build::{each, input, owned};
use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::host::{self, HostData};
use crate::bench::cuda::launch_sizes::{BLOCK_REDUCE_SHARED, GEMM_TILE_SHARED, flash_shared};
use crate::bench::cuda::plan::{
    Arg, BufSpec, Output, Plan, Step, VariantPlan, blocks, buf, buf_at, int, launch, launch3,
};
use crate::bench::cuda::spec::CudaSpec;
use crate::bench::targets::llama_3_1_8b::{self, EPS, Params, ROPE_THETA};
use crate::bench::targets::math::causal_mask;
use crate::bench::targets::params::ShapeParams;
use std::sync::Arc;

/// The CUDA side of `llama_3_1_8b`: plan, host buffers, launched entries.
pub(crate) const CUDA: CudaSpec = CudaSpec {
    plan: |shapes| plan(Params::from_shapes(shapes)?),
    inputs,
    baseline: &[
        "llama_rmsnorm",
        "llama_rope",
        "llama_matmul_naive",
        "llama_attn_scores_masked",
        "llama_softmax_rows",
        "llama_attn_pv",
        "llama_add",
        "llama_silu",
        "llama_mul",
    ],
    optimized: &[
        "llama_rmsnorm",
        "llama_rope",
        "llama_matmul_tiled",
        "llama_attn_flash",
        "llama_swiglu",
    ],
};

/// The input buffers at `shapes` and `seed`, with the CPU twin over the same inputs.
fn inputs(shapes: &Shapes, seed: u64) -> Result<(host::Inputs, Workload), BackendError> {
    let inp = Arc::new(llama_3_1_8b::inputs(Params::from_shapes(shapes)?, seed));
    Ok((host_inputs(&inp), llama_3_1_8b::workload_with(inp, seed)?))
}

const KEY: &str = "llama_3_1_8b";

/// Sizes every step uses, checked to fit the kernels' `int`.
#[derive(Clone, Copy)]
struct Dims {
    seq: usize,
    h: usize,
    hd: usize,
    heads: usize,
    kvh: usize,
    qkvd: usize,
    mlp: usize,
}

impl Dims {
    /// Elements of one sequence's activations, `seq × hidden`.
    fn act(self) -> usize {
        self.seq * self.h
    }

    /// Elements of one layer's `wqkv`, `wo`, `wgu` and `wdown`.
    fn layer_elems(self) -> [usize; 4] {
        let (h, mlp) = (self.h, self.mlp);
        [self.qkvd * h, h * h, 2 * mlp * h, h * mlp]
    }

    /// The attention scale `1/√head_dim`.
    fn scale(self) -> Arg {
        Arg::F32(1.0 / (self.hd as f32).sqrt())
    }
}

/// Bytes of an f32.
const F: usize = 4;

/// Layer `l`'s views of the packed weights and norms.
#[derive(Clone, Copy)]
struct LayerWeights {
    /// The norms before attention and before the MLP.
    attn_norm: Arg,
    mlp_norm: Arg,
    /// The Q, K and V rows of `wqkv` (the fused path's one GEMM reads all of it from `wq`).
    wq: Arg,
    wk: Arg,
    wv: Arg,
    wo: Arg,
    /// The gate and up rows of `wgu` (the fused path's one GEMM reads both from `wgate`).
    wgate: Arg,
    wup: Arg,
    wdown: Arg,
}

impl LayerWeights {
    /// The views of layer `l`.
    fn at(d: Dims, l: usize) -> Self {
        let [wqkv_l, wo_l, wgu_l, wdown_l] = d.layer_elems();
        let h = d.h;
        let norm = |which: usize| buf_at("norms", (2 * l + which) * h * F);
        let wqkv = |row: usize| buf_at("wqkv", (l * wqkv_l + row * h) * F);
        let wgu = |row: usize| buf_at("wgu", (l * wgu_l + row * h) * F);
        Self {
            attn_norm: norm(0),
            mlp_norm: norm(1),
            wq: wqkv(0),
            wk: wqkv(d.heads * d.hd),
            wv: wqkv((d.heads + d.kvh) * d.hd),
            wo: buf_at("wo", l * wo_l * F),
            wgate: wgu(0),
            wup: wgu(d.mlp),
            wdown: buf_at("wdown", l * wdown_l * F),
        }
    }
}

fn i(v: usize) -> Arg {
    Arg::I32(v as i32)
}

fn rmsnorm(d: Dims, x: Arg, w: Arg, y: Arg) -> Step {
    launch(
        "llama_rmsnorm",
        d.seq as u32,
        256,
        BLOCK_REDUCE_SHARED,
        vec![x, w, y, i(d.h), Arg::F32(EPS)],
    )
}

fn rope(d: Dims, heads: usize, col0: usize) -> Step {
    launch(
        "llama_rope",
        blocks(d.seq * heads * d.hd / 2, 256),
        256,
        0,
        vec![
            buf("qkv"),
            i(d.seq),
            i(heads),
            i(d.hd),
            i(d.qkvd),
            i(col0),
            Arg::F32(ROPE_THETA),
        ],
    )
}

/// `c[m, n] = a[m, :k] · w[n, :k]` with strides, one thread per output.
#[allow(clippy::too_many_arguments)]
fn naive(d: Dims, a: Arg, w: Arg, c: Arg, n: usize, k: usize, lda: usize, ldc: usize) -> Step {
    launch3(
        "llama_matmul_naive",
        (blocks(n, 256), d.seq as u32, 1),
        (256, 1, 1),
        0,
        vec![a, w, c, i(d.seq), i(n), i(k), i(lda), i(k), i(ldc)],
    )
}

/// `c (+)= a · wᵀ` through the 64×64 tile.
#[allow(clippy::too_many_arguments)]
fn tiled(d: Dims, a: Arg, w: Arg, c: Arg, n: usize, k: usize, ldc: usize, acc: bool) -> Step {
    launch3(
        "llama_matmul_tiled",
        (blocks(n, 64), blocks(d.seq, 64), 1),
        (256, 1, 1),
        GEMM_TILE_SHARED,
        vec![
            a,
            w,
            c,
            i(d.seq),
            i(n),
            i(k),
            i(k),
            i(k),
            i(ldc),
            i(usize::from(acc)),
        ],
    )
}

fn elementwise(kernel: &'static str, n: usize, args: Vec<Arg>) -> Step {
    let mut args = args;
    args.push(Arg::I64(n as i64));
    launch(kernel, blocks(n, 256), 256, 0, args)
}

/// The plan at `p`: the checked dims, then per sequence both variants' steps, over the buffers.
pub(crate) fn plan(p: Params) -> Result<Plan, BackendError> {
    let d = checked_dims(p)?;
    let mut base = Vec::new();
    let mut fused = Vec::new();
    for b in 0..p.batch {
        sequence(d, p.layers, b, &mut base, &mut fused);
    }
    let (n, h) = (p.batch * d.act(), d.h);
    let out = |name| Output::F32 {
        buf: name,
        rows: n / h,
        cols: h,
        ld: h,
    };
    Ok(Plan {
        key: "llama_3_1_8b",
        buffers: buffers(p, d),
        variants: vec![
            VariantPlan {
                name: "baseline".into(),
                steps: base,
                graph: false,
                output: out("out_base"),
            },
            VariantPlan {
                name: "optimized_fused_tiled".into(),
                steps: fused,
                graph: false,
                output: out("out_fused"),
            },
        ],
    })
}

/// The dims of `p`, refused past the flash kernel's head_dim, the grid's y or the kernels' `int`.
fn checked_dims(p: Params) -> Result<Dims, BackendError> {
    let hd = p.head_dim();
    if hd > 128 {
        return Err(BackendError::Shape {
            key: KEY.into(),
            param: "heads".into(),
            message: format!("llama_attn_flash supports head_dim at most 128, found {hd}"),
        });
    }
    if p.seq > 65535 {
        return Err(BackendError::Shape {
            key: KEY.into(),
            param: "seq".into(),
            message: format!("at most 65535 (grid y), found {}", p.seq),
        });
    }
    let qkvd = (p.heads + 2 * p.kv_heads) * hd;
    for (name, v) in [
        ("seq·(2·mlp)", p.seq * 2 * p.mlp),
        ("heads·seq·seq", p.heads * p.seq * p.seq),
        ("hidden", qkvd.max(2 * p.mlp)),
    ] {
        int(KEY, name, v)?;
    }
    Ok(Dims {
        seq: p.seq,
        h: p.hidden,
        hd,
        heads: p.heads,
        kvh: p.kv_heads,
        qkvd,
        mlp: p.mlp,
    })
}

/// Sequence `b` in both variants: copied into `xs`, every layer, the final norm into its output.
fn sequence(d: Dims, layers: usize, b: usize, base: &mut Vec<Step>, fused: &mut Vec<Step>) {
    let act = d.act();
    for steps in [&mut *base, &mut *fused] {
        steps.push(Step::Copy {
            src: buf_at("x", b * act * F),
            dst: buf("xs"),
            bytes: (act * F) as u64,
        });
    }
    for l in 0..layers {
        let w = LayerWeights::at(d, l);
        baseline_layer(d, w, base);
        fused_layer(d, w, fused);
    }
    let fin = buf_at("final_norm", 0);
    base.push(rmsnorm(d, buf("xs"), fin, buf_at("out_base", b * act * F)));
    fused.push(rmsnorm(d, buf("xs"), fin, buf_at("out_fused", b * act * F)));
}

/// One baseline layer: naive GEMMs, materialized attention, separate residual adds and SwiGLU.
fn baseline_layer(d: Dims, w: LayerWeights, steps: &mut Vec<Step>) {
    let (h, hd, seq, mlp, qkvd) = (d.h, d.hd, d.seq, d.mlp, d.qkvd);
    let act = d.act();
    steps.push(rmsnorm(d, buf("xs"), w.attn_norm, buf("xn")));
    steps.push(naive(
        d,
        buf("xn"),
        w.wq,
        buf("qkv"),
        d.heads * hd,
        h,
        h,
        qkvd,
    ));
    steps.push(naive(
        d,
        buf("xn"),
        w.wk,
        buf_at("qkv", d.heads * hd * F),
        d.kvh * hd,
        h,
        h,
        qkvd,
    ));
    steps.push(naive(
        d,
        buf("xn"),
        w.wv,
        buf_at("qkv", (d.heads + d.kvh) * hd * F),
        d.kvh * hd,
        h,
        h,
        qkvd,
    ));
    steps.push(rope(d, d.heads, 0));
    steps.push(rope(d, d.kvh, d.heads * hd));
    steps.extend(baseline_attention(d));
    steps.push(naive(d, buf("attn"), w.wo, buf("tmp"), h, h, h, h));
    steps.push(elementwise("llama_add", act, vec![buf("xs"), buf("tmp")]));
    steps.push(rmsnorm(d, buf("xs"), w.mlp_norm, buf("xn")));
    steps.push(naive(d, buf("xn"), w.wgate, buf("gate"), mlp, h, h, mlp));
    steps.push(naive(d, buf("xn"), w.wup, buf("up"), mlp, h, h, mlp));
    steps.push(elementwise("llama_silu", seq * mlp, vec![buf("gate")]));
    steps.push(elementwise(
        "llama_mul",
        seq * mlp,
        vec![buf("gate"), buf("up")],
    ));
    steps.push(naive(d, buf("gate"), w.wdown, buf("tmp"), h, mlp, mlp, h));
    steps.push(elementwise("llama_add", act, vec![buf("xs"), buf("tmp")]));
}

/// The baseline's attention: masked scores materialized, softmax over rows, then P·V.
fn baseline_attention(d: Dims) -> [Step; 3] {
    let (seq, hd) = (d.seq, d.hd);
    [
        launch3(
            "llama_attn_scores_masked",
            (blocks(seq, 256), seq as u32, d.heads as u32),
            (256, 1, 1),
            0,
            vec![
                buf("qkv"),
                buf("mask"),
                buf("scores"),
                i(seq),
                i(d.heads),
                i(d.kvh),
                i(hd),
                d.scale(),
            ],
        ),
        launch(
            "llama_softmax_rows",
            (d.heads * seq) as u32,
            256,
            2 * BLOCK_REDUCE_SHARED,
            vec![buf("scores"), i(seq)],
        ),
        launch3(
            "llama_attn_pv",
            (blocks(d.heads * hd, 256), seq as u32, 1),
            (256, 1, 1),
            0,
            vec![
                buf("scores"),
                buf("qkv"),
                buf("attn"),
                i(seq),
                i(d.heads),
                i(d.kvh),
                i(hd),
            ],
        ),
    ]
}

/// One fused layer: tiled GEMMs with the residual in the epilogue, flash attention, SwiGLU.
fn fused_layer(d: Dims, w: LayerWeights, steps: &mut Vec<Step>) {
    let (h, hd, seq, mlp, qkvd) = (d.h, d.hd, d.seq, d.mlp, d.qkvd);
    steps.push(rmsnorm(d, buf("xs"), w.attn_norm, buf("xn")));
    steps.push(tiled(d, buf("xn"), w.wq, buf("qkv"), qkvd, h, qkvd, false));
    steps.push(rope(d, d.heads, 0));
    steps.push(rope(d, d.kvh, d.heads * hd));
    steps.push(launch3(
        "llama_attn_flash",
        (blocks(seq, 64), d.heads as u32, 1),
        (128, 1, 1),
        flash_shared(2),
        vec![
            buf("qkv"),
            buf("attn"),
            i(seq),
            i(d.heads),
            i(d.kvh),
            i(hd),
            d.scale(),
        ],
    ));
    steps.push(tiled(d, buf("attn"), w.wo, buf("xs"), h, h, h, true));
    steps.push(rmsnorm(d, buf("xs"), w.mlp_norm, buf("xn")));
    steps.push(tiled(
        d,
        buf("xn"),
        w.wgate,
        buf("gu"),
        2 * mlp,
        h,
        2 * mlp,
        false,
    ));
    steps.push(launch(
        "llama_swiglu",
        blocks(seq * mlp, 256),
        256,
        0,
        vec![buf("gu"), buf("hid"), i(seq), i(mlp)],
    ));
    steps.push(tiled(d, buf("hid"), w.wdown, buf("xs"), h, mlp, h, true));
}

/// The buffers: the inputs, per-sequence activations, then each variant's own.
fn buffers(p: Params, d: Dims) -> Vec<BufSpec> {
    let (h, seq, mlp, act) = (d.h, d.seq, d.mlp, d.act());
    let [wqkv_l, wo_l, wgu_l, wdown_l] = d.layer_elems();
    let n = p.batch * act;
    let mut buffers = vec![
        input("x", n * F),
        input("norms", 2 * p.layers * h * F),
        input("final_norm", h * F),
        input("wqkv", p.layers * wqkv_l * F),
        input("wo", p.layers * wo_l * F),
        input("wgu", p.layers * wgu_l * F),
        input("wdown", p.layers * wdown_l * F),
        input("mask", seq * seq * F),
    ];
    for (name, bytes) in [
        ("xs", act),
        ("xn", act),
        ("qkv", seq * d.qkvd),
        ("attn", act),
    ] {
        buffers.push(each(name, bytes * F));
    }
    buffers.extend([
        owned("scores", p.heads * seq * seq * F, 0),
        owned("tmp", act * F, 0),
        owned("gate", seq * mlp * F, 0),
        owned("up", seq * mlp * F, 0),
        owned("out_base", n * F, 0),
        owned("gu", seq * 2 * mlp * F, 1),
        owned("hid", seq * mlp * F, 1),
        owned("out_fused", n * F, 1),
    ]);
    buffers
}

/// Head-dim permutation that turns the CPU's interleaved RoPE pairs `(2i, 2i+1)` into the
/// kernel's halves `(i, i + hd/2)`: kernel feature `c` reads CPU feature `rope_perm(c, hd)`.
/// Scores `q·k` are unchanged (both sides permuted alike), so attention outputs match.
pub(crate) fn rope_perm(c: usize, hd: usize) -> usize {
    let half = hd / 2;
    if c < half { 2 * c } else { 2 * (c - half) + 1 }
}

/// Llama weights `[in, out]` to the kernels' `[out, in]`, Q/K rows permuted by [`rope_perm`].
pub(crate) fn host_inputs(inp: &llama_3_1_8b::Inputs) -> host::Inputs {
    let p = inp.p;
    let (h, hd, kvd, m) = (p.hidden, p.head_dim(), p.kv_dim(), p.mlp);
    // Row `r` of the transposed [out, in] matrix is column `col(r)` of the [in, out] source.
    let transpose_into =
        |dst: &mut Vec<f32>, src: &[f32], ins: usize, outs: usize, col: &dyn Fn(usize) -> usize| {
            for r in 0..outs {
                let c = col(r);
                dst.extend((0..ins).map(|i| src[i * outs + c]));
            }
        };
    let permuted = |r: usize| (r / hd) * hd + rope_perm(r % hd, hd);
    let (mut wqkv, mut wo, mut wgu, mut wdown, mut norms) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for l in &inp.layers {
        transpose_into(&mut wqkv, &l.wq, h, h, &permuted);
        transpose_into(&mut wqkv, &l.wk, h, kvd, &permuted);
        transpose_into(&mut wqkv, &l.wv, h, kvd, &|r| r);
        transpose_into(&mut wo, &l.wo, h, h, &|r| r);
        transpose_into(&mut wgu, &l.w_gate, h, m, &|r| r);
        transpose_into(&mut wgu, &l.w_up, h, m, &|r| r);
        transpose_into(&mut wdown, &l.w_down, m, h, &|r| r);
        norms.extend_from_slice(&l.attn_norm);
        norms.extend_from_slice(&l.mlp_norm);
    }
    let t = p.seq;
    let mask = causal_mask(t);
    vec![
        ("x", HostData::F32(inp.x.clone())),
        ("norms", HostData::F32(norms)),
        ("final_norm", HostData::F32(inp.final_norm.clone())),
        ("wqkv", HostData::F32(wqkv)),
        ("wo", HostData::F32(wo)),
        ("wgu", HostData::F32(wgu)),
        ("wdown", HostData::F32(wdown)),
        ("mask", HostData::F32(mask)),
    ]
}
