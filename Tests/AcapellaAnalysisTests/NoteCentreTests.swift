@testable import AcapellaAnalysis
import Foundation
import Testing

/// The centre a note is graded on is the pitch held, not the slide into
/// it or out of it (issue 52: a real singer's G4 held at -20 cents, scooped
/// into from a third below for 40 ms, was graded at -79; the needle showed
/// -21).
@Suite struct NoteCentreTests {
    @Test(arguments: [(0.0, 0.0), (30.0, 5.5), (90.0, 5.5)])
    func aSlideIntoOrOutOfANoteIsNotItsCentre(vibrato: Double, rate: Double) {
        let times = stride(from: 0.0, to: 1.0, by: 256.0 / 48_000).map { $0 }
        for (name, edge) in [("a scoop from a third below", { (t: Double) in t < 0.04 ? -320.0 : nil }),
                             ("on the way to the next note", { (t: Double) in t > 0.92 ? 250.0 + (t - 0.92) * 1_000 : nil })] {
            let cents = times.map { t in edge(t) ?? -20 + vibrato * sin(2 * .pi * rate * t) }
            let found = TakeAnalyzer.centre(times: times, cents: cents, own: vibrato > 0 ? rate : nil, rate: vibrato > 0 ? rate : nil)
            #expect(abs(found.centre + 20) <= 3, "\(name), ±\(vibrato) cents: centre \(found.centre)")
        }
    }
}
