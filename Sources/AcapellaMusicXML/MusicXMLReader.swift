import AcapellaScore

/// One note or rest as MusicXML wrote it, positioned in exact ticks from its
/// measure's start, with the staff and voice it belongs to.
struct RawNote {
    var onset: Rational
    var duration: Rational
    var pitch: Pitch?
    /// Staff of the part, from 1.
    var staff = 1
    /// The voice number as written (non-numeric voices get numbers from 1000).
    var voice = 1
    var isChordMember = false
    var tieStart = false
    var tieStop = false
    var typeValue: NoteValue?
    var ratio: (actual: Int, normal: Int)?
    var startsTuplet = false
    /// Syllables by verse (1-based, in the score's verse order).
    var lyrics: [(verse: Int, lyric: Lyric)] = []
    /// Fermata, articulations, breath, slurs and dynamics written on it.
    var marks = NoteMarks()

    func lyric(verse: Int) -> Lyric? { lyrics.first { $0.verse == verse }?.lyric }
}

/// Repeat signs, endings and jumps of a measure: the measure's, not a part's
/// (the unfolder merges what any part wrote).
struct RepeatMarks: Equatable {
    var forward = false
    /// How many times the passage ending here is played (2 for a plain repeat).
    var backward: Int?
    /// Numbers of the volta ending this measure is under.
    var ending: [Int]?
    var segno = false
    var coda = false
    var toCoda = false
    var daCapo = false
    var dalSegno = false
    var fine = false

    var isEmpty: Bool { self == RepeatMarks() }

    mutating func merge(_ other: RepeatMarks) {
        forward = forward || other.forward
        backward = backward ?? other.backward
        ending = ending ?? other.ending
        segno = segno || other.segno
        coda = coda || other.coda
        toCoda = toCoda || other.toCoda
        daCapo = daCapo || other.daCapo
        dalSegno = dalSegno || other.dalSegno
        fine = fine || other.fine
    }
}

/// A measure of one part: its length, attribute changes, marks and notes.
struct RawMeasure {
    var number: String
    /// Where the part's last note or rest ends.
    var length = Rational.zero
    /// Where the part's last note, rest or `<forward>` ends: forwards past
    /// the last note are hidden padding, and count only in a measure where
    /// no part writes a note or rest.
    var paddedLength = Rational.zero
    var meter: Meter?
    var beatsText: String?
    var key: Key?
    var keyOffset = Rational.zero
    /// Clef changes by staff; `nil` for a clef the model cannot write.
    var clefs: [Int: Clef?] = [:]
    var tempos: [(offset: Rational, milliBPM: Int, printed: Bool)] = []
    var marks = RepeatMarks()
    var notes: [RawNote] = []
    /// The time signature's symbol, when it is drawn as C or ¢.
    var meterSymbol: MeterSymbol?
    /// Dynamics and hairpins for the notes of a staff (nil: every staff),
    /// texts over the music, at their offsets.
    var directions: [RawDirection] = []
}

/// A direction of a measure at its offset: a dynamic or a hairpin's end
/// for the notes of a staff, or text over the music.
struct RawDirection {
    enum Kind {
        case dynamic(Dynamic)
        case hairpin(HairpinMark)
        case text(ScoreText.Kind, String)
    }

    var offset: Rational
    var staff: Int?
    var kind: Kind
}

extension RawDirection.Kind {
    var isHairpinEnd: Bool { if case .hairpin(.end) = self { true } else { false } }
}

/// One part as read: names, staves and measures.
struct RawPart {
    var id: String
    var name: String
    /// The name the imported part gets (before de-duplication).
    var displayName = ""
    var abbreviation: String?
    /// Staves of the part (the most declared or used).
    var staves = 1
    var measures: [RawMeasure] = []
}

/// Reads a partwise MusicXML element tree into raw parts, counting what it
/// skips. Measure numbers in the report are positional (0-based indexes)
/// here and become written measure numbers once the pickup is known.
struct MusicXMLReader {
    var report = PendingReport()
    static let maximumMeasures = ScoreLimits.maximumMeasures
    static let maximumNotesPerPart = ScoreLimits.maximumNotes
    static let maximumStaves = 16
    /// Lyric line numbers (`<lyric number>`) in the order first seen.
    var lyricNumbers: [String] = []

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
        if let list = root.child(.partList) {
            for scorePart in list.children(.scorePart) {
                guard let id = scorePart.attribute("id") else { continue }
                names[id] = (scorePart.string(.partName) ?? "", scorePart.string(.partAbbreviation))
            }
        }
        var parts: [RawPart] = []
        for partNode in root.children(.part) {
            let id = partNode.attribute("id") ?? "P\(parts.count + 1)"
            var part = RawPart(id: id, name: names[id]?.name ?? "", abbreviation: names[id]?.abbreviation)
            part.displayName = ScoreBuilder.partName(part.name, index: parts.count)
            try readMeasures(of: partNode, into: &part)
            parts.append(part)
        }
        if parts.isEmpty { throw ImportError("the score has no <part> elements", line: root.line) }
        numberVerses(&parts)
        return parts
    }

    /// Lyric lines become verses 1, 2, 3… in the order of their numbers
    /// (numbers as numbers, "2" before "10"; other names after, as met).
    mutating func numberVerses(_ parts: inout [RawPart]) {
        guard !lyricNumbers.isEmpty else { return }
        let ordered = lyricNumbers.enumerated().sorted { a, b in
            switch (Int(a.element), Int(b.element)) {
            case let (x?, y?): x < y
            case (.some, nil): true
            case (nil, .some): false
            default: a.offset < b.offset
            }
        }
        var verseOfLine = [Int](repeating: 0, count: lyricNumbers.count)
        for (verse, line) in ordered.enumerated() { verseOfLine[line.offset] = min(verse + 1, Score.maximumVerses) }
        if verseOfLine == Array(1...lyricNumbers.count) { return }
        for part in parts.indices {
            for measure in parts[part].measures.indices {
                for note in parts[part].measures[measure].notes.indices where !parts[part].measures[measure].notes[note].lyrics.isEmpty {
                    for index in parts[part].measures[measure].notes[note].lyrics.indices {
                        let line = parts[part].measures[measure].notes[note].lyrics[index].verse
                        parts[part].measures[measure].notes[note].lyrics[index].verse = verseOfLine[line - 1]
                    }
                }
            }
        }
    }

    /// Ticks for a MusicXML duration: `duration` divisions of a quarter.
    static func ticks(_ duration: Rational, divisions: Rational) -> Rational {
        // Whole durations that give whole ticks (nearly all): no reduction.
        if duration.denominator == 1 && divisions.denominator == 1 && divisions.numerator > 0 {
            let (top, overflow) = duration.numerator.multipliedReportingOverflow(by: Int128(ticksPerQuarter))
            if !overflow && top % divisions.numerator == 0 { return Rational(top / divisions.numerator, 1) }
        }
        return Rational(duration.numerator * Int128(ticksPerQuarter) * divisions.denominator, duration.denominator * divisions.numerator)
    }

    /// "12", "1.5", "0.125", "-2" exactly; nil when the text is not a
    /// plain decimal number (or has more digits than a score needs).
    static func exactDecimal<Bytes: Collection<UInt8>>(_ text: Bytes) -> Rational? {
        var value: Int64 = 0
        var scale: Int64 = 1
        var digits = 0
        var negative = false
        var seenPoint = false
        var index = text.startIndex
        if index < text.endIndex, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            negative = text[index] == UInt8(ascii: "-")
            index = text.index(after: index)
        }
        while index < text.endIndex {
            let byte = text[index]
            if byte == UInt8(ascii: ".") && !seenPoint {
                seenPoint = true
            } else if byte >= 0x30 && byte <= 0x39 {
                digits += 1
                guard digits <= 18 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
                if seenPoint { scale *= 10 }
            } else {
                return nil
            }
            index = text.index(after: index)
        }
        guard digits > 0 else { return nil }
        return Rational(Int128(negative ? -value : value), Int128(scale))
    }

    static func exactDecimal(_ text: String) -> Rational? { exactDecimal(Array(text.utf8)) }

    /// The number in `tag`'s text, exactly; nil when there is no such
    /// child; a located error when its text is not a number or is outside
    /// `range` — never a silent zero.
    static func number(_ node: XMLNode, _ tag: Tag, within range: ClosedRange<Int128>? = nil) throws(ImportError) -> Rational? {
        guard let child = node.child(tag) else { return nil }
        let text = child.trimmedBytes
        guard let value = exactDecimal(text) else {
            throw ImportError("<\(tag.rawValue)> '\(String(decoding: text.prefix(40), as: UTF8.self))' is not a number", line: child.line)
        }
        if let range, value.compare(Rational(range.lowerBound, 1)) < 0 || value.compare(Rational(range.upperBound, 1)) > 0 {
            throw ImportError("<\(tag.rawValue)> \(String(decoding: text.prefix(40), as: UTF8.self)) is outside \(range.lowerBound)…\(range.upperBound)", line: child.line)
        }
        return value
    }

    /// A whole number in `tag`'s text (see `number`).
    static func wholeNumber(_ node: XMLNode, _ tag: Tag, within range: ClosedRange<Int128>) throws(ImportError) -> Int? {
        guard let value = try number(node, tag, within: range) else { return nil }
        guard value.isInteger else { throw ImportError("<\(tag.rawValue)> \(value) is not a whole number", line: node.child(tag)?.line ?? node.line) }
        return Int(value.numerator)
    }

    static func add(_ a: Rational, _ b: Rational, line: Int) throws(ImportError) -> Rational {
        do { return try a.adding(b) } catch { throw ImportError("durations too large to add up", line: line) }
    }

    /// A voice's number: its text as a number, other names numbered from 1000.
    mutating func voiceNumber(_ text: ArraySlice<UInt8>?, names: inout [String]) -> Int {
        guard let text, !text.isEmpty else { return 1 }
        if text.count <= 6, text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return text.reduce(0) { $0 * 10 + Int($1 - 0x30) } }
        let name = String(decoding: text, as: UTF8.self)
        if let index = names.firstIndex(of: name) { return 1000 + index }
        names.append(name)
        return 1000 + names.count - 1
    }

    mutating func readMeasures(of partNode: XMLNode, into part: inout RawPart) throws(ImportError) {
        var divisions = Rational(1)
        var noteCount = 0
        // A transposing instrument's written-to-sounding interval (<transpose>).
        var transposition: (diatonic: Int, chromatic: Int)?
        var voiceNames: [String] = []
        // The volta ending open across measures, if any.
        var openEnding: [Int]?
        var measureIndex = 0
        for measureNode in partNode.elements where measureNode.tag == .measure {
            if measureIndex >= Self.maximumMeasures {
                throw ImportError("part '\(part.displayName)' has more than \(Self.maximumMeasures) measures; the box takes \(Self.maximumMeasures) at most", line: measureNode.line)
            }
            var measure = RawMeasure(number: measureNode.attribute("number") ?? "\(measureIndex + 1)")
            measure.notes.reserveCapacity(16)
            var position = Rational.zero
            var furthest = Rational.zero
            var padded = Rational.zero
            // A chord belongs to its first note's staff and voice, and starts
            // where that note does.
            var chordHead = (onset: Rational.zero, voice: 1, staff: 1, duration: Rational.zero)
            var roundedDurations = 0
            if let ending = openEnding { measure.marks.ending = ending }

            for element in measureNode.elements {
                switch element.tag {
                case .attributes:
                    try readAttributes(element, at: position, divisions: &divisions, transposition: &transposition, into: &measure, part: &part, measureIndex: measureIndex)
                case .note:
                    if element.has(.grace) {
                        report.note("grace notes ignored", measureIndex: measureIndex)
                        continue
                    }
                    if element.has(.cue) {
                        report.note("cue notes ignored", measureIndex: measureIndex)
                        continue
                    }
                    var note = try readNote(element, transposition: transposition, measureIndex: measureIndex)
                    guard let durationValue = try Self.number(element, .duration) else {
                        throw ImportError("a note without <duration> (only grace notes may leave it out)", line: element.line)
                    }
                    if durationValue.numerator < 0 || durationValue.compare(Rational(1_000_000_000)) > 0 {
                        throw ImportError("note <duration> \(durationValue) is out of range", line: element.child(.duration)?.line ?? element.line)
                    }
                    var duration = Self.ticks(durationValue, divisions: divisions)
                    // A duration the notation program rounded to its
                    // divisions (a triplet eighth at 256 divisions as 85 or
                    // 86): the written value gives the exact one.
                    if let exact = Self.exactDuration(of: note), exact.compare(duration) != 0 {
                        let division = Self.ticks(Rational(1), divisions: divisions)
                        if let difference = try? exact.subtracting(duration), difference.compare(division) < 0,
                           (try? duration.subtracting(exact))?.compare(division) ?? 1 < 0
                        {
                            duration = exact
                            roundedDurations += 1
                        }
                    }
                    if duration.compare(.zero) == 0 {
                        // Not a grace note, yet no time: nothing to sing; left out, and said.
                        report.note("notes of no length (<duration>0</duration>) left out", measureIndex: measureIndex)
                        continue
                    }
                    if note.isChordMember, duration.compare(chordHead.duration) != 0, chordHead.duration.compare(.zero) > 0 {
                        // A chord sounds together: a member whose length
                        // disagrees with its chord's (a writing program's
                        // rounding) takes the chord's. Said, not refused.
                        report.note("chord notes of another length than their chord given the chord's", measureIndex: measureIndex)
                        duration = chordHead.duration
                    }
                    note.duration = duration
                    if note.isChordMember {
                        if let head = measure.notes.last(where: { !$0.isChordMember }) {
                            note.marks.fermata = note.marks.fermata || head.marks.fermata
                            note.marks.articulations.formUnion(head.marks.articulations)
                            note.marks.breath = note.marks.breath ?? head.marks.breath
                            note.marks.dynamic = note.marks.dynamic ?? head.marks.dynamic
                        }
                        note.onset = chordHead.onset
                        note.voice = chordHead.voice
                        note.staff = chordHead.staff
                    } else {
                        note.onset = position
                        note.voice = voiceNumber(element.trimmedText(.voice), names: &voiceNames)
                        note.staff = max(1, min(element.int(.staff) ?? 1, Self.maximumStaves))
                        position = try Self.add(position, duration, line: element.line)
                        if position.compare(furthest) > 0 { furthest = position }
                        chordHead = (note.onset, note.voice, note.staff, duration)
                    }
                    part.staves = max(part.staves, note.staff)
                    noteCount += 1
                    if noteCount > Self.maximumNotesPerPart {
                        throw ImportError("part '\(part.displayName)' has more than \(Self.maximumNotesPerPart) notes; the box takes \(Self.maximumNotesPerPart) at most", line: element.line)
                    }
                    measure.notes.append(note)
                case .backup:
                    guard let value = try Self.number(element, .duration, within: 0...1_000_000_000) else {
                        throw ImportError("<backup> without <duration>", line: element.line)
                    }
                    let back = Self.ticks(value, divisions: divisions)
                    do { position = try position.subtracting(back) } catch { throw ImportError("durations too large", line: element.line) }
                    if position.compare(.zero) < 0 { position = .zero }
                    // A backup by a rounded measure length lands on a
                    // rounded position; snap back to the measure start.
                    if position.compare(Self.ticks(Rational(1), divisions: divisions)) < 0 && roundedDurations > 0 { position = .zero }
                case .forward:
                    guard let value = try Self.number(element, .duration, within: 0...1_000_000_000) else {
                        throw ImportError("<forward> without <duration>", line: element.line)
                    }
                    position = try Self.add(position, Self.ticks(value, divisions: divisions), line: element.line)
                    if position.compare(padded) > 0 { padded = position }
                case .direction:
                    readDirection(element, at: position, divisions: divisions, into: &measure, measureIndex: measureIndex)
                case .sound:
                    readSound(element, at: position, into: &measure, measureIndex: measureIndex)
                case .barline:
                    readBarline(element, into: &measure, openEnding: &openEnding)
                case .harmony:
                    report.note("chord symbols ignored", measureIndex: measureIndex)
                case .figuredBass:
                    report.note("figured bass ignored", measureIndex: measureIndex)
                default:
                    break
                }
            }
            if roundedDurations > 0 {
                report.note("durations rounded by the notation program read exactly from the written note values (tuplets)", measureIndex: measureIndex, count: roundedDurations)
            }
            measure.length = furthest
            measure.paddedLength = padded.compare(furthest) > 0 ? padded : furthest
            part.measures.append(measure)
            measureIndex += 1
        }
    }

    /// The exact length of a note from its written type, dots and tuplet
    /// ratio, when it has a type.
    static func exactDuration(of note: RawNote) -> Rational? {
        guard let value = note.typeValue else { return nil }
        guard let ratio = note.ratio else { return Rational(value.writtenTicks) }
        return Rational(Int128(value.writtenTicks * ratio.normal), Int128(ratio.actual))
    }

    mutating func readAttributes(_ element: XMLNode, at position: Rational, divisions: inout Rational, transposition: inout (diatonic: Int, chromatic: Int)?,
                                 into measure: inout RawMeasure, part: inout RawPart, measureIndex: Int) throws(ImportError) {
        for child in element.elements {
            switch child.tag {
            case .divisions:
                guard let value = try Self.number(element, .divisions), value.numerator > 0, value.compare(Rational(1_000_000_000)) <= 0 else {
                    let text = String(decoding: child.trimmedBytes.prefix(40), as: UTF8.self)
                    throw ImportError("<divisions> must be a positive number, not \(text)", line: child.line)
                }
                divisions = value
            case .transpose:
                let octaves = try Self.wholeNumber(child, .octaveChange, within: -4...4) ?? 0
                let chromatic = try Self.wholeNumber(child, .chromatic, within: -48...48) ?? 0
                let diatonic = try Self.wholeNumber(child, .diatonic, within: -28...28) ?? Self.diatonicSteps(forSemitones: chromatic)
                transposition = (diatonic + 7 * octaves, chromatic + 12 * octaves)
                if transposition! == (0, 0) {
                    transposition = nil
                } else {
                    report.note("part '\(part.displayName)' is written for a transposing instrument (\(Self.intervalWords(transposition!.chromatic))): imported at sounding pitch", measureIndex: measureIndex)
                }
            case .key:
                if child.attribute("number") == nil || child.attribute("number", is: "1") {
                    try readKey(child, at: position, into: &measure, measureIndex: measureIndex)
                }
            case .time:
                try readTime(child, into: &measure, measureIndex: measureIndex)
            case .clef:
                let staff = child.attribute("number").flatMap { Int($0) } ?? 1
                if (1...Self.maximumStaves).contains(staff) { measure.clefs[staff] = readClef(child, measureIndex: measureIndex) }
            case .staves:
                if let staves = child.trimmedBytes.isEmpty ? nil : Int(String(decoding: child.trimmedBytes, as: UTF8.self)), staves > 1 {
                    part.staves = max(part.staves, min(staves, Self.maximumStaves))
                }
            default:
                break
            }
        }
    }

    mutating func readNote(_ element: XMLNode, transposition: (diatonic: Int, chromatic: Int)?, measureIndex: Int) throws(ImportError) -> RawNote {
        var note = RawNote(onset: .zero, duration: .zero)
        var dots = 0
        var actual: Int?
        var normal: Int?
        for child in element.elements {
            switch child.tag {
            case .chord:
                note.isChordMember = true
            case .pitch:
                note.pitch = try readPitch(child, transposition: transposition, measureIndex: measureIndex)
            case .unpitched:
                report.note("unpitched (percussion) notes made rests", measureIndex: measureIndex)
            case .tie:
                if child.attribute("type", is: "start") { note.tieStart = true }
                if child.attribute("type", is: "stop") { note.tieStop = true }
            case .type:
                if let denominator = Self.noteType(child.trimmedBytes) { note.typeValue = NoteValue(denominator) }
            case .dot:
                dots += 1
            case .timeModification:
                actual = child.int(.actualNotes)
                normal = child.int(.normalNotes)
            case .notations:
                readNotations(child, into: &note, measureIndex: measureIndex)
            case .lyric:
                readLyric(child, into: &note, measureIndex: measureIndex)
            default:
                break
            }
        }
        if let value = note.typeValue {
            let dotted = NoteValue(value.denominator, dots: dots)
            note.typeValue = dotted.isValid ? dotted : nil
        }
        if let actual, let normal, actual > 0, normal > 0, actual != normal, actual <= 1_000, normal <= 1_000 {
            note.ratio = (actual, normal)
        }
        return note
    }

    mutating func readPitch(_ pitchNode: XMLNode, transposition: (diatonic: Int, chromatic: Int)?, measureIndex: Int) throws(ImportError) -> Pitch? {
        // A pitch that cannot be read is an error: a note never turns into a rest unseen.
        let stepNode = pitchNode.child(.step)
        let stepText = stepNode?.trimmedBytes ?? []
        guard stepText.count == 1, let step = stepText.first.flatMap(Step.init(letter:)) else {
            throw ImportError(stepNode == nil ? "a <pitch> without <step>" : "<step> '\(String(decoding: stepText.prefix(20), as: UTF8.self))' is not a note name (A to G)",
                              line: stepNode?.line ?? pitchNode.line)
        }
        guard let octave = try Self.wholeNumber(pitchNode, .octave, within: 0...9) else {
            throw ImportError("a <pitch> without <octave>", line: pitchNode.line)
        }
        let alterValue = try Self.number(pitchNode, .alter, within: -9...9) ?? .zero
        var alter = Int(alterValue.roundedHalfUp)
        if !alterValue.isInteger { report.note("microtonal alterations rounded to the nearest semitone", measureIndex: measureIndex) }
        if !(-2...2).contains(alter) {
            report.note("alterations beyond double sharp/flat clamped", measureIndex: measureIndex)
            alter = max(-2, min(2, alter))
        }
        var pitch = Pitch(step: step, alter: alter, octave: octave)
        if let transposition { pitch = Self.transposed(pitch, diatonic: transposition.diatonic, chromatic: transposition.chromatic) }
        guard (0...127).contains(pitch.midi) else {
            report.note("pitches outside the MIDI range made rests", measureIndex: measureIndex)
            return nil
        }
        return pitch
    }

    mutating func readNotations(_ notations: XMLNode, into note: inout RawNote, measureIndex: Int) {
        for child in notations.elements {
            switch child.tag {
            case .tied:
                if child.attribute("type", is: "start") { note.tieStart = true }
                if child.attribute("type", is: "stop") { note.tieStop = true }
            case .tuplet:
                if child.attribute("type", is: "start") { note.startsTuplet = true }
            case .slur:
                if child.attribute("type", is: "start") { note.marks.slurStart = true }
                if child.attribute("type", is: "stop") { note.marks.slurEnd = true }
            case .articulations:
                for articulation in child.elements {
                    switch articulation.tag {
                    case .staccato, .staccatissimo: note.marks.articulations.insert(.staccato)
                    case .tenuto: note.marks.articulations.insert(.tenuto)
                    case .detachedLegato: note.marks.articulations.formUnion([.staccato, .tenuto])
                    case .accent: note.marks.articulations.insert(.accent)
                    case .strongAccent: note.marks.articulations.insert(.marcato)
                    case .breathMark: note.marks.breath = .breath
                    case .caesura: note.marks.breath = .caesura
                    default: report.note("articulations other than staccato, tenuto, accent, marcato, breath and caesura ignored", measureIndex: measureIndex)
                    }
                }
            case .fermata: note.marks.fermata = true
            case .ornaments: report.note("ornaments ignored", measureIndex: measureIndex)
            case .dynamics:
                if let dynamic = Self.dynamic(child, measureIndex: measureIndex, report: &report) { note.marks.dynamic = dynamic }
            default: break
            }
        }
    }

    mutating func readLyric(_ lyric: XMLNode, into note: inout RawNote, measureIndex: Int) {
        let number = lyric.attribute("number") ?? "1"
        var line = lyricNumbers.firstIndex(of: number)
        if line == nil {
            guard lyricNumbers.count < Score.maximumVerses else {
                report.note("lyrics: verses beyond \(Score.maximumVerses) ignored", measureIndex: measureIndex)
                return
            }
            lyricNumbers.append(number)
            line = lyricNumbers.count - 1
        }
        let verse = line! + 1
        guard !note.lyrics.contains(where: { $0.verse == verse }) else { return }
        // Syllables joined by an elision share the note: "‿" between them.
        var text = lyric.children(.text).map(\.text).joined(separator: "‿")
        if text.unicodeScalars.contains(where: { SafeText.isControl($0) && !$0.properties.isWhitespace }) {
            // An escape sequence or a direction override is never a syllable: dropped, and said.
            text = String(String.UnicodeScalarView(text.unicodeScalars.filter { !SafeText.isControl($0) || $0.properties.isWhitespace }))
            report.note("lyrics: control characters left out", measureIndex: measureIndex)
        }
        if text.unicodeScalars.count > ScoreLimits.maximumTextScalars {
            text = String(String.UnicodeScalarView(text.unicodeScalars.prefix(ScoreLimits.maximumTextScalars)))
            report.note("lyrics: a syllable longer than \(ScoreLimits.maximumTextScalars) characters cut short", measureIndex: measureIndex)
        }
        // Words sung on one note keep their space (one, between words).
        text = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        while text.hasSuffix("-") { text.removeLast() }
        if text.hasPrefix("//") { text = "‿" + text }
        if text.contains("_") {
            text = String(text.map { $0 == "_" ? "‿" : $0 })
        }
        let syllabic = lyric.trimmedText(.syllabic)
        let continues = syllabic.map { $0.elementsEqual("begin".utf8) || $0.elementsEqual("middle".utf8) } ?? false
        if !text.isEmpty { note.lyrics.append((verse, Lyric(text, continuesWord: continues))) }
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

    static func noteType<Bytes: Collection<UInt8>>(_ text: Bytes) -> Int? {
        switch text.count {
        case 4 where text.elementsEqual("half".utf8): 2
        case 5 where text.elementsEqual("whole".utf8): 1
        case 7 where text.elementsEqual("quarter".utf8): 4
        case 6 where text.elementsEqual("eighth".utf8): 8
        case 4 where text.elementsEqual("16th".utf8): 16
        case 4 where text.elementsEqual("32nd".utf8): 32
        default: nil
        }
    }

    mutating func readKey(_ node: XMLNode, at position: Rational, into measure: inout RawMeasure, measureIndex: Int) throws(ImportError) {
        guard let fifths = try Self.wholeNumber(node, .fifths, within: -7...7) else {
            report.note("non-traditional key signatures ignored", measureIndex: measureIndex)
            return
        }
        var mode = Mode.major
        if let modeText = node.string(.mode) {
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
        if node.has(.senzaMisura) {
            report.note("unmetered passages (senza misura) measured by their notes", measureIndex: measureIndex)
            return
        }
        guard let beatsText = node.string(.beats), let beatType = try Self.wholeNumber(node, .beatType, within: 1...1_024) else {
            throw ImportError("a <time> without <beats> and <beat-type>", line: node.line)
        }
        let pieces = beatsText.split(separator: "+").map { $0.split(separator: " ").joined() }
        let parts = pieces.compactMap { Int($0) }.filter { (1...1_024).contains($0) }
        guard !pieces.isEmpty, parts.count == pieces.count else {
            throw ImportError("<beats> '\(beatsText.prefix(40))' is not a number of beats (like 3 or 3+2)", line: node.child(.beats)?.line ?? node.line)
        }
        let beats = parts.reduce(0, +)
        if parts.count > 1 { report.note("compound time signature \(beatsText)/\(beatType) written as \(beats)/\(beatType)", measureIndex: measureIndex) }
        let meter = Meter(beats, beatType)
        if meter.isValid {
            measure.meter = meter
            measure.beatsText = beatsText
            if node.attribute("symbol", is: "common") && meter == Meter(4, 4) { measure.meterSymbol = .common }
            if node.attribute("symbol", is: "cut") && meter == Meter(2, 2) { measure.meterSymbol = .cut }
        } else {
            report.note("time signature \(beatsText)/\(beatType) not supported; measures kept at their written length", measureIndex: measureIndex)
        }
    }

    mutating func readClef(_ node: XMLNode, measureIndex: Int) -> Clef? {
        let sign = node.string(.sign) ?? ""
        let line = node.int(.line)
        let octave = node.int(.clefOctaveChange) ?? 0
        switch (sign, line, octave) {
        case ("G", 2, 0), ("G", nil, 0): return .treble
        case ("G", 2, -1), ("G", nil, -1): return .treble8vb
        case ("C", 3, 0): return .alto
        case ("F", 4, 0), ("F", nil, 0): return .bass
        default:
            report.note("clef \(sign)\(line.map(String.init) ?? "")\(octave != 0 ? " (octave \(octave))" : "") not supported; the clef is inferred from the range", measureIndex: measureIndex)
            return nil
        }
    }

    /// Repeat signs and volta endings. An ending runs from its start to its
    /// stop (or discontinue) barline.
    mutating func readBarline(_ node: XMLNode, into measure: inout RawMeasure, openEnding: inout [Int]?) {
        if let repeatNode = node.child(.repeat) {
            if repeatNode.attribute("direction", is: "forward") {
                measure.marks.forward = true
            } else if repeatNode.attribute("direction", is: "backward") {
                let times = repeatNode.attribute("times").flatMap { Int($0) } ?? 2
                measure.marks.backward = max(2, min(times, 16))
                // A backward repeat ends the volta it closes, written or not.
                if node.child(.ending) == nil, let open = openEnding {
                    if measure.marks.ending == nil { measure.marks.ending = open }
                    openEnding = nil
                }
            }
        }
        if let ending = node.child(.ending) {
            let numbers = (ending.attribute("number") ?? "").split { !$0.isNumber }.compactMap { Int($0) }.filter { (1...16).contains($0) }
            if ending.attribute("type", is: "start") {
                let list = numbers.isEmpty ? [1] : numbers
                measure.marks.ending = list
                openEnding = list
            } else {
                if measure.marks.ending == nil, let open = openEnding { measure.marks.ending = open }
                openEnding = nil
            }
        }
    }

    /// Playback jumps, as `<sound>` marks them: segno, coda, to coda, da
    /// capo, dal segno, fine; and tempo.
    mutating func readSound(_ node: XMLNode, at position: Rational, into measure: inout RawMeasure, measureIndex: Int) {
        if let tempo = node.attribute("tempo").flatMap(Double.init) { addTempo(tempo, at: position, into: &measure, measureIndex: measureIndex) }
        if node.attribute("segno") != nil { measure.marks.segno = true }
        if node.attribute("coda") != nil { measure.marks.coda = true }
        if node.attribute("tocoda") != nil { measure.marks.toCoda = true }
        if node.attribute("dacapo", is: "yes") { measure.marks.daCapo = true }
        if node.attribute("dalsegno") != nil { measure.marks.dalSegno = true }
        if node.attribute("fine") != nil { measure.marks.fine = true }
    }

    mutating func readDirection(_ node: XMLNode, at position: Rational, divisions: Rational, into measure: inout RawMeasure, measureIndex: Int) {
        var at = position
        if let offset = node.trimmedText(.offset).flatMap(Self.exactDecimal) {
            at = (try? at.adding(Self.ticks(offset, divisions: divisions))) ?? at
            if at.compare(.zero) < 0 { at = .zero }
            // Past any measure (the song places it at its measure's end).
            if at.compare(Rational(1_000_000_000)) > 0 { at = Rational(1_000_000_000) }
        }
        let sound = node.child(.sound)
        if let sound { readSound(sound, at: at, into: &measure, measureIndex: measureIndex) }
        let metronome = node.children(.directionType).contains { $0.has(.metronome) }
        if metronome, let index = measure.tempos.lastIndex(where: { $0.offset.compare(at) == 0 }) { measure.tempos[index].printed = true }
        if sound?.attribute("tempo") == nil {
            for type in node.children(.directionType) {
                if let metronome = type.child(.metronome), let perMinute = metronome.double(.perMinute),
                   let unit = metronome.trimmedText(.beatUnit), let denominator = Self.noteType(unit)
                {
                    let dots = metronome.children(.beatUnitDot).count
                    let quarters = Double(NoteValue(denominator, dots: min(dots, 3)).writtenTicks) / Double(ticksPerQuarter)
                    addTempo(perMinute * quarters, at: at, into: &measure, measureIndex: measureIndex, printed: true)
                }
            }
        }
        let staff = node.int(.staff).map { max(1, min($0, Self.maximumStaves)) }
        func add(_ kind: RawDirection.Kind) { measure.directions.append(RawDirection(offset: at, staff: staff, kind: kind)) }
        for type in node.children(.directionType) {
            for child in type.elements {
                switch child.tag {
                case .dynamics:
                    if let dynamic = Self.dynamic(child, measureIndex: measureIndex, report: &report) { add(.dynamic(dynamic)) }
                case .wedge:
                    if child.attribute("type", is: "crescendo") { add(.hairpin(.crescendo)) }
                    if child.attribute("type", is: "diminuendo") { add(.hairpin(.diminuendo)) }
                    if child.attribute("type", is: "stop") { add(.hairpin(.end)) }
                case .words, .rehearsal:
                    let text = ScoreBuilder.clean(child.text, forbidden: "")
                    if !text.isEmpty { add(.text(child.tag == .words ? .words : .rehearsal, text)) }
                case .segno: measure.marks.segno = true
                case .coda: measure.marks.coda = true
                case .pedal: report.note("pedal marks ignored", measureIndex: measureIndex)
                default: break
                }
            }
        }
    }

    /// A `<dynamics>` element's level (the first one the model has).
    static func dynamic(_ node: XMLNode, measureIndex: Int, report: inout PendingReport) -> Dynamic? {
        for child in node.elements {
            if let dynamic = Dynamic(rawValue: child.name) { return dynamic }
        }
        report.note("dynamics the model does not have ignored", measureIndex: measureIndex)
        return nil
    }

    mutating func addTempo(_ bpm: Double, at offset: Rational, into measure: inout RawMeasure, measureIndex: Int, printed: Bool = false) {
        guard bpm.isFinite, bpm >= 1, bpm < 1000 else {
            report.note("tempo markings outside 1–999 BPM ignored", measureIndex: measureIndex)
            return
        }
        measure.tempos.append((offset, Int((bpm * 1000).rounded()), printed))
    }
}
