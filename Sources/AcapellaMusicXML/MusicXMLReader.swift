import AcapellaScore
import Foundation

/// One note or rest of the kept voice, as MusicXML wrote it, positioned in
/// exact ticks from its measure's start.
struct RawNote {
    var onset: Rational
    var duration: Rational
    var pitch: Pitch?
    var isChordMember = false
    var tieStart = false
    var tieStop = false
    var typeValue: NoteValue?
    var ratio: (actual: Int, normal: Int)?
    var startsTuplet = false
    var lyric: Lyric?
    var lyricSyllabicContinues = false
}

/// A measure of one part: its length, attribute changes and kept notes.
struct RawMeasure {
    var number: String
    var length = Rational.zero
    var meter: Meter?
    var beatsText: String?
    var key: Key?
    var keyOffset = Rational.zero
    var clef: Clef?
    var clefSupported = true
    var tempos: [(offset: Rational, milliBPM: Int)] = []
    var notes: [RawNote] = []
}

/// One part as read: names and measures.
struct RawPart {
    var id: String
    var name: String
    /// The name the imported part gets (before de-duplication).
    var displayName = ""
    var abbreviation: String?
    var measures: [RawMeasure] = []
}

/// Reads a partwise MusicXML element tree into raw parts, counting what it
/// skips. Measure numbers in the report are positional (1-based) here and
/// are renumbered once the pickup is known.
struct MusicXMLReader {
    var report = PendingReport()
    static let maximumMeasures = 100_000
    static let maximumNotesPerPart = 1_000_000

    /// Report entries keyed by positional measure index, renumbered later.
    struct PendingReport {
        var items: [(message: String, measureIndex: Int?, count: Int)] = []
        private var seenPerMeasure: Set<String> = []
        mutating func note(_ message: String, measureIndex: Int?, count: Int = 1) {
            items.append((message, measureIndex, count))
        }
        /// For things that belong to the measure, not the part (repeat signs,
        /// endings): counted once however many parts repeat them.
        mutating func noteOncePerMeasure(_ message: String, measureIndex: Int) {
            guard seenPerMeasure.insert("\(measureIndex)\u{0}\(message)").inserted else { return }
            items.append((message, measureIndex, 1))
        }
    }

    mutating func readParts(_ root: XMLNode) throws(ImportError) -> [RawPart] {
        var names: [String: (name: String, abbreviation: String?)] = [:]
        if let list = root.child("part-list") {
            for scorePart in list.children("score-part") {
                guard let id = scorePart.attribute("id") else { continue }
                names[id] = (scorePart.string("part-name") ?? "", scorePart.string("part-abbreviation"))
            }
        }
        var parts: [RawPart] = []
        for partNode in root.children("part") {
            let id = partNode.attribute("id") ?? "P\(parts.count + 1)"
            var part = RawPart(id: id, name: names[id]?.name ?? "", abbreviation: names[id]?.abbreviation)
            part.displayName = ScoreBuilder.partName(part.name, index: parts.count)
            try readMeasures(of: partNode, into: &part)
            parts.append(part)
        }
        if parts.isEmpty { throw ImportError("the score has no <part> elements", line: root.line) }
        return parts
    }

    /// Ticks for a MusicXML duration: `duration` divisions of a quarter.
    static func ticks(_ duration: Rational, divisions: Rational) -> Rational {
        Rational(duration.numerator * Int128(ticksPerQuarter) * divisions.denominator, duration.denominator * divisions.numerator)
    }

    /// "12", "1.5", "0.125", "-2" exactly; nil when the text is not a
    /// plain decimal number (or has more digits than a score needs).
    static func exactDecimal(_ text: String) -> Rational? {
        var digits = Substring(text)
        var negative = false
        if digits.first == "-" || digits.first == "+" {
            negative = digits.first == "-"
            digits = digits.dropFirst()
        }
        let pieces = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = pieces.first, !(whole.isEmpty && (pieces.count < 2 || pieces[1].isEmpty)),
              whole.count + (pieces.count > 1 ? pieces[1].count : 0) <= 18,
              (whole + (pieces.count > 1 ? pieces[1] : "")).allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        let fraction = pieces.count > 1 ? pieces[1] : ""
        var scale: Int128 = 1
        for _ in 0..<fraction.count { scale *= 10 }
        guard let value = Int128(whole.isEmpty ? "0" : String(whole)), let part = Int128(fraction.isEmpty ? "0" : String(fraction)) else { return nil }
        return Rational((value * scale + part) * (negative ? -1 : 1), scale)
    }

    /// The number in `name`'s text, exactly; nil when there is no such
    /// child; a located error when its text is not a number or is outside
    /// `range` — never a silent zero.
    static func number(_ node: XMLNode, _ name: String, within range: ClosedRange<Int128>? = nil) throws(ImportError) -> Rational? {
        guard let child = node.child(name) else { return nil }
        let text = node.string(name) ?? ""
        guard let value = exactDecimal(text) else {
            throw ImportError("<\(name)> '\(text.prefix(40))' is not a number", line: child.line)
        }
        if let range, value.compare(Rational(range.lowerBound, 1)) < 0 || value.compare(Rational(range.upperBound, 1)) > 0 {
            throw ImportError("<\(name)> \(text.prefix(40)) is outside \(range.lowerBound)…\(range.upperBound)", line: child.line)
        }
        return value
    }

    /// A whole number in `name`'s text (see `number`).
    static func wholeNumber(_ node: XMLNode, _ name: String, within range: ClosedRange<Int128>) throws(ImportError) -> Int? {
        guard let value = try number(node, name, within: range) else { return nil }
        guard value.isInteger else { throw ImportError("<\(name)> \(value) is not a whole number", line: node.child(name)?.line ?? node.line) }
        return Int(value.numerator)
    }

    static func add(_ a: Rational, _ b: Rational, line: Int) throws(ImportError) -> Rational {
        do { return try a.adding(b) } catch { throw ImportError("durations too large to add up", line: line) }
    }

    mutating func readMeasures(of partNode: XMLNode, into part: inout RawPart) throws(ImportError) {
        var divisions = Rational(1)
        var noteCount = 0
        // A transposing instrument's written-to-sounding interval (<transpose>).
        var transposition: (diatonic: Int, chromatic: Int)?
        let measures = partNode.children("measure")
        if measures.count > Self.maximumMeasures {
            throw ImportError("part '\(part.displayName)' has \(measures.count) measures; refusing more than \(Self.maximumMeasures)", line: partNode.line)
        }
        for (measureIndex, measureNode) in measures.enumerated() {
            var measure = RawMeasure(number: measureNode.attribute("number") ?? "\(measureIndex + 1)")
            let keptVoice = Self.keptVoice(of: measureNode)
            var position = Rational.zero
            var furthest = Rational.zero
            // A chord belongs to its first note's staff and voice, and starts
            // where that note does.
            var chordHeadOnset = Rational.zero
            var chordHeadKept = false
            var chordHead = (voice: "1", staff: 1)
            var droppedVoices: [String: Int] = [:]
            var droppedStaffNotes = 0

            for element in measureNode.elements {
                switch element.name {
                case "attributes":
                    if let value = try Self.number(element, "divisions") {
                        guard value.numerator > 0, value.compare(Rational(1_000_000_000)) <= 0 else {
                            throw ImportError("<divisions> must be a positive number, not \(value)", line: element.child("divisions")?.line ?? element.line)
                        }
                        divisions = value
                    }
                    if let transpose = element.child("transpose") {
                        let octaves = try Self.wholeNumber(transpose, "octave-change", within: -4...4) ?? 0
                        let chromatic = try Self.wholeNumber(transpose, "chromatic", within: -48...48) ?? 0
                        let diatonic = try Self.wholeNumber(transpose, "diatonic", within: -28...28) ?? Self.diatonicSteps(forSemitones: chromatic)
                        transposition = (diatonic + 7 * octaves, chromatic + 12 * octaves)
                        if transposition! == (0, 0) {
                            transposition = nil
                        } else {
                            report.note("part '\(part.displayName)' is written for a transposing instrument (\(Self.intervalWords(transposition!.chromatic))): imported at sounding pitch", measureIndex: measureIndex)
                        }
                    }
                    if let keyNode = element.child("key"), keyNode.attribute("number") == nil || keyNode.attribute("number") == "1" {
                        try readKey(keyNode, at: position, into: &measure, measureIndex: measureIndex)
                    }
                    if let time = element.child("time") { try readTime(time, into: &measure, measureIndex: measureIndex) }
                    for clef in element.children("clef") where (clef.attribute("number") ?? "1") == "1" {
                        readClef(clef, into: &measure, measureIndex: measureIndex)
                    }
                    if let staves = element.int("staves"), staves > 1 {
                        report.note("part '\(part.displayName)': kept the top staff of \(staves) (one part per staff is not split out)", measureIndex: measureIndex)
                    }
                case "note":
                    if element.child("grace") != nil {
                        report.note("grace notes ignored", measureIndex: measureIndex)
                        continue
                    }
                    if element.child("cue") != nil {
                        report.note("cue notes ignored", measureIndex: measureIndex)
                        continue
                    }
                    let isChord = element.child("chord") != nil
                    guard let durationValue = try Self.number(element, "duration") else {
                        throw ImportError("a note without <duration> (only grace notes may leave it out)", line: element.line)
                    }
                    if durationValue.numerator < 0 || durationValue.compare(Rational(1_000_000_000)) > 0 {
                        throw ImportError("note <duration> \(durationValue) is out of range", line: element.child("duration")?.line ?? element.line)
                    }
                    let duration = Self.ticks(durationValue, divisions: divisions)
                    let onset = isChord ? chordHeadOnset : position
                    if !isChord {
                        position = try Self.add(position, duration, line: element.line)
                        if position.compare(furthest) > 0 { furthest = position }
                        chordHeadOnset = onset
                        chordHead = (element.string("voice") ?? "1", element.int("staff") ?? 1)
                        chordHeadKept = chordHead.staff == 1 && chordHead.voice == keptVoice
                    }
                    if !chordHeadKept {
                        if chordHead.staff != 1 { droppedStaffNotes += 1 } else { droppedVoices[chordHead.voice, default: 0] += 1 }
                        continue
                    }
                    noteCount += 1
                    if noteCount > Self.maximumNotesPerPart {
                        throw ImportError("part '\(part.displayName)' has more than \(Self.maximumNotesPerPart) notes", line: element.line)
                    }
                    measure.notes.append(try readNote(element, onset: onset, duration: duration, isChord: isChord, transposition: transposition, measureIndex: measureIndex))
                case "backup":
                    guard let value = try Self.number(element, "duration", within: 0...1_000_000_000) else {
                        throw ImportError("<backup> without <duration>", line: element.line)
                    }
                    let back = Self.ticks(value, divisions: divisions)
                    do { position = try position.subtracting(back) } catch { throw ImportError("durations too large", line: element.line) }
                    if position.compare(.zero) < 0 { position = .zero }
                case "forward":
                    guard let value = try Self.number(element, "duration", within: 0...1_000_000_000) else {
                        throw ImportError("<forward> without <duration>", line: element.line)
                    }
                    position = try Self.add(position, Self.ticks(value, divisions: divisions), line: element.line)
                    if position.compare(furthest) > 0 { furthest = position }
                case "direction":
                    readDirection(element, at: position, divisions: divisions, into: &measure, measureIndex: measureIndex)
                case "sound":
                    if let tempo = element.attribute("tempo").flatMap(Double.init) { addTempo(tempo, at: position, into: &measure, measureIndex: measureIndex) }
                case "barline":
                    if let repeatNode = element.child("repeat") {
                        if repeatNode.attribute("direction") == "backward" {
                            report.noteOncePerMeasure("repeats: kept a single pass (repeat signs ignored)", measureIndex: measureIndex)
                        }
                    }
                    if element.child("ending") != nil, element.child("ending")?.attribute("type") == "start" {
                        report.noteOncePerMeasure("volta endings: all endings kept in written order", measureIndex: measureIndex)
                    }
                case "harmony":
                    report.note("chord symbols ignored", measureIndex: measureIndex)
                case "figured-bass":
                    report.note("figured bass ignored", measureIndex: measureIndex)
                default:
                    break
                }
            }
            for (voice, count) in droppedVoices.sorted(by: { $0.key < $1.key }) {
                report.note("voice \(voice) dropped in part '\(part.displayName)'", measureIndex: measureIndex, count: count)
            }
            if droppedStaffNotes > 0 {
                report.note("notes on lower staves dropped in part '\(part.displayName)'", measureIndex: measureIndex, count: droppedStaffNotes)
            }
            measure.length = furthest
            part.measures.append(measure)
        }
    }

    /// The voice kept in a measure: the lowest-numbered voice on the top
    /// staff — voice 1 whenever the measure has it.
    static func keptVoice(of measure: XMLNode) -> String {
        var voices: Set<String> = []
        for note in measure.children("note") where (note.int("staff") ?? 1) == 1 && note.child("grace") == nil {
            voices.insert(note.string("voice") ?? "1")
        }
        if voices.isEmpty || voices.contains("1") { return "1" }
        return voices.min { (Int($0) ?? Int.max, $0) < (Int($1) ?? Int.max, $1) }!
    }

    mutating func readNote(_ element: XMLNode, onset: Rational, duration: Rational, isChord: Bool, transposition: (diatonic: Int, chromatic: Int)?,
                           measureIndex: Int) throws(ImportError) -> RawNote {
        var note = RawNote(onset: onset, duration: duration)
        note.isChordMember = isChord
        if let pitchNode = element.child("pitch") {
            // A pitch that cannot be read is an error: a note never turns into a rest unseen.
            let stepText = pitchNode.string("step") ?? ""
            guard stepText.utf8.count == 1, let step = stepText.utf8.first.flatMap(Step.init(letter:)) else {
                throw ImportError(pitchNode.child("step") == nil ? "a <pitch> without <step>" : "<step> '\(stepText.prefix(20))' is not a note name (A to G)",
                                  line: pitchNode.child("step")?.line ?? pitchNode.line)
            }
            guard let octave = try Self.wholeNumber(pitchNode, "octave", within: 0...9) else {
                throw ImportError("a <pitch> without <octave>", line: pitchNode.line)
            }
            let alterValue = try Self.number(pitchNode, "alter", within: -9...9) ?? .zero
            var alter = Int(alterValue.roundedHalfUp)
            if !alterValue.isInteger { report.note("microtonal alterations rounded to the nearest semitone", measureIndex: measureIndex) }
            if !(-2...2).contains(alter) {
                report.note("alterations beyond double sharp/flat clamped", measureIndex: measureIndex)
                alter = max(-2, min(2, alter))
            }
            var pitch = Pitch(step: step, alter: alter, octave: octave)
            if let transposition { pitch = Self.transposed(pitch, diatonic: transposition.diatonic, chromatic: transposition.chromatic) }
            if (0...127).contains(pitch.midi) {
                note.pitch = pitch
            } else {
                report.note("pitches outside the MIDI range made rests", measureIndex: measureIndex)
            }
        } else if element.child("unpitched") != nil {
            report.note("unpitched (percussion) notes made rests", measureIndex: measureIndex)
        }
        func hasTie(_ type: String) -> Bool {
            element.children("tie").contains { $0.attribute("type") == type }
                || (element.child("notations")?.children("tied").contains { $0.attribute("type") == type } ?? false)
        }
        note.tieStart = hasTie("start")
        note.tieStop = hasTie("stop")
        if let type = element.string("type"), let denominator = Self.noteTypes[type] {
            let dots = element.children("dot").count
            let value = NoteValue(denominator, dots: dots)
            note.typeValue = value.isValid ? value : nil
        }
        if let modification = element.child("time-modification"), let actual = modification.int("actual-notes"),
           let normal = modification.int("normal-notes"), actual > 0, normal > 0, actual != normal
        {
            note.ratio = (actual, normal)
        }
        if let notations = element.child("notations") {
            note.startsTuplet = notations.children("tuplet").contains { $0.attribute("type") == "start" }
            for (child, message) in [("slur", "slurs ignored"), ("articulations", "articulations ignored"),
                                     ("fermata", "fermatas ignored"), ("ornaments", "ornaments ignored"),
                                     ("dynamics", "dynamics ignored")]
            where notations.child(child) != nil {
                report.note(message, measureIndex: measureIndex)
            }
        }
        let lyrics = element.children("lyric")
        if !lyrics.isEmpty {
            let first = lyrics.first { ($0.attribute("number") ?? "1") == "1" } ?? lyrics[0]
            if lyrics.count > 1 { report.note("lyrics: kept the first verse, later verses ignored", measureIndex: measureIndex, count: lyrics.count - 1) }
            let texts = first.children("text").map(\.text)
            var text = texts.joined(separator: "‿")
            if text.contains(where: \.isWhitespace) {
                text = text.split(whereSeparator: \.isWhitespace).joined(separator: "‿")
                report.note("lyrics: spaces inside a syllable written as ‿", measureIndex: measureIndex)
            }
            while text.hasSuffix("-") { text.removeLast() }
            if text.hasPrefix("//") { text = "‿" + text }
            if text == "_" { text = "‿" }
            let syllabic = first.string("syllabic") ?? "single"
            if !text.isEmpty {
                note.lyric = Lyric(text, continuesWord: syllabic == "begin" || syllabic == "middle")
            }
        }
        return note
    }

    /// The pitch a transposing instrument's written `pitch` sounds:
    /// `diatonic` letter steps and `chromatic` semitones away, spelled on
    /// the moved letter (the nearest spelling when that would need more
    /// than a double sharp or flat).
    static func transposed(_ pitch: Pitch, diatonic: Int, chromatic: Int) -> Pitch {
        let target = pitch.midi + chromatic
        let letters = pitch.step.rawValue + diatonic
        let step = Step(rawValue: ((letters % 7) + 7) % 7)!
        let octave = pitch.octave + Int((Double(letters) / 7).rounded(.down))
        let alter = target - Pitch(step: step, alter: 0, octave: octave).midi
        if (-2...2).contains(alter) { return Pitch(step: step, alter: alter, octave: octave) }
        let names: [(Step, Int)] = [(.c, 0), (.c, 1), (.d, 0), (.e, -1), (.e, 0), (.f, 0), (.f, 1), (.g, 0), (.a, -1), (.a, 0), (.b, -1), (.b, 0)]
        let (plain, sharp) = names[((target % 12) + 12) % 12]
        return Pitch(step: plain, alter: sharp, octave: (target - ((target % 12) + 12) % 12) / 12 - 1)
    }

    /// Letter steps usually written for a chromatic interval (when a
    /// `<transpose>` gives no `<diatonic>`).
    static func diatonicSteps(forSemitones semitones: Int) -> Int {
        let steps = [0, 1, 1, 2, 2, 3, 3, 4, 5, 5, 6, 6]
        let octave = Int((Double(semitones) / 12).rounded(.down))
        return octave * 7 + steps[((semitones % 12) + 12) % 12]
    }

    /// "down an octave", "up 2 semitones".
    static func intervalWords(_ semitones: Int) -> String {
        let direction = semitones < 0 ? "down" : "up"
        let size = abs(semitones)
        if size % 12 == 0 { return "\(direction) \(size / 12 == 1 ? "an octave" : "\(size / 12) octaves")" }
        return "\(direction) \(size) semitone\(size == 1 ? "" : "s")"
    }

    static let noteTypes: [String: Int] = [
        "whole": 1, "half": 2, "quarter": 4, "eighth": 8, "16th": 16, "32nd": 32,
    ]

    mutating func readKey(_ node: XMLNode, at position: Rational, into measure: inout RawMeasure, measureIndex: Int) throws(ImportError) {
        guard let fifths = try Self.wholeNumber(node, "fifths", within: -7...7) else {
            report.note("non-traditional key signatures ignored", measureIndex: measureIndex)
            return
        }
        var mode = Mode.major
        if let modeText = node.string("mode") {
            if let parsed = Mode(rawValue: modeText) {
                mode = parsed
            } else if !modeText.isEmpty {
                report.note("key mode '\(modeText)' written as major", measureIndex: measureIndex)
            }
        }
        measure.key = Key(fifths: fifths, mode: mode)
        measure.keyOffset = position
    }

    mutating func readTime(_ node: XMLNode, into measure: inout RawMeasure, measureIndex: Int) throws(ImportError) {
        if node.child("senza-misura") != nil {
            report.note("unmetered passages (senza misura) measured by their notes", measureIndex: measureIndex)
            return
        }
        guard let beatsText = node.string("beats"), let beatType = try Self.wholeNumber(node, "beat-type", within: 1...1_024) else {
            throw ImportError("a <time> without <beats> and <beat-type>", line: node.line)
        }
        let pieces = beatsText.split(separator: "+").map { $0.trimmingCharacters(in: .whitespaces) }
        let parts = pieces.compactMap { Int($0) }.filter { (1...1_024).contains($0) }
        guard !pieces.isEmpty, parts.count == pieces.count else {
            throw ImportError("<beats> '\(beatsText.prefix(40))' is not a number of beats (like 3 or 3+2)", line: node.child("beats")?.line ?? node.line)
        }
        let beats = parts.reduce(0, +)
        if parts.count > 1 { report.note("compound time signature \(beatsText)/\(beatType) written as \(beats)/\(beatType)", measureIndex: measureIndex) }
        let meter = Meter(beats, beatType)
        if meter.isValid {
            measure.meter = meter
            measure.beatsText = beatsText
        } else {
            report.note("time signature \(beatsText)/\(beatType) not supported; measures kept at their written length", measureIndex: measureIndex)
        }
    }

    mutating func readClef(_ node: XMLNode, into measure: inout RawMeasure, measureIndex: Int) {
        let sign = node.string("sign") ?? ""
        let line = node.int("line")
        let octave = node.int("clef-octave-change") ?? 0
        switch (sign, line, octave) {
        case ("G", 2, 0), ("G", nil, 0): measure.clef = .treble
        case ("G", 2, -1), ("G", nil, -1): measure.clef = .treble8vb
        case ("C", 3, 0): measure.clef = .alto
        case ("F", 4, 0), ("F", nil, 0): measure.clef = .bass
        default:
            measure.clefSupported = false
            report.note("clef \(sign)\(line.map(String.init) ?? "")\(octave != 0 ? " (octave \(octave))" : "") not supported; the clef is inferred from the range", measureIndex: measureIndex)
        }
    }

    mutating func readDirection(_ node: XMLNode, at position: Rational, divisions: Rational, into measure: inout RawMeasure, measureIndex: Int) {
        var at = position
        if let offset = node.string("offset").flatMap(Self.exactDecimal) {
            at = (try? at.adding(Self.ticks(offset, divisions: divisions))) ?? at
            if at.compare(.zero) < 0 { at = .zero }
        }
        if let tempo = node.child("sound")?.attribute("tempo").flatMap(Double.init) {
            addTempo(tempo, at: at, into: &measure, measureIndex: measureIndex)
        } else {
            for type in node.children("direction-type") {
                if let metronome = type.child("metronome"), let perMinute = metronome.double("per-minute"),
                   let unit = metronome.string("beat-unit"), let denominator = Self.noteTypes[unit]
                {
                    let dots = metronome.children("beat-unit-dot").count
                    let quarters = Double(NoteValue(denominator, dots: min(dots, 3)).writtenTicks) / Double(ticksPerQuarter)
                    addTempo(perMinute * quarters, at: at, into: &measure, measureIndex: measureIndex)
                }
            }
        }
        for type in node.children("direction-type") {
            for (child, message) in [("dynamics", "dynamics ignored"), ("wedge", "hairpins ignored"), ("words", "text directions ignored"),
                                     ("pedal", "pedal marks ignored"), ("rehearsal", "rehearsal marks ignored")]
            where type.child(child) != nil {
                if child == "wedge" && type.child(child)?.attribute("type") == "stop" { continue }
                report.note(message, measureIndex: measureIndex)
            }
        }
    }

    mutating func addTempo(_ bpm: Double, at offset: Rational, into measure: inout RawMeasure, measureIndex: Int) {
        guard bpm.isFinite, bpm >= 1, bpm < 1000 else {
            report.note("tempo markings outside 1–999 BPM ignored", measureIndex: measureIndex)
            return
        }
        measure.tempos.append((offset, Int((bpm * 1000).rounded())))
    }
}
