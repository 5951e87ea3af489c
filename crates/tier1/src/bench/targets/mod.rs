//! The six built-in tier-1 targets (one file each) and the glue that turns a target's input
//! generator and baseline/optimized functions into a [`Workload`]. Every target's inputs, baseline,
//! optimized and reference functions are public: the CUDA backend uses them as verification twins.

use crate::bench::backend::{BackendError, Shapes, Variant, VariantRun, Workload};
use crate::bench::result::{InputSignature, TensorSpec};
use std::sync::Arc;

/// The CPU workload of built-in target `key`.
pub fn cpu_workload(key: &str, shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
    let _ = (shapes, seed);
    Err(BackendError::Unsupported {
        backend: "cpu".into(),
        key: key.into(),
    })
}

/// A tensor spec (`name`, `dtype`, shape).
pub fn tensor(name: &str, dtype: &str, shape: &[usize]) -> TensorSpec {
    TensorSpec {
        name: name.into(),
        shape: shape.iter().map(|&d| d as u64).collect(),
        dtype: dtype.into(),
    }
}

/// An input signature from tensors and the seed.
pub fn signature(seed: u64, inputs: Vec<TensorSpec>) -> InputSignature {
    InputSignature { seed, inputs }
}

type Kernel<I> = Box<dyn FnMut(&I, &mut [f32]) + Send>;

/// A variant that runs `f(inputs, out)` into a preallocated output buffer.
struct FnRun<I> {
    inputs: Arc<I>,
    out: Vec<f32>,
    f: Kernel<I>,
}

impl<I: Send + Sync> VariantRun for FnRun<I> {
    fn run(&mut self) -> Result<Option<f64>, BackendError> {
        (self.f)(&self.inputs, &mut self.out);
        std::hint::black_box(&self.out);
        Ok(None)
    }

    fn output(&mut self) -> Result<Vec<f32>, BackendError> {
        self.out.fill(0.0);
        self.run()?;
        Ok(self.out.clone())
    }
}

/// A variant over shared inputs writing `out_len` f32 outputs; `f` may own scratch state.
pub fn fn_variant<I: Send + Sync + 'static>(
    name: &str,
    signature: InputSignature,
    inputs: Arc<I>,
    out_len: usize,
    f: impl FnMut(&I, &mut [f32]) + Send + 'static,
) -> Variant {
    Variant {
        name: name.into(),
        signature,
        runner: Box::new(FnRun {
            inputs,
            out: vec![0.0; out_len],
            f: Box::new(f),
        }),
    }
}

/// Split `0..n` into at most `parts` contiguous ranges of near-equal length.
pub fn split_ranges(n: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.clamp(1, n.max(1));
    let base = n / parts;
    let extra = n % parts;
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for p in 0..parts {
        let len = base + usize::from(p < extra);
        out.push(start..start + len);
        start += len;
    }
    out
}
