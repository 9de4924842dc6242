public import AcapellaScore
public import AcapellaEngine
import Foundation

/// What a project's mixdown holds: the choir (every part's playing takes,
/// tones where a part has none), a practice track (one part forward), or
/// one take heard with the others.
public enum ExportPurpose: Hashable, Sendable {
    case mix
    /// The part, by name, forward; the others 9 dB quieter.
    case practice(part: String)
    /// This take as its part's only take, at the tempo and key it was sung in.
    case takeWithOthers(take: Int)
}

/// Whether a project's mix follows its saved session (levels, mutes,
/// solos, tempo and key as last rehearsed).
public enum SessionUse: String, Hashable, Sendable, CaseIterable {
    case use
    case ignore
}

/// How to mix a project down; every field has the default every caller
/// shares (the mix as last rehearsed, −16 LUFS, tones in, 16-bit).
public struct ProjectMixRequest: Hashable, Sendable {
    public var purpose = ExportPurpose.mix
    public var session = SessionUse.use
    public var includeTones = true
    public var targetLUFS = -16.0
    /// Over the session's tempo and key when given.
    public var tempoScale: Rational?
    public var transpose: Int?
    /// The reference recording mixed in (at the written tempo and key only).
    public var includeReference = false
    /// One verse or all in turn (nil: the song as written).
    public var verse: VerseChoice?
    public var bits = 16

    public init(purpose: ExportPurpose = .mix) {
        self.purpose = purpose
    }
}

/// What a project's mixdown came to, and what was said on the way (takes
/// left out, the session followed) for the caller to show.
public struct ProjectMixResult: Sendable {
    public var frames: Int
    public var loudness: LoudnessMeasurement
    /// Verses sung (1 unless `verse` was all).
    public var passes: Int
    /// Whether takes played.
    public var hadTakes: Bool
    /// The words line by line (LRC), for the file beside the mix.
    public var lyrics: String?
    /// One line each, without the project's name.
    public var notes: [String]
    public var sampleRate: Int
}

/// One way to mix a project down, used by `acapella mix`, the USB stick's
/// export and the page's downloads: takes streamed, the mix rendered,
/// measured and written a chunk at a time (`Mixdown.mix(…to:)`), so the
/// memory stays bounded whatever the project's length. Given the same
/// project and request, every caller writes the same bytes.
public enum ProjectExport {
    /// The project's name: its folder without `.acaproj` (the album tag).
    public static func name(of project: Project) -> String {
        let path = project.path.hasSuffix("/") ? String(project.path.dropLast()) : project.path
        return ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    }

    /// The options a request comes to for `project`, the takes that play
    /// and what was said choosing them (the mix is not rendered).
    public static func plan(_ project: Project, _ request: ProjectMixRequest) throws(MixdownError)
        -> (options: MixdownOptions, takes: [PartTakes], record: TakeRecord?, notes: [String])
    {
        var options = MixdownOptions()
        var notes: [String] = []
        options.sampleRate = project.manifest.sampleRate
        options.targetLUFS = request.targetLUFS
        options.includeTones = request.includeTones
        var record: TakeRecord?
        switch request.purpose {
        case .mix: break
        case .practice(let part): options.practicePart = part
        case .takeWithOthers(let id):
            guard let found = project.manifest.takes.first(where: { $0.id == id && $0.state != .recording }) else {
                throw MixdownError(description: "no finished take \(id)", notFound: true)
            }
            guard project.score.parts.contains(where: { $0.name == found.part }) else {
                throw MixdownError(description: "take \(id) is of a part the song no longer has", notFound: true)
            }
            record = found
        }
        if request.includeReference {
            switch project.reference() {
            case .failure(let error): throw MixdownError(description: error.description)
            case .success(nil): throw MixdownError(description: "has no reference recording (add one with 'acapella reference add')")
            case .success(let reference?):
                options.audioTracks = [ReferenceRecord.trackName]
                notes.append("the reference recording \(reference.describe(sampleRate: project.manifest.sampleRate)) is in the mix")
            }
        }
        if request.session == .use {
            // The mix as the project was last rehearsed, unless asked otherwise.
            let (state, problem) = project.sessionState()
            if let problem { notes.append(problem) }
            options.rehearse(state, score: project.score)
            let said = state.describe(partNames: project.score.parts.map(\.name) + options.audioTracks)
            if !said.isEmpty { notes.append("mixed as last rehearsed (\(SessionState.fileName)): \(said); --session ignore mixes without it") }
        }
        if let tempo = request.tempoScale { options.tempoScale = tempo }
        if let transpose = request.transpose { options.transpose = transpose }
        if let record {
            // Heard at the tempo and key it was sung in (the others' takes
            // of that tempo and key play too; the rest sing their tones).
            let sung = record.scheduleOptions(sampleRate: options.sampleRate)
            options.tempoScale = sung.tempoScale
            options.transpose = sung.transpose
        }
        if request.includeReference && (options.tempoScale != Rational(1) || options.transpose != 0) {
            throw MixdownError(description: "the reference recording plays only at the written tempo and key (this mix: tempo \(options.tempoScale), transposed \(options.transpose)); add --tempo 1 --transpose 0")
        }
        var (takes, leftOut) = project.activeTakes(for: options.scheduleOptions, loading: .streamed())
        if let record, let part = project.score.parts.firstIndex(where: { $0.name == record.part }) {
            switch project.layer(record, sampleRate: options.sampleRate, loading: .streamed()) {
            case .success(let layer): takes[part] = PartTakes([layer])
            case .failure(let left): throw MixdownError(description: left.description)
            }
            leftOut.removeAll { $0.take.part == record.part }
        }
        notes += leftOut.map { "\($0.description); not played in this mix" }
        return (options, takes, record, notes)
    }

    /// The project mixed down to `path` (its format by the extension), the
    /// temporary files in `scratch` (nil: beside `path`). The song's
    /// verses, the words for the file beside it and the tags follow the request.
    public static func mix(_ project: Project, _ request: ProjectMixRequest = ProjectMixRequest(), to path: String, scratch: String? = nil,
                           progress: ((Double) -> Void)? = nil) throws(MixdownError) -> ProjectMixResult {
        guard AudioFileFormat(path: path) != nil else { throw MixdownError(description: "\(path): unknown audio format; use .wav, .flac, .ogg, .opus or .mp3") }
        if request.includeReference && request.verse != nil {
            throw MixdownError(description: "--reference include plays the recording once, as it is; it cannot go with --verse")
        }
        let (options, planned, record, notes) = try plan(project, request)
        var score = project.score
        var takes: [PartTakes]? = planned
        var passes = 1
        if let verse = request.verse { (score, takes, passes) = try Mixdown.verses(verse, of: project.score, takes: takes, options: options) }
        let practiceIndex = options.practicePart.flatMap { name in score.parts.firstIndex { $0.name.lowercased() == name.lowercased() } }
        let lyrics = try Mixdown.lyrics(score, options: options, part: practiceIndex)
        let holding = record.map { "take \($0.id) (\($0.part))" } ?? options.practicePart.map { "practice: \($0)" } ?? "mix"
        let tags = AudioTags.export(of: project.score, album: name(of: project), holding: holding, recorded: record?.recorded)
        let (frames, loudness) = try Mixdown.mix(score, options: options, takes: takes, to: path, bits: request.bits, tags: tags, scratch: scratch, progress: progress)
        return ProjectMixResult(frames: frames, loudness: loudness, passes: passes, hadTakes: planned.contains { !$0.layers.isEmpty }, lyrics: lyrics,
                                notes: notes, sampleRate: options.sampleRate)
    }
}

/// A song (no project) mixed down: its tones, as the request asks.
public enum SongMix {
    public static func mix(_ score: Score, _ request: ProjectMixRequest, to path: String, progress: ((Double) -> Void)? = nil) throws(MixdownError) -> ProjectMixResult {
        var options = MixdownOptions()
        options.targetLUFS = request.targetLUFS
        options.includeTones = request.includeTones
        if case .practice(let part) = request.purpose { options.practicePart = part }
        if let tempo = request.tempoScale { options.tempoScale = tempo }
        if let transpose = request.transpose { options.transpose = transpose }
        var mixed = score
        var passes = 1
        if let verse = request.verse { (mixed, _, passes) = try Mixdown.verses(verse, of: score, takes: nil, options: options) }
        let practiceIndex = options.practicePart.flatMap { name in mixed.parts.firstIndex { $0.name.lowercased() == name.lowercased() } }
        let lyrics = try Mixdown.lyrics(mixed, options: options, part: practiceIndex)
        let tags = AudioTags.export(of: score, album: score.title, holding: options.practicePart.map { "practice: \($0)" } ?? "guide tones")
        let (frames, loudness) = try Mixdown.mix(mixed, options: options, takes: nil, to: path, bits: request.bits, tags: tags, progress: progress)
        return ProjectMixResult(frames: frames, loudness: loudness, passes: passes, hadTakes: false, lyrics: lyrics, notes: [], sampleRate: options.sampleRate)
    }
}
