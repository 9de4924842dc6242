import AcapellaJSON
public import AcapellaEngine
public import AcapellaScore
import Foundation

/// How a project was last rehearsed (`session.json` in the project): each
/// part's level, place, mute and solo; the tempo, transposition, loop,
/// count-in, metronome and verse. The box saves it as it changes and
/// starts from it, so a session resumes as it was left; `mix PROJECT`
/// mixes with it unless told otherwise. Written atomically by the
/// project's writer; a missing file is the defaults, a damaged one is
/// named and set aside (never fatal: it only holds preferences).
public struct SessionState: Codable, Hashable, Sendable {
    /// One part's place in the mix.
    public struct Part: Codable, Hashable, Sendable {
        /// Level against the default, dB (−60…+12).
        public var volumeDB: Double = 0
        /// −1 (left) … +1 (right); nil: the default spread.
        public var pan: Double?
        public var mute = false
        public var solo = false
        /// Whether its takes play (false: its guide tones sing instead, the
        /// takes kept; with every part on tones the tempo and key can change).
        public var takes = true

        public init(volumeDB: Double = 0, pan: Double? = nil, mute: Bool = false, solo: Bool = false, takes: Bool = true) {
            self.volumeDB = volumeDB
            self.pan = pan
            self.mute = mute
            self.solo = solo
            self.takes = takes
        }
    }

    /// Always "acapella-session".
    public var format = "acapella-session"
    public var version = 1
    /// By part name; parts not named keep the defaults.
    public var parts: [String: Part] = [:]
    /// Tempo, percent of written (50…150).
    public var tempoPercent = 100
    /// Semitones (−12…12).
    public var transpose = 0
    /// The loop's measures (kept when the loop is off, so it can be turned on again).
    public var loop: [Int]?
    public var looping = false
    /// Count-in measures (0…4), the metronome, the verse followed.
    public var countIn = 1
    public var metronome = false
    public var verse = 1
    /// The metronome's level against its default, dB (−60…+12).
    public var metronomeVolumeDB: Double = 0
    /// The grid a line played on the keyboard is written on, for this song
    /// (nil: 16th notes).
    public var lineGrid: KeyboardLine.Grid?

    /// The defaults.
    public init() {}

    /// Its tempo, key, count-in, metronome and verse: what the next
    /// session starts with.
    public var rehearsal: Rehearsal {
        get { Rehearsal(tempoPercent: tempoPercent, transpose: transpose, countIn: countIn, metronome: metronome, verse: verse) }
        set { (tempoPercent, transpose, countIn, metronome, verse) = (newValue.tempoPercent, newValue.transpose, newValue.countIn, newValue.metronome, newValue.verse) }
    }

    /// The file's name in a project.
    public static let fileName = "session.json"
    public static let tempoPercents = 50...150
    public static let transpositions = -12...12
    public static let volumes = -60.0...12.0

    /// The loop as measures, when it has two in order.
    public var loopMeasures: ClosedRange<Int>? {
        guard let loop, loop.count == 2, loop[0] >= 0, loop[0] <= loop[1] else { return nil }
        return loop[0]...loop[1]
    }

    /// The first impossible value, as `KEY: what`, or nil. `parts` are the song's.
    public func problem(parts names: [String]) -> String? {
        if format != "acapella-session" { return "format: '\(format.oneLine)' is not acapella-session" }
        if version != 1 { return "version: \(version), this build reads 1" }
        if !Self.tempoPercents.contains(tempoPercent) { return "tempoPercent: \(tempoPercent) is outside 50…150" }
        if !Self.transpositions.contains(transpose) { return "transpose: \(transpose) is outside −12…12" }
        if loop != nil && loopMeasures == nil { return "loop: expected [FIRST, LAST] measures" }
        if !(0...4).contains(countIn) { return "countIn: \(countIn) is outside 0…4" }
        if verse < 1 || verse > 100 { return "verse: \(verse) is outside 1…100" }
        if !Self.volumes.contains(metronomeVolumeDB) { return "metronomeVolumeDB: \(metronomeVolumeDB) is outside −60…+12" }
        for (name, part) in parts.sorted(by: { $0.key < $1.key }) {
            // The reference recording's mix is kept while it is away.
            if !names.contains(name) && name != ReferenceRecord.trackName { return "parts.\(name.oneLine): the song has no such part (its parts: \(names.joined(separator: ", ")))" }
            if !Self.volumes.contains(part.volumeDB) { return "parts.\(name).volumeDB: \(part.volumeDB) is outside −60…+12" }
            if let pan = part.pan, !(-1...1).contains(pan) { return "parts.\(name).pan: \(pan) is outside −1…1" }
        }
        return nil
    }

    /// The parts' mixes for `score`, then the audio tracks' (`tracks`: the
    /// reference recording, centred at `PartMix.trackGain`): the default
    /// spread, each part's level, place and mute applied; with any part
    /// or track soloed, the others muted.
    public func partMixes(for score: Score, tracks: [String] = []) -> [PartMix] {
        var mixes = PartMix.defaults(parts: score.parts.count, tracks: tracks.count)
        let names = score.parts.map(\.name) + tracks
        let soloing = names.contains { parts[$0]?.solo == true }
        for (index, name) in names.enumerated() {
            guard let state = parts[name] else {
                if soloing { mixes[index].muted = true }
                continue
            }
            mixes[index].gain *= Float(pow(10, state.volumeDB / 20))
            if let pan = state.pan { mixes[index].pan = Float(pan) }
            mixes[index].muted = state.mute || (soloing && !state.solo)
        }
        return mixes
    }

    /// What differs from the defaults, in words ("" when nothing):
    /// "tempo 90 %, Alto -6.0 dB pan +0.50, Bass muted".
    public func describe(partNames: [String]) -> String {
        var words: [String] = []
        if tempoPercent != 100 { words.append("tempo \(tempoPercent) %") }
        if transpose != 0 { words.append("transposed \(transpose > 0 ? "+" : "")\(transpose)") }
        if metronomeVolumeDB != 0 { words.append(String(format: "metronome %+.1f dB", metronomeVolumeDB)) }
        for name in partNames {
            guard let mix = parts[name] else { continue }
            var about: [String] = []
            if mix.volumeDB != 0 { about.append(String(format: "%+.1f dB", mix.volumeDB)) }
            if let pan = mix.pan { about.append(String(format: "pan %+.2f", pan)) }
            if mix.mute { about.append("muted") }
            if mix.solo { about.append("solo") }
            if !mix.takes { about.append("on its tones (takes left out)") }
            if !about.isEmpty { words.append("\(name) " + about.joined(separator: " ")) }
        }
        return words.joined(separator: ", ")
    }

    /// The parts (indexes in `score`) whose takes are left out for their
    /// guide tones.
    public func tonesParts(for score: Score) -> Set<Int> {
        Set(score.parts.indices.filter { parts[score.parts[$0].name]?.takes == false })
    }

    /// The tempo as a multiplier of the written one.
    public var tempoScale: Rational { Rational(Int128(tempoPercent), 100) }

    /// Reads a project's state: nil when there is none; a damaged or
    /// impossible one is an error naming the file and key.
    public static func read(project path: String, parts: [String]) -> Result<SessionState?, ProjectError> {
        let file = path + "/" + fileName
        guard let data = FileManager.default.contents(atPath: file) else { return .success(nil) }
        switch JSONFile.decode(SessionState.self, from: data, file: file) {
        case .failure(let error): return .failure(ProjectError(description: error.description))
        case .success(let state):
            if let problem = state.problem(parts: parts) { return .failure(ProjectError(description: "\(file): \(problem)")) }
            return .success(state)
        }
    }
}

extension Project {
    /// The session state saved in the project (the defaults when there is
    /// none; a damaged one is reported and the defaults used).
    public func sessionState() -> (state: SessionState, problem: String?) {
        switch SessionState.read(project: path, parts: score.parts.map(\.name)) {
        case .success(let state): return (state ?? SessionState(), nil)
        case .failure(let error): return (SessionState(), error.description + "; the defaults are used until it is saved again")
        }
    }

    /// Saves the session state (a writer's job), atomically.
    public func saveSession(_ state: SessionState) throws(ProjectError) {
        try requireWriter()
        let file = path + "/" + SessionState.fileName
        if let problem = state.problem(parts: score.parts.map(\.name)) { throw ProjectError(description: "\(file): \(problem)") }
        // Not through the reserve: that is kept for the manifest, which says what was recorded.
        let bytes = try Self.documentBytes(state, file: file)
        do { try AtomicFile.write(bytes, to: file) } catch { throw ProjectError(description: error.description) }
    }
}

extension SessionState.Part {
    enum CodingKeys: String, CodingKey { case volumeDB, pan, mute, solo, takes }

    /// Every key optional.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        volumeDB = try container.decodeIfPresent(Double.self, forKey: .volumeDB) ?? 0
        pan = try container.decodeIfPresent(Double.self, forKey: .pan)
        mute = try container.decodeIfPresent(Bool.self, forKey: .mute) ?? false
        solo = try container.decodeIfPresent(Bool.self, forKey: .solo) ?? false
        takes = try container.decodeIfPresent(Bool.self, forKey: .takes) ?? true
    }

    /// `takes` only when they are off: a session from before reads the same.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(volumeDB, forKey: .volumeDB)
        try container.encodeIfPresent(pan, forKey: .pan)
        try container.encode(mute, forKey: .mute)
        try container.encode(solo, forKey: .solo)
        if !takes { try container.encode(false, forKey: .takes) }
    }
}

extension SessionState {
    enum CodingKeys: String, CodingKey { case format, version, parts, tempoPercent, transpose, loop, looping, countIn, metronome, verse, metronomeVolumeDB, lineGrid }

    /// Every key optional but the format; what is missing is the default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(String.self, forKey: .format)
        version = try container.decodeIfPresent(Int.self, forKey: .version) ?? 1
        parts = try container.decodeIfPresent([String: Part].self, forKey: .parts) ?? [:]
        tempoPercent = try container.decodeIfPresent(Int.self, forKey: .tempoPercent) ?? 100
        transpose = try container.decodeIfPresent(Int.self, forKey: .transpose) ?? 0
        loop = try container.decodeIfPresent([Int].self, forKey: .loop)
        looping = try container.decodeIfPresent(Bool.self, forKey: .looping) ?? false
        countIn = try container.decodeIfPresent(Int.self, forKey: .countIn) ?? 1
        metronome = try container.decodeIfPresent(Bool.self, forKey: .metronome) ?? false
        verse = try container.decodeIfPresent(Int.self, forKey: .verse) ?? 1
        metronomeVolumeDB = try container.decodeIfPresent(Double.self, forKey: .metronomeVolumeDB) ?? 0
        if let grid = try container.decodeIfPresent(String.self, forKey: .lineGrid) {
            guard let chosen = KeyboardLine.Grid(rawValue: grid) else {
                throw DecodingError.dataCorruptedError(forKey: .lineGrid, in: container, debugDescription: "expected 8, 16, 8t or 16t, not '\(grid.oneLine)'")
            }
            lineGrid = chosen
        }
    }
}

/// What a rehearsal carries from session to session and song to song:
/// the tempo, the key, the count-in, the metronome, the verse followed.
/// One value: the box's settings start it, the project's saved session
/// resumes it, the session changes it and hands it on.
public struct Rehearsal: Hashable, Sendable {
    /// Tempo, percent of written.
    public var tempoPercent = 100
    /// Semitones the guide tones sound up.
    public var transpose = 0
    /// Count-in measures before play and record.
    public var countIn = 1
    /// The metronome while playing.
    public var metronome = false
    /// The verse the lyric line follows (1-based).
    public var verse = 1

    public init(tempoPercent: Int = 100, transpose: Int = 0, countIn: Int = 1, metronome: Bool = false, verse: Int = 1) {
        self.tempoPercent = tempoPercent
        self.transpose = transpose
        self.countIn = countIn
        self.metronome = metronome
        self.verse = verse
    }
}
