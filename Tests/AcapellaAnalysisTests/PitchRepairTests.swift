@testable import AcapellaAnalysis
import Foundation
import Testing

/// What the tracker does with a frame its windows read wrongly: a lone
/// frame off the path its neighbours trace through a fast slide, and a
/// reading above any voice.
@Suite struct PitchRepairTests {
    static func frame(_ hz: Double, aperiodicity: Double = 0.02) -> PitchEstimate {
        PitchEstimate(centreSample: 0, frequency: hz, aperiodicity: aperiodicity, voiced: hz > 0)
    }

    /// A frame of a fast slide read 80 cents below both neighbours (60
    /// cents apart), less periodic than both, takes the pitch between
    /// them; the peak of a ±100-cent vibrato (7 cents beyond its
    /// neighbours), a step of three semitones and a clearer frame stay.
    @Test func aLoneFrameOffItsNeighboursPathTakesThePathsPitch() {
        let slide = YINDetector.removingOutliers([Self.frame(500.1), Self.frame(462.2, aperiodicity: 0.11), Self.frame(483.4, aperiodicity: 0.013)])
        #expect(abs(slide[1].frequency - (500.1 * 483.4).squareRoot()) < 0.01 && slide[1].voiced)
        let peak = 440 * pow(2, 100 / 1_200.0), side = 440 * pow(2, 93.3 / 1_200.0)
        #expect(YINDetector.removingOutliers([Self.frame(side), Self.frame(peak, aperiodicity: 0.2), Self.frame(side)])[1].frequency == peak)
        #expect(YINDetector.removingOutliers([Self.frame(440), Self.frame(400, aperiodicity: 0.2), Self.frame(523.25)])[1].frequency == 400, "a step")
        #expect(YINDetector.removingOutliers([Self.frame(500.1, aperiodicity: 0.2), Self.frame(462.2, aperiodicity: 0.1), Self.frame(483.4, aperiodicity: 0.2)])[1].frequency == 462.2,
                "clearer than its neighbours: left as read")
        // Neighbours that agree still fill an unvoiced frame between them.
        #expect(YINDetector.removingOutliers([Self.frame(440), Self.frame(0), Self.frame(441)])[1].voiced)
        #expect(!YINDetector.removingOutliers([Self.frame(440), Self.frame(0), Self.frame(480)])[1].voiced, "nor between a slide's frames")
    }

    /// A tone above C7 (a whistle, a squeak, the last frames of a fading
    /// tone read as a few samples' lag) is no voice: every frame unvoiced.
    @Test func nothingAboveAVoiceIsVoiced() {
        let rate = 48_000
        let whistle = (0..<rate / 2).map { Float(0.3 * sin(2 * .pi * 3_000 * Double($0) / Double(rate))) }
        let estimates = YINDetector(sampleRate: rate).track(whistle, hop: 512)
        #expect(!estimates.isEmpty && estimates.allSatisfy { !$0.voiced }, "\(estimates.filter(\.voiced).prefix(3).map(\.frequency))")
        let soprano = (0..<rate / 2).map { Float(0.3 * sin(2 * .pi * 1_047 * Double($0) / Double(rate))) }
        let high = YINDetector(sampleRate: rate).track(soprano, hop: 512).dropFirst(8).dropLast(8)
        #expect(high.allSatisfy { $0.voiced && abs($0.frequency - 1_047) < 2 }, "a soprano's C6 is a voice")
    }

    /// A frame is voiced only where a voice sounds around its centre: one
    /// read in silence (a long window reaching the next phrase) and a
    /// run's edges over 30 dB under the loudest of the 100 ms inward from
    /// them are unvoiced; a soft frame inside a run, and an edge 29 dB
    /// under, stay — and so does a soft note at a run's end, 33 dB under
    /// the loud note it is sung legato with (it is its own level).
    @Test func framesWhereNoVoiceSoundsAreUnvoiced() {
        let estimates = [Self.frame(1_548), Self.frame(0)] + [Self.frame(440, aperiodicity: 0.2)] + Array(repeating: Self.frame(440), count: 6) + [Self.frame(430, aperiodicity: 0.2)]
        let levels: [Float] = [0, 0, 0.002, 0.1, 0.1, 0.001, 0.1, 0.1, 0.1, 0.0036]
        let trimmed = YINDetector.trimmingEdges(estimates, levels: levels, silence: 0.000_5, near: 4)
        #expect(trimmed.map(\.voiced) == [false, false, false, true, true, true, true, true, true, true], "\(trimmed.map(\.voiced))")
        #expect(trimmed[2].frequency == 0 && trimmed[9].frequency == 430)
        let fading = YINDetector.trimmingEdges(Array(repeating: Self.frame(220), count: 5), levels: [0.1, 0.1, 0.1, 0.003, 0.001], silence: 0.000_5, near: 4)
        #expect(fading.map(\.voiced) == [true, true, true, false, false], "a fading tone's last whispers")
        // Short soft notes (60 ms) beside loud ones, with the 100 ms reach of 48 kHz and a 512-sample hop.
        let soft: [Float] = Array(repeating: 0.002, count: 6) + Array(repeating: 0.09, count: 12)
        #expect(YINDetector.trimmingEdges(Array(repeating: Self.frame(196), count: 18), levels: soft, silence: 0.000_5, near: 9).allSatisfy { $0.voiced },
                "a pianissimo grace note sung legato into a forte one")
        #expect(YINDetector.trimmingEdges(Array(repeating: Self.frame(196), count: 18), levels: soft.reversed(), silence: 0.000_5, near: 9).allSatisfy { $0.voiced },
                "an echo sung legato after a forte note")
    }

    /// A bass entering after a rest (E2, its fundamental 20 dB under its
    /// second harmonic, a 40 ms attack): the first frame whose centre is a
    /// tenth of the way up the attack is voiced at E2 — the window centred
    /// on it began in the rest and the rise over its few long periods read
    /// ragged (aperiodicity 0.35); the frame where the tone has not begun
    /// and every frame of the rest stay unvoiced. In digital silence, over
    /// a -90 and a -55 dBFS noise floor, and with a DC offset.
    @Test(arguments: [(0.0, 0.0), (0.000_03, 0.0), (0.001_8, 0.0), (0.0, 0.01)])
    func aLowVoicesFirstFrameAfterARestIsVoiced(noise: Double, offset: Double) {
        let rate = 48_000, hop = 512, frame = 40
        let start = frame * hop - hop  // the tone begins a hop before frame 40's centre
        let e2 = 440 * pow(2, -29 / 12.0)
        let attack = Int(0.04 * Double(rate))
        var seed: UInt64 = 7
        let samples = (0..<(start + rate)).map { index -> Float in
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let floor = noise * (Double(seed >> 11) / Double(1 << 53) - 0.5) * 3.46 + offset  // uniform: RMS `noise`
            guard index >= start else { return Float(floor) }
            let t = Double(index - start) / Double(rate)
            let level = index - start < attack ? 0.5 - 0.5 * cos(Double.pi * Double(index - start) / Double(attack)) : 1
            var value = 0.05 * sin(2 * .pi * e2 * t)
            for harmonic in 2...12 { value += 0.5 / Double(harmonic - 1) * sin(2 * .pi * e2 * Double(harmonic) * t + Double(harmonic)) }
            return Float(0.2 * level * value + floor)
        }
        let estimates = YINDetector(sampleRate: rate).track(samples, hop: hop)
        #expect(estimates[frame].voiced && abs(1_200 * log2(estimates[frame].frequency / e2)) < 10, "\(estimates[(frame - 2)...(frame + 2)])")
        #expect(estimates[frame].confidence > 0.5, "voiced on its correlation, its confidence says so")
        #expect(estimates[..<frame].allSatisfy { !$0.voiced }, "\(estimates[..<frame].filter(\.voiced))")
        #expect(estimates[(frame + 1)...].dropLast(4).allSatisfy { $0.voiced && abs(1_200 * log2($0.frequency / e2)) < 10 })
    }

    /// A quiet low tone (E2 at -50 dBFS) read at a small hop: a frame's
    /// level is taken over 10 ms, not its 16-sample hop (which fell
    /// silent at each zero crossing and unvoiced a frame in ten).
    @Test func aQuietLowToneAtASmallHopStaysVoiced() {
        let rate = 48_000
        let e2 = 440 * pow(2, -29 / 12.0)
        let samples = (0..<(rate / 2)).map { Float(0.003 * sin(2 * .pi * e2 * Double($0) / Double(rate))) }
        let estimates = YINDetector(sampleRate: rate).track(samples, hop: 16)
        let middle = estimates.dropFirst(estimates.count / 5).dropLast(estimates.count / 5)
        #expect(middle.allSatisfy { $0.voiced && abs(1_200 * log2($0.frequency / e2)) < 10 }, "\(middle.filter { !$0.voiced }.count) of \(middle.count) unvoiced")
    }
}
