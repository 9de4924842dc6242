@testable import AcapellaBox
import AcapellaDevices
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// A room with a whole-frame round trip and nothing but the singer at the
/// microphone: the take must equal what was sung, sample for sample.
func quietRoom(latency: Double = 300, xruns: [Int: Int] = [:], unlinked: Bool = false, skewUnknown: Bool = false) throws -> SimulatedRoom {
    var options = SimulatedRoom.Options()
    options.latencyFrames = latency
    options.bleed = 0
    options.noise = 0
    options.xruns = xruns
    options.unlinked = unlinked
    options.skewUnknown = skewUnknown
    return try SimulatedRoom(options)
}

/// Song samples where take frame f − offset is not what the singer sang,
/// outside the take's dropouts (widened by the room's filter reach), and
/// samples inside them that are not silent.
func misplacedSamples(_ take: TakeRecord, in project: Project, part: Int) throws -> (checked: Int, wrong: Int, loudInDropouts: Int) {
    let schedule = try Schedule(score: project.score)
    var singerVoice = SyntheticSinger(tones: schedule.tones[part], sampleRate: 48_000)
    singerVoice.noise = 0
    let (samples, _) = try AudioFile.readMono(project.path + "/" + take.file)
    let lost = take.dropouts.map { ($0.start - 16)..<($0.end + 16) }
    var checked = 0
    var wrong = 0
    for song in Int64(0)..<schedule.endSample where !lost.contains(where: { $0.contains(song) }) {
        let frame = Int(song + take.alignmentOffsetSamples)
        guard frame < samples.count else { break }
        if abs(samples[frame] - singerVoice.sample(atSong: song)) > 1e-4 { wrong += 1 }
        checked += 1
    }
    var loud = 0
    for dropout in take.dropouts {
        for song in dropout.start..<dropout.end {
            let frame = Int(song + take.alignmentOffsetSamples)
            if frame >= 0, frame < samples.count, samples[frame] != 0 { loud += 1 }
        }
    }
    return (checked, wrong, loud)
}

func quietSinger() -> SingerSettings {
    var singer = SingerSettings()
    singer.noise = 0
    return singer
}

@Suite(.serialized) struct FaultTests {
    /// 100 xruns of 1–400 frames during a take: everywhere outside the
    /// logged dropouts, take frame f holds exactly what the singer sang at
    /// song sample f − offset.
    @Test func alignmentHoldsAcrossAHundredXruns() throws {
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        var rng = SplitMix64(seed: 100)
        var xruns: [Int: Int] = [:]
        while xruns.count < 100 { xruns[2_000 + Int(rng.next() % 11_000)] = 1 + Int(rng.next() % 400) }
        var request = RecordingRequest(part: "Alto")
        request.singer = quietSinger()
        let result = try RecordingSession.record(project: project, request: request, device: try quietRoom(xruns: xruns))
        #expect(result.problems.isEmpty, "\(result.problems)")
        let take = try #require(result.takes.first)
        #expect(result.takes.count == 1 && take.state == .kept)
        #expect(!take.dropouts.isEmpty && take.dropouts.count <= 100, "\(take.dropouts.count) dropouts")
        let (checked, wrong, loud) = try misplacedSamples(take, in: project, part: 1)
        #expect(wrong == 0 && loud == 0, "\(wrong) of \(checked) samples off, \(loud) loud in the dropouts")
        #expect(checked > 1_720_000 * 8 / 10)
        print("100 xruns: \(take.dropouts.count) dropouts logged, \(checked) song samples checked, \(wrong) misplaced")
    }

    /// Capture and playback that start apart at every restart (unlinked
    /// streams, a skew of up to 32 frames either way each time, reported as
    /// a card's trigger timestamps report it): after 0, 1, 10 and 100 xruns
    /// the take is still exactly what was sung, sample for sample, and
    /// silent in place where audio was lost. Ignoring the skew misplaces
    /// every stretch after a restart.
    @Test(arguments: [0, 1, 10, 100])
    func unlinkedStreamsStayAlignedAcrossXruns(count: Int) throws {
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        // One every 100 periods (so each is its own dropout), of 1–400 frames.
        var rng = SplitMix64(seed: UInt64(7 + count))
        var xruns: [Int: Int] = [:]
        for index in 0..<count { xruns[2_000 + 100 * index + Int(rng.next() % 50)] = 1 + Int(rng.next() % 400) }
        var request = RecordingRequest(part: "Alto")
        request.singer = quietSinger()
        let result = try RecordingSession.record(project: project, request: request, device: try quietRoom(latency: 400, xruns: xruns, unlinked: true))
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.deviceGaps == Int64(count), "\(result.deviceGaps) gaps for \(count) xruns")
        let take = try #require(result.takes.first)
        #expect(take.dropouts.count == count, "\(take.dropouts.count) dropouts for \(count) xruns")
        #expect(take.note == nil, "\(take.note ?? "")")
        let (checked, wrong, loud) = try misplacedSamples(take, in: project, part: 1)
        #expect(wrong == 0 && loud == 0, "\(wrong) of \(checked) samples misplaced, \(loud) loud in the dropouts")
        #expect(checked > 1_720_000 * 8 / 10, "\(checked) song samples compared")
    }

    /// Unlinked streams that cannot say when each started: the take is
    /// kept, and says from where its alignment is not verified.
    @Test func anUnknownSkewIsSaidWithTheTake() throws {
        let project = try temporaryProject("simple-harmony.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        var request = RecordingRequest(part: "Bass")
        request.singer = quietSinger()
        let result = try RecordingSession.record(project: project, request: request, device: try quietRoom(latency: 400, xruns: [3_000: 200], unlinked: true, skewUnknown: true))
        let take = try #require(result.takes.first)
        #expect(take.state == .kept)
        #expect(take.note?.contains("alignment not verified from 0:00.0 on") == true, "\(take.note ?? "no note")")
    }

    /// The disk fills two seconds into the take: the take stops with a
    /// clear message, keeps those two seconds, the manifest stays valid,
    /// and the recording run ends normally.
    @Test func diskFullKeepsWhatWasWritten() throws {
        let project = try temporaryProject("simple-harmony.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        var request = RecordingRequest(part: "Bass")
        request.diskFullAfterFrames = 96_000
        let result = try RecordingSession.record(project: project, request: request, device: try quietRoom())
        #expect(result.problems.count == 1 && result.problems[0].contains("No space left on device"), "\(result.problems)")
        let take = try #require(result.takes.first)
        #expect(take.frames == 96_000 && take.state == .kept && take.note?.contains("No space") == true)
        #expect(TakeFile.frameCount(project.path + "/" + take.file) == 96_000)
        project.close()
        let (reopened, report) = try Project.open(project.path, for: .write(owner: "test"))
        #expect(report.isEmpty, "\(report)")
        #expect(reopened.manifest.takes == [take])
    }

    /// Damaged manifests — truncated, garbage, a future version, missing —
    /// open with a report and lose no take; a take whose sidecar is gone
    /// too is still found, flagged.
    @Test(arguments: ["truncated", "garbage", "version", "missing"])
    func damagedManifestLosesNoTake(damage: String) throws {
        let project = try temporaryProject("simple-harmony.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        var request = RecordingRequest(part: "Bass")
        request.singer = quietSinger()
        _ = try RecordingSession.record(project: project, request: request, device: try quietRoom())
        request.part = "Soprano"
        request.measures = 2...2
        _ = try RecordingSession.record(project: project, request: request, device: try quietRoom())
        let before = project.manifest.takes
        #expect(before.count == 2 && before.allSatisfy { $0.state == .kept })
        let manifestPath = project.path + "/manifest.json"
        let original = try Data(contentsOf: URL(fileURLWithPath: manifestPath))
        switch damage {
        case "truncated": try original.prefix(original.count / 2).write(to: URL(fileURLWithPath: manifestPath))
        case "garbage": try Data((0..<500).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(fileURLWithPath: manifestPath))
        case "version": try Data(String(decoding: original, as: UTF8.self).replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : 99").utf8).write(to: URL(fileURLWithPath: manifestPath))
        default: try FileManager.default.removeItem(atPath: manifestPath)
        }
        project.close()
        let (reopened, report) = try Project.open(project.path, for: .write(owner: "test"))
        #expect(!report.isEmpty && report[0].hasPrefix("manifest.json:"), "\(report)")
        #expect(reopened.manifest.takes == before, "every take back, as it was")
        let files = try FileManager.default.contentsOfDirectory(atPath: project.path)
        #expect(damage == "missing" || files.contains { $0.hasPrefix("manifest.json.damaged-") }, "the damaged manifest is kept aside")
        // Opening again: nothing left to report.
        reopened.close()
        #expect(try Project.open(project.path, for: .write(owner: "test")).report.isEmpty)

        // A take with neither manifest entry nor sidecar: found by its file, flagged.
        try FileManager.default.removeItem(atPath: manifestPath)
        try FileManager.default.removeItem(atPath: project.path + "/" + (before[0].file as NSString).deletingPathExtension + ".json")
        let (bare, bareReport) = try Project.open(project.path, for: .write(owner: "test"))
        #expect(bare.manifest.takes.count == 2)
        let found = try #require(bare.manifest.takes.first { $0.file == before[0].file })
        #expect(found.part == "Bass" && found.note?.contains("alignment unknown") == true)
        #expect(bareReport.contains { $0.contains("alignment unknown") })
    }

    /// A device lost mid-take: the take ends there, is kept, and the
    /// problem is reported.
    @Test func deviceLossKeepsTheTake() throws {
        let project = try temporaryProject("simple-harmony.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        var options = SimulatedRoom.Options()
        options.loseDeviceAtPeriod = 2_000
        let result = try RecordingSession.record(project: project, request: RecordingRequest(part: "Bass"), device: try SimulatedRoom(options))
        #expect(result.problems.contains { $0.contains("the device went away") })
        let take = try #require(result.takes.first)
        #expect(take.state == .kept && take.frames > 100_000 && take.frames < 2_000 * 128)
    }
}
