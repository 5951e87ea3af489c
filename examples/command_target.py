#!/usr/bin/env python3
"""A tier1 command target: dot products of seeded vectors, a Python loop versus map/sum.

tier1 runs this with TIER1_SEED, TIER1_WARMUP, TIER1_ITERATIONS, TIER1_SHAPES (JSON object of the
profile's shapes, here {"n": ...}), TIER1_RTOL and TIER1_ATOL in the environment, and reads one
JSON document (schema tier1.command_result.v1) from stdout. See docs/command-targets.md.
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


def measure(fn, args, warmup, iterations):
    for _ in range(warmup):
        fn(*args)
    samples = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        fn(*args)
        samples.append((time.perf_counter() - t0) * 1e3)
    return samples


def main():
    seed = int(os.environ.get("TIER1_SEED", "42"))
    warmup = int(os.environ.get("TIER1_WARMUP", "5"))
    iterations = int(os.environ.get("TIER1_ITERATIONS", "10"))
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

    result = {
        "schema": "tier1.command_result.v1",
        "baseline_file": "examples/command_target.py",
        "work": {"flops": 2.0 * rows * n, "bytes": 8.0 * (rows * n + n + rows)},
        "variants": [
            {
                "name": "baseline",
                "samples_ms": measure(baseline, (a, b, rows, n), warmup, iterations),
                "input_signature": signature,
            },
            {
                "name": "optimized_map_sum",
                "samples_ms": measure(optimized, (a, b, rows, n), warmup, iterations),
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
