import AcapellaAnalysis
import AcapellaProject
import Foundation
import Testing

let voiceData = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("shared/data/voice").path

/// A truth CSV: one f0 per 512-sample hop (0 = unvoiced).
func truth(_ name: String) throws -> [Double] {
    PitchMetrics.truth(csv: try String(contentsOfFile: voiceData + "/" + name + ".f0.csv", encoding: .utf8))
}

@Suite struct PitchAccuracyTests {
    /// The shared voice files against their truth (frame k centred on
    /// sample k·512 at 48 kHz): the thresholds.
    @Test(arguments: ["bwv66.6_soprano", "sustain_a3_vibrato"])
    func voiceFilesMeetTheThresholds(name: String) throws {
        let (samples, rate) = try AudioFile.readMono(voiceData + "/" + name + ".wav")
        #expect(rate == 48_000)
        let detector = YINDetector(sampleRate: rate)
        let estimates = detector.track(samples, hop: 512)
        let metrics = PitchMetrics(estimates: estimates, truth: try truth(name))
        print("pitch \(name): \(metrics)")
        #expect(metrics.rawPitchAccuracy >= 0.995, "\(metrics)")
        #expect(metrics.medianCents <= 2.5, "\(metrics)")
        #expect(metrics.p95Cents <= 10, "\(metrics)")
        #expect(metrics.grossErrorShare <= 0.003, "\(metrics)")
    }

    /// Harmonic tones swept over E2–C6 at 44.1 and 48 kHz and two hops:
    /// every frame within 5 cents; silence and DC give no pitch.
    @Test(arguments: [44_100, 48_000])
    func sweepOfTonesAndRates(rate: Int) {
        let detector = YINDetector(sampleRate: rate)
        #expect(detector.window == 2_048)
        var worst = 0.0
        for midi in stride(from: 40, through: 84, by: 3) {
            let frequency = 440 * pow(2, Double(midi - 69) / 12)
            let samples = (0..<(rate / 2)).map { index -> Float in
                let t = Double(index) / Double(rate)
                return Float(0.4 * sin(2 * .pi * frequency * t) + 0.2 * sin(4 * .pi * frequency * t + 1) + 0.1 * sin(6 * .pi * frequency * t + 2))
            }
            for hop in [256, 512] {
                let estimates = detector.track(samples, hop: hop).dropFirst(8).dropLast(8)
                for estimate in estimates {
                    #expect(estimate.voiced, "MIDI \(midi) at \(rate) Hz")
                    worst = max(worst, abs(1_200 * log2(estimate.frequency / frequency)))
                }
            }
        }
        #expect(worst <= 5, "worst \(worst) cents")
        let silence = [Float](repeating: 0, count: rate / 4)
        #expect(detector.track(silence, hop: 512).allSatisfy { !$0.voiced })
        let dc = [Float](repeating: 0.3, count: rate / 2)
        #expect(detector.track(dc, hop: 512).dropFirst(4).dropLast(4).allSatisfy { !$0.voiced }, "a DC offset is not a pitch")
    }

    /// Each estimate is stamped at the centre of the data it used: where a
    /// tone steps from 220 to 330 Hz at sample 24,000, the estimates switch
    /// there — a detector stamping its window's start, or placing the data
    /// off-centre, switches hundreds of samples early or late.
    @Test(arguments: [220.0, 110.0])
    func estimatesAreStampedAtTheirDataCentre(low: Double) {
        let rate = 48_000
        let high = low * 1.5
        var phase = 0.0
        let samples = (0..<48_000).map { index -> Float in
            phase += 2 * .pi * (index < 24_000 ? low : high) / Double(rate)
            return Float(0.5 * sin(phase))
        }
        let estimates = YINDetector(sampleRate: rate).track(samples, hop: 64)
        func near(_ estimate: PitchEstimate, _ frequency: Double) -> Bool { estimate.voiced && abs(1_200 * log2(estimate.frequency / frequency)) < 20 }
        let lastLow = estimates.filter { near($0, low) }.map(\.centreSample).max()!
        let firstHigh = estimates.filter { near($0, high) }.map(\.centreSample).min()!
        let switchPoint = (lastLow + firstHigh) / 2
        #expect(abs(switchPoint - 24_000) <= 128, "the estimates switch at \(switchPoint) (last \(low) Hz at \(lastLow), first \(high) Hz at \(firstHigh))")
    }

    /// The score narrows the search: a note whose second harmonic
    /// dominates reads an octave high to plain YIN; told the note, it is
    /// read right.
    @Test func theExpectedNotePreventsOctaveErrors() {
        let rate = 48_000
        let frequency = 220.0
        let samples = (0..<24_000).map { index -> Float in
            let t = Double(index) / Double(rate)
            return Float(0.04 * sin(2 * .pi * frequency * t) + 0.5 * sin(4 * .pi * frequency * t) + 0.04 * sin(6 * .pi * frequency * t))
        }
        let detector = YINDetector(sampleRate: rate)
        let free = detector.track(samples, hop: 512)[10]
        let informed = detector.track(samples, hop: 512) { _ in frequency }[10]
        #expect(abs(free.frequency - 440) < 4.4, "plain YIN reads the octave above: \(free.frequency)")
        #expect(abs(informed.frequency - 220) < 2.2, "with the score: \(informed.frequency)")
    }
}
