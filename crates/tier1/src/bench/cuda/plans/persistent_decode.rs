//! `persistent_decode` on CUDA: three launches per step (baseline, and the same launches replayed
//! from a CUDA graph), or one persistent kernel walking every step.

use super::build::{f32_out, input, owned, variant};
use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::host::{self, HostData};
use crate::bench::cuda::launch_sizes::BLOCK_REDUCE_SHARED;
use crate::bench::cuda::plan::{Arg, Plan, blocks, buf, buf_at, int, launch};
use crate::bench::cuda::spec::CudaSpec;
use crate::bench::targets::params::ShapeParams;
use crate::bench::targets::persistent_decode::{self, Params};
use std::sync::Arc;

/// The CUDA side of `persistent_decode`: plan, host buffers, launched entries.
pub(crate) const CUDA: CudaSpec = CudaSpec {
    plan: |shapes| plan(Params::from_shapes(shapes)?),
    inputs,
    baseline: // The CUDA-graph variant replays the same three baseline launches.
    &["decode_mul", "decode_sum", "decode_scale"],
    optimized: &["decode_persistent"],
};

/// The input buffers at `shapes` and `seed`, with the CPU twin over the same inputs.
fn inputs(shapes: &Shapes, seed: u64) -> Result<(host::Inputs, Workload), BackendError> {
    let inp = Arc::new(persistent_decode::inputs(
        Params::from_shapes(shapes)?,
        seed,
    ));
    Ok((
        host_inputs(&inp),
        persistent_decode::workload_with(inp, seed)?,
    ))
}

/// Threads per row-reduction block: `d` rounded up to a warp, between 32 and 256.
fn row_block(d: usize) -> u32 {
    d.next_multiple_of(32).clamp(32, 256) as u32
}

/// The plan at `p`.
pub(crate) fn plan(p: Params) -> Result<Plan, BackendError> {
    let key = "persistent_decode";
    let row = p.batch * p.head_dim;
    let (rows, d) = (int(key, "batch", row)?, int(key, "head_dim", p.head_dim)?);
    let per_step = |tmp, sums, out| {
        let mut steps = Vec::with_capacity(3 * p.steps);
        for t in 0..p.steps {
            let off = t * row * 4;
            steps.push(launch(
                "decode_mul",
                blocks(row, 256),
                256,
                0,
                vec![buf_at("q", off), buf_at("k", off), buf(tmp), Arg::I32(rows)],
            ));
            steps.push(launch(
                "decode_sum",
                p.batch as u32,
                row_block(p.head_dim),
                BLOCK_REDUCE_SHARED,
                vec![buf(tmp), buf(sums), Arg::I32(d)],
            ));
            steps.push(launch(
                "decode_scale",
                blocks(row, 256),
                256,
                0,
                vec![
                    buf_at("v", off),
                    buf(sums),
                    buf_at(out, off),
                    Arg::I32(rows),
                    Arg::I32(d),
                ],
            ));
        }
        steps
    };
    let n = p.steps * row;
    let persistent = vec![launch(
        "decode_persistent",
        p.batch as u32,
        row_block(p.head_dim),
        BLOCK_REDUCE_SHARED,
        vec![
            buf("q"),
            buf("k"),
            buf("v"),
            buf("out_persistent"),
            Arg::I32(int(key, "steps", p.steps)?),
            Arg::I32(int(key, "batch", p.batch)?),
            Arg::I32(d),
        ],
    )];
    let mut graph = variant(
        "optimized_graph",
        per_step("tmp_graph", "sums_graph", "out_graph"),
        f32_out("out_graph", n / p.head_dim, p.head_dim),
    );
    graph.graph = true;
    Ok(Plan {
        key: "persistent_decode",
        buffers: vec![
            input("q", n * 4),
            input("k", n * 4),
            input("v", n * 4),
            owned("tmp", row * 4, 0),
            owned("sums", p.batch * 4, 0),
            owned("out", n * 4, 0),
            owned("tmp_graph", row * 4, 1),
            owned("sums_graph", p.batch * 4, 1),
            owned("out_graph", n * 4, 1),
            owned("out_persistent", n * 4, 2),
        ],
        variants: vec![
            variant(
                "baseline",
                per_step("tmp", "sums", "out"),
                f32_out("out", n / p.head_dim, p.head_dim),
            ),
            graph,
            variant(
                "optimized_persistent_kernel",
                persistent,
                f32_out("out_persistent", n / p.head_dim, p.head_dim),
            ),
        ],
    })
}

/// `q`, `k`, `v` as the CPU twin lays them out.
pub(crate) fn host_inputs(inp: &persistent_decode::Inputs) -> host::Inputs {
    vec![
        ("q", HostData::F32(inp.q.clone())),
        ("k", HostData::F32(inp.k.clone())),
        ("v", HostData::F32(inp.v.clone())),
    ]
}
