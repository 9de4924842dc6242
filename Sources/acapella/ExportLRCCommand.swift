import AcapellaCLI
import AcapellaEngine
import AcapellaScore
import Foundation

/// `acapella export-lrc SONG -o OUT.lrc [--verse N] [--part NAME] [--tempo PERCENT] [--lines-only]`:
/// the song's own words as timed lyrics (LRC), their times from the tempo
/// map to the millisecond: a line a phrase (four measures), every syllable
/// stamped, so the words travel with a practice track.
func runExportLRC(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    guard let output = arguments.value("--output") else { throw CLIError("export-lrc needs -o OUT.lrc") }
    let score = try loadScore(path)
    guard score.verseCount > 0 else { throw CLIError("\(path): the song has no words", exitCode: 1) }
    let verse = try arguments.int("--verse", default: 1, range: 1...Score.maximumVerses)
    guard verse <= score.verseCount else {
        throw CLIError("\(path): has \(score.verseCount) verse\(score.verseCount == 1 ? "" : "s"); --verse \(verse) names none", exitCode: 1)
    }
    let part: Int
    if let name = arguments.value("--part") {
        guard let index = score.parts.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw CLIError("\(path): no part named '\(name)'; the parts are: " + score.parts.map(\.name).joined(separator: ", "), exitCode: 1)
        }
        part = index
    } else {
        guard let index = score.parts.firstIndex(where: { $0.notes.contains { $0.lyric(verse: verse) != nil } }) else {
            throw CLIError("\(path): no part has words in verse \(verse)", exitCode: 1)
        }
        part = index
    }
    let tempo = try arguments.tempoMultiplier() ?? Rational(1)
    let rate = 48_000
    let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: rate, tempoScale: tempo))
    let lines = LyricLines(part: score.parts[part], schedule: schedule, verse: verse, pickupTicks: score.pickupTicks, writtenMeasure: score.writtenMeasure)
    guard !lines.lines.isEmpty else { throw CLIError("\(path): \(score.parts[part].name) has no words in verse \(verse)", exitCode: 1) }
    let words = !arguments.flags.contains("--lines-only")
    let lyrics = lines.timedLyrics(sampleRate: rate, title: score.title, artist: score.composer, words: words)
    do { try Data(lyrics.text().utf8).write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
        throw CLIError("\(output): cannot write: \(error.localizedDescription)", exitCode: 1)
    }
    let syllables = lines.syllables.reduce(0) { $0 + $1.count }
    print("wrote \(output): \(lines.lines.count) line\(lines.lines.count == 1 ? "" : "s")" + (words ? ", \(syllables) syllable\(syllables == 1 ? "" : "s") stamped" : "") + ", verse \(verse) of \(score.parts[part].name)"
          + (tempo == Rational(1) ? "" : " at \(tempo) of the written tempo"))
    return 0
}
