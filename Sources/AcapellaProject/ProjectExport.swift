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
    /// Takes sung at another tempo or key are stretched whole first, each
    /// into a nameless file in `scratch` (the current folder when nil).
    public static func plan(_ project: Project, _ request: ProjectMixRequest, scratch: String? = nil) throws(MixdownError)
        -> (options: MixdownOptions, takes: [PartTakes], record: TakeRecord?, notes: [String])
    {
        var options = request.baseOptions(sampleRate: project.manifest.sampleRate)
        var notes: [String] = []
        var record: TakeRecord?
        switch request.purpose {
        case .mix, .practice: break
        case .takeWithOthers(let id):
            guard let found = project.manifest.takes.first(where: { $0.id == id && $0.state != .recording }) else {
                throw MixdownError(description: "no finished take \(id)")
            }
            guard project.score.parts.contains(where: { $0.name == found.part }) else {
                throw MixdownError(description: "take \(id) is of a part the song no longer has")
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
        var tones: Set<Int> = []
        if request.session == .use {
            // The mix as the project was last rehearsed, unless asked otherwise.
            let (state, problem) = project.sessionState()
            tones = state.tonesParts(for: project.score)
            if let problem { notes.append(problem) }
            options.rehearse(state, score: project.score)
            let said = state.describe(partNames: project.score.parts.map(\.name) + options.audioTracks)
            if !said.isEmpty { notes.append("mixed as last rehearsed (\(SessionState.fileName)): \(said); --session ignore mixes without it") }
        }
        request.overrideTempoAndKey(&options)
        if let record {
            // Heard at the tempo and key it was sung in (the others' takes
            // stretched to them).
            let sung = record.scheduleOptions(sampleRate: options.sampleRate)
            options.tempoScale = sung.tempoScale
            options.transpose = sung.transpose
        }
        // Takes sung at another tempo or key, and the reference, stretched whole at the finer quality.
        var (takes, leftOut) = project.activeTakes(for: options.scheduleOptions, loading: .streamed(), tones: tones, quality: .offline(scratch: scratch ?? "."))
        // A take the box could not get ready (no disk for its stretch): no mix rather than one silently without it.
        if let stop = leftOut.first(where: \.stopsTheMix) { throw MixdownError(description: "\(stop.description); no mix was made (it would be without that take)") }
        if let record, let part = project.score.parts.firstIndex(where: { $0.name == record.part }) {
            switch project.layer(record, sampleRate: options.sampleRate, loading: .streamed()) {
            case .success(let layer): takes[part] = PartTakes([layer])
            case .failure(let left): throw MixdownError(description: left.description)
            }
            leftOut.removeAll { $0.take.part == record.part }
        }
        notes += leftOut.map { "\($0.description); not played in this mix" }
        // Takes sung at another tempo or key than the mix's: said, one line.
        let parts = Set(project.score.parts.indices.filter { !tones.contains($0) }.map { project.score.parts[$0].name })
        let stretched = project.manifest.takes.filter { take in
            take.active && take.state.isUsable && parts.contains(take.part) && !leftOut.contains { $0.take.id == take.id } && take.part != record?.part
        }.compactMap { take in project.stretchPlan(take, at: options.scheduleOptions).map { "take \(take.id) (\(take.part)) at \($0.stretch)" } }
        if !stretched.isEmpty { notes.append("stretched with Rubber Band to the mix's tempo and key: " + stretched.joined(separator: "; ")) }
        return (options, takes, record, notes)
    }

    /// The project mixed down to `path` (its format by the extension), the
    /// temporary files in `scratch` (nil: beside `path`). The song's
    /// verses, the words for the file beside it and the tags follow the request.
    public static func mix(_ project: Project, _ request: ProjectMixRequest = ProjectMixRequest(), to path: String, scratch: String? = nil,
                           progress: ((Double) -> Void)? = nil) throws(MixdownError) -> ProjectMixResult {
        guard AudioFileFormat(path: path) != nil else { throw MixdownError(description: "\(path): unknown audio format; use \(AudioFileFormat.listed)") }
        if request.includeReference && request.verse != nil {
            throw MixdownError(description: "--reference include plays the recording once, as it is; it cannot go with --verse")
        }
        let folder = (path as NSString).deletingLastPathComponent
        let (options, planned, record, notes) = try plan(project, request, scratch: scratch ?? (folder.isEmpty ? "." : folder))
        let holding = record.map { "take \($0.id) (\($0.part))" } ?? options.practicePart.map { "practice: \($0)" } ?? "mix"
        let tags = AudioTags.export(of: project.score, album: name(of: project), holding: holding, recorded: record?.recorded)
        var result = try write(project.score, options: options, takes: planned, request: request, tags: tags, to: path, scratch: scratch, progress: progress)
        result.hadTakes = planned.contains { !$0.layers.isEmpty }
        result.notes = notes + result.notes + damaged(planned, sampleRate: options.sampleRate)
        return result
    }

    /// The takes whose files held samples that were not numbers (a damaged
    /// file), as the mix read them: each named, heard as silence there.
    static func damaged(_ takes: [PartTakes], sampleRate: Int) -> [String] {
        takes.flatMap(\.layers).compactMap { layer in
            guard let stream = layer.stream, !stream.damage.isEmpty else { return nil }
            let name = stream.name.components(separatedBy: " at ").first ?? stream.name
            return "\(name): " + stream.damage.describe(sampleRate: sampleRate)
        }
    }

    /// `score` (and `takes`) mixed down to `path`: the request's verses,
    /// the words for the file beside it (the practice part's, else the
    /// first part with words), the tags given. Shared by projects and songs.
    static func write(_ score: Score, options: MixdownOptions, takes: [PartTakes]?, request: ProjectMixRequest, tags: AudioTags, to path: String, scratch: String?,
                      progress: ((Double) -> Void)?) throws(MixdownError) -> ProjectMixResult {
        var mixed = score
        var takes = takes
        var passes = 1
        if let verse = request.verse { (mixed, takes, passes) = try Mixdown.verses(verse, of: score, takes: takes, options: options) }
        let practiceIndex = options.practicePart.flatMap { name in mixed.parts.firstIndex { $0.name.lowercased() == name.lowercased() } }
        let lyrics = try Mixdown.lyrics(mixed, options: options, part: practiceIndex)
        let (frames, loudness) = try Mixdown.mix(mixed, options: options, takes: takes, to: path, bits: request.bits, tags: tags, scratch: scratch, progress: progress)
        // A target the ceiling would not allow: said, with what it is instead.
        let missed = abs(loudness.integratedLUFS - options.targetLUFS) > 0.1
            ? [String(format: "%.1f LUFS, not the %.1f asked: as near as it comes under the %.1f dBTP ceiling", loudness.integratedLUFS, options.targetLUFS,
                      options.truePeakCeiling)] : []
        return ProjectMixResult(frames: frames, loudness: loudness, passes: passes, hadTakes: false, lyrics: lyrics, notes: missed, sampleRate: options.sampleRate)
    }
}

extension ProjectMixRequest {
    /// The mixdown options the request sets before any session: loudness,
    /// tones, the practice part.
    func baseOptions(sampleRate: Int) -> MixdownOptions {
        var options = MixdownOptions()
        options.sampleRate = sampleRate
        options.targetLUFS = targetLUFS
        options.includeTones = includeTones
        if case .practice(let part) = purpose { options.practicePart = part }
        return options
    }

    /// The tempo and key asked for, over any other.
    func overrideTempoAndKey(_ options: inout MixdownOptions) {
        if let tempoScale { options.tempoScale = tempoScale }
        if let transpose { options.transpose = transpose }
    }
}

/// A song (no project) mixed down: its tones, as the request asks.
public enum SongMix {
    public static func mix(_ score: Score, _ request: ProjectMixRequest, to path: String, progress: ((Double) -> Void)? = nil) throws(MixdownError) -> ProjectMixResult {
        var options = request.baseOptions(sampleRate: MixdownOptions().sampleRate)
        request.overrideTempoAndKey(&options)
        let tags = AudioTags.export(of: score, album: score.title, holding: options.practicePart.map { "practice: \($0)" } ?? "guide tones")
        return try ProjectExport.write(score, options: options, takes: nil, request: request, tags: tags, to: path, scratch: nil, progress: progress)
    }
}
