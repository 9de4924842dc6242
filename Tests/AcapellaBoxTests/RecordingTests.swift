@testable import AcapellaBox
import AcapellaAnalysis
import AcapellaDevices
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

let songsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Songs")

func songText(_ name: String) throws -> String {
    try String(contentsOf: songsDirectory.appendingPathComponent(name), encoding: .utf8)
}

/// A fresh project in a temporary folder.
func temporaryProject(_ song: String) throws -> Project {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-test-\(UUID().uuidString).acaproj").path
    return try Project.create(at: path, songText: try songText(song))
}

/// The lag (in samples, within ±maximumLag) at which `b` best matches `a`.
func bestLag(_ a: (Int64) -> Float, _ b: (Int64) -> Float, over range: Range<Int64>, maximumLag: Int64) -> Int64 {
    var best: (lag: Int64, score: Double) = (0, -.infinity)
    for lag in -maximumLag...maximumLag {
        var sum = 0.0
        for s in range { sum += Double(a(s)) * Double(b(s + lag)) }
        if sum > best.score { best = (lag, sum) }
    }
    return best.lag
}

@Suite(.serialized) struct RecordingTests {
    /// The Alto recorded in a room with a 317.4-frame round trip while the
    /// room's singer sings it: the take, read through its alignment, lines
    /// up with what was sung and with the other parts' playback it picked
    /// up, within a sample; the mix plays it in time.
    @Test func takeLandsWhereTheSingerSang() throws {
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        var options = SimulatedRoom.Options()
        options.latencyFrames = 317.4
        let room = try SimulatedRoom(options)
        let result = try RecordingSession.record(project: project, request: RecordingRequest(part: "Alto"), device: room)
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.takes.count == 1)
        let take = try #require(result.takes.first)
        #expect(take.state == .kept && take.active && take.range == nil && take.part == "Alto")
        let schedule = try Schedule(score: project.score)
        // The take holds the count-in (one 3/4 measure before the pickup) and the whole song.
        #expect(take.alignmentOffsetSamples > 0 && take.frames >= schedule.endSample + take.alignmentOffsetSamples, "\(take)")
        let (samples, _) = try AudioFile.readMono(project.path + "/" + take.file)
        func taken(_ song: Int64) -> Float {
            let frame = song + take.alignmentOffsetSamples
            return frame >= 0 && frame < Int64(samples.count) ? samples[Int(frame)] : 0
        }
        let singer = SyntheticSinger(tones: schedule.tones[1], sampleRate: 48_000)
        let window: Range<Int64> = 200_000..<300_000
        let lag = bestLag({ singer.sample(atSong: $0) }, taken, over: window, maximumLag: 40)
        #expect(abs(lag) <= 1, "the take is \(lag) samples off the singer")
        // The playback it picked up (the other parts) is in time too.
        var others = score(project).parts.indices.map { PartMix(gain: 0.3, pan: -0.6 + 1.2 * Float($0) / 3) }
        others[1].muted = true
        let playback = OfflineRender.render(schedule, mixes: others)
        func heard(_ song: Int64) -> Float {
            let index = Int(song - playback.firstSample)
            return index >= 0 && index < playback.left.count ? (playback.left[index] + playback.right[index]) / 2 : 0
        }
        let bleedLag = bestLag(heard, taken, over: window, maximumLag: 40)
        #expect(abs(bleedLag) <= 1, "the picked-up playback is \(bleedLag) samples off")
        print("alignment in a 317.4-frame room: singer \(lag) samples, picked-up playback \(bleedLag) samples")

        // Mixed: the Alto (its take) against the song timeline, exactly where the take says.
        let (takes, mismatched) = project.activeTakes(for: schedule.options)
        #expect(mismatched.isEmpty && takes[1].layers.count == 1)
        var solo = project.score.parts.map { _ in PartMix(gain: 1, pan: -1, muted: true) }
        solo[1].muted = false
        let mixed = OfflineRender.render(schedule, mixes: solo, takes: takes)
        func mixedAt(_ song: Int64) -> Float { mixed.left[Int(song - mixed.firstSample)] }
        #expect(bestLag({ singer.sample(atSong: $0) }, mixedAt, over: window, maximumLag: 40) == lag)
        let sameSamples = window.allSatisfy { mixedAt($0) == taken($0) }
        #expect(sameSamples, "the mix plays the take sample for sample through its alignment")
    }

    func score(_ project: Project) -> Score { project.score }

    /// The needle while recording: a singer 20 cents sharp reads about +20
    /// cents against the part's notes, off the render thread.
    @Test func theNeedleShowsTheSingersDetuning() throws {
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        var request = RecordingRequest(part: "Alto")
        var singer = SingerSettings()
        singer.detuneCents = 20
        singer.vibratoCents = 0
        request.singer = singer
        request.trackPitch = true
        var options = SimulatedRoom.Options()
        options.pacing = .realTime(speed: 8)  // so the control loop samples the needle as it goes
        let result = try RecordingSession.record(project: project, request: request, device: try SimulatedRoom(options))
        let sung = result.pitchReadings.compactMap(\.cents)
        #expect(sung.count >= 20, "\(result.pitchReadings.count) readings, \(sung.count) with a pitch")
        let median = sung.sorted()[sung.count / 2]
        #expect(abs(median - 20) <= 8, "median \(median) cents (the other parts bleed into the microphone)")
        #expect(result.pitchReadings.contains { $0.expectedMIDI != nil && $0.sungNote != nil })
    }

    /// A room that under-reports its round trip by 17.4 frames: recorded
    /// as reported, the take is 17 samples late; calibrated, the stored
    /// trim puts it back within a sample, and the take says which
    /// calibration it used.
    @Test func calibrationTrimAlignsTheTake() throws {
        let storePath = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-calibration-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: storePath) }
        var options = SimulatedRoom.Options()
        options.latencyFrames = 317.4
        options.reportedLatencyFrames = 300
        func recordAlto() throws -> (lag: Int64, take: TakeRecord) {
            let project = try temporaryProject("simple-harmony.acasong")
            defer { try? FileManager.default.removeItem(atPath: project.path) }
            var request = RecordingRequest(part: "Soprano")
            request.calibrationStore = storePath
            let result = try RecordingSession.record(project: project, request: request, device: try SimulatedRoom(options))
            let take = try #require(result.takes.first)
            let (samples, _) = try AudioFile.readMono(project.path + "/" + take.file)
            let singer = SyntheticSinger(tones: try Schedule(score: project.score).tones[0], sampleRate: 48_000)
            let lag = bestLag({ singer.sample(atSong: $0) }, { song in
                let frame = song + take.alignmentOffsetSamples
                return frame >= 0 && frame < Int64(samples.count) ? samples[Int(frame)] : 0
            }, over: 50_000..<150_000, maximumLag: 40)
            return (lag, take)
        }
        let uncalibrated = try recordAlto()
        #expect(uncalibrated.lag == 17 || uncalibrated.lag == 18, "as reported: \(uncalibrated.lag)")
        #expect(uncalibrated.take.calibration?.contains("not calibrated") == true)
        let measured = try Calibration.measure(device: try SimulatedRoom(options))
        var store = try CalibrationStore(path: storePath)
        let room = try SimulatedRoom(options)
        try store.store(RouteCalibration(measuredFrames: measured.roundTripFrames, reportedFrames: 300, trimFrames: measured.roundTripFrames - 300, date: "test"), for: room.route)
        let calibrated = try recordAlto()
        #expect(abs(calibrated.lag) <= 1, "calibrated: \(calibrated.lag)")
        #expect(calibrated.take.calibration?.contains("calibrated trim") == true, "\(calibrated.take.calibration ?? "none")")
    }

    /// Loop recording: three passes over measures 3–4 after a count-in,
    /// one take per pass, each in time with the singer; the last plays.
    @Test func loopPassesBecomeTakes() throws {
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        var request = RecordingRequest(part: "Bass")
        request.measures = 3...4
        request.loopPasses = 3
        let result = try RecordingSession.record(project: project, request: request, device: try SimulatedRoom())
        #expect(result.problems.isEmpty, "\(result.problems)")
        let schedule = try Schedule(score: project.score)
        let range = try #require(schedule.loopRange(measures: 3...4))
        let takes = project.manifest.takes
        #expect(takes.count == 3 && takes.allSatisfy { $0.range == SongRange(range.lowerBound, range.upperBound) && $0.state == .kept })
        #expect(takes.map(\.active) == [false, false, true], "the last pass plays")
        let singer = SyntheticSinger(tones: schedule.tones[3], sampleRate: 48_000)
        for take in takes {
            let (samples, _) = try AudioFile.readMono(project.path + "/" + take.file)
            #expect(samples.count >= Int(range.count))
            let lag = bestLag({ singer.sample(atSong: $0) }, { song in
                let frame = song + take.alignmentOffsetSamples
                return frame >= 0 && frame < Int64(samples.count) ? samples[Int(frame)] : 0
            }, over: (range.lowerBound + 1_000)..<(range.lowerBound + 60_000), maximumLag: 40)
            #expect(abs(lag) <= 1, "take \(take.id) is \(lag) samples off")
        }
        let (active, _) = project.activeTakes(for: schedule.options)
        #expect(active[3].layers.count == 1)
    }
}
