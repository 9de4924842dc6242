import AcapellaEngine
import AcapellaMusicXML
import AcapellaProject
import AcapellaScore
import AcapellaDevices
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
import AcapellaLock
#endif

/// The file systems mounted now (`/proc/self/mountinfo`), and the USB
/// sticks among them: mounts under one of the roots removable drives are
/// mounted in (`/media`, `/run/media`) with an `acapella/` folder at the top.
public enum MountTable {
    /// Every mount point, as the kernel lists them (octal escapes undone).
    public static func mountPoints() -> [String] {
        mountPoints(in: ProcFile.read("/proc/self/mountinfo") ?? "")
    }

    /// The mount points in a `mountinfo` text, in its order.
    static func mountPoints(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count > 4 ? unescape(String(fields[4])) : nil
        }
    }

    /// `\040` → space, and the like.
    static func unescape(_ field: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.first {
            if byte == UInt8(ascii: "\\"), utf8.count >= 4, let value = UInt8(String(decoding: utf8.dropFirst().prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                utf8 = utf8.dropFirst(4)
            } else {
                bytes.append(byte)
                utf8 = utf8.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The sticks mounted now under `roots` that hold an `acapella/` folder.
    public static func sticks(under roots: [String]) -> [String] {
        mountPoints().filter { point in
            var isFolder: ObjCBool = false
            return roots.contains { point.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") }
                && FileManager.default.fileExists(atPath: point + "/acapella", isDirectory: &isFolder) && isFolder.boolValue
        }.sorted()
    }
}

/// What the box does with a USB stick that has an `acapella/` folder:
/// the songs in `acapella/songs/` join the user's library (`songs/` in the
/// data directory, where MusicXML is imported on arrival), and every
/// project with takes is written to `acapella/export/<song>/` — the mix
/// (FLAC and MP3, as last rehearsed), a practice track per part (MP3) and
/// the project bundle. Each file is written under a hidden name, flushed,
/// and only then given its name: a stick pulled out mid-copy leaves no
/// half-written file named as if complete, and nothing on the box is ever
/// changed but the songs added. At the end the stick is flushed: safe to remove.
public enum StickJob {
    /// How far it is.
    public struct Progress: Sendable, Hashable {
        public var step: Int
        public var steps: Int
        /// "Amazing Grace: mix.flac".
        public var what: String
    }

    /// What it did.
    public struct Outcome: Sendable {
        /// Songs copied into the library, and songs already there.
        public var imported: [String] = []
        public var alreadyThere = 0
        /// Files written on the stick (relative to it), and their bytes.
        public var exported: [String] = []
        public var bytes: Int64 = 0
        /// Seconds spent rendering mixes, and writing files.
        public var renderSeconds = 0.0
        public var writeSeconds = 0.0
        /// What was left alone on the stick, and why (a link, not a plain file).
        public var skipped: [String] = []
        /// Projects that could not be exported (the others went out), and why.
        public var failed: [String] = []
    }

    /// Why it stopped.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        /// The stick went away before the end.
        public var removed: Bool
    }

    /// Runs the job on the stick mounted at `stick`. `stillThere` is asked
    /// between files (the stick may be pulled out at any time); `progress`
    /// hears each step before it starts.
    public static func run(stick: String, dataDirectory: String, stillThere: () -> Bool, progress: (Progress) -> Void) throws(Failure) -> Outcome {
        var outcome = Outcome()
        // Nothing on the stick is followed: `acapella/`, every folder read
        // or written there and every song must be itself, not a symbolic
        // link (a stick may be anyone's, and a link could lead to the box's
        // own files, or out of the stick).
        func onStick(_ relative: String) throws(Failure) -> String {
            switch ConfinedPath.resolve(relative, under: stick) {
            case .success(let path): return path
            case .failure(let refusal): throw Failure(description: "the USB stick's \(refusal.description)", removed: false)
            }
        }
        let root = try onStick("acapella")
        var incoming: [String] = []
        if (try? onStick("acapella/songs")) != nil {
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: root + "/songs")) ?? []).sorted()
            where !name.hasPrefix(".") && (name.lowercased().hasSuffix(".acasong") || MusicXML.isFile(name)) {
                var status = stat()
                if (try? onStick("acapella/songs/" + name)) != nil, lstat(root + "/songs/" + name, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
                    incoming.append(name)
                } else {
                    outcome.skipped.append("songs/\(SafeText.printable(name)): a link or not a plain file; not copied")
                }
            }
        } else {
            outcome.skipped.append("songs/: a symbolic link; no song read from it")
        }
        let projects = ((try? FileManager.default.contentsOfDirectory(atPath: dataDirectory + "/projects")) ?? [])
            .filter { $0.hasSuffix(".acaproj") && !$0.hasPrefix(".") }.sorted().map { dataDirectory + "/projects/" + $0 }
            .compactMap { path -> Project? in
                guard let project = try? Project.open(path, for: .read).project else { return nil }
                if project.manifest.takes.contains(where: { $0.state.isUsable }) { return project }
                project.close()
                return nil
            }
        defer { for project in projects { project.close() } }
        // Each song in; per project the mix (FLAC, MP3, M4A), a practice track a part, the bundle; the flush.
        let steps = incoming.count + projects.reduce(0) { $0 + 4 + $1.score.parts.count } + 1
        var step = 0
        /// The stick went away (during `what`, when known): said so, whatever error it caused.
        func removed(_ what: String? = nil) -> Failure {
            Failure(description: "the USB stick was removed before the end\(what.map { " (while writing \($0))" } ?? ""); the projects on the box are untouched, "
                    + "and every file on it under its own name is complete: plug it in again to finish", removed: true)
        }
        func failure(_ text: String, _ what: String) -> Failure { stillThere() ? Failure(description: text, removed: false) : removed(what) }
        func next(_ what: String) throws(Failure) {
            guard stillThere() else { throw removed() }
            step += 1
            progress(Progress(step: step, steps: steps, what: what))
        }

        // Songs in.
        let library = SongLibrary.userFolder(dataDirectory)
        do { try Folders.make(library) } catch { throw Failure(description: error.description, removed: false) }
        for name in incoming {
            try next("song \(name)")
            let source = root + "/songs/" + name
            let stem = (name as NSString).deletingPathExtension, ext = (name as NSString).pathExtension
            // Under a name of its own: no other song's file (the same file
            // again is already there), and a song whose projects are no
            // other song's (a "Hymn (Yak)" beside Hymn's project 'Yak').
            let score = try? SongLibrary.score(of: source)
            let known = SongLibrary.all(shipped: ShippedFiles.songs, dataDirectory: dataDirectory)
            var target = library + "/" + name
            var number = 2
            while true {
                let song = (target as NSString).lastPathComponent
                if FileManager.default.fileExists(atPath: target) {
                    if FileCopy.sameContents(source, target) { break }
                } else if score.map({ SongProjects.isFreeName((song as NSString).deletingPathExtension + ".acasong", for: $0, library: known, dataDirectory: dataDirectory) }) ?? true {
                    break
                }
                target = library + "/\(stem)-\(number).\(ext)"
                number += 1
            }
            if FileManager.default.fileExists(atPath: target) {
                outcome.alreadyThere += 1
                continue
            }
            do { try FileCopy.copy(source, to: target) } catch {
                throw failure("\(source): \(error.description)", name)
            }
            outcome.imported.append((target as NSString).lastPathComponent)
        }

        // Results out. The mixes' temporary files stay on the box's disk.
        let scratch = dataDirectory + "/exports"
        if !projects.isEmpty {
            do { try Folders.make(scratch) } catch { throw Failure(description: error.description, removed: false) }
            // The stick's export folder itself (a link out of the stick, a file): nothing can go out.
            let made = try onStick("acapella/export")
            do { try Folders.make(made) } catch { throw failure(error.description, "export") }
            _ = try onStick("acapella/export")
        }
        func export(_ project: Project) throws(Failure) {
            let stem = ((project.path as NSString).lastPathComponent as NSString).deletingPathExtension
            let title = project.score.title ?? stem
            // Made folder by folder, each checked to be a real folder on the stick.
            for relative in ["acapella/export", "acapella/export/" + stem] {
                let made = try onStick(relative)
                do { try Folders.make(made) } catch { throw failure(error.description, "export/\(stem)") }
                _ = try onStick(relative)
            }
            let folder = try onStick("acapella/export/" + stem)
            // The new folders' entries flushed too (on FAT a file flushed in a folder that was not is lost with it).
            AtomicFile.syncDirectory(of: folder)
            AtomicFile.syncDirectory(of: root + "/export")
            AtomicFile.syncDirectory(of: root)
            func place(_ name: String, _ write: (String) throws -> Void) throws(Failure) {
                let hidden = folder + "/.partial-" + name
                let started = DispatchTime.now().uptimeNanoseconds
                let rendered = outcome.renderSeconds
                do {
                    try write(hidden)
                    try commit(hidden, as: folder + "/" + name)
                } catch {
                    unlink(hidden)
                    throw failure("\(folder)/\(name): \(error)", "export/\(stem)/\(name)")
                }
                // The writing alone: a mix written as it renders counts as rendering.
                outcome.writeSeconds += Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 - (outcome.renderSeconds - rendered)
                outcome.exported.append("acapella/export/\(stem)/\(name)")
                outcome.bytes += Int64((try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? Int) ?? 0)
            }
            try next("\(title): the mix")
            // The one mix path (as `acapella mix` and the page's download): as last rehearsed, streamed.
            try place("mix.flac") { try render(project, ProjectMixRequest(), to: $0, scratch: scratch, outcome: &outcome) }
            try next("\(title): mix.mp3")
            try place("mix.mp3") {
                try AudioFile.transcode(folder + "/mix.flac", to: $0, tags: .export(of: project.score, album: stem, holding: "mix"))
            }
            // AAC in MP4, what a phone's music app keeps: mixed as the page's download is (the
            // loudness and true peak measured as it decodes), byte for byte the same file.
            try next("\(title): mix.m4a")
            try place("mix.m4a") { try render(project, ProjectMixRequest(), to: $0, scratch: scratch, outcome: &outcome) }
            for part in project.score.parts.map(\.name) {
                try next("\(title): practice \(part)")
                try place("practice-\(Project.slug(part)).mp3") {
                    try render(project, ProjectMixRequest(purpose: .practice(part: part)), to: $0, scratch: scratch, outcome: &outcome)
                }
            }
            try next("\(title): the project bundle")
            try place("\(stem).acaproj.zip") { try ProjectBundle.write(project, to: $0) }
        }
        // One project that cannot be exported (a mix that fails) is said, and the others still go out.
        for (number, project) in projects.enumerated() {
            do { try export(project) } catch where !error.removed {
                // A stick that is full or read-only takes nothing more: the job fails there.
                var status = statvfs()
                let readOnly = statvfs(stick, &status) == 0 && status.f_flag & UInt(ST_RDONLY) != 0
                if readOnly || (Project.freeBytes(at: stick) ?? Int64.max) < 1 << 20 {
                    throw Failure(description: "\(error.description); the stick is full or read-only: nothing more can go out", removed: false)
                }
                outcome.failed.append(error.description + (number < projects.count - 1 ? "; the other projects went on" : ""))
            }
        }

        // Everything on the stick, flushed.
        try next("flushing the stick")
        // Every file was flushed as it was placed; this writes out whatever else is pending (folders, the FAT).
        sync()
        guard stillThere() else { throw removed("the last of it") }
        return outcome
    }

    /// A project mixed as last rehearsed (its session's levels, tempo and
    /// key), a part brought forward for a practice track: `ProjectExport`,
    /// its temporary files in `scratch` on the box's disk, not the stick.
    static func render(_ project: Project, _ request: ProjectMixRequest, to path: String, scratch: String, outcome: inout Outcome) throws(Failure) {
        let started = DispatchTime.now().uptimeNanoseconds
        defer { outcome.renderSeconds += Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        do { _ = try ProjectExport.mix(project, request, to: path, scratch: scratch) } catch {
            throw Failure(description: "\(project.path): \(error.description)", removed: false)
        }
    }

    /// `hidden` flushed to the disk and renamed to `name` (replacing an
    /// older export of the same name), the folder flushed.
    static func commit(_ hidden: String, as name: String) throws(FileError) {
        try AtomicFile.flush(hidden)
        try AtomicFile.moveIntoPlace(hidden, name)
    }
}

/// USB sticks while the box runs: the mount table looked at once a second
/// from the control loop; a stick that appears (with an `acapella/`
/// folder) gets a `StickJob` on a thread of its own, niced below the
/// control loop; what it says comes back as lines for the readout.
final class StickMonitor: Sendable {
    private struct State {
        /// Sticks seen (done or under way); a stick that goes away is forgotten.
        var known: Set<String> = []
        var busy: String?
        var news: [String] = []
        /// When the mount table was last read (nil: never), and whether a look is under way.
        var lastLook: Int64?
        var looking = false
    }

    private let state = VisibleLock(State())
    let roots: [String]
    let dataDirectory: String
    let wake: WakeDescriptor

    init(roots: [String], dataDirectory: String, wake: WakeDescriptor) {
        self.roots = roots
        self.dataDirectory = dataDirectory
        self.wake = wake
    }

    /// What to say now; looks for sticks when a second has passed.
    func news(now nanoseconds: Int64) -> [String] {
        let look = state.withLock { state -> Bool in
            if state.looking { return false }
            if let last = state.lastLook, nanoseconds - last < 1_000_000_000 { return false }
            state.lastLook = nanoseconds
            state.looking = true
            return true
        }
        // The look itself is off the control loop: a stat of a stick that
        // hangs must not hold up the box.
        if look { looks.async { [self] in lookForSticks() } }
        return state.withLock { state in
            defer { state.news = [] }
            return state.news
        }
    }

    private let looks = DispatchQueue(label: "acapella-usb-look", qos: .utility)

    /// Reads the mount table; starts a job for a stick that appeared.
    private func lookForSticks() {
        let mounted = Set(MountTable.sticks(under: roots))
        let start = state.withLock { state -> String? in
            state.looking = false
            state.known.formIntersection(mounted.union(state.busy.map { [$0] } ?? []))
            guard state.busy == nil, let stick = mounted.subtracting(state.known).sorted().first else { return nil }
            state.known.insert(stick)
            state.busy = stick
            state.news.append("USB stick \(stick): songs in, results out; leave it in until it says safe to remove")
            return stick
        }
        if let stick = start {
            wake.wake()
            run(stick)
        }
    }

    private func run(_ stick: String) {
        let thread = Thread { [self] in
            BackgroundWork.lowerThisThread()
            let said: String
            do {
                let outcome = try StickJob.run(stick: stick, dataDirectory: dataDirectory, stillThere: { MountTable.mountPoints().contains(stick) }) { step in
                    state.withLock { $0.news.append("USB \(step.step)/\(step.steps): \(step.what)") }
                    wake.wake()
                }
                said = "USB: \(outcome.imported.count) song\(outcome.imported.count == 1 ? "" : "s") in, \(outcome.exported.count) files out — safe to remove"
                    + (outcome.failed + outcome.skipped).map { "; \($0)" }.joined()
            } catch {
                said = "USB: \(error)"
            }
            state.withLock {
                $0.news.append(said)
                $0.busy = nil
            }
            wake.wake()
        }
        thread.name = "acapella-usb"
        thread.start()
    }
}
