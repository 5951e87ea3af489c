#!/usr/bin/env python3
"""A tier1 command target written with the protocol helper (helpers/python/tier1_bench.py): dot
products of seeded vectors, a Python loop (baseline) versus map/sum (optimized). The target gives
only its setup, its variants and their outputs; the helper verifies the outputs, calibrates,
times the variants in shuffled rounds and prints the tier1.command_result.v1 document. See
docs/command-targets.md.

    TIER1_SHAPES='{"n": 512, "rows": 4}' TIER1_ITERATIONS=3 python3 examples/command_target.py
"""
import operator
import os
import sys

# The helper ships beside the examples (the repository and the release tarball alike); a project
# copies tier1_bench.py next to its own benchmarks instead.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers", "python"))
import tier1_bench  # noqa: E402


def setup(ctx):
    n, rows = ctx.shape("n", 2048), ctx.shape("rows", 16)
    a = [ctx.rng.uniform(-1.0, 1.0) for _ in range(rows * n)]
    b = [ctx.rng.uniform(-1.0, 1.0) for _ in range(n)]
    ctx.input("a", [rows, n], "f64")
    ctx.input("b", [n], "f64")
    return a, b, rows, n


def baseline(args):
    a, b, rows, n = args
    out = []
    for r in range(rows):
        s = 0.0
        for i in range(n):
            s += a[r * n + i] * b[i]
        out.append(s)
    return out


def optimized_map_sum(args):
    a, b, rows, n = args
    return [sum(map(operator.mul, a[r * n:(r + 1) * n], b)) for r in range(rows)]


if __name__ == "__main__":
    shapes = tier1_bench.Context(os.environ)
    n, rows = shapes.shape("n", 2048), shapes.shape("rows", 16)
    tier1_bench.main(
        setup,
        {"baseline": baseline, "optimized_map_sum": optimized_map_sum},
        baseline_file="examples/command_target.py",
        work={"flops": 2.0 * rows * n, "bytes": 8.0 * (rows * n + n + rows)},
    )
