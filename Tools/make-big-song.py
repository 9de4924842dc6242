#!/usr/bin/env python3
"""Writes an .acasong of PARTS parts and MEASURES measures of quarter notes
(with lyrics), for the size limits' tests: the largest song the box takes,
and one past each limit. Usage: make-big-song.py PARTS MEASURES OUT"""
import sys

parts, measures, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
steps = ["C4", "D4", "E4", "F4", "G4", "A4", "B4", "C5"]
with open(out, "w") as f:
    f.write("acasong 1\ntitle: Big\ntime: 4/4\nkey: C major\ntempo: 120\n\n")
    for p in range(parts):
        f.write(f"part Voice {p + 1} [treble]\n")
        for m in range(measures):
            notes = "  ".join(f"{steps[(m + b + p) % 8]} 4" for b in range(4))
            f.write(notes + " |\n")
        f.write(f"lyrics Voice {p + 1}: " + " ".join("la" for _ in range(4 * measures)) + "\n")
