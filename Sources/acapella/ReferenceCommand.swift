import AcapellaAnalysis
import AcapellaCLI
import AcapellaProject
import AcapellaScore
import Foundation

/// `acapella reference show|add|align|offset|remove PROJECT …`: the
/// recording a choir sings with (issue 23). `add` reads any file
/// libsndfile reads, converts it to the project's rate (libsoxr), places
/// it by `--offset` or `--align` (the song's guide tones against it), and
/// keeps an `.lrc` that came with it; nothing is written when any step fails.
func runReference(_ arguments: ParsedArguments) throws -> Int32 {
    let action = arguments.positionals[0]
    let count = arguments.positionals.count
    switch action {
    case "show", "remove", "align":
        guard count == 2 else { throw CLIError("reference \(action) needs PROJECT only") }
    case "add":
        guard count == 3 else { throw CLIError("reference add needs PROJECT and FILE") }
    case "offset":
        guard count == 3 else { throw CLIError("reference offset needs PROJECT and SECONDS") }
    default:
        throw CLIError("unknown reference action '\(action)'; use show, add, align, offset or remove")
    }
    let offset = try (action == "offset" ? arguments.positionals[2] : arguments.value("--offset")).map { text -> Double in
        guard let seconds = Double(text), seconds.isFinite, abs(seconds) <= 3_600 else { throw CLIError("the offset expects seconds (within ±3600), not '\(text)'") }
        return seconds
    }
    let align = arguments.flags.contains("--align")
    if align && offset != nil { throw CLIError("give --offset or --align, not both") }
    if action != "add" && (align || arguments.value("--offset") != nil || arguments.value("--lyrics") != nil) {
        throw CLIError("--offset, --align and --lyrics go with reference add")
    }
    let path = arguments.positionals[1]
    let project = try openProject(path, for: action == "show" ? .read : .write(owner: "acapella reference"))
    defer { project.close() }
    let rate = project.manifest.sampleRate
    do {
        switch action {
        case "show":
            guard let record = try project.reference().get() else {
                print("\(path): no reference recording (add one with 'acapella reference add \(path) FILE --align')")
                return 0
            }
            print("reference: \(record.describe(sampleRate: rate))")
            if case .failure(let error) = project.referenceLyrics() { writeError("\(path): its lyrics cannot be read: \(error.description)") }
        case "remove":
            let record = try project.removeReference()
            writeError("\(path): the reference recording \(record.source) removed")
        case "offset":
            try project.setReferenceOffset(Int64(((offset ?? 0) * Double(rate)).rounded()), found: "given", confidence: nil)
            if let record = try project.reference().get() { print("reference: \(record.describe(sampleRate: rate))") }
        case "align":
            guard let record = try project.reference().get() else { throw ProjectError(description: "\(path): has no reference recording") }
            let audio: [Float]
            do { audio = try AudioFile.readMono(project.path + "/" + record.file).samples } catch { throw ProjectError(description: error.description) }
            let found = try alignment(of: audio, in: project, named: record.source)
            try project.setReferenceOffset(found.songStartFrame, found: "aligned", confidence: found.confidence)
            if let record = try project.reference().get() { print("reference: \(record.describe(sampleRate: rate))") }
        default:
            try addReference(arguments, project: project, offset: offset, align: align)
        }
    } catch let error as ProjectError {
        throw CLIError(error.description, exitCode: 1)
    }
    return 0
}

private func addReference(_ arguments: ParsedArguments, project: Project, offset: Double?, align: Bool) throws {
    let file = arguments.positionals[2]
    let rate = project.manifest.sampleRate
    // The lyrics: named, or an .lrc of the same name beside the recording.
    var lyrics: [UInt8]?
    let named = arguments.value("--lyrics")
    let beside = (file as NSString).deletingPathExtension + ".lrc"
    if let lyricsFile = named ?? (FileManager.default.fileExists(atPath: beside) ? beside : nil) {
        guard let data = FileManager.default.contents(atPath: lyricsFile) else { throw ProjectError(description: "\(lyricsFile): cannot be read") }
        do {
            let parsed = try LRC.parse(Array(data), file: lyricsFile)
            lyrics = Array(data)
            writeError("\(lyricsFile): \(parsed.lines.count) lines of lyrics in time come with it\(parsed.skipped.isEmpty ? "" : "; \(parsed.skipped.count) lines skipped: \(parsed.skipped[0])")")
        } catch {
            // Named: the user wants them, so nothing is added. Found beside: said, and left out.
            if named != nil { throw ProjectError(description: error.description) }
            writeError("\(error.description); the recording is added without lyrics")
        }
    }
    let loaded = try ReferenceAudio.load(file, sampleRate: rate)
    if loaded.sourceRate != rate { writeError("\(file): converted from \(loaded.sourceRate) Hz to \(rate) Hz (libsoxr)") }
    var record = ReferenceRecord(source: (file as NSString).lastPathComponent, songStartFrame: Int64(((offset ?? 0) * Double(rate)).rounded()), found: "given",
                                 sourceRate: loaded.sourceRate, sourceChannels: loaded.channels, frames: Int64(loaded.samples.count), added: RecordStamp.now())
    if align {
        let found = try alignment(of: loaded.samples, in: project, named: file)
        record.songStartFrame = found.songStartFrame
        record.found = "aligned"
        record.confidence = found.confidence
    } else if offset == nil {
        writeError("\(file): placed with the song starting at its first sample (--offset SECONDS or --align place it elsewhere)")
    }
    try project.setReference(loaded.samples, record: record, lyrics: lyrics)
    if let stored = try project.reference().get() { print("reference: \(stored.describe(sampleRate: rate))") }
}

/// Aligns a recording with the project's song, saying how well; a refusal
/// is an error that says what to do instead.
private func alignment(of audio: [Float], in project: Project, named: String) throws(ProjectError) -> ReferenceAlignment {
    switch ReferenceAligner.align(reference: audio, guide: try project.guideTones(), sampleRate: project.manifest.sampleRate) {
    case .failure(let refusal): throw ProjectError(description: "\(named): not aligned: \(refusal.description)")
    case .success(let found):
        writeError(String(format: "%@: aligned: the song starts %.3f s into it; confidence %.2f (the best match %.1f× the next best)%@", named,
                          Double(found.songStartFrame) / Double(project.manifest.sampleRate), found.confidence, 1 / (1 - found.confidence),
                          found.driftSeconds >= 0.005 ? String(format: "; its tempo is %.2f %% off the song's, %.0f ms of drift across it", 100 * found.tempoDifference, 1_000 * found.driftSeconds) : ""))
        return found
    }
}
