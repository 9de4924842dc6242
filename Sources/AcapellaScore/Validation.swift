/// What a validation finding is about, so that each producer of scores (the
/// `.acasong` parser, the MusicXML importer) can point at its own source.
enum Subject: Hashable, Sendable {
    case score
    case header(String)
    case meter(Int)
    case key(Int)
    case tempo(Int)
    case pickup
    case part(Int)
    case note(part: Int, note: Int)
}

/// One problem found by validation, before it is given a source location.
struct Finding: Hashable, Sendable {
    var subject: Subject
    var message: String
    var measure: Int?
}

/// Sample rates at which validation proves the tempo map times exactly.
let exactnessCheckedSampleRates = [44_100, 48_000, 96_000]

extension Score {
    /// Every rule of the musical model this score breaks, without source
    /// locations (see `Acasong.parse` for located errors).
    public func validate(file: String? = nil) -> [ScoreError] {
        findings().map { ScoreError($0.message, file: file, measure: $0.measure) }
    }

    /// Whether the score passes validation.
    public var isValid: Bool { findings().isEmpty }

    /// Every rule broken, with the part and note it is in (indexes), when
    /// it is in one: an importer locates them in its own file's terms.
    public func problems() -> [ScoreProblem] {
        findings().map { finding in
            switch finding.subject {
            case .note(let part, let note): ScoreProblem(message: finding.message, measure: finding.measure, part: part, note: note)
            case .part(let part): ScoreProblem(message: finding.message, measure: finding.measure, part: part, note: nil)
            default: ScoreProblem(message: finding.message, measure: finding.measure, part: nil, note: nil)
            }
        }
    }

    func findings() -> [Finding] {
        var found: [Finding] = []
        func report(_ subject: Subject, _ message: String, measure: Int? = nil) {
            found.append(Finding(subject: subject, message: message, measure: measure))
        }

        for (name, value) in [
            ("title", title), ("subtitle", subtitle), ("composer", composer), ("arranger", arranger),
            ("source", source), ("license", license),
        ] {
            if let value, let problem = textProblem(value, forbidden: []) {
                report(.header(name), "\(name) \(problem)")
            }
        }
        for tag in tags {
            if let problem = textProblem(tag, forbidden: [","]) { report(.header("tags"), "tag \(problem)") }
        }

        // Within what the box takes (a score built elsewhere than the parser too).
        let noteTotal = parts.reduce(0) { $0 + $1.notes.count }
        let lastTick = parts.map { $0.notes.last.map { $0.startTick + $0.durationTicks } ?? 0 }.max() ?? 0
        let measureTotal = meters.isEmpty ? 0 : MeterMap(meters: meters, pickupTicks: pickupTicks).position(ofTick: max(0, lastTick - 1)).measure
        if let problem = ScoreLimits.problem(parts: parts.count, measures: measureTotal, notes: noteTotal) { report(.score, "the song has \(problem)") }

        // Maps first: note checks need them.
        if meters.isEmpty { report(.score, "the score has no meter") }
        for (index, change) in meters.enumerated() {
            if !change.meter.isValid {
                report(.meter(index), "time signature \(change.meter) is not supported (numerator 1–64, denominator 1, 2, 4 … 64)")
            }
            if index == 0 && change.measure != 1 {
                report(.meter(index), "the first time signature must be at measure 1")
            }
            if index > 0 && change.measure <= meters[index - 1].measure {
                report(.meter(index), "time signature changes must be in increasing measure order", measure: change.measure)
            }
            if index == 0 && !change.printed { report(.meter(index), "the first time signature is printed; only a later one may be 'unprinted'") }
            if change.symbol == .common && change.meter != Meter(4, 4) || change.symbol == .cut && change.meter != Meter(2, 2) {
                report(.meter(index), "'\(change.symbol!.rawValue)' is drawn for \(change.symbol == .common ? "4/4" : "2/2") only", measure: change.measure)
            }
        }
        if keys.isEmpty { report(.score, "the score has no key") }
        for (index, change) in keys.enumerated() {
            if !change.key.isValid { report(.key(index), "a key has −7 to 7 fifths, not \(change.key.fifths)") }
            if index == 0 && change.measure != 1 { report(.key(index), "the first key must be at measure 1") }
            if index > 0 && change.measure <= keys[index - 1].measure {
                report(.key(index), "key changes must be in increasing measure order", measure: change.measure)
            }
        }
        if tempos.isEmpty { report(.score, "the score has no tempo") }
        for (index, change) in tempos.enumerated() {
            if !change.tempo.isValid { report(.tempo(index), "tempo \(change.tempo) is outside 1–999.999 BPM") }
            if index == 0 && change.tick != 0 { report(.tempo(index), "the first tempo must be at the start") }
            if index > 0 && change.tick <= tempos[index - 1].tick {
                report(.tempo(index), "tempo changes must be in increasing order")
            }
        }
        guard found.isEmpty else { return found }

        let firstMeasureTicks = meters[0].meter.measureTicks
        if pickupTicks < 0 || pickupTicks >= firstMeasureTicks {
            report(.pickup, "a pickup must be shorter than the first measure (\(meters[0].meter))")
            return found
        }
        let meterMap = self.meterMap

        if parts.isEmpty { report(.score, "the score has no parts; add one after the headers: 'part NAME [clef]' and a line of its notes") }
        var seenNames: Set<String> = []
        for (partIndex, part) in parts.enumerated() {
            if let problem = textProblem(part.name, forbidden: ["(", ")", "[", "]", ":"]) {
                report(.part(partIndex), "part name \(problem)")
            }
            if let shortName = part.shortName, let problem = textProblem(shortName, forbidden: ["(", ")", "[", "]", ":"]) {
                report(.part(partIndex), "short name \(problem)")
            }
            if !seenNames.insert(part.name).inserted {
                report(.part(partIndex), "there are two parts named '\(part.name)'")
            }
            validateNotes(of: part, index: partIndex, meterMap: meterMap, report: report)
        }

        // Every part ends on the same barline.
        let ends = parts.map { $0.notes.last?.endTick ?? 0 }
        if let longest = ends.indices.max(by: { ends[$0] < ends[$1] }) {
            for (index, end) in ends.enumerated() where end != ends[longest] && !parts[index].notes.isEmpty {
                report(
                    .note(part: index, note: parts[index].notes.count - 1),
                    "part '\(parts[index].name)' ends after measure \(meterMap.measure(containing: end - 1)) but part '\(parts[longest].name)' runs to measure \(meterMap.measure(containing: ends[longest] - 1))",
                    measure: meterMap.measure(containing: max(end - 1, 0)))
            }
        }

        // Map entries past the end of the music.
        let end = ends.max() ?? 0
        if !writtenMeasures.isEmpty, end > 0 {
            let measures = meterMap.measure(containing: end - 1) - meterMap.measure(containing: 0) + 1
            if writtenMeasures.count != measures {
                report(.header("written"), "'written:' lists \(writtenMeasures.count) measures but the song has \(measures)")
            }
            if writtenMeasures.contains(where: { $0 < 0 || $0 > Score.maximumWrittenMeasures }) {
                report(.header("written"), "'written:' measure numbers run from 0 to \(Score.maximumWrittenMeasures)")
            }
        }
        if end > 0 {
            let lastMeasure = meterMap.measure(containing: end - 1)
            for (index, change) in meters.enumerated() where change.measure > lastMeasure {
                report(.meter(index), "time signature at measure \(change.measure) is past the last measure (\(lastMeasure))")
            }
            for (index, change) in keys.enumerated() where change.measure > lastMeasure {
                report(.key(index), "key change at measure \(change.measure) is past the last measure (\(lastMeasure))")
            }
            for (index, change) in tempos.enumerated() where change.tick > end {
                report(.tempo(index), "tempo change is past the end of the music", measure: meterMap.measure(containing: change.tick))
            }
            markFindings(end: end, meterMap: meterMap, report: report)
            for rate in exactnessCheckedSampleRates {
                do {
                    let timeMap = try TimeMap(tempos: tempos, sampleRate: rate)
                    if timeMap.exactSample(atTick: end) == nil {
                        report(.tempo(tempos.count - 1), "the tempo map is too fine-grained to time this many measures exactly")
                        break
                    }
                } catch {
                    report(.tempo(error.tempoIndex), error.description)
                    break
                }
            }
        }
        return found
    }

    private func validateNotes(
        of part: Part, index partIndex: Int, meterMap: MeterMap,
        report: (Subject, String, Int?) -> Void
    ) {
        let notes = part.notes
        if notes.isEmpty {
            report(.part(partIndex), "part '\(part.name)' has no notes", nil)
            return
        }
        var expectedStart = 0
        var expectedTupletID = 1
        var index = 0
        while index < notes.count {
            let note = notes[index]
            let measure = meterMap.measure(containing: note.startTick)
            func fail(_ at: Int, _ message: String) {
                report(.note(part: partIndex, note: at), message, meterMap.measure(containing: notes[at].startTick))
            }
            if note.startTick != expectedStart {
                fail(index, "note starts at tick \(note.startTick) but the previous one ends at \(expectedStart); notes and rests must follow each other without gaps")
                return
            }
            if !note.value.isValid {
                fail(index, "note value \(note.value) is not supported (1, 2, 4, 8, 16, 32 with up to 3 dots)")
                return
            }

            // Tuplet groups are checked as a whole.
            var groupEnd = index + 1
            if let tuplet = note.tuplet {
                while groupEnd < notes.count && notes[groupEnd].tuplet?.id == tuplet.id { groupEnd += 1 }
                let group = notes[index..<groupEnd]
                let range = 1...Tuplet.maximumRatioTerm
                if tuplet.id != expectedTupletID {
                    fail(index, "tuplet groups must be numbered 1, 2, 3… in order; found \(tuplet.id), expected \(expectedTupletID)")
                    return
                }
                expectedTupletID += 1
                if !range.contains(tuplet.actual) || !range.contains(tuplet.normal)
                    || group.contains(where: { $0.tuplet != tuplet } ) || !group.allSatisfy(\.value.isValid)
                {
                    fail(index, "tuplet \(tuplet.actual):\(tuplet.normal) is not supported (terms 1–\(Tuplet.maximumRatioTerm), one ratio per group)")
                    return
                }
                guard let durations = TupletLayout.durations(
                    writtenTicks: group.map(\.value.writtenTicks), actual: tuplet.actual, normal: tuplet.normal)
                else {
                    fail(index, "this \(tuplet.actual):\(tuplet.normal) tuplet does not add up to a whole number of ticks; complete the group")
                    return
                }
                var tick = note.startTick
                for (offset, duration) in durations.enumerated() {
                    let member = notes[index + offset]
                    if member.startTick != tick || member.durationTicks != duration {
                        fail(index + offset, "tuplet note timing does not match its written value \(member.value) in \(tuplet.actual):\(tuplet.normal)")
                        return
                    }
                    tick += duration
                }
                let nextBarline = meterMap.startTick(ofMeasure: measure + 1)
                if tick > nextBarline {
                    fail(index, "tuplet group crosses the barline into measure \(measure + 1)")
                }
            } else if note.durationTicks != note.value.writtenTicks {
                fail(index, "note lasts \(note.durationTicks) ticks but its written value \(note.value) is \(note.value.writtenTicks)")
                return
            }

            for at in index..<groupEnd {
                checkNote(at, in: part, meterMap: meterMap, fail: fail)
            }
            expectedStart = notes[groupEnd - 1].endTick
            index = groupEnd
        }
        if !meterMap.isBarline(expectedStart) {
            let (measure, offset) = meterMap.position(ofTick: expectedStart)
            report(
                .note(part: partIndex, note: notes.count - 1),
                "part '\(part.name)' ends partway through measure \(measure): it has \(wholeNoteFraction(offset, denominator: meterMap.meter(atMeasure: measure).denominator)) of \(meterMap.meter(atMeasure: measure)); fill it with notes or rests",
                measure)
        }
    }

    private func checkNote(
        _ index: Int, in part: Part, meterMap: MeterMap, fail: (Int, String) -> Void
    ) {
        let notes = part.notes
        let partName = part.name
        let note = notes[index]
        let measure = meterMap.measure(containing: note.startTick)
        if let pitch = note.pitch {
            if !(-2...2).contains(pitch.alter) || !(0...127).contains(pitch.midi) {
                fail(index, "pitch \(pitch) is outside the MIDI range C-1…G9")
            }
        }
        if note.tuplet == nil {
            let nextBarline = meterMap.startTick(ofMeasure: measure + 1)
            if note.endTick > nextBarline {
                fail(index, "note crosses the barline into measure \(measure + 1); split it at the barline and tie with ~")
            }
        }
        if note.tieToNext {
            if note.pitch == nil {
                fail(index, "a rest cannot be tied")
            } else if index + 1 == notes.count {
                fail(index, "the last note of part '\(partName)' is tied to nothing")
            } else if notes[index + 1].pitch?.midi != note.pitch?.midi {
                let next = notes[index + 1].pitch.map(\.description) ?? "a rest"
                fail(index, "\(note.pitch!) is tied to \(next); a tie joins two notes of the same pitch")
            }
        }
        if note.hasLyric {
            if note.pitch == nil {
                fail(index, "a rest cannot carry a lyric")
            } else if !part.isAttack(at: index) {
                fail(index, "a tied-over note cannot carry its own lyric")
            } else if note.verseCount > Score.maximumVerses {
                fail(index, "a note carries \(note.verseCount) verses; at most \(Score.maximumVerses)")
            } else {
                for verse in 1...note.verseCount {
                    if let lyric = note.lyric(verse: verse), let problem = lyricProblem(lyric.text) {
                        fail(index, "lyric '\(lyric.text)'" + (verse > 1 ? " (verse \(verse))" : "") + " \(problem)")
                    }
                }
            }
        }
    }
}

/// Why a header value or name cannot be written on one `.acasong` line.
func textProblem(_ text: String, forbidden: Set<Character>) -> String? {
    if text.isEmpty { return "is empty" }
    if text.unicodeScalars.count > ScoreLimits.maximumTextScalars { return "is longer than \(ScoreLimits.maximumTextScalars) characters" }
    if text.first!.isWhitespace || text.last!.isWhitespace { return "has leading or trailing spaces" }
    if text.contains(where: \.isNewline) { return "contains a line break" }
    // A terminal escape, a bidirectional override: shown raw they rewrite a log or a screen.
    if text.unicodeScalars.contains(where: SafeText.isControl) { return "contains a control character" }
    if let bad = text.first(where: { forbidden.contains($0) }) { return "may not contain '\(bad)'" }
    if text.hasPrefix("//") || text.contains(" //") || text.contains("\t//") {
        return "contains ' //', which starts a comment"
    }
    return nil
}

/// Why a lyric syllable cannot be written as one `.acasong` lyric token.
func lyricProblem(_ text: String) -> String? {
    if text.isEmpty { return "is empty" }
    if text.contains(where: { $0.isWhitespace && $0 != " " }) || text.contains("  ") || text.first == " " || text.last == " " {
        return "has a space other than one between words"
    }
    if text.contains("_") { return "contains '_', which stands for a space between words" }
    if text.hasSuffix("-") { return "ends with '-', which joins syllables" }
    if text.hasPrefix("//") { return "starts with '//', which starts a comment" }
    return nil
}

/// A rule a score breaks, and where: its measure, its part and note (indexes).
public struct ScoreProblem: Hashable, Sendable {
    public var message: String
    public var measure: Int?
    public var part: Int?
    public var note: Int?
}

extension Score {
    /// Texts and bar marks: on the music, one of each kind a place.
    func markFindings(end: Int, meterMap: MeterMap, report: (Subject, String, Int?) -> Void) {
        var previousTick = -1
        var seen: Set<String> = []
        for text in texts {
            // Said at the line that wrote it (`text@M+T`, as the parser files it).
            let (measure, offset) = meterMap.position(ofTick: max(0, text.tick))
            let key = text.kind == .words ? "text" : "rehearsal"
            let subject = Subject.header("\(key)@\(measure)+\(offset)")
            if let problem = textProblem(text.text, forbidden: []) { report(subject, "\(key) \(problem)", measure) }
            if text.tick < 0 || text.tick >= end { report(subject, "\(key) '\(text.text)' is not on the music (it ends in measure \(meterMap.measure(containing: max(0, end - 1))))", measure) }
            if text.tick < previousTick { report(subject, "texts must be in order", measure) }
            if !seen.insert("\(key) \(text.tick)").inserted { report(subject, "two \(key) lines at one place", measure) }
            previousTick = text.tick
        }
        let first = meterMap.measure(containing: 0)
        let last = meterMap.measure(containing: end - 1)
        var previous = Int.min
        for mark in barMarks {
            // Said at the line that wrote it: `repeat@M`, `ending@M` or `sign@M`.
            let subject = Subject.header("\(mark.kind.line)@\(mark.measure)")
            if mark.measure < first || mark.measure > last {
                report(subject, "\(mark.kind.line)@\(mark.measure) is not on the music (measures \(first)–\(last))", mark.measure)
            }
            if mark.measure * 16 + mark.rank < previous { report(subject, "repeats, endings and signs must be in measure order", mark.measure) }
            previous = mark.measure * 16 + mark.rank
            switch mark.kind {
            case .repeatEnd(let times) where !(2...BarMark.maximumTimes).contains(times):
                report(subject, "a passage is played 2 to \(BarMark.maximumTimes) times, not \(times)", mark.measure)
            case .ending(let numbers, let measures):
                if numbers.isEmpty || numbers.contains(where: { !(1...BarMark.maximumTimes).contains($0) }) || Set(numbers).count != numbers.count {
                    report(subject, "an ending is numbered 1 to \(BarMark.maximumTimes), each number once", mark.measure)
                }
                if measures < 1 || mark.measure + measures - 1 > last { report(subject, "the ending runs past the last measure (\(last))", mark.measure) }
            default:
                break
            }
            if !seen.insert("\(mark.measure) \(mark.kind.family)").inserted {
                report(subject, "measure \(mark.measure) has that \(mark.kind.family) twice", mark.measure)
            }
        }
    }
}

extension BarMark.Kind {
    /// What may stand once a measure (an ending's numbers aside).
    var family: String {
        switch self {
        case .repeatStart: "repeat start"
        case .repeatEnd: "repeat end"
        case .ending: "ending"
        default: "sign '\(BarMark.signWords.first { $0.0 == self }?.1 ?? "")'"
        }
    }

    /// The `.acasong` header line that writes it.
    var line: String {
        switch self {
        case .repeatStart, .repeatEnd: "repeat"
        case .ending: "ending"
        default: "sign"
        }
    }
}
