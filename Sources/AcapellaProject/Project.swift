public import AcapellaEngine
public import AcapellaScore
import AcapellaJSON
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A project problem, said in one line with the path.
public struct ProjectError: Error, CustomStringConvertible, Equatable {
    /// What is wrong.
    public var description: String

    /// An error saying `description`.
    public init(description: String) {
        self.description = description
    }
}

/// A project package `Name.acaproj/`: `manifest.json`, `score.acasong`
/// and `takes/` (each take a WAV with a JSON sidecar repeating its record).
///
/// **One writer, any number of readers.** A writer (`record`, the box,
/// `takes activate`…) holds the package's `OwnerLock` from open to
/// `close`; a second writer is refused at once, naming the first. Readers
/// (`takes` list, `mix`) take no lock, read the manifest once (it is only
/// ever replaced whole) and never change anything: a take another process
/// is recording is listed as such, never "repaired".
///
/// **Opening never loses anything.** A missing or damaged manifest is
/// rebuilt from the takes' sidecars and files (the damaged one kept
/// aside); every field is checked, and a take that cannot play (an
/// impossible field, missing or foreign audio, a changed song) is flagged
/// with the reason and left out, never deleted. A take left `recording` by
/// a crash is repaired in place by the next writer — only a writer, whose
/// lock proves the recorder is gone.
public final class Project {
    /// How a project is opened.
    public enum Access: Hashable, Sendable {
        /// Look only: no lock, no repair, nothing written.
        case read
        /// Change it: the lock for `owner` ("acapella record"), held until `close`.
        case write(owner: String)
    }

    /// The package directory.
    public let path: String
    /// The song.
    public let score: Score
    /// The manifest, as last saved (as read, for a reader). Only the
    /// project's owner thread reads or changes it (`ProjectOwnership`).
    public private(set) var manifest: Manifest {
        get { checkOwner(); return manifestStorage }
        _modify { checkOwner(); yield &manifestStorage }
    }
    private var manifestStorage: Manifest
    /// Takes that cannot play now, by id, and why.
    public private(set) var conditions: [Int: TakeCondition] {
        get { checkOwner(); return conditionsStorage }
        _modify { checkOwner(); yield &conditionsStorage }
    }
    private var conditionsStorage: [Int: TakeCondition] = [:]
    /// The thread the project belongs to: the one that opened it.
    var owner = OwnerThread()
    private var lock: OwnerLock?
    /// The records as last written (manifest and sidecars): `store` writes
    /// the sidecar of every record that differs from these.
    private var written: [Int: TakeRecord] = [:]
    /// The box and singer new takes are recorded by (the box's id in their
    /// file names); nil box: names without one.
    public var origin = TakeOrigin()
    /// Released to make room for the manifest when the disk fills.
    static let reserveName = ".reserve"
    static let reserveBytes = 512 << 10

    /// Whether this process may change the project (it holds the lock).
    public var isWritable: Bool { lock != nil }

    init(path: String, score: Score, manifest: Manifest, lock: OwnerLock?) {
        self.path = path
        self.score = score
        manifestStorage = manifest
        self.lock = lock
        rememberWritten()
    }

    private func rememberWritten() {
        written = Dictionary(manifest.takes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// What a synchronising program (Syncthing) should leave alone: the
    /// lock, the reserve, temporary files. Everything else is meant to travel.
    static let syncIgnore = "// Acapella box: files that belong to this computer only\n.lock\n.reserve\n.*.tmp\n.unpack-*\n"

    /// Gives the project back to other writers (also when the value goes).
    public func close() {
        lock?.release()
        lock = nil
    }

    // MARK: Opening

    /// The longest a project's folder name may be, in bytes (a file name
    /// is 255: room for a temporary's suffix).
    public static let longestName = 240

    /// Why `name` cannot name a project, if it cannot: a line break, an
    /// escape or a direction override in it (it would print as something
    /// else, or rewrite a terminal), or longer than a file name may be.
    public static func nameProblem(_ name: String) -> String? {
        if name.unicodeScalars.contains(where: SafeText.isControl) { return "a project's name may not contain a line break or another control character" }
        if name.utf8.count > longestName { return "a project's name is \(longestName) bytes at most" }
        return nil
    }

    /// The file naming the song a project was made from (its library file's name).
    public static let songMarkFile = "song.txt"

    /// A song file's stem as a project name: control characters become '-'.
    public static func name(forSong stem: String) -> String {
        String(String.UnicodeScalarView(stem.unicodeScalars.map { SafeText.isControl($0) ? "-" : $0 }.prefix(200)))
    }

    /// Creates `path` (which must not exist) holding `songText`; the
    /// creator holds it for writing as `owner`.
    public static func create(at path: String, songText: String, sampleRate: Int = 48_000, owner: String = "acapella") throws(ProjectError) -> Project {
        let name = (path as NSString).lastPathComponent
        if let problem = nameProblem(name) { throw ProjectError(description: "\(SafeText.printable(path)): \(problem)") }
        let score: Score
        do { score = try Acasong.parse(songText) } catch {
            throw ProjectError(description: "\(path): the song is not valid: \(error.description)")
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && !FileManager.default.fileExists(atPath: parent) {
            throw ProjectError(description: "\(path): the folder \(parent) does not exist")
        }
        // mkdir, not "create with intermediates": of two creators, one wins.
        guard mkdir(path, 0o755) == 0 else {
            if errno == EEXIST { throw ProjectError(description: "\(path): already exists") }
            throw ProjectError(description: "\(path): cannot create the project: \(String(cString: strerror(errno)))")
        }
        do {
            return try fill(path, score: score, songText: songText, sampleRate: sampleRate, owner: owner)
        } catch {
            // Made here a moment ago and nothing recorded in it: a half-made project is not left behind.
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
    }

    /// The new, empty folder `path` made a project.
    private static func fill(_ path: String, score: Score, songText: String, sampleRate: Int, owner: String) throws(ProjectError) -> Project {
        guard mkdir(path + "/takes", 0o755) == 0 else {
            throw ProjectError(description: "\(path)/takes: cannot create: \(String(cString: strerror(errno)))")
        }
        let lock = try OwnerLock.acquire(path, owner: owner)
        let project = Project(path: path, score: score, manifest: Manifest(sampleRate: sampleRate), lock: lock)
        do { try AtomicFile.write(Array(songText.utf8), to: path + "/score.acasong") } catch { throw ProjectError(description: error.description) }
        try project.save()
        try? AtomicFile.write(Array(syncIgnore.utf8), to: path + "/.stignore")
        project.keepReserve()
        return project
    }

    /// Opens a project. A writer repairs what a crash or damage left and
    /// saves; a reader only looks. `report` lists what was found and done
    /// (empty when all was well). `origin`: who records here, this box's
    /// id (`BoxIdentity`) and singer, the project's `origin` from then on —
    /// a take another box of a synchronised project is recording is left
    /// to that box (no box: every take is this box's to repair).
    public static func open(_ path: String, for access: Access, origin: TakeOrigin = TakeOrigin()) throws(ProjectError) -> (project: Project, report: [String]) {
        let box = origin.box
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ProjectError(description: "\(path): no such project")
        }
        var lock: OwnerLock?
        if case .write(let owner) = access { lock = try OwnerLock.acquire(path, owner: owner) }
        let songPath = path + "/score.acasong"
        let score: Score
        do {
            guard let data = FileManager.default.contents(atPath: songPath) else {
                throw ProjectError(description: "\(songPath): cannot read the song (\(FileManager.default.fileExists(atPath: songPath) ? "permission denied" : "missing"))")
            }
            score = try Acasong.parse(bytes: [UInt8](data), file: songPath)
        } catch let error as ScoreErrors {
            throw ProjectError(description: error.errors.first.map { "\($0)" + (error.errors.count > 1 ? " (and \(error.errors.count - 1) more)" : "") } ?? "\(songPath): invalid")
        } catch let error as ProjectError {
            throw error
        } catch {
            throw ProjectError(description: "\(songPath): cannot read the song")
        }
        var report: [String] = []
        let manifestPath = path + "/manifest.json"
        var changed = false
        var manifest: Manifest
        switch readManifest(manifestPath) {
        case .success(let read):
            manifest = read
        case .failure(let problem):
            report.append("manifest.json: \(problem.description); rebuilt from the take files")
            if lock != nil && FileManager.default.fileExists(atPath: manifestPath) {
                let aside = manifestPath + ".damaged-\(Int(Date().timeIntervalSince1970))"
                if rename(manifestPath, aside) == 0 { report.append("the damaged manifest is kept as \((aside as NSString).lastPathComponent)") }
            }
            manifest = Manifest(sampleRate: 48_000)
            changed = true
        }
        let project = Project(path: path, score: score, manifest: manifest, lock: lock)
        project.origin = origin
        let writer = project.holder(access)
        changed = project.followNewerSidecars(&report) || changed
        if writer == nil {  // no live writer: files the manifest does not know are found
            changed = project.rediscoverTakes(&report) || changed
        }
        changed = project.checkRecords(&report) || changed
        var repaired: Set<Int> = []
        changed = project.settleInterruptedTakes(writer: writer, box: box, repaired: &repaired, &report) || changed
        changed = project.checkAudio(box: box, &report) || changed
        changed = project.settleActiveTakes(repaired: repaired) || changed
        if project.isWritable { project.checkSidecars(&report) }
        if project.isWritable {
            project.removeStaleTemporaries()
            // Projects from before it was written get one too (synchronised folders need it).
            if !FileManager.default.fileExists(atPath: path + "/.stignore") { try? AtomicFile.write(Array(syncIgnore.utf8), to: path + "/.stignore") }
            // A project that arrived without its (empty) takes folder gets one: takes are written there.
            if !FileManager.default.fileExists(atPath: path + "/takes") { mkdir(path + "/takes", 0o755) }
            if changed {
                do { try project.save() } catch { report.append("the repaired manifest could not be saved (\(error.description)); nothing was lost, and the next open repairs it again") }
            }
            project.keepReserve()
        } else if changed && !report.isEmpty {
            report.append("(opened read-only: nothing was changed on disk)")
        }
        project.rememberWritten()
        // Part and file names come from the disk: never more than one line each.
        return (project, report.map(\.oneLine))
    }

    /// Who else is writing, for a reader (nil for a writer: it holds the lock).
    private func holder(_ access: Access) -> OwnerLock.Holder? {
        if case .read = access { return OwnerLock.holder(of: path) }
        return nil
    }

    /// Reads and decodes the manifest; every problem says which key.
    static func readManifest(_ path: String) -> Result<Manifest, ProjectError> {
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(ProjectError(description: FileManager.default.fileExists(atPath: path) ? "cannot be read" : "missing"))
        }
        return Manifest.decode(data)
    }

    /// The sidecars are the truth: a sidecar changed later than the
    /// manifest's copy of its record (another box's change, synchronised;
    /// a crash between the two writes) is followed; so is the sidecar of a
    /// take found without one (it came after its file, synchronised).
    private func followNewerSidecars(_ report: inout [String]) -> Bool {
        var changed = false
        for index in manifest.takes.indices {
            let take = manifest.takes[index]
            guard let sidecar = try? sidecarPath(take.file),
                  let data = FileManager.default.contents(atPath: sidecar),
                  var stored = try? JSONDecoder().decode(TakeRecord.self, from: data),
                  (stored.changed ?? "") > (take.changed ?? "") || take.isFoundAlone
            else { continue }
            if take.isFoundAlone {
                guard !stored.isFoundAlone, stored.problem(rate: manifest.sampleRate, parts: score.parts.map(\.name)) == nil else { continue }
                // Its record as its box wrote it, under its box's number (numbered with the others next).
                stored = stored.sidecarRecord
                stored.file = take.file
                manifest.takes[index] = stored
                report.append("\(Self.sidecar(take.file)): its record arrived after its file; take \(take.id) (\(stored.part)) is as it was recorded")
                changed = true
                continue
            }
            stored.file = take.file
            stored.id = take.id  // the id is the project's own handle (the sidecar keeps its box's number)
            stored.originalID = take.originalID
            guard stored != take else { continue }
            manifest.takes[index] = stored
            report.append("\(Self.sidecar(take.file)): changed after the manifest's copy (on \(stored.box ?? "another box") at \(stored.changed ?? "?")); the manifest follows it")
            changed = true
        }
        return changed
    }

    /// Flags takes with impossible fields; numbers the takes the same way
    /// on every box (`Manifest.check`); keeps `nextTakeID` above every id.
    private func checkRecords(_ report: inout [String]) -> Bool {
        let checked = manifest.check(parts: score.parts.map(\.name))
        conditions.merge(checked.conditions) { old, _ in old }
        report += checked.report
        // Listed by number (rediscovered takes and numbers changed put them out of order).
        guard zip(manifest.takes, manifest.takes.dropFirst()).contains(where: { $0.id > $1.id }) else { return checked.changed }
        manifest.takes = manifest.takes.indices.sorted { (manifest.takes[$0].id, $0) < (manifest.takes[$1].id, $1) }.map { manifest.takes[$0] }
        return true
    }

    /// Finds take files the manifest does not list (a lost or rebuilt
    /// manifest, a crash before the first save) and adds them from their
    /// sidecars, or from the file alone.
    private func rediscoverTakes(_ report: inout [String]) -> Bool {
        let folder = path + "/takes"
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".wav") && !$0.hasPrefix(".") && !$0.hasSuffix(".repair.wav") }.sorted()
        let known = Set(manifest.takes.map(\.file))
        let parts = score.parts.map(\.name)
        var changed = false
        for name in files where !known.contains("takes/" + name) {
            let file = "takes/" + name
            // A name that is not a take's, or a link (it could lead anywhere), is not a take of this project.
            guard (try? confined(file, what: file)) != nil, let sidecarPath = try? sidecarPath(file) else {
                report.append("takes/\(SafeText.printable(name)): not a take file of this project (a link, or a name a take never has); left alone")
                continue
            }
            var take: TakeRecord
            var sidecarProblem: String?
            if let data = FileManager.default.contents(atPath: sidecarPath) {
                do {
                    take = try JSONDecoder().decode(TakeRecord.self, from: data).sidecarRecord
                    take.file = file
                    if let problem = take.problem(rate: manifest.sampleRate, parts: parts) {
                        sidecarProblem = problem
                    } else {
                        report.append("\(file): take \(take.id) (\(take.part)) was missing from the manifest; restored from its sidecar")
                    }
                } catch let error as DecodingError {
                    sidecarProblem = error.located
                    take = orphan(file, name: name)
                } catch {
                    sidecarProblem = "\(error)"
                    take = orphan(file, name: name)
                }
            } else {
                take = orphan(file, name: name)
            }
            if let sidecarProblem {
                take = orphan(file, name: name)
                report.append("\(Self.sidecar(file)): \(sidecarProblem); the take is added as take \(take.id) (\(take.part)) with its alignment unknown")
            } else if take.note?.hasPrefix("found without its sidecar") == true {
                report.append("\(file): a take file with no record; added as take \(take.id) (\(take.part)), alignment unknown")
            }
            // A number another take has too is settled by the numbering (`checkRecords`), the same on every box.
            if take.id < 1 || take.id >= Manifest.maximumTakeID {
                take.id = max(manifest.nextTakeID, (manifest.takes.map(\.id).max() ?? 0) + 1)
            }
            manifest.takes.append(take)
            manifest.nextTakeID = max(manifest.nextTakeID, take.id + 1)
            changed = true
        }
        if changed { manifest.takes.sort { $0.id < $1.id } }
        return changed
    }

    /// A record for a take file found alone: its part and id from its
    /// name, its alignment unknown.
    private func orphan(_ file: String, name: String) -> TakeRecord {
        let stem = (name as NSString).deletingPathExtension
        let pieces = stem.split(separator: "-")
        let id = pieces.last.flatMap { Int($0) }.flatMap { $0 > 0 && $0 < Manifest.maximumTakeID ? $0 : nil } ?? manifest.nextTakeID
        // PART-ID, or PART-BOX-ID.
        let slugs = [pieces.dropLast().joined(separator: "-"), pieces.dropLast(2).joined(separator: "-")]
        let named = slugs.lazy.compactMap { slug in self.score.parts.first { Self.slug($0.name) == slug } }.first
        let box = named != nil && Self.slug(named!.name) == slugs[1] ? pieces.dropLast().last.map(String.init).flatMap { BoxIdentity.isValid($0) ? $0 : nil } : nil
        let part = named?.name ?? score.parts.first?.name ?? slugs[0]
        let frames = (try? confined(file, what: file)).flatMap { TakeFile.framesOnDisk($0) } ?? 0
        return TakeRecord(
            id: id, part: part, file: file, alignmentOffsetSamples: 0, nudgeSamples: 0, range: nil, tempoScale: "1", transpose: 0,
            sampleRate: manifest.sampleRate, state: frames > 0 ? .recovered : .discarded, active: false, frames: frames, dropouts: [],
            note: frames > 0 ? "found without its sidecar: alignment unknown (offset 0); nudge it" : "found without its sidecar, and empty", calibration: nil,
            scoreHash: nil, box: box)
    }

    /// Takes still marked `recording`. Another process's live take (a
    /// reader sees its lock held) is only flagged; with no recorder left, a
    /// reader flags it interrupted and a writer repairs its file in place
    /// and keeps what is there, flagged `recovered`.
    private func settleInterruptedTakes(writer: OwnerLock.Holder?, box: String?, repaired: inout Set<Int>, _ report: inout [String]) -> Bool {
        var changed = false
        for index in manifest.takes.indices where manifest.takes[index].state == .recording && conditions[manifest.takes[index].id] == nil {
            let take = manifest.takes[index]
            // Another box's take (its record synchronised here while it records): never repaired here, over a copy still arriving.
            if let box, let there = take.box, there != box {
                conditions[take.id] = .elsewhere(there)
                continue
            }
            guard isWritable else {
                conditions[take.id] = writer.map(TakeCondition.live) ?? .interrupted
                continue
            }
            guard let file = try? takePath(take) else {
                conditions[take.id] = .invalid("manifest.json: take \(take.id)'s file '\(SafeText.printable(take.file))' is not in the project's takes folder")
                continue
            }
            if !FileManager.default.fileExists(atPath: file) {
                manifest.takes[index].state = .discarded
                manifest.takes[index].note = "interrupted before any audio was written"
                report.append("\(take.file): take \(take.id) (\(take.part)) was interrupted before any audio was written")
            } else {
                do {
                    let frames = try TakeFile.repair(file)
                    manifest.takes[index].frames = frames
                    manifest.takes[index].state = frames > 0 ? .recovered : .discarded
                    manifest.takes[index].note = frames > 0 ? "recovered after an interrupted recording" : "interrupted before any audio was written"
                    if frames > 0 { repaired.insert(take.id) }
                    report.append(String(format: "%@: take %d (%@) recovered after an interruption: %.2f s kept", take.file, take.id, take.part, Double(frames) / Double(take.sampleRate)))
                } catch {
                    manifest.takes[index].state = .recovered
                    manifest.takes[index].note = "could not be repaired: \(error.description)"
                    report.append("\(take.file): take \(take.id) could not be repaired (\(error.description)); its file is kept as it is")
                }
            }
            if (try? writeSidecar(manifest.takes[index])) == nil { report.append("\(take.file): could not update its sidecar") }
            changed = true
        }
        return changed
    }

    /// A writer's check of the sidecars (the manifest's backup copies): a
    /// missing, damaged or stale one is rewritten from the manifest.
    private func checkSidecars(_ report: inout [String]) {
        // A take found without a record gets no sidecar made up for it: its own may be on its way (synchronised).
        for take in manifest.takes where conditions[take.id] == nil && !take.isFoundAlone {
            guard let sidecarPath = try? sidecarPath(take.file) else { continue }
            let data = FileManager.default.contents(atPath: sidecarPath)
            let stored = data.flatMap { try? JSONDecoder().decode(TakeRecord.self, from: $0) }
            guard stored != take.sidecarRecord else { continue }
            let why = data == nil ? "missing" : stored == nil ? "damaged" : "out of date"
            do {
                try writeSidecar(take)
                report.append("\(Self.sidecar(take.file)): \(why); rewritten from the manifest")
            } catch {
                report.append("\(Self.sidecar(take.file)): \(why), and could not be rewritten (\(error.description))")
            }
        }
    }

    /// Flags takes whose audio cannot play as recorded, and takes whose
    /// song changed since; each is named once in the report.
    private func checkAudio(box: String?, _ report: inout [String]) -> Bool {
        var changed = false
        for index in manifest.takes.indices where conditions[manifest.takes[index].id] == nil && manifest.takes[index].state.isUsable {
            let take = manifest.takes[index]
            let file: String
            do { file = try takePath(take) } catch {
                conditions[take.id] = .unreadable(error.description)
                report.append("take \(take.id) (\(take.part)): \(error.description); left out")
                continue
            }
            let foreign = box != nil && take.box != nil && take.box != box
            if let problem = AudioFile.problem(file, sampleRate: manifest.sampleRate, channels: 1) {
                conditions[take.id] = .unreadable(problem)
            } else if let onDisk = TakeFile.framesOnDisk(file), onDisk < take.frames, foreign {
                // Another box's take: its record came ahead of the rest of its file (synchronised). Not played half.
                conditions[take.id] = .arriving(String(format: "its file holds %.1f s of the %.1f s recorded on box %@", Double(onDisk) / Double(take.sampleRate),
                                                       Double(take.frames) / Double(take.sampleRate), take.box ?? "?"))
            } else if let onDisk = TakeFile.framesOnDisk(file), onDisk < take.frames {
                report.append(String(format: "take %d (%@): its file holds %.1f s of the %.1f s recorded (cut short); it plays what is there",
                                     take.id, take.part, Double(onDisk) / Double(take.sampleRate), Double(take.frames) / Double(take.sampleRate)))
                continue
            } else if let onDisk = TakeFile.framesOnDisk(file), onDisk > take.frames, take.frames < Manifest.sampleLimit {
                // The record says less than the file holds: the file is the truth (said, and put right by a writer).
                report.append(String(format: "take %d (%@): its record says %.2f s but its file holds %.2f s; the file's length is taken%@",
                                     take.id, take.part, Double(take.frames) / Double(take.sampleRate), Double(onDisk) / Double(take.sampleRate),
                                     isWritable ? "" : " (opened read-only: not written back)"))
                manifest.takes[index].frames = min(onDisk, Manifest.sampleLimit)
                changed = true
                continue
            } else if let recorded = take.scoreHash, recorded != score.fingerprint(ofPart: take.part) {
                conditions[take.id] = .scoreChanged
            } else {
                continue
            }
            if take.state.isUsable { report.append("take \(take.id) (\(take.part)): \(conditions[take.id]!.description); left out") }
        }
        return changed
    }

    /// A take just repaired after a crash (its alignment known) plays when
    /// its part has no full take playing; and a part never has two full
    /// takes playing (after a rebuild, the newest plays). A writer's job.
    private func settleActiveTakes(repaired: Set<Int>) -> Bool {
        guard isWritable else { return false }
        var changed = false
        for index in manifest.takes.indices where repaired.contains(manifest.takes[index].id) && !manifest.takes[index].isPunch {
            let part = manifest.takes[index].part
            if !manifest.takes.contains(where: { $0.part == part && $0.active && !$0.isPunch && conditions[$0.id] == nil }) {
                manifest.takes[index].active = true
                changed = true
            }
        }
        for part in Set(manifest.takes.map(\.part)) {
            let playing = manifest.takes.indices.filter { manifest.takes[$0].part == part && manifest.takes[$0].active && !manifest.takes[$0].isPunch && conditions[manifest.takes[$0].id] == nil }
            // The latest choice wins (two synchronised boxes each chose one), then the newest take.
            guard let newest = playing.max(by: { (manifest.takes[$0].changed ?? "", manifest.takes[$0].id) < (manifest.takes[$1].changed ?? "", manifest.takes[$1].id) }) else { continue }
            for index in playing where index != newest {
                manifest.takes[index].active = false
                changed = true
            }
        }
        return changed
    }

    /// Temporary files of atomic writes a crash left behind (only a writer,
    /// who knows no other writer is making them).
    private func removeStaleTemporaries() {
        for folder in [path, path + "/takes", path + "/" + ReferenceRecord.folder] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix(".") && name.hasSuffix(".tmp") {
                unlink(folder + "/" + name)
            }
        }
    }

    // MARK: Writing

    func requireWriter() throws(ProjectError) {
        guard isWritable else { throw ProjectError(description: "\(path): opened read-only; nothing can be changed") }
    }

    /// Writes the manifest atomically. When the disk is full, the reserve
    /// kept in the package makes room for it.
    public func save() throws(ProjectError) {
        try requireWriter()
        try writeMakingRoom(try Self.documentBytes(manifest, file: path + "/manifest.json"), to: path + "/manifest.json")
    }

    /// A document of the project as its files keep it: pretty, keys sorted,
    /// a newline at the end.
    static func documentBytes(_ value: some Encodable, file: String) throws(ProjectError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do { return Array(try encoder.encode(value)) + [10] } catch { throw ProjectError(description: "\(file): \(error)") }
    }

    /// An atomic write that, on a full disk, gives up the reserve and tries once more.
    private func writeMakingRoom(_ bytes: [UInt8], to file: String) throws(ProjectError) {
        do {
            try AtomicFile.write(bytes, to: file)
        } catch where error.errorNumber == ENOSPC && unlink(path + "/" + Self.reserveName) == 0 {
            do { try AtomicFile.write(bytes, to: file) } catch { throw ProjectError(description: error.description) }
        } catch {
            throw ProjectError(description: error.description)
        }
    }

    /// Keeps a small reserve file in the package, given up when the disk
    /// fills so the manifest that says what was recorded can still be written.
    private func keepReserve() {
        let reserve = path + "/" + Self.reserveName
        guard !FileManager.default.fileExists(atPath: reserve) else { return }
        let descriptor = Glibc.open(reserve, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        let allocated = posix_fallocate(descriptor, 0, off_t(Self.reserveBytes)) == 0
        Glibc.close(descriptor)
        if !allocated { unlink(reserve) }
    }

    /// Bytes free on the project's disk for this process.
    public var freeBytes: Int64 { Self.freeBytes(at: path) ?? Int64.max }

    /// Bytes free for this process on the disk holding `path` (nil: it cannot be asked).
    public static func freeBytes(at path: String) -> Int64? {
        var status = statvfs()
        guard statvfs(path, &status) == 0 else { return nil }
        return Int64(status.f_bavail) * Int64(status.f_frsize)
    }

    /// Adds or replaces a take's record, and writes every record changed
    /// since the last store (this one, and others an action changed with
    /// it): each is stamped `changed`, its sidecar written, then the
    /// manifest — all atomic, sidecars first (they are the truth).
    public func store(_ take: TakeRecord) throws(ProjectError) {
        try requireWriter()
        if let index = manifest.takes.firstIndex(where: { $0.id == take.id }) {
            manifest.takes[index] = take
        } else {
            manifest.takes.append(take)
            manifest.nextTakeID = max(manifest.nextTakeID, take.id + 1)
        }
        try commit()
    }

    /// Writes every record changed since the last write, stamped, its
    /// sidecar first; then the manifest.
    func commit() throws(ProjectError) {
        let stamp = RecordStamp.now()
        for index in manifest.takes.indices where manifest.takes[index] != written[manifest.takes[index].id] {
            manifest.takes[index].changed = stamp
            // A take found without its sidecar gets none made up (its own may be on its way, synchronised): the manifest keeps the change.
            if manifest.takes[index].isFoundAlone { continue }
            // Nor one whose file is no take file of this project (a record damaged by hand): there is nowhere to put it.
            if (try? sidecarPath(manifest.takes[index].file)) == nil { continue }
            try writeSidecar(manifest.takes[index])
        }
        try save()
        rememberWritten()
    }

    /// Adds records of takes whose files are already in place (a merge),
    /// then writes them all.
    func add(_ takes: [TakeRecord]) throws(ProjectError) {
        try requireWriter()
        for take in takes {
            manifest.takes.append(take)
            manifest.nextTakeID = max(manifest.nextTakeID, take.id + 1)
        }
        try commit()
    }

    /// An id above every id the project has seen.
    var freshTakeID: Int { max(manifest.nextTakeID, (manifest.takes.map(\.id).max() ?? 0) + 1) }

    func writeSidecar(_ take: TakeRecord) throws(ProjectError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do { data = try encoder.encode(take.sidecarRecord) } catch { throw ProjectError(description: "\(take.file): \(error)") }
        try writeMakingRoom(Array(data), to: try sidecarPath(take.file))
    }

    static func sidecar(_ file: String) -> String { (file as NSString).deletingPathExtension + ".json" }

    /// Where a take's audio is, confined to the project's `takes/` folder:
    /// refused when the record's file is not a take file name (`takes/NAME.wav`,
    /// no folder in NAME) or is a symbolic link (it could lead out of the
    /// project: a take is never read or written through one).
    public func takePath(_ take: TakeRecord) throws(ProjectError) -> String { try confined(take.file, what: "take \(take.id)") }

    /// Where a take's sidecar is, confined the same way.
    func sidecarPath(_ file: String) throws(ProjectError) -> String { try confined(Self.sidecar(file), what: file) }

    /// `file` (relative to the project) after the take-file rules and the
    /// link check.
    func confined(_ file: String, what: String) throws(ProjectError) -> String {
        let name = file.hasSuffix(".json") ? (file as NSString).deletingPathExtension + ".wav" : file
        guard TakeRecord.isTakeFileName(name) else {
            throw ProjectError(description: "\(what): '\(ConfinedPath.printable(file))' is not a file in the project's takes folder")
        }
        switch ConfinedPath.resolve(file, under: path) {
        case .success(let resolved):
            // A FIFO would block whoever opens it, a device never end, a folder is no take.
            var status = stat()
            if lstat(resolved, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
                throw ProjectError(description: "\(what): '\(SafeText.printable(file))' is not a plain file (a FIFO, a device or a folder)")
            }
            return resolved
        case .failure(let refusal): throw ProjectError(description: "\(what): \(refusal.description)")
        }
    }

    /// A part's name as it appears in take file names ("Tenor 1" → "tenor-1").
    public static func slug(_ part: String) -> String { part.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined() }

    /// Starts a new take of `part`: a fresh id (above every id the project
    /// has seen), its file created exclusively (never over another file)
    /// and its record stored as `recording` before any audio is written.
    /// `configure` fills in the alignment and the like before the store.
    public func beginTake(part: String, options: ScheduleOptions, syncFrames: Int64 = 12_000, failAfterFrames: Int64? = nil,
                          _ configure: (inout TakeRecord) -> Void = { _ in }) throws(ProjectError) -> (record: TakeRecord, writer: TakeFileWriter) {
        try requireWriter()
        guard manifest.takes.count < Manifest.maximumTakes else {
            throw ProjectError(description: "\(path): the project holds \(manifest.takes.count) takes, the most one may; delete some ('acapella takes PROJECT delete ID') or start another")
        }
        var id = freshTakeID
        var writer: TakeFileWriter?
        var file = ""
        for _ in 0..<1_000 {
            guard id < Manifest.maximumTakeID else { break }
            file = "takes/\(Self.slug(part))-\(origin.box.map { $0 + "-" } ?? "")\(id).wav"
            do {
                writer = try TakeFileWriter(path: path + "/" + file, sampleRate: options.sampleRate, syncFrames: syncFrames, failAfterFrames: failAfterFrames)
                break
            } catch where error.exists {
                id += 1  // a file nobody listed has this name: never open over it
            } catch {
                throw ProjectError(description: error.description)
            }
        }
        guard let writer else { throw ProjectError(description: "\(path): no free take number") }
        var record = TakeRecord(
            id: id, part: part, file: file, alignmentOffsetSamples: 0, nudgeSamples: 0, range: nil,
            tempoScale: options.tempoScale.description, transpose: options.transpose, sampleRate: options.sampleRate,
            state: .recording, active: false, frames: 0, dropouts: [], note: nil, calibration: nil, scoreHash: score.fingerprint(ofPart: part),
            box: origin.box, singer: origin.singer, recorded: RecordStamp.now())
        configure(&record)
        do {
            try store(record)
        } catch {
            try? writer.finish()
            unlink(writer.path)  // empty, and ours: made a moment ago
            manifest.takes.removeAll { $0.id == id }
            throw error
        }
        return (record, writer)
    }

    /// Makes a kept take the one that plays: a full take replaces the
    /// part's other full takes; a punch-in plays over them. A take set
    /// aside because the song changed is accepted against the song as it is.
    public func activate(_ id: Int) throws(ProjectError) {
        try requireWriter()
        guard let index = manifest.takes.firstIndex(where: { $0.id == id }) else { throw ProjectError(description: "no take \(id)") }
        let take = manifest.takes[index]
        guard take.state != .recording else { throw ProjectError(description: "take \(id) is still being recorded") }
        switch conditions[id] {
        case .invalid(let reason), .unreadable(let reason): throw ProjectError(description: "take \(id) cannot play: \(reason)")
        case .live, .interrupted, .elsewhere: throw ProjectError(description: "take \(id) is still being recorded")
        case .arriving(let how): throw ProjectError(description: "take \(id) is still arriving: \(how)")
        case .scoreChanged:
            manifest.takes[index].scoreHash = score.fingerprint(ofPart: take.part)
            conditions[id] = nil
        case nil: break
        }
        // A discarded take's audio is checked now (it was not when the project opened).
        if let problem = AudioFile.problem(try takePath(take), sampleRate: manifest.sampleRate, channels: 1) {
            throw ProjectError(description: "take \(id) cannot play: \(problem)")
        }
        // Activating a discarded take brings it back: nothing is ever deleted.
        if take.state == .discarded { manifest.takes[index].state = .kept }
        if !take.isPunch {
            for other in manifest.takes.indices where manifest.takes[other].part == take.part && !manifest.takes[other].isPunch {
                manifest.takes[other].active = false
            }
        }
        manifest.takes[index].active = true
        if let range = take.range {
            // A punch-in hides older punch-ins of the part it covers entirely
            // (the last pass of a loop is the one that plays).
            for other in manifest.takes.indices where other != index && manifest.takes[other].part == take.part && manifest.takes[other].active {
                if let inner = manifest.takes[other].range, inner.start >= range.start, inner.end <= range.end {
                    manifest.takes[other].active = false
                }
            }
        }
        try store(manifest.takes[index])
    }

    /// Undoes the newest take — with the takes sung at once with it (a
    /// recording set: one each part) — each discarded and its part's
    /// previous take of the same kind, if any, playing again. Returns the
    /// takes undone, in the project's order.
    @discardableResult
    public func undoLastTake() throws(ProjectError) -> [TakeRecord] {
        try requireWriter()
        // This box's own newest (a synchronised project holds other boxes' takes too), never one found without its record.
        guard let newest = manifest.takes.last(where: {
            $0.state.isUsable && conditions[$0.id] == nil && !$0.isFoundAlone && ($0.box == nil || origin.box == nil || $0.box == origin.box)
        }) else {
            throw ProjectError(description: "no take to undo")
        }
        let undone = manifest.takes.filter {
            $0.id == newest.id || (newest.ensemble != nil && $0.ensemble == newest.ensemble && $0.state.isUsable && conditions[$0.id] == nil)
        }
        for take in undone { try update(take.id) { $0.state = .discarded; $0.active = false } }
        for take in undone {
            // The part's previous take of the same kind (full, or a punch-in over the same range) plays again.
            if let previous = manifest.takes.last(where: {
                $0.part == take.part && $0.id != take.id && $0.range == take.range && $0.state.isUsable && conditions[$0.id] == nil
            }) {
                try activate(previous.id)
            }
        }
        return undone
    }

    /// Sets a take aside: discarded, not playing; its file stays and
    /// `activate` brings it back.
    public func discard(_ id: Int) throws(ProjectError) {
        guard let take = manifest.takes.first(where: { $0.id == id }) else { throw ProjectError(description: "no take \(id)") }
        guard take.state != .recording else { throw ProjectError(description: "take \(id) is still being recorded") }
        try update(id) { $0.state = .discarded; $0.active = false }
    }

    /// Moves a take against the song by `samples` more (a manual
    /// correction of its alignment); returns the nudge now in force.
    @discardableResult
    public func nudge(_ id: Int, by samples: Int64) throws(ProjectError) -> Int64 {
        guard let take = manifest.takes.first(where: { $0.id == id }) else { throw ProjectError(description: "no take \(id)") }
        // Range-checked before the sum (a number from outside could overflow it).
        let limit = Manifest.sampleLimit
        guard (-limit...limit).contains(samples), case let nudged = take.nudgeSamples + samples, (-limit...limit).contains(nudged) else {
            throw ProjectError(description: "take \(id): a nudge of \(samples) samples is out of range")
        }
        try update(id) { $0.nudgeSamples = nudged }
        return nudged
    }

    /// Sets a take's level in playback and mixes, dB.
    public func setGain(_ id: Int, decibels: Double) throws(ProjectError) {
        guard TakeRecord.gains.contains(decibels) else {
            throw ProjectError(description: "a take's gain is from \(Int(TakeRecord.gains.lowerBound)) to +\(Int(TakeRecord.gains.upperBound)) dB, not \(decibels)")
        }
        try update(id) { $0.gainDB = decibels == 0 ? nil : decibels }
    }

    /// Names a take (nil: its name taken away).
    public func name(_ id: Int, _ name: String?) throws(ProjectError) {
        if let name, let problem = TakeRecord.nameProblem(name) { throw ProjectError(description: problem) }
        try update(id) { $0.name = name }
    }

    /// Changes a take's field and stores it.
    public func update(_ id: Int, _ change: (inout TakeRecord) -> Void) throws(ProjectError) {
        try requireWriter()
        guard let index = manifest.takes.firstIndex(where: { $0.id == id }) else { throw ProjectError(description: "no take \(id)") }
        change(&manifest.takes[index])
        try store(manifest.takes[index])
    }

    // MARK: Playing

    /// The takes that play, per part in score order (then the audio
    /// tracks `options` names: the reference recording), decoded to mono at
    /// the project rate; a take sung at another tempo or key than `options`
    /// is stretched to it (`quality`: as it streams, or whole first). Takes
    /// that cannot play — flagged when the project was opened, or whose
    /// audio fails to decode now — are left out and named in `leftOut`.
    /// The parts in `tones` sing their guide tones: their takes are not
    /// loaded (a choice, not a loss: not named).
    public func activeTakes(for options: ScheduleOptions, loading: TakeLoading = .memory, tones: Set<Int> = [],
                            quality: StretchQuality = .realTime) -> (takes: [PartTakes], leftOut: [LeftOutTake]) {
        var result = score.parts.map { _ in PartTakes.none }
        var leftOut: [LeftOutTake] = []
        let playing = manifest.takes.filter { $0.active && $0.state.isUsable }
        // A take being recorded (here or elsewhere), or left so by a crash, is named too.
        for take in manifest.takes where take.state == .recording {
            leftOut.append(LeftOutTake(take: take, reason: conditions[take.id]?.description ?? "being recorded"))
        }
        // A take of a part the song no longer has is named too.
        for take in playing where !score.parts.contains(where: { $0.name == take.part }) {
            leftOut.append(LeftOutTake(take: take, reason: conditions[take.id]?.description ?? "the song has no part '\(take.part)'"))
        }
        for part in score.parts.indices where !tones.contains(part) {
            let name = score.parts[part].name
            // The full take first, punch-ins over it oldest first; a punch-in
            // older than the full take is hidden by it (the most recent take
            // covering a measure is the one heard).
            let mine = playing.filter { $0.part == name && conditions[$0.id] == nil }
            let full = mine.filter { !$0.isPunch }.map(\.id).max() ?? 0
            let chosen = playing.filter { $0.part == name && (!$0.isPunch || $0.id > full || conditions[$0.id] != nil) }
                .sorted { ($0.isPunch ? 1 : 0, $0.id) < ($1.isPunch ? 1 : 0, $1.id) }
            for take in chosen {
                if let condition = conditions[take.id] {
                    leftOut.append(LeftOutTake(take: take, reason: condition.description))
                    continue
                }
                // Sung at another tempo or key: stretched to this one.
                switch layer(take, sampleRate: options.sampleRate, loading: loading, heardAt: options, quality: quality) {
                case .success(let playback): result[part].layers.append(playback)
                case .failure(let reason): leftOut.append(reason)
                }
            }
        }
        // The tracks after the parts: the reference recording.
        for _ in options.audioTracks { result.append(referenceTakes(for: options, loading: loading, quality: quality).takes) }
        return (result, leftOut)
    }

    /// One take as a layer of its part: streamed from its file (a punch-in
    /// with less read-ahead room), or decoded whole (asked for, or a file
    /// of more than one channel); a file of another sample rate, or one
    /// that cannot be read, is left out with the reason. Heard at another
    /// tempo or key than it was sung in (`heardAt`), it is stretched: as it
    /// streams (`quality` .realTime), or whole first.
    public func layer(_ take: TakeRecord, sampleRate: Int, loading: TakeLoading, heardAt options: ScheduleOptions? = nil,
                      quality: StretchQuality = .realTime) -> Result<TakePlayback, LeftOutTake> {
        let plan = options.flatMap { stretchPlan(take, at: $0) }
        if case .streamed(let slots, let throttle) = loading {
            do {
                let file = try SoundFileBlockSource(path: try takePath(take), gain: take.gainFactor)
                guard file.sampleRate == sampleRate else {
                    return .failure(LeftOutTake(take: take, reason: "recorded at \(file.sampleRate) Hz, this runs at \(sampleRate) Hz"))
                }
                let source: any TakeBlockSource = throttle.map { ThrottledBlockSource(file, budget: $0) } ?? file
                // A punch-in sounds briefly: less read-ahead room will do (10 blocks, 0.85 s).
                let room = take.isPunch ? max(TakeStream.minimumSlots, slots * 5 / 8) : slots
                if let plan, case .offline(let folder) = quality { return spooledStream(take, source: source, plan: plan, slots: room, in: folder) }
                if let plan { return stretchedStream(take, source: source, plan: plan, slots: room) }
                return .success(take.playback(stream: TakeStream(source: source, name: "take \(take.id) (\(take.part))", slots: room)))
            } catch {
                // Not a file to stream (more than one channel): decoded whole below.
            }
        }
        let decoded: (samples: [Float], sampleRate: Int)
        do throws(ProjectError) {
            let file = try takePath(take)
            do { decoded = try AudioFile.readMono(file) } catch { throw ProjectError(description: error.description) }
        } catch {
            return .failure(LeftOutTake(take: take, reason: "unreadable: \(error.description)"))
        }
        guard decoded.sampleRate == sampleRate else {
            return .failure(LeftOutTake(take: take, reason: "recorded at \(decoded.sampleRate) Hz, this runs at \(sampleRate) Hz"))
        }
        if let plan { return stretchedWhole(take, take.playback(decoded.samples).samples, plan: plan) }
        return .success(take.playback(decoded.samples))
    }
}
