# What every section of the command-line checks shares (sourced by
# Tests/cli/SECTION.sh): the program under test, a scratch folder of the
# section's own (removed at the end, mounts under it undone first), the
# box's data directory inside it, the shared test data, and the checks:
# `expect` (a command's exit status, its output in $out and $err) and
# `check` (a condition, counted). `finish` says the counts and exits.
set -uo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 PATH/TO/acapella" >&2; exit 2; }
acapella="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
section="$(basename "$0" .sh)"
cd "$(dirname "$0")/../.."
work="$(mktemp -d)"
# (Mounts a check made under $work are undone first, whatever happened.)
trap 'grep -o " $work/[^ ]*" /proc/self/mounts 2>/dev/null | sort -r | xargs -r -n 1 umount -l 2>/dev/null; rm -rf "$work"' EXIT
passed=0
failed=0

# expect NAME EXPECTED_STATUS COMMAND… — runs the command, keeps its output
# in $out and $err, and checks the exit status.
expect() {
  local name="$1" status="$2"
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local actual=$?
  out="$(cat "$work/out")"
  err="$(cat "$work/err")"
  if [[ "$actual" == "$status" ]]; then
    return 0
  fi
  echo "FAIL $name: exit $actual, expected $status; stderr: $err" >&2
  failed=$((failed + 1))
  return 1
}

# check NAME CONDITION-TEXT — records a pass or a failure of a [[ ]] test.
check() {
  local name="$1"
  shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL $name" >&2; failed=$((failed + 1)); fi
}

contains() { [[ "$1" == *"$2"* ]]; }
equals() { [[ "$1" == "$2" ]]; }
matches() { [[ "$1" =~ $2 ]]; }
lacks() { [[ "$1" != *"$2"* ]]; }


# Calibrations, box ids and other box data go to the section's scratch folder.
export ACAPELLA_DATA_DIR="$work/data"
mx=../shared/data/musicxml
voice=../shared/data/voice

# skipped WHAT: a check that cannot run here, said and listed by ./test at the end.
skipped() { echo "cli: $1" | tee -a "${ACAPELLA_SKIPS:-/dev/null}" >&2; }

finish() {
  echo "cli $section: $passed passed, $failed failed"
  exit $((failed > 0))
}
