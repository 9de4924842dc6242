import AcapellaAnalysis
import AcapellaBox
import AcapellaDevices
import AcapellaEngine
import AcapellaScore
import Foundation
import Testing

@Suite struct TakeReportTests {
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
