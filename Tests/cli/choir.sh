#!/usr/bin/env bash
# Many singers, one project: merge, the session as it was left, USB sticks.
# Runs alone in a scratch folder of its own: Tests/cli/choir.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

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
expect "a take named" 0 "$acapella" takes "$work/choir.acaproj" name 2 "Ben's best" && check "listed by its name" contains "$out" "take 2  Alto  kept, active  40.00 s  'Ben's best'"
expect "a name of two lines" 2 "$acapella" takes "$work/choir.acaproj" name 2 "$(printf 'a\nb')" && check "name message" contains "$err" "takes name: a take's name holds a character that does not show (U+A)"
expect "the name taken away" 0 "$acapella" takes "$work/choir.acaproj" name 2 && check "no name listed" lacks "$out" "Ben's best"
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
expect "record --as with a newline" 2 "$acapella" record "$work/choir.acaproj" --part Alto --as $'A\nB' && check "singer message" contains "$err" "--as: a singer's name holds a character that does not show (U+A)"
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
# A part on its tones: its takes kept but left out of the mix (and of what the box plays).
expect "the alto on its tones" 0 "$acapella" session "$work/choir.acaproj" --part alto --takes off &&
  check "said" contains "$out" "Alto on its tones (takes left out)"
expect "mix with the alto on its tones" 0 "$acapella" mix "$work/choir.acaproj" -o "$work/alto-tones.wav" &&
  check "the mix says so" contains "$err" "Alto on its tones (takes left out)" && check "and differs" bash -c "! cmp -s '$work/rehearsed.wav' '$work/alto-tones.wav'"
expect "its takes again" 0 "$acapella" session "$work/choir.acaproj" --part Alto --takes on
expect "the same mix as before" 0 "$acapella" mix "$work/choir.acaproj" -o "$work/rehearsed-again.wav" &&
  check "byte for byte" cmp -s "$work/rehearsed.wav" "$work/rehearsed-again.wav"
expect "a volume out of range" 2 "$acapella" session "$work/choir.acaproj" --part Alto --volume 40 && check "volume message" contains "$err" "--volume expects dB from -60 to +12"
expect "a pan without a part" 2 "$acapella" session "$work/choir.acaproj" --pan 0.5 && check "part message" contains "$err" "need --part NAME"
expect "a loop outside the song" 1 "$acapella" session "$work/choir.acaproj" --loop 90-99 && check "loop message" contains "$err" "measures 90-99 are not in the song"
"$acapella" run --project "$work/choir.acaproj" --seconds 2 --device sim --data "$work/resume" --web off </dev/null >/dev/null 2>"$work/resume.err"
check "the box resumes the session" contains "$(cat "$work/resume.err")" "resumed as last left: Tenor muted, Bass -4.0 dB pan +0.80"
check "and leaves it as it was" contains "$(tr -d ' \n' <"$work/choir.acaproj/session.json")" '"countIn":2,"format":"acapella-session","loop":[3,6],"looping":true'
printf '{ broken' >"$work/choir.acaproj/session.json"
expect "a damaged session file" 0 "$acapella" session "$work/choir.acaproj" && check "named, defaults used" contains "$err" "session.json: not valid JSON"
# USB sticks: songs in from acapella/songs/, results out to acapella/export/, as the box does with a stick.
mkdir -p "$work/stickdata/projects" "$work/plainstick/acapella/songs" "$work/nostick"
cp -a "$work/choir.acaproj" "$work/stickdata/projects/choir.acaproj" && rm -f "$work/stickdata/projects/choir.acaproj/session.json"
[[ -d "$mx" ]] && cp "$mx/bach_bwv304.mxl" "$work/plainstick/acapella/songs/"
expect "a stick without acapella/" 1 "$acapella" usb "$work/nostick" --data "$work/stickdata" && check "stick message" contains "$err" "no acapella/ folder on it"
expect "a stick's songs in, results out" 0 "$acapella" usb "$work/plainstick" --data "$work/stickdata" &&
  check "the files out" equals "$(cd "$work/plainstick/acapella/export" && find . -type f | sort | tr '\n' ' ')" "./choir/choir.acaproj.zip ./choir/mix.flac ./choir/mix.m4a ./choir/mix.mp3 ./choir/practice-alto.mp3 ./choir/practice-bass.mp3 ./choir/practice-soprano.mp3 ./choir/practice-tenor.mp3 " &&
  check "safe to remove, at the end" contains "$out" "safe to remove" &&
  check "nothing hidden left behind" equals "$(find "$work/plainstick" -name '.*' | wc -l)" "0" &&
  check "the bundle is the project" bash -c "'$acapella' import-project '$work/plainstick/acapella/export/choir/choir.acaproj.zip' --into '$work/nostick' >/dev/null 2>&1 && cmp '$work/nostick/choir.acaproj/takes/alto-boxb-1.wav' '$work/choir.acaproj/takes/alto-boxb-1.wav'"
if [[ -d "$mx" ]]; then
  check "the stick's song is in the library, imported" bash -c "cmp '$mx/bach_bwv304.mxl' '$work/stickdata/songs/bach_bwv304.mxl' && test -s '$work/stickdata/songs/bach_bwv304.acasong'"
fi
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
  check "says each step" contains "$(cat "$work/usbbox.err")" "USB 8/9: Amazing Grace: the project bundle"
  check "the last step is the last of them" contains "$(cat "$work/usbbox.err")" "USB 9/9: flushing the stick"
  check "and safe to remove" contains "$(cat "$work/usbbox.err")" "files out — safe to remove"
  check "the export is on the stick" test -s "$work/media/stick/acapella/export/choir/mix.flac"
  check "the stick is seen past 200 other mounts" test "$(grep -n " $work/media/stick " /proc/self/mountinfo | cut -d: -f1)" -gt 200
  umount "$work/media/stick"
  for n in $(seq 200); do umount "$work/many/$n"; done
fi

finish
