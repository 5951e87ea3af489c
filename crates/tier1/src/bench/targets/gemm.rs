//! Safe wrappers over `matrixmultiply::sgemm` (row-major, lengths checked) and its row-parallel form.
#![allow(unsafe_code)] // the one call into matrixmultiply's raw-pointer API, guarded by length checks

/// `c[m×n] = a[m×k] · b[k×n] + beta · c`, all row-major and contiguous.
pub fn sgemm(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], beta: f32, c: &mut [f32]) {
    assert!(
        a.len() >= m * k && b.len() >= k * n && c.len() >= m * n,
        "sgemm: operand too short for {m}x{k}x{n}"
    );
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: the assertion above guarantees every index the kernel touches (row strides k, n, n
    // and unit column strides) lies inside the three slices; `c` is uniquely borrowed.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            beta,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// Below this many multiply-adds a GEMM runs on one thread (spawning costs more than it saves).
pub(crate) const PARALLEL_MIN_MACS: usize = 1 << 20;

/// [`sgemm`] with the rows of `a` and `c` split across `threads` scoped threads (one thread for
/// products smaller than [`PARALLEL_MIN_MACS`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn sgemm_par(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c: &mut [f32],
    threads: usize,
) {
    let c = &mut c[..m * n];
    let threads = if m * k * n < PARALLEL_MIN_MACS {
        1
    } else {
        threads
    };
    super::math::par_rows(c, n, threads, |rows, chunk| {
        sgemm(
            rows.len(),
            k,
            n,
            &a[rows.start * k..rows.end * k],
            b,
            beta,
            chunk,
        );
    });
}

/// Naive `c[m×n] = a[m×k] · b[k×n]` (i-k-j order, one thread): the baselines' GEMM.
pub(crate) fn gemm_naive(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    for i in 0..m {
        let crow = &mut c[i * n..(i + 1) * n];
        crow.fill(0.0);
        for kk in 0..k {
            let av = a[i * k + kk];
            let brow = &b[kk * n..(kk + 1) * n];
            for (cv, bv) in crow.iter_mut().zip(brow) {
                *cv += av * bv;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgemm_matches_naive() {
        let (m, k, n) = (7, 5, 3);
        let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.5).collect();
        let mut want = vec![0.0; m * n];
        gemm_naive(m, k, n, &a, &b, &mut want);
        let mut got = vec![1.0; m * n];
        sgemm_par(m, k, n, &a, &b, 0.0, &mut got, 3);
        assert_eq!(got, want);
        let mut acc = want.clone();
        sgemm(m, k, n, &a, &b, 1.0, &mut acc);
        assert!(acc.iter().zip(&want).all(|(x, y)| *x == 2.0 * y));
    }
}
