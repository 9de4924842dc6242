import AcapellaScore

/// Whether parts with several voices or staves become one part per voice.
public enum SplitMode: String, Sendable {
    /// Choir parts are split (closed score: Soprano and Alto on one staff);
    /// keyboard accompaniments and parts with only brief divisi are not.
    case auto
    /// Every part with several voices is split, a piano too.
    case always
    /// One part per MusicXML part: its top staff, lowest voice, top notes.
    case never
}

/// Turns a MusicXML part — maybe closed score, staves with two voices or
/// chords — into lines one singer sings: each a `RawPart` whose measures
/// hold one note at a time.
struct VoiceSplitter {
    var mode: SplitMode
    var report: MusicXMLReader.PendingReport

    /// One chord (or single note, or rest) of one voice.
    struct Event {
        var onset: Rational
        /// Sounding notes, highest first; empty for a rest.
        var notes: [RawNote]
        var rest: RawNote?
    }

    /// A measure's events on one staff, by voice.
    typealias VoiceEvents = [(voice: Int, events: [Event])]

    static func events(of measure: RawMeasure, staff: Int) -> VoiceEvents {
        var byVoice: VoiceEvents = []
        var last: (voice: Int, index: Int)?
        for note in measure.notes where note.staff == staff {
            let slot = byVoice.firstIndex { $0.voice == note.voice } ?? {
                byVoice.append((note.voice, []))
                return byVoice.count - 1
            }()
            if note.isChordMember, let last, last.voice == note.voice, note.pitch != nil {
                byVoice[slot].events[last.index].notes.append(note)
                continue
            }
            byVoice[slot].events.append(Event(onset: note.onset, notes: note.pitch == nil ? [] : [note], rest: note.pitch == nil ? note : nil))
            last = (note.voice, byVoice[slot].events.count - 1)
        }
        for slot in byVoice.indices {
            for index in byVoice[slot].events.indices where byVoice[slot].events[index].notes.count > 1 {
                byVoice[slot].events[index].notes.sort { ($0.pitch?.midi ?? 0) > ($1.pitch?.midi ?? 0) }
            }
        }
        return byVoice
    }

    /// Lines one voice of a measure needs: its largest chord (a rest or a
    /// single note needs one).
    static func width(_ events: [Event]) -> Int { max(1, events.map(\.notes.count).max() ?? 1) }

    static let keyboardWords = ["piano", "pianoforte", "pno", "keyboard", "keys", "organ", "orgel", "harpsichord", "cembalo",
                                "klavier", "accompaniment", "accomp", "acc", "celesta", "harp", "guitar", "synth"]

    static func isKeyboard(_ name: String) -> Bool {
        name.lowercased().split { !$0.isLetter }.contains { keyboardWords.contains(String($0)) }
    }

    /// The lines of a part, named, with what was done reported.
    mutating func lines(of part: RawPart) -> [RawPart] {
        let staves = max(1, part.staves)
        // One staff, one voice, no chords (an open-score part): the part
        // is its own line, as the general path below would find.
        if staves == 1, let voice = part.measures.lazy.flatMap(\.notes).first?.voice,
           part.measures.allSatisfy({ $0.notes.allSatisfy { $0.voice == voice && !$0.isChordMember } }) {
            return [part]
        }
        var perStaff: [[VoiceEvents]] = []
        var widths: [Int] = []
        var substantial: [Bool] = []
        var meanPitch: [[Int: Double]] = []
        for staff in 1...staves {
            let measures = part.measures.map { Self.events(of: $0, staff: staff) }
            perStaff.append(measures)
            var sums: [Int: (total: Int, count: Int)] = [:]
            var widest = 0
            var sounding = 0
            var several = 0
            for measure in measures {
                let width = measure.reduce(0) { $0 + Self.width($1.events) }
                widest = max(widest, width)
                let sings = measure.contains { $0.events.contains { !$0.notes.isEmpty } }
                if sings { sounding += 1 }
                if sings && width >= 2 { several += 1 }
                for (voice, events) in measure {
                    for event in events {
                        for note in event.notes {
                            sums[voice, default: (0, 0)].total += note.pitch!.midi
                            sums[voice, default: (0, 0)].count += 1
                        }
                    }
                }
            }
            widths.append(widest)
            // Two lines in at least a quarter of the measures that have notes:
            // closed score. Less is divisi or a passing chord in one part.
            substantial.append(several > 0 && several * 4 >= sounding)
            meanPitch.append(sums.mapValues { Double($0.total) / Double(max($0.count, 1)) })
        }

        let hasLyrics = part.measures.contains { $0.notes.contains { !$0.lyrics.isEmpty } }
        let keyboard = Self.isKeyboard(part.name)
        var counts = (0..<staves).map { staff in
            switch mode {
            case .never: return staff == 0 ? 1 : 0
            case .always: return max(widths[staff], 1)
            case .auto: return substantial[staff] ? widths[staff] : (widths[staff] > 0 || staff == 0 ? 1 : 0)
            }
        }
        let splitting = mode == .always || (mode == .auto && !keyboard && (hasLyrics || widths.max()! <= 2))
        if mode == .auto && !splitting {
            counts = (0..<staves).map { $0 == 0 ? 1 : 0 }
        }
        // A staff that never has a note makes no part (unless it is the only one).
        for staff in 0..<staves where counts[staff] > 0 && widths[staff] == 0 && counts.reduce(0, +) > counts[staff] { counts[staff] = 0 }

        let total = counts.reduce(0, +)
        let names = Self.names(for: part, count: total)
        var result: [RawPart] = []
        var described: [String] = []
        var chordsSplit = 0
        var topNotesKept = 0, firstChordMeasure: Int?
        var droppedVoices = 0, firstDroppedVoiceMeasure: Int?
        var droppedStaffNotes = 0, firstDroppedStaffMeasure: Int?
        var line = 0
        for staff in 0..<staves {
            let count = counts[staff]
            if count == 0 {
                for (measureIndex, voices) in perStaff[staff].enumerated() {
                    let notes = voices.reduce(0) { $0 + $1.events.reduce(0) { $0 + $1.notes.count } }
                    if notes > 0, firstDroppedStaffMeasure == nil { firstDroppedStaffMeasure = measureIndex }
                    droppedStaffNotes += notes
                }
                continue
            }
            var staffLines = (0..<count).map { index in
                RawPart(id: part.id, name: part.name, displayName: names[line + index], abbreviation: total == 1 ? part.abbreviation : nil,
                        staves: 1, measures: [])
            }
            for (measureIndex, measure) in part.measures.enumerated() {
                var lineMeasures = (0..<count).map { _ in
                    var copy = measure
                    copy.notes = []
                    copy.clefs = [:]
                    if let clef = measure.clefs[staff + 1] { copy.clefs[1] = clef }
                    // A dynamic belongs to its staff's voices; text to the score.
                    copy.directions = measure.directions.filter { direction in
                        if case .text = direction.kind { return true }
                        return (direction.staff ?? 1) == staff + 1
                    }
                    return copy
                }
                let voices = perStaff[staff][measureIndex]
                if count == 1 {
                    let (notes, chords, dropped) = Self.singleLine(voices)
                    lineMeasures[0].notes = notes
                    topNotesKept += chords
                    droppedVoices += dropped
                    if chords > 0, firstChordMeasure == nil { firstChordMeasure = measureIndex }
                    if dropped > 0, firstDroppedVoiceMeasure == nil { firstDroppedVoiceMeasure = measureIndex }
                } else {
                    chordsSplit += assign(voices, into: &lineMeasures, means: meanPitch[staff])
                }
                for index in 0..<count { staffLines[index].measures.append(lineMeasures[index]) }
            }
            if staves > 1 || count > 1 {
                described.append((staves > 1 ? "staff \(staff + 1) → " : "") + names[line..<(line + count)].joined(separator: ", "))
            }
            result += staffLines
            line += count
        }

        if total > 1 {
            report.note("\(part.displayName): " + described.joined(separator: "; ") + (chordsSplit > 0 ? " (chords split ×\(chordsSplit))" : ""),
                        measureIndex: nil)
            borrowLyrics(&result, staffOfLine: counts.enumerated().flatMap { Array(repeating: $0.offset, count: $0.element) })
        } else if staves > 1 || widths[0] > 1 {
            let why = mode == .never ? "as asked" : keyboard ? "an accompaniment"
                : !splitting ? "chords of more than two notes and no words: read as an accompaniment" : "mostly one line, brief divisi"
            report.note("part '\(part.displayName)' (\(staves > 1 ? "\(staves) staves" : "one staff"), \(why)): kept as one part, the top notes\(mode == .never ? "" : "; import with --split for one part per voice")",
                        measureIndex: nil)
        }
        if topNotesKept > 0 { report.note("chords: kept the top note", measureIndex: firstChordMeasure, count: topNotesKept) }
        if droppedVoices > 0 { report.note("lower voices dropped in part '\(part.displayName)'", measureIndex: firstDroppedVoiceMeasure, count: droppedVoices) }
        if droppedStaffNotes > 0 { report.note("notes on lower staves dropped in part '\(part.displayName)'", measureIndex: firstDroppedStaffMeasure, count: droppedStaffNotes) }
        return result
    }

    /// One line from a staff: the lowest-numbered voice (voice 1 whenever
    /// the measure has it), the top note of its chords.
    static func singleLine(_ voices: VoiceEvents) -> (notes: [RawNote], chords: Int, droppedVoiceNotes: Int) {
        guard let kept = voices.min(by: { $0.voice < $1.voice }) else { return ([], 0, 0) }
        var notes: [RawNote] = []
        var chords = 0
        for event in kept.events {
            if var top = event.notes.first {
                if event.notes.count > 1 {
                    chords += 1
                    // Words and tie marks may sit on any note of the chord.
                    for other in event.notes.dropFirst() where top.lyrics.isEmpty { top.lyrics = other.lyrics }
                }
                notes.append(top)
            } else if let rest = event.rest {
                notes.append(rest)
            }
        }
        let dropped = voices.filter { $0.voice != kept.voice }.reduce(0) { $0 + $1.events.reduce(0) { $0 + $1.notes.count } }
        return (notes, chords, dropped)
    }

    /// Deals a measure's voices out to `lines` (top first): voices in pitch
    /// order, each as many lines as its largest chord, spare lines to the
    /// widest voice (so a unison or a measure in one voice sounds in both);
    /// chords split by pitch order, a chord with fewer notes than its lines
    /// doubling its lowest. Returns how many chords were split.
    func assign(_ voices: VoiceEvents, into lines: inout [RawMeasure], means: [Int: Double]) -> Int {
        guard !voices.isEmpty else { return 0 }
        let ordered = voices.sorted { a, b in
            let (x, y) = (means[a.voice] ?? -1, means[b.voice] ?? -1)
            return x != y ? x > y : a.voice < b.voice
        }
        var widths = ordered.map { Self.width($0.events) }
        while widths.reduce(0, +) > lines.count, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > 1 {
            widths[widest] -= 1
        }
        if widths.reduce(0, +) < lines.count, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }) {
            widths[widest] += lines.count - widths.reduce(0, +)
        }
        var split = 0
        var first = 0
        for (slot, voice) in ordered.enumerated() where first < lines.count {
            let width = min(widths[slot], lines.count - first)
            for event in voice.events {
                if event.notes.count > 1 { split += 1 }
                for index in 0..<width {
                    if event.notes.isEmpty {
                        if let rest = event.rest { lines[first + index].notes.append(rest) }
                    } else {
                        var note = event.notes[min(index, event.notes.count - 1)]
                        note.isChordMember = false
                        lines[first + index].notes.append(note)
                    }
                }
            }
            first += width
        }
        return split
    }

    /// Lines that have (almost) no words of their own sing the words of the
    /// nearest line above that has them, on the notes that start together
    /// with a syllable there: hymnals print one set of words between the
    /// staves for all four voices.
    mutating func borrowLyrics(_ lines: inout [RawPart], staffOfLine: [Int]) {
        func ownWords(_ line: RawPart) -> Bool {
            var attacks = 0
            var syllables = 0
            for measure in line.measures {
                for note in measure.notes where note.pitch != nil && !note.tieStop {
                    attacks += 1
                    if !note.lyrics.isEmpty { syllables += 1 }
                }
            }
            return attacks > 0 && syllables * 4 >= attacks
        }
        let hasWords = lines.map(ownWords)
        var borrowers: [String] = []
        var sources: Set<String> = []
        for index in lines.indices where !hasWords[index] {
            let above = (0..<index).reversed()
            guard let source = above.first(where: { hasWords[$0] && staffOfLine[$0] == staffOfLine[index] }) ?? above.first(where: { hasWords[$0] })
                ?? lines.indices.first(where: { hasWords[$0] })
            else { continue }
            var copied = 0
            for measure in lines[index].measures.indices {
                let syllables = lines[source].measures[measure].notes.filter { $0.pitch != nil && !$0.tieStop && !$0.lyrics.isEmpty }
                for note in lines[index].measures[measure].notes.indices {
                    let current = lines[index].measures[measure].notes[note]
                    guard current.pitch != nil, !current.tieStop, current.lyrics.isEmpty,
                          let match = syllables.first(where: { $0.onset.compare(current.onset) == 0 })
                    else { continue }
                    lines[index].measures[measure].notes[note].lyrics = match.lyrics
                    copied += 1
                }
            }
            if copied > 0 {
                borrowers.append(lines[index].displayName)
                sources.insert(lines[source].displayName)
            }
        }
        if !borrowers.isEmpty {
            report.note("lyrics: \(borrowers.joined(separator: ", ")) sing\(borrowers.count == 1 ? "s" : "") the words written for \(sources.sorted().joined(separator: " and ")) (copied where the notes start together)",
                        measureIndex: nil)
        }
    }

    /// Names for a part's lines: from the part name when it names the
    /// voices ("Soprano Alto", "Tenor/Bass", "SATB"), else "NAME 1", "NAME 2"…
    /// ("Choir 1"… for an unnamed part).
    static func names(for part: RawPart, count: Int) -> [String] {
        guard count > 1 else { return [part.displayName] }
        let words = part.name.split { !$0.isLetter && $0 != "." }.map { $0.lowercased().replacingDots() }
        let voiceWords: [String: String] = [
            "soprano": "Soprano", "sopran": "Soprano", "sopr": "Soprano", "descant": "Descant",
            "mezzo": "Mezzo", "alto": "Alto", "alt": "Alto", "contralto": "Alto",
            "tenor": "Tenor", "tenore": "Tenor", "ten": "Tenor",
            "baritone": "Baritone", "bariton": "Baritone", "bar": "Baritone", "bass": "Bass", "basso": "Bass", "bas": "Bass",
        ]
        var named = words.compactMap { voiceWords[$0] }
        if named.count != words.count || named.count != count {
            // "SATB", "S A T B", "SA", "TTBB": one letter per voice.
            let letters = words.joined()
            if letters.count == count, letters.allSatisfy({ "satb".contains($0) }) {
                named = letters.map { String($0).uppercased() }
            } else {
                named = []
            }
        }
        if named.count == count {
            // "S S A" → "S 1", "S 2", "A".
            var seen: [String: Int] = [:]
            for name in named { seen[name, default: 0] += 1 }
            var numbered: [String: Int] = [:]
            return named.map { name in
                guard seen[name]! > 1 else { return name }
                numbered[name, default: 0] += 1
                return "\(name) \(numbered[name]!)"
            }
        }
        let base = part.name.split(whereSeparator: \.isWhitespace).isEmpty || part.displayName.hasPrefix("Part ") ? "Choir" : part.displayName
        return (1...count).map { "\(base) \($0)" }
    }
}

extension String {
    fileprivate func replacingDots() -> String { String(filter { $0 != "." }) }
}
