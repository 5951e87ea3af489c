#!/usr/bin/env bash
# A newcomer's first three nights (issue 37, item 5): a fresh clone of REPO (default: this
# checkout's repository at its HEAD), then the README's main command three times, each night's
# JSON, stderr and wall time kept under OUT. Night 2 is the one issue 37 sizes (<= 2 minutes on
# the 2-core VM): it should build nothing for side by side (the running tier1-nightly is the
# checkout's build, and the anchor's commit is the current one).
#
#   benches/scripts/newcomer-nights.sh [REPO] [OUT]
#
# Quiet figures need a quiet machine: run it with nothing else on the VM and say so beside them.
set -euo pipefail
repo=${1:-$(git -C "$(dirname "$0")" rev-parse --show-toplevel)}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
git clone -q "$repo" "$out/tier1"
cd "$out/tier1"
echo "clone of $(git rev-parse --short HEAD) in $out/tier1; nproc $(nproc)"
for n in 1 2 3; do
    echo "night $n: $(uptime)"
    start=$(date +%s.%N)
    set +e
    cargo run --release --locked --bin tier1-nightly >"$out/night$n.json" 2>"$out/night$n.err"
    code=$?
    set -e
    end=$(date +%s.%N)
    printf 'night %s: exit %s, %.1f s wall (with any build), stderr %s lines\n' \
        "$n" "$code" "$(echo "$end - $start" | bc)" "$(wc -l <"$out/night$n.err")"
    grep -E "side by side|building the|current side" "$out/night$n.err" | head -5 || true
    tail -12 "$out/night$n.err"
done
