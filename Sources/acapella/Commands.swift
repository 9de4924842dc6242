import AcapellaDevices
import AcapellaMusicXML
import AcapellaScore
import Foundation

/// The subcommand table.
let commands: [Subcommand] = [
    Subcommand(
        name: "check", summary: "validate song files; one line per error",
        positionals: "FILE…", positionalCount: 1...Int.max,
        options: [OptionSpec(names: ["--quiet", "-q"], valueName: nil, help: "print nothing for valid files")],
        details: "Exit status 0 when every file is valid, 1 otherwise. Errors go to stderr as\nFILE:LINE:COL: error: MESSAGE (measure N).",
        run: runCheck),
    Subcommand(
        name: "import", summary: "convert MusicXML (.musicxml, .xml, .mxl) to .acasong, with an import report",
        positionals: "IN", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["-o", "--output"], valueName: "OUT", help: "write the .acasong here (default: standard output)"),
            OptionSpec(names: ["--parts"], valueName: "NAMES", help: "keep only these parts, comma-separated, in this order"),
        ],
        details: "The report (stderr) has one line per kind of thing skipped or changed, with a count and\nthe first measure. Repeats are kept as a single pass, as written.",
        run: runImport),
    Subcommand(
        name: "dump", summary: "print a song (.acasong or MusicXML) as JSON (the shape is documented in the README)",
        positionals: "FILE", positionalCount: 1...1,
        options: [OptionSpec(names: ["--json"], valueName: nil, help: "JSON output (the only format, and the default)")],
        details: "", run: runDump),
    Subcommand(
        name: "format", summary: "print a song in canonical form (or rewrite it with --write)",
        positionals: "FILE", positionalCount: 1...1,
        options: [OptionSpec(names: ["--write", "-w"], valueName: nil, help: "replace the file with its canonical form")],
        details: "Canonical form: fixed header order, explicit defaults, one space between tokens,\nfour measures per line each closed by a '|' barline check, lyrics after their part.",
        run: runFormat),
    Subcommand(
        name: "info", summary: "summarize songs: parts, ranges, measures, length",
        positionals: "FILE…", positionalCount: 1...Int.max,
        options: [OptionSpec(names: ["--rate"], valueName: "HZ", help: "sample rate for the length in samples (default 48000)")],
        details: "", run: runInfo),
    Subcommand(
        name: "bench", summary: "run a benchmark and print its figures",
        positionals: "NAME", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["--parts"], valueName: "N", help: "parts in the generated score (default 8)"),
            OptionSpec(names: ["--measures"], valueName: "N", help: "measures in the generated score (default 10000)"),
            OptionSpec(names: ["--repeat"], valueName: "N", help: "timed repetitions; the best is reported (default 5)"),
            OptionSpec(names: ["--dir"], valueName: "DIR", help: "MusicXML folder for 'import' (default ../shared/data/musicxml)"),
        ],
        details: "Benchmarks:\n  parse   parse + validate + print of a generated score, in notes per second\n  import  import every MusicXML file in --dir; music21 on the same files side by side when installed",
        run: runBench),
    Subcommand(
        name: "version", summary: "print the versions of acapella and its libraries",
        positionals: "", positionalCount: 0...0, options: [], details: "", run: runVersion),
]

/// Files larger than this are refused before parsing: no song is that big,
/// and a runaway file should not exhaust the box's memory.
let maximumSongBytes = 64 << 20

func writeError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Reads a file's bytes, with one-line errors that name it.
func readSongBytes(_ path: String) throws -> [UInt8] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw CLIError("\(path): no such file", exitCode: 1)
    }
    if isDirectory.boolValue { throw CLIError("\(path): is a directory, not a song file", exitCode: 1) }
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    if size > maximumSongBytes {
        throw CLIError("\(path): file is \(size >> 20) MiB; song files are limited to \(maximumSongBytes >> 20) MiB", exitCode: 1)
    }
    guard let data = FileManager.default.contents(atPath: path) else {
        throw CLIError("\(path): cannot be read (permissions?)", exitCode: 1)
    }
    return [UInt8](data)
}

/// Extensions read as MusicXML; everything else is read as `.acasong`.
let musicXMLExtensions: Set<String> = ["musicxml", "xml", "mxl"]

func isMusicXML(_ path: String) -> Bool {
    musicXMLExtensions.contains((path as NSString).pathExtension.lowercased())
}

/// Imports a MusicXML file, printing its errors; the report is returned.
func importMusicXML(_ path: String, options: ImportOptions = ImportOptions()) throws -> ImportResult {
    do {
        return try MusicXML.importScore(bytes: readSongBytes(path), fileName: path, options: options)
    } catch let error as ImportError {
        writeError(error.description)
        throw CLIError(error.description, exitCode: 1, alreadyReported: true)
    }
}

/// Reads a song: `.acasong` text, or MusicXML imported in memory.
func loadScore(_ path: String) throws -> Score {
    if isMusicXML(path) { return try importMusicXML(path).score }
    do {
        return try Acasong.parse(bytes: readSongBytes(path), file: path)
    } catch let errors as ScoreErrors {
        for error in errors.errors { writeError(error.description) }
        throw CLIError("\(path): \(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s")", exitCode: 1, alreadyReported: true)
    }
}

func runImport(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    let names = arguments.value("--parts").map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
    let result = try importMusicXML(path, options: ImportOptions(partNames: names))
    for line in result.report.lines { writeError("\(path): \(line)") }
    let text = Acasong.serialize(result.score)
    if let output = arguments.value("--output") {
        do {
            try text.write(toFile: output, atomically: true, encoding: .utf8)
        } catch {
            throw CLIError("\(output): cannot write: \(error.localizedDescription)", exitCode: 1)
        }
        writeError("wrote \(output): \(result.score.parts.count) parts, \(measureCount(result.score)) measures")
    } else {
        print(text, terminator: "")
    }
    return 0
}

func measureCount(_ score: Score) -> Int {
    score.endTick == 0 ? 0 : score.meterMap.measure(containing: score.endTick - 1)
}

func runCheck(_ arguments: ParsedArguments) throws -> Int32 {
    var failed = false
    for path in arguments.positionals {
        do {
            let score = isMusicXML(path) ? try importMusicXML(path).score : try Acasong.parse(bytes: readSongBytes(path), file: path)
            if !arguments.flags.contains("--quiet") {
                print("\(path): ok — \(score.parts.count) part\(score.parts.count == 1 ? "" : "s"), \(measureCount(score)) measures")
            }
        } catch let errors as ScoreErrors {
            failed = true
            for error in errors.errors { writeError(error.description) }
        } catch let error as CLIError {
            failed = true
            writeError(error.description)
        }
    }
    return failed ? 1 : 0
}

func runDump(_ arguments: ParsedArguments) throws -> Int32 {
    let score = try loadScore(arguments.positionals[0])
    print(score.jsonText(), terminator: "")
    return 0
}

func runFormat(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    let canonical = Acasong.serialize(try loadScore(path))
    if arguments.flags.contains("--write") {
        do {
            try canonical.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw CLIError("\(path): cannot write: \(error.localizedDescription)", exitCode: 1)
        }
    } else {
        print(canonical, terminator: "")
    }
    return 0
}

func formatDuration(samples: Int64, rate: Int) -> String {
    let tenths = (samples * 10 + Int64(rate) / 2) / Int64(rate)
    return "\(tenths / 600):" + String(format: "%02d.%d", Int(tenths / 10 % 60), Int(tenths % 10))
}

func runInfo(_ arguments: ParsedArguments) throws -> Int32 {
    let rate = try arguments.int("--rate", default: 48_000, range: 8_000...384_000)
    for (index, path) in arguments.positionals.enumerated() {
        if index > 0 { print("") }
        print(try songSummary(loadScore(path), rate: rate))
    }
    return 0
}

/// A few lines a singer can read: title, shape, length, and each part's range.
func songSummary(_ score: Score, rate: Int) throws -> String {
    let timeMap = try TimeMap(tempos: score.tempos, sampleRate: rate)
    let samples = timeMap.sample(atTick: score.endTick)
    var lines: [String] = []
    lines.append([score.title ?? "(untitled)", score.composer].compactMap { $0 }.joined(separator: " — "))
    let meters = score.meters.map { "\($0.meter)" }.joined(separator: ", ")
    let tempos = score.tempos.map { "\($0.tempo)" }.joined(separator: ", ")
    let pickup = score.pickupTicks > 0 ? " + pickup" : ""
    lines.append("  \(measureCount(score)) measures\(pickup) in \(meters); \(score.keys[0].key); ♩ = \(tempos)")
    if !score.tags.isEmpty { lines.append("  tags: " + score.tags.joined(separator: ", ")) }
    lines.append("  length \(formatDuration(samples: samples, rate: rate)) = \(samples) samples at \(rate) Hz")
    let nameWidth = max(8, score.parts.map(\.name.count).max() ?? 0) + 2
    for part in score.parts {
        let pitches = part.notes.compactMap(\.pitch)
        let low = pitches.min { $0.midi < $1.midi }.map(\.description) ?? "-"
        let high = pitches.max { $0.midi < $1.midi }.map(\.description) ?? "-"
        let attacks = part.notes.indices.filter { part.isAttack(at: $0) }.count
        let syllables = part.notes.filter { $0.lyric != nil }.count
        lines.append("  " + part.name.padding(to: nameWidth) + part.effectiveClef.rawValue.padding(to: 11)
            + "\(low)–\(high)".padding(to: 10) + "\(attacks) notes" + (syllables > 0 ? ", \(syllables) syllables" : ""))
    }
    return lines.joined(separator: "\n")
}

func runVersion(_ arguments: ParsedArguments) throws -> Int32 {
    print("acapella 0.1.0 (acasong format 1, \(ticksPerQuarter) ticks per quarter)")
    print("libasound \(LibraryVersions.alsa), \(LibraryVersions.sndfile), libgpiod \(LibraryVersions.gpiod)")
    return 0
}
