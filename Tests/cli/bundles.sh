#!/usr/bin/env bash
# Project bundles out and in, hostile bundles, tagged exports.
# Runs alone in a scratch folder of its own: Tests/cli/bundles.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

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
for format in wav flac ogg mp3 m4a; do
  expect "a tagged $format mix" 0 "$acapella" mix "$work/carry.acaproj" -o "$work/tagged.$format" &&
    check "$format tags: title, artist, album, what it holds" python3 -c "
d=open('$work/tagged.$format','rb').read()
title={'wav':b'INAM\x0e\x00\x00\x00Amazing Grace','flac':b'title=Amazing Grace','ogg':b'TITLE=Amazing Grace','mp3':b'TIT2\x00\x00\x00\x0e\x00\x00\x00Amazing Grace',
       'm4a':b'\xa9nam\x00\x00\x00\x1ddata\x00\x00\x00\x01\x00\x00\x00\x00Amazing Grace'}['$format']
assert title in d, d[:300]
assert b'words John Newton, 1779 (verses 1 and 2); arr. Acapella box authors' in d
assert b'carry' in d and b'mix' in d and b'Acapella box' in d"
done
# The phone's file read by another program (FFmpeg's own command line): AAC in an M4A, its tags,
# its loudness as that decoder gives it (measured here, not by the box) on the -16 LUFS target.
# FFmpeg is opened the first time an .m4a is made (Sources/CFFmpeg), never linked: none of its libraries in the program's.
check "FFmpeg not linked" equals "$(readelf -d "$acapella" | grep -c 'libav\(format\|codec\|util\)')" "0"
check "FFmpeg's soname in the program, for dlopen and the package's Depends" matches "$(strings -a "$acapella" | grep -E '^libavformat\.so\.[0-9]+$')" '^libavformat\.so\.[0-9]+$'
probe="$(ffprobe -v error -show_entries stream=codec_name,sample_rate,channels:format=format_name:format_tags=title,album,comment,encoder -of compact "$work/tagged.m4a" 2>&1)"
for want in "codec_name=aac" "sample_rate=48000" "channels=2" "format_name=mov,mp4,m4a" "tag:title=Amazing Grace" "tag:album=carry" "tag:comment=mix" "tag:encoder=Acapella box"; do
  check "ffprobe reads the .m4a: $want" contains "$probe" "$want"
done
ffmpeg -v error -y -i "$work/tagged.m4a" -c:a pcm_s16le "$work/tagged-decoded.wav"
lufs="$(python3 Tests/web/loudness.py "$work/tagged-decoded.wav")"
check "decoded by ffmpeg, its loudness on target (measured by Tests/web/loudness.py): $lufs" awk -v l="$lufs" 'BEGIN { exit !(l + 16 <= 0.2 && l + 16 >= -0.2) }'

finish
