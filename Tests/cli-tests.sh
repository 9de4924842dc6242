#!/usr/bin/env bash
# End-to-end checks of the acapella command line: exit codes, the exact
# one-line error format, JSON output, help on every command — in sections
# (Tests/cli/SECTION.sh), each in a scratch folder of its own, each able to
# run alone. The rules behind them are unit-tested in the libraries; here
# is the program as a user runs it.
# Usage: Tests/cli-tests.sh PATH/TO/acapella [SECTION…]   (default: every section)
set -uo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 PATH/TO/acapella [SECTION…]" >&2; exit 2; }
acapella="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
cd "$(dirname "$0")/.."
all=(songs help projects bundles choir library errors refusals reference web mdns install)
sections=("$@")
((${#sections[@]})) || sections=("${all[@]}")
passed=0 failed=0 broken=()
for section in "${sections[@]}"; do
  [[ -f "Tests/cli/$section.sh" ]] || { echo "cli: no section '$section'; the sections are: ${all[*]}" >&2; exit 2; }
  start=$SECONDS
  summary="$(bash "Tests/cli/$section.sh" "$acapella" | tail -n 1)"
  status=${PIPESTATUS[0]}
  if [[ "$summary" =~ ^cli\ $section:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
  else
    failed=$((failed + 1))
  fi
  ((status == 0)) || broken+=("$section")
  echo "$summary ($((SECONDS - start)) s)"
done
echo "cli: $passed passed, $failed failed${broken[*]:+ (in: ${broken[*]})}"
((failed == 0 && ${#broken[@]} == 0))
