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
}
