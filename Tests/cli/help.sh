#!/usr/bin/env bash
# Help on every command, the usage errors, the version, the benchmarks kept out of the appliance.
# Runs alone in a scratch folder of its own: Tests/cli/help.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

for command in check import mix dump format info version new record takes devices calibrate midi-learn run pitch notes analyze export-midi export import-project; do
  expect "$command --help" 0 "$acapella" "$command" --help &&
    check "$command help has usage" contains "$out" "usage: acapella $command"
done
expect "top-level help" 0 "$acapella" --help && check "help lists check" contains "$out" "check"
expect "no arguments" 2 "$acapella"
expect "unknown command" 2 "$acapella" frobnicate && check "unknown command message" contains "$err" "unknown command 'frobnicate'"
expect "unknown option" 2 "$acapella" check --frob x && check "unknown option message" contains "$err" "unknown option '--frob'"
expect "missing argument" 2 "$acapella" dump && check "usage shown" contains "$err" "usage: acapella dump"
expect "bad number" 2 "$acapella" info --rate fast Songs/simple-harmony.acasong && check "bad number message" contains "$err" "--rate expects a whole number"
expect "version" 0 "$acapella" version && check "version names libraries" contains "$out" "libgpiod"
bench="$(dirname "$acapella")/acapella-bench"
expect "bench small" 0 "$bench" parse --parts 2 --measures 50 --repeat 1 && check "bench prints rate" contains "$out" "notes/s"
expect "bench help" 0 "$bench" --help && check "bench usage" contains "$out" "usage: acapella-bench"
expect "bench render, short" 0 "$bench" render --periods 2000 &&
  check "the cost of one more part, and what fits on a slower CPU" matches "$out" "one part costs [0-9.]+ µs a period at the median.*on a CPU 4× slower than this one: [0-9]+ parts within 3 % of the period"
expect "the appliance carries no benchmarks" 2 "$acapella" bench parse && check "bench is not a command" contains "$err" "unknown command 'bench'"
expect "--version" 0 "$acapella" --version && check "--version names the program" contains "$out" "acapella 0.2.0"
expect "required options in usage" 0 "$acapella" new --help && check "new's usage shows --song as required" contains "$out" "usage: acapella new --song SONG"
expect "record's usage" 0 "$acapella" record --help && check "record's usage shows --part or --parts" contains "$out" "usage: acapella record [--part NAME] [--parts PART=INPUT,…] [--range A-B]"

# The command reference in docs/ is what the program says (Tools/commands-doc > docs/reference/commands.md).
reference="$(cat docs/reference/commands.md)"
expect "the command reference generated" 0 Tools/commands-doc "$acapella" &&
  check "docs/reference/commands.md is every command's --help (regenerate it: Tools/commands-doc > docs/reference/commands.md)" equals "$out" "$reference"
[[ "$out" == "$reference" ]] || diff <(echo "$out") docs/reference/commands.md | head -n 20 >&2
expect "the reference has every command" 0 "$acapella" --help &&
  for command in $(sed -n '/^commands:/,/^$/p' <<<"$out" | awk 'NR > 1 && NF { print $1 }'); do
    check "docs/reference/commands.md has acapella $command" contains "$reference" "## \`acapella $command\`"
  done
check "the README is a front door (at most 300 lines)" test "$(wc -l < README.md)" -le 300
# Every file the README and docs/ link to is there.
for file in README.md docs/*.md docs/*/*.md; do
  for target in $(grep -o '](\([^)#: ]*\)' "$file" | sed 's/^](//'); do
    check "$file links to $target (the file must exist)" test -e "$(dirname "$file")/$target"
  done
done
finish
