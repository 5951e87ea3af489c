// common.cuh: device helpers shared by every kernels/*.cu (bit-level number formats, reductions,
// the causal online-softmax attention tile). NVRTC ships no standard headers (no cuda_bf16.h, no
// cuda_fp8.h, no <cstdint>), so everything here is written from scratch with builtins only.
// The host (crates/tier1/src/bench/cuda/compile.rs) prepends this file to each kernel source;
// the .cu files therefore carry no #include.

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#define T1_NEG_INF (__int_as_float(0xff800000))

// ---- bf16 (bit pattern in a u16) ----
__device__ __forceinline__ float t1_bf16_to_f32(u16 h) { return __uint_as_float(((u32)h) << 16); }

// Round to nearest even; NaN stays NaN (quiet).
__device__ __forceinline__ u16 t1_f32_to_bf16(float f) {
    u32 x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (u16)((x >> 16) | 0x40u);
    u32 lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return (u16)(x >> 16);
}

// ---- e2m1 (FP4): 1 sign, 2 exponent, 1 mantissa bits; magnitudes {0,.5,1,1.5,2,3,4,6} ----
__device__ __forceinline__ float t1_e2m1_to_f32(u32 nibble) {
    const u32 mag = nibble & 7u;
    // exponent field e = mag>>1, mantissa m = mag&1: e==0 -> m*0.5, else 2^(e-1)*(1+m/2)
    float v = (mag < 2u) ? 0.5f * (float)mag : __int_as_float((int)((126u + (mag >> 1)) << 23)) * (1.0f + 0.5f * (float)(mag & 1u));
    return (nibble & 8u) ? -v : v;
}

// ---- e8m0: an unsigned power-of-two exponent with bias 127; 0xff is NaN ----
__device__ __forceinline__ float t1_e8m0_to_f32(u32 e) {
    if (e == 0xffu) return __int_as_float(0x7fc00000);
    if (e == 0u) return __int_as_float(0x00400000); // 2^-127 (subnormal)
    return __int_as_float((int)(e << 23));
}

// ---- FP8 E4M3 (OCP "fn": no infinities, max 448, 0x7f/0xff NaN) ----
__device__ __forceinline__ float t1_e4m3_to_f32(u32 code) {
    const u32 sign = code & 0x80u, e = (code >> 3) & 0xfu, m = code & 7u;
    float v;
    if (e == 0u) v = (float)m * 0.001953125f; // m * 2^-9
    else if (e == 15u && m == 7u) v = __int_as_float(0x7fc00000);
    else v = __int_as_float((int)((e + 120u) << 23 | (m << 20)));
    return sign ? -v : v;
}

// Saturating round-to-nearest-even encode.
__device__ __forceinline__ u8 t1_f32_to_e4m3(float f) {
    u32 x = __float_as_uint(f);
    const u32 sign = (x >> 24) & 0x80u;
    float a = fabsf(f);
    if (!(a == a)) return (u8)(sign | 0x7fu);
    if (a >= 448.0f) return (u8)(sign | 0x7eu);
    if (a < 0.015625f) { // below the smallest normal 2^-6: subnormal steps of 2^-9
        float q = rintf(a * 512.0f);
        return (u8)(sign | (u32)q); // q == 8 encodes 2^-6 exactly (e=1, m=0)
    }
    u32 ax = __float_as_uint(a);
    u32 lsb = (ax >> 20) & 1u;
    ax += 0x7ffffu + lsb;
    u32 e = (ax >> 23) - 120u, m = (ax >> 20) & 7u;
    if (e > 15u || (e == 15u && m == 7u)) return (u8)(sign | 0x7eu);
    return (u8)(sign | (e << 3) | m);
}

// ---- reductions ----
__device__ __forceinline__ float t1_warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float t1_warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// Block-wide sum/max; blockDim.x a multiple of 32, at most 1024. Every thread gets the result.
__device__ float t1_block_sum(float v) {
    __shared__ float part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
    v = t1_warp_sum(v);
    __syncthreads();
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = (lane < nwarps) ? part[lane] : 0.0f;
    return t1_warp_sum(v);
}
__device__ float t1_block_max(float v) {
    __shared__ float part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
    v = t1_warp_max(v);
    __syncthreads();
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = (lane < nwarps) ? part[lane] : T1_NEG_INF;
    return t1_warp_max(v);
}

// Softmax of one row of n scores in place; one block per row.
__device__ void t1_softmax_row(float* row, int n) {
    float m = T1_NEG_INF;
    for (int j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, row[j]);
    m = t1_block_max(m);
    float s = 0.0f;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        float e = (row[j] == T1_NEG_INF) ? 0.0f : __expf(row[j] - m);
        row[j] = e;
        s += e;
    }
    s = t1_block_sum(s);
    const float inv = 1.0f / s;
    for (int j = threadIdx.x; j < n; j += blockDim.x) row[j] *= inv;
}

// ---- causal flash attention (f32, online softmax) ----
// SPLIT threads own one query row, each a 64-wide slice of head_dim (head_dim <= 64 * SPLIT);
// partial dot products meet through warp shuffles. Rows are head_dim floats at the given base
// pointers with strides q_stride, kv_stride, o_stride. The block (T1_FLASH_BQ * SPLIT threads)
// covers T1_FLASH_BQ consecutive queries from q0; key tiles of T1_FLASH_BK are staged in shared
// memory; bias(i, j) is added to the scaled score of key j <= i.
#define T1_FLASH_BQ 64
#define T1_FLASH_BK 32
#define T1_FLASH_DPT 64
#define T1_FLASH_CHUNK 8
template <int SPLIT, typename Bias>
__device__ void t1_flash_causal(const float* __restrict__ q, const float* __restrict__ k,
                                const float* __restrict__ v, float* __restrict__ o, int q_stride,
                                int kv_stride, int o_stride, int seq, int d, float scale, int q0,
                                Bias bias) {
    constexpr int MAXD = T1_FLASH_DPT * SPLIT;
    __shared__ float ks[T1_FLASH_BK][MAXD];
    __shared__ float vs[T1_FLASH_BK][MAXD];
    const int i = q0 + (int)threadIdx.x / SPLIT, part = threadIdx.x % SPLIT;
    const int c0 = part * T1_FLASH_DPT;
    const bool active = i < seq;
    float qr[T1_FLASH_DPT], acc[T1_FLASH_DPT];
#pragma unroll
    for (int c = 0; c < T1_FLASH_DPT; ++c) {
        qr[c] = (active && c0 + c < d) ? q[(long long)i * q_stride + c0 + c] * scale : 0.0f;
        acc[c] = 0.0f;
    }
    float m = T1_NEG_INF, l = 0.0f;
    const int last = min(seq, q0 + T1_FLASH_BQ) - 1; // last key any row of this block needs
    for (int j0 = 0; j0 <= last; j0 += T1_FLASH_BK) {
        __syncthreads();
        for (int x = threadIdx.x; x < T1_FLASH_BK * MAXD; x += blockDim.x) {
            const int r = x / MAXD, c = x % MAXD, j = j0 + r;
            const bool ok = j < seq && c < d;
            ks[r][c] = ok ? k[(long long)j * kv_stride + c] : 0.0f;
            vs[r][c] = ok ? v[(long long)j * kv_stride + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll 1
        for (int r0 = 0; r0 < T1_FLASH_BK; r0 += T1_FLASH_CHUNK) {
            // Online-softmax update per chunk of keys (bounded unrolling keeps NVRTC fast).
            float s[T1_FLASH_CHUNK];
            float chunk_max = T1_NEG_INF;
#pragma unroll
            for (int r = 0; r < T1_FLASH_CHUNK; ++r) {
                float dot = 0.0f;
#pragma unroll
                for (int c = 0; c < T1_FLASH_DPT; ++c) dot = fmaf(qr[c], ks[r0 + r][c0 + c], dot);
#pragma unroll
                for (int w = 1; w < SPLIT; w <<= 1) dot += __shfl_xor_sync(0xffffffffu, dot, w);
                const int j = j0 + r0 + r;
                s[r] = (j <= i) ? dot + bias(i, j) : T1_NEG_INF;
                chunk_max = fmaxf(chunk_max, s[r]);
            }
            const float m_new = fmaxf(m, chunk_max);
            const float corr = (m == T1_NEG_INF) ? 0.0f : __expf(m - m_new);
            l *= corr;
#pragma unroll
            for (int c = 0; c < T1_FLASH_DPT; ++c) acc[c] *= corr;
#pragma unroll
            for (int r = 0; r < T1_FLASH_CHUNK; ++r) {
                const float p = (s[r] == T1_NEG_INF) ? 0.0f : __expf(s[r] - m_new);
                l += p;
#pragma unroll
                for (int c = 0; c < T1_FLASH_DPT; ++c) acc[c] = fmaf(p, vs[r0 + r][c0 + c], acc[c]);
            }
            m = m_new;
        }
    }
    if (active) {
        const float inv = 1.0f / l; // key j = i is always visible, so l > 0
        for (int c = 0; c < T1_FLASH_DPT && c0 + c < d; ++c) o[(long long)i * o_stride + c0 + c] = acc[c] * inv;
    }
}

// ---- GEMM tile: C[M,N] (+)= A[M,K] * B[N,K]^T in f32, 64x64 block tile, 256 threads, 4x4 each ----
// Row-major A (lda) and B (ldb, K contiguous per output column: the weight layout [out, in]).
// T is float or u16 (bf16 bits); products accumulate in f32. Grid: (ceil(N/64), ceil(M/64)).
#define T1_GEMM_BM 64
#define T1_GEMM_BN 64
#define T1_GEMM_BK 16
__device__ __forceinline__ float t1_to_f32(float x) { return x; }
__device__ __forceinline__ float t1_to_f32(u16 x) { return t1_bf16_to_f32(x); }
template <typename T>
__device__ void t1_gemm_nt_tile(const T* __restrict__ a, const T* __restrict__ b,
                                float* __restrict__ c, int m, int n, int k, int lda, int ldb,
                                int ldc, int accumulate) {
    __shared__ float as[T1_GEMM_BK][T1_GEMM_BM + 4];
    __shared__ float bs[T1_GEMM_BK][T1_GEMM_BN + 4];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * T1_GEMM_BM, col0 = blockIdx.x * T1_GEMM_BN;
    float r[4][4];
#pragma unroll
    for (int y = 0; y < 4; ++y)
#pragma unroll
        for (int x = 0; x < 4; ++x) r[y][x] = 0.0f;
    for (int k0 = 0; k0 < k; k0 += T1_GEMM_BK) {
        for (int e = threadIdx.x; e < T1_GEMM_BM * T1_GEMM_BK; e += blockDim.x) {
            const int rr = e / T1_GEMM_BK, kk = e % T1_GEMM_BK;
            const int gr = row0 + rr, gk = k0 + kk, gc = col0 + rr;
            as[kk][rr] = (gr < m && gk < k) ? t1_to_f32(a[(long long)gr * lda + gk]) : 0.0f;
            bs[kk][rr] = (gc < n && gk < k) ? t1_to_f32(b[(long long)gc * ldb + gk]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < T1_GEMM_BK; ++kk) {
            float av[4], bv[4];
#pragma unroll
            for (int y = 0; y < 4; ++y) av[y] = as[kk][ty * 4 + y];
#pragma unroll
            for (int x = 0; x < 4; ++x) bv[x] = bs[kk][tx * 4 + x];
#pragma unroll
            for (int y = 0; y < 4; ++y)
#pragma unroll
                for (int x = 0; x < 4; ++x) r[y][x] = fmaf(av[y], bv[x], r[y][x]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int y = 0; y < 4; ++y)
#pragma unroll
        for (int x = 0; x < 4; ++x) {
            const int gr = row0 + ty * 4 + y, gc = col0 + tx * 4 + x;
            if (gr < m && gc < n) {
                float* dst = &c[(long long)gr * ldc + gc];
                *dst = accumulate ? *dst + r[y][x] : r[y][x];
            }
        }
}
