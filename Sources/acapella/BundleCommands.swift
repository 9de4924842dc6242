import AcapellaCLI
import AcapellaProject
import Foundation

/// `acapella export PROJECT -o NAME.acaproj.zip`: the project as one file
/// (manifest, song, every finished take with its sidecar), read while the
/// box may be recording another take.
func runExport(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    guard let output = arguments.value("--output") else { throw CLIError("export needs -o NAME.acaproj.zip") }
    guard output.lowercased().hasSuffix(".zip") else { throw CLIError("\(output): a project bundle is a .zip (NAME.acaproj.zip)") }
    let project = try openProject(path, for: .read)
    defer { project.close() }
    do { try ProjectBundle.write(project, to: output) } catch { throw CLIError(error.description, exitCode: 1) }
    let takes = project.manifest.takes.filter { $0.state != .recording }.count
    print("wrote \(output): \(project.score.title ?? (path as NSString).lastPathComponent), \(takes) take\(takes == 1 ? "" : "s")")
    return 0
}

/// `acapella import-project FILE [--into DIR]`: a bundle unpacked as the
/// project it holds, checked as any project is, put in place only whole.
func runImportProject(_ arguments: ParsedArguments) throws -> Int32 {
    let file = arguments.positionals[0]
    let directory = arguments.value("--into") ?? FileManager.default.currentDirectoryPath
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
        throw CLIError("\(directory): no such folder", exitCode: 1)
    }
    let unpacked: (path: String, report: [String])
    do { unpacked = try ProjectBundle.unpack(file, into: directory) } catch { throw CLIError(error.description, exitCode: 1) }
    for line in unpacked.report { writeError("\(unpacked.path): \(line)") }
    let project = try openProject(unpacked.path, for: .read)
    defer { project.close() }
    let takes = project.manifest.takes.count
    print("imported \(unpacked.path): \(project.score.title ?? "untitled"), \(takes) take\(takes == 1 ? "" : "s")")
    return 0
}
