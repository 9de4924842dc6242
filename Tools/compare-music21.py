#!/usr/bin/env python3
"""Compare acapella's MusicXML import with music21's reading of the same files.

For every file: per part, the note attacks (onset tick, MIDI pitch) with tied
notes merged, the top note of chords, rests and grace notes skipped, and in
each measure the lowest-numbered voice of the top staff (music21's Voice with
the smallest id, or the measure's own notes when it has no voices). Parts that
are lower staves of a multi-staff part are skipped, as the importer keeps the
top staff. Onset ticks are floor(quarterLength offset × 960).

  Tools/compare-music21.py [--acapella PATH] [--write-golden DIR] FILE…

Exit status 1 when any file differs. With --write-golden, music21's attacks
are written as DIR/<file>.attacks.json for the Swift tests (CI has no Python).
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


def music21_attacks(path):
    score = music21.converter.parse(path)
    parts = []
    for part in score.parts:
        part_id = str(part.id)
        if "-Staff" in part_id and not part_id.endswith("-Staff1"):
            continue
        attacks = []
        for measure in part.getElementsByClass(music21.stream.Measure):
            voices = list(measure.voices)
            if voices:
                # Voices that hold only rests or are empty still count: the
                # importer keeps the lowest voice number present.
                container = min(voices, key=voice_key)
            else:
                container = measure
            for element in container.notesAndRests:
                if element.isRest or element.duration.isGrace or isinstance(element, music21.harmony.Harmony):
                    continue
                # The kept note is the top of a chord; its own tie decides
                # (a chord's summary tie can say "start" while its top note
                # continues a tie).
                if isinstance(element, music21.chord.Chord):
                    note = max(element.notes, key=lambda n: n.pitch.midi)
                else:
                    note = element
                if note.tie is not None and note.tie.type in ("stop", "continue"):
                    continue
                midi = note.pitch.midi
                offset = Fraction(measure.offset) + Fraction(element.offset)
                attacks.append([math.floor(offset * 960), midi])
        parts.append({"name": part.partName or "", "attacks": attacks})
    return parts


def acapella_attacks(acapella, path):
    out = subprocess.run([acapella, "dump", "--json", path], check=True, capture_output=True, text=True).stdout
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--acapella", default=".build/release/acapella")
    parser.add_argument("--write-golden")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    failures = 0
    for path in args.files:
        name = os.path.basename(path)
        expected = music21_attacks(path)
        actual = acapella_attacks(args.acapella, path)
        problems = []
        if len(expected) != len(actual):
            problems.append(f"{len(actual)} parts, music21 has {len(expected)}")
        for e, a in zip(expected, actual):
            if e["attacks"] != a["attacks"]:
                first = next((i for i, (x, y) in enumerate(zip(e["attacks"], a["attacks"])) if x != y),
                             min(len(e["attacks"]), len(a["attacks"])))
                problems.append(f"part {a['name']!r}: {len(a['attacks'])} attacks vs {len(e['attacks'])}; first difference at #{first}: "
                                f"acapella {a['attacks'][first] if first < len(a['attacks']) else None} "
                                f"music21 {e['attacks'][first] if first < len(e['attacks']) else None}")
        total = sum(len(p["attacks"]) for p in expected)
        if problems:
            failures += 1
            print(f"DIFF {name}: " + "; ".join(problems))
        else:
            print(f"same {name}: {len(expected)} parts, {total} attacks")
        if args.write_golden:
            with open(os.path.join(args.write_golden, name + ".attacks.json"), "w") as f:
                json.dump({"file": name, "reader": f"music21 {music21.__version__}", "parts": expected}, f, separators=(",", ":"))
                f.write("\n")
    print(f"music21 comparison: {len(args.files) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
