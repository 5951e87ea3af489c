// flashattention4_alibi.cu: causal attention with ALiBi, f32, layout [batch, heads, seq, head_dim].
// Head h has slope 2^(-8 (h + 1) / heads); the score of query i and key j <= i is
// q_i . k_j * scale + slope * (j - i), keys j > i are masked. Mirrors the CPU twin
// (bench::targets::flashattention4_alibi): baseline materializes scores, optimized is flash-style.

__device__ __forceinline__ float alibi_slope(int h, int heads) {
    return exp2f(-8.0f * (float)(h + 1) / (float)heads);
}

// Baseline 1/3: scores[bh, i, j] for all (i, j); masked entries are -inf. Grid (S/16, S/16, B*H).
extern "C" __global__ void alibi_scores(const float* __restrict__ q, const float* __restrict__ k,
                                        float* __restrict__ scores, int heads, int seq, int d,
                                        float scale) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    const int bh = blockIdx.z;
    if (i >= seq || j >= seq) return;
    const long long base = (long long)bh * seq * d;
    float dot = 0.0f;
    for (int c = 0; c < d; ++c) dot = fmaf(q[base + (long long)i * d + c], k[base + (long long)j * d + c], dot);
    const float slope = alibi_slope(bh % heads, heads);
    scores[((long long)bh * seq + i) * seq + j] =
        (j <= i) ? dot * scale + slope * (float)(j - i) : T1_NEG_INF;
}

// Baseline 2/3: softmax of every score row in place. One block per row (B*H*S rows).
extern "C" __global__ void alibi_softmax(float* __restrict__ scores, int seq) {
    t1_softmax_row(scores + (long long)blockIdx.x * seq, seq);
}

// Baseline 3/3: o = P . V. One thread per output element; grid (ceil(d*seq/256), B*H).
extern "C" __global__ void alibi_pv(const float* __restrict__ p, const float* __restrict__ v,
                                    float* __restrict__ o, int seq, int d) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x, bh = blockIdx.y;
    if (idx >= seq * d) return;
    const int i = idx / d, c = idx % d;
    const float* prow = p + ((long long)bh * seq + i) * seq;
    const float* vb = v + (long long)bh * seq * d;
    float acc = 0.0f;
    for (int j = 0; j <= i; ++j) acc = fmaf(prow[j], vb[(long long)j * d + c], acc);
    o[(long long)bh * seq * d + idx] = acc;
}

struct AlibiBias {
    float slope;
    __device__ float operator()(int i, int j) const { return slope * (float)(j - i); }
};

// Optimized: tiled online softmax, bias computed on the fly, nothing materialized.
// Grid (ceil(seq/64), B*H), block 64; head_dim <= 64 (host checks).
extern "C" __global__ void __launch_bounds__(T1_FLASH_BQ)
    alibi_flash(const float* __restrict__ q, const float* __restrict__ k,
                const float* __restrict__ v, float* __restrict__ o, int heads, int seq, int d,
                float scale) {
    const int bh = blockIdx.y;
    const long long base = (long long)bh * seq * d;
    AlibiBias bias{alibi_slope(bh % heads, heads)};
    t1_flash_causal<1>(q + base, k + base, v + base, o + base, d, d, d, seq, d, scale,
                    blockIdx.x * T1_FLASH_BQ, bias);
}
