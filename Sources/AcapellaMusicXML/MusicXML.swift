public import AcapellaScore
import Foundation

/// What to import.
public struct ImportOptions: Sendable {
    /// Keep only these parts (by name, in this order); `nil` keeps all.
    public var partNames: [String]?

    /// Options.
    public init(partNames: [String]? = nil) { self.partNames = partNames }
}

/// An imported score and what the import changed or skipped.
public struct ImportResult: Sendable {
    /// The score; it passes validation.
    public var score: Score
    /// One line per kind of thing skipped or changed.
    public var report: ImportReport
}

/// MusicXML (`.musicxml`, `.xml`) and compressed MusicXML (`.mxl`) import.
///
/// The practical subset singers meet: partwise scores; notes, rests, dots,
/// ties, tuplets (nested ones flattened into groups of one ratio), backup and
/// forward, voice 1 of each part, the top note of chords, divisions of any
/// size, key/time/tempo and their changes, part names, first-verse lyrics,
/// pickups, irregular measures (as time changes). Repeats are kept as a
/// single pass, as written. What is skipped or changed is counted in the
/// report, never silently dropped.
public enum MusicXML {
    /// Imports a MusicXML or `.mxl` document from its bytes (the format is
    /// recognized from the content).
    public static func importScore(bytes: [UInt8], fileName: String? = nil, options: ImportOptions = ImportOptions()) throws(ImportError) -> ImportResult {
        var documentName = fileName
        do throws(ImportError) {
            var xml = bytes
            if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
                let (path, document) = try MXLArchive.rootDocument(in: bytes)
                documentName = fileName.map { "\($0)/\(path)" } ?? path
                xml = document
            }
            let document = try XMLTree.parse(xml)
            defer { withExtendedLifetime(document) {} }
            let root = document.root
            switch root.name {
            case "score-partwise": break
            case "score-timewise":
                throw ImportError("timewise MusicXML is not supported; save the score as partwise MusicXML", line: root.line)
            default:
                throw ImportError("not a MusicXML score (the document is <\(root.name)>)", line: root.line)
            }
            var reader = MusicXMLReader()
            let parts = try reader.readParts(root)
            var builder = ScoreBuilder(parts: parts, pending: reader.report)
            var score = try builder.build(root: root, sourceName: fileName)
            if let names = options.partNames {
                score.parts = try names.map { (name) throws(ImportError) -> Part in
                    guard let part = score.parts.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                        throw ImportError("no part named '\(name)'; the parts are: " + score.parts.map(\.name).joined(separator: ", "))
                    }
                    return part
                }
            }
            return ImportResult(score: score, report: builder.report)
        } catch {
            var located = error
            if located.file == nil { located.file = documentName }
            throw located
        }
    }
}

/// Raw parts → a valid `Score`.
struct ScoreBuilder {
    var parts: [RawPart]
    var pending: MusicXMLReader.PendingReport
    var report = ImportReport()
    var hasPickup = false

    init(parts: [RawPart], pending: MusicXMLReader.PendingReport) {
        self.parts = parts
        self.pending = pending
    }

    func measureNumber(_ index: Int) -> Int { hasPickup ? index : index + 1 }

    mutating func build(root: XMLNode, sourceName: String?) throws(ImportError) -> Score {
        let count = parts.map(\.measures.count).max() ?? 0
        guard count > 0 else { throw ImportError("the score has no measures", line: root.line) }
        for index in parts.indices where parts[index].measures.count < count {
            pending.note("part '\(parts[index].displayName)' was shorter than the others; filled with rests", measureIndex: parts[index].measures.count)
            while parts[index].measures.count < count { parts[index].measures.append(RawMeasure(number: "")) }
        }

        // Nominal meters, carried forward.
        var nominal: [Meter] = []
        var current: Meter?
        for index in 0..<count {
            if let meter = parts.lazy.compactMap({ $0.measures[index].meter }).first { current = meter }
            if current == nil {
                current = Meter(4, 4)
                pending.note("no time signature: 4/4 assumed", measureIndex: 0)
            }
            nominal.append(current!)
        }

        // Actual lengths, one per measure for all parts (barlines align):
        // the time signature's when any part fills it exactly, else the
        // length the parts agree on (most of them; the longest on a tie).
        var lengths: [Int] = []
        for index in 0..<count {
            let written = parts.map(\.measures[index].length).filter { $0.numerator != 0 }
            let nominalTicks = Rational(nominal[index].measureTicks)
            var chosen = nominalTicks
            if !written.isEmpty && !written.contains(where: { $0.compare(nominalTicks) == 0 }) {
                var best = written[0]
                var bestVotes = 0
                for candidate in written {
                    let votes = written.filter { $0.compare(candidate) == 0 }.count
                    if votes > bestVotes || (votes == bestVotes && candidate.compare(best) > 0) {
                        best = candidate
                        bestVotes = votes
                    }
                }
                chosen = best
            }
            var ticks = Int(chosen.floor)
            if !chosen.isInteger || ticks % 120 != 0 {
                ticks = (ticks / 120 + 1) * 120
                pending.note("measure lengths finer than a 32nd note rounded up", measureIndex: index)
            }
            for part in parts where part.measures[index].length.compare(Rational(ticks)) > 0 {
                pending.note("part '\(part.displayName)': overfull measures cut at the barline", measureIndex: index)
            }
            lengths.append(ticks)
        }
        hasPickup = count > 1 && lengths[0] < nominal[0].measureTicks
        for item in pending.items { report.note(item.message, measure: item.measureIndex.map(measureNumber), count: item.count) }

        // Meter map: irregular measures become time changes.
        var meters: [MeterChange] = []
        var previous: Meter?
        var irregular = 0
        for index in (hasPickup ? 1 : 0)..<count {
            var meter = nominal[index]
            if lengths[index] != meter.measureTicks {
                guard let fitted = Self.meter(forTicks: lengths[index], preferring: meter.denominator) else {
                    throw ImportError("measure \(measureNumber(index)) is \(lengths[index]) ticks long, more than a time signature can hold")
                }
                if irregular == 0 { report.note("measures whose length differs from their time signature written as time changes", measure: measureNumber(index)) } else { report.note("measures whose length differs from their time signature written as time changes") }
                irregular += 1
                meter = fitted
            }
            if meter != previous { meters.append(MeterChange(measure: measureNumber(index), meter: meter)) }
            previous = meter
        }
        if meters.isEmpty { meters = [MeterChange(measure: 1, meter: nominal[0])] }
        var starts: [Int] = []
        var tick = 0
        for length in lengths {
            starts.append(tick)
            tick += length
        }
        let endTick = tick

        var score = Score(meters: meters, keys: keys(count: count), tempos: tempos(starts: starts, endTick: endTick),
                          pickupTicks: hasPickup ? lengths[0] : 0)
        readMetadata(root, into: &score, sourceName: sourceName)

        var usedNames: Set<String> = []
        for raw in parts {
            let name = raw.displayName
            var unique = name
            var suffix = 2
            while usedNames.contains(unique) {
                unique = "\(name) \(suffix)"
                suffix += 1
            }
            usedNames.insert(unique)
            var part = Part(name: unique)
            if let abbreviation = raw.abbreviation.map({ Self.clean($0, forbidden: "()[]:") }), !abbreviation.isEmpty {
                part.shortName = abbreviation
            }
            if let first = raw.measures.first(where: { $0.clef != nil || !$0.clefSupported }), first.clefSupported {
                part.clef = first.clef
            }
            let (notes, tieStops) = try notes(of: raw, starts: starts, lengths: lengths)
            part.notes = notes
            cleanTiesAndLyrics(&part, tieStops: tieStops, meterMap: score.meterMap)
            score.parts.append(part)
        }

        let problems = score.validate()
        if let problem = problems.first {
            throw ImportError("could not convert this score: \(problem.message)" + (problem.measure.map { " (measure \($0))" } ?? ""))
        }
        return score
    }

    /// A part's name as the song will show it: cleaned, or "Part N".
    static func partName(_ raw: String, index: Int) -> String {
        let name = clean(raw, forbidden: "()[]:")
        return name.isEmpty || name == "MusicXML Part" ? "Part \(index + 1)" : name
    }

    /// A meter exactly `ticks` long, preferably in the given beat unit.
    static func meter(forTicks ticks: Int, preferring denominator: Int) -> Meter? {
        for unit in [denominator, 4, 8, 16, 32, 64, 2, 1] where (ticks * unit) % ticksPerWhole == 0 {
            let meter = Meter(ticks * unit / ticksPerWhole, unit)
            if meter.isValid { return meter }
        }
        return nil
    }

    mutating func keys(count: Int) -> [KeyChange] {
        var keys: [KeyChange] = []
        for index in 0..<count {
            guard let measure = parts.lazy.map({ $0.measures[index] }).first(where: { $0.key != nil }), let key = measure.key else { continue }
            if measure.keyOffset.numerator != 0 { report.note("key changes inside a measure moved to the measure's start", measure: measureNumber(index)) }
            if keys.last?.key != key {
                let number = max(1, measureNumber(index))
                if keys.last?.measure == number { keys.removeLast() }
                keys.append(KeyChange(measure: number, key: key))
            }
        }
        if keys.first?.measure != 1 { keys.insert(KeyChange(measure: 1, key: Key(fifths: 0, mode: .major)), at: 0) }
        return keys
    }

    mutating func tempos(starts: [Int], endTick: Int) -> [TempoChange] {
        var byTick: [Int: Int] = [:]
        for part in parts {
            for (index, measure) in part.measures.enumerated() {
                for mark in measure.tempos {
                    let tick = starts[index] + Int(mark.offset.floor)
                    if tick < endTick && byTick[tick] == nil { byTick[tick] = mark.milliBPM }
                }
            }
        }
        var tempos: [TempoChange] = []
        for (tick, milliBPM) in byTick.sorted(by: { $0.key < $1.key }) where tempos.last?.tempo.milliBPM != milliBPM {
            tempos.append(TempoChange(tick: tick, tempo: Tempo(milliBPM: milliBPM)))
        }
        if tempos.first?.tick != 0 {
            report.note(tempos.isEmpty ? "no tempo marking: 120 BPM assumed" : "no tempo marking at the start: 120 BPM assumed until the first")
            tempos.insert(TempoChange(tick: 0, tempo: Tempo(bpm: 120)), at: 0)
            if tempos.count > 1 && tempos[1].tempo.milliBPM == 120_000 { tempos.remove(at: 1) }
        }
        return tempos
    }

    func readMetadata(_ root: XMLNode, into score: inout Score, sourceName: String?) {
        let work = root.child("work")
        var title = work?.string("work-title") ?? root.string("movement-title")
        if let movement = root.string("movement-title"), title == nil || title!.isEmpty || title!.hasSuffix(".mxl") || title!.hasSuffix(".xml") {
            title = movement
        }
        if let raw = title {
            var cleaned = Self.clean(raw, forbidden: "")
            for suffix in [".mxl", ".musicxml", ".xml"] where cleaned.hasSuffix(suffix) { cleaned.removeLast(suffix.count) }
            if !cleaned.isEmpty { score.title = cleaned }
        }
        let identification = root.child("identification")
        for creator in identification?.children("creator") ?? [] {
            let text = Self.clean(creator.text, forbidden: "")
            guard !text.isEmpty else { continue }
            switch creator.attribute("type") {
            case "composer": score.composer = score.composer ?? text
            case "arranger": score.arranger = score.arranger ?? text
            default: break
            }
        }
        if let rights = identification?.string("rights") {
            let text = Self.clean(rights, forbidden: "")
            if !text.isEmpty && text != "Copyright ©" { score.license = text }
        }
        if let sourceName {
            let software = identification?.child("encoding")?.string("software").map { Self.clean($0, forbidden: "") }
            score.source = "MusicXML file \(Self.clean(sourceName, forbidden: ""))" + (software.map { " (\($0))" } ?? "")
        }
    }

    /// One line of text the `.acasong` format can hold.
    static func clean(_ text: String, forbidden: String) -> String {
        var words = text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        words.removeAll { forbidden.contains($0) }
        while words.contains(" //") { words = words.replacingOccurrences(of: " //", with: " /") }
        if words.hasPrefix("//") { words.removeFirst() }
        return words.trimmingCharacters(in: .whitespaces)
    }

    /// A kept voice's measure as timed events filling it exactly.
    struct Event {
        var onset: Rational
        var duration: Rational
        var note: RawNote?
    }

    mutating func events(of measure: RawMeasure, length: Int, index: Int) -> [Event] {
        // Chords: keep the top note.
        var kept: [RawNote] = []
        for note in measure.notes {
            if note.isChordMember, var last = kept.last {
                report.note("chords: kept the top note", measure: measureNumber(index))
                if let pitch = note.pitch, (last.pitch?.midi ?? -1) < pitch.midi {
                    last.pitch = pitch
                    last.tieStart = note.tieStart
                    last.tieStop = note.tieStop
                }
                if last.lyric == nil { last.lyric = note.lyric }
                kept[kept.count - 1] = last
            } else {
                kept.append(note)
            }
        }
        let end = Rational(length)
        var events: [Event] = []
        var cursor = Rational.zero
        for note in kept.enumerated().sorted(by: { ($0.element.onset.compare($1.element.onset), $0.offset) < (0, $1.offset) }).map(\.element) {
            var onset = note.onset
            var noteEnd = (try? note.onset.adding(note.duration)) ?? end
            if noteEnd.compare(end) > 0 { noteEnd = end }
            if onset.compare(cursor) < 0 {
                report.note("overlapping notes in one voice shortened", measure: measureNumber(index))
                onset = cursor
            }
            guard noteEnd.compare(onset) > 0 else { continue }
            if onset.compare(cursor) > 0 { events.append(Event(onset: cursor, duration: (try? onset.subtracting(cursor)) ?? .zero, note: nil)) }
            events.append(Event(onset: onset, duration: (try? noteEnd.subtracting(onset)) ?? .zero, note: note))
            cursor = noteEnd
        }
        if cursor.compare(end) < 0 { events.append(Event(onset: cursor, duration: (try? end.subtracting(cursor)) ?? .zero, note: nil)) }
        return events
    }

    static let values: [NoteValue] = [1, 2, 4, 8, 16, 32].flatMap { d in (0...2).map { NoteValue(d, dots: $0) } }
        .filter(\.isValid).sorted { $0.writtenTicks > $1.writtenTicks }

    /// Note values filling `ticks` (a multiple of a 32nd), largest first.
    static func decompose(_ ticks: Int, preferring preferred: NoteValue?) -> [NoteValue] {
        if let preferred, preferred.writtenTicks == ticks { return [preferred] }
        var remaining = ticks
        var pieces: [NoteValue] = []
        while remaining > 0, let value = values.first(where: { $0.writtenTicks <= remaining && (remaining - $0.writtenTicks) % 120 == 0 }) {
            pieces.append(value)
            remaining -= value.writtenTicks
        }
        return pieces
    }

    /// The part's notes, and for each whether it ends a tie: MusicXML marks
    /// both ends, and a tie counts only when both are there.
    mutating func notes(of raw: RawPart, starts: [Int], lengths: [Int]) throws(ImportError) -> ([NoteEvent], [Bool]) {
        var notes: [NoteEvent] = []
        var tieStops: [Bool] = []
        var tupletID = 1
        for (index, measure) in raw.measures.enumerated() {
            let events = events(of: measure, length: lengths[index], index: index)
            var position = 0
            while position < events.count {
                let event = events[position]
                // A tuplet group: consecutive notes of one ratio whose written
                // values give exactly their MusicXML durations.
                if let group = tupletGroup(in: events, from: position) {
                    let start = starts[index] + Int(event.onset.floor)
                    var tick = start
                    for (offset, duration) in group.durations.enumerated() {
                        let member = events[position + offset]
                        notes.append(NoteEvent(startTick: tick, durationTicks: duration, value: group.values[offset], pitch: member.note?.pitch,
                                               tieToNext: member.note?.tieStart ?? false,
                                               tuplet: Tuplet(id: tupletID, actual: group.actual, normal: group.normal),
                                               lyric: member.note?.lyric))
                        tieStops.append(member.note?.tieStop ?? false)
                        tick += duration
                    }
                    tupletID += 1
                    position += group.durations.count
                    continue
                }
                var onset = Int(event.onset.floor)
                var end = Int(((try? event.onset.adding(event.duration)) ?? event.onset).floor)
                if onset % 120 != 0 || end % 120 != 0 {
                    report.note("rhythms finer than a 32nd note rounded", measure: measureNumber(index))
                    onset = (onset + 60) / 120 * 120
                    end = (end + 60) / 120 * 120
                }
                // Keep the measure tiled after rounding.
                if let last = notes.last, last.endTick > starts[index] { onset = max(onset, last.endTick - starts[index]) }
                if position == events.count - 1 { end = lengths[index] }
                if end > onset {
                    let pieces = Self.decompose(end - onset, preferring: event.note?.typeValue)
                    var tick = starts[index] + onset
                    for (offset, value) in pieces.enumerated() {
                        let isLast = offset == pieces.count - 1
                        let pitch = event.note?.pitch
                        notes.append(NoteEvent(startTick: tick, durationTicks: value.writtenTicks, value: value, pitch: pitch,
                                               tieToNext: pitch != nil && (isLast ? (event.note?.tieStart ?? false) : true),
                                               lyric: offset == 0 ? event.note?.lyric : nil))
                        tieStops.append(offset > 0 || (event.note?.tieStop ?? false))
                        tick += value.writtenTicks
                    }
                    if pieces.count > 1 && event.note?.pitch != nil {
                        report.note("notes of unusual length written as tied notes", measure: measureNumber(index))
                    }
                }
                position += 1
            }
        }
        return (notes, tieStops)
    }

    struct Group {
        var actual: Int
        var normal: Int
        var values: [NoteValue]
        var durations: [Int]
    }

    /// The tuplet group starting at `position`, if the events there form one
    /// that the model can write exactly.
    func tupletGroup(in events: [Event], from position: Int) -> Group? {
        guard let first = events[position].note, let ratio = first.ratio, first.typeValue != nil,
              events[position].onset.isInteger,
              ratio.actual <= Tuplet.maximumRatioTerm, ratio.normal <= Tuplet.maximumRatioTerm
        else { return nil }
        var values: [NoteValue] = []
        var best: Group?
        var index = position
        while index < events.count, let note = events[index].note, let r = note.ratio, r == ratio, let value = note.typeValue {
            if index > position && note.startsTuplet && best != nil { break }
            // The written value must give exactly the MusicXML duration.
            let expected = Rational(Int128(value.writtenTicks * ratio.normal), Int128(ratio.actual))
            guard expected.compare(events[index].duration) == 0 else { break }
            values.append(value)
            if let durations = TupletLayout.durations(writtenTicks: values.map(\.writtenTicks), actual: ratio.actual, normal: ratio.normal) {
                best = Group(actual: ratio.actual, normal: ratio.normal, values: values, durations: durations)
            }
            index += 1
        }
        return best
    }

    /// Ties must join equal pitches and syllables sit on attacks; what
    /// MusicXML allowed otherwise is removed and reported.
    mutating func cleanTiesAndLyrics(_ part: inout Part, tieStops: [Bool], meterMap: MeterMap) {
        for index in part.notes.indices where part.notes[index].tieToNext {
            let next = index + 1 < part.notes.count ? part.notes[index + 1].pitch : nil
            let measure = meterMap.measure(containing: part.notes[index].startTick)
            if next?.midi != part.notes[index].pitch?.midi {
                part.notes[index].tieToNext = false
                report.note("ties to a different note (or to nothing) removed", measure: measure)
            } else if !tieStops[index + 1] {
                part.notes[index].tieToNext = false
                report.note("ties without an end (no tie stop on the next note) removed", measure: measure)
            }
        }
        for index in part.notes.indices where part.notes[index].lyric != nil && !part.isAttack(at: index) {
            report.note(part.notes[index].pitch == nil ? "lyrics on rests dropped" : "lyrics on tied-over notes dropped",
                        measure: meterMap.measure(containing: part.notes[index].startTick))
            part.notes[index].lyric = nil
        }
    }
}
