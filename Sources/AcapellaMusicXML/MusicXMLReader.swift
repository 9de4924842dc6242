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
                guard let id = scorePart.attributes["id"] else { continue }
                names[id] = (scorePart.string("part-name") ?? "", scorePart.string("part-abbreviation"))
            }
        }
        var parts: [RawPart] = []
        for partNode in root.children("part") {
            let id = partNode.attributes["id"] ?? "P\(parts.count + 1)"
            var part = RawPart(id: id, name: names[id]?.name ?? "", abbreviation: names[id]?.abbreviation)
            part.displayName = ScoreBuilder.partName(part.name, index: parts.count)
            try readMeasures(of: partNode, into: &part)
            parts.append(part)
        }
        if parts.isEmpty { throw ImportError("the score has no <part> elements", line: root.line) }
        return parts
    }

    static func ticks(_ duration: Int, divisions: Int) -> Rational {
        Rational(Int128(duration) * Int128(ticksPerQuarter), Int128(divisions))
    }

    static func add(_ a: Rational, _ b: Rational, line: Int) throws(ImportError) -> Rational {
        do { return try a.adding(b) } catch { throw ImportError("durations too large to add up", line: line) }
    }

    mutating func readMeasures(of partNode: XMLNode, into part: inout RawPart) throws(ImportError) {
        var divisions = 1
        var noteCount = 0
        let measures = partNode.children("measure")
        if measures.count > Self.maximumMeasures {
            throw ImportError("part '\(part.displayName)' has \(measures.count) measures; refusing more than \(Self.maximumMeasures)", line: partNode.line)
        }
        for (measureIndex, measureNode) in measures.enumerated() {
            var measure = RawMeasure(number: measureNode.attributes["number"] ?? "\(measureIndex + 1)")
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

            for element in measureNode.children {
                switch element.name {
                case "attributes":
                    if let value = element.int("divisions") {
                        guard value > 0, value <= 1_000_000_000 else {
                            throw ImportError("<divisions> must be a positive number, not \(value)", line: element.line)
                        }
                        divisions = value
                    }
                    if let keyNode = element.child("key"), keyNode.attributes["number"] == nil || keyNode.attributes["number"] == "1" {
                        readKey(keyNode, at: position, into: &measure, measureIndex: measureIndex)
                    }
                    if let time = element.child("time") { readTime(time, into: &measure, measureIndex: measureIndex) }
                    for clef in element.children("clef") where (clef.attributes["number"] ?? "1") == "1" {
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
                    let durationValue = element.int("duration") ?? 0
                    if durationValue < 0 || durationValue > 1_000_000_000 {
                        throw ImportError("note <duration> \(durationValue) is out of range", line: element.line)
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
                    measure.notes.append(readNote(element, onset: onset, duration: duration, isChord: isChord, measureIndex: measureIndex))
                case "backup":
                    let back = Self.ticks(max(0, element.int("duration") ?? 0), divisions: divisions)
                    do { position = try position.subtracting(back) } catch { throw ImportError("durations too large", line: element.line) }
                    if position.compare(.zero) < 0 { position = .zero }
                case "forward":
                    position = try Self.add(position, Self.ticks(max(0, element.int("duration") ?? 0), divisions: divisions), line: element.line)
                    if position.compare(furthest) > 0 { furthest = position }
                case "direction":
                    readDirection(element, at: position, divisions: divisions, into: &measure, measureIndex: measureIndex)
                case "sound":
                    if let tempo = element.attributes["tempo"].flatMap(Double.init) { addTempo(tempo, at: position, into: &measure, measureIndex: measureIndex) }
                case "barline":
                    if let repeatNode = element.child("repeat") {
                        if repeatNode.attributes["direction"] == "backward" {
                            report.noteOncePerMeasure("repeats: kept a single pass (repeat signs ignored)", measureIndex: measureIndex)
                        }
                    }
                    if element.child("ending") != nil, element.child("ending")?.attributes["type"] == "start" {
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

    mutating func readNote(_ element: XMLNode, onset: Rational, duration: Rational, isChord: Bool, measureIndex: Int) -> RawNote {
        var note = RawNote(onset: onset, duration: duration)
        note.isChordMember = isChord
        if let pitchNode = element.child("pitch"), let stepText = pitchNode.string("step"),
           let step = stepText.utf8.first.flatMap(Step.init(letter:)), let octave = pitchNode.int("octave")
        {
            let alterValue = pitchNode.double("alter") ?? 0
            var alter = Int(alterValue.rounded())
            if alterValue != Double(alter) { report.note("microtonal alterations rounded to the nearest semitone", measureIndex: measureIndex) }
            if !(-2...2).contains(alter) {
                report.note("alterations beyond double sharp/flat clamped", measureIndex: measureIndex)
                alter = max(-2, min(2, alter))
            }
            let pitch = Pitch(step: step, alter: alter, octave: max(-1, min(9, octave)))
            if (0...127).contains(pitch.midi) {
                note.pitch = pitch
            } else {
                report.note("pitches outside the MIDI range made rests", measureIndex: measureIndex)
            }
        } else if element.child("unpitched") != nil {
            report.note("unpitched (percussion) notes made rests", measureIndex: measureIndex)
        }
        func hasTie(_ type: String) -> Bool {
            element.children("tie").contains { $0.attributes["type"] == type }
                || (element.child("notations")?.children("tied").contains { $0.attributes["type"] == type } ?? false)
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
            note.startsTuplet = notations.children("tuplet").contains { $0.attributes["type"] == "start" }
            for (child, message) in [("slur", "slurs ignored"), ("articulations", "articulations ignored"),
                                     ("fermata", "fermatas ignored"), ("ornaments", "ornaments ignored"),
                                     ("dynamics", "dynamics ignored")]
            where notations.child(child) != nil {
                report.note(message, measureIndex: measureIndex)
            }
        }
        let lyrics = element.children("lyric")
        if !lyrics.isEmpty {
            let first = lyrics.first { ($0.attributes["number"] ?? "1") == "1" } ?? lyrics[0]
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

    static let noteTypes: [String: Int] = [
        "whole": 1, "half": 2, "quarter": 4, "eighth": 8, "16th": 16, "32nd": 32,
    ]

    mutating func readKey(_ node: XMLNode, at position: Rational, into measure: inout RawMeasure, measureIndex: Int) {
        guard let fifths = node.int("fifths") else {
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
        measure.key = Key(fifths: max(-7, min(7, fifths)), mode: mode)
        measure.keyOffset = position
    }

    mutating func readTime(_ node: XMLNode, into measure: inout RawMeasure, measureIndex: Int) {
        if node.child("senza-misura") != nil {
            report.note("unmetered passages (senza misura) measured by their notes", measureIndex: measureIndex)
            return
        }
        guard let beatsText = node.string("beats"), let beatType = node.int("beat-type") else { return }
        let parts = beatsText.split(separator: "+").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
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

    mutating func readDirection(_ node: XMLNode, at position: Rational, divisions: Int, into measure: inout RawMeasure, measureIndex: Int) {
        var at = position
        if let offset = node.int("offset") {
            at = (try? at.adding(Self.ticks(offset, divisions: divisions))) ?? at
            if at.compare(.zero) < 0 { at = .zero }
        }
        if let tempo = node.child("sound")?.attributes["tempo"].flatMap(Double.init) {
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
                if child == "wedge" && type.child(child)?.attributes["type"] == "stop" { continue }
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
