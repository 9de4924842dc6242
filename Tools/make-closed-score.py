#!/usr/bin/env python3
"""Rewrite four-part open-score chorales as closed score, and check that the
importer gets the four parts back note for note.

Closed score is how hymnals print a chorale: Soprano and Alto on one staff,
Tenor and Bass on the other. Two styles:

  voices  each staff holds two voices (voice 1 up, voice 2 down), as
          MuseScore and Finale write it;
  chords  where the two voices of a staff move in the same rhythm in a
          measure, they are written as chords (one notehead for a unison);
          elsewhere as two voices, so a staff changes style from measure to
          measure.

and two layouts: `one` part "Choir" with two staves, or `two` parts named
"Soprano Alto" and "Tenor Bass" of one staff each.

  Tools/make-closed-score.py --style voices|chords [--layout one|two] IN OUT
  Tools/make-closed-score.py --check [--acapella PATH] [--corpus bach | FILE…]

--check rewrites every file in both styles (voices as one part, chords as
two), imports the original and the rewrite with `acapella dump --json`, and
compares every note of the four parts (start, length, pitch, tie), then
prints the share equal. Files that are not four single-voice parts (the
chorales with instruments) are skipped and counted. Development only: the
corpus needs `pip install music21`; the rewriting itself is plain Python.
"""
import argparse, copy, io, json, math, os, subprocess, sys, tempfile, zipfile
import xml.etree.ElementTree as ET

NAMES = ["Soprano", "Alto", "Tenor", "Bass"]


def read_score(path):
    data = open(path, "rb").read()
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            container = ET.fromstring(archive.read("META-INF/container.xml"))
            rootfile = next(e for e in container.iter() if e.tag.endswith("rootfile"))
            data = archive.read(rootfile.get("full-path"))
    return ET.fromstring(data)


class Skip(Exception):
    pass


def measure_elements(part):
    return part.findall("measure")


def divisions_of(parts):
    values = {int(d.text) for p in parts for d in p.iter("divisions")}
    return math.lcm(*values) if values else 1


def scaled(element, factor):
    element = copy.deepcopy(element)
    duration = element.find("duration")
    if duration is not None:
        duration.text = str(int(duration.text) * factor)
    return element


def voice_events(measure, factor):
    """A part's measure as a list of (duration, [notes]) in time order; the
    measure must be one voice of single notes and rests."""
    events = []
    for element in measure:
        if element.tag in ("backup", "forward"):
            raise Skip("a part with several voices")
        if element.tag != "note":
            continue
        if element.find("chord") is not None:
            raise Skip("a part with chords")
        if element.find("grace") is not None or element.find("cue") is not None:
            raise Skip("grace or cue notes")
        note = scaled(element, factor)
        for tag in ("voice", "staff"):
            for old in note.findall(tag):
                note.remove(old)
        events.append((int(note.find("duration").text), note))
    return events


def place(note, voice, staff, chord=False, lyrics=True):
    note = copy.deepcopy(note)
    if not lyrics:
        for lyric in note.findall("lyric"):
            note.remove(lyric)
    if chord:
        note.insert(0, ET.Element("chord"))
    # MusicXML's order: voice after the type-related elements; appending
    # voice and staff at the end is what the exporters above did too.
    ET.SubElement(note, "voice").text = str(voice)
    ET.SubElement(note, "staff").text = str(staff)
    return note


def midi(note):
    p = note.find("pitch")
    alter = p.find("alter")
    return "C D EF G A B".index(p.find("step").text) + (int(float(alter.text)) if alter is not None else 0) + 12 * int(p.find("octave").text)


def same_rhythm(upper, lower):
    """Whether two voices can be written as chords: the same rhythm and the
    upper voice never below the lower (an engraver writes crossing voices
    as two voices; a chord cannot show which note is whose), and unisons
    tied alike."""
    if len(upper) != len(lower):
        return False
    for (du, nu), (dl, nl) in zip(upper, lower):
        if du != dl or (nu.find("rest") is None) != (nl.find("rest") is None):
            return False
        if nu.find("rest") is None and midi(nu) < midi(nl):
            return False
        # A unison is one notehead: only when both voices tie the same way.
        ties = lambda n: sorted(t.get("type") for t in n.findall("tie"))
        if nu.find("rest") is None and midi(nu) == midi(nl) and ties(nu) != ties(nl):
            return False
        if nu.find("type") is not None and nl.find("type") is not None and nu.find("type").text != nl.find("type").text:
            return False
    return True


def pitch_key(note):
    p = note.find("pitch")
    if p is None:
        return None
    alter = p.find("alter")
    return (p.find("step").text, int(float(alter.text)) if alter is not None else 0, p.find("octave").text)


def staff_notes(upper, lower, staff, voices, chords, single_staff):
    """The notes of one staff, upper and lower voice (voice numbers given),
    and where in the measure they end."""
    out = []
    staff_number = 1 if single_staff else staff
    if chords and same_rhythm(upper, lower):
        for (_, nu), (_, nl) in zip(upper, lower):
            out.append(place(nu, voices[0], staff_number))
            if nu.find("rest") is None and pitch_key(nu) != pitch_key(nl):
                out.append(place(nl, voices[0], staff_number, chord=True, lyrics=False))
        return out, sum(d for d, _ in upper)
    length = sum(d for d, _ in upper)
    out += [place(n, voices[0], staff_number) for _, n in upper]
    if length:
        backup = ET.Element("backup")
        ET.SubElement(backup, "duration").text = str(length)
        out.append(backup)
    out += [place(n, voices[1], staff_number) for _, n in lower]
    return out, sum(d for d, _ in lower)


def closed_score(root, style, layout):
    parts = root.findall("part")
    if len(parts) != 4:
        raise Skip(f"{len(parts)} parts, not four voices")
    measures = [measure_elements(p) for p in parts]
    if len({len(m) for m in measures}) != 1:
        raise Skip("parts with different measure counts")
    divisions = divisions_of(parts)
    factors = [divisions // int(p.find("measure/attributes/divisions").text) for p in parts]
    if any(len({int(d.text) for d in p.iter("divisions")}) != 1 for p in parts):
        raise Skip("divisions that change")

    out = ET.Element("score-partwise", version="3.1")
    for tag in ("work", "movement-title", "identification"):
        element = root.find(tag)
        if element is not None:
            out.append(copy.deepcopy(element))
    part_list = ET.SubElement(out, "part-list")
    names = [("P1", "Choir")] if layout == "one" else [("P1", "Soprano Alto"), ("P2", "Tenor Bass")]
    for pid, name in names:
        score_part = ET.SubElement(part_list, "score-part", id=pid)
        ET.SubElement(score_part, "part-name").text = name
    new_parts = [ET.SubElement(out, "part", id=pid) for pid, _ in names]

    for index in range(len(measures[0])):
        source = [m[index] for m in measures]
        events = [voice_events(m, f) for m, f in zip(source, factors)]
        for target_index, target in enumerate(new_parts):
            measure = ET.SubElement(target, "measure", {k: v for k, v in source[0].attrib.items() if k in ("number", "implicit")})
            # Attributes, directions and barlines: the soprano's (for the
            # lower staff's part in the two-part layout, the tenor's clef).
            for element in source[0]:
                if element.tag == "attributes":
                    attributes = ET.SubElement(measure, "attributes")
                    for child in element:
                        if child.tag == "divisions":
                            ET.SubElement(attributes, "divisions").text = str(divisions)
                        elif child.tag in ("key", "time"):
                            attributes.append(copy.deepcopy(child))
                    if index == 0:
                        if layout == "one":
                            ET.SubElement(attributes, "staves").text = "2"
                            for number, (sign, line) in ((1, ("G", "2")), (2, ("F", "4"))):
                                clef = ET.SubElement(attributes, "clef", number=str(number))
                                ET.SubElement(clef, "sign").text = sign
                                ET.SubElement(clef, "line").text = line
                        else:
                            clef = ET.SubElement(attributes, "clef")
                            sign, line = ("G", "2") if target_index == 0 else ("F", "4")
                            ET.SubElement(clef, "sign").text = sign
                            ET.SubElement(clef, "line").text = line
                elif element.tag == "direction" and target_index == 0:
                    measure.append(scaled(element, factors[0]) if element.find("offset") is not None else copy.deepcopy(element))
                elif element.tag == "sound":
                    measure.append(copy.deepcopy(element))
            staves = [(1, (0, 1)), (2, (2, 3))] if layout == "one" else [(target_index + 1, (2 * target_index, 2 * target_index + 1))]
            position = 0
            for staff, (up, down) in staves:
                if position:
                    backup = ET.SubElement(measure, "backup")
                    ET.SubElement(backup, "duration").text = str(position)
                voices = (1, 2) if staff == 1 or layout == "two" else (5, 6)
                elements, position = staff_notes(events[up], events[down], staff, voices, style == "chords", layout == "two")
                measure.extend(elements)
            for element in source[0]:
                if element.tag == "barline":
                    measure.append(copy.deepcopy(element))
    return ET.ElementTree(out)


def write(tree, path):
    ET.indent(tree)
    with open(path, "wb") as f:
        f.write(b"<?xml version='1.0' encoding='UTF-8'?>\n")
        tree.write(f, encoding="UTF-8", xml_declaration=False)


def dump(acapella, path):
    out = subprocess.run([acapella, "dump", "--json", path], check=True, capture_output=True, text=True).stdout
    return [(p["name"], [(n["start"], n["duration"], n["midi"], n["tie"]) for n in p["notes"]]) for p in json.loads(out)["parts"]]


def check(args, files):
    checked = skipped = equal_files = parts_total = parts_equal = 0
    reasons = {}
    with tempfile.TemporaryDirectory() as scratch:
        for path in files:
            name = os.path.basename(path)
            try:
                root = read_score(path)
                trees = [(style, layout, closed_score(root, style, layout)) for style, layout in (("voices", "one"), ("chords", "two"))]
            except Skip as why:
                skipped += 1
                reasons[str(why)] = reasons.get(str(why), 0) + 1
                continue
            original = dump(args.acapella, path)
            for style, layout, tree in trees:
                checked += 1
                target = os.path.join(scratch, f"{name}-{style}.musicxml")
                write(tree, target)
                try:
                    rewritten = dump(args.acapella, target)
                except subprocess.CalledProcessError as error:
                    print(f"FAIL {name} ({style}): not imported: {error.stderr.strip()}")
                    parts_total += 4
                    continue
                same = sum(1 for (_, a), (_, b) in zip(original, rewritten) if a == b)
                parts_total += 4
                parts_equal += same
                if same == 4 and len(rewritten) == 4:
                    equal_files += 1
                else:
                    names = [n for n, _ in rewritten]
                    diffs = [f"{o[0]}: first difference at #{next((i for i, (x, y) in enumerate(zip(o[1], r[1])) if x != y), min(len(o[1]), len(r[1])))}"
                             for o, r in zip(original, rewritten) if o[1] != r[1]]
                    print(f"DIFF {name} ({style}, {layout} part{'s' if layout == 'two' else ''}): parts {names}; " + "; ".join(diffs))
    why = "; ".join(f"{reason} ×{count}" for reason, count in sorted(reasons.items()))
    print(f"closed score: {equal_files} of {checked} rewrites give the four parts back note for note; "
          f"{parts_equal} of {parts_total} parts equal ({100 * parts_equal / max(parts_total, 1):.1f} %); "
          f"{skipped} files skipped ({why or 'none'})")
    return 0 if checked and equal_files == checked else 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--style", choices=["voices", "chords"])
    parser.add_argument("--layout", choices=["one", "two"], default="one")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--acapella", default=".build/release/acapella")
    parser.add_argument("--corpus", choices=["bach"])
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.check:
        files = list(args.files)
        if args.corpus:
            import music21
            files += sorted(str(p) for p in music21.corpus.getComposer(args.corpus) if str(p).endswith((".mxl", ".xml")))
        return check(args, files)
    if not args.style or len(args.files) != 2:
        parser.error("give --style and IN OUT (or --check)")
    try:
        tree = closed_score(read_score(args.files[0]), args.style, args.layout)
    except Skip as why:
        print(f"{args.files[0]}: not rewritten: {why}", file=sys.stderr)
        return 1
    write(tree, args.files[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
