public import AcapellaEngine
public import AcapellaScore
import Foundation

/// One take of a project, as the manifest (and the take's own sidecar
/// file) records it.
public struct TakeRecord: Codable, Hashable, Sendable {
    /// Unique within the project, counting up.
    public var id: Int
    /// The part it replaces.
    public var part: String
    /// The audio file, relative to the project (`takes/alto-3.wav`).
    public var file: String
    /// Take frame `f` holds song sample `f − alignmentOffsetSamples`.
    public var alignmentOffsetSamples: Int64
    /// A manual correction, samples.
    public var nudgeSamples: Int64
    /// The song samples it sounds over (a punch-in), or nil: all it holds.
    public var range: [Int64]?
    /// Tempo multiplier it was recorded at ("1", "9/10").
    public var tempoScale: String
    /// Transposition it was recorded at.
    public var transpose: Int
    /// Samples per second of the file.
    public var sampleRate: Int
    /// `recording` (being written, or left by a crash), `kept`,
    /// `recovered` (repaired after a crash), `discarded`.
    public var state: String
    /// Whether it plays (one full take per part, plus punch-ins).
    public var active: Bool
    /// Frames in the file.
    public var frames: Int64
    /// Song-sample ranges where the capture was lost (xruns, overruns):
    /// outside them the alignment invariant holds.
    public var dropouts: [[Int64]]
    /// Why it ended, when not by a normal stop ("disk full", …).
    public var note: String?
    /// The round trip its alignment used: the device route and calibration.
    public var calibration: String?

    /// A punch-in (it has a range) rather than a full take.
    public var isPunch: Bool { range != nil }
}

/// The document of a project (`manifest.json`).
public struct Manifest: Codable, Hashable, Sendable {
    /// Always "acaproj".
    public var format = "acaproj"
    /// Schema version; this build reads and writes 1.
    public var version = Manifest.currentVersion
    /// The song, relative to the project.
    public var song = "score.acasong"
    /// Engine rate of the takes.
    public var sampleRate: Int
    /// The next take's id.
    public var nextTakeID = 1
    /// Every take, oldest first.
    public var takes: [TakeRecord] = []

    /// The version this build writes.
    public static let currentVersion = 1
}

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
/// Every write is atomic. Opening never deletes anything: a missing,
/// truncated, garbled or foreign-version manifest is set aside and rebuilt
/// from the takes' sidecars and files; takes left by a crash are repaired.
public final class Project {
    /// The package directory.
    public let path: String
    /// The song.
    public let score: Score
    /// The manifest, as last saved.
    public private(set) var manifest: Manifest

    init(path: String, score: Score, manifest: Manifest) {
        self.path = path
        self.score = score
        self.manifest = manifest
    }

    /// Creates `path` (which must not exist) holding `songText`.
    public static func create(at path: String, songText: String, sampleRate: Int = 48_000) throws(ProjectError) -> Project {
        let score: Score
        do { score = try Acasong.parse(songText) } catch {
            throw ProjectError(description: "\(path): the song is not valid: \(error.description)")
        }
        guard !FileManager.default.fileExists(atPath: path) else { throw ProjectError(description: "\(path): already exists") }
        do {
            try FileManager.default.createDirectory(atPath: path + "/takes", withIntermediateDirectories: true)
        } catch {
            throw ProjectError(description: "\(path): cannot create the project: \(error.localizedDescription)")
        }
        let project = Project(path: path, score: score, manifest: Manifest(sampleRate: sampleRate))
        do { try AtomicFile.write(Array(songText.utf8), to: path + "/score.acasong") } catch { throw ProjectError(description: error.description) }
        try project.save()
        return project
    }

    /// Opens a project, repairing what a crash or damage left; `report`
    /// lists what was found and done (empty when all was well).
    public static func open(_ path: String) throws(ProjectError) -> (project: Project, report: [String]) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ProjectError(description: "\(path): no such project")
        }
        let songPath = path + "/score.acasong"
        let score: Score
        do {
            let text = try String(contentsOfFile: songPath, encoding: .utf8)
            score = try Acasong.parse(text)
        } catch let error as ScoreErrors {
            throw ProjectError(description: "\(songPath): \(error.description)")
        } catch {
            throw ProjectError(description: "\(songPath): cannot read the song: \(error.localizedDescription)")
        }
        var report: [String] = []
        var manifest: Manifest
        var changed = false
        let manifestPath = path + "/manifest.json"
        switch readManifest(manifestPath) {
        case .success(let read):
            manifest = read
        case .failure(let problem):
            report.append("manifest.json: \(problem.description); rebuilt from the take files")
            if FileManager.default.fileExists(atPath: manifestPath) {
                let aside = manifestPath + ".damaged-\(Int(Date().timeIntervalSince1970))"
                _ = rename(manifestPath, aside)
                report.append("the damaged manifest is kept as \((aside as NSString).lastPathComponent)")
            }
            manifest = Manifest(sampleRate: 48_000)
            changed = true
        }
        let project = Project(path: path, score: score, manifest: manifest)
        changed = project.rediscoverTakes(&report) || changed
        changed = project.recoverInterruptedTakes(&report) || changed
        if changed { try project.save() }
        return (project, report)
    }

    static func readManifest(_ path: String) -> Result<Manifest, ProjectError> {
        guard let data = FileManager.default.contents(atPath: path) else { return .failure(ProjectError(description: "missing")) }
        struct Version: Decodable {
            var format: String?
            var version: Int?
        }
        guard let version = try? JSONDecoder().decode(Version.self, from: data) else {
            return .failure(ProjectError(description: "not valid JSON (truncated or damaged)"))
        }
        guard version.format == "acaproj" else { return .failure(ProjectError(description: "not an acaproj manifest")) }
        guard version.version == Manifest.currentVersion else {
            return .failure(ProjectError(description: "schema version \(version.version.map(String.init) ?? "missing"), this build reads \(Manifest.currentVersion)"))
        }
        do { return .success(try JSONDecoder().decode(Manifest.self, from: data)) } catch {
            return .failure(ProjectError(description: "damaged: \(error)"))
        }
    }

    /// Writes the manifest atomically.
    public func save() throws(ProjectError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            let data = try encoder.encode(manifest)
            try AtomicFile.write(Array(data) + [10], to: path + "/manifest.json")
        } catch let error as FileError {
            throw ProjectError(description: error.description)
        } catch {
            throw ProjectError(description: "\(path)/manifest.json: \(error)")
        }
    }

    /// Adds or replaces a take's record: manifest and sidecar, both atomic.
    public func store(_ take: TakeRecord) throws(ProjectError) {
        if let index = manifest.takes.firstIndex(where: { $0.id == take.id }) {
            manifest.takes[index] = take
        } else {
            manifest.takes.append(take)
            manifest.nextTakeID = max(manifest.nextTakeID, take.id + 1)
        }
        try writeSidecar(take)
        try save()
    }

    func writeSidecar(_ take: TakeRecord) throws(ProjectError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try AtomicFile.write(Array(try encoder.encode(take)), to: path + "/" + Self.sidecar(take.file))
        } catch let error as FileError {
            throw ProjectError(description: error.description)
        } catch {
            throw ProjectError(description: "\(take.file): \(error)")
        }
    }

    static func sidecar(_ file: String) -> String { (file as NSString).deletingPathExtension + ".json" }

    /// A new take's record for `part` (not stored yet).
    public func newTake(part: String, options: ScheduleOptions) -> TakeRecord {
        let id = manifest.nextTakeID
        manifest.nextTakeID += 1
        let slug = part.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined()
        return TakeRecord(
            id: id, part: part, file: "takes/\(slug)-\(id).wav", alignmentOffsetSamples: 0, nudgeSamples: 0, range: nil,
            tempoScale: options.tempoScale.description, transpose: options.transpose, sampleRate: options.sampleRate,
            state: "recording", active: false, frames: 0, dropouts: [], note: nil, calibration: nil)
    }

    /// Makes a kept take the one that plays: a full take replaces the
    /// part's other full takes; a punch-in plays over them.
    public func activate(_ id: Int) throws(ProjectError) {
        guard let index = manifest.takes.firstIndex(where: { $0.id == id }) else { throw ProjectError(description: "no take \(id)") }
        let take = manifest.takes[index]
        guard take.state != "recording" else { throw ProjectError(description: "take \(id) is still being recorded") }
        // Activating a discarded take brings it back: nothing is ever deleted.
        if take.state == "discarded" { manifest.takes[index].state = "kept" }
        if !take.isPunch {
            for other in manifest.takes.indices where manifest.takes[other].part == take.part && !manifest.takes[other].isPunch {
                manifest.takes[other].active = false
            }
        }
        manifest.takes[index].active = true
        if let range = take.range, range.count == 2 {
            // A punch-in hides older punch-ins of the part it covers entirely
            // (the last pass of a loop is the one that plays).
            for other in manifest.takes.indices where other != index && manifest.takes[other].part == take.part && manifest.takes[other].active {
                if let inner = manifest.takes[other].range, inner.count == 2, inner[0] >= range[0], inner[1] <= range[1] {
                    manifest.takes[other].active = false
                    try writeSidecar(manifest.takes[other])
                }
            }
        }
        try store(manifest.takes[index])
    }

    /// Undoes the newest take: it is discarded and the part's previous
    /// take of the same kind, if any, plays again. Returns the take undone.
    @discardableResult
    public func undoLastTake() throws(ProjectError) -> TakeRecord {
        guard let newest = manifest.takes.last(where: { $0.state != "discarded" && $0.state != "recording" }) else {
            throw ProjectError(description: "no take to undo")
        }
        try update(newest.id) { $0.state = "discarded"; $0.active = false }
        // The part's previous take of the same kind (full, or a punch-in over the same range) plays again.
        if let previous = manifest.takes.last(where: {
            $0.part == newest.part && $0.id != newest.id && $0.range == newest.range && $0.state != "discarded" && $0.state != "recording"
        }) {
            try activate(previous.id)
        }
        return newest
    }

    /// Changes a take's field and stores it.
    public func update(_ id: Int, _ change: (inout TakeRecord) -> Void) throws(ProjectError) {
        guard let index = manifest.takes.firstIndex(where: { $0.id == id }) else { throw ProjectError(description: "no take \(id)") }
        change(&manifest.takes[index])
        try store(manifest.takes[index])
    }

    /// Finds take files the manifest does not list (a lost or rebuilt
    /// manifest, a crash before the first save) and adds them from their
    /// sidecars, or from the file alone.
    func rediscoverTakes(_ report: inout [String]) -> Bool {
        let folder = path + "/takes"
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".wav") && !$0.hasSuffix(".repair.wav") }.sorted()
        let known = Set(manifest.takes.map(\.file))
        var changed = false
        for name in files where !known.contains("takes/" + name) {
            let file = "takes/" + name
            var take: TakeRecord
            if let data = FileManager.default.contents(atPath: path + "/" + Self.sidecar(file)), let decoded = try? JSONDecoder().decode(TakeRecord.self, from: data) {
                take = decoded
                take.file = file
                report.append("\(file): take \(take.id) (\(take.part)) was missing from the manifest; restored from its sidecar")
            } else {
                let stem = (name as NSString).deletingPathExtension
                let pieces = stem.split(separator: "-")
                let id = pieces.last.flatMap { Int($0) } ?? manifest.nextTakeID
                let slug = pieces.dropLast().joined(separator: "-")
                let part = score.parts.first { $0.name.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined() == slug }?.name ?? slug
                take = TakeRecord(
                    id: id, part: part, file: file, alignmentOffsetSamples: 0, nudgeSamples: 0, range: nil, tempoScale: "1", transpose: 0,
                    sampleRate: manifest.sampleRate, state: "recovered", active: false, frames: TakeFile.frameCount(path + "/" + file) ?? 0, dropouts: [],
                    note: "found without its sidecar: alignment unknown (offset 0); nudge it", calibration: nil)
                report.append("\(file): a take file with no record; added as take \(id) (\(part)), alignment unknown")
            }
            if manifest.takes.contains(where: { $0.id == take.id }) { take.id = (manifest.takes.map(\.id).max() ?? 0) + 1 }
            manifest.takes.append(take)
            manifest.nextTakeID = max(manifest.nextTakeID, take.id + 1)
            changed = true
        }
        manifest.takes.sort { $0.id < $1.id }
        return changed
    }

    /// Repairs takes still marked `recording` (the box stopped mid-take):
    /// the audio up to the last header update is kept; the take is
    /// flagged `recovered` and made active.
    func recoverInterruptedTakes(_ report: inout [String]) -> Bool {
        var changed = false
        for index in manifest.takes.indices where manifest.takes[index].state == "recording" {
            let take = manifest.takes[index]
            let file = path + "/" + take.file
            do {
                let frames = try TakeFile.repair(file)
                manifest.takes[index].frames = frames
                manifest.takes[index].state = "recovered"
                manifest.takes[index].note = "recovered after an interrupted recording"
                report.append(String(format: "%@: take %d (%@) recovered after an interruption: %.2f s kept", take.file, take.id, take.part, Double(frames) / Double(take.sampleRate)))
            } catch {
                manifest.takes[index].state = "recovered"
                manifest.takes[index].note = "could not be repaired: \(error.description)"
                report.append("\(take.file): take \(take.id) could not be repaired (\(error.description)); kept as it is")
            }
            let sidecarOK = (try? writeSidecar(manifest.takes[index])) != nil
            if !sidecarOK { report.append("\(take.file): could not update its sidecar") }
            changed = true
        }
        // A recovered full take becomes the part's active take when none is.
        for index in manifest.takes.indices where manifest.takes[index].state == "recovered" && !manifest.takes[index].active && !manifest.takes[index].isPunch {
            let part = manifest.takes[index].part
            if !manifest.takes.contains(where: { $0.part == part && $0.active && !$0.isPunch }) { manifest.takes[index].active = true }
        }
        return changed
    }

    /// The takes that play, per part in score order, decoded to mono at
    /// the project rate. Takes recorded at another tempo or key than
    /// `options` are left out and named in `mismatched`.
    public func activeTakes(for options: ScheduleOptions) throws(ProjectError) -> (takes: [PartTakes], mismatched: [TakeRecord]) {
        var result = score.parts.map { _ in PartTakes.none }
        var mismatched: [TakeRecord] = []
        let playing = manifest.takes.filter { $0.active && $0.state != "discarded" && $0.state != "recording" }
        for part in score.parts.indices {
            let name = score.parts[part].name
            // The full take first, punch-ins over it oldest first.
            let chosen = playing.filter { $0.part == name }.sorted { ($0.isPunch ? 1 : 0, $0.id) < ($1.isPunch ? 1 : 0, $1.id) }
            for take in chosen {
                if take.tempoScale != options.tempoScale.description || take.transpose != options.transpose {
                    mismatched.append(take)
                    continue
                }
                let decoded: (samples: [Float], sampleRate: Int)
                do { decoded = try AudioFile.readMono(path + "/" + take.file) } catch { throw ProjectError(description: error.description) }
                guard decoded.sampleRate == options.sampleRate else {
                    throw ProjectError(description: "\(take.file): recorded at \(decoded.sampleRate) Hz, the mix runs at \(options.sampleRate) Hz")
                }
                let range = take.range.flatMap { $0.count == 2 && $0[0] < $0[1] ? $0[0]..<$0[1] : nil }
                result[part].layers.append(TakePlayback(samples: decoded.samples, alignmentOffsetSamples: take.alignmentOffsetSamples, nudgeSamples: take.nudgeSamples, range: range))
            }
        }
        return (result, mismatched)
    }
}
