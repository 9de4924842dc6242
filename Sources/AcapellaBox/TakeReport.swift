public import AcapellaAnalysis
public import AcapellaEngine
public import AcapellaProject
public import AcapellaScore
public import AcapellaStatus
import Foundation

/// What a take tells the singer: every note of the part it covers, sung or
/// missed, how far off in pitch and time, with its measure, beat and word;
/// a score per measure and for the take; and where to punch in (the worst
/// measures, merged into ranges with a measure of margin).
public struct TakeReport: Sendable {
    public struct Note: Sendable {
        /// The tone's index in the part (a tie chain is one tone).
        public var tone: Int
        /// The index in the part's notes of the note it begins with.
        public var note: Int
        /// The measure as sung (repeats written out: what a punch names).
        public var measure: Int
        /// The measure as printed (a repeat's second pass names the first's).
        public var writtenMeasure: Int
        /// The beat in the measure, 1-based ("3", "2.5").
        public var beat: Double
        public var lyric: String?
        public var midi: Int
        /// Where the score puts it (song samples, at the take's tempo).
        public var start: Int64
        public var end: Int64
        public var analysis: NoteAnalysis
        /// Audio the recording lost over the note (a dropout over its entry
        /// or a quarter of it), ms; such a note is not judged: it counts in
        /// no score and no suggestion.
        public var lostMilliseconds: Double?

        /// Whether the note counts (its recording is whole).
        public var judged: Bool { lostMilliseconds == nil }
    }

    public var part: String
    /// The part's index in the score.
    public var partIndex: Int
    public var notes: [Note]
    /// Each measure with notes: its score (the mean of its notes').
    public var measures: [(measure: Int, score: Double)]
    /// The take's score (the mean of its notes').
    public var score: Double
    /// Ranges to punch, the worst first.
    public var suggestions: [ClosedRange<Int>]
    /// The barlines (song samples) and the first's measure number, and the
    /// sample rate: the plot's time axis.
    public var barlines: [Int64] = []
    public var firstMeasure = 1
    public var sampleRate = 48_000
    /// The take's audio held samples that were not numbers (a damaged
    /// file): where, in words; a note whose entry (or a quarter of it) they
    /// are over is not judged, as over a dropout.
    public var damage: String?

    /// Measures scoring below this are suggested for a punch-in.
    public static let punchBelow = 75.0

    /// Analyses `samples` (sample `i` is song sample `origin + i`) as part
    /// `part` of `score` compiled as `schedule` (the take's tempo and key);
    /// only the notes inside `range` (a punch-in's), if given, and inside the audio.
    /// `lost`: song samples the recording lost (its dropouts, zeros in the
    /// take); a note whose entry they touch (from 60 ms before it to 150 ms
    /// in) or a quarter of which they cover is set aside, not judged.
    public static func make(score: Score, schedule: Schedule, part: Int, samples: [Float], origin: Int64, range: Range<Int64>? = nil,
                            lost: [Range<Int64>] = [], analyzer: TakeAnalyzer) -> TakeReport {
        make(score: score, schedule: schedule, part: part, audio: origin..<(origin + Int64(samples.count)), range: range, lost: lost) { targets in
            analyzer.analyze(samples, origin: origin, notes: targets)
        }
    }

    /// The tones of `part` the take holds: inside `audio` (song samples)
    /// and inside `range`, if given.
    static func chosenTones(schedule: Schedule, part: Int, audio: Range<Int64>, range: Range<Int64>?) -> [Int] {
        let tones = schedule.tones[part]
        return tones.indices.filter { index in
            let tone = tones[index]
            guard tone.startSample >= audio.lowerBound, tone.endSample <= audio.upperBound else { return false }
            guard let range else { return true }
            return tone.startSample >= range.lowerBound && tone.endSample <= range.upperBound
        }
    }

    /// The report from the analyses `analyze` gives of the chosen tones
    /// (those inside `audio` and `range`), in order.
    static func make(score: Score, schedule: Schedule, part: Int, audio: Range<Int64>, range: Range<Int64>?, lost: [Range<Int64>],
                     analyze: ([TargetNote]) -> [NoteAnalysis]) -> TakeReport {
        let tones = schedule.tones[part]
        let chosen = chosenTones(schedule: schedule, part: part, audio: audio, range: range)
        let targets = chosen.map { TargetNote(start: tones[$0].startSample, end: tones[$0].endSample, frequency: tones[$0].frequency) }
        let analyses = analyze(targets)
        let meterMap = score.meterMap
        let notes = zip(chosen, analyses).map { index, analysis -> Note in
            let note = score.parts[part].notes[schedule.toneNotes[part][index]]
            var (measure, offset) = meterMap.position(ofTick: note.startTick)
            let meter = meterMap.meter(atMeasure: measure)
            if measure == 0 && score.pickupTicks > 0 { offset += meter.measureTicks - score.pickupTicks }
            let beat = 1 + Double(offset) / Double(meter.beatTicks)
            // Set aside when the loss touches the entry (60 ms before the
            // note to 150 ms in, where the entry is read) or a quarter of it.
            let rate = Int64(schedule.options.sampleRate)
            let (start, end) = (tones[index].startSample, tones[index].endSample)
            func overlap(_ span: Range<Int64>) -> Int64 { lost.reduce(0) { $0 + max(0, min($1.upperBound, span.upperBound) - max($1.lowerBound, span.lowerBound)) } }
            let lostSamples = overlap((start - rate * 6 / 100)..<end)
            let setAside = overlap((start - rate * 6 / 100)..<min(end, start + rate * 15 / 100)) > 0 || overlap(start..<end) * 4 >= end - start
            return Note(tone: index, note: schedule.toneNotes[part][index], measure: measure, writtenMeasure: score.writtenMeasure(measure), beat: beat, lyric: note.lyric(verse: 1)?.text, midi: tones[index].midi,
                        start: tones[index].startSample, end: tones[index].endSample,
                        analysis: analysis, lostMilliseconds: setAside ? Double(lostSamples) * 1_000 / Double(rate) : nil)
        }
        var byMeasure: [Int: [Double]] = [:]
        for note in notes where note.judged { byMeasure[note.measure, default: []].append(note.analysis.score) }
        let measures = byMeasure.keys.sorted().map { ($0, byMeasure[$0]!.reduce(0, +) / Double(byMeasure[$0]!.count)) }
        let judged = notes.filter(\.judged)
        let total = judged.isEmpty ? 0 : judged.reduce(0) { $0 + $1.analysis.score } / Double(judged.count)
        var report = TakeReport(part: score.parts[part].name, partIndex: part, notes: notes, measures: measures, score: total,
                                suggestions: Self.suggestions(measures, first: schedule.firstMeasureNumber, last: schedule.firstMeasureNumber + schedule.barlines.count - 1))
        report.barlines = schedule.barlines
        report.firstMeasure = schedule.firstMeasureNumber
        report.sampleRate = schedule.options.sampleRate
        return report
    }

    /// A take of `project` analysed in bounded memory, however long it is:
    /// its file read twice in order a block at a time beside the guide the
    /// singer heard (the other parts, their takes streamed where they have
    /// them), rendered again as it goes. The first pass finds how much of
    /// the guide the microphone picked up (least squares) and the take's
    /// level at each note's middle; the second takes the guide out and
    /// reads the notes a stretch at a time (`TakeAnalyzer`). Every note of
    /// the part the take covers, at the tempo and key it was sung in. Also
    /// returns the guide's level found in it. A take sung at once with
    /// others has each of them and the guide taken out on its own
    /// (`Unmixing`; `unmixing: false`, for comparison, fits them as one).
    public static func analyze(_ take: TakeRecord, in project: Project, stretchSeconds: Int = 30, unmixing unmix: Bool = true) throws(ProjectError) -> (report: TakeReport, guide: Double) {
        guard take.state != .recording else { throw ProjectError(description: "take \(take.id) is still being recorded") }
        guard let part = project.score.parts.firstIndex(where: { $0.name == take.part }) else {
            throw ProjectError(description: "take \(take.id) is of part '\(take.part)', which the song no longer has")
        }
        let file: SoundFileBlockSource
        do { file = try SoundFileBlockSource(path: try project.takePath(take)) } catch let error as ProjectError { throw error } catch {
            throw ProjectError(description: "take \(take.id): \(error)")
        }
        let schedule: Schedule
        do { schedule = try Schedule(score: project.score, options: take.scheduleOptions(sampleRate: file.sampleRate)) } catch {
            throw ProjectError(description: "take \(take.id): the song cannot be timed at its tempo (\(take.tempoScale))")
        }
        // Take frame f holds song sample f − offset − nudge.
        let origin = -(take.alignmentOffsetSamples + take.nudgeSamples)
        let frames = Int(file.frameCount)
        let audio = origin..<(origin + Int64(frames))
        let tones = schedule.tones[part]
        let targets = chosenTones(schedule: schedule, part: part, audio: audio, range: take.range?.samples)
            .map { TargetNote(start: tones[$0].startSample, end: tones[$0].endSample, frequency: tones[$0].frequency) }
        let analyzer = TakeAnalyzer(sampleRate: file.sampleRate)
        // The guide as the singer heard it: their own part muted, the others' takes where they have them.
        var mixes = PartMix.spread(count: schedule.tones.count)
        mixes[part].muted = true
        let playing = project.activeTakes(for: schedule.options, loading: .streamed()).takes
        func guide() -> GuideReader {
            var others = playing
            if part < others.count { others[part] = .none }
            return GuideReader(schedule: schedule, mixes: mixes, takes: others)
        }
        // Sung at once with others (`ensemble`): each other singer's microphone and the guide are
        // fitted on their own where this voice is not, and taken out as the take is read (`Unmixing`).
        let unmixing = unmix ? Unmixing.fit(take, part: part, in: project, schedule: schedule, file: file, playing: playing) : nil
        let read: (Int, Int, UnsafeMutablePointer<Float>) -> Int = { from, count, into in
            unmixing.map { $0.read(file, from: from, count: count, into: into) } ?? file.read(from: Int64(from), count: count, into: into)
        }

        // Pass 1: the guide's share of the take, and each note's middle (its level window) in sums.
        var dot = 0.0, power = 0.0, energy = 0.0
        let middles = targets.map { analyzer.levelWindow(at: ($0.start + $0.end) / 2).clamped(to: audio) }
        var middleSums = [(taken: Double, mixed: Double, played: Double, count: Int)](repeating: (0, 0, 0, 0), count: middles.count)
        var nextMiddle = 0
        let block = 65_536
        var taken = [Float](repeating: 0, count: block)
        var played = [Float](repeating: 0, count: block)
        // Unmixed, the guide is out already: nothing more is fitted here.
        let firstGuide: GuideReader? = unmixing == nil ? guide() : nil
        func covers(_ song: Int64) -> Bool { firstGuide?.covers(song) ?? false }
        var at = 0
        while at < frames {
            let count = min(block, frames - at)
            let got = taken.withUnsafeMutableBufferPointer { read(at, count, $0.baseAddress!) }
            guard got > 0 else { break }
            played.withUnsafeMutableBufferPointer { firstGuide?.read(from: origin + Int64(at), count: got, into: $0.baseAddress!) }
            for index in 0..<got where covers(origin + Int64(at + index)) {
                let (t, g) = (Double(taken[index]), Double(played[index]))
                dot += t * g
                power += g * g
                energy += t * t
            }
            let span = (origin + Int64(at))..<(origin + Int64(at + got))
            while nextMiddle < middles.count, middles[nextMiddle].upperBound <= span.lowerBound { nextMiddle += 1 }
            var note = nextMiddle
            while note < middles.count, middles[note].lowerBound < span.upperBound {
                for song in max(middles[note].lowerBound, span.lowerBound)..<min(middles[note].upperBound, span.upperBound) {
                    let index = Int(song - span.lowerBound)
                    let (t, g) = (Double(taken[index]), covers(song) ? Double(played[index]) : 0)
                    middleSums[note].taken += t * t
                    middleSums[note].mixed += t * g
                    middleSums[note].played += g * g
                    middleSums[note].count += 1
                }
                note += 1
            }
            at += got
        }
        var gain = 0.0
        // Only a real bleed: the guide must explain a share of the take.
        if power > 0, energy > 0, dot / power > 0.01, dot / power * dot / energy > 0.01 { gain = dot / power }
        let typical = TakeAnalyzer.typicalLevel(middleSums.map { sums in
            sums.count > 0 ? (max(0, sums.taken - 2 * gain * sums.mixed + gain * gain * sums.played) / Double(sums.count)).squareRoot() : 0
        })

        // Pass 2: the notes, a stretch at a time, the guide taken out as the take is read.
        let secondGuide: GuideReader? = unmixing == nil ? guide() : nil
        let cleaned: (Int, Int, UnsafeMutablePointer<Float>) -> Int = { from, count, into in
            let got = read(from, count, into)
            guard gain > 0, got > 0, let secondGuide else { return got }
            var heard = [Float](repeating: 0, count: got)
            heard.withUnsafeMutableBufferPointer { secondGuide.read(from: origin + Int64(from), count: got, into: $0.baseAddress!) }
            for index in 0..<got where secondGuide.covers(origin + Int64(from + index)) { into[index] -= Float(gain) * heard[index] }
            return got
        }
        // Dropouts are where the recording put them; a nudge moves the take.
        var lost = take.dropouts.map { ($0.samples.lowerBound - take.nudgeSamples)..<($0.samples.upperBound - take.nudgeSamples) }
        // Samples that were not numbers (a damaged file, read as silence) are lost audio too, named.
        let damage = file.damage
        if frames > 0, Int64(damage.count) >= Int64(frames) {
            throw ProjectError(description: "take \(take.id) (\(take.part)): every sample of its audio is damaged (not a number); there is nothing to analyse")
        }
        lost += damage.spans.map { (origin + $0.lowerBound)..<(origin + $0.upperBound) }
        var report = make(score: project.score, schedule: schedule, part: part, audio: audio, range: take.range?.samples, lost: lost) { notes in
            analyzer.analyze(frameCount: frames, origin: origin, notes: notes, typical: typical, stretchSeconds: stretchSeconds, read: cleaned)
        }
        guard !report.notes.isEmpty else { throw ProjectError(description: "take \(take.id) covers none of \(take.part)'s notes") }
        if !damage.isEmpty { report.damage = damage.describe(sampleRate: file.sampleRate) }
        return (report, unmixing?.gains[0] ?? gain)
    }

    /// The take with the guide it was sung to taken out: the box knows what
    /// it played (the other parts, `takes` where they have them), and a take
    /// is aligned so that what the microphone heard of the speakers at song
    /// sample s sits at s too. The guide is rendered again, its level in the
    /// take found by least squares, and subtracted — a singer's own voice
    /// does not correlate with the other parts. Returns the samples and the
    /// gain found (0: nothing to take out).
    public static func removingGuide(_ samples: [Float], origin: Int64, schedule: Schedule, part: Int, takes: [PartTakes]?) -> (samples: [Float], gain: Double) {
        var mixes = PartMix.spread(count: schedule.tones.count)
        mixes[part].muted = true
        var others = takes
        if others != nil, part < others!.count { others![part] = .none }
        let guide = OfflineRender.render(schedule, mixes: mixes, takes: others)
        // Take sample i meets guide frame i + shift, where both exist.
        let shift = Int(origin - guide.firstSample)
        let overlap = max(0, -shift)..<max(max(0, -shift), min(samples.count, guide.left.count - shift))
        var dot = 0.0
        var power = 0.0
        var energy = 0.0
        for index in overlap {
            let played = Double((guide.left[index + shift] + guide.right[index + shift]) / 2)
            let sung = Double(samples[index])
            dot += sung * played
            power += played * played
            energy += sung * sung
        }
        guard power > 0, energy > 0 else { return (samples, 0) }
        let gain = dot / power
        // Only a real bleed: the guide must explain a share of the take.
        guard gain > 0.01, gain * dot / energy > 0.01 else { return (samples, 0) }
        var cleaned = samples
        for index in overlap { cleaned[index] -= Float(gain) * (guide.left[index + shift] + guide.right[index + shift]) / 2 }
        return (cleaned, gain)
    }

    /// The measures below `punchBelow`, merged when at most one measure
    /// apart, widened by a measure each side (inside the song), the range
    /// holding the worst measure first.
    static func suggestions(_ measures: [(measure: Int, score: Double)], first: Int, last: Int) -> [ClosedRange<Int>] {
        let weak = measures.filter { $0.score < punchBelow }
        var ranges: [(range: ClosedRange<Int>, worst: Double)] = []
        for measure in weak {
            if let previous = ranges.last, measure.measure - previous.range.upperBound <= 2 {
                ranges[ranges.count - 1] = (previous.range.lowerBound...measure.measure, min(previous.worst, measure.score))
            } else {
                ranges.append((measure.measure...measure.measure, measure.score))
            }
        }
        return ranges.sorted { $0.worst < $1.worst }.map { max(first, $0.range.lowerBound - 1)...min(last, $0.range.upperBound + 1) }
    }

    /// The report in a singer's words: the summary, the notes worth a word
    /// (missed, 15 cents or more off, 40 ms or more early or late), where to
    /// punch in, and the vibrato.
    public var lines: [String] {
        let judged = notes.filter(\.judged)
        let sung = judged.filter(\.analysis.sung).count
        let setAside = notes.count - judged.count
        var lines = [String(format: "%@: %.0f/100 — %d of %d notes sung", part, score, sung, judged.count)
            + (setAside > 0 ? " (\(setAside) more not judged: the recording lost audio there)" : "")]
        if let damage { lines.append("its audio is damaged: " + damage) }
        for note in notes {
            let place = "m. \(note.writtenMeasure), beat \(Self.beatText(note.beat))" + (note.lyric.map { ", '\($0)'" } ?? "")
            let analysis = note.analysis
            if let lost = note.lostMilliseconds {
                lines.append(String(format: "%@: not judged — the recording lost %.0f ms there", place, lost))
                continue
            }
            guard analysis.sung else {
                lines.append("\(place): missed")
                continue
            }
            var said: [String] = []
            if let cents = analysis.cents, abs(cents) >= 15 { said.append(String(format: "%.0f cents %@", abs(cents), cents < 0 ? "flat" : "sharp")) }
            if let onset = analysis.onsetMilliseconds, abs(onset) >= 40 { said.append(String(format: "entry %.0f ms %@", abs(onset), onset < 0 ? "early" : "late")) }
            if !said.isEmpty { lines.append("\(place): " + said.joined(separator: "; ")) }
        }
        if suggestions.isEmpty {
            lines.append("nothing to punch in: every measure scores \(Int(Self.punchBelow)) or more")
        } else {
            lines.append("punch in: " + suggestions.map { "mm. \($0.lowerBound)-\($0.upperBound)" }.joined(separator: ", "))
        }
        let vibrato = notes.compactMap { note in note.analysis.vibratoRate.map { ($0, note.analysis.vibratoExtent ?? 0) } }
        if !vibrato.isEmpty {
            let rate = vibrato.map(\.0).reduce(0, +) / Double(vibrato.count)
            let extent = vibrato.map(\.1).reduce(0, +) / Double(vibrato.count)
            lines.append(String(format: "vibrato on %d of %d notes: %.1f Hz, ±%.0f cents", vibrato.count, sung, rate, extent))
        }
        return lines
    }

    /// The short summary the box shows at review: the score, notes sung,
    /// the two worst notes that have something to say, the first punch.
    public func summary(takeID: Int) -> TakeSummary {
        let judged = notes.filter(\.judged)
        let worst = judged.filter { note in
            let analysis = note.analysis
            return !analysis.sung || abs(analysis.cents ?? 0) >= 15 || abs(analysis.onsetMilliseconds ?? 0) >= 40
        }.sorted { $0.analysis.score < $1.analysis.score }.prefix(2).map { note -> String in
            let word = note.lyric.map { " " + String($0.prefix(6)) } ?? ""
            let analysis = note.analysis
            guard analysis.sung else { return "m\(note.writtenMeasure)\(word) missed" }
            let cents = analysis.cents ?? 0
            let onset = analysis.onsetMilliseconds ?? 0
            // The larger fault, each against where it starts to count.
            if abs(cents) / 15 >= abs(onset) / 40 { return "m\(note.writtenMeasure)\(word) \(cents > 0 ? "+" : "")\(Int(cents.rounded()))c" }
            return "m\(note.writtenMeasure)\(word) \(onset > 0 ? "late" : "early") \(Int(abs(onset).rounded()))ms"
        }
        // A damaged take says so first (the box's review line, the small display).
        let said = damage != nil ? ["audio damaged"] + worst.prefix(1) : Array(worst)
        return TakeSummary(takeID: takeID, score: Int(score.rounded()), sung: judged.filter(\.analysis.sung).count, notes: judged.count,
                           worst: said, punch: suggestions.first)
    }

    /// For the web page: each note by the id its group has in the engraved
    /// score (`n1-5`), its score, whether sung, cents and entry; the take's
    /// score and the ranges to punch.
    /// What the box reads from `acapella analyze --for-box`: the summary
    /// and the page's notes, one object.
    public func boxJSON(takeID: Int) -> [String: Any] {
        let summary = summary(takeID: takeID)
        return ["summary": ["take": summary.takeID, "score": summary.score, "sung": summary.sung, "notes": summary.notes, "worst": summary.worst,
                            "punch": summary.punch.map { [$0.lowerBound, $0.upperBound] } ?? []] as [String: Any],
                "page": pageJSON(takeID: takeID)]
    }

    /// The summary and the page's JSON (bytes, keys sorted) from `boxJSON`
    /// as printed; nil when it is not that.
    public static func parseBoxJSON(_ bytes: [UInt8]) -> (summary: TakeSummary, page: [UInt8])? {
        guard let object = lastJSONLine(bytes),
              let summary = object["summary"] as? [String: Any], let page = object["page"],
              let take = summary["take"] as? Int, let score = summary["score"] as? Int, let sung = summary["sung"] as? Int,
              let notes = summary["notes"] as? Int, let worst = summary["worst"] as? [String], let punch = summary["punch"] as? [Int],
              punch.count == 0 || (punch.count == 2 && punch[0] <= punch[1]),
              let pageBytes = try? JSONSerialization.data(withJSONObject: page, options: [.sortedKeys])
        else { return nil }
        return (TakeSummary(takeID: take, score: score, sung: sung, notes: notes, worst: worst, punch: punch.count == 2 ? punch[0]...punch[1] : nil),
                [UInt8](pageBytes))
    }

    /// The object on the last line of a child's output that is one (what
    /// the project's opening said, on stderr, comes before it), if any.
    static func lastJSONLine(_ bytes: [UInt8]) -> [String: Any]? {
        let line = bytes.split(separator: UInt8(ascii: "\n")).last { $0.first == UInt8(ascii: "{") } ?? []
        return try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
    }

    public func pageJSON(takeID: Int) -> [String: Any] {
        func value(_ number: Double?) -> Any { number.map { ($0 * 10).rounded() / 10 } ?? NSNull() }
        return ["take": takeID, "part": part, "score": value(score), "punch": suggestions.map { [$0.lowerBound, $0.upperBound] },
                "notes": notes.map { note in
                    ["id": Score.noteID(part: partIndex, note: note.note), "measure": note.measure, "score": value(note.analysis.score), "sung": note.analysis.sung, "judged": note.judged,
                     "cents": value(note.analysis.cents), "onsetMilliseconds": value(note.analysis.onsetMilliseconds)] as [String: Any]
                }]
    }

    /// The plot: time across (measure numbers at the barlines), pitch up
    /// (a semitone a line); each written note a bar with its word; the sung
    /// pitch over it, green when the note's centre is within 10 cents,
    /// amber within 25, red beyond; a missed note's bar struck through.
    public func svg() -> String {
        guard let first = notes.first, let last = notes.last else { return "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n" }
        let rate = Double(sampleRate)
        let from = first.start - Int64(rate / 2)
        let to = last.end + Int64(rate / 2)
        let pixelsPerSecond = 80.0
        let width = Double(to - from) / rate * pixelsPerSecond + 60
        let low = (notes.map(\.midi).min() ?? 60) - 2
        let high = (notes.map(\.midi).max() ?? 60) + 2
        let semitone = 18.0
        let top = 40.0
        let height = top + Double(high - low) * semitone + 50
        func x(_ sample: Int64) -> Double { 50 + Double(sample - from) / rate * pixelsPerSecond }
        func y(_ midi: Double) -> Double { top + (Double(high) - midi) * semitone }
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        }
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(number(width))\" height=\"\(number(height))\" font-family=\"sans-serif\" font-size=\"11\">\n"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
        out += "<text x=\"50\" y=\"18\" font-size=\"14\" font-weight=\"bold\">\(escape(part)): \(Int(score.rounded()))/100</text>\n"
        // Semitone lines, C's labelled.
        for midi in low...high {
            out += "<line x1=\"45\" x2=\"\(number(width))\" y1=\"\(number(y(Double(midi))))\" y2=\"\(number(y(Double(midi))))\" stroke=\"\(midi % 12 == 0 ? "#bbb" : "#eee")\"/>\n"
            if midi % 12 == 0 { out += "<text x=\"4\" y=\"\(number(y(Double(midi)) + 4))\">C\(midi / 12 - 1)</text>\n" }
        }
        // Barlines with their measure numbers.
        for (index, barline) in barlines.enumerated() where barline >= from && barline <= to {
            out += "<line class=\"barline\" x1=\"\(number(x(barline)))\" x2=\"\(number(x(barline)))\" y1=\"\(number(top - 8))\" y2=\"\(number(height - 40))\" stroke=\"#999\"/>\n"
            out += "<text x=\"\(number(x(barline) + 3))\" y=\"\(number(top - 10))\">\(firstMeasure + index)</text>\n"
        }
        for note in notes {
            let bar = y(Double(note.midi))
            guard note.judged else {
                out += "<rect class=\"note lost\" x=\"\(number(x(note.start)))\" y=\"\(number(bar - 4))\" width=\"\(number(max(2, x(note.end) - x(note.start) - 1)))\" height=\"8\" fill=\"none\" stroke=\"#999\" stroke-dasharray=\"3 2\"/>\n"
                continue
            }
            out += "<rect class=\"note\(note.analysis.sung ? "" : " missed")\" x=\"\(number(x(note.start)))\" y=\"\(number(bar - 4))\" width=\"\(number(max(2, x(note.end) - x(note.start) - 1)))\" height=\"8\" fill=\"#c9d6ea\"/>\n"
            if !note.analysis.sung {
                out += "<line x1=\"\(number(x(note.start)))\" x2=\"\(number(x(note.end)))\" y1=\"\(number(bar))\" y2=\"\(number(bar))\" stroke=\"#888\" stroke-width=\"2\"/>\n"
            }
            if let lyric = note.lyric {
                out += "<text x=\"\(number(x(note.start)))\" y=\"\(number(height - 20))\">\(escape(lyric))</text>\n"
            }
            // The sung pitch, a segment a frame, coloured by the note's error
            // (its centre: vibrato swings around it and is not an error).
            let curve = note.analysis.curve
            let error = abs(note.analysis.cents ?? 0)
            let colour = error <= 10 ? "#1a7f37" : error <= 25 ? "#b08800" : "#c01c28"
            for (a, b) in zip(curve, curve.dropFirst()) where b.sample - a.sample <= Int64(rate * 0.02) {
                out += "<line class=\"sung\" x1=\"\(number(x(a.sample)))\" y1=\"\(number(y(Double(note.midi) + a.cents / 100)))\" x2=\"\(number(x(b.sample)))\" y2=\"\(number(y(Double(note.midi) + b.cents / 100)))\" stroke=\"\(colour)\" stroke-width=\"2\"/>\n"
            }
        }
        return out + "</svg>\n"
    }

    static func beatText(_ beat: Double) -> String {
        beat == beat.rounded() ? "\(Int(beat))" : String(format: "%.2g", beat)
    }

    /// The report as JSON (docs/guide/analysis.md documents the shape).
    public var json: [String: Any] {
        func value(_ number: Double?) -> Any { number.map { ($0 * 10).rounded() / 10 } ?? NSNull() }
        return [
            "part": part,
            "score": value(score),
            "notes": notes.map { note -> [String: Any] in
                ["tone": note.tone, "measure": note.measure, "writtenMeasure": note.writtenMeasure, "beat": note.beat, "lyric": note.lyric ?? NSNull(), "midi": note.midi,
                 "sung": note.analysis.sung, "cents": value(note.analysis.cents), "stability": value(note.analysis.stability),
                 "vibratoHz": value(note.analysis.vibratoRate), "vibratoCents": value(note.analysis.vibratoExtent),
                 "onsetMilliseconds": value(note.analysis.onsetMilliseconds), "score": value(note.analysis.score),
                 "lostMilliseconds": value(note.lostMilliseconds)]
            },
            "measures": measures.map { ["measure": $0.measure, "score": value($0.score)] },
            "punch": suggestions.map { [$0.lowerBound, $0.upperBound] },
        ]
    }
}

/// What the singer heard of the other parts, rendered again and read
/// forward in song samples (the two channels' mean), a period at a time:
/// the same renderer as the box, its streamed takes read by a butler
/// serviced before each period. Asked for an earlier place, it starts over.
final class GuideReader {
    private let schedule: Schedule
    private let mixes: [PartMix]
    private let takes: [PartTakes]
    private let butler: TakeStreamButler?
    private var renderer: SongRenderer
    private let left: UnsafeMutablePointer<Float>
    private let right: UnsafeMutablePointer<Float>
    private static let period = 1_024
    /// The song samples the render covers.
    private let span: Range<Int64>

    init(schedule: Schedule, mixes: [PartMix], takes: [PartTakes]) {
        self.schedule = schedule
        self.mixes = mixes
        self.takes = takes
        butler = takes.contains { $0.layers.contains { $0.stream != nil } } ? TakeStreamButler(cue: StreamCue()) : nil
        renderer = Self.renderer(schedule, mixes, takes, butler)
        left = .allocate(capacity: Self.period)
        right = .allocate(capacity: Self.period)
        span = schedule.startSample..<(schedule.startSample + Int64(OfflineRender.frameCount(schedule)))
    }

    deinit {
        left.deallocate()
        right.deallocate()
    }

    private static func renderer(_ schedule: Schedule, _ mixes: [PartMix], _ takes: [PartTakes], _ butler: TakeStreamButler?) -> SongRenderer {
        var renderer = SongRenderer(schedule: schedule, mixes: mixes, takes: takes, maximumFrames: period)
        if let butler {
            renderer.cue = butler.cue
            butler.watch(takes, fade: Int64(renderer.rampSamples))
        }
        return renderer
    }

    /// Whether the guide sounds at `song` (inside its render).
    func covers(_ song: Int64) -> Bool { span.contains(song) }

    /// The song sample of `left[0]`/`right[0]`, and how many frames the
    /// last period rendered there.
    private var periodStart: Int64 = .min
    private var periodFrames = 0

    /// Song samples `from ..< from + count` of the guide into `destination`
    /// (zeros outside the render).
    func read(from: Int64, count: Int, into destination: UnsafeMutablePointer<Float>) {
        if from < periodStart {
            renderer = Self.renderer(schedule, mixes, takes, butler)
            periodStart = .min
            periodFrames = 0
        }
        var done = 0
        while done < count {
            let song = from + Int64(done)
            guard span.contains(song) else {
                destination[done] = 0
                done += 1
                continue
            }
            // The last period rendered holds it: copy what it has.
            if song >= periodStart, song < periodStart + Int64(periodFrames) {
                let index = Int(song - periodStart)
                let take = min(count - done, periodFrames - index)
                for offset in 0..<take { destination[done + offset] = (left[index + offset] + right[index + offset]) / 2 }
                done += take
                continue
            }
            // Render the next period (skipping forward as far as asked).
            let frames = Int(min(Int64(Self.period), span.upperBound - renderer.position))
            if let butler {
                butler.cue.publish(position: renderer.position, loop: nil, next: nil)
                butler.service()
            }
            periodStart = renderer.position
            periodFrames = frames
            renderer.render(left: left, right: right, frames: frames)
        }
    }
}
