#!/usr/bin/env bash
# Reference recordings: add, align, offset, remove, carried in a bundle.
# Runs alone in a scratch folder of its own: Tests/cli/reference.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

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
# A phone's recording: the director's as AAC in M4A (made by FFmpeg's own command line, as a phone's
# voice memo is), read through FFmpeg, aligned to the same 2.5 s (the encoder's priming undone).
ffmpeg -v error -y -i "$work/director.wav" -c:a aac -b:a 128k "$work/director-phone.m4a"
"$acapella" new "$work/phone.acaproj" --song Songs/amazing-grace.acasong >/dev/null
expect "a phone's .m4a as the reference" 0 "$acapella" reference add "$work/phone.acaproj" "$work/director-phone.m4a" --align &&
  check "converted with libsoxr" contains "$err" "converted from 44100 Hz to 48000 Hz (libsoxr)" &&
  check "found 2.5 s in, within 5 ms" matches "$err" "aligned: the song starts 2\.(49[5-9]|50[0-5]) s into it; confidence 0\.[0-9]+"
expect "the reference shown" 0 "$acapella" reference show "$work/ref.acaproj" && check "shown with lyrics" contains "$out" "with lyrics"
expect "the reference listed with the takes" 0 "$acapella" takes "$work/ref.acaproj" && check "listed, with how to remove it" contains "$out" "reference: director.wav"
expect "the reference in a mix" 0 "$acapella" mix "$work/ref.acaproj" --reference include -o "$work/withref.wav" &&
  check "the mix says so" contains "$err" "the reference recording director.wav" && check "and wrote it" contains "$out" "wrote $work/withref.wav"
expect "--reference with --verse" 2 "$acapella" mix "$work/ref.acaproj" --reference include --verse all -o "$work/x.wav" &&
  check "one line why" contains "$err" "cannot go with --verse"
expect "--reference for a song" 2 "$acapella" mix Songs/amazing-grace.acasong --reference include -o "$work/x.wav" &&
  check "a song has none" contains "$err" "needs a project"
expect "--reference at another tempo" 0 "$acapella" mix "$work/ref.acaproj" --reference include --tempo 0.9 -o "$work/x.wav" &&
  check "the reference stretched too" contains "$err" "the reference recording director.wav"
expect "the reference's level in the session" 0 "$acapella" session "$work/ref.acaproj" --part Reference --volume -6 &&
  check "said" contains "$out$err" "Reference -6.0 dB"
"$acapella" mix Songs/amazing-grace.acasong --tempo 1.04 -o "$work/fast.wav" >/dev/null 2>&1
expect "a recording at another tempo is refused" 1 "$acapella" reference add "$work/ref.acaproj" "$work/fast.wav" --align &&
  check "it says the tempo differs" matches "$err" "error: .*fast.wav: not aligned: the recording's tempo is about [34]\.[0-9] % faster than the song's" &&
  expect "the reference before it stays" 0 "$acapella" reference show "$work/ref.acaproj" && check "still the director's" contains "$out" "director.wav"
printf 'not audio' > "$work/noise.mp3"
expect "a file that is not audio" 1 "$acapella" reference add "$work/ref.acaproj" "$work/noise.mp3" &&
  check "one line, naming it" matches "$err" "^acapella reference: error: .*noise.mp3: not audio libsndfile or FFmpeg can read" && check "one line" equals "$(wc -l <<<"$err")" "1"
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

finish
