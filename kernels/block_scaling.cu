// block_scaling.cu: block-scaled GEMM C[M,N] = dequant(A)[M,K] * dequant(B)[N,K]^T (f32 out).
// A and B hold e2m1 codes packed two per byte along K (low nibble = even k), row-major with K/2
// bytes per row; sfa/sfb hold one e8m0 scale per 16 consecutive K values (K/16 bytes per row).
// Every e2m1 value times a power of two is exact in bf16, so both variants multiply exact
// operands and accumulate in f32, like the CPU twin (bench::targets::block_scaling).

// Baseline step 1: materialize a dequantized bf16 operand [rows, k]. One thread per packed byte.
extern "C" __global__ void block_scaling_dequant_bf16(const u8* __restrict__ packed,
                                                      const u8* __restrict__ scales,
                                                      u16* __restrict__ out, int rows, int k) {
    const long long total = (long long)rows * (k / 2);
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long row = idx / (k / 2);
        const int kk = (int)(idx % (k / 2)) * 2;
        const float s = t1_e8m0_to_f32(scales[row * (k / 16) + kk / 16]);
        const u32 byte = packed[idx];
        const u32 lo = t1_f32_to_bf16(t1_e2m1_to_f32(byte & 15u) * s);
        const u32 hi = t1_f32_to_bf16(t1_e2m1_to_f32(byte >> 4) * s);
        reinterpret_cast<u32*>(out)[idx] = lo | (hi << 16);
    }
}

// Baseline step 2: a plain smem-tiled GEMM over the materialized bf16 operands.
extern "C" __global__ void block_scaling_gemm_bf16(const u16* __restrict__ a,
                                                   const u16* __restrict__ b,
                                                   float* __restrict__ c, int m, int n, int k) {
    t1_gemm_nt_tile<u16>(a, b, c, m, n, k, k, k, n, 0);
}

// Optimized: dequantization fused into a tensor-core GEMM. Block tile 128x128, K step 32,
// 256 threads = 8 warps as 2 (M) x 4 (N), each warp 64x32 = 4x4 mma.sync m16n8k16 bf16 tiles.
// Requires m % 128 == 0, n % 128 == 0, k % 32 == 0 and compute capability >= 8.0 (host checks).
#define BS_BM 128
#define BS_BN 128
#define BS_BK 32
#define BS_LD (BS_BK + 8) // padded smem row (u16 elements) against bank conflicts

__device__ __forceinline__ void bs_stage_tile(const u8* __restrict__ packed,
                                              const u8* __restrict__ scales, u16 (*tile)[BS_LD],
                                              int row0, int k0, int k) {
    const int row = threadIdx.x >> 1, half = threadIdx.x & 1; // 16 values = one scale block
    const long long grow = row0 + row;
    const uint2 raw = *reinterpret_cast<const uint2*>(packed + grow * (k / 2) + k0 / 2 + half * 8);
    const float s = t1_e8m0_to_f32(scales[grow * (k / 16) + k0 / 16 + half]);
    u32* dst = reinterpret_cast<u32*>(&tile[row][half * 16]);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const u32 byte = ((j < 4 ? raw.x : raw.y) >> ((j & 3) * 8)) & 0xffu;
        const u32 lo = t1_f32_to_bf16(t1_e2m1_to_f32(byte & 15u) * s);
        const u32 hi = t1_f32_to_bf16(t1_e2m1_to_f32(byte >> 4) * s);
        dst[j] = lo | (hi << 16);
    }
}

__device__ __forceinline__ void bs_mma_bf16(float* d, const u32* a, const u32* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(256)
    block_scaling_fused_mma(const u8* __restrict__ a, const u8* __restrict__ sfa,
                            const u8* __restrict__ b, const u8* __restrict__ sfb,
                            float* __restrict__ c, int m, int n, int k) {
    __shared__ __align__(16) u16 as[BS_BM][BS_LD];
    __shared__ __align__(16) u16 bs[BS_BN][BS_LD];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t4 = lane & 3;
    const int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
    const int row0 = blockIdx.y * BS_BM, col0 = blockIdx.x * BS_BN;
    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;
    for (int k0 = 0; k0 < k; k0 += BS_BK) {
        bs_stage_tile(a, sfa, as, row0, k0, k);
        bs_stage_tile(b, sfb, bs, col0, k0, k);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BS_BK; kk += 16) {
            u32 bf[4][2];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int nr = wn + j * 8 + g;
                bf[j][0] = *reinterpret_cast<const u32*>(&bs[nr][kk + t4 * 2]);
                bf[j][1] = *reinterpret_cast<const u32*>(&bs[nr][kk + t4 * 2 + 8]);
            }
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int mr = wm + i * 16 + g;
                u32 af[4];
                af[0] = *reinterpret_cast<const u32*>(&as[mr][kk + t4 * 2]);
                af[1] = *reinterpret_cast<const u32*>(&as[mr + 8][kk + t4 * 2]);
                af[2] = *reinterpret_cast<const u32*>(&as[mr][kk + t4 * 2 + 8]);
                af[3] = *reinterpret_cast<const u32*>(&as[mr + 8][kk + t4 * 2 + 8]);
#pragma unroll
                for (int j = 0; j < 4; ++j) bs_mma_bf16(acc[i][j], af, bf[j]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const long long r = row0 + wm + i * 16 + g;
            const int col = col0 + wn + j * 8 + t4 * 2;
            *reinterpret_cast<float2*>(&c[r * n + col]) = make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2*>(&c[(r + 8) * n + col]) = make_float2(acc[i][j][2], acc[i][j][3]);
        }
}
