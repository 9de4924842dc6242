import AcapellaJSON
public import AcapellaEngine
import AcapellaScore
public import Foundation

/// Where a take stands. The same words are on disk (`"state": "kept"`).
public enum TakeState: String, Codable, CaseIterable, Hashable, Sendable {
    /// Being written, or left by a crash (recovered at the next writer's open).
    case recording
    /// Recorded and kept.
    case kept
    /// Repaired after an interrupted recording.
    case recovered
    /// Set aside (its file stays; activating brings it back).
    case discarded

    /// Recorded and not set aside: it can play.
    public var isUsable: Bool { self == .kept || self == .recovered }
}

/// A span of song samples `[start, end)`, on disk as `[start, end]`.
public struct SongRange: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The first sample.
    public var start: Int64
    /// One past the last sample.
    public var end: Int64

    /// A range from `start` up to (not including) `end`.
    public init(_ start: Int64, _ end: Int64) {
        self.start = start
        self.end = end
    }

    /// As a Swift range (empty when the bounds are backwards).
    public var samples: Range<Int64> { start..<max(start, end) }

    /// `start..<end`.
    public var description: String { "\(start)..<\(end)" }

    /// Reads `[start, end]`.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        guard container.count == 2 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "expected [start, end], two sample numbers"))
        }
        start = try container.decode(Int64.self)
        end = try container.decode(Int64.self)
    }

    /// Writes `[start, end]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(start)
        try container.encode(end)
    }
}

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
    public var range: SongRange?
    /// Tempo multiplier it was recorded at ("1", "9/10").
    public var tempoScale: String
    /// Transposition it was recorded at.
    public var transpose: Int
    /// Samples per second of the file.
    public var sampleRate: Int
    /// Where it stands.
    public var state: TakeState
    /// Whether it plays (one full take per part, plus punch-ins).
    public var active: Bool
    /// Frames in the file.
    public var frames: Int64
    /// Song-sample ranges where the capture was lost (xruns, overruns):
    /// outside them the alignment invariant holds.
    public var dropouts: [SongRange]
    /// Why it ended, when not by a normal stop ("disk full", …).
    public var note: String?
    /// The round trip its alignment used: the device route and calibration.
    public var calibration: String?
    /// The song it was recorded against (`Score.fingerprint(ofPart:)`);
    /// nil for takes from before fingerprints were kept.
    public var scoreHash: String?
    /// The box it was recorded on (`BoxIdentity`); nil for takes from
    /// before boxes were named.
    public var box: String?
    /// Who sang it, when the singer said.
    public var singer: String?
    /// When it was recorded (`RecordStamp`, UTC).
    public var recorded: String?
    /// When someone last changed its record (kept, discarded, activated,
    /// nudged, its gain): of two copies of the record (the manifest and the
    /// sidecar, or two synchronised boxes), the later one is the truth.
    public var changed: String?
    /// Its level in playback and mixes, dB (0 when absent).
    public var gainDB: Double?
    /// What the singer calls it ("the good one"), when they named it.
    public var name: String?
    /// Takes sung at once (a quartet a microphone each, `record --parts`)
    /// share this: none of them was played while the others were sung.
    public var ensemble: String?
    /// The number its box gave it, when the project numbers it otherwise
    /// (another take, recorded earlier, has that number: two boxes of one
    /// synchronised project recorded at once). Its sidecar keeps the box's
    /// number, so every box numbers the takes alike (`Manifest.check`).
    public var originalID: Int?

    /// The number its box gave it (`originalID`, else its id).
    public var recordedID: Int { originalID ?? id }

    /// Its record as its sidecar holds it: under the number its box gave it.
    public var sidecarRecord: TakeRecord {
        var record = self
        record.id = recordedID
        record.originalID = nil
        return record
    }

    /// Its file was found without a record (no sidecar): added with its
    /// alignment unknown. In a synchronised project its sidecar may still
    /// be on its way; when it comes, it is followed.
    public var isFoundAlone: Bool { note?.hasPrefix("found without its sidecar") == true }

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
    /// Sample rates a project may have.
    public static let sampleRates = 8_000...384_000
    /// Take ids stay below this (a counter that can never overflow).
    public static let maximumTakeID = 1_000_000_000
    /// Takes one project holds at most (a take a minute for two weeks):
    /// a bundle of the largest project still unpacks.
    public static let maximumTakes = 20_000
    /// Sample positions, offsets and lengths stay within ± this (2⁴⁰,
    /// about 265 days at 48 kHz): sums of a few of them never overflow.
    public static let sampleLimit: Int64 = 1 << 40
    /// Semitones a take may have been recorded transposed by.
    public static let transpositions = -24...24

    /// A manifest for takes at `sampleRate`.
    public init(sampleRate: Int) {
        self.sampleRate = sampleRate
    }
}

/// Why a take cannot play just now, found when the project was opened.
/// Not stored: the same take plays again once the cause is gone.
public enum TakeCondition: Hashable, Sendable, CustomStringConvertible {
    /// Another process is recording it right now.
    case live(OwnerLock.Holder)
    /// Left `recording` by a crash; the next writer to open the project
    /// repairs it (`acapella takes PROJECT recover`).
    case interrupted
    /// A field of its record is impossible: `FILE: KEY: what`.
    case invalid(String)
    /// Its audio is missing, empty, unreadable, or of another rate or
    /// channel count.
    case unreadable(String)
    /// The song's timing or the part's notes changed after it was
    /// recorded; it waits for the singer to activate it again.
    case scoreChanged
    /// Being recorded on another box of a synchronised project (or left
    /// there by a crash): only that box finishes or repairs it.
    case elsewhere(String)
    /// Another box's take whose file has not all arrived yet (its record
    /// has): it plays once the rest is here. The words say how much.
    case arriving(String)

    /// One line.
    public var description: String {
        switch self {
        case .live(let holder): "being recorded now by \(holder.description.oneLine)"
        case .interrupted: "interrupted; 'acapella takes PROJECT recover' keeps what was recorded"
        case .invalid(let reason): "unusable: \(reason.oneLine)"
        case .unreadable(let reason): "unreadable: \(reason.oneLine)"
        case .scoreChanged: "score changed since it was recorded; activate it to play it again"
        case .elsewhere(let box): "being recorded on box \(box.oneLine) (synchronised: that box finishes it, or repairs it after a crash; 'acapella takes PROJECT recover' repairs it here)"
        case .arriving(let how): "still arriving: \(how.oneLine)"
        }
    }

    /// The word a take list shows.
    public var word: String {
        switch self {
        case .live: "recording now"
        case .interrupted: "interrupted"
        case .invalid: "unusable"
        case .unreadable: "unreadable"
        case .scoreChanged: "score changed"
        case .elsewhere: "recording elsewhere"
        case .arriving: "arriving"
        }
    }
}

/// A take left out of a mix or a session, and why.
public struct LeftOutTake: Error, Hashable, Sendable, CustomStringConvertible {
    /// The take.
    public var take: TakeRecord
    /// Why (one line, without the take's name).
    public var reason: String
    /// The box could not make what it needed to play it (a stretched take
    /// on a full disk): a mix without it is not the mix asked for.
    public var stopsTheMix = false

    /// "take 3 (Alto): why".
    public var description: String { "take \(take.id) (\(take.part)) left out: \(reason)" }
}

extension TakeRecord {
    /// The first impossible field, as `KEY: what`, or nil. `rate` is the
    /// project's; `parts` the song's part names.
    func problem(rate: Int, parts: [String]) -> String? {
        let limit = Manifest.sampleLimit
        func outside(_ value: Int64) -> Bool { value < -limit || value > limit }
        if id < 1 || id >= Manifest.maximumTakeID { return "id: \(id) is outside 1…\(Manifest.maximumTakeID - 1)" }
        if let originalID, originalID < 1 || originalID >= Manifest.maximumTakeID { return "originalID: \(originalID) is outside 1…\(Manifest.maximumTakeID - 1)" }
        if !parts.contains(part) { return "part: '\(part)' is not a part of the song (its parts: \(parts.joined(separator: ", ")))" }
        if !TakeRecord.isTakeFileName(file) { return "file: '\(file)' is not a take file (takes/NAME.wav)" }
        if outside(alignmentOffsetSamples) { return "alignmentOffsetSamples: \(alignmentOffsetSamples) is outside ±\(limit)" }
        if outside(nudgeSamples) { return "nudgeSamples: \(nudgeSamples) is outside ±\(limit)" }
        if frames < 0 || frames > limit { return "frames: \(frames) is outside 0…\(limit)" }
        if let range {
            if outside(range.start) || outside(range.end) || range.start >= range.end {
                return "range: [\(range.start), \(range.end)] is not a span of song samples (start < end, within ±\(limit))"
            }
        }
        for (index, dropout) in dropouts.enumerated() where outside(dropout.start) || outside(dropout.end) || dropout.start > dropout.end {
            return "dropouts[\(index)]: [\(dropout.start), \(dropout.end)] is not a span of song samples"
        }
        if !Manifest.sampleRates.contains(sampleRate) { return "sampleRate: \(sampleRate) is outside \(Manifest.sampleRates.lowerBound)…\(Manifest.sampleRates.upperBound)" }
        if sampleRate != rate { return "sampleRate: recorded at \(sampleRate) Hz, the project runs at \(rate) Hz" }
        if !Manifest.transpositions.contains(transpose) { return "transpose: \(transpose) is outside −24…24" }
        if TakeRecord.tempoScaleIsValid(tempoScale) == false { return "tempoScale: '\(tempoScale)' is not a multiplier from 1/4 to 4" }
        if let box, !BoxIdentity.isValid(box) { return "box: '\(box)' is not a box id (1 to 16 lowercase letters and digits)" }
        // Read as the names were ever written (a record is never left out for a rule made after it): one line, within length.
        if let singer, singer.isEmpty || singer.count > 64 || singer.unicodeScalars.contains(where: SafeText.isControl) { return "singer: '\(singer.oneLine)' is not one line of 1 to 64 characters" }
        if let name, name.isEmpty || name.count > SafeText.longestTakeName || name.unicodeScalars.contains(where: SafeText.isControl) {
            return "name: '\(name.oneLine)' is not one line of 1 to \(SafeText.longestTakeName) characters"
        }
        if let recorded, !RecordStamp.isValid(recorded) { return "recorded: '\(recorded)' is not a time" }
        if let changed, !RecordStamp.isValid(changed) { return "changed: '\(changed)' is not a time" }
        if let gainDB, !TakeRecord.gains.contains(gainDB) { return "gainDB: \(gainDB) is outside \(Int(TakeRecord.gains.lowerBound))…+\(Int(TakeRecord.gains.upperBound)) dB" }
        return nil
    }

    /// Why `name` cannot name a take (nil: it can): 1 to 60 characters
    /// that show (`SafeText.nameProblem`).
    public static func nameProblem(_ name: String) -> String? { SafeText.takeNameProblem(name) }

    /// The gains a take may be given, dB.
    public static let gains = -60.0...12.0

    /// The linear factor of its gain.
    public var gainFactor: Float { Float(pow(10, (gainDB ?? 0) / 20)) }

    /// The take streamed through `stream` (its gain applied by the stream's source).
    public func playback(stream: TakeStream) -> TakePlayback {
        TakePlayback(stream: stream, alignmentOffsetSamples: alignmentOffsetSamples, nudgeSamples: nudgeSamples, range: range?.samples)
    }

    /// Its samples as a layer of its part: the gain applied, the alignment,
    /// the nudge and the range as recorded.
    public func playback(_ samples: [Float]) -> TakePlayback {
        let factor = gainFactor
        return TakePlayback(samples: factor == 1 ? samples : samples.map { $0 * factor }, alignmentOffsetSamples: alignmentOffsetSamples,
                            nudgeSamples: nudgeSamples, range: range?.samples)
    }

    /// `takes/` followed by a plain file name ending in `.wav`: nothing that
    /// leaves the package.
    static func isTakeFileName(_ file: String) -> Bool {
        guard file.hasPrefix("takes/"), file.hasSuffix(".wav") else { return false }
        let name = file.dropFirst(6)
        return name.count > 4 && name.count <= 200 && !name.hasPrefix(".")
            && name.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "\\") }
    }

    /// "1", "9/10": a positive fraction from 1/4 to 4.
    static func tempoScaleIsValid(_ text: String) -> Bool {
        let pieces = text.split(separator: "/", omittingEmptySubsequences: false)
        guard pieces.count <= 2, let numerator = Int(pieces[0]), numerator > 0, numerator <= 1_000_000 else { return false }
        let denominator = pieces.count == 2 ? Int(pieces[1]) ?? 0 : 1
        guard denominator > 0, denominator <= 1_000_000 else { return false }
        return numerator * 4 >= denominator && numerator <= 4 * denominator
    }
}

extension TakeState {
    /// Reads a state word; an unknown one names the words there are.
    public init(from decoder: any Decoder) throws {
        let word = try decoder.singleValueContainer().decode(String.self)
        guard let state = TakeState(rawValue: word) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath, debugDescription: "'\(word)' is not one of " + TakeState.allCases.map(\.rawValue).joined(separator: ", ")))
        }
        self = state
    }
}

extension Manifest {
    /// Reads a manifest's bytes: format, version, then every field by type;
    /// a problem names the key (`takes[2].state: 'keptt' is not one of …`).
    public static func decode(_ data: Data) -> Result<Manifest, ProjectError> {
        struct Version: Decodable {
            var format: String?
            var version: Int?
        }
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            return .failure(ProjectError(description: "not valid JSON (truncated or damaged)"))
        }
        guard object is [String: Any], let version = try? JSONDecoder().decode(Version.self, from: data) else {
            return .failure(ProjectError(description: "not a JSON object with format and version"))
        }
        guard version.format == "acaproj" else { return .failure(ProjectError(description: "not an acaproj manifest")) }
        // A key given twice: which value is meant cannot be told (a decoder keeps the last silently).
        if let path = JSONFile.duplicateKey(in: data) { return .failure(ProjectError(description: "\(path): given twice")) }
        guard version.version == Manifest.currentVersion else {
            return .failure(ProjectError(description: "schema version \(version.version.map(String.init) ?? "missing"), this build reads \(Manifest.currentVersion)"))
        }
        let manifest: Manifest
        do { manifest = try JSONDecoder().decode(Manifest.self, from: data) } catch let error as DecodingError {
            return .failure(ProjectError(description: JSONFile.explain(error, in: data)))
        } catch {
            return .failure(ProjectError(description: "damaged"))
        }
        guard Manifest.sampleRates.contains(manifest.sampleRate) else {
            return .failure(ProjectError(description: "sampleRate: \(manifest.sampleRate) is outside \(Manifest.sampleRates.lowerBound)…\(Manifest.sampleRates.upperBound)"))
        }
        guard manifest.song == "score.acasong" else { return .failure(ProjectError(description: "song: '\(manifest.song)' is not score.acasong")) }
        return .success(manifest)
    }

    /// The record checks, pure: takes with an impossible field (or a file
    /// another take has) are flagged, not changed; takes are numbered
    /// (`numbered`); `nextTakeID` is kept above every id. `parts` are the
    /// song's. A reader gets the same numbers as a writer (it only does
    /// not save them).
    public mutating func check(parts: [String]) -> (conditions: [Int: TakeCondition], report: [String], changed: Bool) {
        var conditions: [Int: TakeCondition] = [:]
        var report: [String] = []
        // One take listed twice, record for record (under one number or two): listed once.
        var listed: Set<TakeRecord> = []
        var copies = 0
        takes = takes.enumerated().filter { index, take in
            guard !listed.insert(take.sidecarRecord).inserted else { return true }
            report.append("manifest.json: takes[\(index)]: take \(take.id) (\(take.file)) was listed twice, record for record; it is listed once")
            copies += 1
            return false
        }.map(\.element)
        var sound: [Int] = []
        for index in takes.indices {
            let take = takes[index]
            if let problem = take.problem(rate: sampleRate, parts: parts) {
                conditions[take.id] = .invalid("manifest.json: takes[\(index)].\(problem)")
                report.append("manifest.json: takes[\(index)].\(problem); take \(take.id) is left out until that is put right")
                continue
            }
            sound.append(index)
        }
        // Of two records of one file, the earlier (as numbering orders them) is the take's; whatever order they are listed in.
        var owner: [String: Int] = [:]
        for index in sound where owner[takes[index].file].map({ earlier(index, than: $0) }) ?? true { owner[takes[index].file] = index }
        var valid: [Int] = []
        for index in sound {
            let take = takes[index], first = owner[take.file]!
            guard first == index else {
                conditions[take.id] = .invalid("manifest.json: takes[\(index)].file: \(take.file) belongs to takes[\(first)] too")
                report.append("manifest.json: takes[\(index)].file: \(take.file) belongs to takes[\(first)] too; left out")
                continue
            }
            valid.append(index)
        }
        var changed = numbered(valid, flagged: Set(conditions.keys), &report) || copies > 0
        let highest = takes.flatMap { [$0.id, $0.originalID ?? 0] }.filter { $0 < Manifest.maximumTakeID }.max() ?? 0
        if nextTakeID < 1 || nextTakeID > Manifest.maximumTakeID {
            report.append("manifest.json: nextTakeID: \(nextTakeID) is outside 1…\(Manifest.maximumTakeID); the next take is \(highest + 1)")
            nextTakeID = highest + 1
            changed = true
        } else if nextTakeID <= highest {
            report.append("manifest.json: nextTakeID: \(nextTakeID) is not above take \(highest)'s id; the next take is \(highest + 1)")
            nextTakeID = highest + 1
            changed = true
        }
        return (conditions, report, changed)
    }

    /// Numbers the takes at `indices` the same way on every box that holds
    /// the same takes (a pure function of the records, not of the order they
    /// arrived in): a take keeps the number its box gave it (`recordedID`)
    /// unless an earlier take has it — two boxes of one synchronised project
    /// recording at once, or a damaged manifest — then the earlier recorded
    /// (then the box, then the file name) keeps it and the others are
    /// numbered on from there, past every number a box gave (and the
    /// `flagged` takes' numbers). True when a number changed.
    mutating func numbered(_ indices: [Int], flagged: Set<Int>, _ report: inout [String]) -> Bool {
        let given = Set(indices.map { takes[$0].recordedID }).union(flagged)
        let order = indices.sorted { earlier($0, than: $1) }
        var used: Set<Int> = []
        var keeper: [Int: Int] = [:]  // a number → the index of the take that keeps it
        var next = 0  // numbers given on (rising, so the search is linear)
        var changed = false
        for index in order {
            let mine = takes[index].recordedID
            var number = mine
            if used.contains(number) || flagged.contains(number) {
                number = max(mine, next) + 1
                while given.contains(number) || used.contains(number) { number += 1 }
                next = number
                guard number < Manifest.maximumTakeID else {
                    report.append("manifest.json: takes[\(index)].id: take \(mine) is another take's too, and no number is left for it")
                    continue
                }
            }
            used.insert(number)
            keeper[mine] = keeper[mine] ?? index
            guard takes[index].id != number else { continue }
            if number != mine {
                let first = keeper[mine].map { "takes[\($0)] (\(takes[$0].file))" } ?? "a take left out"
                report.append("manifest.json: takes[\(index)].id: take \(mine) is also \(first), recorded first; this take (\(takes[index].file)) is take \(number)")
            }
            takes[index].originalID = number == mine ? nil : mine
            takes[index].id = number
            changed = true
        }
        if changed { takes = takes.indices.sorted { (takes[$0].id, $0) < (takes[$1].id, $1) }.map { takes[$0] } }
        return changed
    }

    /// The order numbering puts takes in: the number their box gave them,
    /// then when they were recorded (a take without a time last), the box,
    /// the file, and the rest of the record.
    func earlier(_ one: Int, than other: Int) -> Bool {
        let a = takes[one], b = takes[other]
        let first = (a.recordedID, a.recorded ?? "~", a.box ?? "", a.file), second = (b.recordedID, b.recorded ?? "~", b.box ?? "", b.file)
        if first != second { return first < second }
        // Two records of one file alike so far (a damaged manifest): their contents decide, not where they are listed.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let x = (try? encoder.encode(a.sidecarRecord)) ?? Data(), y = (try? encoder.encode(b.sidecarRecord)) ?? Data()
        return x != y ? x.lexicographicallyPrecedes(y) : one < other
    }
}

extension TakeRecord {
    /// The schedule the take was sung to: its tempo multiplier ("9/10")
    /// and transposition at `sampleRate` (a malformed tempo reads as written).
    public func scheduleOptions(sampleRate: Int) -> ScheduleOptions {
        let ratio = tempoScale.split(separator: "/").compactMap { Int128(String($0)) }
        var scale = Rational(1)
        if ratio.count == 2, ratio[0] > 0, ratio[1] > 0 { scale = Rational(ratio[0], ratio[1]) }
        return ScheduleOptions(sampleRate: sampleRate, tempoScale: scale, transpose: transpose)
    }
}
