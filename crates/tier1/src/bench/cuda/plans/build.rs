//! Helpers the per-target plans share: buffer specs (inputs, per-variant and per-sequence
//! buffers), variants, f32 outputs and shape errors.

use crate::bench::backend::BackendError;
use crate::bench::cuda::plan::{BufSpec, Output, Owner, Step, VariantPlan};

/// An input buffer, uploaded once and shared by every variant.
pub(crate) fn input(name: &'static str, bytes: usize) -> BufSpec {
    BufSpec {
        name,
        bytes: bytes as u64,
        owner: Owner::Input,
    }
}

/// A buffer only variant `variant` uses.
pub(crate) fn owned(name: &'static str, bytes: usize, variant: usize) -> BufSpec {
    BufSpec {
        name,
        bytes: bytes as u64,
        owner: Owner::Variant(variant),
    }
}

/// A variant without graph capture.
pub(crate) fn variant(name: &str, steps: Vec<Step>, output: Output) -> VariantPlan {
    VariantPlan {
        name: name.into(),
        steps,
        graph: false,
        output,
    }
}

/// A contiguous `rows × cols` f32 output.
pub(crate) fn f32_out(buf: &'static str, rows: usize, cols: usize) -> Output {
    Output::F32 {
        buf,
        rows,
        cols,
        ld: cols,
    }
}

/// A shape error of target `key` naming `param`.
pub(crate) fn shape_err(key: &str, param: &str, message: String) -> BackendError {
    BackendError::Shape {
        key: key.into(),
        param: param.into(),
        message,
    }
}

/// Per-sequence activations both variants use; each variant allocates its own copy.
pub(crate) fn each(name: &'static str, bytes: usize) -> BufSpec {
    BufSpec {
        name,
        bytes: bytes as u64,
        owner: Owner::Each,
    }
}
