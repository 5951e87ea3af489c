#!/usr/bin/env bash
# Provide NVRTC (from PyPI's nvidia-cuda-nvrtc-cu12 wheel) for the kernel compile check.
# Usage: `source .ci/nvrtc.sh` (exports LD_LIBRARY_PATH and TIER1_NVRTC_REQUIRED=1), or run it
# to print the directory holding libnvrtc.so.12 on stdout.
# The venv lives under target/ (ignored, reused between runs); no GPU or driver is needed.
_tier1_nvrtc() {
  set -euo pipefail
  local root venv py libdir
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  venv="$root/target/nvrtc-venv"
  if [ ! -x "$venv/bin/python" ]; then
    echo "nvrtc.sh: creating $venv" >&2
    python3 -m venv "$venv" >&2
  fi
  py="$venv/bin/python"
  if ! "$py" -c 'import nvidia.cuda_nvrtc' 2>/dev/null; then
    echo "nvrtc.sh: pip install nvidia-cuda-nvrtc-cu12" >&2
    "$py" -m pip install --quiet --disable-pip-version-check 'nvidia-cuda-nvrtc-cu12>=12.8,<13' >&2
  fi
  libdir="$("$py" - <<'PY'
import pathlib, nvidia.cuda_nvrtc as m
base = pathlib.Path(list(m.__path__)[0]) / "lib"
hits = sorted(base.glob("libnvrtc.so.12*"))
if not hits:
    raise SystemExit(f"nvrtc.sh: no libnvrtc.so.12 under {base}")
print(base)
PY
)"
  if [ ! -e "$libdir/libnvrtc.so.12" ]; then
    echo "nvrtc.sh: expected $libdir/libnvrtc.so.12, found: $(ls "$libdir")" >&2
    return 1
  fi
  printf '%s\n' "$libdir"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  _tier1_nvrtc
else
  _tier1_nvrtc_dir="$( (_tier1_nvrtc) )" || { echo "nvrtc.sh: NVRTC setup failed" >&2; return 1; }
  export LD_LIBRARY_PATH="${_tier1_nvrtc_dir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export TIER1_NVRTC_REQUIRED=1
  echo "nvrtc.sh: NVRTC at ${_tier1_nvrtc_dir} (LD_LIBRARY_PATH set, TIER1_NVRTC_REQUIRED=1)" >&2
  unset _tier1_nvrtc_dir
fi
