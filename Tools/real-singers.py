#!/usr/bin/env python3
"""`acapella notes` on real singers, beside swift-f0, clean and in a room.

  Tools/real-singers.py --acapella BIN [--peer PEER.json] [--check] [--more] DATA WORK
  Tools/real-singers.py --write-peer PEER.json [--more] DATA WORK   (needs swift_f0)

DATA holds NAME.flac with NAME.notes.txt (or NAME.txt) beside it, one sung
note a line: onset_s offset_s midi (SSVD v2.0's format; ../shared/data/
voice-real). Each recording is scored as it is ("clean") and once more as
heard in a room ("room"): mains hum (50 Hz and its harmonics to 400 Hz, the
whole at -45 dBFS RMS) and fan-like noise (pink, 15 dB under the singing's
level: the RMS of its loudest half-second windows' median) added, then
clipped at full scale as a cheap microphone would: three times, the noise
seeded by the recording's name and the room's number (so every run hears
the same, and one seed's luck does not decide), the room's figures their
mean (notes in rests: their sum). WORK gets the rooms' WAV files. With
--more, six more rooms, each once, printed and not checked: 60 Hz mains,
reverb (RT60 0.4 and 1.2 s), a phone's band driven into clipping, the
guide leaking from speakers (a part a third below, 12 dB under) and a
second singer (another of the recordings, 12 dB under).

Scored as mir_eval.transcription scores notes: onset within 50 ms and pitch
within 50 cents, offsets ignored (the F below); also the notes found in a
rest (overlapping no sung note) and the onsets found inside a sung note (50
ms after its onset and before its end: a note cut in two).

swift-f0's notes (swift-f0 0.3.0, detect_file then segment_notes, its
defaults) on the same files, clean and room, are read from PEER.json, made by
--write-peer in an environment that has swift_f0 (`Tools/python-env peers`);
they are scored by the same code. With --check, exits 1 unless, clean,
acapella's mean F is at or above swift-f0's with no more notes in rests and
no more notes cut in two, and, in the room, its F is at or above
swift-f0's there, the room costs it no more F than it costs swift-f0, and
it finds no more notes in the rests than swift-f0.
Development and test tool (numpy, mir_eval: Tools/python-env; ffmpeg
decodes the FLAC): the box never runs Python.
"""
import argparse, csv, json, os, resource, subprocess, sys, time, wave, zlib

import mir_eval
import numpy

# The room three times, its noise seeded differently each time: one
# seed's luck moved either program's F by 0.01.
ROOMS = ("room1", "room2", "room3")


def read_audio(path):
    """Mono float32 samples and the rate, decoded by ffmpeg."""
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=sample_rate",
                            "-of", "csv=p=0", path], check=True, capture_output=True, text=True).stdout
    rate = int(probe.strip().split(",")[0])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-ac", "1", "-f", "f32le", "-"], check=True, capture_output=True).stdout
    return numpy.frombuffer(raw, dtype=numpy.float32).astype(numpy.float64), rate


def write_wav(path, samples, rate):
    pcm = numpy.clip(numpy.round(samples * 32767), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm.tobytes())


def room(samples, rate, seed, mains=50):
    """The recording as heard in a room: hum at -45 dBFS, pink noise 15 dB
    under the singing, clipped at full scale."""
    n = len(samples)
    t = numpy.arange(n) / rate
    hum = sum(numpy.sin(2 * numpy.pi * mains * k * t + k) / k for k in range(1, 9))
    hum *= 10 ** (-45 / 20) / numpy.sqrt(numpy.mean(hum ** 2))
    # Pink noise: white shaped by 1/sqrt(f) in the frequency domain.
    white = numpy.random.RandomState(seed).standard_normal(n)
    spectrum = numpy.fft.rfft(white)
    f = numpy.fft.rfftfreq(n, 1 / rate)
    spectrum[1:] /= numpy.sqrt(f[1:] / 100)
    spectrum[0] = 0
    pink = numpy.fft.irfft(spectrum, n)
    pink *= singing_level(samples, rate) * 10 ** (-15 / 20) / numpy.sqrt(numpy.mean(pink ** 2))
    return numpy.clip(samples + hum + pink, -1, 1)


def fft_convolve(a, b):
    n = len(a) + len(b) - 1
    size = 1 << (n - 1).bit_length()
    return numpy.fft.irfft(numpy.fft.rfft(a, size) * numpy.fft.rfft(b, size), size)[:n]


def singing_level(samples, rate):
    """The singing's level: the median RMS of the loudest half of its half-second windows."""
    window = rate // 2
    levels = sorted(numpy.sqrt(numpy.mean(samples[i:i + window] ** 2)) for i in range(0, max(1, len(samples) - window), window))
    return numpy.median(levels[len(levels) // 2:]) if levels else 0.1


def reverb(samples, rate, rt60, seed):
    """In a room with reverb: an impulse response of decaying noise (60 dB
    in `rt60` seconds) after the direct sound, at the level of the direct sound."""
    length = int(rate * rt60 * 1.2)
    t = numpy.arange(length) / rate
    tail = numpy.random.RandomState(seed).standard_normal(length) * 10 ** (-3 * t / rt60)
    tail[: int(rate * 0.005)] = 0
    tail *= 1 / numpy.sqrt(numpy.sum(tail ** 2))
    response = numpy.zeros(length)
    response[0] = 1
    response += tail
    wet = fft_convolve(samples, response)[: len(samples)]
    return wet * singing_level(samples, rate) / max(1e-9, singing_level(wet, rate))


def phone(samples, rate):
    """A cheap microphone: the telephone band (300-3400 Hz, soft edges) and
    the input driven 6 dB into clipping."""
    spectrum = numpy.fft.rfft(samples)
    f = numpy.fft.rfftfreq(len(samples), 1 / rate)
    gain = 1 / (1 + (300 / numpy.maximum(f, 1)) ** 4) / (1 + (f / 3400) ** 4)
    band = numpy.fft.irfft(spectrum * gain, len(samples))
    return numpy.clip(band * 2 / max(1e-9, numpy.max(numpy.abs(band))), -1, 1)


def guide(samples, rate, notes):
    """The guide leaking from speakers: another part (the sung notes a major
    third below, a reedy tone of odd harmonics) 12 dB under the singing."""
    out = numpy.zeros(len(samples))
    for onset, offset, hz in notes:
        a, b = int(onset * rate), min(len(samples), int(offset * rate))
        if b <= a:
            continue
        t = numpy.arange(b - a) / rate
        f = hz * 2 ** (-4 / 12)
        tone = sum(numpy.sin(2 * numpy.pi * f * k * t) / k for k in (1, 3, 5, 7))
        ramp = numpy.minimum(1, numpy.minimum(t, t[::-1]) / 0.02)
        out[a:b] += tone * ramp
    out *= singing_level(samples, rate) * 10 ** (-12 / 20) / max(1e-9, singing_level(out, rate))
    return numpy.clip(samples + out, -1, 1)


def hum60(samples, rate, seed):
    """The room with 60 Hz mains."""
    return room(samples, rate, seed, mains=60)


# More rooms, each once (printed beside swift-f0, not checked).
MORE = ("hum60", "reverb0.4", "reverb1.2", "phone", "guide", "second")


def more_room(condition, samples, rate, notes, other, seed):
    if condition == "hum60":
        return hum60(samples, rate, seed)
    if condition.startswith("reverb"):
        return numpy.clip(reverb(samples, rate, float(condition[6:]), seed), -1, 1)
    if condition == "phone":
        return phone(samples, rate)
    if condition == "guide":
        return guide(samples, rate, notes)
    if condition == "second":
        # Another singer in the room, 12 dB under (another recording, looped to length).
        voice = numpy.resize(other, len(samples))
        voice *= singing_level(samples, rate) * 10 ** (-12 / 20) / max(1e-9, singing_level(voice, rate))
        return numpy.clip(samples + voice, -1, 1)
    raise ValueError(condition)


def truth(path):
    notes = []
    for line in open(path):
        f = line.split()
        if len(f) >= 3:
            notes.append((float(f[0]), float(f[1]), 440.0 * 2 ** ((float(f[2]) - 69) / 12)))
    return notes


CPU = {}
STARTS = {}


def start_up_seconds(binary):
    """One start of `binary` (loading and linking, no reading): the median
    CPU of `version` over five runs. The peers run in this process, their
    model loaded once and left out of their count; this is what acapella's
    count holds that theirs does not."""
    runs = []
    for _ in range(5):
        before = child_seconds()
        subprocess.run([binary, "version"], check=True, capture_output=True, timeout=60)
        runs.append(child_seconds() - before)
    return sorted(runs)[2]


def child_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def acapella_notes(binary, path):
    before = child_seconds()
    out = subprocess.run([binary, "notes", path], check=True, capture_output=True, text=True, timeout=300).stdout
    CPU["acapella"] = CPU.get("acapella", 0) + child_seconds() - before
    STARTS[binary] = STARTS.get(binary, 0) + 1
    return [(float(r["onset_s"]), float(r["offset_s"]), float(r["hz"])) for r in csv.DictReader(out.splitlines()) if float(r["hz"] or 0) > 0]


def live_peer(name):
    """A peer run here (--peers-live): its notes of a file, its CPU time counted."""
    if name == "swift-f0":
        import swift_f0
        detector = swift_f0.SwiftF0()
        run = lambda path: [(n.start, n.end, n.pitch_hz) for n in swift_f0.segment_notes(detector.detect_file(path))]
    elif name == "basic-pitch":
        from basic_pitch.inference import predict
        # Its note events, defaults: (start s, end s, MIDI pitch, amplitude, bends).
        run = lambda path: [(float(a), float(b), 440.0 * 2 ** ((float(m) - 69) / 12)) for a, b, m, *_ in predict(path)[2]]
    else:
        sys.exit(f"real-singers: no peer called {name} (swift-f0, basic-pitch)")

    def timed(path):
        before = time.process_time()
        notes = run(path)
        CPU[name] = CPU.get(name, 0) + time.process_time() - before
        return notes
    return timed


def scores(ref, est):
    """(F, notes in rests, onsets inside sung notes)."""
    rests = sum(1 for a, b, _ in est if not any(min(b, rb) - max(a, ra) > 0 for ra, rb, _ in ref))
    inside = sum(1 for a, _, _ in est for ra, rb, _ in ref if ra + 0.05 < a < rb - 0.02)
    if not est or not ref:
        return 0.0, rests, inside
    intervals = lambda notes: numpy.array([[a, max(b, a + 1e-3)] for a, b, _ in notes])
    pitches = lambda notes: numpy.array([p for _, _, p in notes])
    f = mir_eval.transcription.precision_recall_f1_overlap(intervals(ref), pitches(ref), intervals(est), pitches(est), offset_ratio=None)[2]
    return f, rests, inside


def recordings(data):
    for name in sorted(os.listdir(data)):
        if name.endswith(".flac"):
            stem = name[:-5]
            notes = os.path.join(data, stem + ".notes.txt")
            if not os.path.exists(notes):
                notes = os.path.join(data, stem + ".txt")
            if os.path.exists(notes):
                yield stem, os.path.join(data, name), notes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--acapella")
    parser.add_argument("--peer")
    parser.add_argument("--write-peer")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--peers-live", help="run these peers here instead of reading PEER.json (swift-f0,basic-pitch), CPU time printed")
    parser.add_argument("--more", action="store_true", help="also 60 Hz mains, reverb, a phone's band and clipping, the guide leaking, a second singer")
    parser.add_argument("data")
    parser.add_argument("work")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    files = {}
    found = list(recordings(args.data))
    for index, (stem, path, notes) in enumerate(found):
        samples, rate = read_audio(path)
        files[stem] = {"clean": path, "truth": truth(notes), "seconds": len(samples) / rate}
        for k, condition in enumerate(ROOMS):
            noisy = os.path.join(args.work, f"{stem}-{condition}.wav")
            write_wav(noisy, room(samples, rate, seed=zlib.crc32(f"{stem} {k}".encode())), rate)
            files[stem][condition] = noisy
        if args.more:
            other, _ = read_audio(found[(index + 1) % len(found)][1])
            for condition in MORE:
                heard = os.path.join(args.work, f"{stem}-{condition}.wav")
                write_wav(heard, more_room(condition, samples, rate, files[stem]["truth"], other, zlib.crc32(f"{stem} {condition}".encode())), rate)
                files[stem][condition] = heard
    if not files:
        sys.exit(f"real-singers: no recordings with notes in {args.data}")

    if args.write_peer:
        import swift_f0
        detector = swift_f0.SwiftF0()
        peer = {stem: {condition: [(n.start, n.end, n.pitch_hz) for n in swift_f0.segment_notes(detector.detect_file(f[condition]))]
                       for condition in ("clean",) + ROOMS + (MORE if args.more else ())} for stem, f in files.items()}
        json.dump({"program": "swift-f0 0.3.0 (detect_file, segment_notes defaults)", "notes": peer}, open(args.write_peer, "w"), indent=0)
        print(f"swift-f0's notes on {len(peer)} recordings, clean and in the room: {args.write_peer}")
        return

    peer = json.load(open(args.peer))["notes"] if args.peer else {}
    live = {name: live_peer(name) for name in (args.peers_live.split(",") if args.peers_live else [])}
    totals = {}
    seconds = 0
    for stem, f in files.items():
        for condition in ("clean",) + ROOMS + (MORE if args.more else ()):
            seconds += f["seconds"]
            runs = [("acapella", acapella_notes(args.acapella, f[condition]))]
            runs += [(name, run(f[condition])) for name, run in live.items()] if live else [("swift-f0", peer.get(stem, {}).get(condition))]
            for program, est in runs:
                if est is None:
                    continue
                score = scores(f["truth"], est)
                entry = totals.setdefault((program, "room" if condition in ROOMS else condition), [[], 0, 0, 0])
                entry[0].append(score[0])
                entry[1] += score[1]
                entry[2] += score[2]
                entry[3] += len(est)
    sung = sum(len(f["truth"]) for f in files.values())
    print(f"{len(files)} recordings, {sung} notes sung (onset+pitch F; notes found; in rests; onsets inside a sung note)")
    mean = lambda xs: sum(xs) / len(xs)
    for (program, condition), (fs, rests, inside, found) in sorted(totals.items(), key=lambda item: (item[0][1], item[0][0])):
        clean = totals.get((program, "clean"))
        drop = f"  F drop {mean(clean[0]) - mean(fs):+.3f}" if clean and condition != "clean" else ""
        print(f"  {condition:9} {program:11} F {mean(fs):.3f}  notes {found:5}  in rests {rests:4}  cut in two {inside:4}{drop}")
    if seconds:
        print(f"  CPU per second of audio ({seconds:.0f} s read by each): " + ", ".join(f"{name} {CPU[name] / seconds:.4f} s" for name in CPU))
        for binary, starts in STARTS.items():
            start = start_up_seconds(binary)
            print(f"  acapella past its {starts} process start-ups ({1000 * start:.0f} ms each, which the peers' in-process counts leave out): "
                  f"{(CPU['acapella'] - starts * start) / seconds:.4f} s per second of audio")
    if not args.check:
        return
    ours, theirs = totals.get(("acapella", "clean")), totals.get(("swift-f0", "clean"))
    ours_room, theirs_room = totals.get(("acapella", "room")), totals.get(("swift-f0", "room"))
    if not theirs or not theirs_room or len(theirs[0]) != len(files):
        sys.exit("real-singers: swift-f0's notes are missing for some recordings (--peer)")
    failures = []
    if mean(ours[0]) < mean(theirs[0]):
        failures.append(f"clean F {mean(ours[0]):.3f} under swift-f0's {mean(theirs[0]):.3f}")
    if ours[1] > theirs[1]:
        failures.append(f"clean: {ours[1]} notes in rests, swift-f0 {theirs[1]}")
    if ours[2] > theirs[2]:
        failures.append(f"clean: {ours[2]} notes cut in two, swift-f0 {theirs[2]}")
    drop, peer_drop = mean(ours[0]) - mean(ours_room[0]), mean(theirs[0]) - mean(theirs_room[0])
    print(f"  in the room F drops {drop:+.3f} (swift-f0 {peer_drop:+.3f})")
    if drop > peer_drop:
        failures.append(f"the room costs F {drop:.3f}, swift-f0 {peer_drop:.3f}")
    if mean(ours_room[0]) < mean(theirs_room[0]):
        failures.append(f"room F {mean(ours_room[0]):.3f} under swift-f0's {mean(theirs_room[0]):.3f}")
    if ours_room[1] > theirs_room[1]:
        failures.append(f"room: {ours_room[1]} notes in rests, swift-f0 {theirs_room[1]}")
    for failure in failures:
        print(f"FAIL {failure}")
    sys.exit(1 if failures else 0)


main()
