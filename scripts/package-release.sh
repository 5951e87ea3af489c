#!/usr/bin/env bash
# Package a release (called by .github/workflows/release.yml; tests/it/release_package.rs runs it):
# the twelve tier1 binaries, README.md, the adopter's references under docs/, the protocol helpers
# under helpers/ (helpers/python/tier1_bench.py, helpers/c/tier1_bench.h) and the examples
# written with them under examples/, as <out>/<name>.tar.gz (deterministic: sorted names, owner 0,
# mtime SOURCE_DATE_EPOCH) with its line in <out>/SHA256SUMS.
# Usage: scripts/package-release.sh NAME BIN_DIR OUT_DIR   (NAME: tier1-vX.Y.Z-<target triple>)
set -euo pipefail
if [ "$#" -ne 3 ]; then
  echo "usage: $0 NAME BIN_DIR OUT_DIR" >&2
  exit 2
fi
name="$1" bin_dir="$2" out="$3"
cd "$(dirname "$0")/.."
bins=(tier1-attest tier1-preflight tier1-restore tier1-run tier1-evidence
      tier1-publish tier1-promote tier1-nightly tier1-dashboard tier1-compare tier1-bisect
      tier1-export tier1-vault tier1-shard)
files=(README.md docs/suite.md docs/adoption.md docs/command-targets.md
       helpers/python/tier1_bench.py helpers/c/tier1_bench.h
       examples/command_target.py examples/command_target.c)
rm -rf "${out:?}/$name"
mkdir -p "$out/$name"
for bin in "${bins[@]}"; do
  [ -f "$bin_dir/$bin" ] || { echo "package-release: $bin_dir/$bin: expected a built binary, found none" >&2; exit 1; }
  cp "$bin_dir/$bin" "$out/$name/"
done
for f in "${files[@]}"; do
  mkdir -p "$out/$name/$(dirname "$f")"
  cp "$f" "$out/$name/$f"
done
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@${SOURCE_DATE_EPOCH:-0}" \
  -C "$out" -czf "$out/$name.tar.gz" "$name"
(cd "$out" && sha256sum "$name.tar.gz" > SHA256SUMS)
echo "$out/$name.tar.gz"
