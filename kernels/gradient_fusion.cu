// gradient_fusion.cu: all-reduce of `tensors` gradients across `ranks` replicas held on one
// device, accumulated `repeats` times: out[i] += sum_r grads[r][i]. grads is f32
// [ranks, tensors * tensor_elems], out is f32 [tensors * tensor_elems]. Mirrors the CPU twin
// (bench::targets::gradient_fusion): baseline reduces each tensor with its own launch,
// optimized reduces one bucket of `bucket_elems` contiguous values per launch.

// Reduce `len` values starting at `offset`; grid-stride, so one launch serves a tensor or a bucket.
extern "C" __global__ void grad_reduce_tensor(const float* __restrict__ grads, float* __restrict__ out,
                                              long long offset, int len, int ranks, long long stride) {
    for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < len; x += gridDim.x * blockDim.x) {
        const long long i = offset + x;
        float acc = 0.0f;
        for (int r = 0; r < ranks; ++r) acc += grads[(long long)r * stride + i];
        out[i] += acc;
    }
}

// Optimized: one launch per bucket, vectorized (float4) when the bucket is 16-byte aligned.
extern "C" __global__ void grad_reduce_bucket(const float* __restrict__ grads, float* __restrict__ out,
                                              long long offset, long long len, int ranks, long long stride) {
    const long long vec = ((offset & 3) == 0 && (stride & 3) == 0) ? len / 4 : 0;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < vec; x += step) {
        float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int r = 0; r < ranks; ++r) {
            const float4 g = *reinterpret_cast<const float4*>(grads + (long long)r * stride + offset + 4 * x);
            acc.x += g.x; acc.y += g.y; acc.z += g.z; acc.w += g.w;
        }
        float4* o = reinterpret_cast<float4*>(out + offset + 4 * x);
        float4 cur = *o;
        cur.x += acc.x; cur.y += acc.y; cur.z += acc.z; cur.w += acc.w;
        *o = cur;
    }
    for (long long x = vec * 4 + blockIdx.x * (long long)blockDim.x + threadIdx.x; x < len; x += step) {
        float acc = 0.0f;
        for (int r = 0; r < ranks; ++r) acc += grads[(long long)r * stride + offset + x];
        out[offset + x] += acc;
    }
}
