import os, subprocess, sys, numpy as np, soundfile as sf
binary = sys.argv[1]
for folder in sys.argv[2:]:
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".flac"): continue
        stem = name[:-5]; out = f"/tmp/real/tracks/{stem}.npz"
        if os.path.exists(out): continue
        path = os.path.join(folder, name)
        audio, rate = sf.read(path, dtype="float32")
        if audio.ndim > 1: audio = audio.mean(axis=1)
        hop = max(32, rate // 187)
        text = subprocess.run([binary, "pitch", "--hop", str(hop), path], capture_output=True, text=True).stdout.splitlines()[1:]
        f0 = np.array([float(l.split(",")[1]) for l in text]); conf = np.array([float(l.split(",")[4] or 0) for l in text])
        frames = len(f0)
        lv = np.full(frames, -120.0)
        for k in range(frames):
            lo, hi = max(0, k * hop - hop // 2), min(len(audio), k * hop + hop // 2)
            if hi > lo: lv[k] = 10 * np.log10(max(1e-12, float(np.mean(audio[lo:hi].astype(np.float64) ** 2))))
        t = os.path.join(folder, stem + ".notes.txt")
        if not os.path.exists(t): t = os.path.join(folder, stem + ".txt")
        truth = np.loadtxt(t).reshape(-1, 3)
        np.savez(out, f0=f0, conf=conf, lv=lv, hop=hop, rate=rate, truth=truth)
