/// Part declarations, note lines and lyrics of the `.acasong` parser.
extension AcasongParser {
    private static let clefList = Clef.allCases.map(\.rawValue).joined(separator: ", ")

    // MARK: part NAME (SHORT) [clef]

    mutating func parsePartDeclaration(_ content: Range<Int>, location: TextLocation) {
        finishCurrentPart()
        if parts.count == ScoreLimits.maximumParts {
            error("more than \(ScoreLimits.maximumParts) parts; the box takes \(ScoreLimits.maximumParts) at most", at: location)
            stopped = true
            return
        }
        var index = content.lowerBound + 4
        func skipBlanks() { while index < content.upperBound && isBlankByte(bytes[index]) { index += 1 } }
        skipBlanks()
        let nameStart = index
        while index < content.upperBound && bytes[index] != UInt8(ascii: "(") && bytes[index] != UInt8(ascii: "[") { index += 1 }
        let name = text(nameStart..<index).trimmingBlanks()
        var part = Part(name: name)
        if name.isEmpty {
            error("expected a part name after 'part', like 'part Soprano [treble]'", at: location.at(nameStart))
        }
        if index < content.upperBound && bytes[index] == UInt8(ascii: "(") {
            let shortStart = index + 1
            while index < content.upperBound && bytes[index] != UInt8(ascii: ")") { index += 1 }
            if index == content.upperBound {
                error("short name opened with '(' is not closed with ')'", at: location.at(shortStart - 1))
            } else {
                part.shortName = text(shortStart..<index).trimmingBlanks()
                index += 1
            }
            skipBlanks()
        }
        if index < content.upperBound && bytes[index] == UInt8(ascii: "[") {
            let clefStart = index + 1
            while index < content.upperBound && bytes[index] != UInt8(ascii: "]") { index += 1 }
            let clefText = text(clefStart..<index)
            if index == content.upperBound {
                error("clef opened with '[' is not closed with ']'", at: location.at(clefStart - 1))
            } else if let clef = Clef(rawValue: clefText) {
                part.clef = clef
                index += 1
            } else {
                error("unknown clef '\(clefText)'; expected \(Self.clefList)", at: location.at(clefStart))
                index += 1
            }
            skipBlanks()
        }
        if index < content.upperBound {
            error("unexpected \(quoted(index..<content.upperBound)) after the part declaration; expected 'part NAME (SHORT) [clef]'",
                  at: location.at(index))
        }
        if parts.contains(where: { $0.part.name == name }) && !name.isEmpty {
            error("there are two parts named '\(name)'", at: location)
        }
        current = PartState(part: part, declaration: location)
    }

    mutating func finishCurrentPart() {
        guard var state = current else { return }
        if let open = state.openTuplet {
            error("tuplet opened here is never closed with ')'", at: open.location, measure: meterMap.measure(containing: state.tick))
            closeTuplet(&state)
        }
        parts.append(state)
        current = nil
    }

    // MARK: Note lines

    mutating func parseNotes(_ content: Range<Int>, location base: TextLocation) {
        // Move the state out (leaving nil) so appending to its notes does not
        // copy the whole array on every line.
        guard var state = current else { return }
        current = nil
        defer { current = state }
        var index = content.lowerBound
        let end = content.upperBound
        while index < end && !stopped {
            let byte = bytes[index]
            if isBlankByte(byte) {
                index += 1
                continue
            }
            let here = base.at(index)
            let measure = meterMap.measure(containing: state.tick)
            if byte == UInt8(ascii: "|") {
                index += 1
                if state.openTuplet != nil {
                    error("a barline cannot stand inside a tuplet; close the group with ')' first", at: here, measure: measure)
                } else {
                    checkBarline(&state, at: here)
                }
                continue
            }
            if byte == UInt8(ascii: ")") {
                index += 1
                if state.nestedTuplets > 0 {
                    // Closes a group opened inside another (said once when it opened).
                    state.nestedTuplets -= 1
                } else if state.openTuplet == nil {
                    error("')' closes no tuplet", at: here, measure: measure)
                } else if state.openTuplet!.firstNote == state.part.notes.count {
                    error("empty tuplet group", at: state.openTuplet!.location, measure: measure)
                    state.openTuplet = nil
                } else {
                    closeTuplet(&state)
                }
                continue
            }
            if isDigitByte(byte) {
                // A tuplet opening: N( or N:M(
                let (actual, afterActual) = number(from: index, end: end)
                var normal: Int?
                var cursor = afterActual
                if cursor < end && bytes[cursor] == UInt8(ascii: ":") {
                    let (parsed, afterNormal) = number(from: cursor + 1, end: end)
                    normal = parsed
                    cursor = afterNormal
                }
                guard cursor < end && bytes[cursor] == UInt8(ascii: "("), let actual, cursor > afterActual || normal == nil else {
                    var tokenEnd = index
                    while tokenEnd < end && !isTokenEndByte(bytes[tokenEnd]) { tokenEnd += 1 }
                    error("expected a pitch or R, found \(quoted(index..<max(tokenEnd, index + 1))); a duration must follow its pitch", at: here, measure: measure)
                    index = max(tokenEnd, index + 1)
                    continue
                }
                index = cursor + 1
                let ratio = normal.map { (actual, $0) } ?? Self.defaultTupletRatio(actual)
                guard let (a, n) = ratio, (1...Tuplet.maximumRatioTerm).contains(a), (1...Tuplet.maximumRatioTerm).contains(n) else {
                    error("unsupported tuplet \(quoted(here.offset..<(cursor + 1))); write 3( … ) or N:M( … ) with N and M from 1 to \(Tuplet.maximumRatioTerm)", at: here, measure: measure)
                    continue
                }
                if state.openTuplet != nil {
                    // Said once for a whole nest, however deep.
                    if state.nestedTuplets == 0 {
                        error("nested tuplets are not supported; close the first group with ')' before opening another", at: here, measure: measure)
                    }
                    state.nestedTuplets += 1
                    continue
                }
                state.openTuplet = (a, n, state.part.notes.count, here)
                continue
            }
            if byte == UInt8(ascii: "\\") {
                // A mark on the note before: \fermata, \p, \<, \( …
                var wordEnd = index + 1
                if wordEnd < end, [UInt8(ascii: "("), UInt8(ascii: ")")].contains(bytes[wordEnd]) {
                    wordEnd += 1
                } else {
                    while wordEnd < end && !isTokenEndByte(bytes[wordEnd]) { wordEnd += 1 }
                }
                let word = text((index + 1)..<wordEnd)
                index = wordEnd
                guard let marked = state.part.notes.last else {
                    error("a mark follows the note it belongs to; \(quoted(here.offset..<wordEnd)) has none before it", at: here, measure: measure)
                    continue
                }
                // Said in the measure of the note it marks.
                let measure = meterMap.measure(containing: marked.startTick)
                switch Self.apply(mark: word, to: &state.part.notes[state.part.notes.count - 1].marks) {
                case .set: break
                case .unknown:
                    error("unknown mark \(quoted(here.offset..<wordEnd)); marks are \\fermata \\staccato \\tenuto \\accent \\marcato \\breathe \\caesura, "
                          + "dynamics \\p \\mf \\f…, hairpins \\< \\> \\!, slurs \\( \\)", at: here, measure: measure)
                case .twice(let what):
                    error("\(quoted(here.offset..<wordEnd)): the note has \(what) already; a note takes one", at: here, measure: measure)
                }
                continue
            }
            if byte == UInt8(ascii: "(") {
                // One error, then on with the next token (never the same error again).
                index += 1
                error("'(' opens no tuplet: write 3( … ) or N:M( … ) with the ratio before it", at: here, measure: measure)
                continue
            }
            // A pitch (or R) and its duration.
            var tokenEnd = index
            while tokenEnd < end && !isTokenEndByte(bytes[tokenEnd]) { tokenEnd += 1 }
            let pitchRange = index..<tokenEnd
            index = tokenEnd
            let isRest = pitchRange.count == 1 && bytes[pitchRange.lowerBound] == UInt8(ascii: "R")
            let pitch = isRest ? nil : parsePitch(pitchRange)
            if !isRest && pitch == nil {
                error("expected a pitch like C4, F#3 or Bb4, or R for a rest; found \(quoted(pitchRange))", at: here, measure: measure)
                // Skip its duration too, if one follows.
                var next = index
                while next < end && isBlankByte(bytes[next]) { next += 1 }
                if next < end && isDigitByte(bytes[next]) {
                    var afterDuration = next
                    while afterDuration < end && !isTokenEndByte(bytes[afterDuration]) { afterDuration += 1 }
                    if afterDuration == end || bytes[afterDuration] != UInt8(ascii: "(") { index = afterDuration }
                }
                continue
            }
            while index < end && isBlankByte(bytes[index]) { index += 1 }
            var durationEnd = index
            while durationEnd < end && !isTokenEndByte(bytes[durationEnd]) { durationEnd += 1 }
            let durationRange = index..<durationEnd
            guard let (value, tie) = parseDuration(durationRange) else {
                let found = durationRange.isEmpty ? "nothing" : quoted(durationRange)
                error("expected a duration after \(quoted(pitchRange)): 1, 2, 4, 8, 16 or 32, then dots '.' and a tie '~' if any; found \(found)",
                      at: durationRange.isEmpty ? here : base.at(durationRange.lowerBound), measure: measure)
                index = durationEnd
                continue
            }
            index = durationEnd
            if noteCount == ScoreLimits.maximumNotes {
                error("more than \(ScoreLimits.maximumNotes) notes; the box takes \(ScoreLimits.maximumNotes) at most", at: here, measure: measure)
                stopped = true
                break
            }
            noteCount += 1
            var note = NoteEvent(startTick: state.tick, durationTicks: value.writtenTicks, value: value, pitch: pitch, tieToNext: tie)
            if let open = state.openTuplet {
                note.tuplet = Tuplet(id: state.nextTupletID, actual: open.actual, normal: open.normal)
            } else {
                state.tick += note.durationTicks
            }
            state.part.notes.append(note)
            state.locations.append(here)
        }
    }

    /// A `|` barline check. Which measure a `|` closes: when every earlier
    /// check in the part closed exactly one measure (the usual style, and the
    /// canonical one), the measure after the previous check; otherwise the
    /// measure whose end is nearest. After a failure the position is set to
    /// that measure's end so later errors name the measures the writer meant.
    mutating func checkBarline(_ state: inout PartState, at here: TextLocation) {
        let first = meterMap.measure(containing: state.lastCheckTick)
        let firstStart = meterMap.startTick(ofMeasure: first)
        var closed = 1
        if meterMap.isBarline(state.tick) {
            closed = max(1, meterMap.measure(containing: state.tick) - first)
            state.checkStyle = (closed == 1 && state.checkStyle != .sparse) ? .everyMeasure : .sparse
            state.lastCheckTick = state.tick
            return
        }
        if state.checkStyle != .everyMeasure {
            // The barline nearest to where the notes reached.
            while abs(meterMap.startTick(ofMeasure: first + closed + 1) - state.tick)
                < abs(meterMap.startTick(ofMeasure: first + closed) - state.tick)
            {
                closed += 1
            }
        }
        let last = first + closed - 1
        let unit = meterMap.meter(atMeasure: first).denominator
        let held = wholeNoteFraction(state.tick - firstStart, denominator: unit)
        let barline = meterMap.startTick(ofMeasure: last + 1)
        if closed > 1 {
            let pickupNote = first == 0 ? " (measure 0 is the \(wholeNoteFraction(meterMap.pickupTicks)) pickup)" : ""
            error("barline check failed: measures \(first)–\(last) hold \(held) but should hold \(wholeNoteFraction(barline - firstStart, denominator: unit))\(pickupNote)",
                  at: here, measure: last)
        } else if state.tick < barline {
            error("barline check failed: measure \(first) has only \(held) of its \(meterMap.meter(atMeasure: first))", at: here, measure: first)
        } else {
            error("barline check failed: measure \(first) holds \(held), more than its \(meterMap.meter(atMeasure: first))", at: here, measure: first)
        }
        state.tick = barline
        state.lastCheckTick = barline
    }

    /// `3(` means 3:2; other single numbers take the customary ratio.
    static func defaultTupletRatio(_ actual: Int) -> (Int, Int)? {
        switch actual {
        case 2: (2, 3)
        case 3: (3, 2)
        case 4: (4, 3)
        case 5, 6, 7: (actual, 4)
        case 9: (9, 8)
        default: nil
        }
    }

    /// Lays out a closed tuplet group's notes in ticks.
    mutating func closeTuplet(_ state: inout PartState) {
        guard let open = state.openTuplet else { return }
        state.openTuplet = nil
        let members = open.firstNote..<state.part.notes.count
        let written = members.map { state.part.notes[$0].value.writtenTicks }
        var durations = TupletLayout.durations(writtenTicks: written, actual: open.actual, normal: open.normal)
        if durations == nil {
            error("this \(open.actual):\(open.normal) tuplet does not add up to a whole number of ticks; complete the group",
                  at: open.location, measure: meterMap.measure(containing: state.tick))
            durations = written.map { $0 * open.normal / open.actual }
        }
        for (member, duration) in zip(members, durations!) {
            state.part.notes[member].startTick = state.tick
            state.part.notes[member].durationTicks = duration
            state.tick += duration
        }
        state.nextTupletID += 1
    }

    /// A decimal number of at most 9 digits starting at `start`.
    func number(from start: Int, end: Int) -> (Int?, Int) {
        var index = start
        var value = 0
        while index < end && isDigitByte(bytes[index]) {
            if index - start < 9 { value = value * 10 + Int(bytes[index] - UInt8(ascii: "0")) }
            index += 1
        }
        return (index == start || index - start > 9 ? nil : value, index)
    }

    /// `C4`, `F#3`, `Bb4`, `C##5`, `Cx5`, `Ebb2`, and octave −1 (`A-1`,
    /// MIDI 9) so every MIDI pitch can be written.
    func parsePitch(_ range: Range<Int>) -> Pitch? {
        guard range.count >= 2, range.count <= 5, let step = Step(letter: bytes[range.lowerBound]) else { return nil }
        var octaveStart = range.upperBound - 1
        var octave: Int
        if range.count >= 3 && bytes[range.upperBound - 2] == UInt8(ascii: "-") && bytes[range.upperBound - 1] == UInt8(ascii: "1") {
            octaveStart = range.upperBound - 2
            octave = -1
        } else {
            guard isDigitByte(bytes[octaveStart]) else { return nil }
            octave = Int(bytes[octaveStart] - UInt8(ascii: "0"))
        }
        var alter = 0
        let accidentals = bytes[(range.lowerBound + 1)..<octaveStart]
        for byte in accidentals {
            switch byte {
            case UInt8(ascii: "#"): alter += 1
            case UInt8(ascii: "b"): alter -= 1
            case UInt8(ascii: "x"): alter += 2
            default: return nil
            }
        }
        // Mixed accidentals ("#b") would net out to something unwritten.
        if accidentals.contains(UInt8(ascii: "#")) && accidentals.contains(UInt8(ascii: "b")) { return nil }
        guard (-2...2).contains(alter) else { return nil }
        return Pitch(step: step, alter: alter, octave: octave)
    }

    /// `4`, `8.`, `2..~`, `16~`.
    func parseDuration(_ range: Range<Int>) -> (NoteValue, Bool)? {
        var index = range.lowerBound
        var denominator = 0
        while index < range.upperBound && isDigitByte(bytes[index]) && index - range.lowerBound < 3 {
            denominator = denominator * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        guard index > range.lowerBound else { return nil }
        var dots = 0
        while index < range.upperBound && bytes[index] == UInt8(ascii: ".") {
            dots += 1
            index += 1
        }
        var tie = false
        if index < range.upperBound && bytes[index] == UInt8(ascii: "~") {
            tie = true
            index += 1
        }
        let value = NoteValue(denominator, dots: dots)
        guard index == range.upperBound, value.isValid else { return nil }
        return (value, tie)
    }

    // MARK: lyrics PART: syllables, lyrics[VERSE] PART: syllables

    mutating func parseLyricsLine(_ content: Range<Int>, location base: TextLocation) {
        var index = content.lowerBound + 6
        var verse = 1
        if index < content.upperBound && bytes[index] == UInt8(ascii: "[") {
            var close = index + 1
            while close < content.upperBound && bytes[close] != UInt8(ascii: "]") && bytes[close] != UInt8(ascii: ":") { close += 1 }
            let number = text((index + 1)..<close)
            guard close < content.upperBound, bytes[close] == UInt8(ascii: "]"), let parsed = Int(number), (1...Score.maximumVerses).contains(parsed) else {
                error("expected 'lyrics[VERSE] PART NAME: syllables…' with a verse from 1 to \(Score.maximumVerses)", at: base.at(index))
                return
            }
            verse = parsed
            index = close + 1
        }
        let nameStart = index
        while index < content.upperBound && bytes[index] != UInt8(ascii: ":") { index += 1 }
        guard index < content.upperBound else {
            error("expected 'lyrics PART NAME: syllables…'", at: base)
            return
        }
        let name = text(nameStart..<index).trimmingBlanks()
        var tokens: [LyricToken] = []
        index += 1
        while index < content.upperBound {
            while index < content.upperBound && isBlankByte(bytes[index]) { index += 1 }
            let start = index
            while index < content.upperBound && !isBlankByte(bytes[index]) { index += 1 }
            if index > start { tokens.append(LyricToken(text: text(start..<index), location: base.at(start))) }
            // A syllable a note at most: more than the song may have is refused before it costs memory.
            lyricTokenCount += 1
            if lyricTokenCount > ScoreLimits.maximumNotes * Score.maximumVerses {
                error("more lyric syllables than the box takes", at: base.at(start))
                stopped = true
                return
            }
        }
        lyricLines.append((name, verse, base, tokens))
    }

    mutating func assignLyrics() {
        // A verse's syllables may span several lines; each (part, verse)
        // has its own cursor over the part's attacks.
        var cursors: [String: Int] = [:]
        for line in lyricLines {
            guard let partIndex = parts.firstIndex(where: { $0.part.name == line.partName }) else {
                error("lyrics for '\(line.partName)', but there is no part of that name", at: line.location)
                continue
            }
            let cursorKey = "\(partIndex) \(line.verse)"
            // Syllables are collected first and written after, so no copy of
            // the notes is alive while they are modified.
            var assignments: [(note: Int, lyric: Lyric)] = []
            let part = parts[partIndex].part
            for token in line.tokens {
                var cursor = cursors[cursorKey] ?? 0
                while cursor < part.notes.count && !part.isAttack(at: cursor) { cursor += 1 }
                guard cursor < part.notes.count else {
                    error("more syllables than sung notes in part '\(line.partName)'" + (line.verse > 1 ? " (verse \(line.verse))" : ""), at: token.location)
                    break
                }
                cursors[cursorKey] = cursor + 1
                if token.text == "_" { continue }
                // '_' inside a syllable is a space between words sung on one note.
                var syllable = String(token.text.map { $0 == "_" ? " " : $0 })
                let continues = syllable.hasSuffix("-")
                if continues { syllable.removeLast() }
                if let problem = lyricProblem(syllable) {
                    error("syllable '\(token.text)' \(problem)", at: token.location,
                          measure: meterMap.measure(containing: part.notes[cursor].startTick))
                    continue
                }
                assignments.append((cursor, Lyric(syllable, continuesWord: continues)))
            }
            for assignment in assignments { parts[partIndex].part.notes[assignment.note].setLyric(assignment.lyric, verse: line.verse) }
        }
    }

    // MARK: Validation with locations

    /// The last line with text: where a whole-score problem ("no parts")
    /// is reported, since what is missing would have come after it.
    var endOfText: TextLocation {
        guard let last = bytes.lastIndex(where: { !isBlankByte($0) && $0 != 0x0A }) else { return TextLocation(line: 1, lineStart: 0, offset: 0) }
        var line = 1
        var lineStart = 0
        for index in 0..<last where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return TextLocation(line: line, lineStart: lineStart, offset: lineStart)
    }

    mutating func reportValidation() {
        for finding in score.findings() {
            var location: TextLocation?
            switch finding.subject {
            case .note(let part, let note): location = parts[part].locations[note]
            case .part(let part): location = parts[part].declaration
            case .header(let key): location = headerLocations[.header(key)]
            case .meter, .key, .tempo, .pickup: location = headerLocations[finding.subject]
            case .score: location = endOfText
            }
            if let location {
                error(finding.message, at: location, measure: finding.measure)
            } else {
                errors.append(ScoreError(finding.message, file: file, measure: finding.measure))
            }
        }
    }
}

func isBlankByte(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
func isDigitByte(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
func isTokenEndByte(_ byte: UInt8) -> Bool {
    isBlankByte(byte) || byte == UInt8(ascii: "|") || byte == UInt8(ascii: "(") || byte == UInt8(ascii: ")")
}
