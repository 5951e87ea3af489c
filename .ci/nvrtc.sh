#!/usr/bin/env bash
# Provide NVRTC (libnvrtc.so.12) for tier1's CUDA backend and the kernel compile check: the system's
# when the dynamic linker already knows it (ldconfig), else exactly the wheel pinned with its hash in
# .ci/nvrtc-requirements.txt, installed with --require-hashes into a venv at $TIER1_NVRTC_VENV
# (default target/nvrtc-venv, ignored) and reused while it holds the pinned version.
# Usage: `source .ci/nvrtc.sh` (exports LD_LIBRARY_PATH and TIER1_NVRTC_REQUIRED=1), or run it to
# print the directory holding libnvrtc.so.12 on stdout (nothing when the system provides it).
# No GPU or driver is needed.
_tier1_nvrtc() {
  set -euo pipefail
  local root req pin venv py have libdir
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  if ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so\.12'; then
    echo "nvrtc.sh: the system provides libnvrtc.so.12 (ldconfig)" >&2
    return 0
  fi
  req="$root/.ci/nvrtc-requirements.txt"
  pin="$(sed -n 's/^nvidia-cuda-nvrtc-cu12==\([^ ]*\).*/\1/p' "$req")"
  if [ -z "$pin" ]; then
    echo "nvrtc.sh: $req: expected a line nvidia-cuda-nvrtc-cu12==<version>, found none" >&2
    return 1
  fi
  venv="${TIER1_NVRTC_VENV:-$root/target/nvrtc-venv}"
  if [ ! -x "$venv/bin/python" ]; then
    echo "nvrtc.sh: creating $venv" >&2
    python3 -m venv "$venv" >&2
  fi
  py="$venv/bin/python"
  have="$("$py" -c 'import importlib.metadata as m; print(m.version("nvidia-cuda-nvrtc-cu12"))' 2>/dev/null || true)"
  if [ "$have" != "$pin" ]; then
    echo "nvrtc.sh: installing nvidia-cuda-nvrtc-cu12==$pin (found: ${have:-none}), hash-checked" >&2
    "$py" -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      --require-hashes -r "$req" >&2
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
  if [ -n "${_tier1_nvrtc_dir}" ]; then
    export LD_LIBRARY_PATH="${_tier1_nvrtc_dir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  export TIER1_NVRTC_REQUIRED=1
  echo "nvrtc.sh: NVRTC at ${_tier1_nvrtc_dir:-the system library path} (TIER1_NVRTC_REQUIRED=1)" >&2
  unset _tier1_nvrtc_dir
fi
