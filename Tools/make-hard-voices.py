#!/usr/bin/env python3
"""Harder sung voices with exact truth: the cases a pitch and note tracker
without a score gets wrong, made here so every frame's f0 and every note's
entry, end and centre are known.

  Tools/make-hard-voices.py OUT_DIR

Writes, at 48 kHz mono:

  tenor-vibrato100.wav   a tenor holding notes with ±100-cent vibrato (5.2–
                         5.9 Hz), legato changes (no dip in level)
  bass-weak-legato.wav   a bass (E2–D3) whose fundamental is 20 dB under its
                         second harmonic, notes changed legato in 50 ms
  alto-portamento.wav    an alto sliding 150–300 ms into notes, each note
                         sung a few cents off the written pitch
  soprano-breathy.wav    a soprano up to G5 (656–784 Hz) with breathy
                         onsets (50–120 ms of breath before the tone) and
                         breath under every note
  soprano-high-legato.wav  the soprano's top notes (E5–A5) legato with
                         ±50-cent vibrato

each with NAME.f0.csv (as the shared voices: frame k at k·512 samples, f0 0
where the voice is unvoiced) and NAME.notes.csv: onset_s, offset_s, midi,
cents (each note's sung centre against the written midi). A note begins
where its tone does (after a rest or breath) or at the middle of the glide
from the note before (legato, portamento); it ends where the next begins or
where the tone stops.

The voice: harmonics up to 8 kHz under a vowel's formants (/a/, /o/ by
voice) with a −9 dB/octave source tilt, phase-accumulated on the exact f0
(each frame's truth is the f0 the samples were made from), a small random
walk in pitch (±3 cents) and level. Deterministic (seeded).

Development and test tool: numpy and scipy only; never used by the box.
"""
import math, os, sys

import numpy
from scipy.io import wavfile
from scipy.signal import lfilter

RATE = 48_000
HOP = 512

VOWELS = {  # formant (Hz, bandwidth Hz, gain)
    "a": [(750, 90, 1.0), (1200, 110, 0.7), (2600, 160, 0.35), (3300, 200, 0.2)],
    "o": [(500, 80, 1.0), (850, 100, 0.6), (2500, 160, 0.2), (3300, 200, 0.12)],
}


def midi_hz(midi):
    return 440.0 * 2 ** ((midi - 69) / 12)


def envelope(frequency, vowel):
    """The vowel's gain at a frequency (array), with the source tilt."""
    tilt = (numpy.maximum(frequency, 50) / 100.0) ** (-9 / 6.02)
    peaks = sum(gain / (1 + ((frequency - centre) / width) ** 2) for centre, width, gain in VOWELS[vowel])
    return tilt * (0.15 + peaks)


class Voice:
    """A line built note by note: per-sample f0 (cents), level, breath."""

    def __init__(self, seconds, seed):
        self.count = int(seconds * RATE)
        self.cents = numpy.zeros(self.count)
        self.level = numpy.zeros(self.count)
        self.breath = numpy.zeros(self.count)
        self.notes = []  # [onset, offset, midi, cents]
        self.random = numpy.random.default_rng(seed)

    def ramp(self, start, length, a, b):
        """Values from a to b over length samples (raised cosine)."""
        x = numpy.arange(length) / max(1, length)
        return a + (b - a) * (0.5 - 0.5 * numpy.cos(math.pi * x))

    def phrase(self, start, notes, glide=0.05, attack=0.04, release=0.08, vibrato=0.0, rate=5.5, delay=0.15, breath_before=0.0):
        """Notes (midi, seconds, cents off) sung joined from `start` (s):
        glides of `glide` s between them (legato: no dip), vibrato of ±
        `vibrato` cents after `delay` s of each note, breath before."""
        at = int(start * RATE)
        if breath_before > 0:
            length = int(breath_before * RATE)
            self.breath[at - length:at] += self.ramp(0, length, 0, 1.0)
        total = sum(seconds for _, seconds, _ in notes)
        end = at + int(total * RATE)
        a = int(attack * RATE)
        r = int(release * RATE)
        self.level[at:at + a] = self.ramp(0, a, 0, 1)
        self.level[at + a:end - r] = 1
        self.level[end - r:end] = self.ramp(0, r, 1, 0)
        position = at
        previous = None
        for index, (midi, seconds, off) in enumerate(notes):
            length = int(seconds * RATE)
            target = midi * 100 + off
            glide_samples = int((glide if isinstance(glide, float) else glide[index]) * RATE) if previous is not None else 0
            segment = numpy.full(length, float(target))
            if previous is not None and glide_samples > 0:
                segment[:glide_samples] = self.ramp(0, glide_samples, previous, target)
            if vibrato > 0:
                t = numpy.arange(length) / RATE
                frequency = rate + self.random.uniform(-0.35, 0.35)
                depth = numpy.clip((t - delay) / 0.25, 0, 1) * vibrato
                segment += depth * numpy.sin(2 * math.pi * frequency * t + self.random.uniform(0, 2 * math.pi))
            self.cents[position:position + length] = segment
            # Where the tone is over a tenth of its level (a raised cosine: 20.5 % of the attack), or the glide's middle.
            onset = position + glide_samples // 2 if previous is not None else position + int(0.205 * a)
            if self.notes and previous is not None:
                self.notes[-1][1] = onset / RATE
            self.notes.append([onset / RATE, (position + length) / RATE, midi, off])
            previous = target
            position += length
        # The tone ends where its level falls under a tenth.
        self.notes[-1][1] = (end - r + int(r * 0.795)) / RATE

    def render(self, vowel, weak_fundamental_db=0.0, breath_db=-40.0, breath_onset_db=-18.0):
        random = self.random
        # A slow random walk in pitch (±3 cents) and level (±1 dB).
        walk = lfilter([1.0], [1, -0.9995], random.normal(0, 0.02, self.count))
        walk = 3 * walk / (numpy.max(numpy.abs(walk)) + 1e-9)
        cents = self.cents + walk
        voiced = self.level > 0.1
        f0 = numpy.where(self.level > 0, 440 * 2 ** ((cents - 6900) / 1200), 0)
        phase = numpy.cumsum(2 * math.pi * f0 / RATE)
        signal = numpy.zeros(self.count)
        top = int(8_000 / max(1, numpy.min(f0[f0 > 0])))
        for k in range(1, top + 1):
            frequency = k * f0
            gain = numpy.where(frequency < 8_000, envelope(frequency, vowel), 0)
            if k == 1 and weak_fundamental_db:
                # The fundamental this far under the second harmonic.
                gain = envelope(2 * f0, vowel) * 10 ** (weak_fundamental_db / 20)
            signal += gain * numpy.sin(k * phase)
        shimmer = 10 ** (lfilter([1.0], [1, -0.999], random.normal(0, 0.002, self.count)) / 20)
        signal *= self.level * shimmer
        peak = numpy.max(numpy.abs(signal)) + 1e-9
        signal /= peak
        # Breath: noise shaped by the vowel (a first-order band), under the
        # tone throughout and louder before breathy onsets.
        noise = lfilter([1, -0.6], [1, -0.2], random.normal(0, 1, self.count))
        noise /= numpy.std(noise)
        signal += noise * (self.level * 10 ** (breath_db / 20) + self.breath * 10 ** (breath_onset_db / 20))
        signal *= 0.5 / numpy.max(numpy.abs(signal))
        frames = numpy.arange(0, self.count, HOP)
        truth = numpy.where(voiced[frames], f0[frames], 0.0)
        return signal.astype(numpy.float32), truth


def tenor_vibrato100():
    voice = Voice(22, seed=11)
    voice.phrase(0.4, [(55, 1.6, 0), (57, 1.4, 0), (59, 1.8, 0), (60, 2.0, 0)], glide=0.06, vibrato=100, rate=5.5)
    voice.phrase(8.0, [(62, 1.5, 0), (60, 1.5, 0), (59, 1.3, 0), (57, 2.2, 0)], glide=0.07, vibrato=100, rate=5.8)
    voice.phrase(15.0, [(52, 1.8, 0), (55, 1.6, 0), (57, 2.6, 0)], glide=0.05, vibrato=95, rate=5.2)
    return voice, "a", {}


def bass_weak_legato():
    voice = Voice(22, seed=12)
    voice.phrase(0.4, [(43, 1.0, 0), (45, 1.0, 0), (47, 0.9, 0), (48, 1.2, 0), (50, 1.6, 0)], glide=0.05, vibrato=30)
    voice.phrase(7.0, [(50, 0.8, 0), (48, 0.8, 0), (47, 0.8, 0), (45, 0.8, 0), (43, 1.8, 0)], glide=0.05, vibrato=30)
    voice.phrase(13.6, [(40, 1.2, 0), (43, 1.0, 0), (45, 1.0, 0), (43, 0.8, 0), (40, 2.4, 0)], glide=0.04, vibrato=25)
    return voice, "o", {"weak_fundamental_db": -20.0}


def alto_portamento():
    voice = Voice(22, seed=13)
    voice.phrase(0.4, [(57, 1.2, 4), (62, 1.4, -6), (60, 1.0, 8), (64, 1.8, -3)], glide=[0, 0.25, 0.15, 0.3], vibrato=35)
    voice.phrase(7.0, [(65, 1.2, -8), (60, 1.4, 5), (62, 1.2, -4), (57, 2.0, 6)], glide=[0, 0.3, 0.2, 0.25], vibrato=40)
    voice.phrase(14.0, [(55, 1.0, 0), (60, 1.6, -10), (59, 1.0, 7), (60, 2.6, -2)], glide=[0, 0.22, 0.15, 0.18], vibrato=30)
    return voice, "o", {}


def soprano_breathy():
    voice = Voice(22, seed=14)
    start = 0.5
    for midi, seconds in [(72, 1.4), (76, 1.2), (79, 1.6), (77, 1.0), (76, 1.8), (74, 1.2), (72, 2.0), (76, 1.4), (79, 2.2)]:
        breath = 0.05 + 0.07 * voice.random.random()
        voice.phrase(start, [(midi, seconds, 0)], attack=0.08, vibrato=45, breath_before=breath)
        start += seconds + 0.45
    return voice, "a", {"breath_db": -26.0, "breath_onset_db": -14.0}


def soprano_high_legato():
    voice = Voice(22, seed=15)
    voice.phrase(0.4, [(76, 1.2, 0), (77, 1.0, 0), (79, 1.4, 0), (81, 1.6, 0), (79, 1.2, 0)], glide=0.06, vibrato=50, rate=5.8)
    voice.phrase(7.8, [(79, 1.0, 0), (81, 1.0, 0), (76, 1.2, 0), (77, 1.0, 0), (76, 2.0, 0)], glide=0.05, vibrato=50, rate=6.0)
    voice.phrase(15.0, [(72, 1.0, 0), (76, 1.0, 0), (79, 1.2, 0), (81, 2.4, 0)], glide=0.07, vibrato=55, rate=5.6)
    return voice, "a", {}


VOICES = {
    "tenor-vibrato100": tenor_vibrato100,
    "bass-weak-legato": bass_weak_legato,
    "alto-portamento": alto_portamento,
    "soprano-breathy": soprano_breathy,
    "soprano-high-legato": soprano_high_legato,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in VOICES.items():
        voice, vowel, options = make()
        samples, truth = voice.render(vowel, **options)
        wavfile.write(os.path.join(out, name + ".wav"), RATE, numpy.round(samples * 32767).astype(numpy.int16))
        with open(os.path.join(out, name + ".f0.csv"), "w") as handle:
            handle.write("# time_s,f0_hz (0=unvoiced); frame centre = k*512 samples @48k\n")
            for k, f in enumerate(truth):
                handle.write("%.6f,%.6f\n" % (k * HOP / RATE, f))
        with open(os.path.join(out, name + ".notes.csv"), "w") as handle:
            handle.write("# onset_s,offset_s,midi,cents (the sung centre against the written midi)\n")
            for onset, offset, midi, cents in voice.notes:
                handle.write("%.4f,%.4f,%d,%.1f\n" % (onset, offset, midi, cents))
        print("%s: %.1f s, %d notes, f0 %.0f–%.0f Hz" % (name, len(samples) / RATE, len(voice.notes), truth[truth > 0].min(), truth.max()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
