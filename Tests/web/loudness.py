#!/usr/bin/env python3
"""Integrated loudness of a WAV file, measured here (ITU-R BS.1770-4 with
EBU R128 gating), independently of the box's own libebur128 measurement.

  Tests/web/loudness.py FILE.wav      prints the integrated loudness, LUFS

K-weighting at 48 kHz (the standard's published coefficients), 400 ms
blocks overlapping by 75 %, the absolute gate at -70 LUFS and the relative
gate 10 LU below the absolutely-gated loudness.
"""
import sys, wave

import numpy
from scipy.signal import lfilter


def integrated_loudness(path):
    with wave.open(path, "rb") as audio:
        rate, channels, width = audio.getframerate(), audio.getnchannels(), audio.getsampwidth()
        if rate != 48000 or width != 2:
            raise SystemExit(f"{path}: expected 16-bit 48 kHz, got {width * 8}-bit {rate} Hz")
        samples = numpy.frombuffer(audio.readframes(audio.getnframes()), dtype="<i2").astype(numpy.float64) / 32768.0
    samples = samples.reshape(-1, channels)
    shelf_b, shelf_a = [1.53512485958697, -2.69169618940638, 1.19839281085285], [1.0, -1.69065929318241, 0.73248077421585]
    high_b, high_a = [1.0, -2.0, 1.0], [1.0, -1.99004745483398, 0.99007225036621]
    weighted = lfilter(high_b, high_a, lfilter(shelf_b, shelf_a, samples, axis=0), axis=0)
    block, step = 19200, 4800
    squares = numpy.cumsum(numpy.vstack([numpy.zeros((1, channels)), weighted ** 2]), axis=0)
    starts = numpy.arange(0, len(weighted) - block + 1, step)
    power = ((squares[starts + block] - squares[starts]) / block).sum(axis=1)
    loudness = -0.691 + 10 * numpy.log10(numpy.maximum(power, 1e-20))
    gated = power[loudness > -70]
    relative = -0.691 + 10 * numpy.log10(gated.mean()) - 10
    final = gated[-0.691 + 10 * numpy.log10(gated) > relative]
    return -0.691 + 10 * numpy.log10(final.mean())


if __name__ == "__main__":
    print(f"{integrated_loudness(sys.argv[1]):.2f}")
