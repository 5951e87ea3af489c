/* A tier1 command target in C, written with the protocol helper (helpers/c/tier1_bench.h): a
 * seeded n x n matrix product, the textbook i-j-k loop order (baseline) against i-k-j, which
 * walks both matrices row by row (optimized). The target gives only its setup, its variants and
 * their outputs; the helper verifies the outputs, calibrates, times the variants in shuffled
 * rounds and prints the tier1.command_result.v1 document. Build and try it (C99 or C++):
 *
 *     cc -O2 -std=c99 -I helpers/c examples/command_target.c -o /tmp/matmul -lm
 *     TIER1_SHAPES='{"n": 64}' TIER1_ITERATIONS=3 /tmp/matmul
 */
#include "tier1_bench.h"

static long n;
static double *a, *b;

static void matmul_ijk(void *state, double *c) {
    long i, j, k;
    (void)state;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            double s = 0.0;
            for (k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}

static void matmul_ikj(void *state, double *c) {
    long i, j, k;
    (void)state;
    for (i = 0; i < n * n; i++) c[i] = 0.0;
    for (i = 0; i < n; i++)
        for (k = 0; k < n; k++) {
            double aik = a[i * n + k];
            for (j = 0; j < n; j++) c[i * n + j] += aik * b[k * n + j];
        }
}

int main(void) {
    uint64_t s = tier1_seed();
    long i;
    int rc;
    tier1_input inputs[2] = {{"a", "f64", {0, 0}, 2}, {"b", "f64", {0, 0}, 2}};
    tier1_variant variants[2] = {{"baseline", matmul_ijk}, {"optimized_ikj", matmul_ikj}};
    tier1_spec spec = TIER1_SPEC_INIT;
    n = tier1_shape("n", 192);
    a = (double *)malloc((size_t)(n * n) * sizeof(double));
    b = (double *)malloc((size_t)(n * n) * sizeof(double));
    if (a == NULL || b == NULL) return 2;
    for (i = 0; i < n * n; i++) {
        a[i] = (double)(tier1_next(&s) % 2001) / 1000.0 - 1.0;
        b[i] = (double)(tier1_next(&s) % 2001) / 1000.0 - 1.0;
    }
    inputs[0].shape[0] = inputs[0].shape[1] = inputs[1].shape[0] = inputs[1].shape[1] = n;
    spec.out_len = (size_t)(n * n);
    spec.inputs = inputs;
    spec.n_inputs = 2;
    spec.baseline_file = "examples/command_target.c";
    spec.flops = 2.0 * (double)n * (double)n * (double)n;
    spec.bytes = 24.0 * (double)n * (double)n;
    rc = tier1_run(&spec, variants, 2, NULL);
    free(a);
    free(b);
    return rc;
}
