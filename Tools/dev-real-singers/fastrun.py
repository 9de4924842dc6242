import numpy as np, soundfile as sf, swift_f0, subprocess, csv, sys
rate = 48000
def render(line, vib=0.0, glide=0.005):
    out = []; phase = 0.0; prev = None
    for midi, secs, gap in line:
        out += [0.0] * int(gap * rate)
        if gap > 0: prev = None
        target = midi; n = int(secs * rate)
        t = np.arange(n) / rate
        pitch = np.full(n, float(target))
        if prev is not None:
            g = t < glide; pitch[g] = prev + (target - prev) * (0.5 - 0.5 * np.cos(np.pi * t[g] / glide))
        pitch += vib / 100 * np.sin(2 * np.pi * 5.5 * t)
        f = 440 * 2 ** ((pitch - 69) / 12)
        ph = phase + np.cumsum(2 * np.pi * f / rate); phase = ph[-1]
        env = np.minimum(1, np.minimum(np.arange(n) / 240, (n - np.arange(n)) / 240))
        v = sum(l * np.sin((h + 1) * ph) for h, l in enumerate([0.3, 1, 0.5, 0.3, 0.2]))
        out += list(0.15 * env * v); prev = target
    out += [0.0] * (rate // 5)
    return np.array(out, dtype=np.float32)
det = swift_f0.SwiftF0()
for secs in (0.08, 0.125):
    for vib in (0.0, 30.0):
        for midis in ([60, 62, 64, 65, 67, 69, 71, 72], [60, 62, 64, 62, 60, 62, 64, 62, 60]):
            line = [(m, 0.6 if i in (0, len(midis) - 1) else secs, 0.2 if i == 0 else 0) for i, m in enumerate(midis)]
            a = render(line, vib); sf.write("/tmp/real/fr.wav", a, rate)
            r = det.detect_file("/tmp/real/fr.wav")
            notes = swift_f0.segment_notes(r)
            got = [round(69 + 12 * np.log2(n.pitch_hz / 440)) for n in notes]
            ours = [int(r["midi"]) for r in csv.DictReader(subprocess.run([sys.argv[1], "notes", "/tmp/real/fr.wav"], capture_output=True, text=True).stdout.splitlines())]
            print(secs, vib, "sung", midis, "swift-f0", got, "ours", ours)
