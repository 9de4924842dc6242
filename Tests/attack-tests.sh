#!/usr/bin/env bash
# The box attacked as a hostile user and a loaded machine would: every case
# a real process (the box, the command line, a client over HTTP), each
# check printing PASS or FAIL with what it measured. Exits 1 if any failed.
# Usage: Tests/attack-tests.sh PATH/TO/acapella [SECTION…] (default: all)
set -uo pipefail
acapella="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$(dirname "$0")/.."
xctest="$(dirname "$acapella")/acapellaPackageTests.xctest"
work="$(mktemp -d)"
pids=()
trap 'for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done; rm -rf "$work"' EXIT
export ACAPELLA_DATA_DIR="$work/data"
failed=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failed=1; }
sections="${*:2}"
want() { [[ -z "$sections" || " $sections " == *" $1 "* ]]; }

if want xruns; then
echo "== xruns in the simulated room at real time: the recording stopped 30 times (SIGSTOP), capture and playback started apart at every restart"
# The microphone hears only the playback (bleed 1, no singer, no noise), so
# the take must be the playback itself between its dropouts.
project="$work/xruns.acaproj"
"$acapella" new "$project" --song Songs/amazing-grace.acasong >/dev/null
"$acapella" record "$project" --part Alto --guide --singer off --progress \
  --device sim:speed=1,latency=700,bleed=1,noise=0,unlinked=1 > "$work/xruns.out" 2> "$work/xruns.err" &
recorder=$!
pids+=("$recorder")
for _ in $(seq 100); do grep -q "^captured [1-9]" "$work/xruns.out" && break; sleep 0.1; done
stops="$(Tests/stall "$recorder" 30 0.05 0.3)"
wait "$recorder"
grep -q "^take 1  Alto  kept" "$work/xruns.out" && pass "recorded through $stops stops: $(grep -m1 '^take' "$work/xruns.out")" || fail "the take: $(tail -2 "$work/xruns.err")"
grep -q "the device dropped frames [0-9]* times (xruns" "$work/xruns.err" && pass "said as xruns, not the disk: $(grep -o 'the device dropped frames [0-9]* times' "$work/xruns.err")" ||
  fail "the xruns were not said: $(cat "$work/xruns.err")"
grep -q "writer fell behind" "$work/xruns.err" && fail "capture lost by the writer, not the device: $(grep -m1 "writer fell behind" "$work/xruns.err")"
if ACAPELLA_HIL_PROJECT="$project" ACAPELLA_HIL_PART=Alto ACAPELLA_HIL_XRUNS="$stops" "$xctest" --testing-library swift-testing --filter HILAlignment > "$work/align.out" 2>&1; then
  pass "$(grep -m1 'hil alignment' "$work/align.out")"
else
  fail "alignment: $(grep -E 'hil alignment|Expectation failed|error' "$work/align.out" | head -4)"
fi
fi

if want writes; then
echo "== no command writes into a project: every output option pointed at a take, the song, the manifest (directly and through a link)"
project="$work/owned.acaproj"
"$acapella" new "$project" --song Songs/simple-harmony.acasong >/dev/null
"$acapella" record "$project" --part Bass --device sim >/dev/null 2>&1
take="$(ls "$project"/takes/*.wav | head -n 1)"
ln -s "$project/takes" "$work/takes-link"
before="$(cd "$project" && find . -type f ! -name .lock -print0 | sort -z | xargs -0 sha256sum)"
refused=0 total=0
attempt() {  # NAME COMMAND…: must exit 1 with one line naming the project
  local name="$1"; shift
  total=$((total + 1))
  "$@" > "$work/w.out" 2> "$work/w.err"; local status=$?
  if ((status == 1)) && grep -q "inside the project\|the command's own input" "$work/w.err" && (($(wc -l < "$work/w.err") == 1)); then
    refused=$((refused + 1))
  else
    fail "$name: exit $status: $(head -c 300 "$work/w.err")"
  fi
}
attempt mix "$acapella" mix "$project" -o "$take"
attempt mix "$acapella" mix "$project" -o "$work/takes-link/new.wav"
attempt mix "$acapella" mix "$project" -o "$project/score.acasong"
attempt export "$acapella" export "$project" -o "$project/takes/bundle.acaproj.zip"
attempt engrave "$acapella" engrave "$project/score.acasong" -o "$project/manifest.json"
attempt export-midi "$acapella" export-midi "$project/score.acasong" -o "$take"
attempt export-lrc "$acapella" export-lrc Songs/amazing-grace.acasong -o "$project/takes/words.lrc"
attempt import "$acapella" import-project "$work/none.acaproj.zip" --into "$project/takes"
attempt calibrate "$acapella" calibrate --device sim --store "$project/manifest.json"
attempt analyze "$acapella" analyze "$project" --svg "$project/takes/plot.svg"
cp Songs/simple-harmony.acasong "$work/mine.acasong"
attempt mix-over-input "$acapella" mix "$work/mine.acasong" -o "$work/mine.acasong"
after="$(cd "$project" && find . -type f ! -name .lock -print0 | sort -z | xargs -0 sha256sum)"
((refused == total)) && pass "$refused of $total writes into a project (or over the input) refused in one line"
[[ "$before" == "$after" ]] && pass "the project's files are as they were" || fail "the project changed: $(diff <(echo "$before") <(echo "$after") | head -4)"
cmp -s Songs/simple-harmony.acasong "$work/mine.acasong" && pass "the input song is untouched" || fail "the input song was overwritten"
fi

# The box in the simulated room with its page on a free port; sets $web,
# $code, $box, $boxlog. Waits until the page answers.
start_box() {  # NAME [SETTINGS-JSON] [DEVICE]
  local name="$1" settings="${2:-{\}}" device="${3:-sim:speed=1}"
  port=$((20000 + RANDOM % 20000))
  web="http://127.0.0.1:$port"
  boxlog="$work/$name.log"
  printf '%s' "$settings" > "$work/$name.json"
  "$acapella" run --config "$work/$name.json" --data "$work/$name" --device "$device" --web "$port" </dev/null >/dev/null 2>"$boxlog" &
  box=$!
  pids+=("$box")
  for _ in $(seq 100); do grep -q "pairing code" "$boxlog" 2>/dev/null && break; sleep 0.1; done
  code="$(grep -o 'pairing code [0-9]*' "$boxlog" | head -n 1 | grep -o '[0-9]*$' || true)"
  for _ in $(seq 50); do curl -s -o /dev/null "$web/" && break; sleep 0.1; done
}
# Pairs with the box; sets $cookies and $csrf.
pair() {
  cookies="$work/cookies-$RANDOM"
  curl -s -c "$cookies" -o /dev/null -X POST --data "$code" "$web/api/pair"
  csrf="$(curl -s -b "$cookies" "$web/api/state" | python3 -c 'import json,sys; print(json.load(sys.stdin)["csrf"])')"
}
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

if want numbers; then
echo "== numbers from outside: range-checked before any arithmetic (a paired page, the command line)"
start_box numbers
pair
got="$(status -b "$cookies" -H "X-CSRF-Token: $csrf" -X POST --data -9223372036854775808 "$web/api/take/1/nudge")"
[[ "$got" == 400 ]] && pass "a nudge of Int64.min: 400" || fail "a nudge of Int64.min: $got"
got="$(status -b "$cookies" "$web/download/practice-9223372036854775807.mp3")"
[[ "$got" == 404 ]] && pass "the practice track of part Int64.max: 404" || fail "practice Int64.max: $got"
got="$(status -b "$cookies" "$web/download/take-99999999999999999999.wav")"
[[ "$got" == 404 ]] && pass "a take id past Int64: 404" || fail "take id past Int64: $got"
got="$(curl -s -w ' %{http_code}' -b "$cookies" -H "X-CSRF-Token: $csrf" -X POST --data '0 63' "$web/api/choose")"
[[ "$got" == *"no part 64 in song 1"*" 404" ]] && pass "a part the song does not have is refused, not clamped: $got" || fail "choose 0 63: $got"
got="$(status -b "$cookies" -H "X-CSRF-Token: $csrf" -X POST --data '0 9999999999999999999999' "$web/api/choose")"
[[ "$got" == 400 ]] && pass "a part number past Int64: 400" || fail "choose past Int64: $got"
kill -0 "$box" 2>/dev/null && pass "the box is still up" || fail "the box died: $(tail -3 "$boxlog")"
kill -TERM "$box"; wait "$box" 2>/dev/null
project="$work/nudge.acaproj"
"$acapella" new "$project" --song Songs/simple-harmony.acasong >/dev/null
"$acapella" record "$project" --part Bass --device sim >/dev/null 2>&1
"$acapella" takes "$project" nudge 1 -9223372036854775808 > /dev/null 2> "$work/nudge.err"; got=$?
((got == 2)) && grep -q "within ±48000" "$work/nudge.err" && pass "takes nudge Int64.min: exit 2, one line" || fail "takes nudge Int64.min: exit $got: $(cat "$work/nudge.err")"
fi

if want children; then
echo "== the box's children: bounded, and gone with the box (the largest song the box takes: 8 parts x 6250 measures, 200000 notes)"
python3 Tools/make-big-song.py 8 6250 "$work/big.acasong"
big_settings="{ \"song\": \"$work/big.acasong\" }"
start_box children "$big_settings"
for _ in $(seq 100); do pgrep -f "page-score $work/children" >/dev/null && break; sleep 0.1; done
child="$(pgrep -f "page-score $work/children" | head -n 1)"
if [[ -n "$child" ]]; then
  limits="$(grep -E '^Max data size' /proc/$child/limits | awk '{print $4}')"
  [[ "$(cat /proc/$child/oom_score_adj)" == 500 ]] && pass "the engraver is the first the out-of-memory killer takes (oom_score_adj 500)" ||
    fail "the engraver's oom_score_adj: $(cat /proc/$child/oom_score_adj)"
  [[ "$limits" =~ ^[0-9]+$ ]] && pass "the engraver runs with a data limit of $((limits >> 20)) MB, CPU $(grep -E '^Max cpu time' /proc/$child/limits | awk '{print $4}') s, nice $(ps -o ni= -p "$child" | tr -d ' ')" ||
    fail "the engraver has no memory limit: $(grep -E 'data|cpu' /proc/$child/limits)"
  { kill -KILL "$box"; wait "$box"; } 2>/dev/null
  for _ in $(seq 20); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$child" 2>/dev/null && fail "the engraver outlived the box: $(ps -o pid,ppid,rss,cmd -p "$child")" || pass "the box killed (SIGKILL): its engraver went with it"
else
  fail "no engraver seen: $(tail -3 "$boxlog")"
  { kill -KILL "$box"; wait "$box"; } 2>/dev/null
fi
start_box children2 "$big_settings"
# The engraver runs at nice 10 with 120 s of CPU: on a loaded machine that can take longer in wall time.
for _ in $(seq 1800); do grep -q "could not be engraved\|web: the score engraved" "$boxlog" && break; sleep 0.1; done
if grep -q "could not be engraved: the engraver ran out of its" "$boxlog"; then
  pass "an engraving past its memory is stopped and said: $(grep -m1 -o 'could not be engraved: .*' "$boxlog")"
elif grep -q "web: the score engraved" "$boxlog"; then
  pass "the largest song engraved within the child's limits: $(grep -m1 -o 'web: the score engraved.*' "$boxlog")"
else
  fail "the engraving of the largest song: $(grep -m2 'web:' "$boxlog" | tail -1)"
fi
got="$(curl -s -o /dev/null -w '%{http_code}' "$web/")"
[[ "$got" == 200 ]] && kill -0 "$box" && pass "the box is up and serving meanwhile" || fail "the box: $got $(tail -2 "$boxlog")"
kill -TERM "$box"; wait "$box" 2>/dev/null
fi

if want signals; then
echo "== SIGQUIT during a take: finished and kept, no crash report"
project="$work/quit.acaproj"
"$acapella" new "$project" --song Songs/amazing-grace.acasong >/dev/null
"$acapella" record "$project" --part Alto --device sim:speed=1 --progress > "$work/quit.out" 2> "$work/quit.err" &
recorder=$!
for _ in $(seq 100); do grep -q "^captured [1-9]" "$work/quit.out" && break; sleep 0.1; done
sleep 5  # past the count-in
kill -QUIT "$recorder"; wait "$recorder"; got=$?
grep -q "^take 1  Alto  kept" "$work/quit.out" && ! grep -qi "crash\|backtrac" "$work/quit.err" && ((got == 0)) &&
  pass "SIGQUIT: exit $got, $(grep -m1 '^take' "$work/quit.out" | cut -c1-60)" || fail "SIGQUIT: exit $got: $(head -c 300 "$work/quit.err")"
fi

if want analysis; then
echo "== a 10-minute take analysed beside the box: in a process of its own, the box's memory unmoved"
python3 Tools/make-big-song.py 4 300 "$work/ten.acasong"
start_box analysis "{ \"song\": \"$work/ten.acasong\", \"countIn\": 0 }" sim:speed=20
pair
before_kb="$(awk '/^VmRSS/ { print $2 }' /proc/$box/status)"
curl -s -o /dev/null -b "$cookies" -H "X-CSRF-Token: $csrf" -X POST --data record "$web/api/action"
analyzer=""
for _ in $(seq 1200); do
  [[ -z "$analyzer" ]] && analyzer="$(pgrep -f "analyze $work/analysis/projects" | head -n 1)"
  grep -q "take 1: [0-9]*/100" "$boxlog" && break; sleep 0.1
done
peak_kb="$(awk '/^VmHWM/ { print $2 }' /proc/$box/status)"
if grep -q "take 1: [0-9]*/100" "$boxlog"; then
  pass "the take analysed: $(grep -m1 -o 'take 1: [0-9]*/100[^;]*' "$boxlog")"
  [[ -n "$analyzer" ]] && pass "in a process of its own (pid $analyzer, the box $box)" || fail "no analysing process was seen"
  ((peak_kb < 160000)) && pass "the box's peak memory with a 10-minute take analysed: $((peak_kb / 1024)) MB (at the start $((before_kb / 1024)) MB)" ||
    fail "the box peaked at $((peak_kb / 1024)) MB analysing a 10-minute take"
else
  fail "no analysis: $(grep -E 'take 1|analys' "$boxlog" | tail -3)"
fi
kill -TERM "$box"; wait "$box" 2>/dev/null
fi

if want limits; then
echo "== songs past what the box takes: refused in one line, in bounded memory; the largest it takes plays"
python3 Tools/make-big-song.py 65 2 "$work/parts65.acasong"
python3 Tools/make-big-song.py 8 6251 "$work/notes.acasong"
python3 Tools/make-big-song.py 1 10001 "$work/measures.acasong"
python3 Tools/make-big-song.py 64 20 "$work/parts64.acasong"
head -c 50000000 /dev/zero | tr '\0' ' ' > "$work/fifty.acasong"
refuse() {  # FILE EXPECTED-TEXT
  for command in check new run; do
    case $command in
      check) args=(check "$1") ;;
      new) rm -rf "$work/limit.acaproj"; args=(new "$work/limit.acaproj" --song "$1") ;;
      run) args=(run --song "$1" --data "$work/limitbox" --device sim --web off --seconds 2) ;;
    esac
    /usr/bin/time -f "%M" -o "$work/limit.kb" "$acapella" "${args[@]}" </dev/null >/dev/null 2> "$work/limit.err"; local got=$?
    local peak; peak="$(tail -n 1 "$work/limit.kb")"
    if ((got != 0)) && grep -q "$2" "$work/limit.err" && ((peak < 200000)); then
      pass "$command $(basename "$1"): refused ($(grep -m1 "$2" "$work/limit.err" | sed 's/^acapella[^:]*: //' | cut -c1-110)), peak $((peak / 1024)) MB"
    else
      fail "$command $(basename "$1"): exit $got, peak $((peak / 1024)) MB: $(grep -v '^acapella: \(MIDI\|GPIO\|LCD\)' "$work/limit.err" | head -c 300)"
    fi
  done
}
refuse "$work/parts65.acasong" "more than 64 parts"
refuse "$work/notes.acasong" "more than 200000 notes"
refuse "$work/measures.acasong" "10001 measures; the box takes 10000 at most"
refuse "$work/fifty.acasong" "a song file is 16 MB at most"
"$acapella" run --song "$work/parts64.acasong" --data "$work/p64" --device sim:speed=1 --web off --seconds 6 --play </dev/null 2> "$work/p64.err" >/dev/null
# What this checks is that the largest song the box takes plays, every period rendered, with its
# typical period's work well inside the period. The tail (p99.9) on a shared CI machine is the
# machine's preemption, not the box's work: it is reported here and measured by `acapella-bench render --parts 64`.
periods="$(sed -n 's/.*render: \([0-9]*\) periods, median \([0-9]*\) µs.*/\1/p' "$work/p64.err")"
median="$(sed -n 's/.*render: [0-9]* periods, median \([0-9]*\) µs, p99.9 [0-9]* µs = [0-9.]* % of a \([0-9]*\) µs period.*/\1 \2/p' "$work/p64.err")"
if [[ -n "$periods" && -n "$median" ]] && ((periods >= 2000)) && awk -v m="${median% *}" -v p="${median#* }" 'BEGIN { exit !(m < p / 4) }'; then
  pass "64 parts play: $(grep -o 'render: .*over the period' "$work/p64.err") (the median's share is the check; the tail is the machine's)"
else
  fail "64 parts: $(grep -E 'render|error' "$work/p64.err" | head -2)"
fi
fi

if want paths; then
echo "== paths from files confined: a manifest's '..', a take that is a link or a FIFO, a bundle bomb, a big bundle, a hostile USB stick"
data="$work/pathdata"
mkdir -p "$data/projects"
project="$data/projects/p.acaproj"
"$acapella" new "$project" --song Songs/simple-harmony.acasong >/dev/null
"$acapella" record "$project" --part Bass --device sim >/dev/null 2>&1
"$acapella" record "$project" --part Soprano --device sim >/dev/null 2>&1
echo '{ "midi": { "connect": "all" } }' > "$data/controls.json"
controls_before="$(sha256sum < "$data/controls.json")"
# Take 2's record now names a file three folders up: its sidecar would be the data directory's controls.json.
python3 - "$project/manifest.json" <<'PY'
import json, sys
path = sys.argv[1]
manifest = json.load(open(path))
manifest["takes"][1]["file"] = "takes/../../../controls.wav"
json.dump(manifest, open(path, "w"), indent=2)
PY
for change in "gain 2 -3" "activate 2" "nudge 2 10" "delete 2" "gain 1 -2"; do
  "$acapella" takes "$project" $change > /dev/null 2>> "$work/paths.err"
done
[[ "$(sha256sum < "$data/controls.json")" == "$controls_before" ]] && [[ ! -e "$data/controls.json.tmp" ]] &&
  pass "record changes to a take whose file says '../../..': nothing written outside the project ($(grep -m1 'not a file in the project' "$work/paths.err" | cut -c1-120))" ||
  fail "the data directory's controls.json changed: $(cat "$data/controls.json" | head -c 200)"
"$acapella" run --data "$data" --device sim --web off --seconds 2 </dev/null >/dev/null 2> "$work/paths-box.err" && pass "the box still starts on that data directory" ||
  fail "the box: $(tail -2 "$work/paths-box.err")"
# The same manifest in a bundle: refused on import.
mkdir -p "$work/bundle/p.acaproj/takes" "$work/into"
cp "$project/manifest.json" "$project/score.acasong" "$work/bundle/p.acaproj/"
cp "$project"/takes/*.wav "$work/bundle/p.acaproj/takes/"
(cd "$work/bundle" && python3 -m zipfile -c "$work/hostile.acaproj.zip" p.acaproj >/dev/null)
"$acapella" import-project "$work/hostile.acaproj.zip" --into "$work/into" > /dev/null 2> "$work/import.err"; got=$?
((got == 1)) && [[ -z "$(ls -A "$work/into")" ]] && pass "a bundle whose manifest names a file outside its takes: refused, nothing unpacked ($(cut -c1-140 "$work/import.err"))" ||
  fail "hostile bundle: exit $got, $(ls -A "$work/into"): $(cat "$work/import.err")"
# A take file that is a link out of the project, and one that is a FIFO.
second="$data/projects/q.acaproj"
"$acapella" new "$second" --song Songs/simple-harmony.acasong >/dev/null
"$acapella" record "$second" --part Bass --device sim >/dev/null 2>&1
"$acapella" record "$second" --part Soprano --device sim >/dev/null 2>&1
bass="$(ls "$second"/takes/bass-*.wav)"; alto="$(ls "$second"/takes/soprano-*.wav)"
cp "$bass" "$work/outside.wav"; rm "$bass"; ln -s "$work/outside.wav" "$bass"
rm "$alto"; mkfifo "$alto"
timeout 20 "$acapella" takes "$second" > "$work/q.out" 2> "$work/q.err"; got=$?
((got == 0)) && grep -q "symbolic link" "$work/q.err" && grep -q "not a plain file" "$work/q.err" &&
  pass "a take that is a link, and one that is a FIFO: left out and said, nothing hangs ($(grep -m1 -o 'is a symbolic link[^;]*' "$work/q.err"))" ||
  fail "link and FIFO takes: exit $got: $(cat "$work/q.err" | head -c 400)"
timeout 60 "$acapella" mix "$second" -o "$work/q.wav" > /dev/null 2> "$work/qmix.err"
grep -q "left out" "$work/qmix.err" && pass "the mix leaves them out and says so" || fail "mix of link/FIFO takes: $(head -c 300 "$work/qmix.err")"
# A bundle bomb: a 200 MB take of zeros, deflated to a few hundred KB.
mkdir -p "$work/bomb/b.acaproj/takes" "$work/into2"
cp "$project/score.acasong" "$work/bomb/b.acaproj/"
python3 - "$work/bomb" <<'PY'
import json, sys, zipfile, struct
root = sys.argv[1]
rate, frames = 48000, 50_000_000
header = b"RIFF" + struct.pack("<I", 36 + frames * 4) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 3, 1, rate, rate * 4, 4, 32) + b"data" + struct.pack("<I", frames * 4)
manifest = {"format": "acaproj", "version": 1, "song": "score.acasong", "sampleRate": rate, "nextTakeID": 2, "takes": [
    {"id": 1, "part": "Bass", "file": "takes/bass-1.wav", "alignmentOffsetSamples": 0, "nudgeSamples": 0, "tempoScale": "1", "transpose": 0,
     "sampleRate": rate, "state": "kept", "active": True, "frames": frames, "dropouts": []}]}
with zipfile.ZipFile(root + "/bomb.acaproj.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("b.acaproj/manifest.json", json.dumps(manifest))
    z.write(root + "/b.acaproj/score.acasong", "b.acaproj/score.acasong")
    with z.open("b.acaproj/takes/bass-1.wav", "w", force_zip64=True) as member:
        member.write(header)
        zeros = bytes(1 << 20)
        for _ in range(frames * 4 >> 20): member.write(zeros)
PY
bytes="$(stat -c %s "$work/bomb/bomb.acaproj.zip")"
/usr/bin/time -f "%e %M" -o "$work/bomb.time" "$acapella" import-project "$work/bomb/bomb.acaproj.zip" --into "$work/into2" > /dev/null 2> "$work/bomb.err"; got=$?
((got == 1)) && grep -q "more than any recording of the song could be" "$work/bomb.err" && [[ -z "$(ls -A "$work/into2")" ]] &&
  pass "a $((bytes >> 10)) KB bundle that unpacks to a 200 MB take of a 9-second song: refused before unpacking ($(cut -c1-150 "$work/bomb.err"); $(tail -n 1 "$work/bomb.time" | awk '{print $1 " s, " int($2/1024) " MB"}'))" ||
  fail "bundle bomb: exit $got: $(cat "$work/bomb.err")"
# A project of 10,001 takes: exported, and imported back.
big="$work/many/many.acaproj"
mkdir -p "$work/many" "$work/into3"
"$acapella" new "$big" --song Songs/simple-harmony.acasong >/dev/null
python3 - "$big" <<'PY'
import json, sys, struct
root = sys.argv[1]
rate, frames = 48000, 48
data = struct.pack("<" + "f" * frames, *([0.0] * frames))
header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 3, 1, rate, rate * 4, 4, 32) + b"data" + struct.pack("<I", len(data))
manifest = json.load(open(root + "/manifest.json"))
takes = []
for n in range(1, 10_002):
    name = f"takes/bass-{n}.wav"
    open(root + "/" + name, "wb").write(header + data)
    takes.append({"id": n, "part": "Bass", "file": name, "alignmentOffsetSamples": 0, "nudgeSamples": 0, "tempoScale": "1", "transpose": 0,
                  "sampleRate": rate, "state": "discarded", "active": False, "frames": frames, "dropouts": []})
manifest["takes"] = takes
manifest["nextTakeID"] = 10_002
json.dump(manifest, open(root + "/manifest.json", "w"))
PY
if "$acapella" export "$big" -o "$work/many.acaproj.zip" > /dev/null 2> "$work/many.err" &&
   "$acapella" import-project "$work/many.acaproj.zip" --into "$work/into3" > /dev/null 2>> "$work/many.err"; then
  count="$("$acapella" takes "$work/into3/many.acaproj" 2>/dev/null | grep -c '^take ')"
  ((count == 10001)) && pass "a 10,001-take project exported and imported back: $count takes" || fail "10,001 takes imported as $count"
else
  fail "the 10,001-take bundle: $(tail -2 "$work/many.err")"
fi
# A hostile USB stick: a song that is a link to a secret, an export folder that is a link out of the stick.
stick="$work/stick"
mkdir -p "$stick/acapella/songs" "$work/elsewhere" "$work/usbdata/projects"
echo "the box's secret" > "$work/secret.txt"
ln -s "$work/secret.txt" "$stick/acapella/songs/leak.acasong"
ln -s "$work/elsewhere" "$stick/acapella/export"
cp -r "$second" "$work/usbdata/projects/" 2>/dev/null; rm -rf "$work/usbdata/projects/q.acaproj"; cp -r "$project" "$work/usbdata/projects/"
"$acapella" usb "$stick" --data "$work/usbdata" > /dev/null 2> "$work/usb.err"; got=$?
[[ -z "$(ls -A "$work/elsewhere")" ]] && ! grep -rqs "secret" "$work/usbdata/songs" && ((got == 1)) && grep -q "export is a symbolic link" "$work/usb.err" &&
  pass "a stick's export folder that is a link out of it: refused, nothing written there; its linked song not copied" || fail "hostile stick: exit $got, elsewhere: $(ls -A "$work/elsewhere"), $(cat "$work/usb.err")"
rm "$stick/acapella/export"
"$acapella" usb "$stick" --data "$work/usbdata" > /dev/null 2> "$work/usb2.err"; got=$?
((got == 0)) && grep -q "songs/leak.acasong: a link or not a plain file; not copied" "$work/usb2.err" && ! grep -rqs "secret" "$work/usbdata/songs" &&
  pass "the export done, the linked song said and left alone" || fail "stick without the export link: exit $got: $(cat "$work/usb2.err")"
fi

if want escapes; then
echo "== terminal escapes and control characters: never raw in a log, never in an SVG, never in a project's name"
esc="$(printf '\033')"
python3 - "$work/escape.musicxml" <<'PY'
import sys
# XML 1.0 holds no ESC, but it holds C1 controls (U+009B is a terminal's CSI) and direction overrides.
title = "Hymn\u009b2J \u202eevil"
open(sys.argv[1], "w", encoding="utf-8").write(f"""<?xml version="1.0" encoding="UTF-8"?>
<score-partwise version="3.1"><work><work-title>{title}</work-title></work>
<part-list><score-part id="P1"><part-name>Sop\u009b31mrano</part-name></score-part></part-list>
<part id="P1"><measure number="1"><attributes><divisions>1</divisions><time><beats>4</beats><beat-type>4</beat-type></time>
<clef><sign>G</sign><line>2</line></clef></attributes>
<note><pitch><step>C</step><octave>4</octave></pitch><duration>4</duration><type>whole</type><lyric><text>la\u202e</text></lyric></note>
</measure></part></score-partwise>""")
PY
"$acapella" import "$work/escape.musicxml" -o "$work/escape.acasong" > /dev/null 2> "$work/escape.err"; got=$?
((got == 0)) && python3 -c 'import sys; t = open(sys.argv[1], encoding="utf-8").read(); sys.exit(any(0x80 <= ord(c) <= 0x9f or ord(c) == 0x202e for c in t))' "$work/escape.acasong" &&
  pass "MusicXML with escapes in its title, part name and words: imported without them ($(grep -m1 '^title' "$work/escape.acasong"))" ||
  fail "escape import: exit $got $(cat "$work/escape.err") $(cat -v "$work/escape.acasong" | head -3)"
"$acapella" engrave "$work/escape.musicxml" -o "$work/escape.svg" > /dev/null 2>&1
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$work/escape.svg" 2> "$work/svg.err" && pass "its engraved SVG is well-formed XML" || fail "the SVG: $(head -c 300 "$work/svg.err")"
named="$work/song${esc}]2;pwned$(printf '\007')${esc}[31m.acasong"
cp Songs/simple-harmony.acasong "$named"
"$acapella" run --song "$named" --data "$work/escbox" --device sim --web off --seconds 2 </dev/null > "$work/escbox.out" 2> "$work/escbox.err"
! grep -q "$esc" "$work/escbox.err" && grep -q "ready:" "$work/escbox.err" && pass "a song whose file name carries escapes: none raw in the box's log ($(grep -m1 -o 'project [^;]*' "$work/escbox.err"))" ||
  fail "the box's log: $(cat -v "$work/escbox.err" | head -5)"
"$acapella" check "$named" > /dev/null 2> "$work/esccheck.err"
"$acapella" check "$work/none${esc}[2J.acasong" > /dev/null 2> "$work/esccheck.err"
! grep -q "$esc" "$work/esccheck.err" && pass "an error naming such a file shows the escape: $(cut -c1-80 "$work/esccheck.err")" || fail "check's error: $(cat -v "$work/esccheck.err")"
for name in "$(printf 'bad\nname')" "$(printf 'r\xe2\x80\xaeev')" "$(printf 'x\033[2Jy')"; do
  "$acapella" new "$work/$name.acaproj" --song Songs/simple-harmony.acasong > /dev/null 2> "$work/name.err"; got=$?
  ((got == 1)) && grep -q "may not contain a line break or another control character" "$work/name.err" && [[ ! -e "$work/$name.acaproj" ]] ||
    fail "project name $(printf '%q' "$name"): exit $got: $(cat -v "$work/name.err")"
done
pass "project names with a line break, a right-to-left override or an escape: refused"
fi

if want identity; then
echo "== a take never lands in another song's project: Amazing Grace's project Yak with a take, then a song whose first project would be Yak's folder arrives as a sync brings it, and the box starts again"
start_box identity '{ "countIn": 0 }' sim:speed=20
pair
api() { curl -s -w ' %{http_code}' -b "$cookies" -H "X-CSRF-Token: $csrf" -X POST --data-binary "$2" "$web/api/$1"; }
yak="$work/identity/projects/amazing-grace (Yak).acaproj"
opened="$(grep -c 'ready:' "$boxlog")"
got="$(api project/new Yak)"
[[ "$got" == *" 200" ]] && pass "Yak made on Amazing Grace: $got" || fail "project/new Yak: $got"
for _ in $(seq 100); do (($(grep -c 'ready:' "$boxlog") > opened)) && break; sleep 0.1; done
kept_in() { python3 -c 'import json,sys; print(sum(1 for t in json.load(open(sys.argv[1]))["takes"] if t["state"] == "kept"))' "$1/manifest.json" 2>/dev/null; }
api action record >/dev/null
for _ in $(seq 300); do [[ "$(kept_in "$yak")" == 1 ]] && break; sleep 0.1; done
[[ "$(kept_in "$yak")" == 1 ]] && pass "a take sung into Yak" || fail "Yak's takes: $(kept_in "$yak") ($(tail -2 "$boxlog"))"
api action record >/dev/null
for _ in $(seq 50); do [[ "$(curl -s -b "$cookies" "$web/api/state")" == *'"state":"recording"'* ]] && break; sleep 0.1; done
got="$(api choose '1 0')"
[[ "$got" == *"a take is being recorded: stop first"*" 409" ]] && pass "another song chosen during a take: refused ($got)" || fail "choose during a take: $got"
api action stop >/dev/null
sed 's/^title: .*/title: Yak Song/' Songs/row-row-row-your-boat.acasong > "$work/identity/songs/.arriving"
mv "$work/identity/songs/.arriving" "$work/identity/songs/amazing-grace (Yak).acasong"
for _ in $(seq 100); do grep -q "not in the library" "$boxlog" && break; sleep 0.1; done
grep -q "amazing-grace (Yak).acasong: its takes would go into projects/amazing-grace (Yak).acaproj, which holds the takes of amazing-grace.acasong's project 'Yak'" "$boxlog" &&
  pass "the arriving song is not offered, said: $(grep -m1 -o 'its takes would go into.*' "$boxlog" | cut -c1-90)…" || fail "the arrival: $(tail -3 "$boxlog")"
songs="$(curl -s -b "$cookies" "$web/api/library" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["songs"]))')"
[[ "$songs" == "$(ls Songs/*.acasong | wc -l)" ]] && pass "the library still lists $songs songs" || fail "the library lists $songs songs"
# The project names that cannot be told apart, or do not fit: refused in words.
got="$(api project/new "$(printf '\xef\xbc\xb9ak')")"
[[ "$got" == *"already has a project called 'Yak'"*" 422" ]] && pass "a fullwidth Ｙak beside Yak: $got" || fail "fullwidth Yak: $got"
got="$(api project/new "A$(for _ in $(seq 39); do printf '\xcc\x81'; done)")"
[[ "$got" == *"more than 8 marks"*" 422" ]] && pass "A under 39 accents: refused" || fail "A with 39 accents: $got"
got="$(api take/1/name "$(printf 'x%.0s' $(seq 61))")"
[[ "$got" == *"a take's name is 60 characters at most"*" 400" ]] && pass "a take name of 61 characters: $got" || fail "take name of 61: $got"
got="$(api take/1/name "$(printf 'ab\xe2\x80\xaecd')")"
[[ "$got" == *"does not show (U+202E)"*" 400" ]] && pass "a take name with a direction override: $got" || fail "take name U+202E: $got"
got="$(api song/0/title "$(printf '\xef\xbb\xbf')")"
[[ "$got" == *"a title holds a character that does not show (U+FEFF)"*" 400" ]] && pass "a title of a byte-order mark alone: $got" || fail "title U+FEFF: $got"
live="$(awk '$6 == "acapella-session" { print $7 }' "$cookies")"
got="$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: acapella-session=stale; acapella-session=$live" "$web/api/state")"
[[ "$got" == 200 ]] && pass "a stale session cookie before the live one: served" || fail "two cookies: $got"
kill -TERM "$box"; wait "$box" 2>/dev/null
start_box identity '{ "countIn": 0 }' sim:speed=20
grep -q "amazing-grace (Yak).acasong: its takes would go into.*not in the library" "$boxlog" && pass "started again: not offered, said" || fail "restart: $(grep -i yak "$boxlog" | head -2)"
kill -TERM "$box"; wait "$box" 2>/dev/null
folders="$(ls "$work/identity/projects" | grep acaproj | tr '\n' '|')"
[[ "$folders" == "amazing-grace (Yak).acaproj|amazing-grace.acaproj|" ]] && pass "no project made for the arriving song: $folders" || fail "projects: $folders"
kept="$(kept_in "$yak")"
[[ "$kept" -ge 1 ]] && [[ "$(cat "$yak/song.txt")" == amazing-grace.acasong ]] && pass "Yak holds Amazing Grace's takes only ($kept), marked as Amazing Grace's" || fail "Yak: $kept takes, mark $(cat "$yak/song.txt")"
fi

if want web; then
echo "== the page attacked: the code guessed from thousands of addresses, big bodies from unpaired clients, slow connections, idle event streams, other hosts' names"
if [[ "$(id -u)" == 0 ]] && command -v ip >/dev/null; then
  # Addresses on the loopback interface: the singer's phone, and 20 attackers (client groups of their own).
  ip addr add 10.98.0.1/32 dev lo 2>/dev/null
  for n in $(seq 20); do ip addr add "10.99.0.$n/32" dev lo 2>/dev/null; done
  trap 'ip addr del 10.98.0.1/32 dev lo 2>/dev/null; for n in $(seq 20); do ip addr del "10.99.0.$n/32" dev lo 2>/dev/null; done; for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done; rm -rf "$work"' EXIT
  start_box web '{ "web": { "guests": "view" } }'
  python3 Tests/web/attacks.py "$web" "$code" "$box" "$boxlog" 10.98.0.1 $(seq -f '10.99.0.%g' 20) || failed=1
  kill -0 "$box" 2>/dev/null && pass "the box is still up" || fail "the box died: $(tail -3 "$boxlog")"
  kill -TERM "$box"; wait "$box" 2>/dev/null
else
  echo "web attacks SKIPPED: they need root (addresses of their own on the loopback interface, ip from iproute2)" | tee -a "${ACAPELLA_SKIPS:-/dev/null}"
fi
fi

if want messages; then
echo "== messages that say what happened, once, in the user's terms"
printf '<score-partwise><part-list>' > "$work/broken.musicxml"
lines="$("$acapella" check "$work/broken.musicxml" 2>&1 >/dev/null | wc -l)"
((lines == 1)) && pass "check says a MusicXML error once" || fail "check said it $lines times"
python3 -c "print('acasong 1\npart A\n' + '3(' * 200 + 'C4 8' + ')' * 200)" > "$work/nest.acasong"
lines="$("$acapella" check "$work/nest.acasong" 2>&1 >/dev/null | wc -l)"
((lines == 1)) && pass "a tuplet nest 200 deep: one error" || fail "a deep tuplet nest: $lines errors"
printf '{ "web": { "name": false, "bind": "127.0.0.1", "port": %d } }' "$((20000 + RANDOM % 20000))" > "$work/loopback.json"
"$acapella" run --config "$work/loopback.json" --data "$work/loopback" --device sim --seconds 1 </dev/null >/dev/null 2> "$work/loopback.err"
grep -q "web: http://127.0.0.1:" "$work/loopback.err" && ! grep -q "\.local" "$work/loopback.err" &&
  pass "name false, bound to the loopback: $(grep -o 'web: http[^ ]*' "$work/loopback.err")" || fail "loopback bind: $(grep web "$work/loopback.err")"
mkdir -p "$work/bad/x.acaproj/takes" "$work/badinto"
printf '{"format":"acaproj","version":1,"song":"score.acasong","sampleRate":48000,"takes":[]}' > "$work/bad/x.acaproj/manifest.json"
printf 'acasong 1\npart A\nC4 1\n' > "$work/bad/x.acaproj/score.acasong"
printf 'nonsense' > "$work/bad/x.acaproj/takes/a-1.json"
printf 'RIFF' > "$work/bad/x.acaproj/takes/a-1.wav"
(cd "$work/bad" && python3 -m zipfile -c "$work/bad.acaproj.zip" x.acaproj >/dev/null)
"$acapella" import-project "$work/bad.acaproj.zip" --into "$work/badinto" > /dev/null 2> "$work/bad.err"
! grep -q "importing-" "$work/bad.err" && pass "an import's message names no hidden folder that is gone: $(head -c 160 "$work/bad.err" | head -n 1)" || fail "import message: $(cat "$work/bad.err")"
fi

rm -rf "$work"
exit $failed
