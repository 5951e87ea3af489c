#!/usr/bin/env bash
# Refuse a bad request of a producer workflow before anything of the night runs (tier1-nightly.yml's
# "Validate canonical request" step and the `validate` action of other repositories, issue 36 N12).
# Reads GITHUB_EVENT_NAME and GITHUB_REF (the runner's), and:
#   TIER1_DEFAULT_BRANCH          the repository's default branch (github.event.repository.default_branch;
#                                 a schedule's payload has none, and GitHub runs schedules on it)
#   TIER1_ACCEPT_HISTORY_ANCHOR   true: ratify this run as the new anchor (a reviewed dispatch)
#   TIER1_BOOTSTRAP_HISTORY       true: start the first anchor (with the acceptance)
#   TIER1_ACCEPTANCE_NOTE         the public note (required with, refused without, the acceptance)
#   TIER1_HISTORY_EXPORT, TIER1_HISTORY_EXPORT_SHA256   tier1's recovery from an export (optional)
#   TIER1_RUNNER_CLASS            a sharded night's runner class (optional: a class name)
#   TIER1_SHARDS                  a sharded night's shard count (optional: empty or a whole number)
# Each refusal is an error annotation naming the input, and exit 1.
set -euo pipefail
fail() { echo "::error::$1"; exit 1; }
truth() { [[ "${!1:-false}" == true || "${!1:-false}" == false ]] || fail "$1: expected true or false, found '${!1}'"; }
truth TIER1_ACCEPT_HISTORY_ANCHOR
truth TIER1_BOOTSTRAP_HISTORY
accept="${TIER1_ACCEPT_HISTORY_ANCHOR:-false}"
bootstrap="${TIER1_BOOTSTRAP_HISTORY:-false}"
default="${TIER1_DEFAULT_BRANCH:-}"
if [[ "$GITHUB_EVENT_NAME" != schedule ]]; then
  [[ -n "$default" ]] || fail "the repository's default branch is unknown (github.event.repository.default_branch is empty for event $GITHUB_EVENT_NAME): canonical runs only run on the default branch"
  [[ "$GITHUB_REF" == "refs/heads/$default" ]] || fail "canonical runs only run on the default branch $default, found $GITHUB_REF"
fi
note="${TIER1_ACCEPTANCE_NOTE:-}"
note="${note//[[:space:]]/}"
if [[ "$accept" == true ]]; then
  [[ "$GITHUB_EVENT_NAME" == workflow_dispatch ]] || fail "Scheduled Tier-1 runs cannot accept a new history anchor"
  [[ -n "$note" ]] || fail "A public acceptance note is required"
else
  [[ -z "$note" ]] || fail "acceptance_note requires accept_history_anchor"
fi
if [[ "$bootstrap" == true && "$accept" != true ]]; then
  fail "bootstrap_history requires protected anchor acceptance"
fi
if [[ -n "${TIER1_HISTORY_EXPORT:-}" ]]; then
  [[ "$accept" == true ]] || fail "history_export requires accept_history_anchor (the recovered anchor is renewed by promotion)"
  [[ "$bootstrap" != true ]] || fail "history_export recovers the chain: it cannot be combined with bootstrap_history"
  [[ "${TIER1_HISTORY_EXPORT_SHA256:-}" =~ ^[0-9a-f]{64}$ ]] || fail "history_export needs history_export_sha256: the export's recorded SHA-256 (64 lower-case hex)"
elif [[ -n "${TIER1_HISTORY_EXPORT_SHA256:-}" ]]; then
  fail "history_export_sha256 requires history_export"
fi
if [[ -n "${TIER1_RUNNER_CLASS:-}" ]]; then
  [[ "$TIER1_RUNNER_CLASS" =~ ^[a-z0-9][a-z0-9_.-]{0,31}$ ]] || fail "runner_class must be a class name (1-32 lower-case letters, digits, '_', '.', '-'), found '$TIER1_RUNNER_CLASS'"
fi
[[ -z "${TIER1_SHARDS:-}" || "$TIER1_SHARDS" =~ ^[1-9][0-9]*$ ]] || fail "shards must be a whole number of at least 1, found '$TIER1_SHARDS'"
echo "request valid: event $GITHUB_EVENT_NAME on $GITHUB_REF, accept_history_anchor $accept, bootstrap_history $bootstrap${TIER1_RUNNER_CLASS:+, runner_class $TIER1_RUNNER_CLASS}${TIER1_SHARDS:+, shards $TIER1_SHARDS}"
