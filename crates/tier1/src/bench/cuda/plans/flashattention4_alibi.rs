//! `flashattention4_alibi` on CUDA: materialized scores, softmax and P·V as the baseline, one
//! flash kernel with online softmax as the optimized variant.

use super::build::{f32_out, input, owned, shape_err, variant};
use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::host::{self, HostData};
use crate::bench::cuda::launch_sizes::{BLOCK_REDUCE_SHARED, flash_shared};
use crate::bench::cuda::plan::{Arg, Plan, blocks, buf, int, launch, launch3};
use crate::bench::cuda::spec::CudaSpec;
use crate::bench::targets::flashattention4_alibi::{self, Params};
use crate::bench::targets::params::ShapeParams;
use std::sync::Arc;

/// The CUDA side of `flashattention4_alibi`: plan, host buffers, launched entries.
pub(crate) const CUDA: CudaSpec = CudaSpec {
    plan: |shapes| plan(Params::from_shapes(shapes)?),
    inputs,
    baseline: &["alibi_scores", "alibi_softmax", "alibi_pv"],
    optimized: &["alibi_flash"],
};

/// The input buffers at `shapes` and `seed`, with the CPU twin over the same inputs.
fn inputs(shapes: &Shapes, seed: u64) -> Result<(host::Inputs, Workload), BackendError> {
    let inp = Arc::new(flashattention4_alibi::inputs(
        Params::from_shapes(shapes)?,
        seed,
    ));
    Ok((
        host_inputs(&inp),
        flashattention4_alibi::workload_with(inp, seed)?,
    ))
}

/// The plan at `p`.
pub(crate) fn plan(p: Params) -> Result<Plan, BackendError> {
    let key = "flashattention4_alibi";
    if p.head_dim > 64 {
        return Err(shape_err(
            key,
            "head_dim",
            format!("alibi_flash supports at most 64, found {}", p.head_dim),
        ));
    }
    let bh = p.batch * p.heads;
    if bh > 65535 {
        return Err(shape_err(
            key,
            "heads",
            format!("batch × heads at most 65535, found {bh}"),
        ));
    }
    let (heads, seq, d) = (
        int(key, "heads", p.heads)?,
        int(key, "seq", p.seq)?,
        p.head_dim as i32,
    );
    let scale = Arg::F32(1.0 / (p.head_dim as f32).sqrt());
    let n = bh * p.seq * p.head_dim;
    let baseline = vec![
        launch3(
            "alibi_scores",
            (blocks(p.seq, 16), blocks(p.seq, 16), bh as u32),
            (16, 16, 1),
            0,
            vec![
                buf("q"),
                buf("k"),
                buf("scores"),
                Arg::I32(heads),
                Arg::I32(seq),
                Arg::I32(d),
                scale,
            ],
        ),
        launch(
            "alibi_softmax",
            blocks(bh * p.seq, 1),
            256,
            2 * BLOCK_REDUCE_SHARED,
            vec![buf("scores"), Arg::I32(seq)],
        ),
        launch3(
            "alibi_pv",
            (blocks(p.seq * p.head_dim, 256), bh as u32, 1),
            (256, 1, 1),
            0,
            vec![
                buf("scores"),
                buf("v"),
                buf("o_base"),
                Arg::I32(seq),
                Arg::I32(d),
            ],
        ),
    ];
    let flash = vec![launch3(
        "alibi_flash",
        (blocks(p.seq, 64), bh as u32, 1),
        (64, 1, 1),
        flash_shared(1),
        vec![
            buf("q"),
            buf("k"),
            buf("v"),
            buf("o_flash"),
            Arg::I32(heads),
            Arg::I32(seq),
            Arg::I32(d),
            scale,
        ],
    )];
    Ok(Plan {
        key: "flashattention4_alibi",
        buffers: vec![
            input("q", n * 4),
            input("k", n * 4),
            input("v", n * 4),
            owned("scores", bh * p.seq * p.seq * 4, 0),
            owned("o_base", n * 4, 0),
            owned("o_flash", n * 4, 1),
        ],
        variants: vec![
            variant(
                "baseline",
                baseline,
                f32_out("o_base", n / p.head_dim, p.head_dim),
            ),
            variant(
                "optimized_flash_online_softmax",
                flash,
                f32_out("o_flash", n / p.head_dim, p.head_dim),
            ),
        ],
    })
}

/// `q`, `k`, `v` as the CPU twin lays them out.
pub(crate) fn host_inputs(inp: &flashattention4_alibi::Inputs) -> host::Inputs {
    vec![
        ("q", HostData::F32(inp.q.clone())),
        ("k", HostData::F32(inp.k.clone())),
        ("v", HostData::F32(inp.v.clone())),
    ]
}
