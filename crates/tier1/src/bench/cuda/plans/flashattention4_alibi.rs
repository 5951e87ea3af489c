//! `flashattention4_alibi` on CUDA: materialized scores, softmax and P·V as the baseline, one
//! flash kernel with online softmax as the optimized variant. `plan` reads as its steps:
//! `checked_dims` (the shape refusals), `baseline`, `flash`, then the buffers.

use super::build::{f32_out, input, owned, shape_err, variant};
use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::host::{self, HostData};
use crate::bench::cuda::launch_sizes::{BLOCK_REDUCE_SHARED, flash_shared};
use crate::bench::cuda::plan::{Arg, Plan, Step, blocks, buf, int, launch, launch3};
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

/// The target's key.
const KEY: &str = "flashattention4_alibi";

/// Sizes every step uses, checked to fit the kernels.
#[derive(Clone, Copy)]
struct Dims {
    /// `batch × heads`, the grid's z (scores) or y (P·V, flash).
    bh: usize,
    seq: usize,
    hd: usize,
    /// `heads`, `seq` and `head_dim` as the kernels' `int` arguments.
    ints: [Arg; 3],
}

impl Dims {
    /// Elements of `q`, `k`, `v` and an output.
    fn elems(self) -> usize {
        self.bh * self.seq * self.hd
    }

    /// The attention scale `1/√head_dim`.
    fn scale(self) -> Arg {
        Arg::F32(1.0 / (self.hd as f32).sqrt())
    }
}

/// The plan at `p`: the checked dims, both variants' steps, the buffers.
pub(crate) fn plan(p: Params) -> Result<Plan, BackendError> {
    let d = checked_dims(p)?;
    let n = d.elems();
    Ok(Plan {
        key: KEY,
        buffers: vec![
            input("q", n * 4),
            input("k", n * 4),
            input("v", n * 4),
            owned("scores", d.bh * d.seq * d.seq * 4, 0),
            owned("o_base", n * 4, 0),
            owned("o_flash", n * 4, 1),
        ],
        variants: vec![
            variant("baseline", baseline(d), f32_out("o_base", n / d.hd, d.hd)),
            variant(
                "optimized_flash_online_softmax",
                vec![flash(d)],
                f32_out("o_flash", n / d.hd, d.hd),
            ),
        ],
    })
}

/// The dims of `p`, refused past the flash kernel's head_dim, the grid's 65535 or an `int`.
fn checked_dims(p: Params) -> Result<Dims, BackendError> {
    if p.head_dim > 64 {
        return Err(shape_err(
            KEY,
            "head_dim",
            format!("alibi_flash supports at most 64, found {}", p.head_dim),
        ));
    }
    let bh = p.batch * p.heads;
    if bh > 65535 {
        return Err(shape_err(
            KEY,
            "heads",
            format!("batch × heads at most 65535, found {bh}"),
        ));
    }
    let (heads, seq) = (int(KEY, "heads", p.heads)?, int(KEY, "seq", p.seq)?);
    Ok(Dims {
        bh,
        seq: p.seq,
        hd: p.head_dim,
        ints: [Arg::I32(heads), Arg::I32(seq), Arg::I32(p.head_dim as i32)],
    })
}

/// The baseline: scores materialized, softmax over rows, then P·V.
fn baseline(d: Dims) -> Vec<Step> {
    let [heads, seq, hd] = d.ints;
    vec![
        launch3(
            "alibi_scores",
            (blocks(d.seq, 16), blocks(d.seq, 16), d.bh as u32),
            (16, 16, 1),
            0,
            vec![buf("q"), buf("k"), buf("scores"), heads, seq, hd, d.scale()],
        ),
        launch(
            "alibi_softmax",
            blocks(d.bh * d.seq, 1),
            256,
            2 * BLOCK_REDUCE_SHARED,
            vec![buf("scores"), seq],
        ),
        launch3(
            "alibi_pv",
            (blocks(d.seq * d.hd, 256), d.bh as u32, 1),
            (256, 1, 1),
            0,
            vec![buf("scores"), buf("v"), buf("o_base"), seq, hd],
        ),
    ]
}

/// The optimized variant's one launch: flash attention with online softmax.
fn flash(d: Dims) -> Step {
    let [heads, seq, hd] = d.ints;
    launch3(
        "alibi_flash",
        (blocks(d.seq, 64), d.bh as u32, 1),
        (64, 1, 1),
        flash_shared(1),
        vec![
            buf("q"),
            buf("k"),
            buf("v"),
            buf("o_flash"),
            heads,
            seq,
            hd,
            d.scale(),
        ],
    )
}

/// `q`, `k`, `v` as the CPU twin lays them out.
pub(crate) fn host_inputs(inp: &flashattention4_alibi::Inputs) -> host::Inputs {
    vec![
        ("q", HostData::F32(inp.q.clone())),
        ("k", HostData::F32(inp.k.clone())),
        ("v", HostData::F32(inp.v.clone())),
    ]
}
