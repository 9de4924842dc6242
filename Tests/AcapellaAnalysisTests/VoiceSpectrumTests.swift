import AcapellaAnalysis
import Foundation
import Testing

@Suite struct VoiceSpectrumTests {
    /// A vowel made the way a voice makes it: a glottal pulse train at f0
    /// through three resonators (two-pole filters) at known formants. The
    /// formants found are within 8 % of them, or half the spacing of the
    /// harmonics (the envelope only sees the voice at its harmonics: a
    /// formant between two is read nearer one); the loudest band is 0 dB;
    /// the envelope is there below 5.5 kHz and not above.
    @Test(arguments: [
        (110.0, [730.0, 1_090, 2_440]),  // "ah", a bass
        (150.0, [270.0, 2_290, 3_010]),  // "ee", a tenor
        (220.0, [570.0, 840, 2_410]),    // "aw", an alto
    ])
    func formantsOfASynthesizedVowel(f0: Double, formants: [Double]) throws {
        let rate = 48_000
        var signal = [Double](repeating: 0, count: rate / 2)
        let period = Double(rate) / f0
        var next = 0.0
        for index in signal.indices where Double(index) >= next {
            signal[index] = 1
            next += period
        }
        for formant in formants {
            // A resonator with a 80 Hz bandwidth.
            let radius = exp(-.pi * 80 / Double(rate))
            let (a1, a2) = (-2 * radius * cos(2 * .pi * formant / Double(rate)), radius * radius)
            var (y1, y2) = (0.0, 0.0)
            for index in signal.indices {
                let y = signal[index] - a1 * y1 - a2 * y2
                (y2, y1) = (y1, y)
                signal[index] = y
            }
        }
        // Glottal roll-off: one pole at 0.95.
        var previous = 0.0
        for index in signal.indices {
            previous = signal[index] + 0.95 * previous
            signal[index] = previous
        }
        let peak = signal.map(abs).max()!
        let samples = signal.map { Float(0.5 * $0 / peak) }
        let spectrum = VoiceSpectrum(sampleRate: rate)
        let reading = try #require(samples.withUnsafeBufferPointer { spectrum.reading($0.baseAddress! + rate / 4) })
        #expect(reading.levels.count == VoiceSpectrum.bands && reading.envelope.count == VoiceSpectrum.bands)
        #expect(reading.levels.max() == 0)
        #expect(reading.formants.count == 3, "\(reading.formants)")
        for (found, made) in zip(reading.formants, formants) {
            #expect(abs(found - made) <= max(0.08 * made, f0 / 2), "found \(reading.formants), made \(formants)")
        }
        for (band, centre) in spectrum.bandCentres.enumerated() {
            #expect((reading.envelope[band] != nil) == (centre < VoiceSpectrum.envelopeTop), "band at \(centre) Hz")
        }
        // Silence has no reading.
        let silence = [Float](repeating: 0, count: spectrum.window)
        #expect(silence.withUnsafeBufferPointer { spectrum.reading($0.baseAddress!) } == nil)
    }
}
