import AcapellaScore
import Foundation

/// Where a system's measures and notes fall.
struct Placement {
    /// Measure index → x of its start and its width after justification.
    var measureX: [Int: (x: Double, width: Double)] = [:]
    /// Column x by tick, for notes and the time map.
    var columnX: [Int: Double] = [:]
    /// (shown part, note index) → notehead x.
    var noteX: [Int: [Int: Double]] = [:]
    var start: Double = 0
    var end: Double = 0
}

/// What a system drew: items with the first staff's top at y 0, how far
/// ink reaches above it and below the last staff.
struct DrawnSystem {
    var items: [DisplayItem]
    var notes: [EngravedNote]
    var timeMap: [TimeMapEntry]
    var above: Double
    var height: Double
    var below: Double
}

struct SystemBuilder {
    let layout: Layout
    var placements: [Placement] = []
    var font: SMuFLFont { layout.font }

    init(layout: Layout) { self.layout = layout }

    func glyph(_ name: String, _ x: Double, _ y: Double) -> DisplayItem {
        .glyph(name: name, codepoint: font.glyph(name).codepoint, at: Point(x, y))
    }

    /// Measure positions, justified so the system ends exactly at `right`.
    func place(_ range: ClosedRange<Int>, index: Int, left: Double, right: Double) -> Placement {
        var placement = Placement()
        let measures = layout.measures
        let preamble = layout.preambleWidth(measures[range.lowerBound], first: range.lowerBound == 0, clef: true)
        var fixed = preamble
        var natural = 0.0
        for measureIndex in range {
            natural += measures[measureIndex].width
            if measureIndex != range.lowerBound, measures[measureIndex].showsKey || measures[measureIndex].showsMeter {
                fixed += layout.preambleWidth(measures[measureIndex], first: false, clef: false)
            }
        }
        var scale = natural > 0 ? (right - left - fixed) / natural : 1
        // The last system, when short, keeps its natural spacing (a little
        // looser) instead of being pulled to the page's width.
        var right = right
        if range.upperBound == measures.count - 1 && index > 0 && scale > 1.6 {
            scale = 1.15
            right = left + fixed + natural * scale
        }
        var x = left + preamble
        for measureIndex in range {
            let measure = measures[measureIndex]
            if measureIndex != range.lowerBound, measure.showsKey || measure.showsMeter {
                x += layout.preambleWidth(measure, first: false, clef: false)
            }
            let width = measure.width * scale
            placement.measureX[measureIndex] = (x, width)
            for column in measure.columns { placement.columnX[column.tick] = x + column.x * scale }
            x += width
        }
        for (shown, part) in layout.parts.enumerated() {
            var xs: [Int: Double] = [:]
            for measureIndex in range {
                for noteIndex in part.byMeasure[measures[measureIndex].number] ?? [] {
                    xs[noteIndex] = placement.columnX[part.part.notes[noteIndex].startTick]
                }
            }
            placement.noteX[shown] = xs
        }
        // Two voices a second apart (or a unison of unlike noteheads or
        // dots): the upper voice's note moves right of the lower's and of
        // its dots.
        for voices in layout.staves where voices.count == 2 {
            let (upper, lower) = (layout.parts[voices[0]], layout.parts[voices[1]])
            var lowerAt: [Int: NoteEvent] = [:]
            for (noteIndex, _) in placement.noteX[voices[1]] ?? [:] { lowerAt[lower.part.notes[noteIndex].startTick] = lower.part.notes[noteIndex] }
            for (noteIndex, x) in placement.noteX[voices[0]] ?? [:] {
                let note = upper.part.notes[noteIndex]
                guard let pitch = note.pitch, let other = lowerAt[note.startTick], let otherPitch = other.pitch else { continue }
                let step = Layout.position(pitch, clef: upper.clef) - Layout.position(otherPitch, clef: lower.clef)
                if abs(step) == 1 || (step == 0 && note.value != other.value) {
                    let head = font.glyph(other.value.denominator == 1 ? "noteheadWhole" : "noteheadBlack").box.maxX
                    placement.noteX[voices[0]]?[noteIndex] = x + Layout.secondShift(lowerDots: other.value.dots, head: head)
                }
            }
        }
        placement.start = left
        placement.end = right
        return placement
    }

    // MARK: Drawing

    func draw(system index: Int, range: ClosedRange<Int>, left: Double, right: Double) -> DrawnSystem {
        let placement = placements[index]
        let measures = layout.measures
        var items: [DisplayItem] = []
        var notes: [EngravedNote] = []
        var staffTop = 0.0
        var firstAbove = 0.0
        var staffTops: [Double] = []
        var lastBottom = 0.0
        // The outline of the staves so far, on the system's y.
        var outlineAbove = Skyline()
        var wordsShown = Set<[String]>()
        let thickness = font.value("staffLineThickness", 0.13)
        for (staffIndex, voices) in layout.staves.enumerated() {
            // One drawing per voice on the staff; the first draws the staff's
            // furniture, two voices have fixed stems, the words come last.
            var drawings = voices.enumerated().map { voice, shown in
                var drawing = StaffDrawing(builder: self, part: layout.parts[shown], shown: shown, placement: placement, range: range, system: index)
                drawing.furniture = voice == 0
                if voices.count > 1 { drawing.fixedUp = voice == 0 }
                if voices.count == 2 { drawing.otherVoice = (layout.parts[voices[1 - voice]], voices[1 - voice]) }
                drawing.draw()
                drawing.drawSlurs()
                drawing.drawFermatas()
                return drawing
            }
            let inkTop = drawings.map(\.minY).min() ?? 0
            // Dynamics under the staff's notes, once a moment for two voices.
            let notesBottom = drawings.map(\.maxY).max() ?? 4
            var printed: [(dynamic: Dynamic, box: Box)] = []
            for voice in drawings.indices { printed = drawings[voice].drawDynamics(below: notesBottom, besides: printed) }
            let inkBottom = drawings.map(\.maxY).max() ?? 4
            drawings[0].maxY = inkBottom
            for voice in drawings.indices {
                // In closed score a line of words is printed once, between
                // the staves; another voice's words only where they differ.
                let words = layout.words(of: voices[voice])
                guard !layout.options.closed || (!words.isEmpty && !wordsShown.contains(words)) else { continue }
                wordsShown.insert(words)
                if voice > 0 { drawings[voice].maxY = drawings[voice - 1].maxY }
                drawings[voice].drawLyrics()
            }
            // Stack: this staff's top below the previous staff's lyrics.
            if staffIndex == 0 {
                firstAbove = max(2.5, -inkTop + 1)
            } else {
                // As close as the outlines allow (ink `inkClearance` apart),
                // never closer than `staffGap` between the staves' lines.
                var outline = Skyline()
                for drawing in drawings { outline.merge(drawing.skyline) }
                outline.add(minX: left, maxX: right, minY: 0, maxY: 4)
                staffTop = max((staffTops.last ?? 0) + 4 + Metric.staffGap, outlineAbove.distance(above: outline, clearance: Metric.inkClearance))
            }
            let names = voices.map { layout.parts[$0].part.name }
            items.append(.beginGroup(id: "staff-\(index)-\(staffIndex)", className: "staff", data: [DataAttribute("part", names.joined(separator: ", "))]))
            for line in 0...4 {
                let y = staffTop + Double(line)
                items.append(.line(from: Point(left, y), to: Point(right, y), thickness: thickness))
            }
            for (voice, drawing) in drawings.enumerated() {
                let part = layout.parts[voices[voice]].part
                let highlighted = layout.options.highlight.map { $0.lowercased() == part.name.lowercased() } ?? false
                items.append(.beginGroup(id: nil, className: highlighted ? "highlight" : "voice", data: [DataAttribute("part", part.name)]))
                items += drawing.items.map { $0.offset(0, staffTop) }
                items.append(.endGroup)
                for var note in drawing.notes {
                    note.y += staffTop
                    note.staffTop = staffTop
                    notes.append(note)
                }
            }
            items.append(.endGroup)
            staffTops.append(staffTop)
            lastBottom = staffTop + max(4, drawings.map(\.maxY).max() ?? 4)
            for drawing in drawings { outlineAbove.merge(drawing.skyline.offset(staffTop)) }
            outlineAbove.add(minX: left, maxX: right, minY: staffTop, maxY: staffTop + 4)
            // Part names: full on the first system, short after; two voices
            // one above the other.
            let labels = voices.map { index == 0 ? layout.parts[$0].part.name : (layout.parts[$0].part.shortName ?? "") }
            for (voice, label) in labels.enumerated() where !label.isEmpty {
                let y = labels.count == 1 ? staffTop + 2.6 : staffTop + 1.6 + Double(voice) * 2.2
                items.append(.text(label, at: Point(left - 1.8, y), size: Metric.nameSize, anchor: .end, style: .normal))
            }
        }
        let bottom = (staffTops.last ?? 0) + 4
        // The system's opening barline and bracket.
        items.append(.line(from: Point(left, 0), to: Point(left, bottom), thickness: font.value("thinBarlineThickness", 0.16)))
        if layout.staves.count > 1 {
            let bracketX = left - 1.0
            items.append(.line(from: Point(bracketX, -0.5), to: Point(bracketX, bottom + 0.5), thickness: font.value("bracketThickness", 0.5)))
            items.append(glyph("bracketTop", bracketX - 0.25, -0.5))
            items.append(glyph("bracketBottom", bracketX - 0.25, bottom + 0.5))
        }
        // Measure number at the system's start (not the first system).
        let firstMeasure = measures[range.lowerBound].number
        if index > 0 {
            items.append(.text("\(firstMeasure)", at: Point(left, -firstAbove + 1.0), size: Metric.numberSize, anchor: .start, style: .italic))
        }
        // Endings, tempo marks, words, signs and rehearsal marks above the first staff.
        let above = aboveSystem(index: index, range: range, left: left, top: -firstAbove)
        items += above.items
        firstAbove += above.height
        // Time map: every onset in the system.
        var entries: [TimeMapEntry] = []
        for measureIndex in range {
            let measure = measures[measureIndex]
            for column in measure.columns {
                var ids: [String] = []
                for part in layout.parts {
                    // A part's notes follow each other: the one sounding is
                    // the last to start at or before the column.
                    let noteIndex = part.part.notes.partitionIndex { $0.startTick > column.tick } - 1
                    guard noteIndex >= 0 else { continue }
                    let note = part.part.notes[noteIndex]
                    if note.endTick > column.tick && note.pitch != nil { ids.append("n\(part.index)-\(noteIndex)") }
                }
                entries.append(TimeMapEntry(tick: column.tick, sample: layout.timeMap.sample(atTick: column.tick), measure: measure.number,
                                            system: index, x: placement.columnX[column.tick] ?? column.x, notes: ids))
            }
        }
        return DrawnSystem(items: items, notes: notes, timeMap: entries, above: firstAbove, height: bottom, below: max(0, lastBottom - bottom) + 1)
    }
}

extension SystemBuilder {
    /// What stands over the system, in rows from the staff up: volta
    /// brackets; then tempo marks, expression text, segno and coda signs and
    /// jump instructions on one line (each after the last, never on it);
    /// then rehearsal marks in boxes. `top` is where the first staff's ink
    /// (and its clearance) ends; returns the items and the height they add.
    func aboveSystem(index: Int, range: ClosedRange<Int>, left: Double, top: Double) -> (items: [DisplayItem], height: Double) {
        let placement = placements[index]
        let measures = layout.measures
        let score = layout.score
        let firstNumber = measures[range.lowerBound].number
        let lastNumber = measures[range.upperBound].number
        func measureX(_ number: Int) -> (x: Double, width: Double)? { placement.measureX[number - measures[0].number] }
        var items: [DisplayItem] = []
        var y = top
        // Voltas.
        var voltaDrawn = false
        for mark in score.barMarks {
            guard case .ending(let numbers, let count) = mark.kind else { continue }
            let end = mark.measure + count - 1
            guard end >= firstNumber && mark.measure <= lastNumber, let start = measureX(max(mark.measure, firstNumber)),
                  let finish = measureX(min(end, lastNumber)) else { continue }
            let lineY = y - 2.0
            let x1 = start.x + 0.2
            let x2 = finish.x + finish.width - 0.3
            let thickness = font.value("repeatEndingLineThickness", 0.16)
            items.append(.line(from: Point(x1, lineY), to: Point(x2, lineY), thickness: thickness))
            if mark.measure >= firstNumber {
                items.append(.line(from: Point(x1, lineY), to: Point(x1, lineY + 1.6), thickness: thickness))
                items.append(.text(numbers.map { "\($0)." }.joined(separator: " "), at: Point(x1 + 0.5, lineY + 1.5), size: Metric.nameSize, anchor: .start, style: .normal))
            }
            let closed = score.barMarks.contains { if case .ending = $0.kind { $0.measure == end + 1 } else { false } }
            if end <= lastNumber && closed { items.append(.line(from: Point(x2, lineY), to: Point(x2, lineY + 1.6), thickness: thickness)) }
            voltaDrawn = true
        }
        if voltaDrawn { y -= 2.4 }
        // One line of tempo, words and signs, left to right.
        var entries: [(x: Double, draw: (Double) -> [DisplayItem], width: Double)] = []
        for tempo in score.tempos where tempo.printed {
            guard let x = placement.columnX[tempo.tick] ?? (tempo.tick == 0 && index == 0 ? left + 1 : nil) else { continue }
            let quarter = font.glyph("metNoteQuarterUp")
            let bpm = Double(tempo.tempo.milliBPM) / 1000
            let text = " = " + (bpm == bpm.rounded() ? String(Int(bpm)) : String(format: "%.1f", bpm))
            let width = quarter.box.maxX + layout.text.width(text, size: Metric.nameSize, style: .bold)
            entries.append((x, { [self] lineY in
                [glyph("metNoteQuarterUp", x, lineY), .text(text, at: Point(x + quarter.box.maxX, lineY), size: Metric.nameSize, anchor: .start, style: .bold)]
            }, width))
        }
        for text in score.texts where text.kind == .words {
            guard let x = column(atOrAfter: text.tick, in: range, placement: placement) else { continue }
            // Wider than the system: in lines that fit it.
            for line in layout.text.wrap(text.text, size: Metric.nameSize, width: placement.end - placement.start, style: .italic) {
                let width = layout.text.width(line, size: Metric.nameSize, style: .italic)
                entries.append((x, { lineY in [.text(line, at: Point(x, lineY), size: Metric.nameSize, anchor: .start, style: .italic)] }, width))
            }
        }
        for mark in score.barMarks where mark.measure >= firstNumber && mark.measure <= lastNumber {
            guard let (x, width) = measureX(mark.measure) else { continue }
            switch mark.kind {
            case .segno, .coda:
                let name = mark.kind == .segno ? "segno" : "coda"
                let box = font.glyph(name).box
                entries.append((x + 0.3, { [self] lineY in [glyph(name, x + 0.3, lineY)] }, box.maxX))
            case .toCoda, .fine, .daCapo, .dalSegno:
                let words = BarMark.signWords.first { $0.0 == mark.kind }!.1
                // The score's own words for the jump, if it wrote them, are printed instead.
                let start = layout.map.startTick(ofMeasure: mark.measure), end = layout.map.startTick(ofMeasure: mark.measure + 1)
                if score.texts.contains(where: { $0.tick >= start && $0.tick < end && $0.text.lowercased().hasPrefix(words.lowercased().prefix(4)) }) { continue }
                let textWidth = layout.text.width(words, size: Metric.nameSize, style: .italic)
                let textX = x + width - textWidth - 0.4
                entries.append((textX, { lineY in [.text(words, at: Point(textX, lineY), size: Metric.nameSize, anchor: .start, style: .italic)] }, textWidth))
            default:
                break
            }
        }
        if !entries.isEmpty {
            // Left to right on the line; what does not fit before the
            // system's end goes on a line above.
            var rows: [Double] = []
            for entry in entries.sorted(by: { $0.x < $1.x }) {
                var row = rows.firstIndex { entry.x >= $0 + 1.0 || max(entry.x, $0 + 1.0) + entry.width <= placement.end } ?? rows.count
                if row == rows.count { rows.append(-Double.infinity) }
                var x = max(entry.x, rows[row] + 1.0)
                if x + entry.width > placement.end {
                    x = max(placement.end - entry.width, rows[row] + 1.0)
                    if x + entry.width > placement.end && rows[row] > -Double.infinity {
                        row = rows.count
                        rows.append(-Double.infinity)
                        x = max(min(entry.x, placement.end - entry.width), placement.start)
                    }
                }
                items += entry.draw(y - 0.6 - Double(row) * 2.8).map { $0.offset(x - entry.x, 0) }
                rows[row] = x + entry.width
            }
            y -= 0.4 + 2.8 * Double(rows.count)
        }
        // Rehearsal marks, boxed.
        var rehearsal = false
        var boxRight = -Double.infinity
        for text in score.texts where text.kind == .rehearsal {
            guard let column = column(atOrAfter: text.tick, in: range, placement: placement) else { continue }
            let width = min(layout.text.width(text.text, size: Metric.subtitleSize, style: .bold), placement.end - placement.start - 1)
            // Each clear of the one before (two marks between the same notes).
            let x = max(column, boxRight + 1.2)
            boxRight = x + width + 0.4
            let baseline = y - 0.9
            let box = Box(minX: x - 0.4, minY: baseline - Metric.subtitleSize * 0.85, maxX: x + width + 0.4, maxY: baseline + 0.5)
            items.append(.text(text.text, at: Point(x, baseline), size: Metric.subtitleSize, anchor: .start, style: .bold))
            for (a, b) in [(Point(box.minX, box.minY), Point(box.maxX, box.minY)), (Point(box.maxX, box.minY), Point(box.maxX, box.maxY)),
                           (Point(box.maxX, box.maxY), Point(box.minX, box.maxY)), (Point(box.minX, box.maxY), Point(box.minX, box.minY))] {
                items.append(.line(from: a, to: b, thickness: 0.12))
            }
            rehearsal = true
        }
        if rehearsal { y -= 3.2 }
        return (items, top - y)
    }

    /// The x of the first column at or after `tick` among the system's
    /// measures (a text between notes stands over the next one).
    func column(atOrAfter tick: Int, in range: ClosedRange<Int>, placement: Placement) -> Double? {
        let measures = layout.measures
        guard tick >= measures[range.lowerBound].startTick, tick < measures[range.upperBound].endTick else { return nil }
        for measureIndex in range where measures[measureIndex].endTick > tick {
            if let column = measures[measureIndex].columns.first(where: { $0.tick >= tick }) { return placement.columnX[column.tick] }
            // After the measure's last note (words at its barline): over that note.
            if let column = measures[measureIndex].columns.last(where: { $0.tick <= tick }) { return placement.columnX[column.tick] }
        }
        return nil
    }
}
