public import AcapellaScore
import Foundation

/// What to import.
public struct ImportOptions: Sendable {
    /// Keep only these parts (by name, in this order); `nil` keeps all.
    /// Names are those of the imported song (after splitting voices).
    public var partNames: [String]?
    /// Whether a part with several voices becomes one part per voice.
    public var split: SplitMode
    /// Write repeats out in singing order: `nil` does when the file has
    /// repeats, endings or jumps.
    public var unfold: Bool?

    /// Options.
    public init(partNames: [String]? = nil, split: SplitMode = .auto, unfold: Bool? = nil) {
        self.partNames = partNames
        self.split = split
        self.unfold = unfold
    }
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
/// ties, tuplets (nested ones flattened into groups of one ratio; durations
/// rounded by the writing program made exact from the note values), backup
/// and forward, closed score (each voice of each staff its own part, chords
/// split by pitch), divisions of any size, key/time/tempo and their changes,
/// part names, every verse of the lyrics, pickups, irregular measures (as
/// time changes), repeats, endings and `<sound>` jumps written out in
/// singing order. What is skipped or changed is counted in the report,
/// never silently dropped.
public enum MusicXML {
    /// File name extensions read as MusicXML (case aside).
    public static let fileExtensions: Set<String> = ["musicxml", "xml", "mxl"]

    /// Whether a path names a MusicXML file, by its extension.
    public static func isFile(_ path: String) -> Bool {
        fileExtensions.contains((path as NSString).pathExtension.lowercased())
    }

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
            var splitter = VoiceSplitter(mode: options.split, report: reader.report)
            var lines = parts.flatMap { splitter.lines(of: $0) }
            var pending = splitter.report
            var written: [Int]?
            let count = parts.map(\.measures.count).max() ?? 0
            var marks = [RepeatMarks](repeating: RepeatMarks(), count: count)
            for part in parts {
                for (index, measure) in part.measures.enumerated() { marks[index].merge(measure.marks) }
            }
            if Unfolder.hasRepeats(marks) {
                if options.unfold ?? true {
                    if let visits = Unfolder.order(marks), visits.count > 0 {
                        for index in lines.indices where lines[index].measures.count < count {
                            lines[index].measures += (lines[index].measures.count..<count).map { _ in RawMeasure(number: "") }
                        }
                        lines = Unfolder.unfold(lines, visits: visits, report: &pending)
                        written = visits.map(\.measure)
                        let repeats = marks.filter { $0.backward != nil }.count
                        let jumps = marks.filter { $0.daCapo || $0.dalSegno }.count
                        pending.note("repeats written out in singing order: \(count) written measures sung as \(visits.count)"
                                     + (repeats + jumps > 0 ? " (\([repeats > 0 ? "\(repeats) repeat\(repeats == 1 ? "" : "s")" : nil, jumps > 0 ? "\(jumps) jump\(jumps == 1 ? "" : "s")" : nil].compactMap { $0 }.joined(separator: ", ")))" : "")
                                     + "; import with --no-unfold to keep them as written", measureIndex: nil)
                    } else {
                        pending.note("repeat marks that lead nowhere sensible: kept as written, a single pass", measureIndex: nil)
                    }
                } else {
                    pending.note("repeats kept as written, a single pass (--no-unfold)", measureIndex: nil)
                }
            }
            var builder = ScoreBuilder(parts: lines, pending: pending, written: written,
                                       printed: ScoreBuilder.printedNumbers(parts.first?.measures.map(\.number) ?? []))
            var score = try builder.build(root: root, sourceName: fileName)
            if let names = options.partNames {
                score.parts = try names.map { (name) throws(ImportError) -> Part in
                    guard let part = score.parts.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                        throw ImportError("no part named '\(name)'; the parts are: " + score.parts.map(\.name).joined(separator: ", "))
                    }
                    return part
                }
            }
            // Checked once the parts asked for are chosen: a broken piano does not refuse the voices.
            if let refusal = ScoreBuilder.refusal(score) { throw refusal }
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
    /// The written measure (index) of each measure, when repeats were unfolded.
    var written: [Int]?
    var report = ImportReport()
    var hasPickup = false

    /// The number printed on each written measure, when the file's numbers
    /// can be trusted (see `printedNumbers`).
    var printed: [Int]?

    init(parts: [RawPart], pending: MusicXMLReader.PendingReport, written: [Int]? = nil, printed: [Int]? = nil) {
        self.parts = parts
        self.pending = pending
        self.written = written
        self.printed = printed
    }

    /// The measure numbers a file prints ("12", "4a" for the second half of
    /// measure 4 split by a repeat), when they count from 0 or 1 in steps of
    /// one, a split measure keeping its number; nil otherwise (then
    /// measures are counted).
    static func printedNumbers(_ numbers: [String]) -> [Int]? {
        var result: [Int] = []
        result.reserveCapacity(numbers.count)
        var repeated = 0
        for text in numbers {
            let digits = text.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 6, let number = Int(digits) else { return nil }
            if let previous = result.last {
                guard number == previous || number == previous + 1 else { return nil }
                if number == previous { repeated += 1 }
            } else if number > 1 {
                return nil
            }
            result.append(number)
        }
        return repeated * 4 <= result.count ? result : nil
    }

    /// The written measure index of a measure of the song.
    func writtenIndex(_ index: Int) -> Int { written.map { $0[min(index, $0.count - 1)] } ?? index }

    /// The measure number a report gives for a measure of the song: the
    /// written one, the number a singer finds in their score.
    func measureNumber(_ index: Int) -> Int { writtenNumber(writtenIndex: writtenIndex(index)) }

    /// The song's own number for a measure (its maps count these).
    func songMeasure(_ index: Int) -> Int { hasPickup ? index : index + 1 }

    /// The written number a report gives for a song measure number.
    func reported(songMeasure measure: Int) -> Int { measureNumber(hasPickup ? measure : measure - 1) }

    func writtenNumber(writtenIndex index: Int) -> Int {
        if let printed, index < printed.count { return printed[index] }
        return hasPickup ? index : index + 1
    }

    mutating func build(root: XMLNode, sourceName: String?) throws(ImportError) -> Score {
        let count = parts.map(\.measures.count).max() ?? 0
        guard count > 0 else { throw ImportError("the score has no measures", line: root.line) }
        for index in parts.indices where parts[index].measures.count < count {
            pending.note("part '\(parts[index].displayName)' was shorter than the others; filled with rests", measureIndex: writtenIndex(parts[index].measures.count))
            while parts[index].measures.count < count { parts[index].measures.append(RawMeasure(number: "")) }
        }

        // Nominal meters, carried forward.
        var nominal: [Meter] = []
        var current: Meter?
        for index in 0..<count {
            if let meter = parts.lazy.compactMap({ $0.measures[index].meter }).first { current = meter }
            if current == nil {
                current = Meter(4, 4)
                pending.note("no time signature: 4/4 assumed", measureIndex: nil)
            }
            nominal.append(current!)
        }

        // Actual lengths, one per measure for all parts (barlines align):
        // the time signature's when any part fills it exactly, else the
        // length the parts agree on (most of them; the longest on a tie).
        // A part that pads its measure with hidden `<forward>`s after its
        // last note has only a soft say: where some part ends its measure
        // with a note or rest, only such parts decide (a pickup written in
        // the voices, padded to a full measure in a resting part).
        var lengths: [Int] = []
        for index in 0..<count {
            let measures = parts.map { $0.measures[index] }
            var written = measures.filter { $0.length.numerator != 0 && $0.paddedLength.compare($0.length) == 0 }.map(\.length)
            // The last measure padded everywhere (the rest of a bar whose
            // pickup began the piece) ends where its notes do: the padding
            // is hidden, not a rest to print.
            if written.isEmpty && index == count - 1 { written = measures.map(\.length).filter { $0.numerator != 0 } }
            if written.isEmpty { written = measures.map(\.paddedLength).filter { $0.numerator != 0 } }
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
                pending.note("measure lengths finer than a 32nd note rounded up", measureIndex: writtenIndex(index))
            }
            for part in parts where part.measures[index].length.compare(Rational(ticks)) > 0 {
                pending.note("part '\(part.displayName)': overfull measures cut at the barline", measureIndex: writtenIndex(index))
            }
            lengths.append(ticks)
        }
        hasPickup = count > 1 && lengths[0] < nominal[0].measureTicks
        for item in pending.items { report.note(item.message, measure: item.measureIndex.map { writtenNumber(writtenIndex: $0) }, count: item.count) }

        // Meter map: irregular measures become time changes.
        var meters: [MeterChange] = []
        var previous: Meter?
        var irregular = 0
        for index in (hasPickup ? 1 : 0)..<count {
            var meter = nominal[index]
            // Printed where the file writes a time signature that the
            // measure keeps (or at the start).
            let writtenHere = parts.lazy.map { $0.measures[index] }.first { $0.meter != nil }
            var printed = writtenHere != nil || meters.isEmpty
            // The first's symbol may be written in the pickup before it.
            var symbol = writtenHere?.meterSymbol
            if symbol == nil && meters.isEmpty {
                for measure in 0...index where symbol == nil { symbol = parts.lazy.compactMap { $0.measures[measure].meterSymbol }.first }
            }
            if lengths[index] != meter.measureTicks {
                printed = false
                guard let fitted = Meter.fitting(ticks: lengths[index], preferring: meter.denominator) else {
                    throw ImportError("measure \(measureNumber(index)) is \(lengths[index]) ticks long, more than a time signature can hold")
                }
                if irregular == 0 { report.note("measures whose length differs from their time signature written as time changes", measure: measureNumber(index)) } else { report.note("measures whose length differs from their time signature written as time changes") }
                irregular += 1
                meter = fitted
            }
            if meter != previous {
                meters.append(MeterChange(measure: songMeasure(index), meter: meter, symbol: meter == nominal[index] ? symbol : nil, printed: printed))
            }
            previous = meter
        }
        if meters.isEmpty { meters = [MeterChange(measure: 1, meter: nominal[0], symbol: parts.first?.measures.first?.meterSymbol)] }
        // The first time signature is always printed (a pickup's is the first measure's).
        meters[0].printed = true
        if meters[0].meter != nominal[0] { meters[0].symbol = nil }
        var starts: [Int] = []
        var tick = 0
        for length in lengths {
            starts.append(tick)
            tick += length
        }
        let endTick = tick

        var score = Score(meters: meters, keys: keys(count: count), tempos: tempos(starts: starts, endTick: endTick),
                          pickupTicks: hasPickup ? lengths[0] : 0)
        // Measure numbers as the singer's score prints them, when those are
        // not the song's own (repeats written out, measures split in two).
        let numbers = (0..<count).map(measureNumber)
        if numbers != (0..<count).map(songMeasure) { score.writtenMeasures = numbers }
        readMetadata(root, into: &score, sourceName: sourceName)
        score.texts = texts(starts: starts, lengths: lengths)
        if written == nil { score.barMarks = barMarks(count: count) }

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
            if let first = raw.measures.first(where: { $0.clefs[1] != nil }), let clef = first.clefs[1] {
                part.clef = clef
            }
            let (notes, tieStops) = try notes(of: raw, starts: starts, lengths: lengths)
            part.notes = notes
            Self.placeDirections(of: raw, starts: starts, on: &part)
            cleanTiesAndLyrics(&part, tieStops: tieStops, meterMap: score.meterMap)
            score.parts.append(part)
        }

        return score
    }

    /// The first rule the imported `score` breaks, in the file's own terms:
    /// the part by its name, the measure by its printed number, the note by
    /// its place in that measure — never the song's internal ticks alone.
    static func refusal(_ score: Score) -> ImportError? {
        guard let problem = score.problems().first else { return nil }
        var place: [String] = []
        if let index = problem.part, index < score.parts.count {
            let part = score.parts[index]
            place.append("part '\(part.name)'")
            if let note = problem.note, note < part.notes.count {
                let (measure, _) = score.meterMap.position(ofTick: part.notes[note].startTick)
                let first = part.notes.firstIndex { score.meterMap.position(ofTick: $0.startTick).measure == measure } ?? note
                place.append("measure \(score.writtenMeasure(measure)), its note \(note - first + 1)")
            } else if let measure = problem.measure {
                place.append("measure \(score.writtenMeasure(measure))")
            }
        } else if let measure = problem.measure {
            place.append("measure \(score.writtenMeasure(measure))")
        }
        return ImportError("could not convert this score" + (place.isEmpty ? "" : " (\(place.joined(separator: ", ")))") + ": \(problem.message)")
    }

    /// A part's name as the song will show it: cleaned, or "Part N".
    static func partName(_ raw: String, index: Int) -> String {
        let name = clean(raw, forbidden: "()[]:")
        return name.isEmpty || name == "MusicXML Part" ? "Part \(index + 1)" : name
    }

    mutating func keys(count: Int) -> [KeyChange] {
        var keys: [KeyChange] = []
        for index in 0..<count {
            guard let measure = parts.lazy.map({ $0.measures[index] }).first(where: { $0.key != nil }), let key = measure.key else { continue }
            if measure.keyOffset.numerator != 0 { report.note("key changes inside a measure moved to the measure's start", measure: measureNumber(index)) }
            if keys.last?.key != key {
                let number = max(1, songMeasure(index))
                if keys.last?.measure == number { keys.removeLast() }
                keys.append(KeyChange(measure: number, key: key))
            }
        }
        if keys.first?.measure != 1 { keys.insert(KeyChange(measure: 1, key: Key(fifths: 0, mode: .major)), at: 0) }
        return keys
    }

    mutating func tempos(starts: [Int], endTick: Int) -> [TempoChange] {
        var byTick: [Int: (milliBPM: Int, printed: Bool)] = [:]
        for part in parts {
            for (index, measure) in part.measures.enumerated() {
                for mark in measure.tempos {
                    let tick = starts[index] + Int(mark.offset.floor)
                    guard tick < endTick else { continue }
                    if byTick[tick] == nil { byTick[tick] = (mark.milliBPM, mark.printed) } else if mark.printed { byTick[tick]!.printed = true }
                }
            }
        }
        var tempos: [TempoChange] = []
        for (tick, mark) in byTick.sorted(by: { $0.key < $1.key }) where tempos.last?.tempo.milliBPM != mark.milliBPM {
            tempos.append(TempoChange(tick: tick, tempo: Tempo(milliBPM: mark.milliBPM), printed: mark.printed))
        }
        if tempos.first?.tick != 0 {
            report.note(tempos.isEmpty ? "no tempo marking: 120 BPM assumed (played, not printed)" : "no tempo marking at the start: 120 BPM assumed until the first (played, not printed)")
            tempos.insert(TempoChange(tick: 0, tempo: Tempo(bpm: 120), printed: false), at: 0)
            if tempos.count > 1 && tempos[1].tempo.milliBPM == 120_000 { tempos.remove(at: 1) }
        }
        return tempos
    }

    /// Expression text and rehearsal marks of every part, once each (the
    /// same words at the same moment in several parts are one text), in
    /// order. In a song written out, the words of its jumps ("D.C. al
    /// Fine") are sung out, not printed.
    func texts(starts: [Int], lengths: [Int]) -> [ScoreText] {
        var texts: [ScoreText] = []
        var seen: Set<String> = []
        for part in parts {
            for (index, measure) in part.measures.enumerated() {
                for direction in measure.directions {
                    guard case .text(let kind, let text) = direction.kind else { continue }
                    // Written at the barline (a jump's words): the measure's last moment.
                    let tick = starts[index] + min(Int(direction.offset.floor), lengths[index] - 1)
                    if written != nil && Self.isJumpText(text) { continue }
                    guard seen.insert("\(tick) \(kind) \(text)").inserted else { continue }
                    // Several words at one moment ("Andante" " con moto", "dolce"): one text.
                    if let index = texts.firstIndex(where: { $0.tick == tick && $0.kind == kind }) {
                        texts[index].text = Self.clean(texts[index].text + " " + text, forbidden: "")
                        continue
                    }
                    texts.append(ScoreText(tick: tick, kind: kind, text: text))
                }
            }
        }
        return texts.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map(\.element)
    }

    /// Words that tell where to go next: D.C., D.S., Fine, To Coda.
    static func isJumpText(_ text: String) -> Bool {
        let lower = text.lowercased()
        return ["d.c.", "d. c.", "da capo", "d.s.", "d. s.", "dal segno", "fine", "to coda"].contains { lower.hasPrefix($0) }
    }

    /// Repeats, endings and signs as the file writes them (a song kept as
    /// written), in measure order.
    func barMarks(count: Int) -> [BarMark] {
        var marks = [RepeatMarks](repeating: RepeatMarks(), count: count)
        for part in parts {
            for (index, measure) in part.measures.enumerated() where index < count { marks[index].merge(measure.marks) }
        }
        var result: [BarMark] = []
        var index = 0
        while index < count {
            let mark = marks[index]
            let measure = songMeasure(index)
            if mark.segno { result.append(BarMark(measure: measure, kind: .segno)) }
            if mark.coda { result.append(BarMark(measure: measure, kind: .coda)) }
            if mark.forward { result.append(BarMark(measure: measure, kind: .repeatStart)) }
            if let numbers = mark.ending, index == 0 || marks[index - 1].ending != numbers || marks[index - 1].backward != nil {
                var length = 1
                while index + length < count && marks[index + length].ending == numbers && marks[index + length - 1].backward == nil { length += 1 }
                result.append(BarMark(measure: measure, kind: .ending(numbers: numbers, measures: length)))
            }
            if let times = mark.backward { result.append(BarMark(measure: measure, kind: .repeatEnd(times: times))) }
            if mark.toCoda { result.append(BarMark(measure: measure, kind: .toCoda)) }
            if mark.fine { result.append(BarMark(measure: measure, kind: .fine)) }
            if mark.daCapo { result.append(BarMark(measure: measure, kind: .daCapo)) }
            if mark.dalSegno { result.append(BarMark(measure: measure, kind: .dalSegno)) }
            index += 1
        }
        return result.canonicallyOrdered()
    }

    /// A line's dynamics and hairpins on its notes: each on the note
    /// sounding where it is written (a note's own dynamic first).
    static func placeDirections(of raw: RawPart, starts: [Int], on part: inout Part) {
        guard !part.notes.isEmpty else { return }
        for (index, measure) in raw.measures.enumerated() where index < starts.count {
            for direction in measure.directions {
                let tick = starts[index] + min(Int(direction.offset.floor), max(0, (index + 1 < starts.count ? starts[index + 1] : (part.notes.last?.endTick ?? 0)) - starts[index] - 1))
                var note = max(0, part.notes.partitionIndex { $0.startTick > tick } - 1)
                // A hairpin's end belongs to the note it reaches; a start or a
                // dynamic to the next sung note when it falls on a rest.
                while part.notes[note].pitch == nil && note + 1 < part.notes.count && !(direction.kind.isHairpinEnd) { note += 1 }
                switch direction.kind {
                case .dynamic(let dynamic): if part.notes[note].marks.dynamic == nil { part.notes[note].marks.dynamic = dynamic }
                case .hairpin(let hairpin):
                    if hairpin == .end && part.notes[note].marks.hairpin != nil { continue }
                    part.notes[note].marks.hairpin = hairpin
                case .text: break
                }
            }
        }
    }

    func readMetadata(_ root: XMLNode, into score: inout Score, sourceName: String?) {
        let work = root.child(.work)
        var title = work?.string(.workTitle) ?? root.string(.movementTitle)
        if let movement = root.string(.movementTitle), title == nil || title!.isEmpty || title!.hasSuffix(".mxl") || title!.hasSuffix(".xml") {
            title = movement
        }
        if let raw = title {
            var cleaned = Self.clean(raw, forbidden: "")
            for suffix in [".mxl", ".musicxml", ".xml"] where cleaned.hasSuffix(suffix) { cleaned.removeLast(suffix.count) }
            if !cleaned.isEmpty { score.title = cleaned }
        }
        if let movement = root.string(.movementTitle).map({ Self.clean($0, forbidden: "") }), !movement.isEmpty, movement != score.title,
           !movement.hasSuffix(".mxl"), !movement.hasSuffix(".xml")
        {
            score.subtitle = movement
        }
        let identification = root.child(.identification)
        for creator in identification?.children(.creator) ?? [] {
            let text = Self.clean(creator.text, forbidden: "")
            guard !text.isEmpty else { continue }
            switch creator.attribute("type") {
            case "composer": score.composer = score.composer ?? text
            case "arranger": score.arranger = score.arranger ?? text
            default: break
            }
        }
        if let rights = identification?.string(.rights) {
            let text = Self.clean(rights, forbidden: "")
            if !text.isEmpty && text != "Copyright ©" { score.license = text }
        }
        if let sourceName {
            let software = identification?.child(.encoding)?.string(.software).map { Self.clean($0, forbidden: "") }
            score.source = "MusicXML file \(Self.clean(sourceName, forbidden: ""))" + (software.map { " (\($0))" } ?? "")
        }
    }

    /// One line of text the `.acasong` format can hold: no control
    /// character (a terminal escape, a direction override), at most
    /// `ScoreLimits.maximumTextScalars` characters.
    static func clean(_ text: String, forbidden: String) -> String {
        let plain = String(String.UnicodeScalarView(text.unicodeScalars.map { SafeText.isControl($0) ? " " : $0 }.prefix(ScoreLimits.maximumTextScalars)))
        var words = plain.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
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

    /// A line's measure as timed events filling it exactly (lines hold one
    /// note at a time; overlaps are shortened, gaps become rests).
    mutating func events(of measure: RawMeasure, length: Int, index: Int) -> [Event] {
        let kept = measure.notes
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
                        notes.append(Self.noteEvent(startTick: tick, durationTicks: duration, value: group.values[offset], raw: member.note,
                                                    tieToNext: member.note?.tieStart ?? false, withLyrics: true,
                                                    tuplet: Tuplet(id: tupletID, actual: group.actual, normal: group.normal)))
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
                    let pieces = NoteValue.filling(ticks: end - onset, preferring: event.note?.typeValue)
                    var tick = starts[index] + onset
                    for (offset, value) in pieces.enumerated() {
                        let isLast = offset == pieces.count - 1
                        let pitch = event.note?.pitch
                        notes.append(Self.noteEvent(startTick: tick, durationTicks: value.writtenTicks, value: value, raw: event.note,
                                                    tieToNext: pitch != nil && (isLast ? (event.note?.tieStart ?? false) : true), withLyrics: offset == 0,
                                                    piece: (offset == 0, isLast)))
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

    /// A note event from what the file wrote; a note written as several
    /// tied pieces has its attack's marks (dynamic, articulations, a slur or
    /// hairpin starting) on the first and its release's (fermata, breath, a
    /// slur ending) on the last.
    static func noteEvent(startTick: Int, durationTicks: Int, value: NoteValue, raw: RawNote?, tieToNext: Bool, withLyrics: Bool,
                          tuplet: Tuplet? = nil, piece: (first: Bool, last: Bool) = (true, true)) -> NoteEvent {
        var note = NoteEvent(startTick: startTick, durationTicks: durationTicks, value: value, pitch: raw?.pitch, tieToNext: tieToNext, tuplet: tuplet)
        if withLyrics, let raw {
            for (verse, lyric) in raw.lyrics { note.setLyric(lyric, verse: verse) }
        }
        if let marks = raw?.marks, !marks.isEmpty {
            if piece.first {
                note.marks.dynamic = marks.dynamic
                note.marks.articulations = marks.articulations
                note.marks.slurStart = marks.slurStart
                if marks.hairpin != .end { note.marks.hairpin = marks.hairpin }
            }
            if piece.last {
                note.marks.fermata = marks.fermata
                note.marks.breath = marks.breath
                note.marks.slurEnd = marks.slurEnd
                if marks.hairpin == .end { note.marks.hairpin = .end }
            }
        }
        return note
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
    /// MusicXML allowed otherwise is removed and reported. A tie with no
    /// written end before a note of the same pitch is a tie, as notation
    /// programs read it.
    mutating func cleanTiesAndLyrics(_ part: inout Part, tieStops: [Bool], meterMap: MeterMap) {
        for index in part.notes.indices where part.notes[index].tieToNext {
            let next = index + 1 < part.notes.count ? part.notes[index + 1].pitch : nil
            let measure = reported(songMeasure: meterMap.measure(containing: part.notes[index].startTick))
            if next?.midi != part.notes[index].pitch?.midi {
                part.notes[index].tieToNext = false
                report.note("ties to a different note (or to nothing) removed", measure: measure)
            } else if !tieStops[index + 1] {
                report.note("ties with no written end joined to the next note of the same pitch", measure: measure)
            }
        }
        for index in part.notes.indices where tieStops[index] && part.notes[index].pitch != nil {
            if index == 0 || !part.notes[index - 1].tieToNext {
                report.note("tie ends with no tie start ignored", measure: reported(songMeasure: meterMap.measure(containing: part.notes[index].startTick)))
            }
        }
        for index in part.notes.indices where part.notes[index].hasLyric && !part.isAttack(at: index) {
            report.note(part.notes[index].pitch == nil ? "lyrics on rests dropped" : "lyrics on tied-over notes dropped",
                        measure: reported(songMeasure: meterMap.measure(containing: part.notes[index].startTick)))
            for verse in 1...part.notes[index].verseCount { part.notes[index].setLyric(nil, verse: verse) }
        }
    }
}

extension MusicXML {
    /// How far `importStages(_:through:)` goes: for the benchmark's
    /// breakdown of where import time is spent.
    public enum Stage: Int, CaseIterable, Sendable {
        /// The score document out of an `.mxl` archive (a plain file as is).
        case unpack
        /// expat alone over the document, building nothing: the floor any
        /// reader on expat stands on.
        case expat
        /// The document parsed by expat into the element tree.
        case parse
        /// Parts, measures and notes read from the tree (no voice splitting,
        /// repeats or song building).
        case read

        public var name: String {
            switch self {
            case .unpack: "unzip"
            case .expat: "expat alone"
            case .parse: "expat tree"
            case .read: "read parts"
            }
        }
    }

    /// Runs the import of one file up to `stage` and returns a count from it
    /// (bytes, elements or parts) so the work cannot be skipped.
    public static func importStages(_ bytes: [UInt8], through stage: Stage) throws(ImportError) -> Int {
        var xml = bytes
        if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) { xml = try MXLArchive.rootDocument(in: bytes).1 }
        if stage == .unpack { return xml.count }
        if stage == .expat { return try XMLTree.scan(xml) }
        let document = try XMLTree.parse(xml)
        return try withExtendedLifetime(document) { () throws(ImportError) -> Int in
            if stage == .parse { return document.root.elements.underestimatedCount }
            var reader = MusicXMLReader()
            return try reader.readParts(document.root).count
        }
    }
}
