#!/usr/bin/env python3
"""Harmonic-heavy test voices: the shared sung vowels re-synthesized with the
WORLD vocoder (pyworld) on their own f0 truth, their spectral envelopes
reshaped so that the fundamental is no longer the strongest partial — as in
natural sung vowels, and where a pitch tracker without a score slips an
octave (or a twelfth) up.

  Tools/make-harmonic-voices.py [--voices ../shared/data/voice] OUT_DIR

For every NAME.wav with NAME.f0.csv beside it, writes to OUT_DIR:

  NAME-world.wav     re-synthesized, envelope untouched (checks that the
                     truth carries over through the vocoder; the soprano's
                     high notes already have the second harmonic on top)
  NAME-h2.wav        the fundamental 12 dB under the second harmonic
  NAME-h2strong.wav  the fundamental 20 dB under the second harmonic
  NAME-h2extreme.wav the fundamental 30 dB under the second harmonic (almost
                     a missing fundamental: a stress case beyond sung vowels)
  NAME-h3.wav        the third harmonic the strongest, the first two 10 dB
                     under it

each with its NAME-*.f0.csv: the same truth (WORLD places its pulses on the
f0 it is given, frame k at k·512 samples, 48 kHz, as the originals). The
levels are measured on the output (mean harmonic levels at the truth f0 over
voiced frames, relative to the fundamental) and printed, so a profile that
did not take shows.

Development and test tool (`./test` runs it): needs numpy, scipy and pyworld
(PyPI); never used by the box.
"""
import argparse, os, sys

import numpy
import pyworld
from scipy.io import wavfile

HOP = 512
RATE = 48_000
PERIOD_MS = 1000.0 * HOP / RATE

# The profiles (reshape() sets each frame's gains from its own harmonic
# levels); None: the envelope as analysed.
PROFILES = {"world": None, "h2": "h2", "h2strong": "h2strong", "h2extreme": "h2extreme", "h3": "h3"}


def read_truth(path):
    values = []
    with open(path) as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                continue
            values.append(float(line.strip().split(",")[-1]))
    return numpy.array(values, dtype=numpy.float64)


def harmonic_levels(envelope, f0, fft_size):
    """Envelope level (dB) at k·f0 for k = 1, 2, 3, per frame."""
    bins = numpy.arange(envelope.shape[1]) * RATE / fft_size
    levels = numpy.zeros((len(f0), 3))
    for frame, frequency in enumerate(f0):
        if frequency <= 0:
            continue
        for k in range(3):
            levels[frame, k] = 10 * numpy.log10(numpy.interp((k + 1) * frequency, bins, envelope[frame]) + 1e-30)
    return levels


def reshape(envelope, f0, fft_size, profile):
    """The envelope with the gains the profile asks for, frame by frame."""
    shaped = envelope.copy()
    bins = numpy.arange(envelope.shape[1]) * RATE / fft_size
    levels = harmonic_levels(envelope, f0, fft_size)
    for frame, frequency in enumerate(f0):
        if frequency <= 0:
            continue
        h1, h2, h3 = levels[frame]
        if profile == "h2":
            wanted = [h2 - 12 - h1, 0, 0]
        elif profile == "h2strong":
            wanted = [h2 - 20 - h1, 0, 0]
        elif profile == "h2extreme":
            wanted = [h2 - 30 - h1, 0, 0]
        else:  # h3: the third the strongest, the first two 10 dB under it
            top = max(h3, h1, h2) + 3 - h3
            wanted = [h3 + top - 10 - h1, h3 + top - 10 - h2, top]
        # Gains (dB): piecewise linear through the harmonics (half-way
        # between two, the mean of theirs), 0 dB from 3.5·f0 up.
        points = [0.0, 0.5 * frequency, frequency, 1.5 * frequency, 2 * frequency, 2.5 * frequency, 3 * frequency, 3.5 * frequency, RATE]
        gains = [wanted[0], wanted[0], wanted[0], (wanted[0] + wanted[1]) / 2, wanted[1], (wanted[1] + wanted[2]) / 2, wanted[2], 0, 0]
        shaped[frame] *= 10 ** (numpy.interp(bins, points, gains) / 10)
    return shaped


def measured(signal, f0):
    """Mean harmonic amplitudes (dB, H1 = 0) over voiced frames, read off the
    output with a Hann window of 4096 samples at each frame centre."""
    window = numpy.hanning(4096)
    sums = numpy.zeros(3)
    count = 0
    for frame, frequency in enumerate(f0):
        centre = frame * HOP
        if frequency <= 0 or centre < 2048 or centre + 2048 > len(signal):
            continue
        spectrum = numpy.abs(numpy.fft.rfft(signal[centre - 2048:centre + 2048] * window))
        amplitudes = []
        for k in range(1, 4):
            bin_ = k * frequency * 4096 / RATE
            low, high = int(bin_ - 2), int(bin_ + 3)
            amplitudes.append(spectrum[low:high].max())
        sums += 20 * numpy.log10(numpy.array(amplitudes) + 1e-12)
        count += 1
    mean = sums / max(count, 1)
    return mean - mean[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--voices", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "voice"))
    arguments = parser.parse_args()
    os.makedirs(arguments.out, exist_ok=True)
    names = sorted(name[:-4] for name in os.listdir(arguments.voices) if name.endswith(".wav"))
    if not names:
        sys.exit(f"make-harmonic-voices: no .wav files in {arguments.voices}")
    for name in names:
        truth_path = os.path.join(arguments.voices, name + ".f0.csv")
        if not os.path.exists(truth_path):
            continue
        rate, data = wavfile.read(os.path.join(arguments.voices, name + ".wav"))
        if rate != RATE:
            sys.exit(f"make-harmonic-voices: {name}.wav is at {rate} Hz, not {RATE}")
        signal = data.astype(numpy.float64) / (32768.0 if data.dtype == numpy.int16 else 1.0)
        truth = read_truth(truth_path)
        frames = len(truth)
        times = numpy.arange(frames) * HOP / RATE
        f0 = truth.copy()
        envelope = pyworld.cheaptrick(signal, f0, times, RATE)
        aperiodicity = pyworld.d4c(signal, f0, times, RATE)
        fft_size = pyworld.get_cheaptrick_fft_size(RATE)
        with open(truth_path) as handle:
            truth_text = handle.read()
        for profile, shape in PROFILES.items():
            shaped = envelope if shape is None else reshape(envelope, f0, fft_size, shape)
            output = pyworld.synthesize(f0, shaped, aperiodicity, RATE, PERIOD_MS)
            output = output[:len(signal)] if len(output) >= len(signal) else numpy.pad(output, (0, len(signal) - len(output)))
            peak = numpy.abs(output).max()
            output *= 0.5 / peak  # −6 dBFS peak
            stem = f"{name}-{profile}"
            wavfile.write(os.path.join(arguments.out, stem + ".wav"), RATE, numpy.round(output * 32767).astype(numpy.int16))
            with open(os.path.join(arguments.out, stem + ".f0.csv"), "w") as handle:
                handle.write(truth_text)
            levels = measured(output, f0)
            print(f"{stem}.wav: harmonics 1, 2, 3 at {levels[0]:+.1f}, {levels[1]:+.1f}, {levels[2]:+.1f} dB")


if __name__ == "__main__":
    main()
