public import AcapellaScore
import Foundation

/// How to engrave a song.
public struct EngraveOptions: Sendable {
    /// The parts to show, by name (nil: all, as a vocal score).
    public var parts: [String]?
    /// Page size and margins, millimetres.
    public var pageWidthMM = 210.0
    public var pageHeightMM = 297.0
    public var marginMM = 12.0
    /// One staff space, millimetres (a 7 mm staff: a choir's octavo size).
    public var staffSpaceMM = 1.75
    /// The verse whose words are shown (nil: every verse, stacked).
    public var verse: Int?
    /// A part drawn in the highlight colour (a singer's own).
    public var highlight: String?
    /// Closed score: two parts on each staff (1–2, 3–4…), stems up for the
    /// upper voice and down for the lower, the words between the staves.
    public var closed = false
    /// Samples per second for the song samples in the time map.
    public var sampleRate = 48_000

    /// A4, all parts, every verse.
    public init() {}

    /// US Letter.
    public mutating func letter() {
        pageWidthMM = 215.9
        pageHeightMM = 279.4
    }
}

/// A note as engraved: where it is and what was drawn for it, for the
/// time map, the page's cursor and the tests.
public struct EngravedNote: Hashable, Sendable {
    /// `n<part>-<note>`: the SVG group's id.
    public var id: String
    /// Part index in the song, note index in the part.
    public var part: Int
    public var note: Int
    public var measure: Int
    public var tick: Int
    public var sample: Int64
    /// The system (0-based) and the notehead's left edge and centre line,
    /// in staff spaces on the scroll.
    public var system: Int
    public var x: Double
    public var y: Double
    /// The top line of the note's staff on the scroll.
    public var staffTop: Double
    /// Steps above the middle line (0: on it; a rest: nil).
    public var staffPosition: Int?
    /// The accidental drawn before the note, if any.
    public var accidental: String?
    /// The clef in force.
    public var clef: Clef
}

/// A moment of the song on the page: what a cursor follows and what a
/// tap turns into a measure.
public struct TimeMapEntry: Hashable, Sendable, Codable {
    public var tick: Int
    public var sample: Int64
    public var measure: Int
    public var system: Int
    /// Horizontal position (staff spaces from the page's left edge).
    public var x: Double
    /// Notes starting or sounding at this moment (group ids).
    public var notes: [String]
}

/// A system: its measures and where it sits.
public struct EngravedSystem: Hashable, Sendable {
    public var measures: ClosedRange<Int>
    /// Left and right edge of the staves (staff spaces from the page edge).
    public var left: Double
    public var right: Double
    /// Top of the system's first staff and bottom of its last, on the scroll.
    public var top: Double
    public var bottom: Double
    /// The PDF page (0-based) and the system's offset on it.
    public var page: Int
    public var pageOffset: Double
}

/// The engraved song: one long scroll for the screen (SVG), the same
/// systems broken into pages (PDF), and what each note became.
public struct Engraving: Sendable {
    public var scroll: EngravedPage
    public var pages: [EngravedPage]
    public var notes: [EngravedNote]
    public var timeMap: [TimeMapEntry]
    public var systems: [EngravedSystem]
    public var staffSpaceMM: Double
    /// The font's name (for the writers' font face).
    public var fontName: String
    /// The text font's family (for the writers' font face).
    public var textFamily: String = "serif"
}

/// Lays a song out as notation: spacing by duration, systems broken and
/// justified to the page width, every symbol from the SMuFL font's metrics.
public struct Engraver: Sendable {
    public let font: SMuFLFont
    /// The text font words are measured in (and set in by the writers).
    public let text: TextFont

    public init(font: SMuFLFont, text: TextFont = .estimated) {
        self.font = font
        self.text = text
    }

    public func engrave(_ score: Score, options: EngraveOptions = EngraveOptions()) throws(EngraveError) -> Engraving {
        var layout = try Layout(score: score, options: options, font: font, text: text)
        return layout.run()
    }
}

// MARK: - Layout

/// Sizes in staff spaces.
enum Metric {
    static let staffHeight = 4.0
    static let lyricSize = 1.9
    static let lyricRow = 2.25
    static let titleSize = 4.2
    static let subtitleSize = 2.0
    static let nameSize = 1.8
    static let numberSize = 1.3
    static let stemLength = 3.5
    static let measurePad = 1.0
    /// Least room between one staff's bottom line and the next's top.
    static let staffGap = 3.5
    /// Least room between the ink of one staff (its words) and the next's.
    static let inkClearance = 1.3
    static let systemGap = 5.0
}

struct PartLayout {
    var index: Int
    var part: Part
    var clef: Clef
    var verses: [Int]
    /// Note indices per measure (keyed by measure number).
    var byMeasure: [Int: [Int]]
    var accidentals: [Int: String]
    var hasLyrics: Bool
    /// Slurs (first note, last note) and hairpins (first note, the note
    /// that ends it, or nil: to the end) of the part, in order.
    var slurs: [(start: Int, end: Int)] = []
    /// Notes where some verse starts a word: a verse's extender line stops
    /// there (another verse's words go on, so this one's word has ended).
    var wordStarts: Set<Int> = []
    var hairpins: [(start: Int, end: Int?, crescendo: Bool)] = []

    /// Slurs paired as written (an end closes the latest open start; a
    /// start never closed is left out), hairpins to the next hairpin mark.
    mutating func pairSpanners() {
        var open: [Int] = []
        var running: (start: Int, crescendo: Bool)?
        for (index, note) in part.notes.enumerated() {
            if note.marks.slurEnd, let start = open.popLast(), start < index { slurs.append((start, index)) }
            if note.marks.slurStart { open.append(index) }
            if let hairpin = note.marks.hairpin {
                if let current = running { hairpins.append((current.start, index, current.crescendo)) }
                running = hairpin == .end ? nil : (index, hairpin == .crescendo)
            }
        }
        if let current = running { hairpins.append((current.start, nil, current.crescendo)) }
        slurs.sort { $0.start < $1.start }
    }
}

struct Column {
    var tick: Int
    var x: Double
}

struct MeasureLayout {
    var number: Int
    var startTick: Int
    var endTick: Int
    var meter: Meter
    var key: Key
    var columns: [Column]
    var width: Double
    /// Key or meter change drawn at its start (when not a system's first).
    var changeWidth: Double
    var showsMeter: Bool
    /// C or ¢ instead of figures.
    var meterSymbol: MeterSymbol?
    var showsKey: Bool
    /// Repeat barlines at the measure's start (`|:`) and end (`:|`).
    var repeatStart = false
    var repeatEnd = false
    /// The key before a change here (its accidentals are cancelled).
    var previousKey: Key?

    /// How many of the previous key's accidentals a change here cancels:
    /// all of them, unless the new key keeps them (more of the same kind).
    var cancelled: Int {
        guard showsKey, let old = previousKey, old.fifths != 0 else { return 0 }
        if old.fifths.signum() == key.fifths.signum() { return max(0, abs(old.fifths) - abs(key.fifths)) }
        return abs(old.fifths)
    }
}

struct Layout {
    let score: Score
    let options: EngraveOptions
    let font: SMuFLFont
    let text: TextFont
    let map: MeterMap
    let timeMap: TimeMap
    var parts: [PartLayout] = []
    var measures: [MeasureLayout] = []
    /// Shown parts by staff (one each, or two in closed score).
    var staves: [[Int]] = []

    init(score: Score, options: EngraveOptions, font: SMuFLFont, text: TextFont) throws(EngraveError) {
        guard score.isValid else { throw EngraveError("the song is not valid; run 'acapella check' on it") }
        guard let numbers = score.measureNumbers else { throw EngraveError("the song has no notes") }
        self.score = score
        self.options = options
        self.font = font
        self.text = text
        map = score.meterMap
        do {
            timeMap = try TimeMap(tempos: score.tempos, sampleRate: options.sampleRate)
        } catch {
            throw EngraveError(error.description)
        }
        var chosen = Array(score.parts.indices)
        if let names = options.parts {
            chosen = []
            for name in names {
                guard let index = score.parts.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) else {
                    throw EngraveError("no part named '\(name)'; the parts are: " + score.parts.map(\.name).joined(separator: ", "))
                }
                chosen.append(index)
            }
        }
        if let verse = options.verse, verse > max(1, score.verseCount) {
            throw EngraveError("the song has \(score.verseCount) verse\(score.verseCount == 1 ? "" : "s"); --verse expects 1–\(max(1, score.verseCount))")
        }
        for index in chosen {
            let part = score.parts[index]
            var byMeasure: [Int: [Int]] = [:]
            for (noteIndex, note) in part.notes.enumerated() { byMeasure[map.measure(containing: note.startTick), default: []].append(noteIndex) }
            let count = part.verseCount
            let sung = (1...max(1, count)).filter { verse in part.notes.contains { $0.lyric(verse: verse) != nil } }
            let verses = options.verse.map { chosen in sung.contains(chosen) ? [chosen] : [] } ?? sung
            var layout = PartLayout(index: index, part: part, clef: part.effectiveClef, verses: verses, byMeasure: byMeasure,
                                    accidentals: [:], hasLyrics: !verses.isEmpty)
            layout.pairSpanners()
            for verse in verses {
                for (noteIndex, syllabic) in part.syllabics(verse: verse).enumerated() where syllabic == .single || syllabic == .begin {
                    layout.wordStarts.insert(noteIndex)
                }
            }
            parts.append(layout)
        }
        staves = options.closed ? stride(from: 0, to: parts.count, by: 2).map { Array($0..<min($0 + 2, parts.count)) } : parts.indices.map { [$0] }
        for voices in staves where voices.count == 2 {
            // One clef per staff: the lower voice's if it is a bass clef (a
            // tenor joins the basses), else the upper's.
            let clef = parts[voices[1]].clef == .bass ? Clef.bass : parts[voices[0]].clef
            for voice in voices { parts[voice].clef = clef }
        }
        for voices in staves {
            let accidentals = Self.accidentals(of: voices.map { parts[$0].part }, score: score, map: map)
            for (voice, shown) in voices.enumerated() { parts[shown].accidentals = accidentals[voice] }
        }
        var previousKey: Key?
        for number in numbers {
            let start = map.startTick(ofMeasure: number)
            let end = map.startTick(ofMeasure: number + 1)
            let meter = number == 0 ? map.meter(atMeasure: 1) : map.meter(atMeasure: number)
            let key = score.key(atMeasure: number)
            // A time signature where the score prints one: the first, and
            // printed changes (a measure the score leaves short has none).
            let change = score.meters.last { $0.measure <= max(number, 1) }
            let written = number == numbers.lowerBound || (number > 1 && change?.measure == number && change?.printed == true)
            let shown = written ? (number == 0 ? score.meters.first : change) : nil
            var measure = MeasureLayout(number: number, startTick: start, endTick: end, meter: shown?.meter ?? meter, key: key, columns: [], width: 0,
                                        changeWidth: 0, showsMeter: written, meterSymbol: shown?.symbol,
                                        showsKey: previousKey != key, previousKey: previousKey)
            measure.repeatStart = score.barMarks.contains { $0.measure == number && $0.kind == .repeatStart }
            measure.repeatEnd = score.barMarks.contains { if case .repeatEnd = $0.kind { $0.measure == number } else { false } }
            previousKey = key
            layOut(&measure)
            measures.append(measure)
        }
    }

    // MARK: Accidentals

    /// The accidental each note needs: against the key signature and the
    /// accidentals earlier in its measure (a tied-over note shows none), with
    /// a courtesy accidental on the first such step after a barline when
    /// the previous measure altered it.
    /// Voices sharing a staff share its measure's memory: they are read in
    /// time order (the upper voice first at the same moment).
    static func accidentals(of voices: [Part], score: Score, map: MeterMap) -> [[Int: String]] {
        var result = voices.map { _ in [Int: String]() }
        var measure = Int.min
        var state: [Int: Int] = [:]
        var altered: [Int: Int] = [:]
        var previousMeasureAltered: [Int: Int] = [:]
        let order = voices.enumerated().flatMap { voice, part in part.notes.indices.map { (voice, $0) } }
            .sorted { (voices[$0.0].notes[$0.1].startTick, $0.0) < (voices[$1.0].notes[$1.1].startTick, $1.0) }
        for (voice, index) in order {
            let part = voices[voice]
            let note = part.notes[index]
            let number = map.measure(containing: note.startTick)
            if number != measure {
                previousMeasureAltered = altered
                altered = [:]
                state = [:]
                measure = number
            }
            guard let pitch = note.pitch else { continue }
            let slot = pitch.octave * 7 + pitch.step.rawValue
            let continues = index > 0 && part.notes[index - 1].tieToNext && part.notes[index - 1].pitch == pitch
            let keyAlter = keyAlteration(of: pitch.step, in: score.key(atMeasure: number))
            let current = state[slot] ?? keyAlter
            if continues {
                // The tie carries the pitch over, and only the tied note: a
                // later note of the step in the measure states its
                // accidental again (Gould, Behind Bars). The next measure
                // may still want a courtesy accidental.
                if pitch.alter != keyAlter { altered[slot] = pitch.alter }
                continue
            }
            if pitch.alter != current || (state[slot] == nil && previousMeasureAltered[slot].map { $0 != pitch.alter } ?? false) {
                result[voice][index] = accidentalGlyph(pitch.alter)
            }
            state[slot] = pitch.alter
            if pitch.alter != keyAlter { altered[slot] = pitch.alter } else { altered[slot] = nil }
        }
        return result
    }

    /// A part's words as shown (every shown verse), to print a line of
    /// words once in closed score.
    func words(of shown: Int) -> [String] {
        let part = parts[shown]
        return part.verses.flatMap { verse in part.part.notes.compactMap { $0.lyric(verse: verse)?.text } }
    }

    static func keyAlteration(of step: Step, in key: Key) -> Int {
        let sharps: [Step] = [.f, .c, .g, .d, .a, .e, .b]
        let flats: [Step] = [.b, .e, .a, .d, .g, .c, .f]
        if key.fifths > 0 { return sharps.prefix(key.fifths).contains(step) ? 1 : 0 }
        if key.fifths < 0 { return flats.prefix(-key.fifths).contains(step) ? -1 : 0 }
        return 0
    }

    static func accidentalGlyph(_ alter: Int) -> String {
        switch alter {
        case 2: "accidentalDoubleSharp"
        case 1: "accidentalSharp"
        case -1: "accidentalFlat"
        case -2: "accidentalDoubleFlat"
        default: "accidentalNatural"
        }
    }

    // MARK: Staff positions

    /// Diatonic step of the middle line under a clef.
    static func middleLine(_ clef: Clef) -> Int {
        switch clef {
        case .treble: 4 * 7 + 6
        case .treble8vb: 3 * 7 + 6
        case .alto: 4 * 7
        case .bass: 3 * 7 + 1
        }
    }

    /// Steps above the middle line.
    static func position(_ pitch: Pitch, clef: Clef) -> Int { pitch.octave * 7 + pitch.step.rawValue - middleLine(clef) }

    /// The y of a staff position (staff top at 0, y down).
    static func y(_ position: Int) -> Double { 2 - Double(position) * 0.5 }

    // MARK: Horizontal spacing

    /// How far the upper voice of a second moves right: past the lower
    /// note's head and its dots.
    static func secondShift(lowerDots: Int, head: Double) -> Double {
        head + (lowerDots > 0 ? 0.3 + Double(lowerDots) * 0.6 + 0.1 : 0)
    }

    /// Space after a note by what follows it: a standard engraving rule,
    /// about ×1.5 for each doubling of duration.
    static func space(ticks: Int) -> Double { max(2.0, 3.3 * pow(Double(ticks) / 960, 0.6)) }

    func glyphWidth(_ name: String) -> Double { font.glyph(name).box.maxX }

    /// Columns (onsets of all shown parts) and the measure's natural width:
    /// space by duration, room for accidentals and dots, lyrics that never
    /// touch.
    func layOut(_ measure: inout MeasureLayout) {
        var ticks = Set<Int>()
        for part in parts { for index in part.byMeasure[measure.number] ?? [] { ticks.insert(part.part.notes[index].startTick) } }
        let sorted = ticks.sorted()
        var columns: [Column] = []
        var x = Metric.measurePad
        // Per part and verse: the right edge of the last syllable (and
        // whether a hyphen must fit after it).
        var lyricEdge: [Int: (right: Double, hyphen: Bool)] = [:]
        var previousRight = 0.0
        for (position, tick) in sorted.enumerated() {
            var accidental = 0.0
            var syllables: [(key: Int, half: Double, hyphen: Bool)] = []
            var dots = 0
            // Two voices on a staff: their accidentals side by side, and room
            // for a second's shifted notehead.
            var second = false
            var secondHead = 1.18
            for voices in staves {
                var width = 0.0
                var positions: [Int] = []
                for shown in voices {
                    let part = parts[shown]
                    guard let index = (part.byMeasure[measure.number] ?? []).first(where: { part.part.notes[$0].startTick == tick }) else { continue }
                    if let glyph = part.accidentals[index] { width += glyphWidth(glyph) + 0.25 + (width > 0 ? 0.2 : 0) }
                    if let pitch = part.part.notes[index].pitch { positions.append(Self.position(pitch, clef: part.clef)) }
                    if part.part.notes[index].value.denominator == 1 { secondHead = glyphWidth("noteheadWhole") }
                }
                accidental = max(accidental, width)
                if positions.count == 2 && abs(positions[0] - positions[1]) <= 1 { second = true }
            }
            for (partIndex, part) in parts.enumerated() {
                guard let index = (part.byMeasure[measure.number] ?? []).first(where: { part.part.notes[$0].startTick == tick }) else { continue }
                let note = part.part.notes[index]
                dots = max(dots, note.value.dots)
                for (row, verse) in part.verses.enumerated() {
                    if let lyric = note.lyric(verse: verse) {
                        let width = text.width(lyric.text, size: Metric.lyricSize)
                        syllables.append((partIndex * 100 + row, width / 2, lyric.continuesWord))
                    }
                }
            }
            if position > 0 {
                x = max(x + Self.space(ticks: tick - sorted[position - 1]), previousRight + accidental + 0.3)
            } else {
                x += accidental
            }
            for syllable in syllables {
                let centre = x + 0.59
                if let edge = lyricEdge[syllable.key] {
                    let needed = edge.right + (edge.hyphen ? 1.3 : 0.7) + syllable.half
                    if centre < needed { x += needed - centre }
                } else if centre - syllable.half < 0.3 {
                    x += 0.3 - (centre - syllable.half)
                }
            }
            for syllable in syllables { lyricEdge[syllable.key] = (x + 0.59 + syllable.half, syllable.hyphen) }
            columns.append(Column(tick: tick, x: x))
            previousRight = x + 1.18 + (second ? Self.secondShift(lowerDots: dots, head: secondHead) : 0) + (dots > 0 ? 0.3 + Double(dots) * 0.6 : 0)
        }
        var width = (columns.last.map { $0.x + Self.space(ticks: measure.endTick - $0.tick) } ?? 4) + 0.4
        width = max(width, previousRight + 0.8)
        for edge in lyricEdge.values { width = max(width, edge.right + (edge.hyphen ? 1.2 : 0.5)) }
        if columns.isEmpty { width = 6 }
        // Room for repeat barlines: thick, thin and dots.
        let repeatRoom = Self.repeatBarWidth(font)
        if measure.repeatStart {
            for index in columns.indices { columns[index].x += repeatRoom }
            width += repeatRoom
        }
        if measure.repeatEnd { width += repeatRoom }
        measure.columns = columns
        measure.width = width
    }

    /// A repeat barline's width: thick line, gap, thin line, gap, dots, gap.
    static func repeatBarWidth(_ font: SMuFLFont) -> Double {
        font.value("thickBarlineThickness", 0.5) + font.value("barlineSeparation", 0.4) + font.value("thinBarlineThickness", 0.16)
            + font.value("repeatBarlineDotSeparation", 0.16) + font.glyph("repeatDot").box.maxX + 0.5
    }

    // MARK: Systems

    /// Systems of these heights on pages whose music runs from `top`
    /// (`firstTop` on the first, under the title) to `bottom`: the fewest
    /// pages they fit on (a system taller than a page stands alone), then
    /// the smallest fill that still needs no more pages, so the systems
    /// spread evenly rather than crowding the first pages and leaving the
    /// last one nearly empty. Each system's page and its top on it.
    static func paginate(_ heights: [Double], firstTop: Double, top: Double, bottom: Double, gap: Double) -> [(page: Int, offset: Double)] {
        func pack(fill: Double) -> [(page: Int, offset: Double)] {
            var placed: [(page: Int, offset: Double)] = []
            var page = 0
            var y = firstTop
            for height in heights {
                let start = page == 0 ? firstTop : top
                if y > start && (y + height > bottom || y + height - start > fill) {
                    page += 1
                    y = top
                }
                placed.append((page, y))
                y += height + gap
            }
            return placed
        }
        let fewest = pack(fill: .infinity)
        guard let pages = fewest.last?.page, pages > 0 else { return fewest }
        var low = heights.max() ?? 0, high = bottom - min(top, firstTop)
        for _ in 0..<24 {
            let middle = (low + high) / 2
            if (pack(fill: middle).last?.page ?? 0) <= pages { high = middle } else { low = middle }
        }
        return pack(fill: high)
    }

    /// Clef, key and time at a system's start (time only when it changes).
    func preambleWidth(_ measure: MeasureLayout, first: Bool, clef: Bool) -> Double {
        var width = 0.0
        if clef { width += 1.0 + glyphWidth("gClef") + 0.8 }
        if clef || measure.showsKey { width += keyWidth(measure.key) + (measure.key.fifths == 0 ? 0 : 0.6) }
        if measure.cancelled > 0 { width += Double(measure.cancelled) * (glyphWidth("accidentalNatural") + 0.15) + 0.4 }
        if measure.showsMeter || first { width += meterWidth(measure.meter, symbol: measure.meterSymbol) + 0.8 }
        return width
    }

    func keyWidth(_ key: Key) -> Double {
        Double(abs(key.fifths)) * (glyphWidth(key.fifths > 0 ? "accidentalSharp" : "accidentalFlat") + 0.15)
    }

    func meterWidth(_ meter: Meter, symbol: MeterSymbol? = nil) -> Double {
        if let symbol { return glyphWidth(symbol == .common ? "timeSigCommon" : "timeSigCutCommon") }
        func digits(_ value: Int) -> Double { String(value).reduce(0) { $0 + glyphWidth("timeSig\($1)") } }
        return max(digits(meter.numerator), digits(meter.denominator))
    }

    /// Page geometry in staff spaces.
    var pageWidth: Double { options.pageWidthMM / options.staffSpaceMM }
    var pageHeight: Double { options.pageHeightMM / options.staffSpaceMM }
    var margin: Double { options.marginMM / options.staffSpaceMM }

    func nameWidth(short: Bool) -> Double {
        let names = parts.map { short ? ($0.part.shortName ?? "") : $0.part.name }
        let widest = names.map { text.width($0, size: Metric.nameSize) }.max() ?? 0
        return widest > 0 ? widest + 2.5 : 1.5
    }

    mutating func run() -> Engraving {
        // Break into systems: as many measures as fit, then justified.
        var systems: [(range: ClosedRange<Int>, left: Double)] = []
        var start = 0
        while start < measures.count {
            let left = margin + nameWidth(short: !systems.isEmpty)
            let available = pageWidth - margin - left
            var used = preambleWidth(measures[start], first: start == 0, clef: true)
            var end = start
            used += measures[start].width
            while end + 1 < measures.count {
                let next = measures[end + 1]
                let extra = next.width + (next.showsKey || next.showsMeter ? preambleWidth(next, first: false, clef: false) : 0)
                if used + extra > available { break }
                used += extra
                end += 1
            }
            systems.append((start...end, left))
            start = end + 1
        }

        var builder = SystemBuilder(layout: self)
        var scrollItems: [DisplayItem] = []
        var engraved: [EngravedSystem] = []
        var notes: [EngravedNote] = []
        var entries: [TimeMapEntry] = []
        var y = margin
        // Title block.
        // A line too long for the page (a narrow one: a phone) wraps at words.
        let room = pageWidth - 2 * margin
        for line in text.wrap(score.title ?? "", size: Metric.titleSize, width: room, style: .bold) {
            y += Metric.titleSize
            scrollItems.append(.text(line, at: Point(pageWidth / 2, y), size: Metric.titleSize, anchor: .middle, style: .bold))
        }
        for line in text.wrap(score.subtitle ?? "", size: Metric.subtitleSize * 1.2, width: room) {
            y += Metric.subtitleSize * 1.6
            scrollItems.append(.text(line, at: Point(pageWidth / 2, y), size: Metric.subtitleSize * 1.2, anchor: .middle, style: .normal))
        }
        let credits = [score.composer, score.arranger.map { "arr. " + $0 }].compactMap { $0 }
        for credit in credits {
            for line in text.wrap(credit, size: Metric.subtitleSize, width: room) {
                y += Metric.subtitleSize * 1.3
                scrollItems.append(.text(line, at: Point(pageWidth - margin, y), size: Metric.subtitleSize, anchor: .end, style: .normal))
            }
        }
        let headerHeight = y + 4
        y = headerHeight
        // Systems, placed once (notes learn their system-relative x first
        // so ties and lyrics can reach across a break).
        let placements = systems.enumerated().map { index, system in
            builder.place(system.range, index: index, left: system.left, right: pageWidth - margin)
        }
        builder.placements = placements
        var drawnSystems: [(items: [DisplayItem], above: Double, height: Double)] = []
        for (index, system) in systems.enumerated() {
            let drawn = builder.draw(system: index, range: system.range, left: system.left, right: placements[index].end)
            let top = y + drawn.above
            scrollItems += drawn.items.map { $0.offset(0, top) }
            for var note in drawn.notes {
                note.y += top
                note.staffTop += top
                notes.append(note)
            }
            for var entry in drawn.timeMap {
                entry.system = index
                entries.append(entry)
            }
            let height = drawn.above + drawn.height + drawn.below
            drawnSystems.append((drawn.items, drawn.above, height))
            engraved.append(EngravedSystem(measures: measures[system.range.lowerBound].number...measures[system.range.upperBound].number,
                                           left: system.left, right: placements[index].end, top: top, bottom: top + drawn.height,
                                           page: 0, pageOffset: 0))
            y += height + Metric.systemGap
        }
        // Pages: as few as the systems need, the systems spread evenly over them.
        let placed = Self.paginate(drawnSystems.map(\.height), firstTop: headerHeight, top: margin, bottom: pageHeight - margin, gap: Metric.systemGap)
        var pageItems = [[DisplayItem]](repeating: [], count: (placed.last?.page ?? 0) + 1)
        pageItems[0] = Array(scrollItems.prefix { item in if case .text = item { true } else { false } })
        for (index, system) in drawnSystems.enumerated() {
            let top = placed[index].offset + system.above
            engraved[index].page = placed[index].page
            engraved[index].pageOffset = top
            pageItems[placed[index].page] += system.items.map { $0.offset(0, top) }
        }
        let pages = pageItems.map { EngravedPage(width: pageWidth, height: pageHeight, items: $0) }
        notes.sort { ($0.part, $0.note) < ($1.part, $1.note) }
        return Engraving(scroll: EngravedPage(width: pageWidth, height: y + margin, items: scrollItems), pages: pages, notes: notes,
                         timeMap: entries, systems: engraved, staffSpaceMM: options.staffSpaceMM, fontName: font.name, textFamily: text.family)
    }
}
