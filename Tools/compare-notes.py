#!/usr/bin/env python3
"""Note splitting against aubio's note tracker, scored with mir_eval.

  Tools/compare-notes.py --acapella BIN [--min-f 0.9] FILE.wav…

For each FILE.wav with FILE.notes.csv beside it (Tools/make-hard-voices.py),
the truth notes are those. For a shared voice file, or a re-synthesis of one
named NAME-PROFILE.wav by Tools/make-harmonic-voices.py, with FILE.f0.csv
beside it, the truth notes come from the f0 truth and the notes the voice sings
(the chorale's soprano from `acapella dump`, or the one sustained note): a
dynamic-programming alignment of the voiced truth frames to the note
sequence, each frame costing its distance from the note (cents, capped at
three semitones), a note held over an unvoiced gap costing more than any
pitch (so repeated notes split at the singer's breaks). A truth note runs
from its first frame to its last, at the median of its frames' f0; a note
sung straight on into the same pitch with no break joins the one before (the
voice did not articulate it) and notes under three frames are dropped (a
score note the alignment had to put somewhere).

Then `acapella notes FILE` and `aubionotes -i FILE` (Debian's aubio-tools,
its defaults) on the same file, each scored with
mir_eval.transcription.precision_recall_f1_overlap: onset within 50 ms and
pitch within 50 cents (offsets not scored: "onset+pitch"), and once more
with offsets (within 20 % of the note or 50 ms). Prints one line per file
and program and the mean F over the files; exits 1 when acapella's
onset+pitch F is under --min-f on any file or not above aubio's on average.
Development and test tool: needs numpy and mir_eval (Tools/python-env).
"""
import argparse, json, math, os, re, subprocess, sys

import mir_eval
import numpy

HOP = 512
RATE = 48_000

# What each shared voice file sings: a song's part (through `acapella dump`)
# or a list of MIDI notes.
SUNG = {
    "bwv66.6_soprano": ("musicxml/bach_bwv66.6.mxl", "Soprano"),
    "sustain_a3_vibrato": [57],
}


def score_notes(acapella, shared, name):
    what = SUNG[name]
    if isinstance(what, list):
        return what
    path, part = what
    dump = json.loads(subprocess.run([acapella, "dump", os.path.join(shared, path)], check=True, capture_output=True, text=True).stdout)
    notes = next(p for p in dump["parts"] if p["name"] == part)["notes"]
    midis = []
    tied = False
    for note in notes:
        if note["midi"] is None:
            tied = False
            continue
        if not tied:
            midis.append(note["midi"])
        tied = note["tie"]
    return midis


def truth_notes(f0, midis):
    """(intervals, pitches) aligned as the module doc says."""
    frames = [k for k, f in enumerate(f0) if f > 0]
    if not frames:
        return numpy.zeros((0, 2)), numpy.zeros(0)
    cents = numpy.array([1200 * math.log2(f0[k] / 440) + 6900 for k in frames])
    targets = numpy.array(midis, dtype=float) * 100
    cost = numpy.minimum(numpy.abs(cents[:, None] - targets[None, :]), 300) / 100
    gap = 10.0  # holding a note over an unvoiced gap
    n, m = cost.shape
    total = numpy.full((n, m), numpy.inf)
    back = numpy.zeros((n, m), dtype=int)  # 0: stayed, 1: advanced
    total[0, 0] = cost[0, 0]
    for i in range(1, n):
        gapped = frames[i] != frames[i - 1] + 1
        stay = total[i - 1] + (gap if gapped else 0)
        advance = numpy.concatenate(([numpy.inf], total[i - 1, :-1]))
        choose = advance < stay
        total[i] = numpy.where(choose, advance, stay) + cost[i]
        back[i] = choose
    state = m - 1
    assignment = [0] * n
    for i in range(n - 1, -1, -1):
        assignment[i] = state
        if back[i, state]:
            state -= 1
    # Each note's frames; then a note sung straight on into the same pitch
    # (no unvoiced frame between: the voice did not articulate it, no
    # splitter could) joins the one before, and what is left shorter than
    # three frames (a score note the alignment had to place somewhere) goes.
    notes = []
    for note in range(m):
        mine = [frames[i] for i in range(n) if assignment[i] == note]
        if not mine:
            continue
        if notes and notes[-1][0] == midis[note] and notes[-1][1][-1] + 1 == mine[0]:
            notes[-1][1].extend(mine)
        else:
            notes.append((midis[note], mine))
    notes = [(midi, mine) for midi, mine in notes if len(mine) >= 3]
    intervals = [((mine[0] - 0.5) * HOP / RATE, (mine[-1] + 0.5) * HOP / RATE) for _, mine in notes]
    pitches = [float(numpy.median([f0[k] for k in mine])) for _, mine in notes]
    return numpy.array(intervals).reshape(-1, 2), numpy.array(pitches)


def given_notes(path):
    """The notes a generator wrote beside its voice (Tools/make-hard-voices.py:
    onset_s, offset_s, midi, cents)."""
    rows = numpy.array([[float(x) for x in line.split(",")] for line in open(path) if line.strip() and not line.startswith("#")])
    return rows[:, 0:2], 440 * 2 ** ((rows[:, 2] + rows[:, 3] / 100 - 69) / 12)


def reference_notes(path, acapella, shared):
    """FILE.wav's truth notes (intervals, Hz) as the module doc says, or
    None when no notes are known for it."""
    if os.path.exists(path[:-4] + ".notes.csv"):
        return given_notes(path[:-4] + ".notes.csv")
    name = re.sub(r"-(world|h2|h2strong|h2extreme|h3)$", "", os.path.basename(path)[:-4])
    if name not in SUNG:
        return None
    with open(path[:-4] + ".f0.csv") as handle:
        f0 = [float(line.split(",")[-1]) for line in handle if line.strip() and not line.startswith("#")]
    return truth_notes(f0, score_notes(acapella, shared, name))


def ours(acapella, path):
    out = subprocess.run([acapella, "notes", path], check=True, capture_output=True, text=True).stdout
    rows = [line.split(",") for line in out.strip().split("\n")[1:] if line]
    return numpy.array([(float(r[0]), float(r[1])) for r in rows]).reshape(-1, 2), numpy.array([float(r[5]) for r in rows])


def aubio(path):
    out = subprocess.run(["aubionotes", "-i", path], check=True, capture_output=True, text=True).stdout
    rows = [line.split() for line in out.strip().split("\n") if len(line.split()) == 3]
    intervals = numpy.array([(float(r[1]), float(r[2])) for r in rows]).reshape(-1, 2)
    pitches = numpy.array([440 * 2 ** ((float(r[0]) - 69) / 12) for r in rows])
    return intervals, pitches


def scores(reference, estimate):
    (ref_i, ref_p), (est_i, est_p) = reference, estimate
    keep = est_i[:, 1] > est_i[:, 0]
    est_i, est_p = est_i[keep], est_p[keep]
    onset = mir_eval.transcription.precision_recall_f1_overlap(ref_i, ref_p, est_i, est_p, onset_tolerance=0.05, pitch_tolerance=50.0, offset_ratio=None)
    full = mir_eval.transcription.precision_recall_f1_overlap(ref_i, ref_p, est_i, est_p, onset_tolerance=0.05, pitch_tolerance=50.0)
    return onset[:3], full[2], len(est_i)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--acapella", required=True)
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    parser.add_argument("--min-f", type=float, default=0.9)
    parser.add_argument("files", nargs="+")
    arguments = parser.parse_args()
    failed = False
    means = {"acapella": [], "aubio": []}
    for path in arguments.files:
        stem = os.path.basename(path)[:-4]
        reference = reference_notes(path, arguments.acapella, arguments.shared)
        if reference is None:
            print(f"{stem}: skipped (no notes known for it)")
            continue
        for program, estimate in (("acapella", ours(arguments.acapella, path)), ("aubio", aubio(path))):
            (precision, recall, f), with_offsets, count = scores(reference, estimate)
            means[program].append(f)
            print(f"{stem:34s} {program:9s} {count:3d} notes of {len(reference[0]):3d}: onset+pitch P {precision:.3f} R {recall:.3f} F {f:.3f}; with offsets F {with_offsets:.3f}")
            if program == "acapella" and f < arguments.min_f:
                print(f"FAIL: {stem}: acapella's onset+pitch F {f:.3f} is under {arguments.min_f}")
                failed = True
    ours_mean, aubio_mean = (numpy.mean(means[k]) if means[k] else 0 for k in ("acapella", "aubio"))
    print(f"mean onset+pitch F over {len(means['acapella'])} files: acapella {ours_mean:.3f}, aubionotes {aubio_mean:.3f}")
    if means["acapella"] and ours_mean <= aubio_mean:
        print("FAIL: acapella's mean F is not above aubionotes'")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
