public import AcapellaProject
import AcapellaAnalysis
import AcapellaEngine
import AcapellaStatus
import AcapellaScore
import Foundation

/// Pitch correction of a take, note by note and never in place (issue
/// 36): each chosen note's sung centre (from the take's analysis) is moved
/// to the written pitch by a constant shift over the note (Rubber Band,
/// offline, formants kept), so its vibrato and the way it wavers stay the
/// singer's; the glides between notes are kept by crossfading from the
/// take as sung into the shifted note over 20 ms at each edge, inside
/// the note. Everything outside the notes moved is the take sample for
/// sample. The result is a new take; the original stays.
public enum TakeCorrection {
    /// Which notes to move.
    public enum Selection: Hashable, Sendable {
        /// Every sung note.
        case all
        /// The notes the analysis names: 15 cents or more off.
        case flagged
        /// The sung notes of these measures (counted as sung, as a punch-in's are).
        case measures(ClosedRange<Int>)

        /// "all", "flagged", "m.7-9", "m.7"; nil otherwise.
        public init?(_ text: String) {
            switch text {
            case "all": self = .all
            case "flagged": self = .flagged
            default:
                guard text.hasPrefix("m.") else { return nil }
                let bounds = text.dropFirst(2).split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
                guard (1...2).contains(bounds.count), let first = bounds.first ?? nil, let last = bounds.last ?? nil, first >= 0, last >= first, last <= 1_000_000 else { return nil }
                self = .measures(first...last)
            }
        }
    }

    /// One note moved: where it is, how far off it was sung, the shift.
    public struct Moved: Hashable, Sendable {
        public var measure: Int
        public var beat: Double
        public var lyric: String?
        public var midi: Int
        /// The centre as sung, cents against the written note.
        public var cents: Double
        /// The shift applied, cents (−cents × strength).
        public var shift: Double
        /// The take frames shifted, crossfades included.
        public var frames: Range<Int64>

        /// "m. 7 beat 1 'grace': 23 cents flat, moved up 23.0 cents".
        public var description: String {
            let beatText = beat == beat.rounded() ? String(Int(beat)) : String(format: "%.2g", beat)
            let word = lyric.map { " '\($0)'" } ?? ""
            return String(format: "m. %d beat %@%@ (%@): %.0f cents %@, moved %@ %.1f cents", measure, beatText, word, NoteName.name(midi), abs(cents),
                          cents < 0 ? "flat" : "sharp", shift > 0 ? "up" : "down", abs(shift))
        }
    }

    /// Samples each side of a note's span given to the stretcher for context.
    static let context: Int64 = 4_096
    /// The crossfade at each edge of a moved note, 20 ms at 48 kHz.
    public static func crossfade(sampleRate: Int) -> Int64 { Int64(sampleRate / 50) }

    /// The notes of `report` to move (sung, with a centre; at least 1 cent
    /// to move), their spans in take frames: from the note's sung entry to
    /// the next note's sung entry (or the written end), `origin` being the
    /// song sample of take frame 0.
    public static func plan(_ report: TakeReport, origin: Int64, frames: Int64, sampleRate: Int, selection: Selection, strength: Double) -> [Moved] {
        let notes = report.notes
        func entry(_ index: Int) -> Int64 {
            let note = notes[index]
            return note.start + Int64(((note.analysis.onsetMilliseconds ?? 0) * Double(sampleRate) / 1_000).rounded())
        }
        var moved: [Moved] = []
        for (index, note) in notes.enumerated() where note.analysis.sung && note.judged {
            guard let cents = note.analysis.cents else { continue }
            switch selection {
            case .all: break
            case .flagged: guard abs(cents) >= 15 else { continue }
            case .measures(let range): guard range.contains(note.measure) else { continue }
            }
            let shift = -cents * strength
            guard abs(shift) >= 1 else { continue }
            let start = max(entry(index), note.start - Int64(sampleRate / 10))
            var end = note.end
            if index + 1 < notes.count, notes[index + 1].analysis.sung { end = max(note.end, entry(index + 1)) }
            let span = max(0, start - origin)..<min(frames, end - origin)
            guard span.count > 3 * crossfade(sampleRate: sampleRate) else { continue }
            moved.append(Moved(measure: note.measure, beat: note.beat, lyric: note.lyric, midi: note.midi, cents: cents, shift: shift, frames: span))
        }
        // Spans never overlap (a late entry and an early one): the later one starts where the earlier ends.
        for index in moved.indices.dropFirst() where moved[index].frames.lowerBound < moved[index - 1].frames.upperBound {
            let lower = moved[index - 1].frames.upperBound
            moved[index].frames = min(lower, moved[index].frames.upperBound)..<moved[index].frames.upperBound
        }
        return moved.filter { $0.frames.count > 3 * crossfade(sampleRate: sampleRate) }
    }

    /// `samples` with each note of `moved` shifted, crossfaded in and out
    /// inside its span; every other sample as it was. `voice` is the
    /// singer alone (the guide the microphone picked up taken out): only
    /// it is shifted, the guide stays as it was heard.
    public static func apply(_ moved: [Moved], to samples: [Float], voice: [Float]? = nil, sampleRate: Int) throws(StretchError) -> [Float] {
        var out = samples
        let fade = crossfade(sampleRate: sampleRate)
        let voice = voice ?? samples
        for note in moved {
            let lower = max(0, note.frames.lowerBound - context)
            let upper = min(Int64(samples.count), note.frames.upperBound + context)
            let excerpt = Array(voice[Int(lower)..<Int(upper)])
            let shifted = try OfflineStretcher.process(excerpt, sampleRate: sampleRate, stretch: TakeStretch(cents: note.shift))
            for frame in note.frames {
                let fromStart = frame - note.frames.lowerBound
                let toEnd = note.frames.upperBound - 1 - frame
                let weight = Float(min(1, Double(min(fromStart, toEnd)) / Double(fade)))
                let index = Int(frame)
                let heard = samples[index] - voice[index] + shifted[Int(frame - lower)]
                out[index] = samples[index] * (1 - weight) + heard * weight
            }
        }
        return out
    }

    /// What `correct` did.
    public struct Outcome: Sendable {
        /// The new take.
        public var take: TakeRecord
        public var moved: [Moved]
    }

    /// A corrected copy of `take` as a new take of its part (kept and made
    /// the one that plays; the original stays, kept): the notes `selection`
    /// names moved `strength` (0…1) of the way to the written pitch.
    public static func correct(_ take: TakeRecord, in project: Project, selection: Selection, strength: Double) throws(ProjectError) -> Outcome {
        let (corrected, moved) = try corrected(take, in: project, selection: selection, strength: strength)
        return Outcome(take: try store(corrected, copyOf: take, moved: moved.count, in: project), moved: moved)
    }

    /// Why a strength cannot be used (nil: it can): above 0 (0 moves
    /// nothing) and at most 1 (all the way to the written pitch).
    public static func strengthProblem(_ strength: Double) -> String? {
        strength > 0 && strength <= 1 ? nil : String(format: "--strength %g: a number above 0, up to 1 (all the way to the written pitch)%@", strength, strength == 0 ? "; 0 moves nothing" : "")
    }

    /// `take`'s samples with the notes `selection` names put in tune, and
    /// the notes moved; the project is only read (the box runs this in a
    /// process of its own while it writes).
    public static func corrected(_ take: TakeRecord, in project: Project, selection: Selection, strength: Double) throws(ProjectError) -> (samples: [Float], moved: [Moved]) {
        if let problem = strengthProblem(strength) { throw ProjectError(description: problem) }
        if case .measures(let asked) = selection, let schedule = try? Schedule(score: project.score, options: take.scheduleOptions(sampleRate: project.manifest.sampleRate)) {
            let measures = schedule.firstMeasureNumber...(schedule.firstMeasureNumber + schedule.barlines.count - 1)
            guard measures.contains(asked.lowerBound) && measures.contains(asked.upperBound) else {
                let words = asked.count == 1 ? "measure \(asked.lowerBound) is" : "measures \(asked.lowerBound)-\(asked.upperBound) are"
                throw ProjectError(description: "\(words) not in the song (measures \(measures.lowerBound)–\(measures.upperBound))")
            }
        }
        let (report, _) = try TakeReport.analyze(take, in: project)
        // Put in tune from a damaged file, the silence it reads as would be kept as sung.
        if let damage = report.damage { throw ProjectError(description: "take \(take.id) (\(take.part)): its audio is damaged — \(damage); only a take whose audio is whole is put in tune") }
        let decoded: (samples: [Float], sampleRate: Int)
        do { decoded = try AudioFile.readMono(try project.takePath(take)) } catch let error as ProjectError { throw error } catch {
            throw ProjectError(description: "take \(take.id): \(error)")
        }
        let origin = -(take.alignmentOffsetSamples + take.nudgeSamples)
        let moved = plan(report, origin: origin, frames: Int64(decoded.samples.count), sampleRate: decoded.sampleRate, selection: selection, strength: strength)
        guard !moved.isEmpty else {
            // Notes chosen that a weak strength would move less than a cent: said as such.
            let chosen = plan(report, origin: origin, frames: Int64(decoded.samples.count), sampleRate: decoded.sampleRate, selection: selection, strength: 1).count
            if chosen > 0 {
                throw ProjectError(description: String(format: "take %d (%@): %d note%@ chosen, but at --strength %g none would move a cent", take.id, take.part, chosen, chosen == 1 ? "" : "s", strength))
            }
            throw ProjectError(description: "take \(take.id) (\(take.part)): no note to move (\(selection == .flagged ? "none is 15 cents or more off" : "none sung off by a cent or more there"))")
        }
        // The singer alone: the guide the microphone picked up (the other parts as played) is not shifted.
        var voice: [Float]?
        if let part = project.score.parts.firstIndex(where: { $0.name == take.part }),
           let schedule = try? Schedule(score: project.score, options: take.scheduleOptions(sampleRate: decoded.sampleRate)) {
            let others = project.activeTakes(for: schedule.options, loading: .streamed()).takes
            let (alone, gain) = TakeReport.removingGuide(decoded.samples, origin: origin, schedule: schedule, part: part, takes: others)
            if gain > 0 { voice = alone }
        }
        do { return (try apply(moved, to: decoded.samples, voice: voice, sampleRate: decoded.sampleRate), moved) } catch {
            throw ProjectError(description: "take \(take.id): \(error.description)")
        }
    }

    /// `corrected` (the samples of `take` put in tune, `moved` notes) kept
    /// as a new take of its part, at its alignment, tempo and key, and made
    /// the one that plays. The project's writer only.
    public static func store(_ corrected: [Float], copyOf take: TakeRecord, moved: Int, in project: Project) throws(ProjectError) -> TakeRecord {
        let options = take.scheduleOptions(sampleRate: project.manifest.sampleRate)
        let (begun, writer) = try project.beginTake(part: take.part, options: options) { record in
            record.alignmentOffsetSamples = take.alignmentOffsetSamples
            record.nudgeSamples = take.nudgeSamples
            record.range = take.range
            record.calibration = take.calibration
            record.gainDB = take.gainDB
            record.singer = take.singer
            record.name = take.name.map { $0 + " (in tune)" }
            record.note = "take \(take.id) put in tune: \(moved) note\(moved == 1 ? "" : "s") moved (acapella correct)"
        }
        var record = begun
        do throws(FileError) {
            try corrected.withUnsafeBufferPointer { (buffer) throws(FileError) in try writer.write(buffer.baseAddress!, count: buffer.count) }
            try writer.finish()
        } catch {
            try? writer.finish()
            record.state = .discarded
            record.note = "correcting take \(take.id) failed: \(error.description)"
            try? project.store(record)
            throw ProjectError(description: "take \(take.id): the corrected copy could not be written: \(error.description); take \(take.id) is as it was")
        }
        record.frames = Int64(corrected.count)
        record.state = .kept
        try project.store(record)
        try project.activate(record.id)
        return project.manifest.takes.first { $0.id == record.id } ?? record
    }
}
