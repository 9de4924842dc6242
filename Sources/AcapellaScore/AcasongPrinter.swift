extension Acasong {
    /// Measures per printed line of notes.
    public static let measuresPerLine = 4

    /// The canonical `.acasong` text of a valid score.
    ///
    /// Canonical means: header fields in a fixed order, every map entry
    /// explicit, one space between tokens, four measures per line each closed
    /// by a `|` barline check (except the last), lyrics on one line after
    /// their part. `serialize(parse(serialize(s))) == serialize(s)` byte for
    /// byte, and `parse(serialize(s)) == s`.
    public static func serialize(_ score: Score) -> String {
        var out = magic + "\n"
        for (key, value) in [
            ("title", score.title), ("subtitle", score.subtitle), ("composer", score.composer), ("arranger", score.arranger),
            ("source", score.source), ("license", score.license),
        ] {
            if let value { out += "\(key): \(value)\n" }
        }
        if !score.tags.isEmpty { out += "tags: " + score.tags.joined(separator: ", ") + "\n" }
        for change in score.meters {
            out += (change.measure == 1 ? "time" : "time@\(change.measure)") + ": \(change.meter)"
                + (change.symbol.map { " " + $0.rawValue } ?? "") + (change.printed ? "" : " unprinted") + "\n"
        }
        for change in score.keys {
            out += (change.measure == 1 ? "key" : "key@\(change.measure)") + ": \(change.key)\n"
        }
        let meterMap = score.meterMap
        for change in score.tempos {
            let suffix = change.printed ? "\n" : " unprinted\n"
            if change.tick == 0 {
                out += "tempo: \(change.tempo)" + suffix
            } else {
                let (measure, offset) = meterMap.position(ofTick: change.tick)
                out += "tempo@\(measure)" + (offset > 0 ? "+\(offset)" : "") + ": \(change.tempo)" + suffix
            }
        }
        if score.pickupTicks > 0 {
            // Always n/d, as the parser reads it (a whole-note pickup is 1/1).
            let fraction = wholeNoteFraction(score.pickupTicks)
            out += "pickup: \(fraction.contains("/") ? fraction : fraction + "/1")\n"
        }
        if !score.writtenMeasures.isEmpty {
            out += "written: " + writtenRuns(score.writtenMeasures) + "\n"
        }
        out += markLines(score, meterMap: meterMap)
        for part in score.parts {
            out += "\n"
            printPart(part, meterMap: meterMap, into: &out)
        }
        return out
    }

    static func printPart(_ part: Part, meterMap: MeterMap, into out: inout String) {
        out += "part \(part.name)"
        if let shortName = part.shortName { out += " (\(shortName))" }
        if let clef = part.clef { out += " [\(clef.rawValue)]" }
        out += "\n"
        var line = ""
        var measuresOnLine = 0
        var currentMeasure: Int?
        let verses = part.verseCount
        var lyricTokens: [[String]] = Array(repeating: [], count: verses)
        var previousTupletID: Int?
        for (index, note) in part.notes.enumerated() {
            let measure = meterMap.measure(containing: note.startTick)
            if let currentMeasure, measure != currentMeasure {
                measuresOnLine += 1
                line += " |"
                if measuresOnLine == measuresPerLine {
                    out += line + "\n"
                    line = ""
                    measuresOnLine = 0
                }
            }
            currentMeasure = measure
            if !line.isEmpty { line += " " }
            if let tuplet = note.tuplet, tuplet.id != previousTupletID {
                line += tuplet.actual == 3 && tuplet.normal == 2 ? "3(" : "\(tuplet.actual):\(tuplet.normal)("
            }
            line += (note.pitch?.description ?? "R") + " \(note.value)" + (note.tieToNext ? "~" : "")
            for token in markTokens(note.marks) { line += " " + token }
            previousTupletID = note.tuplet?.id
            if let id = note.tuplet?.id, index + 1 == part.notes.count || part.notes[index + 1].tuplet?.id != id {
                line += ")"
            }
            if part.isAttack(at: index) {
                for verse in 0..<verses {
                    if let lyric = note.lyric(verse: verse + 1) {
                        lyricTokens[verse].append(String(lyric.text.map { $0 == " " ? "_" : $0 }) + (lyric.continuesWord ? "-" : ""))
                    } else {
                        lyricTokens[verse].append("_")
                    }
                }
            }
        }
        if !line.isEmpty { out += line + "\n" }
        for (verse, var tokens) in lyricTokens.enumerated() {
            while tokens.last == "_" { tokens.removeLast() }
            guard !tokens.isEmpty else { continue }
            out += (verse == 0 ? "lyrics" : "lyrics[\(verse + 1)]") + " \(part.name): " + tokens.joined(separator: " ") + "\n"
        }
    }

    /// "0 1-8 1-7 9-16": runs of consecutive measure numbers.
    static func writtenRuns(_ measures: [Int]) -> String {
        var runs: [String] = []
        var index = 0
        while index < measures.count {
            var end = index
            while end + 1 < measures.count && measures[end + 1] == measures[end] + 1 { end += 1 }
            runs.append(end > index ? "\(measures[index])-\(measures[end])" : "\(measures[index])")
            index = end + 1
        }
        return runs.joined(separator: " ")
    }
}
