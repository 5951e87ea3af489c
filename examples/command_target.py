#!/usr/bin/env python3
"""A tier1 command target: dot products of seeded vectors, a Python loop versus map/sum.

tier1 runs this with TIER1_SEED, TIER1_WARMUP, TIER1_ITERATIONS (rounds), TIER1_MIN_SAMPLE_MS,
TIER1_PROCESS, TIER1_SHAPES (JSON object of the profile's shapes, here {"n": ...}), TIER1_RTOL and
TIER1_ATOL in the environment, and reads one JSON document (schema tier1.command_result.v1) from
stdout. It measures as tier1's own harness does: executions batched until a sample lasts
TIER1_MIN_SAMPLE_MS, both variants timed once per round in a shuffled order, so sample i of each
variant comes from round i. See docs/command-targets.md.
"""
import json
import operator
import os
import random
import time


def baseline(a, b, rows, n):
    out = []
    for r in range(rows):
        s = 0.0
        for i in range(n):
            s += a[r * n + i] * b[i]
        out.append(s)
    return out


def optimized(a, b, rows, n):
    return [sum(map(operator.mul, a[r * n:(r + 1) * n], b)) for r in range(rows)]


def batch_ms(fn, args, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn(*args)
    return (time.perf_counter() - t0) * 1e3


def calibrate(fn, args, warmup, min_sample_ms):
    """Warm up, then the batch size whose time reaches min_sample_ms (x10 far below, else scaled)."""
    for _ in range(warmup):
        fn(*args)
    reps = 1
    while True:
        t = batch_ms(fn, args, reps)
        if t >= min_sample_ms or reps >= 1 << 20:
            return reps
        reps = max(reps + 1, reps * 10 if t < min_sample_ms / 10 else int(reps * 1.4 * min_sample_ms / max(t, 1e-9)) + 1)


def measure(variants, warmup, rounds, min_sample_ms, seed):
    """Per-execution samples of each (fn, args), one per round, variants in a shuffled order."""
    reps = [calibrate(fn, args, warmup, min_sample_ms) for fn, args in variants]
    order = list(range(len(variants)))
    shuffle = random.Random(seed)
    samples = [[] for _ in variants]
    for _ in range(rounds):
        shuffle.shuffle(order)
        for i in order:
            fn, args = variants[i]
            samples[i].append(batch_ms(fn, args, reps[i]) / reps[i])
    return samples


def main():
    seed = int(os.environ.get("TIER1_SEED", "42"))
    warmup = int(os.environ.get("TIER1_WARMUP", "5"))
    rounds = int(os.environ.get("TIER1_ITERATIONS", "10"))
    min_sample_ms = float(os.environ.get("TIER1_MIN_SAMPLE_MS", "1"))
    process = int(os.environ.get("TIER1_PROCESS", "0"))
    shapes = json.loads(os.environ.get("TIER1_SHAPES", "{}") or "{}")
    rtol = float(os.environ.get("TIER1_RTOL", "1e-6"))
    atol = float(os.environ.get("TIER1_ATOL", "1e-9"))
    n = int(shapes.get("n", 2048))
    rows = int(shapes.get("rows", 16))
    rng = random.Random(seed)
    a = [rng.uniform(-1.0, 1.0) for _ in range(rows * n)]
    b = [rng.uniform(-1.0, 1.0) for _ in range(n)]
    signature = {
        "seed": seed,
        "inputs": [
            {"name": "a", "shape": [rows, n], "dtype": "f64"},
            {"name": "b", "shape": [n], "dtype": "f64"},
        ],
    }

    # Verification first, outside the timed region.
    want = baseline(a, b, rows, n)
    got = optimized(a, b, rows, n)
    abs_err = [abs(g - w) for g, w in zip(got, want)]
    rel_err = [e / abs(w) for e, w in zip(abs_err, want) if w != 0.0]
    mismatches = sum(1 for e, w in zip(abs_err, want) if e > atol + rtol * abs(w))

    base_ms, opt_ms = measure(
        [(baseline, (a, b, rows, n)), (optimized, (a, b, rows, n))],
        warmup, rounds, min_sample_ms, seed * 1000 + process,
    )
    result = {
        "schema": "tier1.command_result.v1",
        "baseline_file": "examples/command_target.py",
        "work": {"flops": 2.0 * rows * n, "bytes": 8.0 * (rows * n + n + rows)},
        "variants": [
            {
                "name": "baseline",
                "samples_ms": base_ms,
                "input_signature": signature,
            },
            {
                "name": "optimized_map_sum",
                "samples_ms": opt_ms,
                "input_signature": signature,
                "verification": {
                    "passed": mismatches == 0 and len(got) == len(want),
                    "elements": len(want),
                    "mismatches": mismatches,
                    "max_abs_err": max(abs_err, default=0.0),
                    "max_rel_err": max(rel_err, default=0.0),
                },
            },
        ],
    }
    print(json.dumps(result, allow_nan=False))


if __name__ == "__main__":
    main()
