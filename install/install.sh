#!/usr/bin/env bash
# Install tier1 for a workflow job: the release tarball of TIER1_VERSION from TIER1_REPOSITORY,
# checked against the release's SHA256SUMS (and TIER1_SHA256 when given) and, where the `gh` CLI is
# present (GitHub-hosted and most self-hosted runners), against its build provenance attestation
# (`gh attestation verify`). With TIER1_BUILD_FROM_SOURCE=true it builds the binaries from
# TIER1_SOURCE_DIR (the action's own, SHA-pinned checkout) instead. Prints `bin=<dir>` to
# $GITHUB_OUTPUT and adds the directory to $GITHUB_PATH. Used by install/action.yml and by the
# producer, publish and promote actions (docs/adoption.md).
set -euo pipefail
fail() { echo "::error::$1"; exit 1; }

if [[ "${TIER1_BUILD_FROM_SOURCE:-false}" == true ]]; then
  [[ -f "${TIER1_SOURCE_DIR:-}/Cargo.toml" ]] || fail "build-from-source: expected Cargo.toml in '${TIER1_SOURCE_DIR:-}', found none"
  cargo build --release --locked --bins --manifest-path "$TIER1_SOURCE_DIR/Cargo.toml" \
    --target-dir "$RUNNER_TEMP/tier1-target"
  bin="$RUNNER_TEMP/tier1-target/release"
else
  [[ "${TIER1_VERSION:-}" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] ||
    fail "tier1-version: expected a version like 0.1.0, found '${TIER1_VERSION:-}'"
  [[ "${TIER1_REPOSITORY:-}" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] ||
    fail "tier1-repository: expected owner/name, found '${TIER1_REPOSITORY:-}'"
  api="${GITHUB_API_URL:-https://api.github.com}"
  # HTTPS only, except a loopback API (the workflow tests' fake GitHub).
  proto='=https'
  [[ "$api" =~ ^http://(127\.0\.0\.1|localhost)(:[0-9]+)?(/|$) ]] && proto='=https,http'
  fetch() { curl --fail --silent --show-error --location --retry 3 --proto "$proto" "$@"; }
  # The download URL of asset $1 in the release JSON $2 (jq, else python3).
  asset_url() {
    if command -v jq >/dev/null; then
      jq -r --arg n "$1" '.assets[] | select(.name == $n) | .browser_download_url' "$2"
    elif command -v python3 >/dev/null; then
      python3 -c 'import json, sys
print("".join(a["browser_download_url"] for a in json.load(open(sys.argv[2]))["assets"] if a["name"] == sys.argv[1]))' "$1" "$2"
    else
      fail "tier1 install: expected jq or python3 on PATH to read the release, found neither"
    fi
  }
  tag="v$TIER1_VERSION"
  name="tier1-v${TIER1_VERSION}-x86_64-unknown-linux-gnu"
  dir="$RUNNER_TEMP/tier1-install"
  rm -rf "$dir" && mkdir -p "$dir"
  # The release's assets from the REST API (public: no token), then each asset's download URL.
  fetch --header "Accept: application/vnd.github+json" --output "$dir/release.json" \
    "$api/repos/$TIER1_REPOSITORY/releases/tags/$tag" ||
    fail "tier1-version: no release $tag in $TIER1_REPOSITORY"
  for asset in "$name.tar.gz" SHA256SUMS; do
    url="$(asset_url "$asset" "$dir/release.json")"
    [[ -n "$url" ]] || fail "release $tag of $TIER1_REPOSITORY: expected an asset $asset, found none"
    fetch --output "$dir/$asset" "$url" || fail "release $tag of $TIER1_REPOSITORY: downloading $asset failed"
  done
  grep -q "  $name.tar.gz\$" "$dir/SHA256SUMS" || fail "SHA256SUMS of $tag: expected a line for $name.tar.gz, found none"
  (cd "$dir" && sha256sum --check --ignore-missing --strict SHA256SUMS) ||
    fail "$name.tar.gz: the checksum does not match SHA256SUMS of $tag"
  if [[ -n "${TIER1_SHA256:-}" ]]; then
    actual="$(sha256sum "$dir/$name.tar.gz" | cut -d' ' -f1)"
    [[ "$actual" == "${TIER1_SHA256,,}" ]] || fail "$name.tar.gz: expected sha256 $TIER1_SHA256, found $actual"
  fi
  case "${TIER1_VERIFY_PROVENANCE:-auto}" in
    true) command -v gh >/dev/null || fail "verify-provenance: true needs the gh CLI, found none on PATH"
          gh attestation verify "$dir/$name.tar.gz" --repo "$TIER1_REPOSITORY" ;;
    auto) if command -v gh >/dev/null; then gh attestation verify "$dir/$name.tar.gz" --repo "$TIER1_REPOSITORY"
          else echo "gh not found: build provenance not verified (the checksum was)"; fi ;;
    false) ;;
    *) fail "verify-provenance: expected auto, true or false, found '$TIER1_VERIFY_PROVENANCE'" ;;
  esac
  tar -xzf "$dir/$name.tar.gz" -C "$dir"
  bin="$dir/$name"
fi
[[ -x "$bin/tier1-run" ]] || fail "tier1 install: expected the binaries in $bin, found no tier1-run"
echo "bin=$bin" >> "$GITHUB_OUTPUT"
echo "$bin" >> "$GITHUB_PATH"
