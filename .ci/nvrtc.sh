#!/usr/bin/env bash
# Provide NVRTC (libnvrtc.so.12) for tier1's CUDA backend and the kernel compile check: the system's
# when the dynamic linker already knows it (ldconfig), else exactly the wheel pinned with its hash in
# .ci/nvrtc-requirements.txt. The wheel is cached in $TIER1_NVRTC_CACHE (default target/nvrtc-cache;
# in the workflows the runner's tool cache) and checked on EVERY use, never trusted by its version
# string: a cached wheel whose SHA-256 is not a pinned one is discarded, the pinned one is
# downloaded with `pip download --require-hashes` when absent, every file of the library directory is
# checked against the wheel's RECORD, and the library is extracted afresh into $TIER1_NVRTC_DIR
# (default target/nvrtc-lib; in the workflows a directory of the job's temp). So a library swapped
# in a shared cache (a pull request's job on the same runner) never reaches LD_LIBRARY_PATH.
# Usage: `source .ci/nvrtc.sh` (exports LD_LIBRARY_PATH and TIER1_NVRTC_REQUIRED=1), or run it to
# print the directory holding libnvrtc.so.12 on stdout (nothing when the system provides it).
# No GPU or driver is needed.
_tier1_nvrtc() {
  set -euo pipefail
  local root req pin hashes cache dir wheel f sum tmp
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
  hashes="$(grep -o 'sha256:[0-9a-f]\{64\}' "$req" | cut -d: -f2)"
  if [ -z "$hashes" ]; then
    echo "nvrtc.sh: $req: expected --hash=sha256:<64 hex> for nvidia-cuda-nvrtc-cu12==$pin, found none" >&2
    return 1
  fi
  cache="${TIER1_NVRTC_CACHE:-$root/target/nvrtc-cache}"
  dir="${TIER1_NVRTC_DIR:-$root/target/nvrtc-lib}"
  mkdir -p "$cache"
  # The cached wheel of the pinned hash, if any; every other wheel of the package is discarded.
  _tier1_nvrtc_pinned_wheel() {
    wheel=""
    for f in "$cache"/nvidia_cuda_nvrtc_cu12-*.whl; do
      [ -e "$f" ] || continue
      sum="$(sha256sum "$f" | cut -d' ' -f1)"
      if grep -qxF "$sum" <<<"$hashes"; then
        wheel="$f"
      else
        echo "nvrtc.sh: discarding $(basename "$f"): its sha256 $sum is not pinned in $req" >&2
        rm -f "$f"
      fi
    done
  }
  _tier1_nvrtc_pinned_wheel
  if [ -z "$wheel" ]; then
    echo "nvrtc.sh: downloading nvidia-cuda-nvrtc-cu12==$pin into $cache, hash-checked" >&2
    tmp="$(mktemp -d)"
    python3 -m venv "$tmp/venv" >&2
    if ! "$tmp/venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: --require-hashes -r "$req" --dest "$cache" >&2; then
      rm -rf "$tmp"
      echo "nvrtc.sh: downloading the pinned wheel failed" >&2
      return 1
    fi
    rm -rf "$tmp"
    _tier1_nvrtc_pinned_wheel
    if [ -z "$wheel" ]; then
      echo "nvrtc.sh: expected the pinned wheel in $cache after the download, found none" >&2
      return 1
    fi
  fi
  # Extract nvidia/cuda_nvrtc/lib/* afresh, each file checked against the wheel's RECORD
  # (isolated python: nothing of the cache or the checkout is imported).
  rm -rf "$dir" "$dir.partial"
  python3 -I - "$wheel" "$dir" <<'PY' >&2
import base64, hashlib, os, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
prefix = "nvidia/cuda_nvrtc/lib/"
with zipfile.ZipFile(wheel) as z:
    records = [n for n in z.namelist() if n.endswith(".dist-info/RECORD")]
    if len(records) != 1:
        sys.exit(f"nvrtc.sh: {os.path.basename(wheel)}: expected one .dist-info/RECORD, found {len(records)}")
    record = {}
    for line in z.read(records[0]).decode().splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[1].startswith("sha256="):
            record[parts[0]] = parts[1][len("sha256="):]
    members = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not members:
        sys.exit(f"nvrtc.sh: {os.path.basename(wheel)}: no files under {prefix}")
    staged = dest + ".partial"
    os.makedirs(staged)
    for name in members:
        base = name[len(prefix):]
        if "/" in base or base in ("", ".", ".."):
            sys.exit(f"nvrtc.sh: {name}: unexpected path in the wheel")
        body = z.read(name)
        found = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        if record.get(name) != found:
            sys.exit(f"nvrtc.sh: {name}: its sha256 differs from the wheel's RECORD (expected {record.get(name)}, found {found})")
        with open(os.path.join(staged, base), "wb") as out:
            out.write(body)
    os.rename(staged, dest)
print(f"nvrtc.sh: {len(members)} file(s) of {os.path.basename(wheel)} checked and extracted into {dest}")
PY
  if [ ! -e "$dir/libnvrtc.so.12" ]; then
    echo "nvrtc.sh: expected $dir/libnvrtc.so.12, found: $(ls "$dir" 2>/dev/null)" >&2
    return 1
  fi
  printf '%s\n' "$dir"
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
