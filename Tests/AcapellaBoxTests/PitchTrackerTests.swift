@testable import AcapellaBox
@testable import AcapellaEngine
import Foundation
import Testing

@Suite struct PitchTrackerTests {
    /// A voice 20 cents sharp of the part's A4, then a rest: the tracker,
    /// fed tagged frames through its ring as the render thread does, reads
    /// +20 cents against A4 with the note's name, stamps the reading at the
    /// centre of the data YIN used (mapped through the frames' song samples,
    /// here offset by a 300-frame round trip), and shows no needle in the rest.
    @Test func scoreInformedNeedleAndStamp() {
        let rate = 48_000
        let tones = [ToneEvent(startSample: 0, endSample: 48_000, frequency: 440, midi: 69),
                     ToneEvent(startSample: 60_000, endSample: 96_000, frequency: 523.25, midi: 72)]
        let tracker = PitchTracker(tones: tones, sampleRate: rate)
        let sung = 440 * pow(2, 20.0 / 1_200)
        let roundTrip = 300
        var window: [CapturedFrame] = []
        var sinceLast = 0
        func feed(_ range: Range<Int>) {
            let frames = range.map { capture in
                CapturedFrame(value: Float(0.3 * sin(2 * Double.pi * sung * Double(capture) / Double(rate))),
                              mark: FrameMark(songSample: Int64(capture - roundTrip), kind: .recording))
            }
            frames.withUnsafeBufferPointer { #expect(tracker.ring.push($0.baseAddress!, count: $0.count) == $0.count) }
            tracker.drain(window: &window, sinceLast: &sinceLast)
        }
        feed(0..<20_000)
        let reading = tracker.reading
        #expect(reading?.expectedMIDI == 69)
        #expect(reading?.sungNote == "A4")
        #expect(abs((reading?.cents ?? 0) - 20) < 1, "\(String(describing: reading))")
        #expect((reading?.confidence ?? 0) > 0.9)
        #expect(abs(Double(reading?.inputPeak ?? 0) - 0.3) < 0.01)
        // The newest window ends at capture 19,999; YIN used its first
        // 1,024 samples plus one lag (48,000 / 445.1 ≈ 108) → centred
        // (1,024 + 108) / 2 = 566 into the 2,048-sample window.
        let windowStart = 20_000 / 512 * 512 - 2_048
        let expectedCentre = Int64(windowStart + (1_024 + 108) / 2 - roundTrip)
        #expect(abs((reading?.songSample ?? 0) - expectedCentre) <= 1, "\(String(describing: reading?.songSample)) vs \(expectedCentre)")
        // In the rest (song 48,000…60,000) the voice goes on, the needle does not.
        feed(20_000..<55_000)
        #expect(tracker.reading?.expectedMIDI == nil)
        #expect(tracker.reading?.cents == nil)
        #expect(tracker.reading?.sungNote == "A4", "the sung note is still named")
    }
}
