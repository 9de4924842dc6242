public import AcapellaProject
import AcapellaScore
import Foundation

/// How the choir sounded together (`acapella blend`): the parts' playing
/// takes, each analysed against its own notes (`TakeReport`), set beside
/// each other wherever the score has them sing together.
///
/// - **Chords**: at every moment two or more parts sing written notes that
///   each part's take measured, each upper part's interval above the lowest
///   sounding part (the bass of the chord) as sung, against equal
///   temperament (the written interval) and against just intonation (the
///   interval's 5-limit ratio above the bass) — in cents. As in the studies
///   of unaccompanied SATB singing (Dai & Dixon, "Analysis of interactive
///   intonation in unaccompanied SATB ensembles", ISMIR 2017), a note's
///   pitch is its measured centre and the interval the difference of two
///   centres.
/// - **Drift**: the ensemble's pitch at each chord (the mean of the parts'
///   centres against the written notes), its line over the song (cents a
///   minute, least squares), and each part's offset from the ensemble.
/// - **Entries**: where parts begin a note on the same written sample, how
///   far apart they entered (ms), and each part's lead or lag against the
///   median of the others.
/// - **Balance**: each take's loudness (EBU R 128 integrated, LUFS) against
///   the parts' mean.
public struct Blend: Sendable {
    /// One part's share.
    public struct Part: Sendable {
        public var name: String
        public var take: Int
        /// Mean offset from the ensemble over the chords (cents, + sharp).
        public var offsetCents: Double
        /// Its line over the song: cents a minute.
        public var driftCentsPerMinute: Double
        /// Mean lead (−) or lag (+) against the others at common entries, ms.
        public var entryMilliseconds: Double
        /// Chords it sang in, and common entries it made.
        public var chords = 0
        public var entries = 0
        /// Integrated loudness of its take, LUFS, and against the parts' mean (dB).
        public var loudnessLUFS: Double?
        public var balanceDB: Double?
    }

    /// One moment the parts sing together.
    public struct Chord: Sendable {
        /// Song sample it begins on, and its measure (as printed) and beat.
        public var start: Int64
        public var measure: Int
        public var beat: Double
        /// Per part index (nil: not singing or not measured): written MIDI
        /// note and the measured centre against it, cents.
        public var midi: [Int?]
        public var cents: [Double?]
        /// The lowest sounding part's index.
        public var bass: Int
        /// The ensemble's pitch: the mean of the centres.
        public var ensembleCents: Double
        /// Each upper part's interval above the bass, sung against equal
        /// temperament and against just intonation, cents (nil: the bass,
        /// or not singing).
        public var againstEqual: [Double?]
        public var againstJust: [Double?]
        /// Per part: the note's id in the engraved score (`n<part>-<note>`,
        /// as the take analysis names it), for the page's "together" view.
        public var noteIDs: [String?] = []
    }

    /// Parts singing a note from the same written sample.
    public struct Entry: Sendable {
        public var start: Int64
        public var measure: Int
        /// Per part: its entry against the written one, ms (nil: not entering here).
        public var milliseconds: [Double?]
        /// The latest less the earliest, ms.
        public var spreadMilliseconds: Double
    }

    public var parts: [Part]
    public var chords: [Chord]
    public var entries: [Entry]
    /// The ensemble's line: cents a minute, and where it began and ended (cents).
    public var ensembleDriftCentsPerMinute: Double
    public var ensembleStartCents: Double
    public var ensembleEndCents: Double
    public var sampleRate: Int
    /// Part index → name (the parts with takes).
    public var names: [Int: String] = [:]
    /// Takes that could not be read, and why (one line each).
    public var leftOut: [String] = []

    /// A part off the ensemble by this much in a chord is named (cents).
    public static let namedCents = 15.0
    /// A part entering this much from the others is named (ms).
    public static let namedMilliseconds = 40.0

    /// Just intonation above the bass for each interval class (semitones
    /// mod 12), cents: 5-limit ratios (16/15, 9/8, 6/5, 5/4, 4/3, 45/32,
    /// 3/2, 8/5, 5/3, 9/5, 15/8).
    public static let justCents: [Double] = [0, 111.731, 203.910, 315.641, 386.314, 498.045, 590.224, 701.955, 813.686, 884.359, 1_017.596, 1_088.269]

    /// The blend of `reports` (one per part that has a playing take, with
    /// its take id; the part's index in the report) and their takes'
    /// loudness (nil where it could not be measured).
    public static func make(reports: [(report: TakeReport, take: Int, loudness: Double?)], partCount: Int, sampleRate: Int) -> Blend {
        let byPart = Dictionary(reports.map { ($0.report.partIndex, $0) }, uniquingKeysWith: { first, _ in first })
        // Every written note start of every part: where a chord may change.
        var starts = Set<Int64>()
        for (report, _, _) in reports { for note in report.notes where note.judged { starts.insert(note.start) } }
        var chords: [Chord] = []
        var lastNotes: [Int?] = []
        for start in starts.sorted() {
            var midi = [Int?](repeating: nil, count: partCount)
            var cents = [Double?](repeating: nil, count: partCount)
            var noteIndex = [Int?](repeating: nil, count: partCount)
            var first: TakeReport.Note?
            var measuredBegins = false
            for (part, entry) in byPart {
                guard let note = entry.report.notes.first(where: { $0.start <= start && start < $0.end && $0.judged }) else { continue }
                if note.start == start, first == nil { first = note }
                guard let centre = note.analysis.cents, note.analysis.sung else { continue }
                midi[part] = note.midi
                cents[part] = centre
                noteIndex[part] = note.note
                if note.start == start { measuredBegins = true }
            }
            let singing = cents.indices.filter { cents[$0] != nil }
            // A new chord only where a measured note begins, with other notes than the chord before.
            guard singing.count >= 2, measuredBegins, noteIndex != lastNotes, let bass = singing.min(by: { (midi[$0]!, -$0) < (midi[$1]!, -$1) }) else { continue }
            lastNotes = noteIndex
            let ensemble = singing.map { cents[$0]! }.reduce(0, +) / Double(singing.count)
            var equal = [Double?](repeating: nil, count: partCount)
            var just = [Double?](repeating: nil, count: partCount)
            for part in singing where part != bass {
                let written = Double(midi[part]! - midi[bass]!) * 100
                let sung = written + cents[part]! - cents[bass]!
                equal[part] = sung - written
                let semitones = midi[part]! - midi[bass]!
                let octaves = Double(semitones / 12) * 1_200
                just[part] = sung - (octaves + justCents[((semitones % 12) + 12) % 12])
            }
            chords.append(Chord(start: start, measure: first?.writtenMeasure ?? 0, beat: first?.beat ?? 1, midi: midi, cents: cents, bass: bass,
                                ensembleCents: ensemble, againstEqual: equal, againstJust: just,
                                noteIDs: noteIndex.indices.map { part in noteIndex[part].map { Score.noteID(part: part, note: $0) } }))
        }
        // Entries together.
        var entries: [Entry] = []
        for start in starts.sorted() {
            var milliseconds = [Double?](repeating: nil, count: partCount)
            var measure = 0
            for (part, entry) in byPart {
                guard let note = entry.report.notes.first(where: { $0.start == start && $0.judged }), let onset = note.analysis.onsetMilliseconds else { continue }
                milliseconds[part] = onset
                measure = note.writtenMeasure
            }
            let values = milliseconds.compactMap { $0 }
            guard values.count >= 2 else { continue }
            entries.append(Entry(start: start, measure: measure, milliseconds: milliseconds, spreadMilliseconds: values.max()! - values.min()!))
        }
        // The ensemble's line and each part's.
        let minutes = { (sample: Int64) in Double(sample) / Double(sampleRate) / 60 }
        let ensembleLine = line(chords.map { (minutes($0.start), $0.ensembleCents) })
        let loudness = reports.compactMap(\.loudness)
        let meanLoudness = loudness.isEmpty ? nil : loudness.reduce(0, +) / Double(loudness.count)
        var parts: [Part] = []
        for (report, take, lufs) in reports.sorted(by: { $0.report.partIndex < $1.report.partIndex }) {
            let index = report.partIndex
            let offsets = chords.compactMap { chord in chord.cents[index].map { $0 - chord.ensembleCents } }
            let own = line(chords.compactMap { chord in chord.cents[index].map { (minutes(chord.start), $0) } })
            var lags: [Double] = []
            for entry in entries {
                guard let mine = entry.milliseconds[index] else { continue }
                let others = entry.milliseconds.indices.filter { $0 != index }.compactMap { entry.milliseconds[$0] }
                guard !others.isEmpty else { continue }
                lags.append(mine - median(others))
            }
            parts.append(Part(name: report.part, take: take, offsetCents: offsets.isEmpty ? 0 : offsets.reduce(0, +) / Double(offsets.count),
                              driftCentsPerMinute: own.slope, entryMilliseconds: lags.isEmpty ? 0 : lags.reduce(0, +) / Double(lags.count),
                              chords: offsets.count, entries: lags.count,
                              loudnessLUFS: lufs, balanceDB: lufs.flatMap { value in meanLoudness.map { value - $0 } }))
        }
        let first = chords.first.map { ensembleLine.at(minutes($0.start)) } ?? 0
        let last = chords.last.map { ensembleLine.at(minutes($0.start)) } ?? 0
        return Blend(parts: parts, chords: chords, entries: entries, ensembleDriftCentsPerMinute: ensembleLine.slope,
                     ensembleStartCents: first, ensembleEndCents: last, sampleRate: sampleRate,
                     names: Dictionary(reports.map { ($0.report.partIndex, $0.report.part) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The median of `values` (the mean of the middle two when even; 0 when none).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// The least-squares line through `points` (x, y).
    static func line(_ points: [(Double, Double)]) -> (slope: Double, intercept: Double, at: (Double) -> Double) {
        guard points.count >= 2 else {
            let mean = points.first?.1 ?? 0
            return (0, mean, { _ in mean })
        }
        let n = Double(points.count)
        let mx = points.map(\.0).reduce(0, +) / n
        let my = points.map(\.1).reduce(0, +) / n
        let sxx = points.map { ($0.0 - mx) * ($0.0 - mx) }.reduce(0, +)
        let sxy = points.map { ($0.0 - mx) * ($0.1 - my) }.reduce(0, +)
        let slope = sxx > 0 ? sxy / sxx : 0
        let intercept = my - slope * mx
        return (slope, intercept, { intercept + slope * $0 })
    }

    /// In a singer's and a director's words: the whole, each part, then the
    /// chords and entries worth naming.
    public var lines: [String] {
        var lines: [String] = []
        // A rate a minute is said only where the line moved by 5 cents or more
        // (over a few bars, 2 cents would read as tens of cents a minute).
        let moved = abs(ensembleEndCents - ensembleStartCents) >= 5 && abs(ensembleDriftCentsPerMinute) >= 2
        lines.append(String(format: "%d chords sung together, %d common entries; the ensemble %@ (%@%+.0f at the first chord, %+.0f at the last)",
                            chords.count, entries.count, !moved ? "held its pitch" : ensembleDriftCentsPerMinute < 0 ? "sank" : "rose",
                            moved ? String(format: "%+.1f cents a minute: ", ensembleDriftCentsPerMinute) : "", ensembleStartCents, ensembleEndCents))
        for part in parts {
            var text: String
            if part.chords == 0 {
                text = String(format: "%@ (take %d): no chord measured with the others", part.name, part.take)
            } else {
                text = String(format: "%@ (take %d): %@ the ensemble", part.name, part.take, Self.centsWords(part.offsetCents))
                text += String(format: ", %+.1f cents a minute", part.driftCentsPerMinute)
            }
            text += part.entries == 0 ? ", no entry with the others" : ", " + Self.entryWords(part.entryMilliseconds)
            if let lufs = part.loudnessLUFS, let balance = part.balanceDB { text += String(format: ", %.1f LUFS (%+.1f dB against the parts' mean)", lufs, balance) }
            lines.append(text)
        }
        // What is worth naming, chord by chord and entry by entry; a run of the
        // same part off the same way is said once, over its measures.
        var named: [(measure: Int, beat: Double, part: Int, value: Double, what: String)] = []
        for chord in chords {
            let singing = chord.cents.indices.filter { chord.cents[$0] != nil }
            guard let worst = singing.max(by: { abs(chord.cents[$0]! - chord.ensembleCents) < abs(chord.cents[$1]! - chord.ensembleCents) }) else { continue }
            let off = chord.cents[worst]! - chord.ensembleCents
            guard abs(off) >= Self.namedCents else { continue }
            named.append((chord.measure, chord.beat, worst, abs(off), off < 0 ? "cents flat of the chord" : "cents sharp of the chord"))
        }
        lines += Self.runs(named, names: names, unit: "chord")
        named = []
        for entry in entries where entry.spreadMilliseconds >= Self.namedMilliseconds {
            let entered = entry.milliseconds.indices.filter { entry.milliseconds[$0] != nil }
            guard let latest = entered.max(by: { entry.milliseconds[$0]! < entry.milliseconds[$1]! }),
                  let earliest = entered.min(by: { entry.milliseconds[$0]! < entry.milliseconds[$1]! }) else { continue }
            func median(without part: Int) -> Double { Self.median(entered.filter { $0 != part }.map { entry.milliseconds[$0]! }) }
            let lateBy = entry.milliseconds[latest]! - median(without: latest)
            let earlyBy = median(without: earliest) - entry.milliseconds[earliest]!
            if lateBy >= earlyBy {
                named.append((entry.measure, 0, latest, lateBy, "ms after the others"))
            } else {
                named.append((entry.measure, 0, earliest, earlyBy, "ms before the others"))
            }
        }
        lines += Self.runs(named.filter { $0.value >= Self.namedMilliseconds }, names: names, unit: "entry")
        lines += leftOut
        return lines
    }


    /// Lines for `named` moments: consecutive ones of the same part, off
    /// the same way, said once ("mm. 3–9 (12 chords): alto 16 cents flat of
    /// the chord, on average").
    static func runs(_ named: [(measure: Int, beat: Double, part: Int, value: Double, what: String)], names: [Int: String], unit: String) -> [String] {
        var lines: [String] = []
        var index = 0
        while index < named.count {
            var end = index + 1
            while end < named.count, named[end].part == named[index].part, named[end].what == named[index].what { end += 1 }
            let run = named[index..<end]
            let name = names[named[index].part]?.lowercased() ?? "part \(named[index].part + 1)"
            let mean = run.map(\.value).reduce(0, +) / Double(run.count)
            let verb = unit == "entry" ? "entered " : ""
            if run.count == 1 {
                let place = unit == "entry" ? "m. \(named[index].measure)" : "m. \(named[index].measure), beat \(beatText(named[index].beat))"
                lines.append(String(format: "%@: %@ %@%.0f %@", place, name, verb, mean, named[index].what))
            } else {
                let first = run.first!.measure, last = run.last!.measure
                let measures = first == last ? "m. \(first)" : "mm. \(first)–\(last)"
                lines.append(String(format: "%@ (%d %@): %@ %@%.0f %@, on average", measures, run.count, unit == "entry" ? "entries" : "chords", name, verb, mean, named[index].what))
            }
            index = end
        }
        return lines
    }

    static func centsWords(_ cents: Double) -> String {
        abs(cents) < 3 ? "with" : String(format: "%.0f cents %@ of", abs(cents), cents < 0 ? "flat" : "sharp")
    }

    static func entryWords(_ milliseconds: Double) -> String {
        abs(milliseconds) < 10 ? "entering with the others" : String(format: "entering %.0f ms %@ the others", abs(milliseconds), milliseconds < 0 ? "before" : "after")
    }

    static func beatText(_ beat: Double) -> String {
        beat == beat.rounded() ? String(Int(beat)) : String(format: "%g", beat)
    }
}

extension Blend {
    /// The take a blend hears of `part`: its active take (its newest usable one).
    public static func playingTake(of part: String, in takes: [TakeRecord]) -> TakeRecord? {
        takes.last { $0.part == part && $0.state.isUsable && $0.state != .discarded && $0.active }
    }

    /// The blend of `project`'s playing takes: each part's active take (its
    /// newest usable one), analysed as `acapella analyze` does, and its
    /// loudness. Needs two parts with takes.
    public static func analyze(_ project: Project) throws(ProjectError) -> Blend {
        var reports: [(report: TakeReport, take: Int, loudness: Double?)] = []
        var unread: [String] = []
        var tempoAndKey: (String, Int)?
        for part in project.score.parts {
            guard let take = playingTake(of: part.name, in: project.manifest.takes) else { continue }
            if let reference = tempoAndKey, reference != (take.tempoScale, take.transpose) {
                func percent(_ scale: String) -> String {
                    let terms = scale.split(separator: "/").compactMap { Double($0) }
                    guard let first = terms.first else { return scale }
                    return String(format: "%g %%", (100 * first / (terms.count == 2 && terms[1] != 0 ? terms[1] : 1)).rounded())
                }
                unread.append("\(part.name): take \(take.id) left out (sung at \(percent(take.tempoScale)) of the tempo, \(take.transpose) semitones; the others at \(percent(reference.0)), \(reference.1): a blend compares takes on one timeline)")
                continue
            }
            if let condition = project.conditions[take.id] {
                unread.append("\(part.name): take \(take.id) left out (\(condition.description))")
                continue
            }
            let report: TakeReport
            do { (report, _) = try TakeReport.analyze(take, in: project) } catch {
                // A take that cannot be read is left out, and said; the others still blend.
                unread.append("\(part.name): take \(take.id) left out (\(error.description))")
                continue
            }
            // A damaged take (samples that are not numbers) is named and left out: its silence would read as a part that stopped.
            if let damage = report.damage {
                unread.append("\(part.name): take \(take.id) left out (its audio is damaged: \(damage))")
                continue
            }
            var loudness: Double?
            if let path = try? project.takePath(take), let (samples, rate) = try? AudioFile.readMono(path),
               let measured = try? Loudness.measure(interleaved: samples, channels: 1, sampleRate: rate), measured.integratedLUFS.isFinite {
                loudness = measured.integratedLUFS
            }
            reports.append((report, take.id, loudness))
            tempoAndKey = tempoAndKey ?? (take.tempoScale, take.transpose)
        }
        guard reports.count >= 2 else {
            let have = reports.isEmpty ? "none has" : reports.map(\.report.part).joined(separator: ", ") + (reports.count == 1 ? " has one" : " have one")
            throw ProjectError(description: "\(project.path): a blend needs two parts with a playing take (\(have))" + unread.map { "; " + $0 }.joined())
        }
        var blend = make(reports: reports, partCount: project.score.parts.count, sampleRate: project.manifest.sampleRate)
        blend.leftOut = unread
        return blend
    }

    /// As JSON (`acapella blend --json`).
    public var json: [String: Any] {
        func rounded(_ value: Double?) -> Any { value.map { ($0 * 10).rounded() / 10 } ?? NSNull() }
        func byName<T>(_ values: [T?], _ map: (T) -> Any) -> [String: Any] {
            var object: [String: Any] = [:]
            for (index, value) in values.enumerated() { if let value, let name = names[index] { object[name] = map(value) } }
            return object
        }
        return [
            "ensemble": ["driftCentsPerMinute": rounded(ensembleDriftCentsPerMinute), "startCents": rounded(ensembleStartCents), "endCents": rounded(ensembleEndCents)],
            "parts": parts.map { part -> [String: Any] in
                ["name": part.name, "take": part.take, "offsetCents": rounded(part.offsetCents), "driftCentsPerMinute": rounded(part.driftCentsPerMinute),
                 "entryMilliseconds": rounded(part.entryMilliseconds), "loudnessLUFS": rounded(part.loudnessLUFS), "balanceDB": rounded(part.balanceDB)]
            },
            "chords": chords.map { chord -> [String: Any] in
                ["sample": chord.start, "measure": chord.measure, "beat": chord.beat, "bass": names[chord.bass] ?? "",
                 "ensembleCents": rounded(chord.ensembleCents), "cents": byName(chord.cents) { rounded($0) }, "midi": byName(chord.midi) { $0 },
                 "againstEqual": byName(chord.againstEqual) { rounded($0) }, "againstJust": byName(chord.againstJust) { rounded($0) },
                 "notes": byName(chord.noteIDs) { $0 }]
            },
            "entries": entries.map { entry -> [String: Any] in
                ["sample": entry.start, "measure": entry.measure, "spreadMilliseconds": rounded(entry.spreadMilliseconds),
                 "milliseconds": byName(entry.milliseconds) { rounded($0) }]
            },
            "lines": lines,
            "leftOut": leftOut,
        ]
    }

    /// A plot: each chord's centres against the written notes, a line per
    /// part and the ensemble's mean in black, over the song's time.
    public func svg(width: Double = 900, height: Double = 320) -> String {
        let colours = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
        let seconds = chords.map { Double($0.start) / Double(sampleRate) }
        let (left, right) = (seconds.min() ?? 0, max((seconds.max() ?? 1), (seconds.min() ?? 0) + 1))
        let values = chords.flatMap { $0.cents.compactMap { $0 } }
        let span = max(25, (values.map(abs).max() ?? 0) * 1.1)
        func x(_ second: Double) -> Double { 50 + (second - left) / (right - left) * (width - 70) }
        func y(_ cents: Double) -> Double { height / 2 - cents / span * (height / 2 - 30) }
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"11\">\n"
        svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        for cents in [-span, -span / 2, 0, span / 2, span] {
            svg += String(format: "<line x1=\"50\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%@\"/><text x=\"4\" y=\"%.1f\">%+.0f ¢</text>\n", width - 20, y(cents), y(cents), cents == 0 ? "#888" : "#ddd", y(cents) + 4, cents)
        }
        func path(_ points: [(Double, Double)], colour: String, width: Double) -> String {
            guard !points.isEmpty else { return "" }
            let d = points.enumerated().map { String(format: "%@%.1f %.1f", $0.offset == 0 ? "M" : "L", x($0.element.0), y($0.element.1)) }.joined(separator: " ")
            return "<path d=\"\(d)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"\(width)\"/>\n"
        }
        for (place, index) in names.keys.sorted().enumerated() {
            let points = chords.compactMap { chord in chord.cents[index].map { (Double(chord.start) / Double(sampleRate), $0) } }
            svg += path(points, colour: colours[place % colours.count], width: 1.2)
            svg += "<text x=\"\(60 + 90 * place)\" y=\"16\" fill=\"\(colours[place % colours.count])\">\(names[index] ?? "")</text>\n"
        }
        svg += path(chords.map { (Double($0.start) / Double(sampleRate), $0.ensembleCents) }, colour: "#000", width: 2)
        svg += "<text x=\"\(60 + 90 * names.count)\" y=\"16\">ensemble</text>\n</svg>\n"
        return svg
    }
}
