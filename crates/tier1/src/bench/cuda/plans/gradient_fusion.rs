//! `gradient_fusion` on CUDA: one reduction launch per tensor (baseline) or per bucket
//! (optimized), over the ranks' gradients laid out contiguously.

use super::build::{f32_out, input, owned, variant};
use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::host::{self, HostData};
use crate::bench::cuda::plan::{Arg, Plan, Step, blocks_capped, buf, int, launch};
use crate::bench::cuda::spec::CudaSpec;
use crate::bench::targets::gradient_fusion::{self, Params};
use crate::bench::targets::params::ShapeParams;
use std::sync::Arc;

/// The CUDA side of `gradient_fusion`: plan, host buffers, launched entries.
pub(crate) const CUDA: CudaSpec = CudaSpec {
    plan: |shapes| plan(Params::from_shapes(shapes)?),
    inputs,
    baseline: &["grad_reduce_tensor"],
    optimized: &["grad_reduce_bucket"],
};

/// The input buffers at `shapes` and `seed`, with the CPU twin over the same inputs.
fn inputs(shapes: &Shapes, seed: u64) -> Result<(host::Inputs, Workload), BackendError> {
    let inp = Arc::new(gradient_fusion::inputs(Params::from_shapes(shapes)?, seed));
    Ok((
        host_inputs(&inp),
        gradient_fusion::workload_with(inp, seed)?,
    ))
}

/// The plan at `p`.
pub(crate) fn plan(p: Params) -> Result<Plan, BackendError> {
    let key = "gradient_fusion";
    let n = p.tensors * p.tensor_elems;
    let (len, ranks) = (
        int(key, "tensor_elems", p.tensor_elems)?,
        int(key, "ranks", p.ranks)?,
    );
    let stride = Arg::I64(n as i64);
    let mut per_tensor = vec![Step::Zero("out_tensor")];
    let mut bucketed = vec![Step::Zero("out_bucket")];
    for _ in 0..p.repeats {
        for t in 0..p.tensors {
            per_tensor.push(launch(
                "grad_reduce_tensor",
                blocks_capped(p.tensor_elems, 256, 4096),
                256,
                0,
                vec![
                    buf("grads"),
                    buf("out_tensor"),
                    Arg::I64((t * p.tensor_elems) as i64),
                    Arg::I32(len),
                    Arg::I32(ranks),
                    stride,
                ],
            ));
        }
        for b0 in (0..n).step_by(p.bucket_elems.max(1)) {
            let blen = p.bucket_elems.min(n - b0);
            bucketed.push(launch(
                "grad_reduce_bucket",
                blocks_capped(blen.div_ceil(4), 256, 4096),
                256,
                0,
                vec![
                    buf("grads"),
                    buf("out_bucket"),
                    Arg::I64(b0 as i64),
                    Arg::I64(blen as i64),
                    Arg::I32(ranks),
                    stride,
                ],
            ));
        }
    }
    Ok(Plan {
        key: "gradient_fusion",
        buffers: vec![
            input("grads", p.ranks * n * 4),
            owned("out_tensor", n * 4, 0),
            owned("out_bucket", n * 4, 1),
        ],
        variants: vec![
            variant(
                "baseline",
                per_tensor,
                f32_out("out_tensor", p.tensors, p.tensor_elems),
            ),
            variant(
                "optimized_bucketed",
                bucketed,
                f32_out("out_bucket", p.tensors, p.tensor_elems),
            ),
        ],
    })
}

/// The gradients of every rank, contiguous.
pub(crate) fn host_inputs(inp: &gradient_fusion::Inputs) -> host::Inputs {
    let grads: Vec<f32> = inp.grads.iter().flatten().flatten().copied().collect();
    vec![("grads", HostData::F32(grads))]
}
