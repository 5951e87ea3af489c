//! Numeric helpers the CPU targets share: dot products, row softmax, row-parallel loops, range
//! splitting, the causal attention mask (also uploaded by the CUDA backend) and parameters as
//! floating point for the memory estimates.

/// Dot product with eight independent accumulators (vectorizes; the order differs from a plain
/// sequential sum, which is what verification tolerances are for).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
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

/// Numerically stable softmax of each `row_len` row of `x`, in place (the baselines' form).
pub(crate) fn softmax_rows(x: &mut [f32], row_len: usize) {
    for row in x.chunks_mut(row_len.max(1)) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            sum += *v;
        }
        for v in row.iter_mut() {
            *v /= sum;
        }
    }
}

/// Sequential dot product (the baselines' naive form).
pub(crate) fn dot_naive(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

/// Run `f(rows, chunk)` over `out` split into row ranges of `row_len` elements, on up to
/// `threads` scoped threads (the last range runs on the calling thread).
pub(crate) fn par_rows(
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

/// Split `0..n` into `parts` contiguous ranges of near-equal length (some empty when `n < parts`).
pub(crate) fn split_ranges(n: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
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

/// The `t × t` causal mask, row-major: `0` where column `j ≤ row i`, `-∞` above the diagonal
/// (the llama baseline adds it to its scores; the CUDA backend uploads the same matrix).
pub(crate) fn causal_mask(t: usize) -> Vec<f32> {
    (0..t * t)
        .map(|ij| {
            if ij % t <= ij / t {
                0.0
            } else {
                f32::NEG_INFINITY
            }
        })
        .collect()
}

/// A parameter as f64: memory estimates multiply these without overflowing.
pub(crate) fn dim(v: usize) -> f64 {
    v as f64
}
