#!/usr/bin/env bash
# Bad input elsewhere, the box's settings refused at start, devices, MIDI learn, the box run and quit.
# Runs alone in a scratch folder of its own: Tests/cli/errors.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

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
printf '{"part": 7}' > "$work/part-settings.json"
expect "the box with part 7 of 4" 1 "$acapella" run --config "$work/part-settings.json" --song amazing --data "$work/box" --seconds 1 --device sim:speed=4 &&
  check "part names the file" contains "$err" "acapella run: error: $work/part-settings.json: part: part 7, but 'Amazing Grace' has 4 parts"
expect "the box with --part 9" 1 "$acapella" run --part 9 --song amazing --data "$work/box" --seconds 1 --device sim:speed=4 &&
  check "--part message" contains "$err" "acapella run: error: --part: part 9, but 'Amazing Grace' has 4 parts"
expect "the box with --part by name" 0 "$acapella" run --part tenor --song amazing --data "$work/box" --seconds 1 --device sim:speed=4 &&
  check "--part by name, in any case" contains "$err" "recording part Tenor (3 of 4)"
expect "the box with a part the song lacks" 1 "$acapella" run --part Baritone --song amazing --data "$work/box" --seconds 1 --device sim:speed=4 &&
  check "--part name message" contains "$err" "acapella run: error: --part: no part named 'Baritone' in 'Amazing Grace'; its parts: Soprano, Alto, Tenor, Bass"

expect "devices" 0 "$acapella" devices && check "devices lists GPIO" contains "$out" "GPIO chips" && check "devices lists MIDI" contains "$out" "MIDI ports"
if [ ! -e /dev/snd/seq ]; then
  expect "midi-learn without a sequencer" 1 "$acapella" midi-learn punch-in --timeout 1 && check "sequencer message" contains "$err" "MIDI: no ALSA sequencer"
fi
expect "midi-learn unknown action" 2 "$acapella" midi-learn frob && check "action message" contains "$err" "unknown action 'frob'; actions: play-pause"
printf '{"midi": {"bindings": [{"event": "cc", "action": "stop"}]}}' > "$work/bad-controls.json"
expect "midi-learn on a wrong config" 1 "$acapella" midi-learn stop --config "$work/bad-controls.json" && check "config message" contains "$err" "bad-controls.json: midi.bindings[0].controller: missing"

expect "the box runs and quits" 0 "$acapella" run --data "$work/box" --seconds 2 --play --device sim:speed=4 &&
  check "box says ready" contains "$err" "ready: Amazing Grace, recording part Alto" &&
  check "box made the project" test -s "$work/box/projects/amazing-grace.acaproj/manifest.json"
expect "the box with a recording set" 0 "$acapella" run --parts "Soprano=1,Alto=2,Tenor=3,Bass=4" --song amazing --data "$work/box" --seconds 2 --play --device sim:speed=4 &&
  check "box says the set" contains "$err" "ready: Amazing Grace, recording together Soprano (input 1), Alto (input 2), Tenor (input 3), Bass (input 4)"
expect "a recording set wrongly written" 2 "$acapella" run --parts "Soprano=0" --data "$work/box" --seconds 1 --device sim:speed=4 &&
  check "set message" contains "$err" "--parts: 'Soprano=0' is not PART=INPUT (an input from 1 to 32), as in Soprano=1,Alto=2"
expect "a recording set on more inputs than the device has" 1 "$acapella" run --parts "Soprano=1,Alto=3" --song amazing --data "$work/box" --seconds 1 --device sim:speed=4,inputs=2 &&
  check "inputs message" contains "$err" "acapella run: error: Alto on input 3: simulated room" && check "inputs count" contains "$err" "has 2 inputs"
printf '{"together": {"Soprano": 1, "Alto": 1}}' > "$work/set-settings.json"
expect "a recording set in the settings, an input twice" 1 "$acapella" run --config "$work/set-settings.json" --data "$work/box" --seconds 1 --device sim:speed=4 &&
  check "settings set message" contains "$err" "set-settings.json: together: expected an object of parts"
printf '{"countIn": 9}' > "$work/bad-settings.json"
expect "the box with bad settings" 1 "$acapella" run --config "$work/bad-settings.json" --seconds 1 && check "settings message" contains "$err" "bad-settings.json: countIn: expected a whole number from 0 to 4"
expect "the box with a bad song (a usage error: exit 2)" 2 "$acapella" run --song nosuchsong --data "$work/box" && check "box song message" contains "$err" "no song 'nosuchsong'"
# (The other settings refused at start: BoxSetupTests, without starting a box.)
expect "the box with an unwritable data directory" 1 "$acapella" run --data "$work/out/data" --seconds 1 --device sim:speed=4 &&
  check "data directory message" contains "$err" "$work/out/data/projects: cannot create the folder ($work/out/data: Not a directory)"
mkdir -p "$work/lonely" && cp "$acapella" "$work/lonely/acapella"
expect "the box without its song library" 1 bash -c "cd '$work/lonely' && ./acapella run --data '$work/box' --seconds 1" &&
  check "no songs message" contains "$err" "no songs: give --song PATH"

finish
