#!/usr/bin/env python3
"""Which one figure of an invocation's samples varies least from process to process (issue 43).

Reads pytest-benchmark JSON files (one per process, from `invocation-figure.sh`) of the adoption
trial's suite (tests/fixtures/adoption/bench) and reduces each process's samples of every
benchmark by each estimator: the fastest call, the 5th, 10th and 25th percentiles, the median.
Prints, per estimator, what one side-by-side round's worsening carries: the standard deviation of
the difference of two processes' log figures (consecutive processes paired, so a slow drift
cancels), for `py_sort`'s speedup and optimized time and for `py_word_freq`'s time.

Usage: invocation-figure.py 'DIR/*.json'
"""
import glob
import json
import math
import sys


def quantile(xs, p):
    xs = sorted(xs)
    if p == 0:
        return xs[0]
    k = p * (len(xs) - 1)
    i = int(k)
    f = k - i
    return xs[i] * (1 - f) + xs[min(i + 1, len(xs) - 1)] * f


ESTIMATORS = {
    "fastest": lambda x: quantile(x, 0),
    "q05": lambda x: quantile(x, 0.05),
    "q10": lambda x: quantile(x, 0.10),
    "q25": lambda x: quantile(x, 0.25),
    "median": lambda x: quantile(x, 0.5),
}


def round_sd(values):
    """Standard deviation of one round's worsening (percent): consecutive processes paired."""
    d = [values[i + 1] - values[i] for i in range(0, len(values) - 1, 2)]
    return math.sqrt(sum(x * x for x in d) / len(d)) * 100 if d else float("nan")


def main():
    files = sorted(glob.glob(sys.argv[1]))
    rows = {k: ([], [], []) for k in ESTIMATORS}
    counts = None
    for f in files:
        doc = json.load(open(f))
        data = {b["name"]: b["stats"]["data"] for b in doc["benchmarks"]}
        base, opt = data["test_sort_insertion"], data["test_sort_builtin"]
        words = data.get("test_word_freq")
        counts = (len(base), len(opt))
        for k, fn in ESTIMATORS.items():
            rows[k][0].append(math.log(fn(base) / fn(opt)))
            rows[k][1].append(math.log(fn(opt)))
            if words:
                rows[k][2].append(math.log(fn(words)))
    if counts is None:
        sys.exit("no pytest-benchmark JSON matched %s" % sys.argv[1])
    print("%d processes; calls a variant in the last: insertion %d, builtin %d" % (len(files), *counts))
    print("%-8s %14s %14s %14s" % ("figure", "sort speedup", "sort time", "words time"))
    for k, (sp, op, wf) in rows.items():
        print("%-8s %13.2f%% %13.2f%% %13.2f%%" % (k, round_sd(sp), round_sd(op), round_sd(wf)))


if __name__ == "__main__":
    main()
