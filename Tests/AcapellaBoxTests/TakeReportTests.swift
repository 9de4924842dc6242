import AcapellaAnalysis
import AcapellaBox
import AcapellaDevices
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

@Suite struct TakeReportTests {
    /// The streamed analysis (the take read a block at a time beside the
    /// guide rendered again, the notes a stretch at a time) says exactly
    /// what reading the whole take at once says: every note's verdict,
    /// centre, entry and score, and the guide's share — with stretches of
    /// 30 s and of 5 s (many cuts), over a take with the Tenor's take
    /// playing beside it.
    @Test(arguments: [30, 5])
    func streamedAnalysisEqualsTheWholeTakeAtOnce(stretchSeconds: Int) throws {
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        _ = try RecordingSession.record(project: project, request: RecordingRequest(part: "Tenor"), device: try SimulatedRoom())
        var options = SimulatedRoom.Options()
        options.latencyFrames = 411.3
        _ = try RecordingSession.record(project: project, request: RecordingRequest(part: "Alto"), device: try SimulatedRoom(options))
        let take = try #require(project.manifest.takes.last)
        let (streamed, guide) = try TakeReport.analyze(take, in: project, stretchSeconds: stretchSeconds)

        // The same take, read whole (as the analysis once did).
        let (samples, rate) = try AudioFile.readMono(project.path + "/" + take.file)
        let schedule = try Schedule(score: project.score, options: take.scheduleOptions(sampleRate: rate))
        let origin = -(take.alignmentOffsetSamples + take.nudgeSamples)
        let others = project.activeTakes(for: schedule.options).takes
        let (cleaned, wholeGuide) = TakeReport.removingGuide(samples, origin: origin, schedule: schedule, part: 1, takes: others)
        let whole = TakeReport.make(score: project.score, schedule: schedule, part: 1, samples: cleaned, origin: origin, analyzer: TakeAnalyzer(sampleRate: rate))
        #expect(abs(guide - wholeGuide) < 1e-9 && guide > 0.1, "guide \(guide) against \(wholeGuide)")
        #expect(streamed.notes.count == whole.notes.count && streamed.notes.count == 28)
        var differ = 0
        for (a, b) in zip(streamed.notes, whole.notes) {
            let same = a.tone == b.tone && a.analysis.sung == b.analysis.sung && a.analysis.onsetMilliseconds == b.analysis.onsetMilliseconds
                && abs((a.analysis.cents ?? 0) - (b.analysis.cents ?? 0)) < 1e-6 && abs(a.analysis.score - b.analysis.score) < 1e-6
                && a.analysis.curve.count == b.analysis.curve.count
            if !same { differ += 1 }
        }
        #expect(differ == 0, "\(differ) notes read otherwise streamed")
        #expect(streamed.lines == whole.lines, "\(streamed.lines) against \(whole.lines)")
    }

    /// A take that lost 250 ms of its audio over a note's entry (a
    /// dropout: zeros in the file): told where, the report sets that note
    /// aside — not judged, in no score and no suggestion — and says so;
    /// not told, it would call the entry late (or the note missed) and
    /// blame the singer.
    @Test func aNoteOverADropoutIsNotJudged() throws {
        let score = try Acasong.parse(songText("amazing-grace.acasong"))
        let schedule = try Schedule(score: score)
        let part = 1
        let tones = schedule.tones[part]
        var singer = SyntheticSinger(tones: tones, sampleRate: 48_000)
        singer.vibratoCents = 0
        var samples = (0..<Int(schedule.endSample + 48_000)).map { singer.sample(atSong: Int64($0)) }
        let victim = tones.indices.first { tones[$0].endSample - tones[$0].startSample > 48_000 && $0 > 4 }!
        let lost = (tones[victim].startSample - 2_400)..<(tones[victim].startSample + 9_600)
        for index in lost { samples[Int(index)] = 0 }

        let blind = TakeReport.make(score: score, schedule: schedule, part: part, samples: samples, origin: 0, analyzer: TakeAnalyzer(sampleRate: 48_000))
        let blindNote = try #require(blind.notes.first { $0.tone == victim })
        #expect(!blindNote.analysis.sung || abs(blindNote.analysis.onsetMilliseconds ?? 0) >= 40, "without the dropout the note reads wrong")

        let told = TakeReport.make(score: score, schedule: schedule, part: part, samples: samples, origin: 0, lost: [lost], analyzer: TakeAnalyzer(sampleRate: 48_000))
        let note = try #require(told.notes.first { $0.tone == victim })
        #expect(!note.judged && note.lostMilliseconds == 250)
        #expect(told.notes.filter { !$0.judged }.count == 1, "only the note the dropout touches")
        #expect(told.score >= 95, "the rest was sung in tune: \(told.score)")
        #expect(told.suggestions.isEmpty, "nothing to punch: \(told.suggestions)")
        let place = "m. \(note.writtenMeasure), beat \(note.beat == note.beat.rounded() ? "\(Int(note.beat))" : "\(note.beat)")"
        #expect(told.lines.contains { $0.hasPrefix(place) && $0.hasSuffix("not judged — the recording lost 250 ms there") }, "\(told.lines)")
        #expect(told.lines[0].contains("(1 more not judged: the recording lost audio there)"), "\(told.lines[0])")
        let summary = told.summary(takeID: 1)
        #expect(summary.notes == told.notes.count - 1 && summary.worst.isEmpty)
        let json = told.json["notes"] as! [[String: Any]]
        #expect(json.first { $0["tone"] as? Int == victim }?["lostMilliseconds"] as? Double == 250)
        #expect(told.svg().contains("class=\"note lost\""))
    }
}
