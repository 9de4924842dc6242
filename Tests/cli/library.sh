#!/usr/bin/env bash
# The user's songs: MusicXML dropped into songs/ imported beside itself; the box on MusicXML.
# Runs alone in a scratch folder of its own: Tests/cli/library.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

# (A song dropped into the songs folder while the box runs, and one removed: SessionLoopTests, in-process.)
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

finish
