#!/usr/bin/env bash
# The benchmarking tools of the importer tests (tests/it/importers.rs): hyperfine and Google
# Benchmark's C++ library (libbenchmark-dev) from Debian, pytest-benchmark and google-benchmark
# (the Python bindings) pinned in .ci/importers-requirements.txt, in a venv at
# $TIER1_IMPORTERS_VENV (default target/importers-venv, ignored) reused while it holds the pins.
# Usage: `source .ci/importers.sh` (exports TIER1_IMPORTERS_PYTHON and TIER1_IMPORTERS_REQUIRED=1,
# so the tests fail rather than skip when a tool is missing).
_tier1_importers() {
  set -euo pipefail
  local root req venv py sudo
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  if ! command -v hyperfine >/dev/null 2>&1 || [ ! -e /usr/include/benchmark/benchmark.h ] \
     || ! command -v c++ >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      hyperfine libbenchmark-dev g++ >&2
  fi
  req="$root/.ci/importers-requirements.txt"
  venv="${TIER1_IMPORTERS_VENV:-$root/target/importers-venv}"
  if [ ! -x "$venv/bin/python" ]; then
    echo "importers.sh: creating $venv" >&2
    python3 -m venv "$venv" >&2
  fi
  py="$venv/bin/python"
  if ! "$py" - "$req" <<'PY' >&2
import importlib.metadata as m, sys
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if "==" not in line:
        continue
    name, want = line.split("==")
    try:
        if m.version(name) != want:
            sys.exit(1)
    except m.PackageNotFoundError:
        sys.exit(1)
PY
  then
    echo "importers.sh: installing $(grep -c '==' "$req") pinned packages" >&2
    "$py" -m pip install --quiet --disable-pip-version-check --only-binary=:all: -r "$req" >&2
  fi
  printf '%s\n' "$py"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  _tier1_importers
else
  _tier1_importers_py="$( (_tier1_importers) )" || { echo "importers.sh: setup failed" >&2; return 1; }
  export TIER1_IMPORTERS_PYTHON="${_tier1_importers_py}"
  export TIER1_IMPORTERS_REQUIRED=1
  echo "importers.sh: hyperfine, libbenchmark-dev, $("$TIER1_IMPORTERS_PYTHON" -m pytest --version 2>&1) (TIER1_IMPORTERS_REQUIRED=1)" >&2
  unset _tier1_importers_py
fi
