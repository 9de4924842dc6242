internal import CFFTW

#if canImport(Glibc)
import Glibc
#endif

/// The room's steady noise taken out of a recording before its notes are
/// read: spectral subtraction (S. Boll, "Suppression of acoustic noise in
/// speech using spectral subtraction", IEEE TASSP 27(2), 1979, with
/// Berouti's over-subtraction and floor).
///
/// Why: in a room whose fan, traffic or hiss lies 15 dB under the singing,
/// a quiet phrase is heard at 0 dB or less over the whole band, and YIN's
/// aperiodicity counts all of that noise against the voice (voiced needs
/// less than 0.3: the voice 4 dB over everything else) — a real singer's
/// soft notes vanished, and a level dip that marks a re-attack was filled
/// in. Taken out bin by bin, the noise goes where the voice is not (a low
/// rumble, a hiss above its harmonics) and the voice keeps its harmonics.
///
/// Only where there is a room to hear: a recording whose loud frames (the
/// 95th percentile of frame energies) are at least `quietRoom` dB over its
/// quiet ones (the 10th) is left as it is — there the quiet frames are
/// mostly the singer's own breath and release, not a room, and taking
/// them out as noise cost notes. The noise's spectrum is the mean of the
/// quietest tenth of the frames; digital silence (a synthetic rest) is no
/// room and counts in neither.
///
/// A whole recording at once (`acapella notes`), not the render loop: it
/// allocates a copy of the recording.
public enum RoomNoise {
    /// The dB of loud over quiet frames at or above which a recording is
    /// left as it is. Measured on SSVD's 22 shared real singers, all
    /// quieted: those at 11–22 dB gained notes (one from F 0.41 to 0.81),
    /// several at 25 dB and more lost some (their quiet frames are breath);
    /// the 67 train&valid recordings confirmed the limit (F 0.692 clean,
    /// 0.695 in the rooms).
    public static let quietRoom = 24.0
    /// Each bin's amplitude is multiplied by 1 − `overSubtraction` × the
    /// noise's power there ÷ the bin's (a Wiener-like gain, Berouti's
    /// over-subtraction: a little over the noise's mean, its frames waver
    /// about it), and by no less than `floor` (bins at nothing beside bins
    /// left make short whistles of their own). Tuned as written.
    static let overSubtraction = 2.0
    static let floor: Float = 0.3
    /// Frame energies (mean square) under this are digital silence.
    static let silence = 1e-10

    /// `samples` with the room's noise taken out, or nil when there is no
    /// room to take out (see `quietRoom`). `sampleRate` sets the frame: 2048
    /// samples at 48 kHz, a power of two scaled with the rate.
    public static func quieted(_ samples: [Float], sampleRate: Int) -> [Float]? {
        guard YINDetector.sampleRates.contains(sampleRate) else { return nil }
        var size = 2_048
        let wanted = 2_048.0 * Double(sampleRate) / 48_000
        while Double(size) > wanted * 1.4 && size > 256 { size /= 2 }
        while Double(size) < wanted / 1.4 { size *= 2 }
        let hop = size / 2
        // Frame k starts at k·hop − (size − hop): two frames over every
        // sample, the first and last reaching past the ends (zeros there).
        let frames = (samples.count + size - hop) / hop + 1
        guard frames >= 40 else { return nil }
        // A sine window on the way in and out: their product, a Hann
        // window, sums to 1 over two frames half a frame apart.
        let window = (0..<size).map { Float(sin(Double.pi * Double($0) / Double(size))) }
        func start(_ frame: Int) -> Int { frame * hop - (size - hop) }
        func load(_ frame: Int, into buffer: UnsafeMutablePointer<Float>) {
            let first = start(frame)
            let from = max(0, -first), to = min(size, samples.count - first)
            buffer.update(repeating: 0, count: size)
            guard from < to else { return }
            samples.withUnsafeBufferPointer { samples in
                window.withUnsafeBufferPointer { window in
                    // A sample that is not a number is silence (as wherever takes are read).
                    for index in from..<to { buffer[index] = samples[first + index].isFinite ? samples[first + index] * window[index] : 0 }
                }
            }
        }
        // Digital silence: runs of 32 or more samples at exactly zero (no
        // room's noise, even a single bit of it, stays at zero that long).
        var silences: [Range<Int>] = []
        var run = 0
        for index in 0...samples.count {
            if index < samples.count && samples[index] == 0 {
                run += 1
            } else {
                if run >= 32 { silences.append((index - run)..<index) }
                run = 0
            }
        }
        // The frames' energies, without a transform (Parseval); a frame
        // touching digital silence is neither room nor singing.
        var nextSilence = 0
        let energies = (0..<frames).map { frame -> Double in
            let first = start(frame)
            while nextSilence < silences.count && silences[nextSilence].upperBound <= max(0, first) { nextSilence += 1 }
            if nextSilence < silences.count && silences[nextSilence].lowerBound < first + size { return 0 }
            var sum = 0.0
            for index in max(0, -first)..<min(size, samples.count - first) {
                let value = Double(samples[first + index] * window[index])
                sum += value * value
            }
            return sum / Double(size)
        }
        let heard = energies.filter { $0 > silence }.sorted()
        guard heard.count >= 20 else { return nil }
        let quiet = heard[heard.count / 10], loud = heard[heard.count * 95 / 100]
        guard 10 * log10(loud / quiet) < quietRoom else { return nil }

        let bins = size / 2 + 1
        let buffer = fftwf_alloc_real(size)!
        let spectrum = fftwf_alloc_complex(bins)!
        defer {
            fftwf_free(buffer)
            fftwf_free(spectrum)
        }
        let flags = UInt32(FFTW_ESTIMATE)
        let plans = fftwPlanner.withLock { _ in
            (UInt(bitPattern: fftwf_plan_dft_r2c_1d(Int32(size), buffer, spectrum, flags)),
             UInt(bitPattern: fftwf_plan_dft_c2r_1d(Int32(size), spectrum, buffer, flags)))
        }
        let forward = OpaquePointer(bitPattern: plans.0)!, backward = OpaquePointer(bitPattern: plans.1)!
        defer {
            fftwPlanner.withLock { _ in
                fftwf_destroy_plan(forward)
                fftwf_destroy_plan(backward)
            }
        }
        // The noise: each bin's mean power over the quietest tenth, less
        // the frames there where a voice sounds (a pitch in a voice's
        // range): a recording sung without a rest has no room to measure,
        // and its quietest frames are its softest singing.
        let detector = YINDetector(sampleRate: sampleRate, window: size)
        let raw = UnsafeMutablePointer<Float>.allocate(capacity: size)
        defer { raw.deallocate() }
        var noise = [Double](repeating: 0, count: bins)
        var (counted, voices) = (0, 0)
        for frame in 0..<frames where energies[frame] > silence && energies[frame] <= quiet {
            let first = start(frame)
            for index in 0..<size { raw[index] = first + index >= 0 && first + index < samples.count ? samples[first + index] : 0 }
            let reading = detector.estimate(raw, centre: 0)
            if reading.voiced && (YINDetector.lowestVoice...YINDetector.highestFrequency).contains(reading.frequency) {
                voices += 1
                continue
            }
            load(frame, into: buffer)
            fftwf_execute(forward)
            for bin in 0..<bins { noise[bin] += Double(spectrum[bin].0 * spectrum[bin].0 + spectrum[bin].1 * spectrum[bin].1) }
            counted += 1
        }
        guard counted >= 10 && counted >= voices else { return nil }
        // Float from here: the loops below are most of the time this takes.
        let subtracted = noise.map { Float($0 * overSubtraction / Double(counted)) }
        // Each frame less the noise, overlapped and added back (FFTW's
        // round trip multiplies by the size).
        var output = [Float](repeating: 0, count: samples.count)
        let scale = 1 / Float(size)
        subtracted.withUnsafeBufferPointer { noise in
            window.withUnsafeBufferPointer { window in
                output.withUnsafeMutableBufferPointer { output in
                    for frame in 0..<frames {
                        load(frame, into: buffer)
                        fftwf_execute(forward)
                        for bin in 0..<bins {
                            let (re, im) = spectrum[bin]
                            let power = re * re + im * im
                            let gain = power > noise[bin] / (1 - floor) ? 1 - noise[bin] / power : floor
                            spectrum[bin] = (re * gain, im * gain)
                        }
                        fftwf_execute(backward)
                        let first = start(frame)
                        for index in max(0, -first)..<min(size, output.count - first) {
                            output[first + index] += buffer[index] * window[index] * scale
                        }
                    }
                }
            }
        }
        return output
    }
}
