@testable import AcapellaEngine
import AcapellaScore
import Foundation
import Testing

/// The song's own words as timed lyrics: written, read back by the LRC
/// reader, every syllable there with its time from the tempo map, to the
/// millisecond.
@Suite struct TimedLyricsTests {
    @Test(arguments: ["amazing-grace.acasong", "lift-every-voice-and-sing.acasong", "silent-night.acasong", "my-bonnie.acasong"])
    func exportedAndReadBackTheSameSyllablesAtTheSameTimes(name: String) throws {
        let score = try song(name)
        for tempo in [Rational(1), Rational(9, 10)] {
            let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: 48_000, tempoScale: tempo))
            for verse in 1...max(1, score.verseCount) {
                let part = try #require(score.parts.first { $0.notes.contains { $0.lyric(verse: verse) != nil } })
                let lines = LyricLines(part: part, schedule: schedule, verse: verse, pickupTicks: score.pickupTicks, writtenMeasure: score.writtenMeasure)
                let read = try LRC.parse(Array(lines.timedLyrics(sampleRate: 48_000, title: score.title).text().utf8))
                #expect(read.skipped.isEmpty && read.title == score.title)
                // Every syllable of the verse, in order, against the words read back.
                let expected = part.notes.compactMap { note in note.lyric(verse: verse).map { (text: $0.text, milliseconds: Double(schedule.timeMap.sample(atTick: note.startTick)) / 48) } }
                let words = read.lines.flatMap(\.words)
                #expect(words.count == expected.count, "\(name) verse \(verse): \(words.count) words for \(expected.count) syllables")
                for (word, syllable) in zip(words, expected) {
                    #expect(word.text.trimmingCharacters(in: .whitespaces) == syllable.text, "\(name) verse \(verse)")
                    #expect(abs(Double(word.milliseconds) - syllable.milliseconds) <= 1, "\(name) verse \(verse) '\(syllable.text)': \(word.milliseconds) ms for \(syllable.milliseconds)")
                }
                // Each line starts with its first syllable; words make the line's text.
                #expect(read.lines.allSatisfy { $0.milliseconds == $0.words.first?.milliseconds && $0.text == $0.words.map(\.text).joined() })
            }
        }
    }
}
