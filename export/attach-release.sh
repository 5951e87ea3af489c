#!/usr/bin/env bash
# Attach a history export to a GitHub release of its own (tier1-export.yml and export/action.yml):
# ARCHIVE (the file name in $RUNNER_TEMP/tier1-export, `<prefix>-history-<date>-<run id>-<attempt>.zip`)
# and ARCHIVE.sha256 go to a new release tagged ARCHIVE without `.zip`, whose notes record DIGEST
# (`sha256:<hex>`) and the command that restores it. Prints `tag=<tag>` to $GITHUB_OUTPUT.
#
# Never onto an existing release (issue 36, N5): a recorded archive is never replaced, since its
# release notes keep the digest of the archive it holds and the runbook calls an archive that does
# not match them tampered; every export has a tag of its own (the run id and attempt are in it),
# so a second export in a month, or a re-run, makes a new release. With immutable releases GitHub
# refuses any asset change once a release is published ("Cannot upload assets to an immutable
# release") and keeps a used tag reserved: the assets are attached to a draft, which is then
# published (https://docs.github.com/en/code-security/concepts/supply-chain-security/immutable-releases,
# "Best practices for publishing immutable releases"). A run that stops between the two leaves a
# draft, which publishes nothing and which a later export never touches.
set -euo pipefail
fail() { echo "::error::$1"; exit 1; }
# gh reads both: the token (contents: write) and the repository the release goes to.
[[ -n "${GH_TOKEN:-}" ]] || fail "attach-release: GH_TOKEN: expected a token with contents: write, found none"
[[ "${GH_REPO:-}" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || fail "attach-release: GH_REPO: expected owner/name, found '${GH_REPO:-}'"
[[ "${ARCHIVE:-}" =~ ^[A-Za-z0-9._-]+\.zip$ ]] || fail "attach-release: ARCHIVE: expected an export's file name ending in .zip, found '${ARCHIVE:-}'"
[[ "${DIGEST:-}" =~ ^sha256:[0-9a-f]{64}$ ]] || fail "attach-release: DIGEST: expected sha256:<64 hex>, found '${DIGEST:-}'"
tag="${ARCHIVE%.zip}"
files=("$RUNNER_TEMP/tier1-export/$ARCHIVE" "$RUNNER_TEMP/tier1-export/$ARCHIVE.sha256")
for f in "${files[@]}"; do
  [[ -f "$f" ]] || fail "attach-release: expected the export file $f, found none"
done
if gh release view "$tag" > /dev/null 2>&1; then
  fail "release $tag already exists: an export is never attached to an existing release (its notes record the digest of the archive it holds); export again, a new run gets a new tag"
fi
gh release create "$tag" "${files[@]}" --draft --target "$GITHUB_SHA" --title "$tag" \
  --notes "tier1 history export, $DIGEST. Restore it offline: tier1-restore --from-export $ARCHIVE --sha256 ${DIGEST#sha256:} --destination DIR"
gh release edit "$tag" --draft=false
echo "tag=$tag" >> "$GITHUB_OUTPUT"
