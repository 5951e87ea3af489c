#!/bin/bash
# Which one figure of an invocation's samples varies least from process to process (issue 43;
# docs/performance.md, "One figure of an invocation's samples"). Runs the adoption trial's
# pytest-benchmark suite (tests/fixtures/adoption/bench) as one side-by-side invocation does
# (--benchmark-min-rounds=3 --benchmark-max-time=0.125), 16 processes per condition: the CPU clock
# and the wall clock, quiet, beside one CPU-bound neighbour and beside four, twice; then
# invocation-figure.py on each condition's files.
# Usage: benches/scripts/invocation-figure.sh OUT_DIR   (pytest-benchmark on PATH:
#        source .ci/importers.sh; PATH=$PWD/target/importers-venv/bin:$PATH)
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
cd "$here/../../tests/fixtures/adoption"
pids=""
# The neighbours never outlive the script, also when a pytest run fails and it exits early.
trap '[ -n "$pids" ] && kill $pids 2>/dev/null; true' EXIT
condition() { # NAME HOGS [PYTEST FLAGS...]
  local name=$1 hogs=$2 i
  pids=""
  shift 2
  mkdir -p "$out/$name"
  for i in $(seq 1 "$hogs"); do (while :; do :; done) & pids="$pids $!"; done
  local l0
  l0=$(cut -d' ' -f1 /proc/loadavg)
  for i in $(seq 1 16); do
    python3 -m pytest -q -p no:cacheprovider bench "$@" --benchmark-min-rounds=3 \
      --benchmark-max-time=0.125 --benchmark-json="$out/$name/$i.json" >/dev/null \
      2>"$out/$name/pytest.err" || { cat "$out/$name/pytest.err" >&2; exit 1; }
  done
  echo "== $name: $hogs neighbours, load $l0 -> $(cut -d' ' -f1 /proc/loadavg)"
  [ -n "$pids" ] && kill $pids
  pids=""
  wait 2>/dev/null || true
  python3 "$here/invocation-figure.py" "$out/$name/*.json"
}
for rep in a b; do
  for hogs in 0 1 4; do
    condition "cpu$hogs$rep" "$hogs" --benchmark-timer=time.process_time
    condition "wall$hogs$rep" "$hogs"
  done
done
