#!/usr/bin/env python3
"""Dev scorer: acapella notes vs swift-f0 on SSVD-format folders. Caches swift-f0."""
import csv, json, math, os, subprocess, sys
import numpy as np, mir_eval
binary = sys.argv[1]; folders = sys.argv[2:]
cache_file = "/tmp/real/sf0-cache.json"
cache = json.load(open(cache_file)) if os.path.exists(cache_file) else {}
det = None
def sf0(path):
    global det
    if path not in cache:
        import swift_f0
        det = det or swift_f0.SwiftF0()
        notes = swift_f0.segment_notes(det.detect_from_file(path) if hasattr(det,'detect_from_file') else det.detect_file(path))
        cache[path] = [(n.start, n.end, n.pitch_hz) for n in notes]
        json.dump(cache, open(cache_file, "w"))
    return cache[path]
def ours(path):
    out = subprocess.run([binary, "notes", path], capture_output=True, text=True, timeout=300).stdout
    rows = list(csv.DictReader(out.splitlines()))
    return [(float(r["onset_s"]), float(r["offset_s"]) if "offset_s" in r else float(r["onset_s"]) + 0.1, float(r["hz"])) for r in rows if float(r.get("hz") or 0) > 0]
def truth(path):
    t = []
    for line in open(path):
        f = line.split()
        if len(f) >= 3: t.append((float(f[0]), float(f[1]), 440 * 2 ** ((float(f[2]) - 69) / 12)))
    return t
def F(ref, est):
    if not est: return 0.0
    ri = np.array([[a, max(b, a + 1e-3)] for a, b, _ in ref]); rp = np.array([p for *_, p in ref])
    ei = np.array([[a, max(b, a + 1e-3)] for a, b, _ in est]); ep = np.array([p for *_, p in est])
    return mir_eval.transcription.precision_recall_f1_overlap(ri, rp, ei, ep, offset_ratio=None)[2]
def in_rest(ref, est):
    return sum(1 for a, b, _ in est if not any(min(b, rb) - max(a, ra) > 0 for ra, rb, _ in ref))
def splits(ref, est):
    # est onsets strictly inside a ref note (>50 ms after onset, before offset)
    return sum(1 for a, b, _ in est for ra, rb, _ in ref if ra + 0.05 < a < rb - 0.02)
files = []
for folder in folders:
    for name in sorted(os.listdir(folder)):
        if name.endswith(".flac"):
            stem = name[:-5]
            t = os.path.join(folder, stem + ".notes.txt")
            if not os.path.exists(t): t = os.path.join(folder, stem + ".txt")
            files.append((os.path.join(folder, name), t))
res = {"a": [], "s": []}; cnt = {"a": [0, 0, 0], "s": [0, 0, 0]}; nref = 0
per = []
for path, t in files:
    ref = truth(t); nref += len(ref)
    for k, est in (("a", ours(path)), ("s", sf0(path))):
        f = F(ref, est); res[k].append(f)
        cnt[k][0] += len(est); cnt[k][1] += in_rest(ref, est); cnt[k][2] += splits(ref, est)
    per.append((os.path.basename(path), res["a"][-1], res["s"][-1]))
m = lambda x: sum(x) / len(x)
if "-v" in os.environ.get("V", ""):
    for p in per: print("%-12s %.3f %.3f" % p)
print("%d files, %d notes sung | acapella F %.3f notes %d rests %d splits %d | swift-f0 F %.3f notes %d rests %d splits %d" % (
    len(files), nref, m(res["a"]), *cnt["a"], m(res["s"]), *cnt["s"]))
