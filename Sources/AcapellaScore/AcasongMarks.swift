/// The `.acasong` lines and tokens for what a singer reads besides the
/// notes: expression text, rehearsal marks, repeats, endings and jumps in
/// the header; fermatas, articulations, breaths, slurs and dynamics after
/// a note (LilyPond's words: `\fermata`, `\p`, `\<`, `\(`…).
extension AcasongParser {
    /// Header keys that take `@MEASURE`.
    static let positionedKeys = ["time", "key", "tempo", "text", "rehearsal", "repeat", "ending", "sign"]
    /// Header keys that also take `+TICKS`.
    static let offsetKeys: Set<String> = ["tempo", "text", "rehearsal"]
    /// Header keys that mark the music rather than set a map.
    static let markKeys: Set<String> = ["text", "rehearsal", "repeat", "ending", "sign"]

    mutating func parseMarkHeader(_ key: String, measure: Int, offset: Int, value: String, location: TextLocation, valueLocation: TextLocation) {
        switch key {
        case "text", "rehearsal":
            if let problem = textProblem(value, forbidden: []) {
                error("\(key) \(problem)", at: valueLocation)
                return
            }
            pendingTexts.append((measure, offset, ScoreText(tick: 0, kind: key == "text" ? .words : .rehearsal, text: value), location))
            headerLocations[.header("\(key)@\(measure)+\(offset)")] = location
        case "repeat":
            let words = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
            var index = 0
            var marks: [BarMark] = []
            while index < words.count {
                switch words[index] {
                case "start" where !marks.contains { $0.kind == .repeatStart }:
                    marks.append(BarMark(measure: measure, kind: .repeatStart))
                case "end" where !marks.contains { if case .repeatEnd = $0.kind { true } else { false } }:
                    var times = 2
                    if index + 1 < words.count, words[index + 1].hasPrefix("x"), let count = boundedInt(words[index + 1].dropFirst()) {
                        guard (2...BarMark.maximumTimes).contains(count) else {
                            error("a passage is played 2 to \(BarMark.maximumTimes) times, not \(count)", at: valueLocation)
                            return
                        }
                        times = count
                        index += 1
                    }
                    marks.append(BarMark(measure: measure, kind: .repeatEnd(times: times)))
                default:
                    error("expected 'start', 'end' or 'end x3' (each once), found '\(words[index])'", at: valueLocation)
                    return
                }
                index += 1
            }
            guard !marks.isEmpty else {
                error("expected 'start', 'end' or 'end x3'", at: valueLocation)
                return
            }
            headerLocations[.header("repeat@\(measure)")] = location
            score.barMarks += marks
        case "ending":
            // "1, 2 (2 measures)"
            let parts = value.split(separator: "(", maxSplits: 1, omittingEmptySubsequences: false)
            let numbers = parts[0].split(whereSeparator: { $0 == "," || $0 == " " }).map { boundedInt($0) }
            var length = 1
            if parts.count == 2 {
                let inside = parts[1].trimmingBlanks()
                let words = inside.split(separator: " ")
                guard inside.hasSuffix(")"), words.count == 2, let count = boundedInt(words[0]), count >= 1,
                      words[1] == (count == 1 ? "measure)" : "measures)") else {
                    error("expected the ending's length as '(1 measure)' or '(N measures)', found '(\(parts[1])'", at: valueLocation)
                    return
                }
                guard count <= ScoreLimits.maximumMeasures else {
                    error("an ending of \(count) measures is longer than a song may be (\(ScoreLimits.maximumMeasures))", at: valueLocation)
                    return
                }
                length = count
            }
            guard !numbers.isEmpty, numbers.allSatisfy({ $0 != nil && (1...BarMark.maximumTimes).contains($0!) }), Set(numbers).count == numbers.count else {
                error("expected an ending's numbers (1 to \(BarMark.maximumTimes), each once) like '1' or '1, 2', then '(N measures)'; found \(quoted(valueLocation.offset..<(valueLocation.offset + value.utf8.count)))", at: valueLocation)
                return
            }
            headerLocations[.header("ending@\(measure)")] = location
            score.barMarks.append(BarMark(measure: measure, kind: .ending(numbers: numbers.map { $0! }, measures: length)))
        default: // sign
            let words = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingBlanks() }
            guard !words.contains(where: \.isEmpty), Set(words).count == words.count else {
                error("expected signs, each once, separated by commas: " + BarMark.signWords.map { "'\($0.1)'" }.joined(separator: ", "), at: valueLocation)
                return
            }
            headerLocations[.header("sign@\(measure)")] = location
            for word in words {
                guard let kind = BarMark.signWords.first(where: { $0.1 == word })?.0 else {
                    error("expected a sign: " + BarMark.signWords.map { "'\($0.1)'" }.joined(separator: ", ") + "; found '\(word)'", at: valueLocation)
                    return
                }
                score.barMarks.append(BarMark(measure: measure, kind: kind))
            }
        }
    }

    /// Texts placed once the meter map is known, in tick order.
    mutating func placeTexts() {
        var placed: [ScoreText] = []
        for pending in pendingTexts {
            if pending.measure == 0 && score.pickupTicks == 0 {
                error("measure 0 is the pickup, and there is none", at: pending.location)
                continue
            }
            let length = pending.measure == 0 ? score.pickupTicks : meterMap.meter(atMeasure: pending.measure).measureTicks
            if pending.offset >= length {
                error("+\(pending.offset) is past the end of measure \(pending.measure)", at: pending.location)
                continue
            }
            var text = pending.text
            text.tick = (pending.measure == 0 ? 0 : meterMap.startTick(ofMeasure: pending.measure)) + pending.offset
            placed.append(text)
        }
        score.texts = placed.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map(\.element)
        score.barMarks = score.barMarks.canonicallyOrdered()
    }

    /// A mark token after a note (`\fermata`, `\p`, `\<`, `\(`…) set on
    /// it; false when the word is not a mark.
    static func apply(mark word: String, to marks: inout NoteMarks) -> MarkOutcome {
        let before = marks
        switch word {
        case "fermata": marks.fermata = true
        case "breathe": marks.breath = .breath
        case "caesura": marks.breath = .caesura
        case "(": marks.slurStart = true
        case ")": marks.slurEnd = true
        case "<", ">", "!":
            guard marks.hairpin == nil else { return .twice("a hairpin mark") }
            marks.hairpin = word == "<" ? .crescendo : word == ">" ? .diminuendo : .end
        default:
            if let articulation = Articulations.named.first(where: { $0.1 == word })?.0 {
                marks.articulations.insert(articulation)
            } else if let dynamic = Dynamic(rawValue: word) {
                guard marks.dynamic == nil else { return .twice("a dynamic") }
                marks.dynamic = dynamic
            } else {
                return .unknown
            }
        }
        if (word == "breathe" || word == "caesura") && before.breath != nil { return .twice("a breath") }
        return marks == before ? .twice("the same mark") : .set
    }

    enum MarkOutcome {
        case set, unknown
        /// The note has one already (a dynamic, a hairpin mark, a breath).
        case twice(String)
    }
}

extension Acasong {
    /// The mark tokens of a note, in canonical order.
    static func markTokens(_ marks: NoteMarks) -> [String] {
        var tokens: [String] = []
        if marks.slurEnd { tokens.append("\\)") }
        if marks.hairpin == .end { tokens.append("\\!") }
        if let dynamic = marks.dynamic { tokens.append("\\" + dynamic.rawValue) }
        for (articulation, word) in Articulations.named where marks.articulations.contains(articulation) { tokens.append("\\" + word) }
        if marks.fermata { tokens.append("\\fermata") }
        if marks.hairpin == .crescendo { tokens.append("\\<") }
        if marks.hairpin == .diminuendo { tokens.append("\\>") }
        if marks.slurStart { tokens.append("\\(") }
        if let breath = marks.breath { tokens.append(breath == .breath ? "\\breathe" : "\\caesura") }
        return tokens
    }

    /// The header lines of texts and bar marks.
    static func markLines(_ score: Score, meterMap: MeterMap) -> String {
        var out = ""
        for text in score.texts {
            let (measure, offset) = meterMap.position(ofTick: text.tick)
            out += (text.kind == .words ? "text" : "rehearsal") + "@\(measure)" + (offset > 0 ? "+\(offset)" : "") + ": \(text.text)\n"
        }
        var byMeasure: [Int: [BarMark]] = [:]
        for mark in score.barMarks { byMeasure[mark.measure, default: []].append(mark) }
        for measure in byMeasure.keys.sorted() {
            let marks = byMeasure[measure]!
            var repeats: [String] = []
            if marks.contains(where: { $0.kind == .repeatStart }) { repeats.append("start") }
            for mark in marks { if case .repeatEnd(let times) = mark.kind { repeats.append(times == 2 ? "end" : "end x\(times)") } }
            if !repeats.isEmpty { out += "repeat@\(measure): " + repeats.joined(separator: " ") + "\n" }
            for mark in marks {
                if case .ending(let numbers, let length) = mark.kind {
                    out += "ending@\(measure): " + numbers.map(String.init).joined(separator: ", ") + " (\(length) measure\(length == 1 ? "" : "s"))\n"
                }
            }
            let signs = BarMark.signWords.filter { sign in marks.contains { $0.kind == sign.0 } }.map(\.1)
            if !signs.isEmpty { out += "sign@\(measure): " + signs.joined(separator: ", ") + "\n" }
        }
        return out
    }
}
