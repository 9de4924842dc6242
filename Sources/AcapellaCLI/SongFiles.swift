public import AcapellaMusicXML
import AcapellaProject
public import AcapellaScore
import Foundation

/// One line to stderr.
public func writeError(_ line: String) {
    // Paths and titles from outside may carry an escape: shown, never obeyed.
    FileHandle.standardError.write(Data((SafeText.printable(line) + "\n").utf8))
}

/// Reads a file's bytes, with one-line errors that name it (`SongFileReader`).
public func readSongBytes(_ path: String) throws -> [UInt8] {
    do { return try SongFileReader.read(path) } catch { throw CLIError(error.description, exitCode: 1) }
}

/// Imports a MusicXML file, printing its errors; the report is returned.
public func importMusicXML(_ path: String, options: ImportOptions = ImportOptions()) throws -> ImportResult {
    do {
        return try MusicXML.importScore(bytes: readSongBytes(path), fileName: path, options: options)
    } catch let error as ImportError {
        writeError(error.description)
        throw CLIError(error.description, exitCode: 1, alreadyReported: true)
    }
}

/// The options that say how MusicXML becomes a song, for every command
/// that imports.
public let importOptionSpecs = [
    OptionSpec(names: ["--split"], valueName: nil, help: "one part per voice in every part, a piano too"),
    OptionSpec(names: ["--no-split"], valueName: nil, help: "one part per MusicXML part: its top staff, top notes"),
    OptionSpec(names: ["--unfold"], valueName: nil, help: "write repeats, endings and jumps out in singing order (the default, but engrave prints them as written)"),
    OptionSpec(names: ["--no-unfold"], valueName: nil, help: "keep repeats as written, a single pass, every verse"),
]

/// What `importOptionSpecs` asked for.
public func importOptions(_ arguments: ParsedArguments, partNames: [String]? = nil) throws -> ImportOptions {
    for (yes, no) in [("--split", "--no-split"), ("--unfold", "--no-unfold")] where arguments.flags.contains(yes) && arguments.flags.contains(no) {
        throw CLIError("\(yes) and \(no) say opposite things; give one")
    }
    let split: SplitMode = arguments.flags.contains("--split") ? .always : arguments.flags.contains("--no-split") ? .never : .auto
    let unfold: Bool? = arguments.flags.contains("--unfold") ? true : arguments.flags.contains("--no-unfold") ? false : nil
    return ImportOptions(partNames: partNames, split: split, unfold: unfold)
}

/// Reads a song: `.acasong` text, or MusicXML imported in memory.
public func loadScore(_ path: String, options: ImportOptions = ImportOptions()) throws -> Score {
    if MusicXML.isFile(path) { return try importMusicXML(path, options: options).score }
    do {
        return try Acasong.parse(bytes: readSongBytes(path), file: path)
    } catch let errors as ScoreErrors {
        for error in errors.errors { writeError(error.description) }
        throw CLIError("\(path): \(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s")", exitCode: 1, alreadyReported: true)
    }
}

