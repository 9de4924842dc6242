import AcapellaCLI
import AcapellaScore
import Foundation

/// `acapella export-midi SONG -o OUT.mid [--verse N|0] [--transpose N]`:
/// the song as a Standard MIDI File (the tempo map, meters and keys, one
/// named track per part, the words of a verse as lyric events).
func runExportMIDI(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    guard let output = arguments.value("--output") else { throw CLIError("export-midi needs -o OUT.mid") }
    let score = try loadScore(path)
    let verse = try arguments.int("--verse", default: 1, range: 0...Score.maximumVerses)
    guard verse <= max(1, score.verseCount) else {
        throw CLIError("\(path): has \(score.verseCount) verse\(score.verseCount == 1 ? "" : "s"); --verse \(verse) names none", exitCode: 1)
    }
    let transpose = try arguments.int("--transpose", default: 0, range: -24...24)
    let bytes = MIDIExport.standardMIDIFile(score, transpose: transpose, verse: verse)
    do { try Data(bytes).write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
        throw CLIError("\(output): cannot write: \(error.localizedDescription)", exitCode: 1)
    }
    let notes = score.parts.reduce(0) { $0 + $1.notes.filter { !$0.isRest }.count }
    print("wrote \(output): \(score.parts.count) part\(score.parts.count == 1 ? "" : "s") (\(score.parts.map(\.name).joined(separator: ", "))), \(notes) notes" + (verse > 0 && score.verseCount > 0 ? ", the words of verse \(verse)" : ""))
    return 0
}
