#!/usr/bin/env bash
# Usage: glibc-floor.sh FLOOR BINARY...
# Refuse binaries that need a newer glibc than FLOOR (e.g. 2.28): for each, the highest GLIBC_x.y
# symbol version it references (readelf --version-info) must be FLOOR or older. release.yml runs it
# on the release binaries, so the supported floor (docs/runbook.md §0) is a checked fact.
set -euo pipefail
floor="${1:?usage: glibc-floor.sh FLOOR BINARY...}"
shift
[[ "$floor" =~ ^[0-9]+\.[0-9]+$ ]] || { echo "::error::glibc-floor.sh: FLOOR: expected a version like 2.28, found '$floor'"; exit 2; }
(($#)) || { echo "::error::glibc-floor.sh: expected at least one binary, found none"; exit 2; }
status=0
for bin in "$@"; do
  versions="$(readelf --version-info --wide "$bin")" || { echo "::error::$bin: readelf failed"; exit 2; }
  need="$(grep -o 'GLIBC_[0-9][0-9.]*' <<<"$versions" | sed 's/^GLIBC_//' | sort -uV | tail -n 1 || true)"
  if [[ -z "$need" ]]; then
    echo "$bin: references no GLIBC symbol version"
  elif [[ "$(printf '%s\n%s\n' "$floor" "$need" | sort -V | tail -n 1)" == "$floor" ]]; then
    echo "$bin: needs glibc $need, within the floor $floor"
  else
    echo "::error::$bin needs glibc $need, newer than the supported floor $floor (build it on an older base: release.yml's manylinux_2_28 container)"
    status=1
  fi
done
exit "$status"
