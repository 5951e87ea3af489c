//! The six built-in tier-1 targets (one file each) and the glue that turns a target's input
//! generator and baseline/optimized functions into a [`Workload`]. Every target's inputs, baseline,
//! optimized and reference functions are public: the CUDA backend uses them as verification twins.

use crate::bench::backend::{BackendError, Shapes, Variant, VariantRun, Workload};
use crate::bench::result::{InputSignature, TensorSpec};
use std::sync::Arc;

pub mod block_scaling;
pub mod flashattention4_alibi;
pub mod gemm;
pub mod gradient_fusion;
pub mod kv_standard;
pub mod llama_3_1_8b;
pub mod persistent_decode;

/// Keys of the built-in targets, in suite order.
pub const BUILTIN_KEYS: [&str; 6] = [
    "block_scaling",
    "flashattention4_alibi",
    "persistent_decode",
    "kv_standard",
    "gradient_fusion",
    "llama_3_1_8b",
];

/// The CPU workload of built-in target `key`.
pub fn cpu_workload(key: &str, shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
    match key {
        "block_scaling" => block_scaling::workload(shapes, seed),
        "flashattention4_alibi" => flashattention4_alibi::workload(shapes, seed),
        "persistent_decode" => persistent_decode::workload(shapes, seed),
        "kv_standard" => kv_standard::workload(shapes, seed),
        "gradient_fusion" => gradient_fusion::workload(shapes, seed),
        "llama_3_1_8b" => llama_3_1_8b::workload(shapes, seed),
        _ => Err(BackendError::Unsupported {
            backend: "cpu".into(),
            key: key.into(),
        }),
    }
}

/// Dot product with eight independent accumulators (vectorizes; the order differs from a plain
/// sequential sum, which is what verification tolerances are for).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Sequential dot product (the baselines' naive form).
pub fn dot_naive(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

/// Run `f(rows, chunk)` over `out` split into row ranges of `row_len` elements, on up to
/// `threads` scoped threads (the last range runs on the calling thread).
pub fn par_rows(
    out: &mut [f32],
    row_len: usize,
    threads: usize,
    f: impl Fn(std::ops::Range<usize>, &mut [f32]) + Sync,
) {
    let rows = out.len() / row_len.max(1);
    let mut ranges = split_ranges(rows, threads);
    let last = ranges.pop().unwrap_or(0..0);
    std::thread::scope(|s| {
        let mut rest = out;
        let f = &f;
        for r in ranges {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(r.len() * row_len);
            rest = tail;
            s.spawn(move || f(r, head));
        }
        f(last, rest);
    });
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

/// Split `0..n` into `parts` contiguous ranges of near-equal length (some empty when `n < parts`).
pub fn split_ranges(n: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.max(1);
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
