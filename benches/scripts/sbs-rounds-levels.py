#!/usr/bin/env python3
"""What the recorded rounds of side-by-side comparisons decide at other interval levels (issue 37).

For each `<evidence>/<run>/sidebyside/<key>/rounds.json` under the given directories: the rounds'
worsenings (time: ln(current ms / anchor ms); speedup: ln(anchor / current)), their per-round
spread (median absolute worsening, the largest), and each metric's Hodges-Lehmann interval with
the exact signed-rank ranks (as `stats::hodges_lehmann`) at the level tier1 used (the schedule's
looks: 10, 15, 23, ... 200 plus one for the extension, two metrics: 1 - 0.05/20) and at the level
of a schedule capped at the rounds the budget buys (LOOKS looks, default 3). Same: both intervals
below ln 1.05. Read only; prints one line per comparison.

    benches/scripts/sbs-rounds-levels.py DIR... [--looks N]
"""
import json
import math
import pathlib
import sys


def crit(n, level):
    """1-based rank of the interval's ends: the largest T with P(W <= T) <= (1-level)/2, plus 1."""
    tail = (1.0 - level) / 2.0
    top = n * (n + 1) // 2
    counts = [0] * (top + 1)
    counts[0] = 1
    for r in range(1, n + 1):
        for s in range(top, r - 1, -1):
            counts[s] += counts[s - r]
    total = 2.0 ** n
    cum, t = 0.0, -1
    for s in range(top + 1):
        cum += counts[s] / total
        if cum <= tail:
            t = s
        else:
            break
    return t + 1 if t >= 0 else None


def hl(xs, level):
    c = crit(len(xs), level)
    if c is None or c < 1:
        return None
    w = sorted(0.5 * (a + b) for i, a in enumerate(xs) for b in xs[i:])
    m = len(w)
    mid = (w[(m - 1) // 2] + w[m // 2]) / 2
    return mid, w[c - 1], w[m - c]


def main():
    args = sys.argv[1:]
    looks = 3
    if "--looks" in args:
        i = args.index("--looks")
        looks = int(args[i + 1])
        del args[i:i + 2]
    t = math.log(1.05)
    level_used = 1 - 0.05 / (2 * 10)
    level_capped = 1 - 0.05 / (2 * looks)
    n_same = [0, 0]
    total = 0
    for d in args:
        for f in sorted(pathlib.Path(d).rglob("sidebyside/*/rounds.json")):
            doc = json.loads(f.read_text())
            rounds = doc["rounds"] if isinstance(doc, dict) else doc
            time = [math.log(r["current"]["optimized_ms"] / r["anchor"]["optimized_ms"]) for r in rounds]
            speed = [math.log(r["anchor"]["speedup"] / r["current"]["speedup"]) for r in rounds]
            if len(time) < 6:
                continue
            total += 1
            row = [f"{f.parent.parent.parent.name}/{f.parent.name}", f"n={len(time)}"]
            med = sorted(abs(x) for x in time)[len(time) // 2]
            row.append(f"time |d| median {100 * med:.1f} % max {100 * max(abs(x) for x in time):.1f} %")
            for i, level in enumerate((level_used, level_capped)):
                iv = [hl(time, level), hl(speed, level)]
                same = all(v is not None and v[2] < t for v in iv)
                n_same[i] += same
                ratios = " ".join(
                    f"[{math.exp(v[1]):.4f}, {math.exp(v[2]):.4f}]" if v else "-" for v in iv)
                row.append(f"L={level:.4f}: {'same' if same else 'open'} {ratios}")
            print("; ".join(row))
    print(f"{total} comparisons: same at {level_used:.4f}: {n_same[0]}; "
          f"at {level_capped:.4f} ({looks} looks): {n_same[1]}")


main()
