@testable import AcapellaBox
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// Run inside the hardware-in-the-loop VM by Tests/hil/scenarios.sh after
/// `acapella record PROJECT --part PART --guide` on the loopback card, where
/// the captured signal is the box's own playback (every part's guide, the
/// recorded part's included): the take, read through its alignment, must
/// line up with the same mix rendered offline within a sample. Skipped (and
/// reported as skipped) anywhere else: it needs that recording.
@Suite struct HILAlignmentTests {
    static let project = ProcessInfo.processInfo.environment["ACAPELLA_HIL_PROJECT"]

    @Test(.enabled(if: project != nil, "needs a take recorded on the loopback card (Tests/hil/scenarios.sh)"))
    func loopbackTakeLinesUpWithThePlayback() throws {
        let (project, _) = try Project.open(try #require(Self.project), for: .write(owner: "test"))
        let part = ProcessInfo.processInfo.environment["ACAPELLA_HIL_PART"] ?? "Alto"
        let take = try #require(project.manifest.takes.last { $0.part == part && $0.state == .kept }, "no kept \(part) take")
        let (samples, _) = try AudioFile.readMono(project.path + "/" + take.file)
        func taken(_ song: Int64) -> Float {
            let frame = song + take.alignmentOffsetSamples + take.nudgeSamples
            return frame >= 0 && frame < Int64(samples.count) ? samples[Int(frame)] : 0
        }
        // What the recording played: every part spread as the session does,
        // its own guide on (--guide), the session's clicks; captured as the
        // average of the loopback's two channels.
        let schedule = try Schedule(score: project.score, options: ScheduleOptions(sampleRate: project.manifest.sampleRate, countInMeasures: 1))
        let played = OfflineRender.render(schedule, mixes: PartMix.spread(count: project.score.parts.count), clickGain: 0.2)
        func heard(_ song: Int64) -> Float {
            let index = Int(song - played.firstSample)
            return index >= 0 && index < played.left.count ? (played.left[index] + played.right[index]) / 2 : 0
        }
        // Compared away from the dropouts (xruns: the emulated CPU is slow),
        // which the take pads with silence and lists.
        let gaps = take.dropouts.map { ($0.start - 4_096)...($0.end + 4_096) }
        func clear(_ song: Int64) -> Bool { !gaps.contains { $0.contains(song) } }
        let start = stride(from: Int64(100_000), to: schedule.endSample - 80_000, by: 10_000).first { s in clear(s) && clear(s + 80_000) && !gaps.contains { $0.overlaps(s...(s + 80_000)) } }
        let first = try #require(start, "no 80,000 samples free of dropouts")
        let window = first..<(first + 80_000)
        let lag = bestLag(heard, taken, over: window, maximumLag: 2_048)
        var energy = 0.0
        var error = 0.0
        var compared = 0
        for song in Int64(100_000)..<(schedule.endSample - 10_000) where clear(song) {
            energy += Double(heard(song) * heard(song))
            error += Double((taken(song) - heard(song)) * (taken(song) - heard(song)))
            compared += 1
        }
        let residualDB = 10 * log10(max(error, 1e-20) / max(energy, 1e-20))
        print(String(format: "hil alignment: take %d (%@) is %d samples off the playback; residual %.1f dB over %d samples clear of its %d dropouts; calibration: %@",
                     take.id, part, lag, residualDB, compared, take.dropouts.count, take.calibration ?? "none"))
        #expect(abs(lag) <= 1, "the take is \(lag) samples off")
        #expect(residualDB < -30, "the take is the playback, sample for sample (residual \(residualDB) dB)")
    }
}
