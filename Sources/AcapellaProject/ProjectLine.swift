public import AcapellaScore
import Foundation

extension Project {
    /// Writes a line played on the keyboard into the project's song as a
    /// new part ("Keyboard", "Keyboard 2"…): quantized (`KeyboardLine`),
    /// printed canonical, read back and validated, then `score.acasong`
    /// replaced atomically, the report kept beside it as `NAME.line.txt`.
    /// The other parts' takes still fit (their fingerprints do not change:
    /// the line never lengthens the song). A writer's job; the project's
    /// `score` is the old one until it is opened again.
    public func addLine(_ played: [KeyboardLine.Played], grid: KeyboardLine.Grid) throws(ProjectError) -> KeyboardLine.Written {
        try requireWriter()
        var name = "Keyboard"
        var number = 1
        while score.parts.contains(where: { $0.name.lowercased() == name.lowercased() }) {
            number += 1
            name = "Keyboard \(number)"
        }
        let result: (score: Score, report: [String])
        do { result = try KeyboardLine.written(played, grid: grid, name: name, into: score) } catch { throw ProjectError(description: error.description) }
        let text = Acasong.serialize(result.score)
        // Canonical and valid, or nothing is written.
        let reread: Score
        do { reread = try Acasong.parse(text) } catch { throw ProjectError(description: "the line's song does not read back: \(error.description); nothing changed") }
        guard reread.parts.count == score.parts.count + 1, reread.endTick == score.endTick, Acasong.serialize(reread) == text else {
            throw ProjectError(description: "the line's song does not read back the same; nothing changed")
        }
        for part in score.parts where reread.fingerprint(ofPart: part.name) != score.fingerprint(ofPart: part.name) {
            throw ProjectError(description: "writing the line would change \(part.name)'s timing; nothing changed")
        }
        do {
            try AtomicFile.write(Array(text.utf8), to: path + "/score.acasong")
            try AtomicFile.write(Array((result.report.joined(separator: "\n") + "\n").utf8), to: path + "/" + Project.slug(name) + ".line.txt")
        } catch {
            throw ProjectError(description: error.description)
        }
        return KeyboardLine.Written(part: name, report: result.report)
    }
}
