// kv_standard.cu: append decode steps to a KV cache (memory goal). Cache layout
// [batch, layers, 2 (k|v), heads, max_seq, head_dim]; each step brings new f32 keys and values
// `src` of layout [active_layers, batch, 2, heads, head_dim] for position `pos`. Mirrors the CPU
// twin (bench::targets::kv_standard): baseline stores bf16, optimized stores FP8 E4M3 codes with
// one scale per (layer, position) = absmax / 448 over every value that layer writes at pos.

__device__ __forceinline__ long long kv_cache_index(int b, int layer, int kv, int h, int pos,
                                                    int c, int layers, int heads, int max_seq,
                                                    int d) {
    return ((((long long)b * layers + layer) * 2 + kv) * heads + h) * (long long)max_seq * d +
           (long long)pos * d + c;
}

// Baseline: bf16 store. Grid-stride over active_layers*batch*2*heads*d values.
extern "C" __global__ void kv_append_bf16(const float* __restrict__ src, u16* __restrict__ cache,
                                          int pos, int active_layers, int batch, int layers,
                                          int heads, int max_seq, int d) {
    const long long per_layer = (long long)batch * 2 * heads * d;
    const long long total = per_layer * active_layers;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < total;
         x += (long long)gridDim.x * blockDim.x) {
        const int layer = (int)(x / per_layer);
        long long r = x % per_layer;
        const int c = (int)(r % d); r /= d;
        const int h = (int)(r % heads); r /= heads;
        const int kv = (int)(r % 2);
        const int b = (int)(r / 2);
        cache[kv_cache_index(b, layer, kv, h, pos, c, layers, heads, max_seq, d)] = t1_f32_to_bf16(src[x]);
    }
}

// Optimized: one block per active layer computes the (layer, pos) absmax, stores the scale
// (scales[layer * max_seq + pos]) and writes FP8 E4M3 codes. Block 1024 threads.
extern "C" __global__ void kv_append_fp8(const float* __restrict__ src, u8* __restrict__ cache,
                                         float* __restrict__ scales, int pos, int batch,
                                         int layers, int heads, int max_seq, int d) {
    const int layer = blockIdx.x;
    const long long per_layer = (long long)batch * 2 * heads * d;
    const float* s = src + per_layer * layer;
    float amax = 0.0f;
    for (long long x = threadIdx.x; x < per_layer; x += blockDim.x) amax = fmaxf(amax, fabsf(s[x]));
    amax = t1_block_max(amax);
    const float scale = amax > 0.0f ? amax / 448.0f : 1.0f;
    if (threadIdx.x == 0) scales[(long long)layer * max_seq + pos] = scale;
    const float inv = 1.0f / scale;
    for (long long x = threadIdx.x; x < per_layer; x += blockDim.x) {
        long long r = x;
        const int c = (int)(r % d); r /= d;
        const int h = (int)(r % heads); r /= heads;
        const int kv = (int)(r % 2);
        const int b = (int)(r / 2);
        cache[kv_cache_index(b, layer, kv, h, pos, c, layers, heads, max_seq, d)] = t1_f32_to_e4m3(s[x] * inv);
    }
}
