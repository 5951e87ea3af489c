//! `block_scaling`: block-scaled GEMM `C[M×N] = A[M×K] · B[N×K]ᵀ` with e2m1 (4-bit) operands and one
//! e8m0 power-of-two scale per 16 values along K. Baseline dequantizes both operands to f32
//! matrices, then runs a plain dot-product GEMM; optimized fuses dequantization into a
//! cache-blocked, multithreaded GEMM that never materializes the f32 operands.

use super::math::dim;
use super::math::par_rows;
use super::params::ShapeParams;
use super::variant::{fn_variant, signature, tensor};
use crate::bench::backend::{BackendError, Shapes, Workload, threads};
use crate::bench::result::Work;
use serde::Deserialize;
use std::sync::Arc;

/// Values along K that share one scale.
pub(crate) const BLOCK: usize = 16;
/// The e2m1 code table (bit 3 is the sign).
pub(crate) const E2M1: [f32; 16] = [
    0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0,
];
/// Source of the baseline (repo-relative).
pub(crate) const FILE: &str = "crates/tier1/src/bench/targets/block_scaling.rs";

/// Problem size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) struct Params {
    /// Rows of A and C.
    pub(crate) m: usize,
    /// Columns of C (rows of the stored B).
    pub(crate) n: usize,
    /// Reduction length (a multiple of 16).
    pub(crate) k: usize,
}

impl ShapeParams for Params {
    const KEY: &'static str = "block_scaling";

    fn min(field: &str) -> u64 {
        if field == "k" { BLOCK as u64 } else { 1 }
    }

    fn check(self) -> Result<Self, BackendError> {
        if !self.k.is_multiple_of(BLOCK) {
            return Err(BackendError::Shape {
                key: Self::KEY.into(),
                param: "k".into(),
                message: format!("expected a multiple of {BLOCK}, found {}", self.k),
            });
        }
        Ok(self)
    }
}

/// Quantized operands: codes packed two per byte (even index in the low nibble), scales as e8m0.
#[derive(Debug, Clone)]
pub(crate) struct Inputs {
    /// Sizes.
    pub(crate) p: Params,
    /// A codes, `M×K/2` bytes.
    pub(crate) a: Vec<u8>,
    /// A scales, `M×K/16`.
    pub(crate) a_scale: Vec<u8>,
    /// B codes (stored `N×K`), `N×K/2` bytes.
    pub(crate) b: Vec<u8>,
    /// B scales, `N×K/16`.
    pub(crate) b_scale: Vec<u8>,
}

/// e8m0 scale byte to its value `2^(e-127)`.
pub(crate) fn e8m0(e: u8) -> f32 {
    2f32.powi(i32::from(e) - 127)
}

/// Seeded inputs: uniform codes, scale exponents in `2^-3..=2^3`.
pub(crate) fn inputs(p: Params, seed: u64) -> Inputs {
    let mut r = crate::bench::rng::Rng::new(seed, 1);
    let mut bytes = |n: usize| (0..n).map(|_| r.below(256) as u8).collect::<Vec<u8>>();
    let a = bytes(p.m * p.k / 2);
    let b = bytes(p.n * p.k / 2);
    let mut r = crate::bench::rng::Rng::new(seed, 2);
    let mut scales = |n: usize| (0..n).map(|_| 124 + r.below(7) as u8).collect::<Vec<u8>>();
    let a_scale = scales(p.m * p.k / BLOCK);
    let b_scale = scales(p.n * p.k / BLOCK);
    Inputs {
        p,
        a,
        a_scale,
        b,
        b_scale,
    }
}

/// Dequantize values `k0..k0+out.len()` of row `row` of a `rows×k` operand.
pub(crate) fn dequant(
    codes: &[u8],
    scales: &[u8],
    k: usize,
    row: usize,
    k0: usize,
    out: &mut [f32],
) {
    let base = row * k;
    for (j, o) in out.iter_mut().enumerate() {
        let idx = base + k0 + j;
        let byte = codes[idx / 2];
        let code = if idx.is_multiple_of(2) {
            byte & 0xF
        } else {
            byte >> 4
        };
        *o = E2M1[code as usize] * e8m0(scales[idx / BLOCK]);
    }
}

/// Baseline: materialize f32 A and B, then a plain dot-product GEMM.
pub(crate) fn baseline(inp: &Inputs, c: &mut [f32]) {
    let Params { m, n, k } = inp.p;
    let mut a = vec![0.0f32; m * k];
    let mut b = vec![0.0f32; n * k];
    for i in 0..m {
        dequant(&inp.a, &inp.a_scale, k, i, 0, &mut a[i * k..(i + 1) * k]);
    }
    for j in 0..n {
        dequant(&inp.b, &inp.b_scale, k, j, 0, &mut b[j * k..(j + 1) * k]);
    }
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = super::math::dot_naive(&a[i * k..(i + 1) * k], &b[j * k..(j + 1) * k]);
        }
    }
}

const NB: usize = 64;
const KB: usize = 256;

/// Optimized: rows of C split across threads; per (N-block, K-block) a dequantized B panel
/// (`KB×NB`, k-major) and one A row segment at a time feed a vectorized axpy kernel. Products
/// below `gemm::PARALLEL_MIN_MACS` run on one thread.
pub(crate) fn optimized(inp: &Inputs, c: &mut [f32], threads: usize) {
    let Params { m, n, k } = inp.p;
    let threads = if m * n * k < super::gemm::PARALLEL_MIN_MACS {
        1
    } else {
        threads
    };
    par_rows(c, n, threads, |rows, chunk| {
        chunk.fill(0.0);
        let mut panel = vec![0.0f32; KB * NB];
        let mut seg = vec![0.0f32; KB];
        let mut brow = vec![0.0f32; KB];
        for j0 in (0..n).step_by(NB) {
            let nb = NB.min(n - j0);
            for k0 in (0..k).step_by(KB) {
                let kb = KB.min(k - k0);
                for jj in 0..nb {
                    dequant(&inp.b, &inp.b_scale, k, j0 + jj, k0, &mut brow[..kb]);
                    for (kk, v) in brow[..kb].iter().enumerate() {
                        panel[kk * nb + jj] = *v;
                    }
                }
                for (li, i) in rows.clone().enumerate() {
                    dequant(&inp.a, &inp.a_scale, k, i, k0, &mut seg[..kb]);
                    let crow = &mut chunk[li * n + j0..li * n + j0 + nb];
                    for (kk, &av) in seg[..kb].iter().enumerate() {
                        let prow = &panel[kk * nb..(kk + 1) * nb];
                        for (cv, bv) in crow.iter_mut().zip(prow) {
                            *cv += av * bv;
                        }
                    }
                }
            }
        }
    });
}

/// f64 reference (the dequantized values are exact in f32 and f64).
pub(crate) fn reference(inp: &Inputs) -> Vec<f64> {
    let Params { m, n, k } = inp.p;
    let deq = |codes: &[u8], scales: &[u8], rows: usize| {
        let mut v = vec![0.0f32; rows * k];
        for r in 0..rows {
            dequant(codes, scales, k, r, 0, &mut v[r * k..(r + 1) * k]);
        }
        v.into_iter().map(f64::from).collect::<Vec<f64>>()
    };
    let a = deq(&inp.a, &inp.a_scale, m);
    let b = deq(&inp.b, &inp.b_scale, n);
    let mut c = vec![0.0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = a[i * k..(i + 1) * k]
                .iter()
                .zip(&b[j * k..(j + 1) * k])
                .map(|(x, y)| x * y)
                .sum();
        }
    }
    c
}

/// Upper estimate, in bytes, of what the CPU workload allocates for `p` (inputs, every
/// variant's output and scratch, the reference), in floating point so no shape overflows it.
pub(crate) fn footprint(p: &Params) -> f64 {
    let (m, n, k) = (dim(p.m), dim(p.n), dim(p.k));
    (m + n) * k * 5.0 + m * n * 16.0
}

/// The CPU workload.
pub(crate) fn workload(shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
    workload_with(Arc::new(inputs(Params::from_shapes(shapes)?, seed)), seed)
}

/// The CPU workload over inputs already generated (the CUDA backend takes its work, input
/// signature and reference from here, so both backends describe the same problem).
pub(crate) fn workload_with(inp: Arc<Inputs>, seed: u64) -> Result<Workload, BackendError> {
    let p = inp.p;
    let sig = signature(
        seed,
        vec![
            tensor("a", "e2m1", &[p.m, p.k]),
            tensor("a_scale", "e8m0", &[p.m, p.k / BLOCK]),
            tensor("b", "e2m1", &[p.n, p.k]),
            tensor("b_scale", "e8m0", &[p.n, p.k / BLOCK]),
        ],
    );
    let out = p.m * p.n;
    let t = threads();
    let reference_inp = Arc::clone(&inp);
    let (m, n, k) = (p.m as f64, p.n as f64, p.k as f64);
    Ok(Workload {
        variants: vec![
            fn_variant("baseline", sig.clone(), Arc::clone(&inp), out, baseline),
            fn_variant(
                "optimized_fused_dequant_blocked",
                sig,
                Arc::clone(&inp),
                out,
                move |i, c| optimized(i, c, t),
            ),
        ],
        work: Work {
            flops: Some((2.0 * m * n * k).into()),
            bytes: Some(((m + n) * k * (0.5 + 1.0 / BLOCK as f64) + m * n * 4.0).into()),
        },
        baseline_file: FILE.into(),
        reference: (p.m * p.n * p.k <= 1 << 27).then(|| {
            Box::new(move || reference(&reference_inp)) as crate::bench::backend::Reference
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimized_matches_reference_on_odd_shapes() {
        let p = Params {
            m: 5,
            n: 70,
            k: 272,
        };
        let inp = inputs(p, 42);
        let want = reference(&inp);
        let mut base = vec![0.0; p.m * p.n];
        let mut opt = vec![0.0; p.m * p.n];
        baseline(&inp, &mut base);
        optimized(&inp, &mut opt, 3);
        for ((b, o), w) in base.iter().zip(&opt).zip(&want) {
            assert!((f64::from(*b) - w).abs() < 1e-2 && (f64::from(*o) - w).abs() < 1e-2);
        }
        assert_eq!(e8m0(127), 1.0);
        assert_eq!(e8m0(130), 8.0);
    }
}
