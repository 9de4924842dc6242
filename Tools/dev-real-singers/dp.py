import os, sys, glob, numpy as np, mir_eval
P = dict(hold=80, cap=2.0, dipwin=0.064, dipfree=3.0, rel=40, silence=-60, grid=0.05, octfix=1, minlen=0.0, dipw=1.0)
for a in sys.argv[1:]:
    k, v = a.split("="); P[k] = float(v)
def octave_fix(m, voiced, fr):
    # frames an octave (or twelfth) below the running median of the voiced neighbours over ~0.3 s: raised
    m = m.copy(); h = int(0.15 / fr); idx = np.where(voiced)[0]
    if len(idx) == 0: return m
    for t in idx:
        lo, hi = max(0, t - h), t + h + 1
        nb = m[lo:hi][voiced[lo:hi]]
        med = np.median(nb)
        for k in (12, 19, 24):
            if abs(m[t] + k - med) < 1.0 and abs(m[t] - med) > 6: m[t] += k; break
    return m
def segment(d):
    f0, lv, hop, rate, conf = d["f0"], d["lv"].astype(float), int(d["hop"]), int(d["rate"]), d["conf"].astype(float)
    fr = hop / rate; n = len(f0)
    top = np.percentile(lv[f0 > 0], 95) if (f0 > 0).any() else 0
    valid = (f0 > 0) & (lv > P["silence"]) & (lv > top - P["rel"])
    m = np.zeros(n); m[f0 > 0] = 69 + 12 * np.log2(f0[f0 > 0] / 440)
    if P["octfix"]: m = octave_fix(m, valid, fr)
    w = np.where(valid, conf, 0.0); cc = np.clip(w, 0.01, 0.99)
    R = max(1, int(round(P["dipwin"] / fr)))
    lvd = lv + 10 * np.log10(np.maximum(d["conf"].astype(float), P.get("plf", 1e-3))) if P.get("pl", 0) else lv
    pad = np.pad(lvd, R, mode="edge")
    left = np.max([pad[j:j + n] for j in range(R + 1)], axis=0)
    right = np.max([pad[R + j:R + j + n] for j in range(R + 1)], axis=0)
    dfree = P["dipfree"]
    if P.get("ad", 0):
        un = lv[(f0 <= 0) & (lv > -100)]
        snr = top - np.percentile(un, 25) if len(un) * fr >= 0.5 else 99
        dfree = float(np.clip(P["dipfree"] + (P.get("shi", 26) - snr) / (P.get("shi", 26) - P.get("slo", 21)) * (P.get("dmax", 4) - P["dipfree"]), P["dipfree"], P.get("dmax", 4)))
    q = np.where(valid, -np.log(cc / (1 - cc)), P.get("uvq", 4.595)) + P["dipw"] * np.maximum(0, np.minimum(left, right) - lvd - dfree)
    rch = max(1, int(round(P.get("sr", 0.02) / fr)))
    slope = np.zeros(n)
    slope[rch:n - rch] = np.abs(m[2 * rch:] - m[:n - 2 * rch]) / (2 * rch * fr)
    ow = np.where(slope > P.get("slide", 6), P.get("mv", 1.0), np.where(slope < P.get("still", 0), P.get("vw", 1.0), P.get("sw", 1.0)))
    pl = max(2, int(round(P.get("plat", 0.03) / fr))); stst = P.get("stst", 0.15); ssz = P.get("ssz", 0.8)
    def steady(a, b):
        if a < 0 or b > n or not valid[a:b].all(): return None
        v = m[a:b]; md = np.median(v)
        return md if np.all(np.abs(v - md) <= stst) else None
    stepat = np.zeros(n, dtype=bool)
    if P.get("sp", 1.0) < 1:
        for t in range(n):
            bf = steady(t - rch - pl, t - rch); af = steady(t + rch, t + rch + pl) if bf is not None else None
            if P.get("jump", 0):
                j = int(P.get("jr", 2))
                stepat[t] = j <= t < n - j and valid[t - j:t + j + 1].all() and ssz <= abs(m[t + j] - m[t - j]) <= 5
            else:
                stepat[t] = bf is not None and af is not None and abs(af - bf) >= ssz
    g = P["grid"]
    mu = np.unique(np.round(m[valid] / g) * g)
    if len(mu) == 0: return []
    beta = P["hold"] / 1000 / fr
    # scale per-frame costs to a 16 ms frame equivalent
    s = fr / 0.016
    vn = np.full(len(mu), np.inf); start = np.zeros(len(mu), dtype=int); back = np.zeros(n + 1, dtype=int); kind = np.full(n + 1, -1); best = 0.0
    for t in range(n):
        st = best + beta * (P.get("sp", 1.0) if stepat[t] else 1); new = st < vn; start[new] = t; vn = np.minimum(vn, st)
        vn += s * (ow[t] * w[t] * np.minimum(np.abs(mu - m[t]), P["cap"]) + q[t])
        j = int(np.argmin(vn))
        if vn[j] < best: best = vn[j]; back[t + 1] = start[j]; kind[t + 1] = j
        else: back[t + 1] = t
    spans = []; b = n
    while b > 0:
        a = back[b]
        if kind[b] >= 0: spans.append([a, b, mu[kind[b]]])
        b = a
    spans = spans[::-1]
    if P.get("lb", 0):
        for i in range(1, len(spans)):
            if spans[i-1][1] == spans[i][0]:
                bef, aft = spans[i-1][2], spans[i][2]
                na = lambda f: abs(m[f] - aft) < abs(m[f] - bef)
                bd = spans[i][0]
                while bd - 1 > spans[i-1][0] and valid[bd-1] and na(bd-1): bd -= 1
                while bd + 1 < spans[i][1] and valid[bd] and not na(bd): bd += 1
                spans[i-1][1] = bd; spans[i][0] = bd
    notes = []
    for i, (a, b, pc) in enumerate(spans):
        if (b - a) * fr < P["minlen"]: continue
        seg = m[a:b][valid[a:b]]
        if len(seg) == 0: continue
        pitch = np.median(seg)
        if P.get("ctr", 0):
            half = max(1, int(0.09 / fr)); rm = np.array([np.median(seg[max(0,k-half):k+half+1]) for k in range(len(seg))])
            mid = np.median(rm); st = rm[np.abs(rm - mid) <= P.get("ctw", 0.35)]; pitch = np.median(st) if len(st) else mid
        legato = i > 0 and spans[i-1][1] == a
        if P.get("lv2", 0) > 0 and not legato:
            med = np.median(lv[a:b])
            while a < b - 1 and lv[a] < med - P["lv2"]: a += 1
        sh = 0 if (legato and P.get("sg", 0)) else P.get("shift", 0)
        notes.append((a * fr - fr / 2 + sh, b * fr - fr / 2, 440 * 2 ** ((pitch - 69) / 12)))
    return notes
    notes = []; b = n
    while b > 0:
        a = back[b]
        if kind[b] >= 0 and P.get("lvon", 0) > 0:
            med = np.median(lv[a:b])
            while a < b - 1 and lv[a] < med - P["lvon"]: a += 1
        if kind[b] >= 0 and (b - a) * fr >= P["minlen"]:
            seg = m[a:b][valid[a:b]]
            pitch = np.median(seg) if len(seg) else mu[kind[b]]
            notes.append((a * fr - fr / 2 + P.get("shift", 0), b * fr - fr / 2, 440 * 2 ** ((pitch - 69) / 12)))
        b = a
    return notes[::-1]
def F(ref, est):
    if not est: return 0.0
    ri = np.array([[a, max(b, a + 1e-3)] for a, b, _ in ref]); rp = np.array([p for *_, p in ref])
    ei = np.array([[a, max(b, a + 1e-3)] for a, b, _ in est]); ep = np.array([p for *_, p in est])
    r = mir_eval.transcription.precision_recall_f1_overlap(ri, rp, ei, ep, offset_ratio=None); PR.append(r[:2]); return r[2]
PR = []; fs = []; nn = nr = rests = 0; f22 = []
shared = set(f[:-10] for f in os.listdir("/work/shared/data/voice-real") if f.endswith(".notes.txt"))
for p in sorted(glob.glob(os.environ.get("TR", "/tmp/real/tracks") + "/*.npz")):
    d = np.load(p); t = d["truth"]
    ref = [(a, b, 440 * 2 ** ((m - 69) / 12)) for a, b, m in t]
    est = segment(d); f = F(ref, est); fs.append(f); nn += len(est); nr += len(ref)
    rests += sum(1 for a, b, _ in est if not any(min(b, rb) - max(a, ra) > 0 for ra, rb, _ in ref))
    if os.path.basename(p)[:-4] in shared: f22.append(f)
print("P %.3f R %.3f F67 %.3f F22 %.3f notes %d / %d rests %d  %s" % (*np.mean(PR, axis=0), np.mean(fs), np.mean(f22), nn, nr, rests, " ".join(sys.argv[1:])))
