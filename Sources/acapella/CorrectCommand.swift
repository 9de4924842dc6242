import AcapellaBox
import AcapellaCLI
import AcapellaProject
import Foundation

/// `acapella correct PROJECT [--part NAME] [--take ID] [--notes all|flagged|m.7-9] [--strength 0..1]`.
func runCorrect(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    let selection: TakeCorrection.Selection
    let words = arguments.value("--notes") ?? "flagged"
    guard let chosen = TakeCorrection.Selection(words) else {
        throw CLIError("--notes '\(words)': all, flagged (15 cents or more off) or m.FIRST-LAST (measures, e.g. m.7-9)", exitCode: 2)
    }
    selection = chosen
    let strengthText = arguments.value("--strength") ?? "1"
    guard let strength = Double(strengthText), strength.isFinite else {
        throw CLIError("--strength '\(strengthText)': a number above 0, up to 1 (all the way to the written pitch)", exitCode: 2)
    }
    if let problem = TakeCorrection.strengthProblem(strength) { throw CLIError(problem, exitCode: 2) }
    if let file = arguments.value("--for-box") {
        // A new file, never over one (the box names a fresh one each time).
        if FileManager.default.fileExists(atPath: file) { throw CLIError("\(file) already exists: --for-box writes a new file, never over one", exitCode: 1) }
        // The box's way: the project only read (the box is its writer), the
        // corrected audio to `file`, the notes moved one a line; the box keeps it as a take.
        let project = try openProject(path, for: .read)
        defer { project.close() }
        let take = try chooseTake(in: project, at: path, arguments, for: "correct", playing: true)
        do {
            let (samples, moved) = try TakeCorrection.corrected(take, in: project, selection: selection, strength: strength)
            let writer = try TakeFileWriter(path: file, sampleRate: project.manifest.sampleRate)
            try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, count: $0.count) }
            try writer.finish()
            for note in moved { print(note.description) }
        } catch let error as ProjectError {
            throw CLIError("\(path): \(error.description)", exitCode: 1)
        } catch {
            throw CLIError("\(file): \(error)", exitCode: 1)
        }
        return 0
    }
    let project = try openProject(path, for: .write(owner: "acapella correct"))
    defer { project.close() }
    // The part's take that plays, else its newest.
    let take = try chooseTake(in: project, at: path, arguments, for: "correct", playing: true)
    let outcome: TakeCorrection.Outcome
    do { outcome = try TakeCorrection.correct(take, in: project, selection: selection, strength: strength) } catch {
        throw CLIError("\(path): \(error.description)", exitCode: 1)
    }
    print("take \(outcome.take.id) (\(take.part)): take \(take.id) with \(outcome.moved.count) note\(outcome.moved.count == 1 ? "" : "s") put in tune"
          + (strength < 1 ? String(format: " (%.0f %% of the way)", strength * 100) : "") + "; it plays now")
    for note in outcome.moved { print("  " + note.description) }
    writeError("take \(take.id) is kept as it was sung: 'acapella takes \(path) activate \(take.id)' plays it again")
    return 0
}
