/// What the web page asks of the box. The box implements it (`WebHub`):
/// reads come from what its control loop published, changes are queued for
/// the control loop and answered when it has carried them out; nothing
/// here ever touches the render thread. Tests implement it with a fake.
public protocol WebBox: Sendable {
    /// The live state now (the engine's last snapshot, the box's state).
    func live() -> WebLiveState
    /// The live state once the box has published a newer one than
    /// `generation` (or `timeout` has passed), and its generation: the
    /// event streams wait here instead of polling.
    func nextLive(after generation: Int, timeout: Duration) -> (state: WebLiveState, generation: Int)
    /// The current song engraved at `size`, and its time map (JSON).
    func score(_ size: WebScoreSize) -> WebScore?
    /// Why the current song's score could not be engraved (nil: it was,
    /// or is being engraved).
    func scoreProblem() -> String?
    /// Carries out a control action by name ("play-pause"…); false when
    /// there is no such action.
    func act(_ name: String) -> Bool
    /// The current song's takes, every part.
    func takes() -> WebTakes
    /// A change from the page (a take, the song, a range): carried out by
    /// the box's control loop; the answer says what it did, in words.
    func perform(_ change: WebChange) -> Result<String, WebFailure>
    /// A file to download: a take, a mixdown, a practice track, the project.
    func download(_ what: WebDownload) -> Result<WebFile, WebFailure>
    /// The song library.
    func library() -> [WebSong]
    /// The newest take's analysis (JSON: notes by their id in the score), if any.
    func analysis() -> [UInt8]?
    /// How the parts' playing takes sang together, the last time the page
    /// asked (`WebChange.blend`): `acapella blend --for-box`, with each chord's
    /// notes by their id in the score; or `{"error": …}` saying why not.
    func blend() -> [UInt8]?
    /// An uploaded song: validated and imported before anything is
    /// written, then stored in the library folder under a name of the
    /// box's making. `fileName` only says the format (its extension).
    func upload(fileName: String, bytes: [UInt8]) -> Result<WebUpload, WebFailure>
}

extension WebBox {
    /// No analysis.
    public func analysis() -> [UInt8]? { nil }

    /// No blend.
    public func blend() -> [UInt8]? { nil }

    /// Why the current song's score could not be engraved, if it could not.
    public func scoreProblem() -> String? { nil }

    /// Without a publication signal: a poll about 30 times a second.
    public func nextLive(after generation: Int, timeout: Duration) -> (state: WebLiveState, generation: Int) {
        Thread.sleep(forTimeInterval: 0.033)
        return (live(), generation + 1)
    }
}

/// The song engraved for the page, on disk (the box never holds a long
/// score in memory): the SVG gzip-compressed and its time map as JSON,
/// each a whole file written by the engraver before it was named.
public struct WebScore: Sendable, Hashable {
    /// The SVG, gzip-compressed (`score.svg.gz`).
    public var svgGzipPath: String
    /// The time map, JSON (`timemap.json`).
    public var timeMapPath: String

    public init(svgGzipPath: String, timeMapPath: String) {
        self.svgGzipPath = svgGzipPath
        self.timeMapPath = timeMapPath
    }

    /// The files' names in the folder an engraving writes.
    public static let svgName = "score.svg.gz"
    public static let timeMapName = "timemap.json"

}

/// A change the page asks for.
public enum WebChange: Hashable, Sendable {
    case activate(take: Int)
    case discard(take: Int)
    case nudge(take: Int, milliseconds: Int)
    /// A take named (nil: its name taken away).
    case name(take: Int, String?)
    /// A take's notes put in tune as a new take: those of `measures`, or
    /// (nil) those 15 cents or more off.
    case correct(take: Int, measures: ClosedRange<Int>?)
    case undo
    /// Another song (its index in the library), and part when given.
    case choose(song: Int, part: Int?)
    /// Loop these measures (nil: loop off).
    case loop(ClosedRange<Int>?)
    /// Record these measures with the next record (nil: clear).
    case punch(ClosedRange<Int>?)
    /// Remove the project's reference recording.
    case removeReference
    /// The live mixer: a part's (by index; nil: the reference's) level or
    /// pan moved to `value` (0…127, as a MIDI fader sends it).
    case fader(part: Int?, control: WebFaderControl, value: Int)
    /// The live mixer: a part's (nil: the reference's) mute or solo
    /// switched on or off.
    case mixSwitch(part: Int?, WebMixSwitch, on: Bool)
    /// A song of the singer's own (its index in the library) to the trash.
    case removeSong(Int)
    /// A song of the singer's own given another title, or other tags (nil: as it is).
    case describeSong(Int, title: String?, tags: [String]?)
    /// The metronome's level moved to `value` (0…127, as a fader's).
    case metronomeLevel(Int)
    /// The song's projects: a new one, another opened, one to the trash.
    case project(WebProjectChange)
    /// How the parts' playing takes sang together worked out (beside the
    /// box; the page hears `blendVersion` when it is ready).
    case blend
    /// The recording set: these parts recorded at once, each from its
    /// input (empty: one part at a time, the part chosen).
    case together([WebPartInput])
}

/// A part of the song (its index) sung into an input of the card (from 1, as the interface labels it).
public struct WebPartInput: Hashable, Sendable {
    public var part: Int
    public var input: Int
    public init(part: Int, input: Int) {
        self.part = part
        self.input = input
    }
}

/// A change to the current song's projects, each named as the page lists it.
public enum WebProjectChange: Hashable, Sendable {
    /// A new, empty project of the song under this name, opened.
    case create(String)
    /// Another of the song's projects opened (its takes, its session).
    case select(String)
    /// One of the song's projects to the trash (kept 30 days); never the one open.
    case remove(String)
}

/// One of the current song's projects, as the page lists it.
public struct WebProject: Hashable, Sendable {
    public var name: String
    public var current: Bool
    /// Its takes (0 for a project not made yet).
    public var takes: Int

    public init(name: String, current: Bool, takes: Int) {
        self.name = name
        self.current = current
        self.takes = takes
    }

    var json: [String: Any] { ["name": name, "current": current, "takes": takes] }
}

/// The widths the score is engraved at for the page: the page scales the
/// engraving to the screen's width, so a narrower engraving reads larger
/// (fewer measures a line). `wide` for a tablet or a computer, `narrow`
/// for a phone held upright; `medium` and `large` are the page's zoom
/// steps between and past them.
public enum WebScoreSize: String, Hashable, Sendable, CaseIterable {
    case wide, medium, narrow, large

    /// The engraving's width, millimetres (nil: the engraver's page width).
    public var widthMM: Int? {
        switch self {
        case .wide: return nil
        case .medium: return 130
        case .narrow: return 100
        case .large: return 75
        }
    }

    /// How the log names it after "the score".
    public var said: String {
        switch self {
        case .wide: return ""
        case .narrow: return " for phones"
        case .medium, .large: return " at the \(rawValue) zoom step"
        }
    }

    /// Its addresses' suffix: `/score-medium.svg`, `/timemap-medium.json`
    /// (the wide one has none: `/score.svg`).
    public var suffix: String { self == .wide ? "" : "-" + rawValue }

    /// The size a path asks for (`/score-large.svg` → large), or nil.
    public init?(scorePath path: String) {
        for size in Self.allCases where path == "/score\(size.suffix).svg" || path == "/timemap\(size.suffix).json" {
            self = size
            return
        }
        return nil
    }
}

/// What a strip's buttons switch.
public enum WebMixSwitch: String, Hashable, Sendable {
    /// `takes` on: the part's takes play; off: its guide tones sing instead.
    case mute, solo, takes
}

/// What a page fader moves.
public enum WebFaderControl: String, Hashable, Sendable {
    case level, pan
}

/// One strip of the live mixer as the page shows it.
public struct WebMixerStrip: Hashable, Sendable {
    public var name: String
    /// dB from the part's default level; nil: silent.
    public var levelDB: Double?
    /// −1 (left) … +1 (right).
    public var pan: Double
    /// The reference recording's strip.
    public var reference: Bool
    /// Not heard (for the singer's own part: its guide).
    public var muted: Bool
    /// Heard alone (with every other soloed strip).
    public var soloed: Bool
    /// The metronome's strip (its level only; `muted`: the metronome off).
    public var metronome = false
    /// A part's: whether its takes play (false: its guide tones instead);
    /// nil for the reference and the metronome.
    public var takes: Bool?

    public init(name: String, levelDB: Double?, pan: Double, reference: Bool = false, muted: Bool = false, soloed: Bool = false) {
        self.name = name
        self.levelDB = levelDB
        self.pan = pan
        self.reference = reference
        self.muted = muted
        self.soloed = soloed
    }
}

/// Something the page may download.
public enum WebDownload: Hashable, Sendable {
    /// A take's own audio, as recorded.
    case take(Int)
    /// A take heard with the other parts (their active takes, else tones).
    case takeWithOthers(Int)
    /// The song mixed down at −16 LUFS.
    case mix(format: String)
    /// A practice track: one part forward, the others quieter.
    case practice(part: Int, format: String)
    /// The project folder as a zip.
    case project
}

/// A file for the server to send: opened by the server (never a path from
/// the request); `temporary` ones are removed once opened.
public struct WebFile: Sendable, Hashable {
    public var path: String
    public var contentType: String
    /// The name the browser saves it as; nil: shown in the page (no download).
    public var downloadName: String?
    public var temporary: Bool
    /// The file is gzip: sent as it is with `Content-Encoding: gzip`, or
    /// (`inflate`) decompressed on its way for a client that does not take gzip.
    public var gzip = false
    public var inflate = false
    /// Seconds a browser may keep it (nil: asked for again each time).
    public var cacheSeconds: Int?

    public init(path: String, contentType: String, downloadName: String?, temporary: Bool) {
        self.path = path
        self.contentType = contentType
        self.downloadName = downloadName
        self.temporary = temporary
    }
}

/// Why a request could not be carried out: an HTTP status and one line.
public struct WebFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public var status: Int
    public var description: String

    public init(_ status: Int, _ description: String) {
        self.status = status
        self.description = description
    }
}

/// One take as the page lists it.
public struct WebTake: Hashable, Sendable {
    public var id: Int
    public var part: String
    /// recording, kept, discarded…
    public var state: String
    public var active: Bool
    public var seconds: Double
    /// When it was recorded (ISO 8601), when known.
    public var recorded: String?
    /// "5-8" for a punch-in, nil for a full take.
    public var measures: String?
    public var nudgeMilliseconds: Double
    public var note: String?
    /// Its analysis score (0–100), once analysed.
    public var score: Int?
    /// Where "with the others" is heard from, seconds into the song (a
    /// punch-in: a measure before its own first).
    public var heardFromSeconds: Double
    /// The measure that is (a punch-in's), nil for a full take.
    public var heardFromMeasure: Int?
    /// The song time of its file's first sample, seconds (its alignment
    /// and nudge): two takes' files played in time (A/B) are offset by it.
    public var fileStartSeconds: Double
    /// What the singer named it, when they did.
    public var name: String?

    public init(id: Int, part: String, state: String, active: Bool, seconds: Double, recorded: String? = nil, measures: String? = nil,
                nudgeMilliseconds: Double = 0, note: String? = nil, score: Int? = nil, heardFromSeconds: Double = 0, heardFromMeasure: Int? = nil, fileStartSeconds: Double = 0,
                name: String? = nil) {
        self.id = id
        self.part = part
        self.state = state
        self.active = active
        self.seconds = seconds
        self.recorded = recorded
        self.measures = measures
        self.nudgeMilliseconds = nudgeMilliseconds
        self.note = note
        self.score = score
        self.heardFromSeconds = heardFromSeconds
        self.heardFromMeasure = heardFromMeasure
        self.fileStartSeconds = fileStartSeconds
        self.name = name
    }

    var json: [String: Any] {
        ["id": id, "name": name ?? NSNull(), "part": part, "state": state, "active": active, "seconds": seconds, "recorded": recorded ?? NSNull(),
         "measures": measures ?? NSNull(), "nudgeMilliseconds": nudgeMilliseconds, "note": note ?? NSNull(), "score": score ?? NSNull(),
         "heardFromSeconds": heardFromSeconds.isFinite ? (heardFromSeconds * 1000).rounded() / 1000 : 0,
         "heardFromMeasure": heardFromMeasure ?? NSNull(), "fileStartSeconds": fileStartSeconds.isFinite ? (fileStartSeconds * 1000).rounded() / 1000 : 0]
    }
}

/// The song's takes: its parts in score order, the one being sung, the takes.
public struct WebTakes: Hashable, Sendable {
    public var song: String
    public var parts: [String]
    public var currentPart: Int
    public var takes: [WebTake]
    /// The reference recording, in words, when the project has one.
    public var reference: String?
    /// The song's projects, the open one among them.
    public var projects: [WebProject]
    /// Which project these takes are of (a short word made from its
    /// folder): the page sends it with a change to a take, and a change
    /// made from a list of another project's takes (the ids count from 1
    /// in every project) is refused.
    public var key: String

    public init(song: String = "", parts: [String] = [], currentPart: Int = 0, takes: [WebTake] = [], reference: String? = nil, projects: [WebProject] = [],
                key: String = "") {
        self.song = song
        self.parts = parts
        self.currentPart = currentPart
        self.takes = takes
        self.reference = reference
        self.projects = projects
        self.key = key
    }

    /// The key of the project at `path`: FNV-1a of its path, 16 hex digits.
    public static func key(ofProject path: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    var json: [String: Any] {
        ["song": song, "parts": parts, "currentPart": currentPart, "takes": takes.map(\.json), "reference": reference ?? NSNull(),
         "projects": projects.map(\.json), "key": key]
    }
}

/// A song in the library.
public struct WebSong: Hashable, Sendable {
    public var index: Int
    public var title: String
    public var tags: [String]
    public var current: Bool
    /// Added from the page (stored in the library folder).
    public var uploaded: Bool
    /// Its parts' names, its length in measures and in seconds at its
    /// written tempo, its verses (0 when the song could not be read).
    public var parts: [String]
    public var measures: Int
    public var seconds: Int
    public var verses: Int

    public init(index: Int, title: String, tags: [String], current: Bool, uploaded: Bool,
                parts: [String] = [], measures: Int = 0, seconds: Int = 0, verses: Int = 0) {
        self.index = index
        self.title = title
        self.tags = tags
        self.current = current
        self.uploaded = uploaded
        self.parts = parts
        self.measures = measures
        self.seconds = seconds
        self.verses = verses
    }

    var json: [String: Any] {
        ["index": index, "title": title, "tags": tags, "current": current, "uploaded": uploaded,
         "parts": parts, "measures": measures, "seconds": seconds, "verses": verses]
    }
}

/// What an upload became: the song's title and index, and the importer's report.
public struct WebUpload: Hashable, Sendable {
    public var title: String
    public var index: Int
    public var report: [String]

    public init(title: String, index: Int, report: [String]) {
        self.title = title
        self.index = index
        self.report = report
    }
}

import Foundation
