// llama_3_1_8b.cu: Llama-3.1-shaped decoder blocks in f32 (mirrors bench::targets::llama_3_1_8b).
// Activations are row-major [seq, features]. Per layer: x += Wo . attn(rope(Wq xn), rope(Wk xn),
// Wv xn) with xn = rmsnorm(x); x += Wdown . (silu(Wgate xn') * (Wup xn')) with xn' = rmsnorm(x).
// Weights are [out, in]; Wq|Wk|Wv are stored as one [(heads + 2 kv_heads) * hd, hidden] block and
// Wgate|Wup as one [2 * mlp, hidden] block, so the optimized path runs one GEMM for each and the
// baseline runs separate GEMMs on the views. Grouped-query attention: head h reads kv head
// h / (heads / kv_heads). RoPE rotates halves (x[c], x[c + hd/2]) by pos * theta^(-2c/hd).

// Shared by both variants: y[t] = x[t] / rms(x[t]) * w. One block per row.
extern "C" __global__ void llama_rmsnorm(const float* __restrict__ x, const float* __restrict__ w,
                                         float* __restrict__ y, int hidden, float eps) {
    const float* row = x + (long long)blockIdx.x * hidden;
    float ss = 0.0f;
    for (int c = threadIdx.x; c < hidden; c += blockDim.x) ss = fmaf(row[c], row[c], ss);
    ss = t1_block_sum(ss);
    const float inv = rsqrtf(ss / (float)hidden + eps);
    for (int c = threadIdx.x; c < hidden; c += blockDim.x)
        y[(long long)blockIdx.x * hidden + c] = row[c] * inv * w[c];
}

// Shared by both variants: rotate `nheads` heads starting at column col0 of rows with stride ld.
// One thread per (t, head, c < hd/2).
extern "C" __global__ void llama_rope(float* __restrict__ x, int seq, int nheads, int hd, int ld,
                                      int col0, float theta) {
    const int half = hd / 2;
    const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)seq * nheads * half) return;
    const int c = (int)(idx % half), h = (int)((idx / half) % nheads), t = (int)(idx / half / nheads);
    const float ang = (float)t * powf(theta, -2.0f * (float)c / (float)hd);
    float sn, cs;
    sincosf(ang, &sn, &cs);
    float* p = x + (long long)t * ld + col0 + h * hd;
    const float x1 = p[c], x2 = p[c + half];
    p[c] = x1 * cs - x2 * sn;
    p[c + half] = x2 * cs + x1 * sn;
}

// ---- baseline (unfused) ----

// c[m, n] = a[m, :] . w[n, :] with row strides lda/ldw/ldc; one thread per output.
extern "C" __global__ void llama_matmul_naive(const float* __restrict__ a, const float* __restrict__ w,
                                              float* __restrict__ c, int m, int n, int k, int lda,
                                              int ldw, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
    if (col >= n || row >= m) return;
    const float* ar = a + (long long)row * lda;
    const float* wr = w + (long long)col * ldw;
    float acc = 0.0f;
    for (int x = 0; x < k; ++x) acc = fmaf(ar[x], wr[x], acc);
    c[(long long)row * ldc + col] = acc;
}

// scores[h, i, j] = q_i . k_j * scale + mask[i, j] (mask: 0 or -inf, precomputed [seq, seq]).
// Grid (ceil(seq/256), seq, heads).
extern "C" __global__ void llama_attn_scores_masked(const float* __restrict__ qkv,
                                                    const float* __restrict__ mask,
                                                    float* __restrict__ scores, int seq, int heads,
                                                    int kv_heads, int hd, float scale) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y, h = blockIdx.z;
    if (j >= seq) return;
    const int ld = (heads + 2 * kv_heads) * hd, kvh = h / (heads / kv_heads);
    const float* qi = qkv + (long long)i * ld + h * hd;
    const float* kj = qkv + (long long)j * ld + (heads + kvh) * hd;
    float dot = 0.0f;
    for (int c = 0; c < hd; ++c) dot = fmaf(qi[c], kj[c], dot);
    scores[((long long)h * seq + i) * seq + j] = dot * scale + mask[(long long)i * seq + j];
}

// Softmax over each score row in place; one block per (head, query) row.
extern "C" __global__ void llama_softmax_rows(float* __restrict__ scores, int seq) {
    t1_softmax_row(scores + (long long)blockIdx.x * seq, seq);
}

// o[i, h*hd + c] = sum_j p[h, i, j] v_j[c] over every key (masked weights are zero).
// Grid (ceil(heads*hd/256), seq).
extern "C" __global__ void llama_attn_pv(const float* __restrict__ p, const float* __restrict__ qkv,
                                         float* __restrict__ o, int seq, int heads, int kv_heads,
                                         int hd) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (col >= heads * hd) return;
    const int h = col / hd, c = col % hd, kvh = h / (heads / kv_heads);
    const int ld = (heads + 2 * kv_heads) * hd;
    const float* prow = p + ((long long)h * seq + i) * seq;
    const float* vcol = qkv + (heads + kv_heads + kvh) * hd + c;
    float acc = 0.0f;
    for (int j = 0; j < seq; ++j) acc = fmaf(prow[j], vcol[(long long)j * ld], acc);
    o[(long long)i * heads * hd + col] = acc;
}

// x[i] += y[i] (residual).
extern "C" __global__ void llama_add(float* __restrict__ x, const float* __restrict__ y, long long n) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) x[i] += y[i];
}

// x[i] = silu(x[i]) in place.
extern "C" __global__ void llama_silu(float* __restrict__ x, long long n) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] / (1.0f + __expf(-x[i]));
}

// x[i] *= y[i].
extern "C" __global__ void llama_mul(float* __restrict__ x, const float* __restrict__ y, long long n) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) x[i] *= y[i];
}

// ---- optimized (fused) ----

// c (+)= a . w^T through the shared 64x64 register-blocked tile; accumulate=1 fuses the residual.
// Grid (ceil(n/64), ceil(m/64)), block 256.
extern "C" __global__ void __launch_bounds__(256)
    llama_matmul_tiled(const float* __restrict__ a, const float* __restrict__ w, float* __restrict__ c,
                       int m, int n, int k, int lda, int ldw, int ldc, int accumulate) {
    t1_gemm_nt_tile<float>(a, w, c, m, n, k, lda, ldw, ldc, accumulate);
}

struct LlamaNoBias {
    __device__ float operator()(int, int) const { return 0.0f; }
};

// Fused causal attention with GQA on the packed qkv rows; o is [seq, heads*hd].
// Grid (ceil(seq/64), heads), block 128 (two threads per query row); hd <= 128 (host checks).
extern "C" __global__ void __launch_bounds__(T1_FLASH_BQ * 2)
    llama_attn_flash(const float* __restrict__ qkv, float* __restrict__ o, int seq, int heads,
                     int kv_heads, int hd, float scale) {
    const int h = blockIdx.y, kvh = h / (heads / kv_heads);
    const int ld = (heads + 2 * kv_heads) * hd;
    t1_flash_causal<2>(qkv + h * hd, qkv + (heads + kvh) * hd, qkv + (heads + kv_heads + kvh) * hd,
                       o + h * hd, ld, ld, heads * hd, seq, hd, scale, blockIdx.x * T1_FLASH_BQ,
                       LlamaNoBias{});
}

// Fused SwiGLU: h[t, c] = silu(gu[t, c]) * gu[t, mlp + c], gu = [seq, 2*mlp] from one GEMM.
extern "C" __global__ void llama_swiglu(const float* __restrict__ gu, float* __restrict__ h, int seq, int mlp) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= (long long)seq * mlp) return;
    const long long t = i / mlp, c = i % mlp;
    const float g = gu[t * 2 * mlp + c], u = gu[t * 2 * mlp + mlp + c];
    h[i] = g / (1.0f + __expf(-g)) * u;
}
