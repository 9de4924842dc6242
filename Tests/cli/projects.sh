#!/usr/bin/env bash
# Projects: new, record in the simulated room, analyze, takes, mix, the calibration, and the errors.
# Runs alone in a scratch folder of its own: Tests/cli/projects.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

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
quartet="$work/quartet.acaproj"
"$acapella" new "$quartet" --song Songs/amazing-grace.acasong > /dev/null
expect "a quartet at once, a microphone each" 0 "$acapella" record "$quartet" --parts "Soprano=1,Alto=2,Tenor=3,Bass=4" --device sim:crosstalk=0.2 &&
  check "says the four inputs" contains "$err" "recording Soprano (input 1), Alto (input 2), Tenor (input 3), Bass (input 4) on the simulated room" &&
  check "a take per part" contains "$out" "take 4  Bass  kept, active  40.00 s  full  offset 200000" &&
  check "the takes share one alignment" test "$(grep -c 'full  offset 200000' <<< "$out")" = 4
expect "the quartet's tenor in tune, on time" 0 "$acapella" analyze "$quartet" --part Tenor --take 3 &&
  check "the Tenor's take is the Tenor" contains "$out" "of 28 notes sung"
blended="$work/blend.acaproj"
"$acapella" new "$blended" --song Songs/amazing-grace.acasong > /dev/null
"$acapella" record "$blended" --part Soprano --device sim:bleed=0 > /dev/null 2>&1
expect "a blend before two parts have takes" 1 "$acapella" blend "$blended" && check "blend message" contains "$err" "a blend needs two parts with a playing take (Soprano has one)"
"$acapella" record "$blended" --part Alto --device sim:bleed=0 --detune -25 > /dev/null 2>&1
"$acapella" record "$blended" --part Tenor --device sim:bleed=0 --late 80 > /dev/null 2>&1
expect "how the choir sounded together" 0 "$acapella" blend "$blended" --svg "$work/blend.svg" &&
  check "the chords and entries counted" matches "$out" "^[0-9]+ chords sung together, [0-9]+ common entries" &&
  check "the flat alto named" matches "$out" "Alto \(take 2\): 1[5-9] cents flat of the ensemble" &&
  check "the late tenor named" matches "$out" "Tenor \(take 3\): .*entering (7[5-9]|8[0-5]) ms after the others" &&
  check "the chords the alto was flat in named once, over their measures" matches "$out" "mm\. 0–14 \([0-9]+ chords\): alto [0-9]+ cents flat of the chord, on average" &&
  check "the plot written" contains "$(cat "$work/blend.svg")" "ensemble</text>"
cp -r "$blended" "$work/damaged.acaproj"
: > "$work/damaged.acaproj/takes/$(basename "$(ls "$work/damaged.acaproj/takes/"*tenor*.wav | head -1)")"
expect "a blend with a damaged take" 0 "$acapella" blend "$work/damaged.acaproj" &&
  check "the others still blend" contains "$out" "Alto (take 2): " &&
  check "the damaged take said" contains "$out" "Tenor: take 3 left out (unreadable: its audio file is empty)"
expect "the blend as JSON" 0 "$acapella" blend "$blended" --json &&
  check "JSON has the parts" contains "$out" '"offsetCents"' &&
  check "JSON has just intonation" contains "$out" '"againstJust"'
"$acapella" record "$blended" --part Bass --device sim:bleed=0 --tempo 80 > /dev/null 2>&1
expect "a take at another tempo" 0 "$acapella" blend "$blended" &&
  check "left out, and why" contains "$out" "Bass: take 4 left out (sung at 80 % of the tempo, 0 semitones; the others at 100 %, 0: a blend compares takes on one timeline)"
expect "an input the room lacks" 1 "$acapella" record "$quartet" --parts "Soprano=1,Alto=3" --device sim:inputs=2 &&
  check "input message" contains "$err" "Alto on input 3: simulated room" &&
  check "nothing recorded" test "$("$acapella" takes "$quartet" | grep -c '^take')" = 4
expect "one input twice" 2 "$acapella" record "$quartet" --parts "Soprano=1,Alto=1" && check "twice message" contains "$err" "input 1 is given twice"
expect "--part and --parts" 2 "$acapella" record "$quartet" --part Alto --parts "Alto=1" && check "both message" contains "$err" "not both"
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
expect "mix at another tempo and key stretches the takes" 0 "$acapella" mix "$project" -o "$work/slow.wav" --tempo 0.9 --transpose -2 &&
  check "stretched, said" contains "$err" "stretched with Rubber Band to the mix's tempo and key: take 1 (Alto) at 90 % of the tempo sung, 2 semitones down" &&
  check "none left out" lacks "$err" "not played in this mix"
expect "mix --tempo as a percent, as record takes it" 0 "$acapella" mix "$project" -o "$work/slow90.wav" --tempo 90% --transpose -2 &&
  check "the same mix as --tempo 0.9" equals "$(cmp "$work/slow.wav" "$work/slow90.wav" && echo same)" "same"
expect "takes undo" 0 "$acapella" takes "$project" undo && check "undo says discarded" contains "$err" "take 4 (Bass) discarded" &&
  check "the previous pass plays again" contains "$out" "take 3  Bass  kept, active"
printf '{"format":"acaproj","vers' > "$project/manifest.json"
expect "damaged manifest reopens" 0 "$acapella" takes "$project" &&
  check "damage reported" contains "$err" "manifest.json: not valid JSON" &&
  check "takes survive" contains "$out" "take 1  Alto  kept, active"
expect "missing project" 1 "$acapella" takes "$work/nothing.acaproj" && check "missing project message" contains "$err" "no such project"

# acapella correct: a simulated-room take sung 30 cents flat, put in tune as a new take.
flat="$work/flat.acaproj"
"$acapella" new "$flat" --song Songs/amazing-grace.acasong >/dev/null
expect "record a flat Alto" 0 "$acapella" record "$flat" --part Alto --detune -30 &&
  expect "analysed flat" 0 "$acapella" analyze "$flat" --json &&
  check "its notes flat" equals "$(printf '%s' "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(all(-35 <= n["cents"] <= -25 for n in r["notes"] if n.get("cents") is not None))')" "True"
expect "correct the flagged notes" 0 "$acapella" correct "$flat" --part Alto &&
  check "a new take" contains "$out" "take 2 (Alto): take 1 with 28 notes put in tune; it plays now" &&
  check "each note said" contains "$out" "m. 1 beat 1 'maz' (D4): 30 cents flat, moved up 30." &&
  check "how to go back" contains "$err" "acapella takes $flat activate 1"
expect "the new take analysed" 0 "$acapella" analyze "$flat" --take 2 --json &&
  check "in tune now" equals "$(printf '%s' "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(max(abs(n["cents"]) for n in r["notes"] if n.get("cents") is not None) <= 3)')" "True"
expect "the take as sung stays" 0 "$acapella" takes "$flat" && check "take 1 kept" contains "$out" "take 1  Alto  kept" && check "take 2 plays" contains "$out" "take 2  Alto  kept, active"
expect "nothing left to correct" 1 "$acapella" correct "$flat" --take 2 && check "said why" contains "$err" "no note to move (none is 15 cents or more off)"
expect "correct: bad --notes" 2 "$acapella" correct "$flat" --notes most && check "said what it takes" contains "$err" "all, flagged (15 cents or more off) or m.FIRST-LAST"
expect "correct: bad --strength" 2 "$acapella" correct "$flat" --strength 2 && check "said the range" contains "$err" "a number above 0, up to 1"
expect "record at 80 %, a tone lower" 0 "$acapella" record "$flat" --part Tenor --tempo 80 --transpose -2 &&
  check "stored as sung" equals "$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); t=[t for t in m["takes"] if t["part"]=="Tenor"][-1]; print(t["tempoScale"], t["transpose"])' "$flat/manifest.json")" "4/5 -2"
expect "mixed at the written tempo: stretched back" 0 "$acapella" mix "$flat" --session ignore -o "$work/flat.wav" &&
  check "said which" contains "$err" "(Tenor) at 125 % of the tempo sung, 2 semitones up"
expect "record: a tempo out of range" 2 "$acapella" record "$flat" --part Tenor --tempo 300 && check "said the range" contains "$err" "--tempo expects a tempo from 50 to 150 % of the written one, like 90 (or 0.9), not '300'"

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
if [[ -d "$voice" ]]; then
  expect "notes of the sustained A3" 0 "$acapella" notes "$voice/sustain_a3_vibrato.wav" --midi "$work/a3.mid" &&
    check "one note, A3, its onset and its vibrato centred" matches "$out" $'^onset_s,offset_s,midi,note,cents,hz\n0\\.(19|20|21)[0-9]*,8\\.[12][0-9]*,57,A3,[+-][0-9]\\.[0-9],2[12][0-9]\\.[0-9]+$' &&
    check "the MIDI file: one track of notes at 60 BPM, note 57 on" python3 -c "
d=open('$work/a3.mid','rb').read()
assert d[:4]==b'MThd' and d.count(b'MTrk')==2, d[:20]
assert bytes([0xFF,0x51,0x03,0x0F,0x42,0x40]) in d  # 1,000,000 µs a quarter
assert bytes([0x90,57]) in d and bytes([0x80,57]) in d or bytes([0x90,57,0]) in d"
  expect "pitch of the sustained A3" 0 "$acapella" pitch "$voice/sustain_a3_vibrato.wav" &&
    check "each reading stamped at its sample, to the nanosecond (frame 2: 1024 / 48000 s)" matches "$(sed -n 4p <<<"$out")" '^0\.021333333,' &&
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
expect "calibrate the room" 0 "$acapella" calibrate --device sim:latency=240.5,reported=200 &&
  check "calibration measured" contains "$out" "round trip 240.50 frames" &&
  check "trim stored" contains "$out" "trim +40.50 frames stored in $work/data/calibration.json"
expect "calibrate a missing card" 1 "$acapella" calibrate --device alsa:hw:7 && check "card message" contains "$err" "hw:7: snd_pcm_open (playback) failed"
expect "calibrate bad words" 2 "$acapella" calibrate --device sim:latency=abc && check "words message" contains "$err" "is not NAME=NUMBER"
expect "record with the calibration" 0 "$acapella" record "$project" --part Soprano --device sim:latency=240.5,reported=200 &&
  check "calibration recorded" contains "$(cat "$project/manifest.json")" "200.00 frames reported + 40.50 calibrated trim"

finish
