#!/usr/bin/env bash
# Install tier1 for a workflow job: the release tarball of TIER1_VERSION from TIER1_REPOSITORY,
# checked against the release's SHA256SUMS, then verified for real, failing closed:
#   - TIER1_SHA256 (the action's `tier1-sha256`): the tarball's SHA-256 pinned by the caller, and/or
#   - its build provenance (`gh attestation verify --cert-identity`, the exact signer: the release
#     workflow `.github/workflows/release.yml` of TIER1_REPOSITORY at the tag `refs/tags/v<version>`)
#     where a gh CLI of 2.49.0 or newer is present (TIER1_VERIFY_PROVENANCE: auto, true = required,
#     false = never). `gh attestation` exists from gh 2.49.0 on; a distribution's older gh (Debian 12
#     ships 2.23) is named by its version and not used, never read as a release without provenance.
#     `--signer-workflow` is not used: gh matches it as a regular expression anchored only at its
#     start (cli/cli#9507; `validateSignerWorkflow` in pkg/cmd/attestation/verify/policy.go), so
#     it would also admit `release.yml-other.yml` or any ref; `--cert-identity` is compared exactly.
# When neither verified the tarball the install refuses, unless TIER1_ALLOW_UNVERIFIED=true (the
# action's `allow-unverified`), which warns loudly. SHA256SUMS alone comes from the same release as
# the tarball and proves nothing about who built it.
# The release API is asked with GH_TOKEN when set (an unauthenticated client gets 60 requests an
# hour per IP address, shared by every job behind it); a rate-limited answer (403 or 429 with
# `x-ratelimit-remaining: 0` or `retry-after`) is waited out up to TIER1_INSTALL_MAX_WAIT seconds
# (default 60) and otherwise refused with a message naming the limit. TIER1_GH names the gh CLI
# (default `gh`).
# With TIER1_BUILD_FROM_SOURCE=true it builds the binaries from TIER1_SOURCE_DIR (the action's own,
# SHA-pinned checkout) instead. Prints `bin=<dir>` to $GITHUB_OUTPUT and adds the directory to
# $GITHUB_PATH. Used by install/action.yml and by the producer, publish and promote actions
# (docs/adoption.md).
set -euo pipefail
fail() { echo "::error::$1"; exit 1; }

# The value of header $1 (lower case) in the header dump $2 (the last response's), or nothing.
header() { grep -i "^$1:" "$2" 2>/dev/null | tail -n 1 | cut -d: -f2- | tr -d '\r' | xargs || true; }

# GET the API URL $1 into $2 (with GH_TOKEN when set), waiting out rate limits; sets api_status to
# the final HTTP status (000 when the transport failed) and fails only on an exhausted rate limit.
api_get() {
  local url="$1" out="$2" headers="$2.headers" code wait remaining retry reset limit attempt
  local auth=()
  [[ -n "${GH_TOKEN:-}" ]] && auth=(--header "Authorization: Bearer $GH_TOKEN")
  for attempt in 1 2 3 4; do
    code="$(curl --silent --show-error --retry 3 --proto "$proto" \
      --header "Accept: application/vnd.github+json" --header "X-GitHub-Api-Version: 2022-11-28" \
      "${auth[@]}" --dump-header "$headers" --output "$out" --write-out '%{http_code}' "$url")" || code=000
    api_status="$code"
    [[ "$code" == 403 || "$code" == 429 ]] || return 0
    remaining="$(header x-ratelimit-remaining "$headers")"
    retry="$(header retry-after "$headers")"
    [[ "$code" == 429 || "$remaining" == 0 || -n "$retry" ]] || return 0
    limit="$(header x-ratelimit-limit "$headers")"
    reset="$(header x-ratelimit-reset "$headers")"
    if [[ "$retry" =~ ^[0-9]+$ ]]; then wait="$retry"
    elif [[ "$reset" =~ ^[0-9]+$ ]]; then wait=$(( reset - $(date +%s) )); (( wait >= 0 )) || wait=0
    else wait=60; fi
    local who="unauthenticated: 60 requests an hour per IP address, shared by every job behind it"
    [[ -n "${GH_TOKEN:-}" ]] && who="with the given token"
    if (( wait > ${TIER1_INSTALL_MAX_WAIT:-60} || attempt == 4 )); then
      fail "tier1 install: the GitHub API rate limit is exhausted (HTTP $code, x-ratelimit-limit ${limit:-unknown} per hour, $who; it resets in ${wait}s, and this install waits at most ${TIER1_INSTALL_MAX_WAIT:-60}s, three times) asking $url: give the action a token (the github-token input, default github.token) or retry later"
    fi
    echo "tier1 install: rate limited (HTTP $code, x-ratelimit-limit ${limit:-unknown}); waiting ${wait}s" >&2
    sleep "$wait"
  done
}

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
  case "${TIER1_VERIFY_PROVENANCE:-auto}" in
    auto|true|false) ;;
    *) fail "verify-provenance: expected auto, true or false, found '$TIER1_VERIFY_PROVENANCE'" ;;
  esac
  case "${TIER1_ALLOW_UNVERIFIED:-false}" in
    true|false) ;;
    *) fail "allow-unverified: expected true or false, found '$TIER1_ALLOW_UNVERIFIED'" ;;
  esac
  if [[ -n "${TIER1_SHA256:-}" && ! "${TIER1_SHA256}" =~ ^[0-9A-Fa-f]{64}$ ]]; then
    fail "tier1-sha256: expected 64 hex digits, found '$TIER1_SHA256'"
  fi
  api="${GITHUB_API_URL:-https://api.github.com}"
  # HTTPS only, except a loopback API (the workflow tests' fake GitHub).
  proto='=https'
  [[ "$api" =~ ^http://(127\.0\.0\.1|localhost)(:[0-9]+)?(/|$) ]] && proto='=https,http'
  # Asset downloads (browser_download_url) never carry the token.
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
  url="$api/repos/$TIER1_REPOSITORY/releases/tags/$tag"
  api_get "$url" "$dir/release.json"
  case "$api_status" in
    200) ;;
    404) fail "tier1-version: no release $tag in $TIER1_REPOSITORY (HTTP 404 from $url)" ;;
    000) fail "tier1 install: $url could not be reached" ;;
    *) fail "tier1 install: HTTP $api_status from $url: $(head -c 300 "$dir/release.json" 2>/dev/null | tr -d '\n')" ;;
  esac
  for asset in "$name.tar.gz" SHA256SUMS; do
    asset_link="$(asset_url "$asset" "$dir/release.json")"
    [[ -n "$asset_link" ]] || fail "release $tag of $TIER1_REPOSITORY: expected an asset $asset, found none"
    fetch --output "$dir/$asset" "$asset_link" || fail "release $tag of $TIER1_REPOSITORY: downloading $asset failed"
  done
  grep -q "  $name.tar.gz\$" "$dir/SHA256SUMS" || fail "SHA256SUMS of $tag: expected a line for $name.tar.gz, found none"
  (cd "$dir" && sha256sum --check --ignore-missing --strict SHA256SUMS) ||
    fail "$name.tar.gz: the checksum does not match SHA256SUMS of $tag"
  verified=()
  if [[ -n "${TIER1_SHA256:-}" ]]; then
    actual="$(sha256sum "$dir/$name.tar.gz" | cut -d' ' -f1)"
    [[ "$actual" == "${TIER1_SHA256,,}" ]] || fail "$name.tar.gz: expected sha256 $TIER1_SHA256 (tier1-sha256), found $actual"
    verified+=("its SHA-256 pinned by tier1-sha256")
  fi
  gh="${TIER1_GH:-gh}"
  gh_needed=2.49.0
  # The certificate identity of the release workflow's signature: the workflow file at the tag.
  signer="https://github.com/$TIER1_REPOSITORY/.github/workflows/release.yml@refs/tags/$tag"
  # What the gh CLI can do here: "absent", "unreadable", "old <version>" or "ok <version>".
  gh_state() {
    local path version
    path="$(command -v "$gh" 2>/dev/null)" || { echo absent; return; }
    version="$("$path" --version 2>/dev/null | sed -n '1s/^gh version \([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\).*/\1/p')" || true
    if [[ -z "$version" ]]; then echo unreadable
    elif [[ "$(printf '%s\n%s\n' "$gh_needed" "$version" | sort -V | head -n 1)" == "$gh_needed" ]]; then echo "ok $version"
    else echo "old $version"; fi
  }
  gh_found="$(gh_state)"
  case "$gh_found" in
    absent) gh_what="no gh CLI ('$gh') on PATH" ;;
    unreadable) gh_what="a gh at $(command -v "$gh") whose version gh --version does not say" ;;
    *) gh_what="gh ${gh_found#* } at $(command -v "$gh")" ;;
  esac
  provenance() {
    "$gh" attestation verify "$dir/$name.tar.gz" --repo "$TIER1_REPOSITORY" \
      --cert-identity "$signer" --deny-self-hosted-runners ||
      fail "$name.tar.gz: gh attestation verify found no build provenance signed by $signer (gh ${gh_found#ok })"
    verified+=("its build provenance (signed by $signer)")
  }
  case "${TIER1_VERIFY_PROVENANCE:-auto}" in
    true) [[ "$gh_found" == ok* ]] ||
            fail "verify-provenance: true needs gh $gh_needed or newer (gh attestation verify), found $gh_what: install gh from https://cli.github.com (a distribution's package may be older), or pin tier1-sha256 and leave verify-provenance at auto"
          provenance ;;
    auto) if [[ "$gh_found" == ok* ]]; then provenance
          else echo "tier1 install: build provenance not checked: gh attestation verify needs gh $gh_needed or newer, found $gh_what" >&2; fi ;;
    false) ;;
  esac
  if ((${#verified[@]} == 0)); then
    [[ "${TIER1_ALLOW_UNVERIFIED:-false}" == true ]] ||
      fail "$name.tar.gz: not verified: neither tier1-sha256 is pinned nor was its build provenance checked (verify-provenance ${TIER1_VERIFY_PROVENANCE:-auto}; gh attestation verify needs gh $gh_needed or newer, found $gh_what); SHA256SUMS comes from the same release and proves nothing. Pin tier1-sha256 (docs/adoption.md §3), or provide gh $gh_needed or newer, or opt out by name with allow-unverified: true"
    echo "::warning::tier1 install: $name.tar.gz is NOT VERIFIED (allow-unverified: true): only SHA256SUMS of the same release was checked; anyone able to replace the release could run code in this job. Pin tier1-sha256 (docs/adoption.md §3)."
  else
    printf 'tier1 install: %s verified by %s\n' "$name.tar.gz" "$(IFS=';'; echo "${verified[*]}")" >&2
  fi
  tar -xzf "$dir/$name.tar.gz" -C "$dir"
  bin="$dir/$name"
fi
[[ -x "$bin/tier1-run" ]] || fail "tier1 install: expected the binaries in $bin, found no tier1-run"
echo "bin=$bin" >> "$GITHUB_OUTPUT"
echo "$bin" >> "$GITHUB_PATH"
