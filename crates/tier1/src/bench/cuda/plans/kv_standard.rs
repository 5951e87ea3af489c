//! `kv_standard` on CUDA: append each decode step to a bf16 cache (baseline) or to an FP8 E4M3
//! cache with one scale per (layer, position) (optimized), and the tokens in the kernels' layout.

use super::build::{input, owned, variant};
use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::host::{self, HostData};
use crate::bench::cuda::launch_sizes::BLOCK_REDUCE_SHARED;
use crate::bench::cuda::plan::{Arg, Output, Plan, blocks_capped, buf, buf_at, int, launch};
use crate::bench::cuda::spec::CudaSpec;
use crate::bench::targets::kv_standard::{self, Params};
use crate::bench::targets::params::ShapeParams;
use std::sync::Arc;

/// The CUDA side of `kv_standard`: plan, host buffers, launched entries.
pub(crate) const CUDA: CudaSpec = CudaSpec {
    plan: |shapes| plan(Params::from_shapes(shapes)?),
    inputs,
    baseline: &["kv_append_bf16"],
    optimized: &["kv_append_fp8"],
};

/// The input buffers at `shapes` and `seed`, with the CPU twin over the same inputs.
fn inputs(shapes: &Shapes, seed: u64) -> Result<(host::Inputs, Workload), BackendError> {
    let inp = Arc::new(kv_standard::inputs(Params::from_shapes(shapes)?, seed));
    Ok((host_inputs(&inp), kv_standard::workload_with(inp, seed)?))
}

/// The plan at `p`.
pub(crate) fn plan(p: Params) -> Result<Plan, BackendError> {
    let key = "kv_standard";
    let te = p.token_elems();
    let step_elems = p.active_layers * te;
    let dims = [
        int(key, "active_layers", p.active_layers)?,
        int(key, "batch", p.batch)?,
        int(key, "layers", p.layers)?,
        int(key, "heads", p.heads)?,
        int(key, "max_seq", p.max_seq)?,
        int(key, "head_dim", p.head_dim)?,
    ];
    let [al, batch, layers, heads, max_seq, d] = dims.map(Arg::I32);
    let mut bf16 = Vec::with_capacity(p.steps);
    let mut fp8 = Vec::with_capacity(p.steps);
    for pos in 0..p.steps {
        let (src, pos_arg) = (buf_at("src", pos * step_elems * 4), Arg::I32(pos as i32));
        bf16.push(launch(
            "kv_append_bf16",
            blocks_capped(step_elems, 256, 65536),
            256,
            0,
            vec![
                src,
                buf("cache_bf16"),
                pos_arg,
                al,
                batch,
                layers,
                heads,
                max_seq,
                d,
            ],
        ));
        fp8.push(launch(
            "kv_append_fp8",
            p.active_layers as u32,
            1024,
            BLOCK_REDUCE_SHARED,
            vec![
                src,
                buf("cache_fp8"),
                buf("scales"),
                pos_arg,
                batch,
                layers,
                heads,
                max_seq,
                d,
            ],
        ));
    }
    Ok(Plan {
        key: "kv_standard",
        buffers: vec![
            input("src", p.steps * step_elems * 4),
            owned("cache_bf16", p.cache_elems() * 2, 0),
            owned("cache_fp8", p.cache_elems(), 1),
            owned("scales", p.layers * p.max_seq * 4, 1),
        ],
        variants: vec![
            variant(
                "baseline",
                bf16,
                Output::Kv {
                    cache: "cache_bf16",
                    scales: None,
                    p,
                },
            ),
            variant(
                "optimized_fp8_e4m3_scaled",
                fp8,
                Output::Kv {
                    cache: "cache_fp8",
                    scales: Some("scales"),
                    p,
                },
            ),
        ],
    })
}

/// CPU tokens `[steps, active_layers, 2, batch, heads, d]` to the kernels'
/// `[steps, active_layers, batch, 2, heads, d]`.
pub(crate) fn kv_src(inp: &kv_standard::Inputs) -> Vec<f32> {
    let p = inp.p;
    let (b, h, d) = (p.batch, p.heads, p.head_dim);
    let mut out = vec![0.0f32; inp.kv.len()];
    for (tok, src) in inp.kv.chunks(p.token_elems()).enumerate() {
        let dst = &mut out[tok * p.token_elems()..(tok + 1) * p.token_elems()];
        for kv in 0..2 {
            for bb in 0..b {
                let from = ((kv * b + bb) * h) * d;
                let to = ((bb * 2 + kv) * h) * d;
                dst[to..to + h * d].copy_from_slice(&src[from..from + h * d]);
            }
        }
    }
    out
}

/// The source tokens in the kernels' layout.
pub(crate) fn host_inputs(inp: &kv_standard::Inputs) -> host::Inputs {
    vec![("src", HostData::F32(kv_src(inp)))]
}
