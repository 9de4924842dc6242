#!/usr/bin/env python3
"""Compare acapella's MusicXML import with music21's reading of the same files.

For every file: per part, the note attacks (onset tick, MIDI pitch) with tied
notes merged, the top note of chords, rests and grace notes skipped, and in
each measure the lowest-numbered voice of the top staff (music21's Voice with
the smallest id, or the measure's own notes when it has no voices). Parts that
are lower staves of a multi-staff part are skipped: the score is read as
written, one part per MusicXML part (`acapella dump --no-split --no-unfold`).
Onset ticks are floor(quarterLength offset × 960).

Ties are read on purpose differently from music21: a note continues a tie
when the note before it in the voice starts (or continues) one at the same
pitch, whatever the later note says. So a tie start with no written stop
followed by the same pitch is a tie (as MuseScore and Finale read it; music21
sings it twice), and a tie stop after a different pitch is a new note (music21
drops it, though the singer must sing it). The music21 side here applies the
importer's rule, so the comparison measures everything else.

  Tools/compare-music21.py [--acapella PATH] [--write-golden DIR] [--unfold] FILE…
  Tools/compare-music21.py [--acapella PATH] --corpus bach [--unfold]

--corpus bach compares music21's own corpus of Bach chorales (its .mxl and
.xml files: 410) and prints the share of parts equal. --unfold also compares
the importer's default reading of files with repeats (written out in singing
order) with music21's expandRepeats().

music21 lays out each part on its own, so where a file's parts disagree about
a measure's length (a resting part padded to the full measure, a pickup
written in one part only) its parts drift apart and end at different times;
the importer keeps barlines aligned. In such files only the pitch sequences
are compared (the golden says "partsEndTogether": false).

Exit status 1 when any file differs. With --write-golden, music21's attacks
are written as DIR/<file>.attacks.json (and <file>.unfolded.attacks.json for
files with repeats, with --unfold) for the Swift tests (CI has no Python).
Development only: needs `pip install music21`.
"""
import argparse, json, math, os, subprocess, sys
from fractions import Fraction

import music21


def voice_key(voice):
    try:
        return (0, int(voice.id))
    except (TypeError, ValueError):
        return (1, str(voice.id))


def has_repeats(score):
    return any(isinstance(b, music21.bar.Repeat) for b in score.recurse().getElementsByClass(music21.bar.Barline))


def music21_attacks(path, unfold=False):
    score = music21.converter.parse(path)
    if unfold:
        if not has_repeats(score):
            return None
        score = score.expandRepeats()
    parts = []
    for part in score.parts:
        part_id = str(part.id)
        if "-Staff" in part_id and not part_id.endswith("-Staff1"):
            continue
        attacks = []
        # The previous note's pitch when it starts or continues a tie: the
        # next note continues it only at that pitch (ties read as the importer
        # reads them, see the module comment).
        open_tie = None
        for measure in part.getElementsByClass(music21.stream.Measure):
            voices = list(measure.voices)
            if voices:
                # Voices that hold only rests or are empty still count: the
                # importer keeps the lowest voice number present.
                container = min(voices, key=voice_key)
            else:
                container = measure
            for element in container.notesAndRests:
                if element.isRest:
                    open_tie = None
                if element.isRest or element.duration.isGrace or isinstance(element, music21.harmony.Harmony):
                    continue
                # The kept note is the top of a chord; its own tie decides
                # (a chord's summary tie can say "start" while its top note
                # continues a tie).
                if isinstance(element, music21.chord.Chord):
                    note = max(element.notes, key=lambda n: n.pitch.midi)
                else:
                    note = element
                continued = open_tie is not None and note.pitch.midi == open_tie
                open_tie = note.pitch.midi if note.tie is not None and note.tie.type in ("start", "continue") else None
                if continued:
                    continue
                midi = note.pitch.midi
                offset = Fraction(measure.offset) + Fraction(element.offset)
                attacks.append([math.floor(offset * 960), midi])
        parts.append({"name": part.partName or "", "attacks": attacks, "end": Fraction(part.highestTime)})
    return parts


def parts_end_together(parts):
    """music21 lays each part out on its own: when a file's parts disagree
    about a measure's length, its parts drift apart and end at different
    times, and only the pitch sequences can be compared."""
    return len({p["end"] for p in parts}) <= 1


def without_end(parts):
    return [{"name": p["name"], "attacks": p["attacks"]} for p in parts]


def acapella_attacks(acapella, path, unfold=False):
    out = subprocess.run([acapella, "dump", "--json", "--no-split", "--unfold" if unfold else "--no-unfold", path],
                         check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    parts = []
    for part in data["parts"]:
        attacks = []
        previous = None
        for note in part["notes"]:
            tied_over = previous is not None and previous["tie"] and previous["midi"] == note["midi"]
            if note["midi"] is not None and not tied_over:
                attacks.append([note["start"], note["midi"]])
            previous = note
        parts.append({"name": part["name"], "attacks": attacks})
    return parts


def compare(name, expected, actual):
    """Problems (empty when equal) and how many parts are equal."""
    problems = []
    if len(expected) != len(actual):
        problems.append(f"{len(actual)} parts, music21 has {len(expected)}")
    equal = 0
    pitches_only = not parts_end_together(expected)
    for e, a in zip(expected, actual):
        if e["attacks"] == a["attacks"] or (pitches_only and [x[1] for x in e["attacks"]] == [x[1] for x in a["attacks"]]):
            equal += 1
            continue
        first = next((i for i, (x, y) in enumerate(zip(e["attacks"], a["attacks"])) if x != y),
                     min(len(e["attacks"]), len(a["attacks"])))
        problems.append(f"part {a['name']!r}: {len(a['attacks'])} attacks vs {len(e['attacks'])}; first difference at #{first}: "
                        f"acapella {a['attacks'][first] if first < len(a['attacks']) else None} "
                        f"music21 {e['attacks'][first] if first < len(e['attacks']) else None}")
    return problems, equal


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--acapella", default=".build/release/acapella")
    parser.add_argument("--write-golden")
    parser.add_argument("--corpus", choices=["bach"])
    parser.add_argument("--unfold", action="store_true")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = list(args.files)
    if args.corpus:
        files += sorted(str(p) for p in music21.corpus.getComposer(args.corpus) if str(p).endswith((".mxl", ".xml")))
    failures = 0
    parts_total = 0
    parts_equal = 0
    unfolded_files = 0
    unfolded_total = 0
    unfolded_equal = 0
    drifting = 0
    errors = 0
    for path in files:
        name = os.path.basename(path)
        expected = music21_attacks(path)
        try:
            actual = acapella_attacks(args.acapella, path)
        except subprocess.CalledProcessError as error:
            errors += 1
            failures += 1
            print(f"FAIL {name}: acapella could not import it: {error.stderr.strip()}")
            continue
        problems, equal = compare(name, expected, actual)
        if not parts_end_together(expected):
            drifting += 1
        parts_total += len(expected)
        parts_equal += equal
        total = sum(len(p["attacks"]) for p in expected)
        unfolded = None
        if args.unfold:
            unfolded = music21_attacks(path, unfold=True)
            if unfolded is not None:
                unfolded_files += 1
                more, equal = compare(name, unfolded, acapella_attacks(args.acapella, path, unfold=True))
                unfolded_total += len(unfolded)
                unfolded_equal += equal
                problems += [f"unfolded: {problem}" for problem in more]
        if problems:
            failures += 1
            print(f"DIFF {name}: " + "; ".join(problems))
        elif not args.corpus:
            print(f"same {name}: {len(expected)} parts, {total} attacks" + (" (and unfolded)" if unfolded is not None else ""))
        if args.write_golden:
            with open(os.path.join(args.write_golden, name + ".attacks.json"), "w") as f:
                json.dump({"file": name, "reader": f"music21 {music21.__version__}", "partsEndTogether": parts_end_together(expected),
                           "parts": without_end(expected)}, f, separators=(",", ":"))
                f.write("\n")
            if unfolded is not None:
                with open(os.path.join(args.write_golden, name + ".unfolded.attacks.json"), "w") as f:
                    json.dump({"file": name, "reader": f"music21 {music21.__version__} expandRepeats()", "partsEndTogether": parts_end_together(unfolded),
                           "parts": without_end(unfolded)}, f, separators=(",", ":"))
                    f.write("\n")
    print(f"music21 comparison: {len(files) - failures} of {len(files)} files the same; "
          f"{parts_equal} of {parts_total} parts equal ({100 * parts_equal / max(parts_total, 1):.1f} %); {errors} not imported; "
          f"{drifting} files where music21's own parts end at different times compared by pitch sequence"
          + (f"; unfolded: {unfolded_equal} of {unfolded_total} parts equal in {unfolded_files} files with repeats" if args.unfold else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
