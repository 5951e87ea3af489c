#!/usr/bin/env bash
# Node and the pinned npm packages (tests/workflows/package-lock.json: @actions/workflow-parser,
# @actions/expressions, and @actions/artifact with what the artifact actions run on) for the
# workflow scenario tests. Installs node from Debian when absent.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm
fi
# Both packages declare node >= 20 (module.register, used by the JSON load hook, is there too).
node -e 'const major = Number(process.versions.node.split(".")[0]);
  if (major < 20) { console.error(`workflow tests: node >= 20 required, found ${process.versions.node}`); process.exit(1); }'
echo "== npm ci (tests/workflows) with node $(node --version)"
npm ci --prefix tests/workflows --ignore-scripts --no-audit --no-fund --prefer-offline
