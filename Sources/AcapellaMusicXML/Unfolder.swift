/// Repeats as a choir sings them: repeat barlines (with `times`), first and
/// second endings, and the jumps `<sound>` marks (da capo, dal segno, to
/// coda, fine), written out in singing order.
struct Unfolder {
    /// One measure as sung: which written measure, and on which pass of
    /// its repeat (1 the first time through).
    struct Visit: Equatable {
        var measure: Int
        var pass: Int
        /// The written measures of the repeated passage this visit is in.
        var section: ClosedRange<Int>?
    }

    /// Most measures an unfolding may produce, against repeat marks that
    /// never end.
    static let maximumMeasures = 20_000

    /// Whether any measure has a repeat, an ending or a jump.
    static func hasRepeats(_ marks: [RepeatMarks]) -> Bool { marks.contains { !$0.isEmpty } }

    /// The singing order of measures with these marks; nil when the marks
    /// lead nowhere sensible (then the music is kept as written).
    static func order(_ marks: [RepeatMarks]) -> [Visit]? {
        var visits: [(measure: Int, pass: Int, sectionStart: Int?)] = []
        var index = 0
        var sectionStart = 0
        var pass = 1
        var taken: [Int: Int] = [:]
        var jumped = false
        let segno = marks.firstIndex { $0.segno }
        let coda = marks.firstIndex { $0.coda }
        // The last ending number of the bracket group a measure belongs to:
        // after a jump back, a choir takes the last ending.
        func lastEnding(from start: Int) -> Int {
            var numbers: [Int] = []
            var index = start
            while index > 0 && marks[index - 1].ending != nil { index -= 1 }
            while index < marks.count, let ending = marks[index].ending {
                numbers += ending
                index += 1
            }
            return numbers.max() ?? 1
        }
        func endsEndingGroup(_ index: Int) -> Bool {
            marks[index].ending != nil && (index + 1 == marks.count || marks[index + 1].ending == nil)
        }
        while index < marks.count {
            guard visits.count < maximumMeasures else { return nil }
            let mark = marks[index]
            if mark.forward && pass == 1 && !jumped { sectionStart = index }
            if let ending = mark.ending, !ending.contains(jumped ? lastEnding(from: index) : pass) {
                if endsEndingGroup(index) && !jumped {
                    pass = 1
                    sectionStart = index + 1
                }
                index += 1
                continue
            }
            visits.append((index, jumped ? 1 : pass, jumped ? nil : sectionStart))
            if jumped && mark.fine { break }
            if jumped && mark.toCoda, let coda, coda > index {
                index = coda
                continue
            }
            if let times = mark.backward, !jumped {
                let count = taken[index] ?? 0
                if count < times - 1 {
                    taken[index] = count + 1
                    pass += 1
                    index = sectionStart
                    continue
                }
                taken[index] = nil
                pass = 1
                sectionStart = index + 1
            } else if endsEndingGroup(index) && !jumped {
                pass = 1
                sectionStart = index + 1
            }
            if !jumped && (mark.daCapo || (mark.dalSegno && segno != nil)) {
                jumped = true
                pass = 1
                index = mark.daCapo ? 0 : segno!
                continue
            }
            index += 1
        }
        // A passage is repeated when its visits include a second pass; its
        // span is the written measures those visits cover.
        var result = visits.map { Visit(measure: $0.measure, pass: $0.pass, section: nil) }
        var start = 0
        while start < visits.count {
            guard let section = visits[start].sectionStart else {
                start += 1
                continue
            }
            var end = start
            while end + 1 < visits.count && visits[end + 1].sectionStart == section { end += 1 }
            if visits[start...end].contains(where: { $0.pass > 1 }) {
                let measures = visits[start...end].map(\.measure)
                for index in start...end { result[index].section = measures.min()!...measures.max()! }
            }
            start = end + 1
        }
        return result
    }

    /// The parts in singing order. A repeated passage sings its lyric
    /// lines in turn: the first line written under it on the first pass,
    /// the second on the second…; elsewhere each note sings its first
    /// verse. The unfolded notes carry one verse (as sung).
    static func unfold(_ parts: [RawPart], visits: [Visit], report: inout MusicXMLReader.PendingReport) -> [RawPart] {
        var versesWritten: Set<Int> = []
        for part in parts {
            for measure in part.measures {
                for note in measure.notes { for lyric in note.lyrics { versesWritten.insert(lyric.verse) } }
            }
        }
        var linesOfSection: [ClosedRange<Int>: [Int]] = [:]
        for section in Set(visits.compactMap(\.section)) {
            var lines: Set<Int> = []
            for part in parts {
                for measure in section where measure < part.measures.count {
                    for note in part.measures[measure].notes { for lyric in note.lyrics { lines.insert(lyric.verse) } }
                }
            }
            linesOfSection[section] = lines.sorted()
        }
        // The line each visit sings: nil means each note's first.
        let lineOfVisit: [Int?] = visits.map { visit in
            guard let section = visit.section, let lines = linesOfSection[section], !lines.isEmpty else { return nil }
            return visit.pass <= lines.count ? lines[visit.pass - 1] : nil
        }
        var versesUsed: Set<Int> = []
        let unfolded = parts.map { part in
            var unfolded = part
            unfolded.measures = zip(visits, lineOfVisit).map { visit, line in
                var measure = part.measures[visit.measure]
                for index in measure.notes.indices {
                    let lyrics = measure.notes[index].lyrics
                    let sung = line.map { line in lyrics.first { $0.verse == line } } ?? lyrics.min { $0.verse < $1.verse }
                    if let sung { versesUsed.insert(sung.verse) }
                    measure.notes[index].lyrics = sung.map { [(1, $0.lyric)] } ?? []
                }
                return measure
            }
            return unfolded
        }
        let unused = versesWritten.subtracting(versesUsed).sorted()
        if !unused.isEmpty {
            report.note("lyrics: line\(unused.count == 1 ? "" : "s") \(unused.map(String.init).joined(separator: ", ")) of the words not sung in the unfolded order (import with --no-unfold to keep every verse)",
                        measureIndex: nil)
        }
        return unfolded
    }
}
