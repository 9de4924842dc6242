import AcapellaAnalysis
import AcapellaBox
import AcapellaCLI
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation

/// `acapella analyze PROJECT [--part NAME] [--take ID] [--json] [--svg OUT.svg]`.
func runAnalyze(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    // Reading only: works while the box records another take.
    let project = try openProject(path, for: .read)
    defer { project.close() }
    let take = try chooseTake(in: project, at: path, arguments, for: "analyze")
    let report: TakeReport
    let bleed: Double
    do { (report, bleed) = try TakeReport.analyze(take, in: project) } catch { throw CLIError("\(path): \(error.description)", exitCode: 1) }
    if let plot = arguments.value("--svg") {
        do {
            try Data(report.svg().utf8).write(to: URL(fileURLWithPath: plot), options: .atomic)
        } catch {
            throw CLIError("\(plot): cannot write the plot: \(error.localizedDescription)", exitCode: 1)
        }
        writeError("wrote \(plot): the written notes, the sung pitch over them")
    }
    if arguments.flags.contains("--for-box") {
        print(String(decoding: try JSONSerialization.data(withJSONObject: report.boxJSON(takeID: take.id), options: [.sortedKeys]), as: UTF8.self))
        return 0
    }
    if arguments.flags.contains("--json") {
        var object = report.json
        object["take"] = take.id
        object["guideRemoved"] = (bleed * 1_000).rounded() / 1_000
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
        print(String(decoding: data, as: UTF8.self))
        return 0
    }
    print("take \(take.id) (\(take.part), \(take.state.rawValue)\(take.range.map { _ in ", a punch-in" } ?? ""))"
          + (bleed > 0 ? String(format: "; the guide heard in it (%.2f of what was played) taken out", bleed) : ""))
    for line in report.lines { print(line) }
    return 0
}

/// The take `--take ID` names, else `--part NAME`'s (the one that plays when
/// `playing`, else its newest), else the project's newest: one a reader can
/// use, or a one-line error saying what there is.
func chooseTake(in project: Project, at path: String, _ arguments: ParsedArguments, for verb: String, playing: Bool = false) throws -> TakeRecord {
    let usable = project.manifest.takes.filter { $0.state.isUsable && $0.state != .discarded && project.conditions[$0.id] == nil }
    if let text = arguments.value("--take") {
        guard let id = Int(text), let found = project.manifest.takes.first(where: { $0.id == id }) else {
            throw CLIError("\(path): no take '\(text)'; its takes are: \(project.manifest.takes.map { String($0.id) }.joined(separator: ", "))", exitCode: 1)
        }
        guard found.state != .recording else { throw CLIError("\(path): take \(found.id) is still being recorded", exitCode: 1) }
        return found
    }
    if let part = arguments.value("--part") {
        guard let name = project.score.parts.first(where: { $0.name.lowercased() == part.lowercased() })?.name else {
            throw CLIError("\(path): no part '\(part)'; the parts are: \(project.score.parts.map(\.name).joined(separator: ", "))", exitCode: 1)
        }
        let chosen = (playing ? usable.last(where: { $0.part == name && $0.active }) : nil) ?? usable.last(where: { $0.part == name })
        guard let chosen else { throw CLIError("\(path): \(name) has no take to \(verb)", exitCode: 1) }
        return chosen
    }
    guard let newest = usable.last else { throw CLIError("\(path): no take to \(verb) yet (record one first)", exitCode: 1) }
    return newest
}
