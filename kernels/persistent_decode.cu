// persistent_decode.cu: `steps` decode steps of out_t[b, :] = v_t[b, :] * sum_d(q_t[b, d] * k_t[b, d]).
// q, k, v, out are f32 [steps, batch, head_dim]. Mirrors the CPU twin
// (bench::targets::persistent_decode). The baseline launches three small kernels per step (mul,
// sum, scale), from the host or replayed from a CUDA graph; the optimized variant is one
// persistent launch that walks every step.

// Baseline op 1: tmp[b, d] = q_t[b, d] * k_t[b, d]. Grid ceil(batch*d/256).
extern "C" __global__ void decode_mul(const float* __restrict__ q, const float* __restrict__ k,
                                      float* __restrict__ tmp, int n) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) tmp[idx] = q[idx] * k[idx];
}

// Baseline op 2: s[b] = sum_d tmp[b, d]. One block per batch row.
extern "C" __global__ void decode_sum(const float* __restrict__ tmp, float* __restrict__ s, int d) {
    float acc = 0.0f;
    for (int c = threadIdx.x; c < d; c += blockDim.x) acc += tmp[(long long)blockIdx.x * d + c];
    acc = t1_block_sum(acc);
    if (threadIdx.x == 0) s[blockIdx.x] = acc;
}

// Baseline op 3: out_t[b, d] = v_t[b, d] * s[b]. Grid ceil(batch*d/256).
extern "C" __global__ void decode_scale(const float* __restrict__ v, const float* __restrict__ s,
                                        float* __restrict__ out, int n, int d) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) out[idx] = v[idx] * s[idx / d];
}

// Optimized: one persistent launch; block b owns batch row b and walks all steps.
extern "C" __global__ void decode_persistent(const float* __restrict__ q,
                                             const float* __restrict__ k,
                                             const float* __restrict__ v, float* __restrict__ out,
                                             int steps, int batch, int d) {
    for (int t = 0; t < steps; ++t) {
        const long long row = ((long long)t * batch + blockIdx.x) * d;
        float acc = 0.0f;
        for (int c = threadIdx.x; c < d; c += blockDim.x) acc = fmaf(q[row + c], k[row + c], acc);
        acc = t1_block_sum(acc);
        for (int c = threadIdx.x; c < d; c += blockDim.x) out[row + c] = v[row + c] * acc;
    }
}
