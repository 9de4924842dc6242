#!/usr/bin/env bash
# What is refused is refused before anything happens, in one line that says
# why in the user's words; what is kept is said as kept (the fourth attack's
# cases, issue 51). Runs alone: Tests/cli/refusals.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

p="$work/duet.acaproj"
"$acapella" new "$p" --song Songs/simple-harmony.acasong >/dev/null
"$acapella" record "$p" --part Soprano --device sim:speed=0 >/dev/null 2>&1
"$acapella" record "$p" --part Bass --device sim:speed=0 --detune 40 >/dev/null 2>&1
takes() { ls "$p/takes" | grep -c 'wav$'; }

# A part named twice (by its name and its number) or an input the room lacks: refused, nothing recorded, nothing said as recording.
expect "a part named twice" 1 "$acapella" record "$p" --parts "Soprano=1,1=2" --device sim:speed=0 &&
  check "named twice, said so" equals "$err" "acapella record: error: --parts: Soprano is named twice (as Soprano and 1)" &&
  check "no take recorded" equals "$(takes)" "2"
expect "an input the room lacks" 1 "$acapella" record "$p" --parts Soprano=1,Bass=2 --device sim:inputs=1,speed=0 &&
  check "the room's one input said" contains "$err" "Bass on input 2" && check "one line" equals "$(wc -l <<<"$err")" "1" &&
  check "still no take" equals "$(takes)" "2"
expect "a part the song lacks" 1 "$acapella" record "$p" --part Alto --device sim:speed=0 &&
  check "refused before 'recording'" lacks "$err" "recording " && check "the parts listed" contains "$err" "no part named 'Alto'; the parts are: Soprano, Bass"
expect "a range past the song" 1 "$acapella" record "$p" --part Bass --range 7-9 --device sim:speed=0 &&
  check "range: one line, no 'recording'" equals "$(wc -l <<<"$err")" "1" && check "range named" contains "$err" "measures 7-9 are not all in the song"

# An active take whose record names a file outside the project: named, the new take kept and playing, exit 0.
cp -a "$p" "$work/abs.acaproj"
python3 - "$work/abs.acaproj" <<'EOF'
import json, os, sys
path = sys.argv[1]
manifest = json.load(open(path + "/manifest.json"))
take = next(t for t in manifest["takes"] if t["part"] == "Soprano")
os.remove(path + "/" + take["file"][:-4] + ".json")
take["file"] = "/etc/passwd"
json.dump(manifest, open(path + "/manifest.json", "w"))
EOF
expect "record beside a take whose file is /etc/passwd" 0 "$acapella" record "$work/abs.acaproj" --part Soprano --device sim:speed=0 &&
  check "the bad take named" contains "$err" "'/etc/passwd' is not a take file (takes/NAME.wav); take 1 is left out" &&
  check "no 'free some space'" lacks "$err" "free some space" && check "the new take kept and playing" contains "$out" "Soprano  kept, active"

# Outputs that are devices: refused, the device untouched.
expect "a plot to /dev/full" 1 "$acapella" blend "$p" --svg /dev/full &&
  check "a device is no file" contains "$err" "/dev/full: a device or a pipe, not a file; give the name of a file to write" &&
  check "/dev/full is still a device" test -c /dev/full
expect "a mix to /dev/full" 1 "$acapella" mix "$p" -o /dev/full && check "/dev/full still a device after a mix" test -c /dev/full
touch "$work/there.wav"
expect "correct --for-box over a file" 1 "$acapella" correct "$p" --part Bass --for-box "$work/there.wav" &&
  check "a new file, never over one" equals "$err" "acapella correct: error: $work/there.wav already exists: --for-box writes a new file, never over one"

# Correct: a strength that moves nothing, measures the song lacks.
expect "correct --strength 0" 2 "$acapella" correct "$p" --part Bass --strength 0 && check "0 moves nothing" contains "$err" "; 0 moves nothing"
expect "correct --strength 0.001" 1 "$acapella" correct "$p" --part Bass --strength 0.001 &&
  check "notes chosen, none would move a cent" matches "$err" "notes? chosen, but at --strength 0.001 none would move a cent"
expect "correct measures the song lacks" 1 "$acapella" correct "$p" --part Bass --notes m.9999-99999 &&
  check "not in the song" contains "$err" "measures 9999-99999 are not in the song (measures 1–3)"

# Take ids as the manifest has them (up to 999,999,999); the takes usage names 'name'.
expect "mix --take 5000000" 1 "$acapella" mix "$p" --take 5000000 -o "$work/t.wav" && check "no such take, not out of range" lacks "$err" "1 to 1000000"
expect "takes --help" 0 "$acapella" takes --help && check "takes usage names name" contains "$out" "name ID [NAME]"

# Bundles: an entry twice, records without their audio.
mkdir -p "$work/b/x.acaproj/takes" "$work/into"
cp "$p/manifest.json" "$p/score.acasong" "$work/b/x.acaproj/"
python3 -W ignore - "$work/b" <<'EOF'
import sys, zipfile
root = sys.argv[1]
with zipfile.ZipFile(root + "/twice.acaproj.zip", "w") as bundle:
    for name in ["manifest.json", "manifest.json", "score.acasong"]:
        bundle.write(f"{root}/x.acaproj/{name}", f"x.acaproj/{name}")
with zipfile.ZipFile(root + "/junk.acaproj.zip", "w") as bundle:
    for name in ["manifest.json", "score.acasong"]:
        bundle.write(f"{root}/x.acaproj/{name}", f"x.acaproj/{name}")
    for n in range(300):
        bundle.writestr(f"x.acaproj/takes/x{n:05d}.json", "{}" * 100)
EOF
expect "a bundle with two manifests" 1 "$acapella" import-project "$work/b/twice.acaproj.zip" --into "$work/into" &&
  check "an entry twice, said" contains "$err" "'x.acaproj/manifest.json' is in the bundle twice" && check "no staging path in it" lacks "$err" "importing-"
expect "a bundle of records without audio" 1 "$acapella" import-project "$work/b/junk.acaproj.zip" --into "$work/into" &&
  check "records without audio, said" contains "$err" "'x.acaproj/takes/x00000.json' is a take's record without its audio (and 299 more); nothing was imported" &&
  check "nothing imported" equals "$(ls -A "$work/into" 2>/dev/null | wc -l)" "0"

# Names that cannot be told apart, or do not show.
expect "a take named with a byte-order mark alone" 2 "$acapella" takes "$p" name 1 "$(printf '\xef\xbb\xbf')" &&
  check "a character that does not show" contains "$err" "does not show (U+FEFF)"
expect "a take named A with 39 accents" 2 "$acapella" takes "$p" name 1 "A$(for _ in $(seq 39); do printf '\xcc\x81'; done)" &&
  check "too many accents" contains "$err" "puts more than 8 marks on one letter"
expect "a singer of a direction override" 2 "$acapella" record "$p" --part Bass --as "Ann$(printf '\xe2\x80\xae')evil" --device sim:speed=0 &&
  check "the override named" contains "$err" "(U+202E)"
finish
