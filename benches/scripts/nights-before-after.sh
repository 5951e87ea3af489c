#!/usr/bin/env bash
# Two commits' nights side by side in one run (issue 37, items 5 and 6): a clone of this checkout
# at BEFORE and one at AFTER, each with its own `tier1-nightly` built once (release, the build
# cache of CARGO_TARGET_DIR, default this checkout's target/), then NIGHTS nights of the README's
# main command in each clone, alternated night by night (before first on odd nights, after first
# on even ones) so both see the same machine. Per night and side: exit, wall seconds, stderr
# lines, the load average before and after, and each target's phases from the JSON's timings.
# Night 2 is the newcomer's second night issue 37 sizes (<= 2 minutes on the 2-core VM, quiet).
#
#   benches/scripts/nights-before-after.sh BEFORE AFTER [NIGHTS] [OUT]
#
# BEFORE_BIN / AFTER_BIN: a release tier1-nightly already built from a clean checkout at that
# commit, used instead of building one. NIGHT_ARGS: extra options of every night (e.g.
# `--keep-work`, to read each comparison's rounds afterwards with sbs-rounds-levels.py).
#
# Quiet figures need a quiet machine: run it with nothing else on the VM and say so beside them;
# the load average of every night is printed beside its figures either way.
set -euo pipefail
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
before=$(git -C "$repo" rev-parse "$1")
after=$(git -C "$repo" rev-parse "$2")
nights=${3:-2}
out=${4:-$(mktemp -d)}
target=${CARGO_TARGET_DIR:-$repo/target}
mkdir -p "$out"
echo "out $out; nproc $(nproc); before $before; after $after"
for side in before after; do
    commit=${!side}
    git clone -q "$repo" "$out/$side"
    git -C "$out/$side" checkout -q -B main "$commit"
    prebuilt=$(if [ "$side" = before ]; then echo "${BEFORE_BIN:-}"; else echo "${AFTER_BIN:-}"; fi)
    if [ -n "$prebuilt" ]; then
        # A release tier1-nightly built from a clean checkout at that commit (its build records
        # the commit: the night then runs it as the current side, docs/tier1-run.md step 5b).
        cp "$prebuilt" "$out/$side.tier1-nightly"
    else
        (cd "$out/$side" && CARGO_TARGET_DIR=$target nice -n 10 cargo build -q --release --locked --bin tier1-nightly)
        cp "$target/release/tier1-nightly" "$out/$side.tier1-nightly"
    fi
done
night() { # side n
    local side=$1 n=$2 load0 start end code
    load0=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s.%N)
    set +e
    # shellcheck disable=SC2086 # NIGHT_ARGS: extra options, word-split on purpose
    (cd "$out/$side" && "$out/$side.tier1-nightly" ${NIGHT_ARGS:-} >"$out/$side-night$n.json" 2>"$out/$side-night$n.err")
    code=$?
    set -e
    end=$(date +%s.%N)
    printf '%s night %s: exit %s, %.1f s, stderr %s lines, load %s -> %s\n' "$side" "$n" "$code" \
        "$(echo "$end - $start" | bc)" "$(wc -l <"$out/$side-night$n.err")" "$load0" \
        "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out/nights.txt"
    python3 - "$out/$side-night$n.json" <<'PY' | tee -a "$out/nights.txt"
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"  (no JSON: {e})"); sys.exit(0)
for t in (doc.get("run") or {}).get("timings") or []:
    phases = " ".join(f"{k[:-2]} {v:.1f}" for k, v in t.items() if k.endswith("_s") and v is not None)
    print(f"  {t['key']}: {phases}")
PY
}
for n in $(seq 1 "$nights"); do
    if [ $((n % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for side in $order; do night "$side" "$n"; done
done
echo "figures in $out/nights.txt; each night's JSON and stderr beside it"
