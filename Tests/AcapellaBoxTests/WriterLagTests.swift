@testable import AcapellaBox
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// A writer thread that falls behind (a busy machine): loop passes are
/// still being written after the transport stopped. The take put up for
/// review must be the last pass, not each pass as it lands: the control
/// loop serves the writer (`serve`, which says whether a take was open
/// before it stored the closed ones), and false must mean every take is there.
@Suite struct WriterLagTests {
    @Test func noTakeIsTheNewestWhileALaterOneIsStillOpen() throws {
        let project = try temporaryProject("simple-harmony.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let recorder = Recorder(project: project, part: "Soprano", options: ScheduleOptions(sampleRate: 48_000))
        // All of it captured before the writer runs: two whole loop passes
        // over samples 0..<48,000, 6,000 samples of a third, then stopped.
        var frames: [CapturedFrame] = []
        for length in [48_000, 48_000, 6_000] {
            for sample in 0..<length { frames.append(CapturedFrame(value: 0.1, mark: FrameMark(songSample: Int64(sample), kind: .recording))) }
        }
        frames += Array(repeating: CapturedFrame(value: 0, mark: .none), count: 2_000)
        #expect(frames.withUnsafeBufferPointer { recorder.ring.push($0.baseAddress!, count: $0.count) } == frames.count)
        recorder.start()
        var seen: [(open: Bool, count: Int, frames: Int64?)] = []
        for _ in 0..<2_000_000 {
            let open = recorder.serve()
            let count = recorder.finished.count
            seen.append((open, count, recorder.finished.last?.frames))
            if !open && count == 3 { break }
            sched_yield()
        }
        recorder.finish()
        let last = try #require(seen.last)
        #expect(last.count == 3 && !last.open, "the writer finished the three passes: \(last)")
        #expect(last.frames == 6_000, "the newest is the last pass")
        // Whenever no take was open, the newest finished take was the last pass.
        let wrong = seen.filter { !$0.open && $0.count > 0 && $0.frames != 6_000 }
        #expect(wrong.isEmpty, "an earlier pass looked like the last: \(wrong.prefix(3))")
        #expect(seen.contains { $0.open && $0.count > 0 }, "the passes were seen landing one by one while the last was open (\(seen.count) looks)")
    }
}
