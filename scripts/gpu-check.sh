#!/usr/bin/env bash
# GPU check for the CUDA backend: run on a machine with an NVIDIA GPU and driver.
# 1. probes the driver (nvidia-smi) and NVRTC (.ci/nvrtc.sh provides libnvrtc.so.12 from PyPI);
# 2. builds release;
# 3. runs the CUDA tests with TIER1_NVRTC_REQUIRED=1 and TIER1_GPU_TESTS=1;
# 4. runs the `minimal` suite once on the cuda backend and writes a results table
#    (GPU model, per-target baseline/optimized time, speedup, fraction of peak) to
#    ${TIER1_GPU_CHECK_OUT:-target/gpu-check}/results.md.
# Exits non-zero on any failure, naming the step.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${TIER1_GPU_CHECK_OUT:-target/gpu-check}"
mkdir -p "$out"
step() { echo "== gpu-check: $*" >&2; }
die() { echo "gpu-check: FAILED: $*" >&2; exit 1; }

step "driver"
command -v nvidia-smi >/dev/null || die "nvidia-smi not found: no NVIDIA driver on this machine"
gpu="$(nvidia-smi --query-gpu=name,uuid,driver_version,compute_cap --format=csv,noheader | head -n1)" \
  || die "nvidia-smi cannot query the GPU"
[ -n "$gpu" ] || die "nvidia-smi lists no GPU"
echo "GPU: $gpu" >&2

step "NVRTC"
if ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so\.12'; then
  # shellcheck source=../.ci/nvrtc.sh
  source .ci/nvrtc.sh || die "NVRTC setup (.ci/nvrtc.sh) failed"
fi
export TIER1_NVRTC_REQUIRED=1 TIER1_GPU_TESTS=1

step "release build"
cargo build --release --locked --all-targets || die "cargo build --release"

step "CUDA tests"
cargo test --release --locked --test 'cuda_*' 2>&1 | tee "$out/tests.log" \
  || die "CUDA tests (log: $out/tests.log)"
cargo test --release --locked -p tier1 --lib bench::cuda 2>&1 | tee -a "$out/tests.log" \
  || die "bench::cuda unit tests (log: $out/tests.log)"

step "minimal suite on the cuda backend"
run_bin=target/release/tier1-run
"$run_bin" --help 2>/dev/null | grep -q -- '--backend' \
  || die "$run_bin has no --backend option yet: the harness run of the cuda backend is not wired (see docs/cuda-backend.md)"
"$run_bin" --profile minimal --backend cuda --output "$out/run" 2>"$out/run.log" >"$out/run.json" \
  || die "tier1-run --profile minimal --backend cuda (log: $out/run.log)"

step "results table"
python3 - "$out/run.json" "$gpu" >"$out/results.md" <<'PY' || die "results table from $out/run.json"
import json, sys
run = json.load(open(sys.argv[1]))
print(f"GPU: {sys.argv[2]}\n")
print("| target | status | baseline ms | optimized ms | speedup | fraction of peak |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
bad = 0
for t in run.get("targets", []):
    peak = t.get("fraction_of_peak")
    print(f"| {t['key']} | {t['status']} | {t.get('baseline_time_ms', float('nan')):.3f} | "
          f"{t.get('best_optimized_time_ms', float('nan')):.3f} | {t.get('best_speedup', float('nan')):.2f} | "
          f"{'' if peak is None else f'{peak:.1%}'} |")
    bad += t.get("status") != "succeeded"
sys.exit(1 if bad or not run.get("targets") else 0)
PY
cat "$out/results.md"
step "passed"
