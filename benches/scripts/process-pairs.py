#!/usr/bin/env python3
"""How much two processes of the same Google Benchmark build differ when run back to back, as the
two invocations of a side-by-side round run them (docs/performance.md, "A command pair the history
test is blind to"). Usage:

    make -C DIR                       # e.g. a copy of tests/fixtures/adoption (build/primes)
    python3 benches/scripts/process-pairs.py DIR/build/primes BM_PrimesTrial BM_PrimesSieve [SECONDS]

Part 1, for SECONDS (default 150): rounds of two invocations at three repetition lengths drawn at
random (`--benchmark_repetitions=3 --benchmark_min_time=S`, each invocation's figure the fastest
repetition), printing per length the robust SD (1.4826 MAD) and SD of the log difference of the
optimized benchmark's time and of the speedup, and the share of rounds differing by more than 10 %.
Part 2: 120 single invocations of the optimized benchmark, address-space randomization on or off
(`setarch -R`) drawn at random, printing how many were slower than 1.2x the fastest seen."""
import json
import math
import random
import statistics as st
import subprocess
import sys
import time


def invoke(binary, names, min_time, prefix=()):
    out = subprocess.run(
        list(prefix) + [binary, "--benchmark_format=json", "--benchmark_repetitions=3",
                        "--benchmark_min_time=%g" % min_time,
                        "--benchmark_filter=^(%s)$" % "|".join(names)],
        capture_output=True, text=True, check=True).stdout
    fastest = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") == "iteration":
            fastest[b["run_name"]] = min(fastest.get(b["run_name"], math.inf), b["cpu_time"])
    return [fastest[n] for n in names]


def main():
    binary, base, opt = sys.argv[1:4]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 150.0
    lengths = [0.0417, 0.0139, 0.005]
    diffs = {c: ([], []) for c in lengths}
    t0 = time.time()
    while time.time() - t0 < seconds:
        c = random.choice(lengths)
        (b1, o1), (b2, o2) = invoke(binary, [base, opt], c), invoke(binary, [base, opt], c)
        diffs[c][0].append(math.log(o1 / o2))
        diffs[c][1].append(math.log((b1 / o1) / (b2 / o2)))
    for c in lengths:
        for name, xs in zip(("time", "speedup"), diffs[c]):
            m = st.median(xs)
            mad = st.median([abs(x - m) for x in xs]) * 1.4826
            big = sum(abs(x) > math.log(1.1) for x in xs) / len(xs)
            print("min_time %.4f s  %-7s rounds %3d  robust SD %.1f %%  SD %.1f %%  |diff| > 10 %%: %.0f %%"
                  % (c, name, len(xs), 100 * mad, 100 * st.pstdev(xs), 100 * big))
    runs = {"on": [], "off": []}
    for _ in range(120):
        k = random.choice(["on", "off"])
        runs[k].append(invoke(binary, [opt], 0.0139, [] if k == "on" else ["setarch", "-R"])[0])
    fastest = min(min(v) for v in runs.values() if v)
    for k, xs in runs.items():
        slow = sum(x > 1.2 * fastest for x in xs)
        print("randomization %-3s: %d processes, %d slower than 1.2x the fastest (%.0f %%)"
              % (k, len(xs), slow, 100 * slow / max(1, len(xs))))


if __name__ == "__main__":
    main()
