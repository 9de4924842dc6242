#!/usr/bin/env python3
"""Pitch and notes without a score, acapella beside the strongest public
trackers, on files with exact truth.

  Tools/compare-trackers.py --acapella BIN [--shared DIR] FILE.wav…

Each FILE.wav has FILE.f0.csv beside it (frame k at k·512 samples at 48 kHz,
0 = unvoiced) and, for the notes, FILE.notes.csv (Tools/make-hard-voices.py:
onset_s, offset_s, midi, cents) or, for the shared voices, the notes
Tools/compare-notes.py derives from the f0 truth and the song.

Trackers, each where it is installed (`Tools/python-env peers`):
  acapella     `acapella pitch FILE` and `acapella notes FILE` (a process
               each, start-up included in its time)
  swift-f0     SwiftF0().detect_file (voiced at confidence ≥ 0.5, its own
               rule) and swift_f0.segment_notes for notes
  praat        parselmouth to_pitch_ac, floor 60 Hz, ceiling 1100 Hz, 10 ms
  pyin         librosa.pyin, 60–1100 Hz, frame 4096, hop 512
  crepe        torchcrepe 'full', 16 kHz, 10 ms hop, voiced at periodicity
               ≥ 0.21 (torchcrepe's threshold.At), 60–1100 Hz
  basic-pitch  its note events (notes only)

Pitch (mir_eval.melody on the truth's frames): raw pitch accuracy (voiced
frames within 50 cents), voicing recall and false alarms, the median
absolute error in cents over frames within 50 cents (precision), the
accuracy within 53 ms of a note change (legato entries, glides), octave
slips (frames an octave ± 50 cents off). Notes (mir_eval.transcription):
onset within 50 ms and pitch within 50 cents, F; and each matched note's
centre against the truth (median |cents|). Time: wall seconds per file
(Python peers: the call, after their model is loaded once).

Prints a line per file and tracker, then the mean per tracker. Development
and benchmark tool (acapella-bench analyze): never used by the box.
"""
import argparse, importlib.util, math, os, subprocess, sys, time, warnings

import numpy
import mir_eval

warnings.filterwarnings("ignore")
HOP = 512
RATE = 48_000


def read_csv(path):
    rows = []
    with open(path) as handle:
        for line in handle:
            if line.strip() and not line.startswith("#"):
                rows.append([float(x) for x in line.strip().split(",")])
    return numpy.array(rows)


# The notes' truth and acapella's notes as Tools/compare-notes.py reads them.
_spec = importlib.util.spec_from_file_location("compare_notes", os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare-notes.py"))
NOTES = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(NOTES)


def truth_of(path, acapella, shared):
    f0 = read_csv(path[:-4] + ".f0.csv")[:, 1]
    times = numpy.arange(len(f0)) * HOP / RATE
    return times, f0, NOTES.reference_notes(path, acapella, shared)


# Each tracker: (name, pitch(path) -> (times, hz with 0 unvoiced) or None, notes(path) -> (intervals, hz) or None)

def acapella_tracker(binary):
    def pitch(path):
        out = subprocess.run([binary, "pitch", path], check=True, capture_output=True, text=True).stdout
        rows = [line.split(",") for line in out.strip().split("\n")[1:] if line]
        return numpy.array([float(r[0]) for r in rows]), numpy.array([float(r[1]) for r in rows])

    return "acapella", pitch, lambda path: NOTES.ours(binary, path)


def swift_tracker():
    import swift_f0
    detector = swift_f0.SwiftF0()

    def pitch(path):
        result = detector.detect_file(path)
        return result.timestamps, numpy.where(result.confidence >= 0.5, result.pitch_hz, 0)

    def notes(path):
        found = swift_f0.segment_notes(detector.detect_file(path))
        return numpy.array([(n.start, n.end) for n in found]).reshape(-1, 2), numpy.array([n.pitch_hz for n in found])
    return "swift-f0", pitch, notes


def praat_tracker():
    import parselmouth

    def pitch(path):
        track = parselmouth.Sound(path).to_pitch_ac(time_step=0.01, pitch_floor=60.0, pitch_ceiling=1100.0)
        return track.xs(), numpy.nan_to_num(track.selected_array["frequency"])
    return "praat", pitch, None


def pyin_tracker():
    import librosa

    def pitch(path):
        samples, rate = librosa.load(path, sr=None)
        f0, voiced, _ = librosa.pyin(samples, fmin=60, fmax=1100, sr=rate, frame_length=4096, hop_length=HOP)
        return librosa.times_like(f0, sr=rate, hop_length=HOP), numpy.where(voiced, numpy.nan_to_num(f0), 0)
    return "pyin", pitch, None


def crepe_tracker():
    import torch, torchcrepe, librosa
    torch.set_num_threads(2)

    def pitch(path):
        samples, _ = librosa.load(path, sr=16_000)
        audio = torch.tensor(samples)[None]
        f0, periodicity = torchcrepe.predict(audio, 16_000, 160, 60, 1100, "full", return_periodicity=True, batch_size=512, device="cpu")
        f0, periodicity = f0[0].numpy(), periodicity[0].numpy()
        return numpy.arange(len(f0)) * 0.01, numpy.where(periodicity >= 0.21, f0, 0)
    return "crepe", pitch, None


def basic_pitch_tracker():
    import logging
    logging.disable(logging.WARNING)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from basic_pitch.inference import predict, Model
    from basic_pitch import ICASSP_2022_MODEL_PATH
    model = Model(ICASSP_2022_MODEL_PATH)

    def notes(path):
        import contextlib, io
        with contextlib.redirect_stdout(io.StringIO()):  # it says "Predicting MIDI for …"
            _, _, events = predict(path, model)
        events = sorted(events)
        return numpy.array([(e[0], e[1]) for e in events]).reshape(-1, 2), numpy.array([440 * 2 ** ((e[2] - 69) / 12) for e in events])
    return "basic-pitch", None, notes


def pitch_scores(times, f0, estimate, notes):
    est_times, est_hz = estimate
    ref_v, ref_c, est_v, est_c = mir_eval.melody.to_cent_voicing(times, f0, est_times, est_hz)
    accuracy = mir_eval.melody.raw_pitch_accuracy(ref_v, ref_c, est_v, est_c)
    recall, false_alarm = mir_eval.melody.voicing_measures(ref_v, est_v)
    voiced = (ref_v > 0) & (est_v > 0)
    error = numpy.abs(ref_c - est_c)
    close = voiced & (error <= 50)
    median = float(numpy.median(error[close])) if close.any() else float("nan")
    octave = float(numpy.mean(numpy.abs(error[voiced & (ref_v > 0)] - 1200) <= 50)) if voiced.any() else 0.0
    near = numpy.zeros(len(times), dtype=bool)
    if notes is not None:
        intervals = notes[0]
        for index in range(1, len(intervals)):
            if abs(intervals[index][0] - intervals[index - 1][1]) < 0.002:  # a change without a break
                near |= numpy.abs(times - intervals[index][0]) <= 0.053
    near &= ref_v > 0
    changes = float(numpy.mean(((est_v > 0) & (error <= 50))[near])) if near.any() else float("nan")
    return accuracy, recall, false_alarm, median, changes, octave


def note_scores(reference, estimate):
    (ref_i, ref_p), (est_i, est_p) = reference, estimate
    keep = est_i[:, 1] > est_i[:, 0]
    est_i, est_p = est_i[keep], est_p[keep]
    if len(est_i) == 0:
        return 0.0, 0, float("nan")
    _, _, f, _ = mir_eval.transcription.precision_recall_f1_overlap(ref_i, ref_p, est_i, est_p, onset_tolerance=0.05, pitch_tolerance=50.0, offset_ratio=None)
    matched = mir_eval.transcription.match_notes(ref_i, ref_p, est_i, est_p, onset_tolerance=0.05, pitch_tolerance=50.0, offset_ratio=None)
    centres = [abs(1200 * math.log2(est_p[e] / ref_p[r])) for r, e in matched]
    return f, len(est_i), float(numpy.median(centres)) if centres else float("nan")


def startup(acapella, path):
    """acapella's whole run on a 1-second file (the process, the reading,
    the planning): the best of five, for pitch and for notes."""
    from scipy.io import wavfile
    import tempfile
    rate, samples = wavfile.read(path)
    with tempfile.TemporaryDirectory() as folder:
        one = os.path.join(folder, "one-second.wav")
        wavfile.write(one, rate, samples[:rate])
        spent = {}
        for command in ("pitch", "notes"):
            times = []
            for _ in range(5):
                started = time.perf_counter()
                subprocess.run([acapella, command, one], check=True, capture_output=True)
                times.append(time.perf_counter() - started)
            spent[command] = min(times)
    print("(acapella on a 1-second file, the process included: pitch %.0f ms, notes %.0f ms; goal under 50)" % (spent["pitch"] * 1000, spent["notes"] * 1000))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--acapella", required=True)
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    parser.add_argument("--only", default="", help="trackers, comma-separated (default: every one installed)")
    parser.add_argument("files", nargs="+")
    arguments = parser.parse_args()
    trackers = [acapella_tracker(arguments.acapella)]
    for make, module in ((swift_tracker, "swift_f0"), (praat_tracker, "parselmouth"), (pyin_tracker, "librosa"),
                         (crepe_tracker, "torchcrepe"), (basic_pitch_tracker, "basic_pitch")):
        if importlib.util.find_spec(module) is None:
            print(f"({module} is not installed: Tools/python-env peers installs the peers)")
            continue
        started = time.perf_counter()
        trackers.append(make())
        print(f"({trackers[-1][0]} loaded in {time.perf_counter() - started:.2f} s)")
    if arguments.only:
        trackers = [t for t in trackers if t[0] in arguments.only.split(",")]
    startup(arguments.acapella, arguments.files[0])
    totals = {name: {"pitch": [], "notes": []} for name, _, _ in trackers}
    for path in arguments.files:
        stem = os.path.basename(path)[:-4]
        times, f0, notes = truth_of(path, arguments.acapella, arguments.shared)
        seconds = len(f0) * HOP / RATE
        for name, pitch, transcribe in trackers:
            line = f"{stem:28s} {name:11s}"
            if pitch is not None:
                started = time.perf_counter()
                estimate = pitch(path)
                spent = time.perf_counter() - started
                scores = pitch_scores(times, f0, estimate, notes)
                totals[name]["pitch"].append(scores + (spent / seconds,))
                line += "  accuracy %.4f  voicing recall %.3f false %.3f  median %5.2f ¢  at changes %.3f  octave %.3f  %6.3f s" % (scores + (spent,))
            if transcribe is not None and notes is not None:
                started = time.perf_counter()
                estimate = transcribe(path)
                spent = time.perf_counter() - started
                f, count, centre = note_scores(notes, estimate)
                totals[name]["notes"].append((f, centre))
                line += "  | notes F %.3f (%d for %d)  centres %5.2f ¢  %6.3f s" % (f, count, len(notes[0]), centre, spent)
            print(line, flush=True)
    print("means over the files:")
    for name, result in totals.items():
        line = f"  {name:11s}"
        if result["pitch"]:
            values = numpy.array(result["pitch"])
            line += " accuracy %.4f (worst %.4f)  median %.2f ¢  at changes %.3f  octave %.4f  %.4f s per s of audio" % (
                numpy.mean(values[:, 0]), numpy.min(values[:, 0]), numpy.nanmean(values[:, 3]), numpy.nanmean(values[:, 4]), numpy.mean(values[:, 5]), numpy.mean(values[:, 6]))
        if result["notes"]:
            values = numpy.array(result["notes"])
            line += "  | notes F %.3f (worst %.3f)  centres %.2f ¢" % (numpy.mean(values[:, 0]), numpy.min(values[:, 0]), numpy.nanmean(values[:, 1]))
        print(line)


if __name__ == "__main__":
    main()
