/* tier1_bench.h: write a tier1 command target (docs/command-targets.md) in C or C++ by giving
 * only its setup, its variants and their outputs. Header-only, C99 and C++ (11 or newer); POSIX
 * (clock_gettime). Include it before any other header, or compile with -D_POSIX_C_SOURCE=200809L.
 *
 *     #include "tier1_bench.h"
 *     static double x[4096], y[4096];
 *     static void scale_loop(void *s, double *out) { ... writes 4096 values to out ... }
 *     static void scale_fast(void *s, double *out) { ... }
 *     int main(void) {
 *         long n = tier1_shape("n", 4096);             // the profile's shapes (TIER1_SHAPES)
 *         ...  seed your inputs with tier1_seed() ...
 *         tier1_input inputs[] = {{"x", "f64", {n}, 1}};
 *         tier1_variant variants[] = {{"baseline", scale_loop}, {"optimized_fast", scale_fast}};
 *         tier1_spec spec = TIER1_SPEC_INIT;
 *         spec.out_len = (size_t)n;  spec.inputs = inputs;  spec.n_inputs = 1;
 *         return tier1_run(&spec, variants, 2, NULL);  // prints the document, returns 0
 *     }
 *
 * A variant is `void fn(void *state, double *out)`: it computes and writes its `out_len` output
 * values to `out` (as doubles). Outside the timed region, every optimized variant's output is
 * compared with the baseline's elementwise, |opt - base| <= atol + rtol * |base| with TIER1_RTOL
 * and TIER1_ATOL (a non-finite value is a mismatch). Each variant is warmed up (TIER1_WARMUP runs), its executions are batched until one batch
 * lasts TIER1_MIN_SAMPLE_MS, and TIER1_ITERATIONS rounds time every variant once in an order
 * shuffled by TIER1_SEED and TIER1_PROCESS; one tier1.command_result.v1 document is printed on
 * stdout. With TIER1_CLOCK=cpu (the profile's `clock: cpu`) and no `spec.sync`, a batch is timed on
 * the process's CPU time (CLOCK_PROCESS_CPUTIME_ID: its own work, not the time slices a busy
 * neighbour takes), else on CLOCK_MONOTONIC. One variant alone ("baseline") is a single benchmark (optimization_goal: time). For GPU
 * code set `spec.sync` (for example a wrapper of cudaDeviceSynchronize): it runs after every
 * batch, inside the timed region. Every function is `static inline`. */
#ifndef TIER1_BENCH_H
#define TIER1_BENCH_H

#if !defined(_POSIX_C_SOURCE) && !defined(__cplusplus)
#define _POSIX_C_SOURCE 200809L
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIER1_MAX_DIMS 8
#define TIER1_MAX_REPS (1L << 20)

/** One variant: its name ("baseline" first) and its function. */
typedef struct {
    const char *name;
    void (*fn)(void *state, double *out);
} tier1_variant;

/** One input tensor of the signature tier1 checks across variants. */
typedef struct {
    const char *name;
    const char *dtype;
    long shape[TIER1_MAX_DIMS];
    int ndim;
} tier1_input;

/** What the document says besides the samples. */
typedef struct {
    size_t out_len;              /* output values every variant writes */
    const tier1_input *inputs;   /* the input signature (may be NULL) */
    size_t n_inputs;
    const char *baseline_file;   /* repo-relative source of the baseline, or NULL */
    double flops, bytes;         /* work of one execution; negative: not reported */
    void (*sync)(void *state);   /* called after every batch (GPU code), or NULL */
} tier1_spec;

#define TIER1_SPEC_INIT {0, NULL, 0, NULL, -1.0, -1.0, NULL}

/** An environment variable as a number, or `def`. */
static inline double tier1_env(const char *name, double def) {
    const char *v = getenv(name);
    char *end = NULL;
    double x;
    if (v == NULL || *v == '\0') return def;
    x = strtod(v, &end);
    return (end != v) ? x : def;
}

/** The input seed (TIER1_SEED, default 42). */
static inline uint64_t tier1_seed(void) { return (uint64_t)tier1_env("TIER1_SEED", 42.0); }

/** The profile's shape parameter `key` from TIER1_SHAPES (a flat JSON object of integers). */
static inline long tier1_shape(const char *key, long def) {
    const char *shapes = getenv("TIER1_SHAPES");
    size_t klen = strlen(key);
    const char *p = shapes;
    while (p != NULL && (p = strchr(p, '"')) != NULL) {
        const char *name = p + 1;
        const char *close = strchr(name, '"');
        if (close == NULL) break;
        if ((size_t)(close - name) == klen && strncmp(name, key, klen) == 0) {
            const char *colon = strchr(close, ':');
            char *end = NULL;
            long v;
            if (colon == NULL) break;
            v = strtol(colon + 1, &end, 10);
            return (end != colon + 1) ? v : def;
        }
        p = close + 1;
    }
    return def;
}

/** A splitmix64 step: the seeded order of the rounds. */
static inline uint64_t tier1_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/** The clock of a batch: the process's CPU time under TIER1_CLOCK=cpu without a sync, else
 * monotonic wall time. */
static inline clockid_t tier1_clock(const tier1_spec *spec) {
    const char *c = getenv("TIER1_CLOCK");
    if (c != NULL && strcmp(c, "cpu") == 0 && spec->sync == NULL) return CLOCK_PROCESS_CPUTIME_ID;
    return CLOCK_MONOTONIC;
}

static inline double tier1_now_ms(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static inline double tier1_batch_ms(const tier1_spec *spec, const tier1_variant *v, void *state,
                             double *out, long reps) {
    clockid_t clock = tier1_clock(spec);
    double t0 = tier1_now_ms(clock);
    long i;
    for (i = 0; i < reps; i++) v->fn(state, out);
    if (spec->sync != NULL) spec->sync(state);
    return tier1_now_ms(clock) - t0;
}

/** Warm up, then the executions per batch whose time reaches `min_ms`. */
static inline long tier1_calibrate(const tier1_spec *spec, const tier1_variant *v, void *state,
                            double *out, long warmup, double min_ms) {
    long reps = 1, i;
    for (i = 0; i < warmup; i++) v->fn(state, out);
    if (spec->sync != NULL) spec->sync(state);
    for (;;) {
        double t = tier1_batch_ms(spec, v, state, out, reps);
        long next;
        if (t >= min_ms || reps >= TIER1_MAX_REPS) return reps;
        if (t < min_ms / 10) {
            next = reps * 10;
        } else {
            next = (long)((double)reps * 1.4 * min_ms / (t > 1e-9 ? t : 1e-9)) + 1;
            if (next <= reps) next = reps + 1;
        }
        reps = next < TIER1_MAX_REPS ? next : TIER1_MAX_REPS;
    }
}

static inline void tier1_print_signature(const tier1_spec *spec, uint64_t seed) {
    size_t i;
    int d;
    printf("\"input_signature\":{\"seed\":%llu,\"inputs\":[", (unsigned long long)seed);
    for (i = 0; i < spec->n_inputs; i++) {
        const tier1_input *in = &spec->inputs[i];
        printf("%s{\"name\":\"%s\",\"dtype\":\"%s\",\"shape\":[", i ? "," : "", in->name,
               in->dtype);
        for (d = 0; d < in->ndim && d < TIER1_MAX_DIMS; d++)
            printf("%s%ld", d ? "," : "", in->shape[d]);
        printf("]}");
    }
    printf("]}");
}

/** Verify, time and print the document of `variants` (baseline first). Returns 0, or 2 with a
 *  message on stderr when the variants or the memory for them are not usable. */
static inline int tier1_run(const tier1_spec *spec, const tier1_variant *variants, size_t n_variants,
                     void *state) {
    uint64_t seed = tier1_seed();
    long warmup = (long)tier1_env("TIER1_WARMUP", 5.0);
    long rounds = (long)tier1_env("TIER1_ITERATIONS", 10.0);
    double min_ms = tier1_env("TIER1_MIN_SAMPLE_MS", 1.0);
    double rtol = tier1_env("TIER1_RTOL", 0.0), atol = tier1_env("TIER1_ATOL", 0.0);
    uint64_t order_seed = seed * 1000u + (uint64_t)tier1_env("TIER1_PROCESS", 0.0);
    size_t len = spec->out_len ? spec->out_len : 1, i, j;
    double *want, *got, *samples;
    long *reps;
    size_t *order;
    long r;
    if (n_variants == 0 || strcmp(variants[0].name, "baseline") != 0) {
        fprintf(stderr, "tier1_bench: the first variant must be named \"baseline\"\n");
        return 2;
    }
    if (rounds < 1) rounds = 1;
    want = (double *)calloc(len, sizeof(double));
    got = (double *)calloc(len, sizeof(double));
    samples = (double *)calloc(n_variants * (size_t)rounds, sizeof(double));
    reps = (long *)calloc(n_variants, sizeof(long));
    order = (size_t *)calloc(n_variants, sizeof(size_t));
    if (!want || !got || !samples || !reps || !order) {
        fprintf(stderr, "tier1_bench: out of memory\n");
        free(want); free(got); free(samples); free(reps); free(order);
        return 2;
    }
    variants[0].fn(state, want);
    if (spec->sync != NULL) spec->sync(state);
    printf("{\"schema\":\"tier1.command_result.v1\",");
    if (spec->baseline_file != NULL) printf("\"baseline_file\":\"%s\",", spec->baseline_file);
    if (spec->flops >= 0 || spec->bytes >= 0) {
        printf("\"work\":{");
        if (spec->flops >= 0) printf("\"flops\":%.17g%s", spec->flops, spec->bytes >= 0 ? "," : "");
        if (spec->bytes >= 0) printf("\"bytes\":%.17g", spec->bytes);
        printf("},");
    }
    for (i = 0; i < n_variants; i++) {
        reps[i] = tier1_calibrate(spec, &variants[i], state, got, warmup, min_ms);
        order[i] = i;
    }
    for (r = 0; r < rounds; r++) {
        for (i = n_variants; i > 1; i--) { /* Fisher-Yates */
            size_t k = (size_t)(tier1_next(&order_seed) % i), t = order[i - 1];
            order[i - 1] = order[k];
            order[k] = t;
        }
        for (i = 0; i < n_variants; i++) {
            size_t v = order[i];
            samples[v * (size_t)rounds + (size_t)r] =
                tier1_batch_ms(spec, &variants[v], state, got, reps[v]) / (double)reps[v];
        }
    }
    printf("\"variants\":[");
    for (i = 0; i < n_variants; i++) {
        printf("%s{\"name\":\"%s\",\"samples_ms\":[", i ? "," : "", variants[i].name);
        for (r = 0; r < rounds; r++)
            printf("%s%.17g", r ? "," : "", samples[i * (size_t)rounds + (size_t)r]);
        printf("],");
        tier1_print_signature(spec, seed);
        if (i > 0) {
            size_t mismatches = 0;
            double max_abs = 0.0, max_rel = 0.0;
            for (j = 0; j < len; j++) got[j] = NAN;
            variants[i].fn(state, got);
            if (spec->sync != NULL) spec->sync(state);
            for (j = 0; j < len; j++) {
                double err = fabs(got[j] - want[j]);
                if (!isfinite(err)) { mismatches++; continue; }
                if (err > atol + rtol * fabs(want[j])) mismatches++;
                if (err > max_abs) max_abs = err;
                if (want[j] != 0.0 && err / fabs(want[j]) > max_rel) max_rel = err / fabs(want[j]);
            }
            printf(",\"verification\":{\"passed\":%s,\"elements\":%lu,\"mismatches\":%lu,"
                   "\"max_abs_err\":%.17g,\"max_rel_err\":%.17g}",
                   mismatches == 0 ? "true" : "false", (unsigned long)len,
                   (unsigned long)mismatches, max_abs, max_rel);
        }
        printf("}");
    }
    printf("]}\n");
    fflush(stdout);
    free(want); free(got); free(samples); free(reps); free(order);
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* TIER1_BENCH_H */
