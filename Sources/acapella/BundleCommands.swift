import AcapellaBox
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

/// `acapella merge INTO.acaproj FROM…`: the takes of other projects or
/// bundles of the same song brought into one; nothing overwritten.
func runMerge(_ arguments: ParsedArguments) throws -> Int32 {
    let into = arguments.positionals[0]
    let sources = Array(arguments.positionals.dropFirst())
    let project = try openProject(into, for: .write(owner: "acapella merge"))
    defer { project.close() }
    // Bundles are unpacked beside the project (same disk), and removed after.
    let scratch = ((into as NSString).deletingLastPathComponent.isEmpty ? "." : (into as NSString).deletingLastPathComponent) + "/.merge-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    var failed = false
    for source in sources {
        var path = source.hasSuffix("/") ? String(source.dropLast()) : source
        if path.lowercased().hasSuffix(".zip") {
            let folder = scratch + "/\(sources.firstIndex(of: source) ?? 0)"
            do { try Folders.make(folder) } catch {
                writeError("acapella merge: error: \(error.description); nothing of \(source) was merged")
                failed = true
                continue
            }
            do {
                let unpacked = try ProjectBundle.unpack(path, into: folder)
                for line in unpacked.report { writeError("\(source): \(line)") }
                path = unpacked.path
            } catch {
                writeError("acapella merge: error: \(error.description); nothing of it was merged")
                failed = true
                continue
            }
        }
        let other: Project
        do { other = try openProject(path, for: .read) } catch let error as CLIError {
            writeError("acapella merge: error: \(error.description); nothing of it was merged")
            failed = true
            continue
        }
        defer { other.close() }
        do {
            let outcome = try project.merge(other)
            for line in outcome.leftBehind { writeError("\(source): \(line); left there") }
            print("merged \(source): \(outcome.added.count) take\(outcome.added.count == 1 ? "" : "s") added, \(outcome.alreadyHere) already here\(outcome.leftBehind.isEmpty ? "" : ", \(outcome.leftBehind.count) left there")")
            failed = failed || !outcome.leftBehind.isEmpty
        } catch {
            writeError("acapella merge: error: \(error.description); nothing of it was merged")
            failed = true
        }
    }
    printTakesBySinger(project)
    return failed ? 1 : 0
}

/// Each part's takes grouped by who sang them on which box, and the ones playing.
func printTakesBySinger(_ project: Project) {
    for part in project.score.parts.map(\.name) {
        let takes = project.manifest.takes.filter { $0.part == part }
        guard !takes.isEmpty else { print("\(part): no takes"); continue }
        var groups: [(key: String, ids: [Int])] = []
        for take in takes {
            let key = [take.singer ?? "someone", take.box.map { "box \($0)" } ?? "this box"].joined(separator: ", ")
            if let index = groups.firstIndex(where: { $0.key == key }) { groups[index].ids.append(take.id) } else { groups.append((key, [take.id])) }
        }
        let playing = takes.filter { $0.active && $0.state.isUsable }.map { "take \($0.id)" }
        print("\(part): " + groups.map { "\($0.key): takes \($0.ids.map(String.init).joined(separator: " "))" }.joined(separator: "; ")
              + "; playing: " + (playing.isEmpty ? "its tones" : playing.joined(separator: ", ")))
    }
}

/// `acapella usb STICK [--data DIR]`: what the box does when a USB stick
/// with an `acapella/` folder is mounted, done now: its songs into the
/// library, every project with takes out to `acapella/export/<song>/`.
func runUSB(_ arguments: ParsedArguments) throws -> Int32 {
    let given = arguments.positionals[0]
    let stick = given.count > 1 && given.hasSuffix("/") ? String(given.dropLast()) : given
    let data = arguments.value("--data") ?? CalibrationStore.dataDirectory
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: stick + "/acapella", isDirectory: &isFolder), isFolder.boolValue else {
        throw CLIError("\(stick): no acapella/ folder on it; make one (with songs/ inside for songs to bring in)", exitCode: 1)
    }
    // A mount point is watched in the mount table (pulled out: gone); a plain folder by its existence.
    let mounted = MountTable.mountPoints().contains(stick)
    let stillThere = { mounted ? MountTable.mountPoints().contains(stick) : FileManager.default.fileExists(atPath: stick + "/acapella") }
    let outcome: StickJob.Outcome
    do {
        outcome = try StickJob.run(stick: stick, dataDirectory: data, stillThere: stillThere) { step in
            // Each step as it starts, also into a pipe or file (a progress line is no use buffered).
            FileHandle.standardOutput.write(Data("usb \(step.step)/\(step.steps): \(step.what)\n".utf8))
        }
    } catch {
        throw CLIError(error.description, exitCode: 1)
    }
    // What arrived is imported at once, as the running box would.
    for arrival in SongLibrary.importArrivals(in: SongLibrary.userFolder(data)) { writeError(arrival.message) }
    for skipped in outcome.skipped { writeError("\(stick)/acapella/\(skipped)") }
    for failed in outcome.failed { writeError("usb: \(failed)") }
    print("usb: \(outcome.imported.count) song\(outcome.imported.count == 1 ? "" : "s") in (\(outcome.alreadyThere) already there), \(outcome.exported.count) files out "
          + String(format: "(%.1f MB; rendering %.1f s, writing %.1f s); safe to remove", Double(outcome.bytes) / 1_048_576, outcome.renderSeconds, outcome.writeSeconds))
    // A project that could not go out is a failure, though the others did.
    return outcome.failed.isEmpty ? 0 : 1
}
