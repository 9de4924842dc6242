#!/usr/bin/env bash
# End-to-end checks of the acapella command line: exit codes, the exact
# one-line error format, JSON output, help on every command.
# Usage: Tests/cli-tests.sh PATH/TO/acapella
set -uo pipefail
acapella="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$(dirname "$0")/.."
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

expect "check library" 0 "$acapella" check Songs/*.acasong &&
  check "check library output" contains "$out" "Songs/simple-harmony.acasong: ok — 2 parts, 3 measures"

printf 'acasong 1\ntime: 3/4\npart Soprano [treble]\nC4 4 D4 4 | E4 2. |\n' >"$work/bad.acasong"
expect "check bad song" 1 "$acapella" check "$work/bad.acasong" &&
  check "error line format" equals "$err" "$work/bad.acasong:4:11: error: barline check failed: measure 1 has only 2/4 of its 3/4 (measure 1)"

expect "dump bad song" 1 "$acapella" dump "$work/bad.acasong" &&
  check "dump error is the located line only" equals "$err" "$work/bad.acasong:4:11: error: barline check failed: measure 1 has only 2/4 of its 3/4 (measure 1)"

expect "check missing file" 1 "$acapella" check "$work/none.acasong" &&
  check "missing file message" equals "$err" "$work/none.acasong: no such file"

expect "check directory" 1 "$acapella" check "$work" &&
  check "directory message" contains "$err" "is a directory"

head -c 4096 /dev/urandom >"$work/garbage.acasong"
expect "check garbage" 1 "$acapella" check "$work/garbage.acasong" &&
  check "garbage is one line" equals "$(wc -l <<<"$err")" "1"

truncate -s 17M "$work/huge.acasong"
expect "check huge file" 1 "$acapella" check "$work/huge.acasong" &&
  check "huge file message" contains "$err" "17 MB; a song file is 16 MB at most"

expect "check mixed" 1 "$acapella" check Songs/simple-harmony.acasong "$work/bad.acasong" &&
  check "mixed reports both" contains "$out" "simple-harmony.acasong: ok"

expect "dump json" 0 "$acapella" dump --json Songs/simple-harmony.acasong &&
  check "dump has ppq" contains "$out" '"ppq":960' &&
  check "dump has tempo map" contains "$out" '"tempoMap":[{"tick":0,"bpm":80},{"tick":7680,"bpm":92}]'
if command -v python3 >/dev/null 2>&1; then
  "$acapella" dump --json Songs/row-row-row-your-boat.acasong >"$work/dump.json"
  check "dump is valid JSON" python3 -c "import json,sys; d=json.load(open('$work/dump.json')); assert d['parts'][0]['notes'][0]['pitch']=='C4'"
fi

expect "format is canonical" 0 "$acapella" format Songs/simple-harmony.acasong &&
  check "format output equals the file" equals "$out" "$(cat Songs/simple-harmony.acasong)"

cp Tests/AcapellaScoreTests/Fixtures/all-forms.acasong "$work/forms.acasong"
expect "format --write" 0 "$acapella" format --write "$work/forms.acasong" &&
  check "rewritten file is the golden" equals "$(cat "$work/forms.acasong")" "$(cat Tests/AcapellaScoreTests/Golden/all-forms.canonical.acasong)"

expect "info" 0 "$acapella" info Songs/simple-harmony.acasong &&
  check "info length" contains "$out" "length 0:08.6 = 413217 samples at 48000 Hz"

mx=../shared/data/musicxml
if [[ -d "$mx" ]]; then
  expect "import to file" 0 "$acapella" import "$mx/bach_bwv66.6.mxl" -o "$work/bwv66.acasong" &&
    check "import report on stderr" contains "$err" "bach_bwv66.6.mxl: fermatas ignored ×6, first at measure 1" &&
    check "import wrote a file" contains "$err" "wrote $work/bwv66.acasong: 4 parts, 9 measures"
  expect "imported song checks" 0 "$acapella" check "$work/bwv66.acasong"
  expect "import to stdout" 0 "$acapella" import "$mx/demos_two-voices.xml" &&
    check "stdout is acasong" contains "$out" "acasong 1"
  expect "import chosen parts" 0 "$acapella" import --parts "Bass, Soprano" "$mx/bach_bwv66.6.mxl" &&
    check "parts in the asked order" equals "$(grep '^part ' <<<"$out")" "$(printf 'part Bass (B.) [bass]\npart Soprano (S.) [treble]')"
  expect "import unknown part" 1 "$acapella" import --parts Descant "$mx/bach_bwv66.6.mxl" &&
    check "unknown part message" contains "$err" "no part named 'Descant'; the parts are: Soprano, Alto, Tenor, Bass"
  expect "dump MusicXML" 0 "$acapella" dump --json "$mx/bach_bwv66.6.mxl" && check "dump of MusicXML" contains "$out" '"pickupTicks":960'
  expect "check MusicXML" 0 "$acapella" check "$mx/lusitano_allor_che_ignuda.mxl"
  printf '<score-partwise>\n<part-list>\n<oops></part-list>\n</score-partwise>\n' >"$work/broken.musicxml"
  expect "import broken XML" 1 "$acapella" import "$work/broken.musicxml" &&
    check "broken XML message" equals "$err" "$work/broken.musicxml:3:9: error: malformed XML (an end tag does not match its start tag)"
else
  echo "cli: ../shared/data/musicxml not found; import checks skipped" >&2
fi

expect "mix wav" 0 "$acapella" mix Songs/amazing-grace.acasong -o "$work/ag.wav" &&
  check "mix reports loudness" contains "$out" "-16.0 LUFS integrated" &&
  check "mix wrote a file" test -s "$work/ag.wav"
expect "mix practice flac, slower, transposed" 0 "$acapella" mix Songs/my-bonnie.acasong -o "$work/bonnie.flac" --practice lead --tempo 0.9 --transpose -2 --lufs -18 &&
  check "mix honours --lufs" contains "$out" "-18.0 LUFS integrated"
expect "mix every verse" 0 "$acapella" mix Songs/amazing-grace.acasong -o "$work/ag-all.wav" --verse all &&
  check "mix sings both verses" contains "$out" "1:11.8, -16.0 LUFS integrated" &&
  check "mix says the verses" contains "$out" ", 2 verses" &&
  check "timed words beside the mix" equals "$(sed -n '6p' "$work/ag-all.lrc")" "[00:35.83]'Twas grace that taught my heart to fear,"
expect "mix verse 2" 0 "$acapella" mix Songs/amazing-grace.acasong -o "$work/ag2.wav" --verse 2 &&
  check "verse 2 words" equals "$(sed -n '2p' "$work/ag2.lrc")" "[00:00.00]'Twas grace that taught my heart to fear,"
expect "export-lrc verse 2" 0 "$acapella" export-lrc Songs/amazing-grace.acasong -o "$work/ag2-words.lrc" --verse 2 &&
  check "export-lrc says what it wrote" equals "$out" "wrote $work/ag2-words.lrc: 4 lines, 28 syllables stamped, verse 2 of Soprano" &&
  check "every syllable stamped to the millisecond" equals "$(sed -n '3p' "$work/ag2-words.lrc")" "[00:00.000]<00:00.000>'Twas <00:00.833>grace <00:02.500>that <00:03.333>taught <00:05.000>my <00:05.833>heart <00:07.500>to <00:08.333>fear,"
expect "export-lrc lines only, slower" 0 "$acapella" export-lrc Songs/amazing-grace.acasong -o "$work/ag-lines.lrc" --lines-only --tempo 0.9 --part alto &&
  check "lines without word stamps, at the slower tempo" equals "$(sed -n '4p' "$work/ag-lines.lrc")" "[00:11.111]that saved a wretch like me I once"
expect "export-lrc verse past the last" 1 "$acapella" export-lrc Songs/amazing-grace.acasong -o "$work/x.lrc" --verse 3 &&
  check "export-lrc verse message" equals "$err" "acapella export-lrc: error: Songs/amazing-grace.acasong: has 2 verses; --verse 3 names none"
expect "mix verse past the last" 1 "$acapella" mix Songs/amazing-grace.acasong -o "$work/x.wav" --verse 3 &&
  check "verse message" equals "$err" "acapella mix: error: Songs/amazing-grace.acasong: the song has 2 verses; --verse expects 1–2 or all"
expect "mix bad verse" 2 "$acapella" mix Songs/amazing-grace.acasong -o "$work/x.wav" --verse second &&
  check "bad verse message" contains "$err" "--verse expects a verse number or all, not 'second'"
expect "engrave a song" 0 "$acapella" engrave Songs/amazing-grace.acasong -o "$work/ag.svg" --timemap "$work/ag-time.json" &&
  check "engrave says what it drew" equals "$out" "wrote $work/ag.svg: 2 systems, 116 notes, 4 parts" &&
  check "an SVG with every note and rest a group" equals "$(grep -c '<g id="n[0-9]*-[0-9]*" class="note"' "$work/ag.svg")" "120" &&
  check "the time map is JSON" python3 -c "import json; t=json.load(open('$work/ag-time.json')); assert t[1]['tick']==960 and t[1]['sample']==40000, t[1]"
expect "engrave one part, verse 2" 0 "$acapella" engrave Songs/amazing-grace.acasong -o "$work/alto.svg" --part Alto --verse 2 --highlight Alto &&
  check "one part" equals "$out" "wrote $work/alto.svg: 2 systems, 28 notes, 1 part" &&
  check "verse 2 words only" equals "$(grep -c '>.Twas<' "$work/alto.svg"),$(grep -c '>A<' "$work/alto.svg")" "1,0" &&
  check "the part in colour" contains "$(cat "$work/alto.svg")" 'class="highlight" data-part="Alto"'

expect "engrave to PDF" 0 "$acapella" engrave Songs/lift-every-voice-and-sing.acasong -o "$work/lift.pdf" &&
  check "engrave says the pages" equals "$out" "wrote $work/lift.pdf: 6 systems, 398 notes, 4 parts, 3 pages" &&
  check "a PDF" equals "$(head -c 5 "$work/lift.pdf")" "%PDF-" &&
  check "three A4 pages" equals "$(grep -a -c 'MediaBox \[ 0 0 595.275591 841.889764' "$work/lift.pdf")" "3"
expect "engrave closed score" 0 "$acapella" engrave Songs/amazing-grace.acasong -o "$work/closed.svg" --closed &&
  check "two staves a system, all notes" equals "$out" "wrote $work/closed.svg: 2 systems, 116 notes, 4 parts" &&
  check "one line of words (two verses) between the staves" equals "$(grep -c '>grace<' "$work/closed.svg")" "4"
expect "engrave to another format" 2 "$acapella" engrave Songs/amazing-grace.acasong -o "$work/ag.png" &&
  check "format message" contains "$err" "engrave writes .svg (for the screen) or .pdf (pages to print)"
expect "page-score" 0 "$acapella" page-score Songs/amazing-grace.acasong --part Alto --out "$work/page" --width 100 &&
  check "page-score says what it made and its peak" contains "$out" "engraved: " &&
  check "page-score's SVG, compressed, highlights the part (a group a system)" equals "$(gzip -dc "$work/page/score.svg.gz" | grep -c 'class="highlight"')" "5" &&
  check "page-score's time map" contains "$(head -c 200 "$work/page/timemap.json")" '"onsets"'
expect "page-score unknown part" 2 "$acapella" page-score Songs/amazing-grace.acasong --part Descant --out "$work/page" &&
  check "page-score part message" contains "$err" "no part named 'Descant'; the parts are: Soprano, Alto, Tenor, Bass"
expect "engrave unknown part" 1 "$acapella" engrave Songs/amazing-grace.acasong -o "$work/x.svg" --part Descant &&
  check "engrave part message" contains "$err" "no part named 'Descant'; the parts are: Soprano, Alto, Tenor, Bass"
# The web page: the box in the simulated room serving on a free port.
webport=$((20000 + RANDOM % 20000))
# A song text left by an engraving killed midway: removed when the cache is pruned.
mkdir -p "$work/webbox/cache/page" && echo "acasong 1" >"$work/webbox/cache/page/deadbeef-wide.acasong"
"$acapella" run --data "$work/webbox" --seconds 12 --device sim:speed=1 --web "$webport" --play >"$work/web.out" 2>"$work/web.err" &
webbox=$!
for _ in $(seq 50); do grep -q "pairing code" "$work/web.err" 2>/dev/null && break; sleep 0.2; done
code="$(grep -o 'pairing code [0-9]*' "$work/web.err" | grep -o '[0-9]*$' || true)"
check "the box says its address and pairing code" contains "$(cat "$work/web.err")" "web: http://acapella.local:$webport/ — pairing code "
web="http://127.0.0.1:$webport"
check "the page" equals "$(curl -s -o /dev/null -w '%{http_code}' "$web/")" "200"
check "state before pairing is refused" equals "$(curl -s -o /dev/null -w '%{http_code}' "$web/api/state")" "401"
check "a wrong code is refused" equals "$(curl -s -o /dev/null -w '%{http_code}' -X POST --data 000000x "$web/api/pair")" "403"
check "the right code pairs" equals "$(curl -s -c "$work/cookies" -o /dev/null -w '%{http_code}' -X POST --data "$code" "$web/api/pair")" "200"
check "the session cookie is HttpOnly and SameSite=Strict" contains "$(curl -s -D - -o /dev/null -X POST --data "$code" "$web/api/pair")" "HttpOnly; SameSite=Strict"
check "the live state names the song" contains "$(curl -s -b "$work/cookies" "$web/api/state")" '"song":"Amazing Grace"'
# The score is engraved in a process of its own after the song loads, wide then narrow.
for _ in $(seq 100); do grep -q "web: the score for phones engraved" "$work/web.err" 2>/dev/null && break; sleep 0.2; done
check "the box engraves the page's score in a process of its own and says its peak" contains "$(cat "$work/web.err")" "web: the score engraved: 2 systems, 33 onsets; peak "
check "kept in the cache, wide and narrow (nothing else)" equals "$(ls "$work/webbox/cache/page" | sed 's/^[0-9a-f]*-//' | sort | tr '\n' ' ')" "narrow wide "
check "the score for the page" contains "$(curl -s -b "$work/cookies" "$web/score.svg" | head -c 400)" "<svg"
check "the score compressed for a browser" contains "$(curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' -b "$work/cookies" "$web/score.svg")" "Content-Encoding: gzip"
check "and whole once decompressed" contains "$(curl -s --compressed -b "$work/cookies" "$web/score.svg" | tail -c 100)" "</svg>"
check "events stream the transport" contains "$(timeout 2 curl -s -N -b "$work/cookies" "$web/events" | head -c 600)" 'data: {'
csrf="$(curl -s -b "$work/cookies" "$web/api/state" | python3 -c 'import json,sys; print(json.load(sys.stdin)["csrf"])')"
check "an action from the page" equals "$(curl -s -b "$work/cookies" -H "X-CSRF-Token: $csrf" -X POST --data stop "$web/api/action")" '{"done":"stop"}'
check "an unknown action is refused" equals "$(curl -s -o /dev/null -w '%{http_code}' -b "$work/cookies" -H "X-CSRF-Token: $csrf" -X POST --data explode "$web/api/action")" "400"
check "an action without the CSRF token is refused" equals "$(curl -s -o /dev/null -w '%{http_code}' -b "$work/cookies" -X POST --data stop "$web/api/action")" "403"
sleep 0.3
check "the box stopped" contains "$(curl -s -b "$work/cookies" "$web/api/state")" '"state":"stopped"'
check "a cross-site change is refused" equals "$(curl -s -o /dev/null -w '%{http_code}' -b "$work/cookies" -H 'Sec-Fetch-Site: cross-site' -X POST --data x "$web/api/action")" "403"
head -c 9000000 /dev/zero > "$work/big.bin"
check "an oversized upload is refused" equals "$(curl -s -o /dev/null -w '%{http_code}' -b "$work/cookies" -X POST --data-binary @"$work/big.bin" "$web/api/pair")" "413"
check "the takes list names the parts" contains "$(curl -s -b "$work/cookies" "$web/api/takes")" '"parts":["Soprano","Alto","Tenor","Bass"]'
check "the library lists the shipped songs with tags" contains "$(curl -s -b "$work/cookies" "$web/api/library")" '"title":"Amazing Grace"'
check "a file that is not a song is refused" equals "$(curl -s -b "$work/cookies" -H "X-CSRF-Token: $csrf" -H 'X-File-Name: ../../run.sh' -X POST --data-binary 'rm -rf /' "$web/api/upload")" '{"error":"that file is not a song: send .acasong, .musicxml, .xml or .mxl"}'
check "nothing was written to the library" equals "$(ls "$work/webbox/library" 2>/dev/null | wc -l)" "0"
check "a loop outside the song is refused with its measures" equals "$(curl -s -b "$work/cookies" -H "X-CSRF-Token: $csrf" -X POST --data 40-44 "$web/api/loop")" '{"error":"measures 40-44 are not in the song (0-14)"}'
check "a loop from the page" equals "$(curl -s -b "$work/cookies" -H "X-CSRF-Token: $csrf" -X POST --data 2-3 "$web/api/loop")" '{"done":"loop 2-3 on"}'
curl -s -b "$work/cookies" -o "$work/bundle.zip" "$web/download/project.zip"
check "the project bundle downloads" contains "$(python3 -m zipfile -l "$work/bundle.zip" 2>&1)" "amazing-grace.acaproj/manifest.json"
check "the mixdown downloads as FLAC" equals "$(curl -s -b "$work/cookies" "$web/download/mix.flac" | head -c 4)" "fLaC"
check "downloads need the session" equals "$(curl -s -o /dev/null -w '%{http_code}' "$web/download/mix.wav")" "401"
kill "$webbox" 2>/dev/null; wait "$webbox" 2>/dev/null || true
# mDNS: the box announces acapella.local and its page through avahi-daemon
# (started here with a system bus when the machine has none running).
if ! avahi-daemon --check 2>/dev/null && [[ $(id -u) == 0 ]]; then
  mkdir -p /run/dbus
  # A socket left by a bus that is gone does not answer: start one.
  if ! dbus-send --system --dest=org.freedesktop.DBus --type=method_call --print-reply / org.freedesktop.DBus.GetId >/dev/null 2>&1; then
    rm -f /run/dbus/pid
    dbus-daemon --system --fork 2>/dev/null || true
  fi
  avahi-daemon --daemonize --no-drop-root --no-chroot 2>/dev/null || true
  for _ in $(seq 20); do avahi-daemon --check 2>/dev/null && break; sleep 0.2; done
fi
if avahi-daemon --check 2>/dev/null; then
  mdnsport=$((20000 + RANDOM % 20000))
  # A name of this run's own (another box on the network may be acapella.local).
  name="acapella-test-$$-box"  # not ending in a digit: avahi would count that up
  printf '{ "web": { "port": %d, "name": "%s" } }' "$mdnsport" "$name" > "$work/mdns1.json"
  printf '{ "web": { "port": %d, "name": "%s" } }' "$((mdnsport + 1))" "$name" > "$work/mdns2.json"
  "$acapella" run --config "$work/mdns1.json" --data "$work/mdns1" --seconds 90 --device sim >/dev/null 2>"$work/mdns1.err" &
  mdns1=$!
  for _ in $(seq 150); do grep -q "mdns: announced" "$work/mdns1.err" 2>/dev/null && break; sleep 0.2; done
  check "the box announces itself" contains "$(cat "$work/mdns1.err")" "mdns: announced as $name.local ("
  check "its name resolves to the box" matches "$(avahi-resolve -4 -n "$name.local" 2>&1)" "^$name.local	[0-9.]+$"
  check "the page is a service on its port" contains "$(avahi-browse -rtp _http._tcp 2>&1)" "Acapella\\032box;Web Site;local;$name.local;"
  check "on the box's port" contains "$(avahi-browse -rtp _http._tcp 2>&1 | grep "$name.local")" ";$mdnsport;"
  "$acapella" run --config "$work/mdns2.json" --data "$work/mdns2" --seconds 60 --device sim >/dev/null 2>"$work/mdns2.err" &
  mdns2=$!
  # Both boxes run until killed: on a slow machine the first must still be
  # announced when the second starts.
  for _ in $(seq 150); do grep -q "mdns: announced" "$work/mdns2.err" 2>/dev/null && break; sleep 0.2; done
  kill -0 "$mdns1" 2>/dev/null || echo "cli: the first box had stopped before the second announced itself" >&2
  check "a second box takes the next name, and says so" contains "$(cat "$work/mdns2.err")" "$name.local is taken on this network; trying $name-2.local"
  check "and is announced under it" contains "$(cat "$work/mdns2.err")" "mdns: announced as $name-2.local ("
  grep -q "announced as $name-2.local" "$work/mdns2.err" || sed 's/^/cli: the second box said: /' "$work/mdns2.err" | head -20 >&2
  kill "$mdns1" "$mdns2" 2>/dev/null; wait "$mdns1" "$mdns2" 2>/dev/null || true
  printf '{ "web": { "port": %d, "name": false } }' "$mdnsport" > "$work/noname.json"
  "$acapella" run --config "$work/noname.json" --data "$work/mdns3" --seconds 2 --device sim >/dev/null 2>"$work/mdns3.err" || true
  check "web.name false: not announced" equals "$(grep -c 'mdns:' "$work/mdns3.err")" "0"
  printf '{ "web": { "name": "my box" } }' > "$work/badname.json"
  expect "a bad web.name" 1 "$acapella" run --config "$work/badname.json" --data "$work/mdns4" --seconds 1 --device sim &&
    check "bad name message" contains "$err" "badname.json: web.name: expected a host name"
else
  echo "cli: MDNS CHECKS SKIPPED (no avahi-daemon running and none could be started here)" >&2
fi
expect "a bad --web" 2 "$acapella" run --data "$work/webbox2" --seconds 1 --device sim --web 99999 &&
  check "web message" contains "$err" "--web expects a port (1-65535) or off, not '99999'"
expect "mix unknown format" 2 "$acapella" mix Songs/amazing-grace.acasong -o "$work/x.aiffc" && check "format message" contains "$err" "unknown audio format"
expect "mix unknown part" 1 "$acapella" mix Songs/amazing-grace.acasong -o "$work/x.wav" --practice Descant && check "part message" contains "$err" "no part named 'Descant'"
expect "mix bad tempo" 2 "$acapella" mix Songs/amazing-grace.acasong -o "$work/x.wav" --tempo fast && check "tempo message" contains "$err" "--tempo expects a multiplier"
expect "mix without output" 2 "$acapella" mix Songs/amazing-grace.acasong && check "output message" contains "$err" "mix needs -o OUT"
check "no partial file left behind" bash -c "! ls -a '$work' | grep -q partial"

# Projects: new, record in the simulated room, list, mix, and the errors.
export ACAPELLA_DATA_DIR="$work/data"
project="$work/demo.acaproj"
expect "new project" 0 "$acapella" new "$project" --song Songs/amazing-grace.acasong &&
  check "new says created" contains "$out" "created $project" &&
  check "project has a manifest" test -s "$project/manifest.json"
expect "new over an existing project" 1 "$acapella" new "$project" --song Songs/amazing-grace.acasong && check "exists message" contains "$err" "already exists"
expect "new without .acaproj" 2 "$acapella" new "$work/demo" --song Songs/amazing-grace.acasong
expect "record the Alto" 0 "$acapella" record "$project" --part alto --device sim:latency=317.4 &&
  check "record says simulated" contains "$err" "simulated room" &&
  check "record lists the take" contains "$out" "take 1  Alto  kept, active" &&
  check "this box's id made once, in the data directory" matches "$(cat "$ACAPELLA_DATA_DIR/box-id")" "^[a-z2-9]{6}$" &&
  check "take file written, the box's id in its name" test -s "$project/takes/alto-$(cat "$ACAPELLA_DATA_DIR/box-id")-1.wav" &&
  check "the take says which box" contains "$out" "box $(cat "$ACAPELLA_DATA_DIR/box-id")"
expect "punch the Tenor" 0 "$acapella" record "$project" --part Tenor --range 5-8 && check "punch range listed" contains "$out" "punch 520000..<1000000"
expect "loop recording" 0 "$acapella" record "$project" --part Bass --range 3-4 --loop 2 &&
  check "second pass plays" contains "$out" "take 4  Bass  kept, active" &&
  check "first pass kept, hidden" contains "$out" "take 3  Bass  kept  "
expect "loop without range" 2 "$acapella" record "$project" --part Bass --loop 2 && check "loop message" contains "$err" "--loop needs --range"
expect "record unknown part" 1 "$acapella" record "$project" --part Descant && check "record part message" contains "$err" "no part named 'Descant'"
expect "record bad range" 1 "$acapella" record "$project" --part Alto --range 40-50 && check "range message" contains "$err" "are not all in the song"
expect "record bad --takes" 2 "$acapella" record "$project" --part Alto --takes disk && check "takes message" contains "$err" "--takes expects stream or memory, not 'disk'"
expect "record bad device" 2 "$acapella" record "$project" --part Alto --device frob && check "device message" contains "$err" "unknown device 'frob'"
expect "record on a missing card" 1 "$acapella" record "$project" --part Alto --device alsa:hw0 && check "card open message" contains "$err" "hw0: snd_pcm_open (playback) failed"
expect "record too short a round trip" 2 "$acapella" record "$project" --part Alto --device sim:latency=10 && check "latency message" contains "$err" "shorter than one period"
expect "analyze the Alto's take" 0 "$acapella" analyze "$project" --part alto &&
  check "every note sung, in tune, on time" contains "$out" "Alto: 100/100 — 28 of 28 notes sung" &&
  check "the guide heard in the take is taken out" contains "$out" "the guide heard in it (0.5" &&
  check "the singer's vibrato" contains "$out" "vibrato on 28 of 28 notes: 5.5 Hz, ±30 cents"
expect "analyze a punch-in" 0 "$acapella" analyze "$project" --take 2 && check "only the punch's notes" matches "$out" "Tenor: [0-9]+/100 — ([0-9]+) of \1 notes sung"
expect "analyze as JSON" 0 "$acapella" analyze "$project" --take 1 --json &&
  check "JSON names the notes" equals "$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["take"], len(d["notes"]), d["notes"][1]["lyric"], d["notes"][1]["sung"], d["punch"])')" "1 28 maz True []"
expect "analyze with a plot" 0 "$acapella" analyze "$project" --take 1 --svg "$work/plot.svg" &&
  check "the plot is written" contains "$err" "wrote $work/plot.svg" &&
  check "a bar for every note" equals "$(grep -c '<rect class="note"' "$work/plot.svg")" "28" &&
  check "the sung pitch, green (in tune): hundreds of segments" matches "$(grep -c 'class="sung".*#1a7f37' "$work/plot.svg")" "^[0-9]{3,}$" &&
  check "none red" equals "$(grep -c 'class="sung".*#c01c28' "$work/plot.svg")" "0" &&
  check "measure numbers" contains "$(cat "$work/plot.svg")" '<line class="barline"'
"$acapella" new "$work/silent.acaproj" --song Songs/amazing-grace.acasong >/dev/null
"$acapella" record "$work/silent.acaproj" --part Alto --singer off >/dev/null 2>&1
expect "analyze a take nobody sang" 0 "$acapella" analyze "$work/silent.acaproj" &&
  check "every note missed" contains "$out" "Alto: 0/100 — 0 of 28 notes sung" &&
  check "a missed note named" contains "$out" "m. 1, beat 1, 'maz': missed" &&
  check "the whole song to punch" contains "$out" "punch in: mm. 0-14"
expect "plot a take nobody sang" 0 "$acapella" analyze "$work/silent.acaproj" --svg "$work/silent.svg" &&
  check "every bar struck through" equals "$(grep -c '<rect class="note missed"' "$work/silent.svg")" "28" &&
  check "no sung pitch" equals "$(grep -c 'class="sung"' "$work/silent.svg")" "0"
expect "analyze an unknown take" 1 "$acapella" analyze "$project" --take 99 && check "unknown take message" contains "$err" "no take '99'; its takes are: 1, 2, 3, 4"
expect "analyze an unknown part" 1 "$acapella" analyze "$project" --part Descant && check "unknown part message" contains "$err" "no part 'Descant'"
"$acapella" new "$work/fresh.acaproj" --song Songs/amazing-grace.acasong >/dev/null
expect "analyze without takes" 1 "$acapella" analyze "$work/fresh.acaproj" && check "no take message" contains "$err" "no take to analyze yet (record one first)"
expect "takes list" 0 "$acapella" takes "$project" && check "two takes listed" contains "$out" "take 2  Tenor"
expect "takes nudge" 0 "$acapella" takes "$project" nudge 2 -12 && check "nudge shown" contains "$out" "nudge -12"
expect "takes bad id" 1 "$acapella" takes "$project" activate 99 && check "bad id message" contains "$err" "no take 99"
expect "mix the project" 0 "$acapella" mix "$project" -o "$work/project.wav" && check "project mix loudness" contains "$out" "-16.0 LUFS integrated"
expect "mix at another tempo leaves takes out" 0 "$acapella" mix "$project" -o "$work/slow.wav" --tempo 0.9 &&
  check "mismatch named" contains "$err" "take 1 (Alto) left out: recorded at tempo 1, transpose 0; not played in this mix"
expect "takes undo" 0 "$acapella" takes "$project" undo && check "undo says discarded" contains "$err" "take 4 (Bass) discarded" &&
  check "the previous pass plays again" contains "$out" "take 3  Bass  kept, active"
printf '{"format":"acaproj","vers' > "$project/manifest.json"
expect "damaged manifest reopens" 0 "$acapella" takes "$project" &&
  check "damage reported" contains "$err" "manifest.json: not valid JSON" &&
  check "takes survive" contains "$out" "take 1  Alto  kept, active"
expect "missing project" 1 "$acapella" takes "$work/nothing.acaproj" && check "missing project message" contains "$err" "no such project"

# Bad input everywhere else: one line, the right exit status, nothing recorded.
for words in "reported=1e300|the reported round trip is from 0 to 192000 frames" "reported=-500|the reported round trip is from 0 to 192000 frames" \
  "period=1e300|a period is from 16 to 8192 frames" "rate=1e30|the rate is from 8000 to 192000 Hz" "latency=1e300|the round trip is from 1 to 192000 frames" \
  "speed=-3|speed is 0 (as fast as possible) or from 0.01 to 1000 times real time" "period=100.5|a whole number, please"; do
  option="${words%%|*}"
  expect "record with sim:$option" 2 "$acapella" record "$project" --part Alto --device "sim:$option" &&
    check "sim:$option message" equals "$err" "acapella record: error: --device: device option '$option': ${words#*|}"
done
check "no take from a refused device" equals "$(ls "$project/takes" | grep -c wav)" "4"

"$acapella" new "$work/punch1.acaproj" --song Songs/simple-harmony.acasong >/dev/null
expect "punch measure 1 alone" 0 "$acapella" record "$work/punch1.acaproj" --part Soprano --range 1-1 && check "a punch, not a full take" contains "$out" "punch 0..<144000"
for rate in 50 200 1000000000; do
  python3 -c "
import struct
r=$rate; d=struct.pack('<1000f',*([0.1]*1000))
open('$work/rate$rate.wav','wb').write(b'RIFF'+struct.pack('<I',36+len(d))+b'WAVEfmt '+struct.pack('<IHHIIHH',16,3,1,r,r*4,4,32)+b'data'+struct.pack('<I',len(d))+d)"
  expect "pitch at $rate Hz" 1 "$acapella" pitch "$work/rate$rate.wav" &&
    check "pitch $rate Hz message" equals "$err" "acapella pitch: error: $work/rate$rate.wav: recorded at $rate Hz; pitch tracking needs 8000–384000 Hz"
  expect "notes at $rate Hz" 1 "$acapella" notes "$work/rate$rate.wav" &&
    check "notes $rate Hz message" equals "$err" "acapella notes: error: $work/rate$rate.wav: recorded at $rate Hz; note splitting needs 8000–384000 Hz"
done
voice="../shared/data/voice"
if [[ -d "$voice" ]]; then
  expect "notes of the sustained A3" 0 "$acapella" notes "$voice/sustain_a3_vibrato.wav" --midi "$work/a3.mid" &&
    check "one note, A3, its onset and its vibrato centred" matches "$out" $'^onset_s,offset_s,midi,note,cents,hz\n0\\.(19|20|21)[0-9]*,8\\.[12][0-9]*,57,A3,[+-][0-9]\\.[0-9],2[12][0-9]\\.[0-9]+$' &&
    check "the MIDI file: one track of notes at 60 BPM, note 57 on" python3 -c "
d=open('$work/a3.mid','rb').read()
assert d[:4]==b'MThd' and d.count(b'MTrk')==2, d[:20]
assert bytes([0xFF,0x51,0x03,0x0F,0x42,0x40]) in d  # 1,000,000 µs a quarter
assert bytes([0x90,57]) in d and bytes([0x80,57]) in d or bytes([0x90,57,0]) in d"
  expect "notes of the chorale's soprano" 0 "$acapella" notes "$voice/bwv66.6_soprano.wav" &&
    check "30 to 40 notes, the first C#5, the last F#4" python3 -c "
rows=[l.split(',') for l in '''$out'''.strip().split('\n')[1:]]
assert 30 <= len(rows) <= 40, len(rows)
assert rows[0][3]=='C#5' and rows[-1][3]=='F#4', (rows[0], rows[-1])
assert all(float(a[1]) <= float(b[0]) for a, b in zip(rows, rows[1:]))"
fi
expect "export-midi" 0 "$acapella" export-midi Songs/amazing-grace.acasong -o "$work/grace.mid" --verse 2 &&
  check "export-midi says what it wrote" equals "$out" "wrote $work/grace.mid: 4 parts (Soprano, Alto, Tenor, Bass), 116 notes, the words of verse 2" &&
  check "the MIDI file: five named tracks, G major, verse 2's words" python3 -c "
d=open('$work/grace.mid','rb').read()
assert d[:4]==b'MThd' and d.count(b'MTrk')==5
for name in (b'Amazing Grace', b'Soprano', b'Alto', b'Tenor', b'Bass'): assert bytes([0xFF,0x03,len(name)])+name in d, name
assert bytes([0xFF,0x59,0x02,0x01,0x00]) in d
assert bytes([0xFF,0x05,5])+b\"'Twas\" in d"
expect "export-midi verse 3 of 2" 1 "$acapella" export-midi Songs/amazing-grace.acasong -o "$work/x.mid" --verse 3 &&
  check "verse message" equals "$err" "acapella export-midi: error: Songs/amazing-grace.acasong: has 2 verses; --verse 3 names none"
# Project bundles: out and in again, bit for bit; hostile bundles refused with nothing written.
"$acapella" new "$work/carry.acaproj" --song Songs/amazing-grace.acasong >/dev/null
"$acapella" record "$work/carry.acaproj" --part Alto >/dev/null 2>&1
expect "export a project" 0 "$acapella" export "$work/carry.acaproj" -o "$work/carry.acaproj.zip" &&
  check "export says what it wrote" equals "$out" "wrote $work/carry.acaproj.zip: Amazing Grace, 1 take"
mkdir -p "$work/elsewhere"
expect "import the bundle" 0 "$acapella" import-project "$work/carry.acaproj.zip" --into "$work/elsewhere" &&
  check "imported where asked" equals "$out" "imported $work/elsewhere/carry.acaproj: Amazing Grace, 1 take" &&
  check "the take is bit-identical" cmp "$work/carry.acaproj/takes/alto-$(cat "$ACAPELLA_DATA_DIR/box-id")-1.wav" "$work/elsewhere/carry.acaproj/takes/alto-$(cat "$ACAPELLA_DATA_DIR/box-id")-1.wav" &&
  check "the takes list the same" equals "$("$acapella" takes "$work/elsewhere/carry.acaproj" | sed 's/ *$//')" "$("$acapella" takes "$work/carry.acaproj" | sed 's/ *$//')"
expect "import over an existing project" 1 "$acapella" import-project "$work/carry.acaproj.zip" --into "$work/elsewhere" &&
  check "never touched" contains "$err" "carry.acaproj: already exists; nothing was changed"
expect "export to a non-zip" 2 "$acapella" export "$work/carry.acaproj" -o "$work/carry.tar"
mkdir -p "$work/hostile"
for case in "traversal|x.acaproj/../evil.txt|is not a file of one project" "absolute|/tmp/x.acaproj/manifest.json|is not a file of one project" \
            "stranger|x.acaproj/run.sh|is not part of a project" "link|x.acaproj/takes/a-1.wav|is not a plain file" \
            "no manifest|x.acaproj/takes/a-1.json|holds no project" "bad song|x.acaproj/score.acasong|score.acasong"; do
  IFS='|' read -r name entry words <<<"$case"
  python3 -c "
import sys, zipfile
with zipfile.ZipFile('$work/hostile.zip', 'w') as z:
    if '$name' not in ('no manifest', 'bad song'):
        z.writestr('x.acaproj/score.acasong', open('Songs/amazing-grace.acasong').read())
    if '$name' != 'no manifest':
        z.writestr('x.acaproj/manifest.json', open('$work/carry.acaproj/manifest.json').read())
    info = zipfile.ZipInfo('$entry')
    if '$name' == 'link': info.create_system = 3; info.external_attr = 0o120777 << 16
    z.writestr(info, 'acasong 1\\npart X\\nC4 4 |' if '$name' == 'bad song' else '/etc/passwd')"
  expect "a hostile bundle ($name)" 1 "$acapella" import-project "$work/hostile.zip" --into "$work/hostile" &&
    check "$name: one line saying why" matches "$err" "^acapella import-project: error: .*$words" &&
    check "$name: nothing written" equals "$(ls -A "$work/hostile" | wc -l)$(ls "$work" | grep -c evil)" "00"
done
python3 -c "
import zipfile
with zipfile.ZipFile('$work/carry.acaproj.zip') as source, zipfile.ZipFile('$work/damaged.zip', 'w') as z:
    for item in source.infolist():
        z.writestr(item, b'{ broken' if item.filename.endswith('manifest.json') else source.read(item))"
expect "a bundle with a damaged manifest" 0 "$acapella" import-project "$work/damaged.zip" --into "$work/hostile" &&
  check "the manifest is rebuilt from the takes' sidecars, and said so" contains "$err" "manifest.json: not valid JSON (truncated or damaged); rebuilt from the take files" &&
  check "nothing lost: the take is there" contains "$("$acapella" takes "$work/hostile/carry.acaproj")" "take 1  Alto"
rm -rf "$work/hostile" && mkdir -p "$work/hostile"
head -c 3000 "$work/carry.acaproj.zip" >"$work/truncated.zip"
expect "a truncated bundle" 1 "$acapella" import-project "$work/truncated.zip" --into "$work/hostile" &&
  check "truncated: not a bundle" contains "$err" "not a project bundle (zip)" && check "truncated: nothing written" equals "$(ls -A "$work/hostile" | wc -l)" "0"
# Exported audio says what it is: title, artist (composer; arr. arranger), album (the project), what it holds, in every format.
for format in wav flac ogg mp3; do
  expect "a tagged $format mix" 0 "$acapella" mix "$work/carry.acaproj" -o "$work/tagged.$format" &&
    check "$format tags: title, artist, album, what it holds" python3 -c "
d=open('$work/tagged.$format','rb').read()
title={'wav':b'INAM\x0e\x00\x00\x00Amazing Grace','flac':b'title=Amazing Grace','ogg':b'TITLE=Amazing Grace','mp3':b'TIT2\x00\x00\x00\x0e\x00\x00\x00Amazing Grace'}['$format']
assert title in d, d[:300]
assert b'words John Newton, 1779 (verses 1 and 2); arr. Acapella box authors' in d
assert b'carry' in d and b'mix' in d and b'Acapella box' in d"
done
# Many singers, one project: two boxes record into their own copies; one travels as a bundle; merged, nothing lost.
"$acapella" new "$work/choir.acaproj" --song Songs/amazing-grace.acasong >/dev/null
cp -a "$work/choir.acaproj" "$work/ann.acaproj" && cp -a "$work/choir.acaproj" "$work/ben.acaproj"
ACAPELLA_BOX_ID=boxa "$acapella" record "$work/ann.acaproj" --part Alto --as Ann >/dev/null 2>&1
ACAPELLA_BOX_ID=boxb "$acapella" record "$work/ben.acaproj" --part Alto --as Ben >/dev/null 2>&1
ACAPELLA_BOX_ID=boxb "$acapella" record "$work/ben.acaproj" --part Tenor --as Ben --range 2-3 >/dev/null 2>&1
"$acapella" export "$work/ben.acaproj" -o "$work/ben.acaproj.zip" >/dev/null
expect "merge a project and a bundle" 0 "$acapella" merge "$work/choir.acaproj" "$work/ann.acaproj" "$work/ben.acaproj.zip" &&
  check "merge says what came from each" contains "$out" "merged $work/ann.acaproj: 1 take added, 0 already here"$'\n'"merged $work/ben.acaproj.zip: 2 takes added, 0 already here" &&
  check "the parts' takes by singer and box" contains "$out" "Alto: Ann, box boxa: takes 1; Ben, box boxb: takes 2; playing: take 1" &&
  check "every take bit-identical" bash -c "cmp '$work/ann.acaproj/takes/alto-boxa-1.wav' '$work/choir.acaproj/takes/alto-boxa-1.wav' && cmp '$work/ben.acaproj/takes/alto-boxb-1.wav' '$work/choir.acaproj/takes/alto-boxb-1.wav' && cmp '$work/ben.acaproj/takes/tenor-boxb-2.wav' '$work/choir.acaproj/takes/tenor-boxb-2.wav'" &&
  check "the bundle's unpacked copy is gone" equals "$(ls -A "$work" | grep -c '^\.merge')" "0" &&
  check "the list names singer and box" contains "$("$acapella" takes "$work/choir.acaproj")" "take 2  Alto  kept  40.00 s  full  offset 200000  Ben, box boxb, "
expect "merge the same again" 0 "$acapella" merge "$work/choir.acaproj" "$work/ann.acaproj" "$work/ben.acaproj.zip" &&
  check "nothing copied twice" contains "$out" "merged $work/ben.acaproj.zip: 0 takes added, 2 already here" &&
  check "still three takes" equals "$(ls "$work/choir.acaproj/takes" | grep -c 'wav$')" "3"
expect "choose Ben's alto" 0 "$acapella" takes "$work/choir.acaproj" activate 2 && check "Ben's alto plays" contains "$out" "take 2  Alto  kept, active"
expect "a take's gain" 0 "$acapella" takes "$work/choir.acaproj" gain 2 -3.5 && check "the gain is listed" contains "$out" "gain -3.5 dB"
expect "a gain out of range" 2 "$acapella" takes "$work/choir.acaproj" gain 2 40 && check "gain message" contains "$err" "takes gain needs ID and ±DB (from -60 to +12)"
expect "the whole choir mixed" 0 "$acapella" mix "$work/choir.acaproj" -o "$work/choir.wav"
"$acapella" new "$work/other-song.acaproj" --song Songs/silent-night.acasong >/dev/null
"$acapella" record "$work/other-song.acaproj" --part Alto >/dev/null 2>&1
sed 's/^tempo: 72/tempo: 80/' Songs/amazing-grace.acasong >"$work/faster.acasong" && "$acapella" new "$work/faster.acaproj" --song "$work/faster.acasong" >/dev/null
"$acapella" record "$work/faster.acaproj" --part Alto >/dev/null 2>&1
before="$(cd "$work/choir.acaproj" && ls -R && cat manifest.json)"
expect "merge another song" 1 "$acapella" merge "$work/choir.acaproj" "$work/other-song.acaproj" &&
  check "another song: the reason in one line" matches "$err" "^acapella merge: error: $work/other-song.acaproj: cannot be merged into $work/choir.acaproj: another song: 'Silent Night' \(this project holds 'Amazing Grace'\); nothing of it was merged$"
expect "merge another edit" 1 "$acapella" merge "$work/choir.acaproj" "$work/faster.acaproj" &&
  check "another edit: the reason" contains "$err" "another edit of the song: its tempo marks differ; nothing of it was merged" &&
  check "refused merges changed nothing" equals "$(cd "$work/choir.acaproj" && ls -R && cat manifest.json)" "$before"
expect "record --as with a newline" 2 "$acapella" record "$work/choir.acaproj" --part Alto --as $'A\nB' && check "singer message" contains "$err" "--as: a singer's name is one line of text"
expect "a bad box id" 1 env ACAPELLA_BOX_ID=Box-1 "$acapella" record "$work/choir.acaproj" --part Alto && check "box id message" contains "$err" "ACAPELLA_BOX_ID: 'Box-1' is not a box id"
# The session as it was left: kept in the project, resumed by the box, used by mix.
expect "a fresh project's session" 0 "$acapella" session "$work/choir.acaproj" && check "as written" contains "$out" "as written: every part at its level and place"
expect "change the session" 0 "$acapella" session "$work/choir.acaproj" --part bass --volume -4 --pan 0.8 --loop 3-6 --count-in 2 &&
  check "the change in words" equals "$out" "Bass -4.0 dB pan +0.80"$'\n'"count-in 2, metronome off, verse 1, loop 3-6 on"
expect "mute the tenor" 0 "$acapella" session "$work/choir.acaproj" --part Tenor --mute on
expect "mix as last rehearsed" 0 "$acapella" mix "$work/choir.acaproj" -o "$work/rehearsed.wav" &&
  check "mix says it used the session" contains "$err" "mixed as last rehearsed (session.json): Tenor muted, Bass -4.0 dB pan +0.80; --session ignore mixes without it"
expect "mix without the session" 0 "$acapella" mix "$work/choir.acaproj" -o "$work/plain.wav" --session ignore &&
  check "not said" bash -c "! grep -q 'last rehearsed' '$work/err'" && check "the mixes differ" bash -c "! cmp -s '$work/rehearsed.wav' '$work/plain.wav'"
expect "a volume out of range" 2 "$acapella" session "$work/choir.acaproj" --part Alto --volume 40 && check "volume message" contains "$err" "--volume expects dB from -60 to +12"
expect "a pan without a part" 2 "$acapella" session "$work/choir.acaproj" --pan 0.5 && check "part message" contains "$err" "need --part NAME"
expect "a loop outside the song" 1 "$acapella" session "$work/choir.acaproj" --loop 90-99 && check "loop message" contains "$err" "measures 90-99 are not in the song"
"$acapella" run --project "$work/choir.acaproj" --seconds 2 --device sim --data "$work/resume" --web off </dev/null >/dev/null 2>"$work/resume.err"
check "the box resumes the session" contains "$(cat "$work/resume.err")" "resumed as last left: Tenor muted, Bass -4.0 dB pan +0.80"
check "and leaves it as it was" contains "$(tr -d ' \n' <"$work/choir.acaproj/session.json")" '"countIn":2,"format":"acapella-session","loop":[3,6],"looping":true'
printf '{ broken' >"$work/choir.acaproj/session.json"
expect "a damaged session file" 0 "$acapella" session "$work/choir.acaproj" && check "named, defaults used" contains "$err" "session.json: not valid JSON"
# The user's songs: MusicXML dropped into songs/ is imported beside itself; the box notices arrivals while it runs.
if [[ -d "$mx" ]]; then
  mkdir -p "$work/lib/songs" && cp "$mx/bach_bwv66.6.mxl" "$work/lib/songs/chorale.mxl" && printf '<score-partwise><part-list>' >"$work/lib/songs/broken.musicxml"
  expect "songs imports what was dropped" 1 "$acapella" songs --data "$work/lib" &&
    check "the import said" contains "$err" "chorale.mxl: imported as" &&
    check "the failure said, in one line" contains "$err" "broken.musicxml:1:28: error: malformed XML (the document is empty or does not start with an element); not imported (the file stays; mend or replace it)" &&
    check "the song, its report, the error beside" bash -c "test -s '$work/lib/songs/chorale.acasong' && test -s '$work/lib/songs/chorale.import.txt' && test -s '$work/lib/songs/broken.musicxml.error.txt' && test -s '$work/lib/songs/broken.musicxml'" &&
    check "listed as yours" contains "$out" "yours    " && check "shipped listed too" contains "$out" "shipped  Amazing Grace  [hymn, easy, 4 voices, SATB]"
  expect "songs by tag" 1 "$acapella" songs --data "$work/lib" --tag easy &&
    check "only the easy ones" bash -c "! grep -q -i chorale '$work/out' && grep -q 'Row, Row, Row Your Boat' '$work/out'"
  expect "the box on a MusicXML song" 0 "$acapella" run --song "$mx/bach_bwv66.6.mxl" --seconds 1 --device sim --web off --data "$work/mxlbox" &&
    check "its project made from the import" bash -c "grep -q '^part Soprano' '$work/mxlbox/projects/bach_bwv66.6.acaproj/score.acasong'"
  expect "the box on a broken MusicXML song" 1 "$acapella" run --song "$work/lib/songs/broken.musicxml" --seconds 1 --device sim --web off --data "$work/badbox" &&
    check "one line saying where" contains "$err" "broken.musicxml:1:28: error: malformed XML"
fi
# (A song dropped into the songs folder while the box runs: SessionLoopTests, in-process.)
# USB sticks: songs in from acapella/songs/, results out to acapella/export/, as the box does with a stick.
mkdir -p "$work/stickdata/projects" "$work/plainstick/acapella/songs" "$work/nostick"
cp -a "$work/choir.acaproj" "$work/stickdata/projects/choir.acaproj" && rm -f "$work/stickdata/projects/choir.acaproj/session.json"
[[ -d "$mx" ]] && cp "$mx/bach_bwv304.mxl" "$work/plainstick/acapella/songs/"
expect "a stick without acapella/" 1 "$acapella" usb "$work/nostick" --data "$work/stickdata" && check "stick message" contains "$err" "no acapella/ folder on it"
expect "a stick's songs in, results out" 0 "$acapella" usb "$work/plainstick" --data "$work/stickdata" &&
  check "the files out" equals "$(cd "$work/plainstick/acapella/export" && find . -type f | sort | tr '\n' ' ')" "./choir/choir.acaproj.zip ./choir/mix.flac ./choir/mix.mp3 ./choir/practice-alto.mp3 ./choir/practice-bass.mp3 ./choir/practice-soprano.mp3 ./choir/practice-tenor.mp3 " &&
  check "safe to remove, at the end" contains "$out" "safe to remove" &&
  check "nothing hidden left behind" equals "$(find "$work/plainstick" -name '.*' | wc -l)" "0" &&
  check "the bundle is the project" bash -c "'$acapella' import-project '$work/plainstick/acapella/export/choir/choir.acaproj.zip' --into '$work/nostick' >/dev/null 2>&1 && cmp '$work/nostick/choir.acaproj/takes/alto-boxb-1.wav' '$work/choir.acaproj/takes/alto-boxb-1.wav'"
if [[ -d "$mx" ]]; then
  check "the stick's song is in the library, imported" bash -c "cmp '$mx/bach_bwv304.mxl' '$work/stickdata/songs/bach_bwv304.mxl' && test -s '$work/stickdata/songs/bach_bwv304.acasong'"
fi
printf '{ "usb": ["media"] }' >"$work/badusb.json"
expect "usb settings that are not folders" 1 "$acapella" run --config "$work/badusb.json" --seconds 1 --device sim && check "usb message" contains "$err" "usb: expected true, false or a list of folders"
if [[ "$(id -u)" == 0 ]]; then
  # A mix onto a full disk: one line, nothing left behind (its temporary files have no name).
  mkdir -p "$work/full" && mount -t tmpfs -o size=2m full "$work/full"
  expect "mix onto a full disk" 1 "$acapella" mix Songs/amazing-grace.acasong -o "$work/full/ag.wav" &&
    check "says the disk refused it" contains "$err" "the disk refused the mix's temporary file (full?)" &&
    check "and leaves nothing behind" equals "$(ls -A "$work/full")" ""
  umount "$work/full"
  # The running box notices a stick mounted under its roots (a tmpfs here) and says each step —
  # on a machine with 200 more mounts than this one, so the stick's line in
  # /proc/self/mountinfo is far past the first 4 KiB a single read returns.
  mkdir -p "$work/media/stick"
  for n in $(seq 200); do mkdir -p "$work/many/$n" && mount -t tmpfs -o size=64k "many$n" "$work/many/$n"; done
  printf '{ "usb": ["%s/media"], "web": false }' "$work" >"$work/usb.json"
  "$acapella" run --config "$work/usb.json" --data "$work/stickdata" --seconds 60 --device sim </dev/null >/dev/null 2>"$work/usbbox.err" &
  usbbox=$!
  sleep 1.5
  mount -t tmpfs -o size=128m stick "$work/media/stick" && mkdir -p "$work/media/stick/acapella"
  for _ in $(seq 500); do grep -q "files out — safe to remove\|USB: the USB stick" "$work/usbbox.err" && break; sleep 0.1; done
  kill -TERM $usbbox
  wait $usbbox
  check "the box sees the stick" contains "$(cat "$work/usbbox.err")" "USB stick $work/media/stick: songs in, results out; leave it in until it says safe to remove"
  check "says each step" contains "$(cat "$work/usbbox.err")" "USB 7/8: Amazing Grace: the project bundle"
  check "and safe to remove" contains "$(cat "$work/usbbox.err")" "files out — safe to remove"
  check "the export is on the stick" test -s "$work/media/stick/acapella/export/choir/mix.flac"
  check "the stick is seen past 200 other mounts" test "$(grep -n " $work/media/stick " /proc/self/mountinfo | cut -d: -f1)" -gt 200
  umount "$work/media/stick"
  for n in $(seq 200); do umount "$work/many/$n"; done
fi
# (A song removed while the box runs: SessionLoopTests, in-process.)
expect "notes of a missing file" 1 "$acapella" notes "$work/none.wav" && check "one line" equals "$(wc -l <<<"$err")" "1"
head -c 8192 /dev/urandom >"$work/noise.wav"
expect "notes of garbage" 1 "$acapella" notes "$work/noise.wav" && check "garbage: one line naming the file" matches "$err" "^acapella notes: error: $work/noise.wav"
if [[ -d "$mx" ]]; then
  expect "import --parts empty" 2 "$acapella" import --parts "" "$mx/bach_bwv66.6.mxl" && check "empty parts message" contains "$err" "an empty name was given"
  expect "import --parts twice" 2 "$acapella" import --parts "Bass,bass" "$mx/bach_bwv66.6.mxl" && check "twice message" contains "$err" "--parts names 'Bass' twice"
  mkdir -p "$work/outdir"
  expect "import -o a folder" 1 "$acapella" import "$mx/bach_bwv66.6.mxl" -o "$work/outdir" &&
    check "folder message" equals "$err" "acapella import: error: $work/outdir: is a folder; give a file name (like $work/outdir/NAME)"
  expect "import -o a missing folder" 1 "$acapella" import "$mx/bach_bwv66.6.mxl" -o "$work/none/x.acasong" &&
    check "missing folder message" equals "$err" "acapella import: error: $work/none/x.acasong: the folder $work/none does not exist"
fi
printf '\xef\xbb\xbfacasong 1\ntime: 4/4\npart S [treble]\nC4 1 |\n' > "$work/bom.acasong"
expect "a byte-order mark" 0 "$acapella" check "$work/bom.acasong"
printf 'acasong 1\npart S [treble]\nC4 4 ( D4 4 E4 4 F4 4 |\n' > "$work/paren.acasong"
expect "a stray parenthesis" 1 "$acapella" check "$work/paren.acasong" && check "one error" equals "$(wc -l <<<"$err")" "1"
printf '{"device": "sim:latency=abc"}' > "$work/device-settings.json"
expect "the box with a bad device setting" 1 "$acapella" run --config "$work/device-settings.json" --seconds 1 &&
  check "device setting names the file" equals "$err" "acapella run: error: $work/device-settings.json: device: device option 'latency=abc' is not NAME=NUMBER"
expect "the box with a missing controls file" 1 "$acapella" run --controls "$work/none.json" --seconds 1 &&
  check "controls message" equals "$err" "acapella run: error: $work/none.json: cannot read the file (no such file)"
printf '{"midi": {"bindings": [{"event":"note","note":36,"action":"stop"},{"event":"note","note":36,"channel":10,"action":"record"}]}}' > "$work/twice.json"
expect "the box with one event bound twice" 1 "$acapella" run --controls "$work/twice.json" --seconds 1 &&
  check "twice message" equals "$err" "acapella run: error: $work/twice.json: midi.bindings[1]: note 36 is bound to stop by midi.bindings[0] already; one event, one action"
printf '{"part": 7}' > "$work/part-settings.json"
expect "the box with part 7 of 4" 1 "$acapella" run --config "$work/part-settings.json" --song amazing --data "$work/box" --seconds 1 --device sim:speed=4 &&
  check "part names the file" contains "$err" "acapella run: error: $work/part-settings.json: part: part 7, but 'Amazing Grace' has 4 parts"
expect "the box with --part 9" 1 "$acapella" run --part 9 --song amazing --data "$work/box" --seconds 1 --device sim:speed=4 &&
  check "--part message" contains "$err" "acapella run: error: --part: part 9, but 'Amazing Grace' has 4 parts"

expect "devices" 0 "$acapella" devices && check "devices lists GPIO" contains "$out" "GPIO chips" && check "devices lists MIDI" contains "$out" "MIDI ports"
if [ ! -e /dev/snd/seq ]; then
  expect "midi-learn without a sequencer" 1 "$acapella" midi-learn punch-in --timeout 1 && check "sequencer message" contains "$err" "MIDI: no ALSA sequencer"
fi
expect "midi-learn unknown action" 2 "$acapella" midi-learn frob && check "action message" contains "$err" "unknown action 'frob'; actions: play-pause"
printf '{"midi": {"bindings": [{"event": "cc", "action": "stop"}]}}' > "$work/bad-controls.json"
expect "midi-learn on a wrong config" 1 "$acapella" midi-learn stop --config "$work/bad-controls.json" && check "config message" contains "$err" "bad-controls.json: midi.bindings[0].controller: missing"
expect "calibrate the room" 0 "$acapella" calibrate --device sim:latency=240.5,reported=200 &&
  check "calibration measured" contains "$out" "round trip 240.50 frames" &&
  check "trim stored" contains "$out" "trim +40.50 frames stored in $work/data/calibration.json"
expect "calibrate a missing card" 1 "$acapella" calibrate --device alsa:hw:7 && check "card message" contains "$err" "hw:7: snd_pcm_open (playback) failed"
expect "calibrate bad words" 2 "$acapella" calibrate --device sim:latency=abc && check "words message" contains "$err" "is not NAME=NUMBER"
expect "record with the calibration" 0 "$acapella" record "$project" --part Soprano --device sim:latency=240.5,reported=200 &&
  check "calibration recorded" contains "$(cat "$project/manifest.json")" "200.00 frames reported + 40.50 calibrated trim"

expect "the box runs and quits" 0 "$acapella" run --data "$work/box" --seconds 2 --play --device sim:speed=4 &&
  check "box says ready" contains "$err" "ready: Amazing Grace, recording part Alto" &&
  check "box made the project" test -s "$work/box/projects/amazing-grace.acaproj/manifest.json"
printf '{"countIn": 9}' > "$work/bad-settings.json"
expect "the box with bad settings" 1 "$acapella" run --config "$work/bad-settings.json" --seconds 1 && check "settings message" contains "$err" "bad-settings.json: countIn: expected a whole number from 0 to 4"
expect "the box with a bad song" 2 "$acapella" run --song nosuchsong --data "$work/box" && check "box song message" contains "$err" "no song 'nosuchsong'"
expect "the box with an unwritable data directory" 1 "$acapella" run --data "$work/out/data" --seconds 1 --device sim:speed=4 &&
  check "data directory message" contains "$err" "$work/out/data/projects: cannot create the folder ($work/out/data: Not a directory)"
mkdir -p "$work/lonely" && cp "$acapella" "$work/lonely/acapella"
expect "the box without its song library" 1 bash -c "cd '$work/lonely' && ./acapella run --data '$work/box' --seconds 1" &&
  check "no songs message" contains "$err" "no songs: give --song PATH"
expect "the box with a missing project" 1 "$acapella" run --project "$work/nothing.acaproj" --data "$work/box" --seconds 1 &&
  check "missing project message" contains "$err" "nothing.acaproj: not a project"

# The installer, into a throwaway root; the unit passes systemd's checks.
stage="$work/stage"
expect "install into a throwaway root" 0 env DESTDIR="$stage" deploy/install --no-build --no-system --lcd &&
  check "binary installed" test -x "$stage/usr/local/bin/acapella" &&
  check "songs installed" test -s "$stage/usr/local/share/acapella/songs/amazing-grace.acasong" &&
  check "controls installed" test -s "$stage/usr/local/share/acapella/controls.json" &&
  check "settings in /etc/acapella" test -s "$stage/etc/acapella/acapella.json" &&
  check "controls in /etc/acapella" test -s "$stage/etc/acapella/controls.json" &&
  check "unit installed" test -s "$stage/etc/systemd/system/acapella.service" &&
  check "unit runs the installed binary" contains "$(cat "$stage/etc/systemd/system/acapella.service")" "ExecStart=/usr/local/bin/acapella run" &&
  check "USB sticks mounted as they come (udev rule)" contains "$(cat "$stage/etc/udev/rules.d/90-acapella-usb.rules" 2>/dev/null)" "systemd-mount --no-block --collect" &&
  check "limits installed" contains "$(cat "$stage/etc/security/limits.d/acapella.conf")" "rtprio 95" &&
  check "LCDd set up when asked" test -s "$stage/etc/LCDd.conf"
drivers="/usr/lib/$(ACAPELLA_DPKG_ARCH="$(dpkg --print-architecture)" bash -c 'case $ACAPELLA_DPKG_ARCH in amd64) echo x86_64-linux-gnu;; arm64) echo aarch64-linux-gnu;; armhf) echo arm-linux-gnueabihf;; esac')/lcdproc/"
check "LCDd finds its drivers here" contains "$(cat "$stage/etc/LCDd.conf")" "DriverPath=$drivers"
check "this machine has that driver folder" test -d "$drivers"
check "32-bit Raspberry Pi OS gets its driver folder" contains "$(ACAPELLA_DPKG_ARCH=armhf deploy/lcdd-conf < Config/LCDd.conf)" "DriverPath=/usr/lib/arm-linux-gnueabihf/lcdproc/"
check "64-bit Raspberry Pi OS gets its driver folder" contains "$(ACAPELLA_DPKG_ARCH=arm64 deploy/lcdd-conf < Config/LCDd.conf)" "DriverPath=/usr/lib/aarch64-linux-gnu/lcdproc/"
# LCDd loads a driver from that folder (the text one: no display here) and runs until stopped.
expect "LCDd runs with the installed configuration" 124 timeout 3 /usr/sbin/LCDd -c "$stage/etc/LCDd.conf" -d text -f -s 0 -p 14999
sed 's#^DriverPath=.*#DriverPath=/usr/lib/nowhere/lcdproc/#' "$stage/etc/LCDd.conf" > "$work/LCDd-wrong.conf"
expect "LCDd with a wrong driver folder stops at once (so the check above means something)" 1 timeout 3 /usr/sbin/LCDd -c "$work/LCDd-wrong.conf" -d text -f -s 0 -p 14998
# A user's settings survive a reinstall; the new defaults go beside them.
printf '{ "countIn": 2 }\n' > "$stage/etc/acapella/acapella.json"
expect "reinstall over edited settings" 0 env DESTDIR="$stage" deploy/install --no-build --no-system &&
  check "the user's settings are kept" equals "$(cat "$stage/etc/acapella/acapella.json")" '{ "countIn": 2 }' &&
  check "reinstall says so" contains "$out" "kept your $stage/etc/acapella/acapella.json"
# Checked as it would run from the staged binary (verify also checks that ExecStart exists).
mkdir -p "$work/unit"
sed "s#/usr/local/bin/acapella#$stage/usr/local/bin/acapella#" "$stage/etc/systemd/system/acapella.service" > "$work/unit/acapella.service"
expect "systemd accepts the unit" 0 systemd-analyze verify --man=no "$work/unit/acapella.service"
check "the unit has a memory ceiling that leaves the machine alive" grep -q '^MemoryMax=60%' "$work/unit/acapella.service"
check "and keeps the box the last the out-of-memory killer takes" grep -q '^OOMScoreAdjust=-500' "$work/unit/acapella.service"
expect "systemd-analyze security" 0 systemd-analyze security --offline=true --no-pager "$work/unit/acapella.service"
exposure="$(sed -n 's/.*Overall exposure level for acapella.service: \([0-9.]*\) .*/\1/p' <<<"$out")"
echo "   systemd-analyze security: exposure $exposure"
check "the unit's exposure is at most 4.0 (OK)" awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 4.0) }'
expect "the installed box finds its songs" 0 "$stage/usr/local/bin/acapella" run --data "$work/box2" --seconds 1 --device sim:speed=4 &&
  check "installed box ready" contains "$err" "ready: Amazing Grace"
# The installed box as the service starts it: stdin on /dev/null, no time limit; idle; SIGTERM.
"$stage/usr/local/bin/acapella" run --data "$work/box-service" --device sim:speed=1 </dev/null 2>"$work/service.err" &
service=$!
for _ in $(seq 50); do grep -q "ready:" "$work/service.err" && break; sleep 0.1; done
sleep 2
check "the installed box idles without a terminal" kill -0 "$service"
kill -TERM "$service"; wait "$service"; service_status=$?
check "and stops cleanly on SIGTERM" equals "$service_status" "0"
check "saying why it keeps running" contains "$(cat "$work/service.err")" "no terminal: running until stopped (SIGTERM)"
# What a user added stays through an uninstall.
printf 'acasong 1\npart S [treble]\nC4 1 |\n' > "$stage/usr/local/share/acapella/songs/mine.acasong"
mkdir -p "$stage/var/lib/acapella/projects/mine.acaproj"
expect "uninstall from the throwaway root" 0 env DESTDIR="$stage" deploy/install --uninstall --no-system &&
  check "binary removed" test ! -e "$stage/usr/local/bin/acapella" &&
  check "unit removed" test ! -e "$stage/etc/systemd/system/acapella.service" &&
  check "shipped songs removed" test ! -e "$stage/usr/local/share/acapella/songs/amazing-grace.acasong" &&
  check "the user's song kept" test -s "$stage/usr/local/share/acapella/songs/mine.acasong" &&
  check "the user's settings kept" test -s "$stage/etc/acapella/acapella.json" &&
  check "the user's projects kept" test -d "$stage/var/lib/acapella/projects/mine.acaproj"

# The Debian package, installed into a throwaway root by dpkg.
if [[ -n "${ACAPELLA_SKIP_PACKAGE:-}" ]]; then
  echo "cli: PACKAGE CHECKS SKIPPED (ACAPELLA_SKIP_PACKAGE is set)" >&2
else
  expect "build the .deb" 0 deploy/package -o "$work/deb"
  deb="$(tail -n 1 <<<"$out")"
  check "the .deb is there" test -s "$deb"
  expect "the .deb's control" 0 dpkg-deb -I "$deb" &&
    check "built for this machine" contains "$out" "Architecture: $(dpkg --print-architecture)" &&
    check "needs Debian's libraries, not the toolchain" bash -c "grep -q 'Depends:.*libasound2.*libsndfile1' <<<'$out' && ! grep -qi swift <<<'$out'"
  expect "apt resolves the .deb" 0 apt-get install --simulate "$deb" && check "apt would install it" contains "$out" "Inst acapella"
  debroot="$work/debroot"
  mkdir -p "$debroot/var/lib/dpkg/info" "$debroot/var/lib/dpkg/updates" && touch "$debroot/var/lib/dpkg/status" "$debroot/var/lib/dpkg/available"
  dpkg_root=(dpkg "--root=$debroot" --force-script-chrootless --force-depends --log=/dev/null)
  expect "dpkg installs it into a throwaway root" 0 "${dpkg_root[@]}" -i "$deb" &&
    check "the program" test -x "$debroot/usr/bin/acapella" &&
    check "the songs" test -s "$debroot/usr/share/acapella/songs/silent-night.acasong" &&
    check "the music font and its licence" test -s "$debroot/usr/share/acapella/fonts/bravura/Bravura.otf" -a -s "$debroot/usr/share/acapella/fonts/bravura/OFL.txt" &&
    check "the unit runs /usr/bin/acapella" contains "$(cat "$debroot/lib/systemd/system/acapella.service")" "ExecStart=/usr/bin/acapella run" &&
    check "the settings, as conffiles" contains "$(dpkg "--root=$debroot" -s acapella)" "/etc/acapella/acapella.json"
  expect "the packaged box runs" 0 "$debroot/usr/bin/acapella" run --data "$work/box3" --seconds 1 --device sim:speed=4 &&
    check "packaged box ready" contains "$err" "ready: Amazing Grace"
  printf '{ "countIn": 0 }\n' > "$debroot/etc/acapella/acapella.json"
  expect "an upgrade over edited settings" 0 "${dpkg_root[@]}" --force-confold -i "$deb" &&
    check "the edited conffile is kept" equals "$(cat "$debroot/etc/acapella/acapella.json")" '{ "countIn": 0 }'
  mkdir -p "$debroot/var/lib/acapella/projects/mine.acaproj"
  expect "dpkg removes it" 0 "${dpkg_root[@]}" -r acapella &&
    check "the program is gone" test ! -e "$debroot/usr/bin/acapella" &&
    check "the settings stay" test -s "$debroot/etc/acapella/acapella.json" &&
    check "the projects stay" test -d "$debroot/var/lib/acapella/projects/mine.acaproj"
fi

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
expect "required options in usage" 0 "$acapella" record --help && check "record's usage shows --part as required" contains "$out" "usage: acapella record --part NAME [--range A-B]"

# Reference recordings (issue 23): a "director's recording" made from the song's own mix, 2.5 s
# of quiet hiss before it, at 44.1 kHz, with lyrics in time beside it.
"$acapella" new "$work/ref.acaproj" --song Songs/amazing-grace.acasong >/dev/null
"$acapella" mix Songs/amazing-grace.acasong -o "$work/guide.wav" >/dev/null 2>&1
python3 - "$work/guide.wav" "$work/director.wav" <<'PY'
import random, struct, sys, wave
source = wave.open(sys.argv[1]); frames = source.readframes(source.getnframes()); channels = source.getnchannels()
samples = struct.unpack("<%dh" % (len(frames) // 2), frames)
# 44.1 kHz by linear interpolation (the box converts it back with libsoxr); 2.5 s of hiss first.
ratio = 48000 / 44100; count = int(len(samples) // channels / ratio)
random.seed(7)
out = [random.randint(-30, 30) for _ in range(int(2.5 * 44100) * channels)]
for i in range(count):
    position = i * ratio; low = int(position); frac = position - low
    for c in range(channels):
        a = samples[low * channels + c]; b = samples[min(len(samples) // channels - 1, low + 1) * channels + c]
        out.append(int(a + frac * (b - a)))
target = wave.open(sys.argv[2], "wb"); target.setnchannels(channels); target.setsampwidth(2); target.setframerate(44100)
target.writeframes(struct.pack("<%dh" % len(out), *out))
PY
printf '\xef\xbb\xbf[ti:Amazing Grace]\r\n[00:02.50]A-ma-zing grace\r\n[00:08.90][00:30.00]how sweet the sound\r\n' > "$work/director.lrc"
expect "a reference recording aligned" 0 "$acapella" reference add "$work/ref.acaproj" "$work/director.wav" --align &&
  check "converted with libsoxr" contains "$err" "converted from 44100 Hz to 48000 Hz (libsoxr)" &&
  check "found 2.5 s in, within 5 ms" matches "$err" "aligned: the song starts 2\.(49[5-9]|50[0-5]) s into it; confidence 0\.[0-9]+" &&
  check "its lyrics come with it" contains "$err" "director.lrc: 3 lines of lyrics in time come with it" &&
  check "what was added" matches "$out" "reference: director.wav: the song starts 2\.[0-9]+ s into it \(aligned, confidence 0\.[0-9]+\), with lyrics, 38\.[0-9] s"
expect "the reference shown" 0 "$acapella" reference show "$work/ref.acaproj" && check "shown with lyrics" contains "$out" "with lyrics"
expect "the reference listed with the takes" 0 "$acapella" takes "$work/ref.acaproj" && check "listed, with how to remove it" contains "$out" "reference: director.wav"
expect "the reference in a mix" 0 "$acapella" mix "$work/ref.acaproj" --reference include -o "$work/withref.wav" &&
  check "the mix says so" contains "$err" "the reference recording director.wav" && check "and wrote it" contains "$out" "wrote $work/withref.wav"
expect "--reference with --verse" 2 "$acapella" mix "$work/ref.acaproj" --reference include --verse all -o "$work/x.wav" &&
  check "one line why" contains "$err" "cannot go with --verse"
expect "--reference for a song" 2 "$acapella" mix Songs/amazing-grace.acasong --reference include -o "$work/x.wav" &&
  check "a song has none" contains "$err" "needs a project"
expect "--reference at another tempo" 1 "$acapella" mix "$work/ref.acaproj" --reference include --tempo 0.9 -o "$work/x.wav" &&
  check "the written tempo only" contains "$err" "plays only at the written tempo and key"
expect "the reference's level in the session" 0 "$acapella" session "$work/ref.acaproj" --part Reference --volume -6 &&
  check "said" contains "$out$err" "Reference -6.0 dB"
"$acapella" mix Songs/amazing-grace.acasong --tempo 1.04 -o "$work/fast.wav" >/dev/null 2>&1
expect "a recording at another tempo is refused" 1 "$acapella" reference add "$work/ref.acaproj" "$work/fast.wav" --align &&
  check "it says the tempo differs" matches "$err" "error: .*fast.wav: not aligned: the recording's tempo is about [34]\.[0-9] % faster than the song's" &&
  expect "the reference before it stays" 0 "$acapella" reference show "$work/ref.acaproj" && check "still the director's" contains "$out" "director.wav"
printf 'not audio' > "$work/noise.mp3"
expect "a file that is not audio" 1 "$acapella" reference add "$work/ref.acaproj" "$work/noise.mp3" &&
  check "one line, naming it" matches "$err" "^acapella reference: error: .*noise.mp3: not audio libsndfile can read" && check "one line" equals "$(wc -l <<<"$err")" "1"
expect "--offset and --align" 2 "$acapella" reference add "$work/ref.acaproj" "$work/guide.wav" --offset 1 --align
mkdir -p "$work/imported"
expect "a bundle carries the reference" 0 "$acapella" export "$work/ref.acaproj" -o "$work/refb.acaproj.zip" &&
  expect "and brings it in" 0 "$acapella" import-project "$work/refb.acaproj.zip" --into "$work/imported" &&
  expect "the reference, imported" 0 "$acapella" reference show "$work/imported/ref.acaproj" && check "with its lyrics" matches "$out" "director.wav: the song starts 2\.[0-9]+ s into it .*with lyrics"
expect "a reference placed by hand" 0 "$acapella" reference offset "$work/ref.acaproj" -1.25 &&
  check "it starts into the song" contains "$out" "it starts 1.250 s into the song (offset given)"
expect "the reference removed" 0 "$acapella" reference remove "$work/ref.acaproj" &&
  check "said" contains "$err" "the reference recording director.wav removed" &&
  check "nothing of it left" equals "$(ls "$work/ref.acaproj/reference" | wc -l)" "0"
expect "removed twice" 1 "$acapella" reference remove "$work/ref.acaproj" && check "none" contains "$err" "has no reference recording"

# Architecture: the pure modules' imports and I/O are checked by PurityTests (the unit tests).

echo "cli: $passed passed, $failed failed"
((failed == 0))
