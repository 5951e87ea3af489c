#!/usr/bin/env python3
"""Tables of `cargo bench --bench crowded`'s log (one JSON line per comparison): per arrangement
the verdicts, the `worse` rate with its one-sided 95 % Clopper-Pearson upper bound, the load, and
what the rounds say of the position in the round (current first minus anchor first) and of the
two sides (mean worsening with balanced orders).

    benches/scripts/crowded-report.py target/crowded/comparisons.jsonl
"""
import json
import math
import statistics
import sys


def cp_upper(k, n, conf=0.95):
    if n == 0 or k >= n:
        return 1.0
    def cdf(p):
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if cdf(mid) > 1 - conf:
            lo = mid
        else:
            hi = mid
    return hi


def mean_se(xs):
    if len(xs) < 2:
        return float("nan"), float("nan")
    m = statistics.fmean(xs)
    return m, statistics.stdev(xs) / math.sqrt(len(xs))


def pct(ms):
    return f"{ms[0] * 100:+.2f} % ±{ms[1] * 100:.2f}"


rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
groups = {}
for r in rows:
    groups.setdefault(r["arrangement"], []).append(r)
groups["all"] = rows
print("| arrangement | comparisons | worse | same | unknown | worse rate (95 % upper bound) | overloaded | load before (median, min-max) | rounds (median) | position effect, time | mean worsening, time | position effect, speedup | mean worsening, speedup |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
for name, rs in groups.items():
    n = len(rs)
    c = {v: sum(1 for r in rs if r["verdict"] == v) for v in ("worse", "same", "unknown")}
    loads = [r["load_before"] for r in rs]
    rounds = [p for r in rs for p in r["per_round"]]
    cells = []
    for k in (1, 2):
        cf = [p[k] for p in rounds if p[0]]
        af = [p[k] for p in rounds if not p[0]]
        (mc, sc), (ma, sa) = mean_se(cf), mean_se(af)
        cells += [pct((mc - ma, math.hypot(sc, sa))), pct(mean_se([p[k] for p in rounds]))]
    print(
        f"| {name} | {n} | {c['worse']} | {c['same']} | {c['unknown']} | "
        f"{c['worse'] / n * 100:.2f} % ({cp_upper(c['worse'], n) * 100:.2f} %) | "
        f"{sum(1 for r in rs if r['overloaded'])} | "
        f"{statistics.median(loads):.1f} ({min(loads):.1f}-{max(loads):.1f}) | "
        f"{statistics.median(r['rounds'] for r in rs):.0f} | " + " | ".join(cells) + " |"
    )
for r in rows:
    if r["verdict"] == "worse":
        print(f"- worse: #{r['i']} {r['arrangement']} {r['target']}: {r['reason']}")
