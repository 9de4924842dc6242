#!/usr/bin/env bash
# The fuzz smoke: each fuzzer built with libFuzzer (.build/fuzz) and run from
# its corpus for a fixed number of runs; a crash, a timeout or a leak past
# the limits fails. Usage: Tests/Fuzz/smoke.sh SCRATCH
set -euo pipefail
cd "$(dirname "$0")/../.."
work="$1"
# name, runs, longest input, timeout (s), memory (MB), corpus folder
fuzzers=(
  "parser 30000 8192 10 2048 corpus"
  "importer 3000 65536 20 4096 musicxml-corpus"
  "midi 100000 4096 10 2048 midi-corpus"
  "manifest 50000 16384 10 2048 manifest-corpus"
  "settings 50000 8192 10 2048 settings-corpus"
  "lrc 100000 8192 10 2048 lrc-corpus"
  "web 300000 4096 10 2048 web-corpus"
)
for fuzzer in "${fuzzers[@]}"; do
  read -r name _ <<<"$fuzzer"
  swift build -c release --sanitize=fuzzer -Xswiftc -DFUZZING --product "acapella-fuzz-$name" --scratch-path .build/fuzz
done
for fuzzer in "${fuzzers[@]}"; do
  read -r name runs longest timeout memory corpus <<<"$fuzzer"
  mkdir -p "$work/$name"
  cp "Tests/Fuzz/$corpus"/* "$work/$name/"
  ".build/fuzz/release/acapella-fuzz-$name" -runs="$runs" -max_len="$longest" -timeout="$timeout" -rss_limit_mb="$memory" \
    -artifact_prefix="$work/" "$work/$name" 2>&1 | tail -n 1
done
