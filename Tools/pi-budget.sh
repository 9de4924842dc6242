#!/usr/bin/env bash
# What a Raspberry Pi 4 can carry — a MODEL, not a measurement on a Pi:
# instruction counts of the box's work on this machine (valgrind's callgrind:
# counts, not seconds, the same on a busy machine), turned into Cortex-A72
# time with one factor, printed as the table in deploy/README.md.
#
#   Pi 4 time = x86-64 instructions × 1.1 (AArch64 needs about as many
#   instructions; 10 % more, as a margin) / (1.5 GHz × 1.0 instructions a
#   cycle — the A72 is a 3-wide out-of-order core, ~1 IPC on scalar float
#   and branchy code is its usual figure).
#
# This machine's own rate on the engine is printed beside it, as a check
# on the factor (it should be several times the Pi's).
#
# Usage: Tools/pi-budget.sh [ACAPELLA [ACAPELLA_BENCH]]   (~3 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "pi-budget: valgrind is needed (apt install valgrind)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Copies without debug information (bookworm's valgrind 3.19 cannot read the
# DWARF 5 Swift 6.3 writes; the symbols stay), beside the repository's files
# they find relative to themselves (Songs, Fonts, Web).
mkdir -p "$work/bin/.build/release"
for name in Songs Fonts Web Config; do ln -s "$(pwd)/$name" "$work/bin/$name"; done
acapella="$work/bin/.build/release/acapella"
bench="$work/bin/.build/release/acapella-bench"
strip --strip-debug -o "$acapella" "${1:-.build/release/acapella}"
strip --strip-debug -o "$bench" "${2:-.build/release/acapella-bench}"
export ACAPELLA_DATA_DIR="$work/data" SWIFT_BACKTRACE=enable=no
ns_per_instruction=0.7333   # 1.1 / (1.5 GHz × 1.0 IPC)
period_us=2666.7            # 128 frames at 48 kHz

# Instructions of a command (all of it, or only inside functions matching --toggle-collect=PATTERN).
count() {
  local out="$work/callgrind.out"
  rm -f "$out"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>"$work/valgrind.err" || { tail -n 5 "$work/valgrind.err" >&2; exit 1; }
  sed -n 's/^totals: *\([0-9]*\).*/\1/p; s/^summary: *\([0-9]*\).*/\1/p' "$out" | head -n 1
}
pi_us() { awk -v n="$1" -v k="$ns_per_instruction" 'BEGIN { printf "%.0f", n * k / 1000 }'; }
row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4"; }
startup="$(count "$acapella" version)"

echo "| work | x86-64 instructions | Pi 4 (A72 model) | share |"
echo "|---|---|---|---|"
# The engine: one 128-frame period with N parts (half on takes, a quarter
# punched in, clicks), counted inside the engine's process call only.
periods=2000
for parts in 8 16 32; do
  total="$(count --toggle-collect='*4CoreV7process5input4left5right6frames*' "$bench" render --parts "$parts" --periods "$periods" --frames 128 --no-slope)"
  each=$((total / periods))
  us="$(pi_us "$each")"
  row "engine, $parts parts, one 128-frame period" "$each" "$us µs" "$(awk -v u="$us" -v b="$period_us" 'BEGIN { printf "%.1f %% of the period", 100 * u / b }')"
  [[ "$parts" == 8 ]] && engine8="$each"
done
# The needle: YIN every 512 samples (as the box's needle) over a sung file, per period.
voice=../shared/data/voice/sustain_a3_vibrato.wav
if [[ -f "$voice" ]]; then
  seconds="$(python3 -c 'import sys, wave; w = wave.open(sys.argv[1]); print(w.getnframes() / w.getframerate())' "$voice")"
  total=$(( $(count "$acapella" pitch "$voice" --hop 512) - startup ))
  each="$(awk -v t="$total" -v s="$seconds" 'BEGIN { printf "%.0f", t / s * 128 / 48000 }')"
  us="$(pi_us "$each")"
  row "the needle (YIN every 512 samples), per 128-frame period" "$each" "$us µs" "$(awk -v u="$us" -v b="$period_us" 'BEGIN { printf "%.1f %% of the period", 100 * u / b }')"
fi
# A 4-part, 100-measure song (3 min 20 s at ♩=120), a take of its first part recorded in the simulated room.
python3 Tools/make-big-song.py 4 100 "$work/four.acasong"
"$acapella" new "$work/four.acaproj" --song "$work/four.acasong" >/dev/null
"$acapella" record "$work/four.acaproj" --part "Voice 1" --device sim >/dev/null 2>&1
total=$(( $(count "$acapella" analyze "$work/four.acaproj" --take 1) - startup ))
row "analysing a 3 min 20 s take (\`acapella analyze\`)" "$total" "$(awk -v t="$(pi_us "$total")" 'BEGIN { printf "%.1f s", t / 1e6 }')" "—"
total=$(( $(count "$acapella" engrave "$work/four.acasong" -o "$work/four.pdf") - startup ))
row "engraving it, 4 parts × 100 measures, to PDF" "$total" "$(awk -v t="$(pi_us "$total")" 'BEGIN { printf "%.1f s", t / 1e6 }')" "—"
total=$(( $(count "$acapella" mix "$work/four.acaproj" -o "$work/mix.wav") - startup ))
pi="$(pi_us "$total")"
row "its mixdown, 3 min 20 s, 3 tones and the take, to WAV" "$total" "$(awk -v t="$pi" 'BEGIN { printf "%.1f s", t / 1e6 }')" "$(awk -v t="$pi" 'BEGIN { printf "%.0f× real time", 200 / (t / 1e6) }')"
# The check on the factor: this machine's own rate on the engine (8 parts).
median="$("$bench" render --parts 8 --periods 20000 --frames 128 --no-slope | sed -n 's/^  median *\([0-9.]*\) µs.*/\1/p')"
echo
awk -v n="$engine8" -v m="$median" -v k="$ns_per_instruction" 'BEGIN {
  printf "This machine runs the 8-part engine at %.2f instructions a nanosecond (%d instructions in %.1f µs, the median period); the model gives the Pi %.2f — %.1f× slower.\n", n / (m * 1000), n, m, 1 / k, (n / (m * 1000)) * k }'
