//! `block_scaling` on CUDA: dequantize-then-GEMM baseline, fused dequant + `mma.sync` tile
//! (operands padded to the 128 × 128 × 32 tile), and the codes and scales re-laid for the padding.

use super::build::{f32_out, input, owned, variant};
use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::host::{self, HostData};
use crate::bench::cuda::launch_sizes::{FUSED_MMA_SHARED, GEMM_TILE_SHARED, MMA_TILE};
use crate::bench::cuda::plan::{
    Arg, Output, Plan, blocks, blocks_capped, buf, int, launch, launch3,
};
use crate::bench::cuda::spec::CudaSpec;
use crate::bench::targets::block_scaling::{self, Params};
use crate::bench::targets::params::ShapeParams;
use std::sync::Arc;

/// The CUDA side of `block_scaling`: plan, host buffers, launched entries.
pub(crate) const CUDA: CudaSpec = CudaSpec {
    plan: |shapes| plan(Params::from_shapes(shapes)?),
    inputs,
    baseline: &["block_scaling_dequant_bf16", "block_scaling_gemm_bf16"],
    optimized: &["block_scaling_fused_mma"],
};

/// The input buffers at `shapes` and `seed`, with the CPU twin over the same inputs.
fn inputs(shapes: &Shapes, seed: u64) -> Result<(host::Inputs, Workload), BackendError> {
    let inp = Arc::new(block_scaling::inputs(Params::from_shapes(shapes)?, seed));
    Ok((host_inputs(&inp), block_scaling::workload_with(inp, seed)?))
}

/// Padded sizes of the block-scaled operands: M and N to 128, K to 32 (zero codes add nothing).
pub(crate) fn padded(p: Params) -> (usize, usize, usize) {
    (
        p.m.next_multiple_of(MMA_TILE.0),
        p.n.next_multiple_of(MMA_TILE.1),
        p.k.next_multiple_of(MMA_TILE.2),
    )
}

/// The plan at `p`.
pub(crate) fn plan(p: Params) -> Result<Plan, BackendError> {
    let key = "block_scaling";
    let (mp, np, kp) = padded(p);
    let (m, n, k) = (int(key, "m", mp)?, int(key, "n", np)?, int(key, "k", kp)?);
    let (m0, n0) = (p.m as i32, p.n as i32);
    let dequant = |codes, scales, out, rows: usize| {
        launch(
            "block_scaling_dequant_bf16",
            blocks_capped(rows * kp / 2, 256, 65536),
            256,
            0,
            vec![
                buf(codes),
                buf(scales),
                buf(out),
                Arg::I32(rows as i32),
                Arg::I32(k),
            ],
        )
    };
    let baseline = vec![
        dequant("a", "sfa", "a_bf16", p.m),
        dequant("b", "sfb", "b_bf16", p.n),
        launch3(
            "block_scaling_gemm_bf16",
            (blocks(p.n, 64), blocks(p.m, 64), 1),
            (256, 1, 1),
            GEMM_TILE_SHARED,
            vec![
                buf("a_bf16"),
                buf("b_bf16"),
                buf("c_base"),
                Arg::I32(m0),
                Arg::I32(n0),
                Arg::I32(k),
            ],
        ),
    ];
    let fused = vec![launch3(
        "block_scaling_fused_mma",
        ((np / MMA_TILE.1) as u32, (mp / MMA_TILE.0) as u32, 1),
        (256, 1, 1),
        FUSED_MMA_SHARED,
        vec![
            buf("a"),
            buf("sfa"),
            buf("b"),
            buf("sfb"),
            buf("c_fused"),
            Arg::I32(m),
            Arg::I32(n),
            Arg::I32(k),
        ],
    )];
    Ok(Plan {
        key: "block_scaling",
        buffers: vec![
            input("a", mp * kp / 2),
            input("sfa", mp * kp / 16),
            input("b", np * kp / 2),
            input("sfb", np * kp / 16),
            owned("a_bf16", p.m * kp * 2, 0),
            owned("b_bf16", p.n * kp * 2, 0),
            owned("c_base", p.m * p.n * 4, 0),
            owned("c_fused", mp * np * 4, 1),
        ],
        variants: vec![
            variant("baseline", baseline, f32_out("c_base", p.m, p.n)),
            variant(
                "optimized_fused_dequant_mma",
                fused,
                Output::F32 {
                    buf: "c_fused",
                    rows: p.m,
                    cols: p.n,
                    ld: np,
                },
            ),
        ],
    })
}

/// Codes and scales re-laid with the padded row length and row count (zero padding).
pub(crate) fn host_inputs(inp: &block_scaling::Inputs) -> host::Inputs {
    let p = inp.p;
    let (mp, np, kp) = padded(p);
    let pad = |src: &[u8], rows: usize, per_row: usize, rows_p: usize, per_row_p: usize| {
        let mut out = vec![0u8; rows_p * per_row_p];
        for r in 0..rows {
            out[r * per_row_p..r * per_row_p + per_row]
                .copy_from_slice(&src[r * per_row..(r + 1) * per_row]);
        }
        HostData::U8(out)
    };
    let bs = block_scaling::BLOCK;
    vec![
        ("a", pad(&inp.a, p.m, p.k / 2, mp, kp / 2)),
        ("sfa", pad(&inp.a_scale, p.m, p.k / bs, mp, kp / bs)),
        ("b", pad(&inp.b, p.n, p.k / 2, np, kp / 2)),
        ("sfb", pad(&inp.b_scale, p.n, p.k / bs, np, kp / bs)),
    ]
}
