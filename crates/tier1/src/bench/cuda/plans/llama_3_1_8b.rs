//! The `llama_3_1_8b` device plan: per sequence and layer, the unfused baseline (naive GEMMs on
//! views of the packed weights, materialized masked scores, separate residual and activation
//! kernels) and the fused path (tiled GEMMs with the residual in the epilogue, flash attention
//! with GQA, fused SwiGLU). Weights are `[out, in]`: `wqkv` `[(heads + 2 kv_heads)·hd, hidden]`,
//! `wo` `[hidden, hidden]`, `wgu` `[2·mlp, hidden]`, `wdown` `[hidden, mlp]`, layers concatenated.
//! Host side: the weights transposed and RoPE-permuted, and the causal mask.

use super::build::{each, input, owned};
use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::host::{self, HostData};
use crate::bench::cuda::launch_sizes::{BLOCK_REDUCE_SHARED, GEMM_TILE_SHARED, flash_shared};
use crate::bench::cuda::plan::{
    Arg, Output, Plan, Step, VariantPlan, blocks, buf, buf_at, int, launch, launch3,
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

/// The plan at `p`.
pub(crate) fn plan(p: Params) -> Result<Plan, BackendError> {
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
    let d = Dims {
        seq: p.seq,
        h: p.hidden,
        hd,
        heads: p.heads,
        kvh: p.kv_heads,
        qkvd,
    };
    for (name, v) in [
        ("seq·(2·mlp)", p.seq * 2 * p.mlp),
        ("heads·seq·seq", p.heads * p.seq * p.seq),
        ("hidden", qkvd.max(2 * p.mlp)),
    ] {
        int(KEY, name, v)?;
    }
    let (h, seq, mlp, f) = (p.hidden, p.seq, p.mlp, 4usize);
    let act = seq * h;
    let scale = Arg::F32(1.0 / (hd as f32).sqrt());
    let (wqkv_l, wo_l, wgu_l, wdown_l) = (qkvd * h, h * h, 2 * mlp * h, h * mlp);
    let mut base = Vec::new();
    let mut fused = Vec::new();
    for b in 0..p.batch {
        for steps in [&mut base, &mut fused] {
            steps.push(Step::Copy {
                src: buf_at("x", b * act * f),
                dst: buf("xs"),
                bytes: (act * f) as u64,
            });
        }
        for l in 0..p.layers {
            let norm = |which: usize| buf_at("norms", (2 * l + which) * h * f);
            let wqkv = |row: usize| buf_at("wqkv", (l * wqkv_l + row * h) * f);
            let wgu = |row: usize| buf_at("wgu", (l * wgu_l + row * h) * f);
            let (wo, wdown) = (buf_at("wo", l * wo_l * f), buf_at("wdown", l * wdown_l * f));
            // Baseline.
            base.push(rmsnorm(d, buf("xs"), norm(0), buf("xn")));
            base.push(naive(
                d,
                buf("xn"),
                wqkv(0),
                buf("qkv"),
                p.heads * hd,
                h,
                h,
                qkvd,
            ));
            base.push(naive(
                d,
                buf("xn"),
                wqkv(p.heads * hd),
                buf_at("qkv", p.heads * hd * f),
                p.kv_heads * hd,
                h,
                h,
                qkvd,
            ));
            base.push(naive(
                d,
                buf("xn"),
                wqkv((p.heads + p.kv_heads) * hd),
                buf_at("qkv", (p.heads + p.kv_heads) * hd * f),
                p.kv_heads * hd,
                h,
                h,
                qkvd,
            ));
            base.push(rope(d, p.heads, 0));
            base.push(rope(d, p.kv_heads, p.heads * hd));
            base.push(launch3(
                "llama_attn_scores_masked",
                (blocks(seq, 256), seq as u32, p.heads as u32),
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
                    scale,
                ],
            ));
            base.push(launch(
                "llama_softmax_rows",
                (p.heads * seq) as u32,
                256,
                2 * BLOCK_REDUCE_SHARED,
                vec![buf("scores"), i(seq)],
            ));
            base.push(launch3(
                "llama_attn_pv",
                (blocks(p.heads * hd, 256), seq as u32, 1),
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
            ));
            base.push(naive(d, buf("attn"), wo, buf("tmp"), h, h, h, h));
            base.push(elementwise("llama_add", act, vec![buf("xs"), buf("tmp")]));
            base.push(rmsnorm(d, buf("xs"), norm(1), buf("xn")));
            base.push(naive(d, buf("xn"), wgu(0), buf("gate"), mlp, h, h, mlp));
            base.push(naive(d, buf("xn"), wgu(mlp), buf("up"), mlp, h, h, mlp));
            base.push(elementwise("llama_silu", seq * mlp, vec![buf("gate")]));
            base.push(elementwise(
                "llama_mul",
                seq * mlp,
                vec![buf("gate"), buf("up")],
            ));
            base.push(naive(d, buf("gate"), wdown, buf("tmp"), h, mlp, mlp, h));
            base.push(elementwise("llama_add", act, vec![buf("xs"), buf("tmp")]));
            // Fused.
            fused.push(rmsnorm(d, buf("xs"), norm(0), buf("xn")));
            fused.push(tiled(
                d,
                buf("xn"),
                wqkv(0),
                buf("qkv"),
                qkvd,
                h,
                qkvd,
                false,
            ));
            fused.push(rope(d, p.heads, 0));
            fused.push(rope(d, p.kv_heads, p.heads * hd));
            fused.push(launch3(
                "llama_attn_flash",
                (blocks(seq, 64), p.heads as u32, 1),
                (128, 1, 1),
                flash_shared(2),
                vec![
                    buf("qkv"),
                    buf("attn"),
                    i(seq),
                    i(d.heads),
                    i(d.kvh),
                    i(hd),
                    scale,
                ],
            ));
            fused.push(tiled(d, buf("attn"), wo, buf("xs"), h, h, h, true));
            fused.push(rmsnorm(d, buf("xs"), norm(1), buf("xn")));
            fused.push(tiled(
                d,
                buf("xn"),
                wgu(0),
                buf("gu"),
                2 * mlp,
                h,
                2 * mlp,
                false,
            ));
            fused.push(launch(
                "llama_swiglu",
                blocks(seq * mlp, 256),
                256,
                0,
                vec![buf("gu"), buf("hid"), i(seq), i(mlp)],
            ));
            fused.push(tiled(d, buf("hid"), wdown, buf("xs"), h, mlp, h, true));
        }
        let fin = buf_at("final_norm", 0);
        base.push(rmsnorm(d, buf("xs"), fin, buf_at("out_base", b * act * f)));
        fused.push(rmsnorm(d, buf("xs"), fin, buf_at("out_fused", b * act * f)));
    }
    let n = p.batch * act;
    let mut buffers = vec![
        input("x", n * f),
        input("norms", 2 * p.layers * h * f),
        input("final_norm", h * f),
        input("wqkv", p.layers * wqkv_l * f),
        input("wo", p.layers * wo_l * f),
        input("wgu", p.layers * wgu_l * f),
        input("wdown", p.layers * wdown_l * f),
        input("mask", seq * seq * f),
    ];
    for (name, bytes) in [("xs", act), ("xn", act), ("qkv", seq * qkvd), ("attn", act)] {
        buffers.push(each(name, bytes * f));
    }
    buffers.extend([
        owned("scores", p.heads * seq * seq * f, 0),
        owned("tmp", act * f, 0),
        owned("gate", seq * mlp * f, 0),
        owned("up", seq * mlp * f, 0),
        owned("out_base", n * f, 0),
        owned("gu", seq * 2 * mlp * f, 1),
        owned("hid", seq * mlp * f, 1),
        owned("out_fused", n * f, 1),
    ]);
    let out = |name| Output::F32 {
        buf: name,
        rows: n / h,
        cols: h,
        ld: h,
    };
    Ok(Plan {
        key: "llama_3_1_8b",
        buffers,
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
