import AcapellaBox
import AcapellaCLI
import AcapellaProject
import Foundation

/// `acapella blend PROJECT [--json] [--svg OUT.svg]`: how the parts' playing
/// takes sounded together.
func runBlend(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    let project = try openProject(path, for: .read)
    defer { project.close() }
    let blend: Blend
    do { blend = try Blend.analyze(project) } catch { throw CLIError(error.description, exitCode: 1) }
    if let plot = arguments.value("--svg") {
        do { try Data(blend.svg().utf8).write(to: URL(fileURLWithPath: plot), options: .atomic) } catch {
            throw CLIError("\(plot): cannot write the plot: \(error.localizedDescription)", exitCode: 1)
        }
        writeError("wrote \(plot): each part's pitch at every chord against the written notes, the ensemble's in black")
    }
    if arguments.flags.contains("--for-box") {
        print(String(decoding: try JSONSerialization.data(withJSONObject: blend.json, options: [.sortedKeys]), as: UTF8.self))
        return 0
    }
    if arguments.flags.contains("--json") {
        print(String(decoding: try JSONSerialization.data(withJSONObject: blend.json, options: [.sortedKeys, .prettyPrinted]), as: UTF8.self))
        return 0
    }
    for line in blend.lines { print(line) }
    return 0
}
