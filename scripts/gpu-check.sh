#!/usr/bin/env bash
# GPU check for the CUDA backend: run on a machine with an NVIDIA GPU and driver.
# Usage: scripts/gpu-check.sh [--bin-dir DIR] [--no-suite]
# 1. probes the driver (nvidia-smi) and NVRTC (libnvrtc.so.12 known to ldconfig or in a directory of
#    LD_LIBRARY_PATH; otherwise .ci/nvrtc.sh provides the pinned wheel);
# 2. builds release and runs the CUDA tests (the device test is #[ignore]d elsewhere: --include-ignored)
#    with TIER1_NVRTC_REQUIRED=1;
# 3. runs `tier1-run --profile minimal` once (the profile selects the cuda backend) and writes a
#    results table (GPU model, per-target baseline/optimized ms, speedup, fraction of peak) to
#    ${TIER1_GPU_CHECK_OUT:-target/gpu-check}/results.md.
# --bin-dir DIR uses the tier1 binaries already built in DIR: no build, no cargo test, no network
#    (NVRTC must already be on the library path; `bash .ci/nvrtc.sh` prints its directory).
# --no-suite skips step 3: the canonical workflow runs the suite once in its own step, where a failing
#    target is a recorded result, not a broken runner. The workflow passes both: probes only.
# Exits 1 on any failure, naming the step; 2 on a bad command line.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${TIER1_GPU_CHECK_OUT:-target/gpu-check}"
step() { echo "== gpu-check: $*" >&2; }
die() { echo "gpu-check: FAILED: $*" >&2; exit 1; }
usage() { echo "gpu-check: $1 (usage: scripts/gpu-check.sh [--bin-dir DIR] [--no-suite])" >&2; exit 2; }

bin_dir=""
suite=true
while (($#)); do
  case "$1" in
    --bin-dir) [[ $# -ge 2 && -n "$2" ]] || usage "--bin-dir needs a directory"; bin_dir="$2"; shift ;;
    --no-suite) suite=false ;;
    *) usage "unknown argument '$1'" ;;
  esac
  shift
done
if [[ -n "$bin_dir" && ! -x "$bin_dir/tier1-run" ]]; then
  die "--bin-dir $bin_dir: expected the built binaries there, found no executable $bin_dir/tier1-run"
fi

step "driver"
command -v nvidia-smi >/dev/null || die "nvidia-smi not found: no NVIDIA driver on this machine"
gpus="$(nvidia-smi --query-gpu=name,uuid,driver_version,compute_cap --format=csv,noheader)" \
  || die "nvidia-smi cannot query the GPU"
gpu="${gpus%%$'\n'*}"
[ -n "$gpu" ] || die "nvidia-smi lists no GPU"
echo "GPU: $gpu" >&2

step "NVRTC"
nvrtc_on_library_path() {
  ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so\.12' && return 0
  local dir
  IFS=: read -ra dirs <<< "${LD_LIBRARY_PATH:-}"
  for dir in "${dirs[@]}"; do
    [[ -n "$dir" && -e "$dir/libnvrtc.so.12" ]] && return 0
  done
  return 1
}
if ! nvrtc_on_library_path; then
  [[ -z "$bin_dir" ]] || die "NVRTC: libnvrtc.so.12 is neither known to ldconfig nor in LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}; provide it before this check (bash .ci/nvrtc.sh prints its directory)"
  # shellcheck source=../.ci/nvrtc.sh
  source .ci/nvrtc.sh || die "NVRTC setup (.ci/nvrtc.sh) failed"
fi
echo "NVRTC: libnvrtc.so.12 found" >&2
export TIER1_NVRTC_REQUIRED=1

mkdir -p "$out"
if [[ -z "$bin_dir" ]]; then
  step "release build"
  cargo build --release --locked --all-targets || die "cargo build --release"

  step "CUDA tests"
  cargo test --release --locked --test it -- --include-ignored cuda_kernels:: 2>&1 | tee "$out/tests.log" \
    || die "CUDA tests (log: $out/tests.log)"
  cargo test --release --locked -p tier1 --lib bench::cuda 2>&1 | tee -a "$out/tests.log" \
    || die "bench::cuda unit tests (log: $out/tests.log)"
else
  step "release build and CUDA tests skipped: binaries from $bin_dir"
fi

if ! $suite; then
  step "passed (suite skipped: --no-suite)"
  exit 0
fi

step "minimal suite on the cuda backend (the profile's backend selects CUDA)"
run_bin="${bin_dir:-target/release}/tier1-run"
"$run_bin" --profile minimal --history-root "$out/history" --evidence-root "$out/runs" \
  2>"$out/run.log" >"$out/run.json" \
  || die "tier1-run --profile minimal (log: $out/run.log)"
results="$(find "$out/runs" -name benchmark_test_results.json | head -n1)"
[ -n "$results" ] || die "no benchmark_test_results.json under $out/runs"

step "results table"
# Peaks per GPU (dense, no sparsity), from NVIDIA's datasheets: H100 SXM and H200 SXM:
# FP32 67 TFLOP/s, BF16 tensor 989 TFLOP/s, memory 3.35 TB/s (H100, HBM3) and 4.8 TB/s (H200,
# HBM3e); B200 (HGX B200): FP32 75 TFLOP/s, BF16 tensor 2250 TFLOP/s, memory 8 TB/s.
# Each target's results name the peak it is measured against (`peak_class`, from its line in the
# harness's table of targets, docs/formats.md): fp32 or bf16_tensor (FLOP/s), memory (bytes/s).
# A target without one (a command target, an older file) shows its rate and no fraction.
python3 - "$results" "$gpu" >"$out/results.md" <<'PY' || die "results table from $results"
import json, sys
run = json.load(open(sys.argv[1]))
gpu = sys.argv[2]
PEAKS = {"H100": (67e12, 989e12, 3.35e12), "H200": (67e12, 989e12, 4.8e12), "B200": (75e12, 2250e12, 8e12)}
CLASS = {"fp32": ("flops", 0), "bf16_tensor": ("flops", 1), "memory": ("bytes", 2)}
peak = next((v for k, v in PEAKS.items() if k in gpu), None)
print(f"GPU: {gpu}\n")
print("| target | status | baseline ms | optimized ms | speedup | achieved | fraction of peak |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
bad = 0
for t in run.get("targets", []):
    m = t.get("metrics", {})
    opt = [v["stats"]["median_ms"] for v in t.get("variants", []) if v.get("role") == "optimized"]
    best = min(opt) if opt else None
    work = t.get("work") or {}
    achieved, frac = "", ""
    cls = CLASS.get(t.get("peak_class"))
    unit = cls[0] if cls else ("flops" if work.get("flops") else "bytes")
    if best and work.get(unit):
        rate = work[unit] / (best * 1e-3)
        achieved = f"{rate / 1e12:.1f} TFLOP/s" if unit == "flops" else f"{rate / 1e9:.0f} GB/s"
        if peak and cls:
            frac = f"{rate / peak[cls[1]]:.1%}"
    fmt = lambda x, f: "" if x is None else format(x, f)
    print(f"| {t['key']} | {t['status']} | {fmt(m.get('baseline_time_ms'), '.3f')} | {fmt(best, '.3f')} | "
          f"{fmt(m.get('best_speedup'), '.2f')} | {achieved} | {frac} |")
    bad += not str(t.get("status", "")).startswith("succeeded")
sys.exit(1 if bad or not run.get("targets") else 0)
PY
cat "$out/results.md"
step "passed"
