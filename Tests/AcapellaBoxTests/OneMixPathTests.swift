import AcapellaTrials
@testable import AcapellaBox
import AcapellaEngine
@testable import AcapellaProject
import AcapellaScore
import AcapellaWeb
import Foundation
import Testing

/// One project mixed by its three callers — `acapella mix`'s path
/// (`ProjectExport.mix`), the USB stick's export and the page's download —
/// is one file, byte for byte: the same session followed (levels, mutes,
/// tempo), the same takes streamed, the same tags.
@Suite struct OneMixPathTests {
    /// Amazing Grace with a take on every part and a saved session that
    /// changes what is heard: the Alto 6 dB down and panned, the Bass muted.
    static func rehearsed() throws -> Project {
        let project = try TakeStreamingTests.project()
        var session = SessionState()
        session.parts["Alto"] = SessionState.Part(volumeDB: -6, pan: -0.5)
        session.parts["Bass"] = SessionState.Part(mute: true)
        try project.saveSession(session)
        return project
    }

    func bytes(_ path: String) throws -> [UInt8] { [UInt8](try #require(FileManager.default.contents(atPath: path))) }

    @Test(.fullSuiteOnly) func theThreeCallersWriteTheSameBytes() throws {
        let project = try Self.rehearsed()
        let data = NSTemporaryDirectory() + "onemix-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: data + "/projects", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: data) }
        // The command line's path.
        let direct = data + "/direct.flac"
        let result = try ProjectExport.mix(project, to: direct)
        #expect(result.notes.contains { $0.hasPrefix("mixed as last rehearsed") }, "\(result.notes)")
        #expect(abs(result.loudness.integratedLUFS + 16) <= 0.05)
        // The session is heard: without it the mix is another file.
        var ignoring = ProjectMixRequest()
        ignoring.session = .ignore
        _ = try ProjectExport.mix(project, ignoring, to: data + "/ignored.flac")
        #expect(try bytes(direct) != bytes(data + "/ignored.flac"))

        // The page's download, from the project as a reader sees it.
        let stem = ProjectExport.name(of: project)
        let hub = WebHub(dataDirectory: data, program: WebHubTests.program)
        hub.publishTakes(project.manifest.takes, project: project.path, song: "Amazing Grace", parts: project.score.parts.map(\.name), currentPart: 1,
                         sampleRate: 48_000) { _ in 1 }
        guard case .success(let download) = hub.download(.mix(format: "flac")) else {
            Issue.record("the page's mix downloads")
            return
        }
        #expect(try bytes(download.path) == bytes(direct))

        // The USB stick's export, of the same project in the data directory.
        let stick = data + "/stick"
        try FileManager.default.createDirectory(atPath: stick + "/acapella", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: project.path, toPath: data + "/projects/" + stem + ".acaproj")
        var steps: [(Int, Int)] = []
        let outcome = try StickJob.run(stick: stick, dataDirectory: data, stillThere: { true }, progress: { steps.append(($0.step, $0.steps)) })
        // Every step counted: 1 of N up to N of N (the readout's "USB 3/9"), the parts' practice tracks and the three mixes among them.
        #expect(!steps.isEmpty && steps.map(\.0) == steps.indices.map { $0 + 1 } && steps.allSatisfy { $0.1 == steps.count } && steps.count == 5 + project.score.parts.count,
                "\(steps)")
        #expect(outcome.exported.contains("acapella/export/\(stem)/mix.flac"))
        #expect(try bytes(stick + "/acapella/export/\(stem)/mix.flac") == bytes(direct))
        // The phone's file (AAC in MP4) the same on the stick and from the page.
        guard case .success(let m4a) = hub.download(.mix(format: "m4a")) else {
            Issue.record("the page's mix downloads as .m4a")
            return
        }
        #expect(outcome.exported.contains("acapella/export/\(stem)/mix.m4a"))
        #expect(try bytes(stick + "/acapella/export/\(stem)/mix.m4a") == bytes(m4a.path))
        #expect(try bytes(m4a.path).count > 1_000)
        // Its temporary files stayed on the box's disk, and went.
        #expect(try FileManager.default.contentsOfDirectory(atPath: stick + "/acapella/export/\(stem)").allSatisfy { !$0.hasPrefix(".") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: data + "/exports").allSatisfy { !$0.hasSuffix(".raw") && !$0.hasSuffix(".limited") })
        // The practice tracks follow the same path: the page's is the stick's, decoded (the stick's is MP3).
        guard case .success(let practice) = hub.download(.practice(part: 1, format: "flac")) else {
            Issue.record("the page's practice track downloads")
            return
        }
        let viaExport = data + "/practice.flac"
        _ = try ProjectExport.mix(project, ProjectMixRequest(purpose: .practice(part: "Alto")), to: viaExport)
        #expect(try bytes(practice.path) == bytes(viaExport))
    }

    /// A stick where one project cannot go out (its export folder is a
    /// file there): the other project still goes out, the one that could
    /// not is said as failed; a stick whose export folder is a link out of
    /// it sends nothing anywhere and the job fails as a whole.
    @Test(.fullSuiteOnly) func aProjectThatCannotGoOutLeavesTheOthers() throws {
        let project = try TakeStreamingTests.project()
        let data = NSTemporaryDirectory() + "stickfail-\(UUID().uuidString)"
        let stick = data + "/stick"
        try FileManager.default.createDirectory(atPath: data + "/projects", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: stick + "/acapella/export", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: data) }
        try FileManager.default.copyItem(atPath: project.path, toPath: data + "/projects/a.acaproj")
        try FileManager.default.copyItem(atPath: project.path, toPath: data + "/projects/b.acaproj")
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: stick + "/acapella/export/a"))
        let outcome = try StickJob.run(stick: stick, dataDirectory: data, stillThere: { true }, progress: { _ in })
        #expect(outcome.failed.count == 1 && outcome.failed[0].contains("export/a"), "\(outcome.failed)")
        #expect(outcome.exported.contains("acapella/export/b/mix.flac") && !outcome.exported.contains { $0.hasPrefix("acapella/export/a/") }, "\(outcome.exported)")
        #expect(outcome.skipped.isEmpty)

        // The export folder a link out of the stick: refused whole, nothing written where it points.
        let elsewhere = data + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.removeItem(atPath: stick + "/acapella/export")
        try FileManager.default.createSymbolicLink(atPath: stick + "/acapella/export", withDestinationPath: elsewhere)
        #expect(throws: StickJob.Failure.self) { try StickJob.run(stick: stick, dataDirectory: data, stillThere: { true }, progress: { _ in }) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    /// A take with the others: the take streamed as its part's only take,
    /// at its own tempo; a take that is not there is a 404 (before any
    /// child runs); the page's is `acapella mix --take`'s.
    @Test func aTakeWithTheOthersIsStreamedNotDecoded() throws {
        let project = try Self.rehearsed()
        let alto = try #require(project.manifest.takes.first { $0.part == "Alto" && !$0.isPunch })
        let (options, takes, record, _) = try ProjectExport.plan(project, ProjectMixRequest(purpose: .takeWithOthers(take: alto.id)))
        #expect(record?.id == alto.id && options.baseMixes?[1].gain != nil)
        let altoLayers = takes[1].layers
        #expect(altoLayers.count == 1 && altoLayers[0].stream != nil, "the take is streamed, the punch-ins over it left out")
        #expect(takes[3].layers.count == 2 && takes[3].layers.allSatisfy { $0.stream != nil })
        #expect(throws: MixdownError.self) { try ProjectExport.plan(project, ProjectMixRequest(purpose: .takeWithOthers(take: 999))) }
        do {
            _ = try ProjectExport.plan(project, ProjectMixRequest(purpose: .takeWithOthers(take: 999)))
        } catch {
            #expect(error.description == "no finished take 999")
        }
    }
}

extension OneMixPathTests {
    /// A mix at another tempo and key holds no take whole: each is
    /// stretched once, a chunk at a time, into a nameless file and
    /// streamed from there (a 15-minute duet at 85 % a semitone down
    /// peaked at 638 MB, held whole; 77 MB now), and what it streams is
    /// exactly what stretching the whole take in memory gives.
    @Test func aStretchedMixStreamsItsTakes() throws {
        let project = try temporaryProject("simple-harmony.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let options = ScheduleOptions(sampleRate: 48_000)
        var random = SplitMix64(seed: 5)
        let noise = (0..<150_000).map { _ in Float(random.next() >> 40) / Float(1 << 24) * 0.4 - 0.2 }
        _ = try ChoirMerge.record(noise, part: "Soprano", into: project, options: options, offset: 48_000) { $0.gainDB = -2 }
        var request = ProjectMixRequest()
        request.session = .ignore
        request.tempoScale = Rational(17, 20)
        request.transpose = -1
        let scratch = NSTemporaryDirectory() + "spools-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let (planned, takes, _, notes) = try ProjectExport.plan(project, request, scratch: scratch)
        #expect(notes.contains { $0.hasPrefix("stretched with Rubber Band") })
        let layer = try #require(takes[0].layers.first)
        #expect(layer.stream != nil && layer.samples.isEmpty, "the take streamed, not held")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty, "the spools have no names")
        // Streamed from its spool, against the same take stretched whole in memory.
        let take = try #require(project.manifest.takes.first)
        let plan = try #require(project.stretchPlan(take, at: planned.scheduleOptions))
        let whole = try OfflineStretcher.process(take.playback(try AudioFile.readMono(try project.takePath(take)).samples).samples, sampleRate: 48_000,
                                                 stretch: plan.stretch, anchors: plan.anchors)
        let spooled = try SpooledTake(stretching: try SoundFileBlockSource(path: try project.takePath(take), gain: take.gainFactor), sampleRate: 48_000,
                                      stretch: plan.stretch, anchors: plan.anchors, in: scratch)
        var streamed = [Float](repeating: .nan, count: whole.count)
        #expect(streamed.withUnsafeMutableBufferPointer { spooled.read(from: 0, count: $0.count, into: $0.baseAddress!) } == whole.count)
        #expect(streamed == whole, "the spool holds the whole take's stretch, sample for sample")
        // Nowhere to spool it (the scratch folder gone): no mix, said, rather than one without the take.
        do {
            _ = try ProjectExport.plan(project, request, scratch: scratch + "/gone")
            Issue.record("a mix without its stretched take was planned")
        } catch {
            #expect(error.description.hasPrefix("take 1 (Soprano) left out: ") && error.description.hasSuffix("no mix was made (it would be without that take)"),
                    "\(error.description)")
        }
    }

    @Test func thePagesTakeWithTheOthersIsTheCommandLines() throws {
        let project = try Self.rehearsed()
        let data = NSTemporaryDirectory() + "onemix-take-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: data) }
        let alto = try #require(project.manifest.takes.first { $0.part == "Alto" && !$0.isPunch })
        let hub = WebHub(dataDirectory: data, program: WebHubTests.program)
        hub.publishTakes(project.manifest.takes, project: project.path, song: "Amazing Grace", parts: project.score.parts.map(\.name), currentPart: 1,
                         sampleRate: 48_000) { _ in 1 }
        guard case .success(let download) = hub.download(.takeWithOthers(alto.id)) else {
            Issue.record("the take with the others downloads")
            return
        }
        _ = try ProjectExport.mix(project, ProjectMixRequest(purpose: .takeWithOthers(take: alto.id)), to: data + "/direct.wav")
        #expect(try bytes(download.path) == bytes(data + "/direct.wav"))
        #expect(hub.download(.takeWithOthers(999)) == .failure(WebFailure(404, "no finished take 999")))
    }
}
