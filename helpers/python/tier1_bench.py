"""tier1_bench: write a tier1 command target (docs/command-targets.md) by giving only its setup,
its variants and their outputs. Standard library only; copy this file next to your benchmarks.

    import tier1_bench

    def setup(ctx):                      # ctx.shapes, ctx.seed, ctx.rng (random.Random(seed))
        n = ctx.shape("n", 4096)
        x = [ctx.rng.uniform(-1, 1) for _ in range(n)]
        ctx.input("x", [n], "f64")       # the input signature tier1 checks across variants
        return x

    tier1_bench.main(
        setup,
        {"baseline": lambda x: [v * 2.0 for v in x],           # the reference
         "optimized_map": lambda x: list(map((2.0).__mul__, x))},
        baseline_file="bench/scale.py",
    )

A variant takes what `setup` returned and returns its output: a number, a (nested) list or tuple
of numbers, or anything with `.tolist()` (numpy, torch on the CPU). Before timing, every optimized
variant's output is compared with the baseline's elementwise, `|opt - base| <= atol + rtol * |base|`
with the target's TIER1_RTOL and TIER1_ATOL. Then each variant is warmed up (TIER1_WARMUP runs),
its executions are batched until one batch lasts TIER1_MIN_SAMPLE_MS, and TIER1_ITERATIONS rounds
time every variant once in an order shuffled by TIER1_SEED and TIER1_PROCESS; one
`tier1.command_result.v1` document is printed on stdout. With TIER1_CLOCK=cpu (the profile's
`clock: cpu`) a batch is timed on the process's CPU time (`time.process_time`: its own work, not
the time slices a busy neighbour takes), else on wall time; `sync=` always times wall time (the
device's work is not this process's CPU time). One variant alone (`{"baseline": f}`)
is a single benchmark (`optimization_goal: time`). For GPU code pass `sync=` (for example
`torch.cuda.synchronize`): it runs after every batch, inside the timed region.
"""
import json
import math
import os
import random
import sys
import time

SCHEMA = "tier1.command_result.v1"
MAX_REPS = 1 << 20


class Context:
    """What `setup` gets: the profile's shapes, the seed, a seeded RNG, and the input signature."""

    def __init__(self, env):
        self.seed = int(env.get("TIER1_SEED", "42"))
        self.shapes = json.loads(env.get("TIER1_SHAPES", "") or "{}")
        self.rng = random.Random(self.seed)
        self.inputs = []

    def shape(self, name, default):
        """The profile's shape parameter `name` (an int), else `default`."""
        return int(self.shapes.get(name, default))

    def input(self, name, shape, dtype):
        """Declare an input tensor of the signature (name, shape, dtype such as "f32")."""
        self.inputs.append({"name": name, "shape": [int(d) for d in shape], "dtype": str(dtype)})


def flatten(output):
    """The numbers of an output, in order (nested lists and tuples, `.tolist()`, scalars)."""
    if hasattr(output, "tolist"):
        output = output.tolist()
    if isinstance(output, (list, tuple)):
        out = []
        for item in output:
            out.extend(flatten(item))
        return out
    return [float(output)]


def compare(base, got, rtol, atol):
    """The verification record of `got` against `base` (flattened outputs)."""
    mismatches, max_abs, max_rel = 0, 0.0, 0.0
    if len(base) != len(got):
        return {"passed": False, "elements": len(base), "mismatches": len(base), "max_abs_err": 0.0,
                "max_rel_err": 0.0,
                "message": "output has %d elements, the baseline's %d" % (len(got), len(base))}
    for b, g in zip(base, got):
        err = abs(g - b)
        if not math.isfinite(err):
            mismatches += 1
            continue
        if err > atol + rtol * abs(b):
            mismatches += 1
        max_abs = max(max_abs, err)
        if b != 0.0:
            max_rel = max(max_rel, err / abs(b))
    return {"passed": mismatches == 0, "elements": len(base), "mismatches": mismatches,
            "max_abs_err": max_abs, "max_rel_err": max_rel}


def clock(env, sync=None):
    """The clock of a batch: process CPU time under TIER1_CLOCK=cpu without `sync`, else wall."""
    if env.get("TIER1_CLOCK", "wall") == "cpu" and sync is None:
        return time.process_time
    return time.perf_counter


def _batch_ms(fn, arg, reps, sync, now=time.perf_counter):
    t0 = now()
    for _ in range(reps):
        fn(arg)
    if sync is not None:
        sync()
    return (now() - t0) * 1e3


def calibrate(fn, arg, warmup, min_sample_ms, sync=None, now=time.perf_counter):
    """Warm up, then the number of executions whose batch lasts at least `min_sample_ms`."""
    for _ in range(warmup):
        fn(arg)
    if sync is not None:
        sync()
    reps = 1
    while True:
        t = _batch_ms(fn, arg, reps, sync, now)
        if t >= min_sample_ms or reps >= MAX_REPS:
            return reps
        if t < min_sample_ms / 10:
            reps *= 10
        else:
            reps = max(reps + 1, int(reps * 1.4 * min_sample_ms / max(t, 1e-9)) + 1)
        reps = min(reps, MAX_REPS)


def measure(fns, arg, warmup, rounds, min_sample_ms, order_seed, sync=None, now=time.perf_counter):
    """Per-execution samples (ms) of each function, one per round, in a shuffled order per round."""
    reps = [calibrate(fn, arg, warmup, min_sample_ms, sync, now) for fn in fns]
    order = list(range(len(fns)))
    shuffle = random.Random(order_seed)
    samples = [[] for _ in fns]
    for _ in range(rounds):
        shuffle.shuffle(order)
        for i in order:
            samples[i].append(_batch_ms(fns[i], arg, reps[i], sync, now) / reps[i])
    return samples


def run(setup, variants, baseline_file=None, work=None, sync=None, env=None):
    """The result document (a dict) of `variants` ({name: fn}, "baseline" first) on setup's input."""
    env = os.environ if env is None else env
    names = list(variants)
    if not names or names[0] != "baseline":
        raise ValueError("variants: the first must be named 'baseline', found %r" % names[:1])
    ctx = Context(env)
    arg = setup(ctx)
    rtol = float(env.get("TIER1_RTOL", "0"))
    atol = float(env.get("TIER1_ATOL", "0"))
    fns = [variants[n] for n in names]
    want = flatten(fns[0](arg))
    checks = [None] + [compare(want, flatten(fn(arg)), rtol, atol) for fn in fns[1:]]
    process = int(env.get("TIER1_PROCESS", "0"))
    samples = measure(
        fns, arg,
        warmup=int(env.get("TIER1_WARMUP", "5")),
        rounds=int(env.get("TIER1_ITERATIONS", "10")),
        min_sample_ms=float(env.get("TIER1_MIN_SAMPLE_MS", "1")),
        order_seed=ctx.seed * 1000 + process,
        sync=sync,
        now=clock(env, sync),
    )
    signature = {"seed": ctx.seed, "inputs": ctx.inputs}
    doc = {"schema": SCHEMA, "variants": []}
    if baseline_file is not None:
        doc["baseline_file"] = baseline_file
    if work is not None:
        doc["work"] = {k: float(v) for k, v in work.items()}
    for name, s, check in zip(names, samples, checks):
        v = {"name": name, "samples_ms": s, "input_signature": signature}
        if check is not None:
            v["verification"] = check
        doc["variants"].append(v)
    return doc


def main(setup, variants, baseline_file=None, work=None, sync=None):
    """Run the target and print its document on stdout (what tier1 reads)."""
    doc = run(setup, variants, baseline_file=baseline_file, work=work, sync=sync)
    sys.stdout.write(json.dumps(doc, allow_nan=False) + "\n")
    sys.stdout.flush()
