import glob, numpy as np
exec(open("dp.py").read().split("def segment(")[0])
cnt = 0; sizes = []; shown = 0
for p in sorted(glob.glob("/tmp/real/tracks/*.npz"))[:30]:
    d = np.load(p); f0 = d["f0"]; fr = int(d["hop"]) / int(d["rate"]); n = len(f0); t = d["truth"]
    m = np.where(f0 > 0, 69 + 12 * np.log2(np.maximum(f0, 1e-9) / 440), 0); valid = f0 > 0
    rch = 4; pl = 6
    def steady(a, b):
        if a < 0 or b > n or not valid[a:b].all(): return None
        v = m[a:b]; md = np.median(v)
        return md if np.all(np.abs(v - md) <= 0.15) else None
    for a, b, mm in t:
        for k in range(int((a + 0.08) / fr), int((b - 0.05) / fr)):
            bf = steady(k - rch - pl, k - rch); af = steady(k + rch, k + rch + pl)
            if bf is not None and af is not None and abs(af - bf) >= 0.8:
                cnt += 1; sizes.append(af - bf)
                if shown < 8:
                    shown += 1; print("%s %.2f truth %.2f-%.2f %.2f: %s" % (p[-8:-4], k * fr, a, b, mm, " ".join("%.1f" % x for x in m[k - 12:k + 12:2])))
                break
print(cnt, np.percentile(sizes, [10, 50, 90]))
