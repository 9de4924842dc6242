#!/usr/bin/env bash
# The web page: the box in the simulated room serving on a free port.
# Runs alone in a scratch folder of its own: Tests/cli/web.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

webport=$((20000 + RANDOM % 20000))
# A song text left by an engraving killed midway: removed when the cache is pruned.
mkdir -p "$work/webbox/cache/page" && echo "acasong 1" >"$work/webbox/cache/page/deadbeef-wide.acasong"
"$acapella" run --data "$work/webbox" --seconds 120 --device sim:speed=1 --web "$webport" --play >"$work/web.out" 2>"$work/web.err" &
webbox=$!
for _ in $(seq 50); do grep -q "pairing code" "$work/web.err" 2>/dev/null && break; sleep 0.2; done
code="$(grep -o 'pairing code [0-9]*' "$work/web.err" | head -n 1 | grep -o '[0-9]*$' || true)"
check "the box says its pairing code and where the page is until its name is announced" contains "$(cat "$work/web.err")" "web: pairing code $code — the page at http://"
check "and no mDNS name before it is granted" equals "$(grep -c "web: http://acapella.local" "$work/web.err" || true)" "$(grep -c "mdns: announced as acapella.local" "$work/web.err" || true)"
web="http://127.0.0.1:$webport"
check "the page" equals "$(curl -s -o /dev/null -w '%{http_code}' "$web/")" "200"
check "state before pairing is refused" equals "$(curl -s -o /dev/null -w '%{http_code}' "$web/api/state")" "401"
check "a wrong code is refused" equals "$(curl -s -o /dev/null -w '%{http_code}' -X POST --data 000000x "$web/api/pair")" "403"
check "the right code pairs" equals "$(curl -s -c "$work/cookies" -o /dev/null -w '%{http_code}' -X POST --data "$code" "$web/api/pair")" "200"
check "the session cookie is HttpOnly and SameSite=Strict" contains "$(curl -s -D - -o /dev/null -X POST --data "$code" "$web/api/pair")" "HttpOnly; SameSite=Strict"
check "the live state names the song" contains "$(curl -s -b "$work/cookies" "$web/api/state")" '"song":"Amazing Grace"'
# The score is engraved in a process of its own after the song loads, wide then narrow, then the page's zoom steps.
for _ in $(seq 150); do grep -q "web: the score at the large zoom step engraved" "$work/web.err" 2>/dev/null && break; sleep 0.2; done
check "the box engraves the page's score in a process of its own and says its peak" contains "$(cat "$work/web.err")" "web: the score engraved: 2 systems, 33 onsets; peak "
check "kept in the cache, wide, narrow and the two zoom steps (nothing else)" equals "$(ls "$work/webbox/cache/page" | sed 's/^[0-9a-f]*-//' | sort | tr '\n' ' ')" "100mm 130mm 75mm wide "
widths="$(for size in "" -medium -narrow -large; do curl -s -b "$work/cookies" "$web/timemap$size.json" | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["width"]))'; done | tr '\n' ' ')"
check "each size served, narrower as it zooms in (time-map widths $widths)" python3 -c "w = [int(x) for x in '$widths'.split()]; assert len(w) == 4 and w[0] > w[1] > w[2] > w[3], w"
check "a size that is not one of them: 404" equals "$(curl -s -o /dev/null -w '%{http_code}' -b "$work/cookies" "$web/score-huge.svg")" "404"
check "the score for the page" contains "$(curl -s -b "$work/cookies" "$web/score.svg" | head -c 400)" "<svg"
check "the score compressed for a browser" contains "$(curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' -b "$work/cookies" "$web/score.svg")" "Content-Encoding: gzip"
check "and whole once decompressed" contains "$(curl -s --compressed -b "$work/cookies" "$web/score.svg" | tail -c 100)" "</svg>"
check "its words set in the font they were measured in" contains "$(curl -s --compressed -b "$work/cookies" "$web/score.svg" | head -c 1200)" "font-family:'Gentium Book Plus';src:url(/GentiumBookPlus-Regular.ttf)"
for face in Regular Italic Bold; do
  check "the page serves Gentium Book Plus $face" equals "$(curl -s -o "$work/face.ttf" -w '%{http_code} %{content_type}' "$web/GentiumBookPlus-$face.ttf")" "200 font/ttf"
  check "the shipped file, whole" equals "$(cmp -s "$work/face.ttf" "Fonts/gentium/GentiumBookPlus-$face.ttf" && echo same)" "same"
done
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

# Pairing lasts: the box started again shows the same code, and the phone
# paired before is still paired (the box kept only its token's hash).
check "the pairing is kept, readable by the box's user only" equals "$(stat -c %a "$work/webbox/web-pairing.json")" "600"
token="$(awk '$6 == "acapella-session" {print $7}' "$work/cookies")"
check "and without the session's token in it" equals "$(grep -c "$token" "$work/webbox/web-pairing.json")" "0"
"$acapella" run --data "$work/webbox" --seconds 120 --device sim:speed=1 --web "$webport" >"$work/web2.out" 2>"$work/web2.err" &
webbox=$!
for _ in $(seq 50); do grep -q "pairing code" "$work/web2.err" 2>/dev/null && curl -s -o /dev/null "$web/" && break; sleep 0.2; done
check "after a restart the same pairing code" contains "$(cat "$work/web2.err")" "pairing code $code"
check "and the phone paired before is still paired" contains "$(curl -s -b "$work/cookies" "$web/api/state")" "\"csrf\":\"$csrf\""
check "every phone signed out from the page" equals "$(curl -s -b "$work/cookies" -H "X-CSRF-Token: $csrf" -X POST "$web/api/sign-out-everyone")" '{"signedOut":true}'
check "the phone must pair again" equals "$(curl -s -o /dev/null -w '%{http_code}' -b "$work/cookies" "$web/api/state")" "401"
for _ in $(seq 20); do grep -q "every phone signed out" "$work/web2.err" && break; sleep 0.2; done
newcode="$(grep -o 'the new code is [0-9]*' "$work/web2.err" | grep -o '[0-9]*$' || true)"
check "the box says so with a new code" contains "$(cat "$work/web2.err")" "web: every phone signed out; the new code is "
check "the old code no longer pairs" equals "$(curl -s -o /dev/null -w '%{http_code}' -X POST --data "$code" "$web/api/pair")" "$([[ "$code" == "$newcode" ]] && echo 200 || echo 403)"
check "the new one does" equals "$(curl -s -o /dev/null -c "$work/cookies2" -w '%{http_code}' -X POST --data "$newcode" "$web/api/pair")" "200"
# acapella web forget: refused while the box holds the data folder (its
# page does it then), done once it is stopped: the phone signed out, a
# new code the next start pairs with.
check "web forget waits for the box to stop" contains "$("$acapella" web forget --data "$work/webbox" 2>&1)" "in use by acapella run, pid $webbox: while the box runs, sign every phone out from its page"
kill "$webbox" 2>/dev/null; wait "$webbox" 2>/dev/null || true
forgot="$("$acapella" web forget --data "$work/webbox" 2>&1)"
check "web forget signs out the phone the box remembered" contains "$forgot" "web: 1 phone signed out; the next start pairs with code "
forgetcode="$(grep -o '[0-9]*$' <<<"$forgot")"
check "and keeps no session" equals "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["sessions"]), d["code"])' "$work/webbox/web-pairing.json")" "0 $forgetcode"
"$acapella" run --data "$work/webbox" --seconds 1 --device sim:speed=1 --web "$webport" >/dev/null 2>"$work/web4.err" || true
check "the next start pairs with that code" contains "$(cat "$work/web4.err")" "pairing code $forgetcode"
echo "garbage{" > "$work/webbox/web-pairing.json"
"$acapella" run --data "$work/webbox" --seconds 1 --device sim:speed=1 --web "$webport" >/dev/null 2>"$work/web3.err" || true
check "a damaged pairing file is said in one line, and the box pairs afresh" contains "$(cat "$work/web3.err")" "web-pairing.json: not a pairing the box wrote"
check "and writes a whole one again" contains "$(cat "$work/webbox/web-pairing.json")" '"code"'

finish
