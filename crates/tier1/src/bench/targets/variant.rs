//! The glue that turns a target's inputs and baseline/optimized functions into [`Variant`]s:
//! tensor specs, input signatures and a variant over shared inputs writing a preallocated output.

use crate::bench::backend::{BackendError, Variant, VariantRun};
use crate::bench::result::{InputSignature, TensorSpec};
use std::sync::Arc;

/// A tensor spec (`name`, `dtype`, shape).
pub(crate) fn tensor(name: &str, dtype: &str, shape: &[usize]) -> TensorSpec {
    TensorSpec {
        name: name.into(),
        shape: shape.iter().map(|&d| d as u64).collect(),
        dtype: dtype.into(),
    }
}

/// An input signature from tensors and the seed.
pub(crate) fn signature(seed: u64, inputs: Vec<TensorSpec>) -> InputSignature {
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
pub(crate) fn fn_variant<I: Send + Sync + 'static>(
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
