#!/usr/bin/env bash
# Song files: check, dump, format, info, import, mix, export-lrc, engrave, page-score and their errors.
# Runs alone in a scratch folder of its own: Tests/cli/songs.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

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

if [[ -d "$mx" ]]; then
  expect "import to file" 0 "$acapella" import "$mx/bach_bwv66.6.mxl" -o "$work/bwv66.acasong" &&
    check "import report on stderr" contains "$err" "bach_bwv66.6.mxl: measures whose length differs from their time signature written as time changes ×1, first at measure 9" &&
    check "import wrote a file" contains "$err" "wrote $work/bwv66.acasong: 4 parts, 9 measures" &&
    check "fermatas kept" equals "$(grep -o '\\fermata' "$work/bwv66.acasong" | wc -l)" "6" &&
    check "common time, the tempo played not printed, the last measure as written" contains "$(cat "$work/bwv66.acasong")" "$(printf 'time: 4/4 common\ntime@9: 3/4 unprinted\nkey: F# minor\ntempo: 96 unprinted')"
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
  check "engrave says the pages" equals "$out" "wrote $work/lift.pdf: 5 systems, 398 notes, 4 parts, 2 pages" &&
  check "a PDF" equals "$(head -c 5 "$work/lift.pdf")" "%PDF-" &&
  check "two A4 pages" equals "$(grep -a -c 'MediaBox \[ 0 0 595.275591 841.889764' "$work/lift.pdf")" "2"
expect "engrave closed score" 0 "$acapella" engrave Songs/amazing-grace.acasong -o "$work/closed.svg" --closed &&
  check "two staves a system, all notes" equals "$out" "wrote $work/closed.svg: 2 systems, 116 notes, 4 parts" &&
  check "one line of words (two verses) between the staves" equals "$(grep -c '>grace<' "$work/closed.svg")" "4"
expect "engrave to another format" 2 "$acapella" engrave Songs/amazing-grace.acasong -o "$work/ag.png" &&
  check "format message" contains "$err" "engrave writes .svg (for the screen) or .pdf (pages to print)"
expect "page-score" 0 "$acapella" page-score Songs/amazing-grace.acasong --part Alto --out "$work/page" --width 100 &&
  check "page-score says what it made and its peak" contains "$out" "engraved: " &&
  check "page-score's SVG, compressed, highlights the part (a group a system)" equals "$(gzip -dc "$work/page/score.svg.gz" | grep -c 'class="highlight"')" "4" &&
  check "page-score's time map" contains "$(head -c 200 "$work/page/timemap.json")" '"onsets"'
expect "page-score unknown part" 2 "$acapella" page-score Songs/amazing-grace.acasong --part Descant --out "$work/page" &&
  check "page-score part message" contains "$err" "no part named 'Descant'; the parts are: Soprano, Alto, Tenor, Bass"
expect "engrave unknown part" 1 "$acapella" engrave Songs/amazing-grace.acasong -o "$work/x.svg" --part Descant &&
  check "engrave part message" contains "$err" "no part named 'Descant'; the parts are: Soprano, Alto, Tenor, Bass"

expect "mix unknown format" 2 "$acapella" mix Songs/amazing-grace.acasong -o "$work/x.aiffc" && check "format message" contains "$err" "unknown audio format"
expect "mix unknown part" 1 "$acapella" mix Songs/amazing-grace.acasong -o "$work/x.wav" --practice Descant && check "part message" contains "$err" "no part named 'Descant'"
expect "mix bad tempo" 2 "$acapella" mix Songs/amazing-grace.acasong -o "$work/x.wav" --tempo fast && check "tempo message" contains "$err" "--tempo expects a tempo from 25 to 400 % of the written one, like 90 (or 0.9), not 'fast'"
expect "mix without output" 2 "$acapella" mix Songs/amazing-grace.acasong && check "output message" contains "$err" "mix needs -o OUT"
check "no partial file left behind" bash -c "! ls -a '$work' | grep -q partial"

finish
