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
        let scale = natural > 0 ? (right - left - fixed) / natural : 1
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
        placement.start = left
        placement.end = right
        return placement
    }

    /// The system of a note.
    func system(ofNote note: Int, part shown: Int) -> Int? {
        placements.firstIndex { $0.noteX[shown]?[note] != nil }
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
        let thickness = font.value("staffLineThickness", 0.13)
        for (shown, part) in layout.parts.enumerated() {
            var staff = StaffDrawing(builder: self, part: part, shown: shown, placement: placement, range: range, system: index)
            staff.draw()
            // Stack: this staff's top below the previous staff's lyrics.
            if shown == 0 {
                firstAbove = max(2.5, -staff.minY + 1)
            } else {
                staffTop = lastBottom + Metric.staffGap + max(0, -staff.minY)
            }
            let highlighted = layout.options.highlight.map { $0.lowercased() == part.part.name.lowercased() } ?? false
            items.append(.beginGroup(id: "staff-\(index)-\(shown)", className: highlighted ? "highlight" : "staff",
                                     data: [DataAttribute("part", part.part.name)]))
            for line in 0...4 {
                let y = staffTop + Double(line)
                items.append(.line(from: Point(left, y), to: Point(right, y), thickness: thickness))
            }
            items += staff.items.map { $0.offset(0, staffTop) }
            items.append(.endGroup)
            for var note in staff.notes {
                note.y += staffTop
                note.staffTop = staffTop
                notes.append(note)
            }
            staffTops.append(staffTop)
            lastBottom = staffTop + max(4, staff.maxY)
            // Part names: full on the first system, short after.
            let name = index == 0 ? part.part.name : (part.part.shortName ?? "")
            if !name.isEmpty {
                items.append(.text(name, at: Point(left - 1.8, staffTop + 2.6), size: Metric.nameSize, anchor: .end, style: .normal))
            }
        }
        let bottom = (staffTops.last ?? 0) + 4
        // The system's opening barline and bracket.
        items.append(.line(from: Point(left, 0), to: Point(left, bottom), thickness: font.value("thinBarlineThickness", 0.16)))
        if layout.parts.count > 1 {
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
        // Tempo marks above the first staff.
        for tempo in layout.score.tempos {
            guard let x = placement.columnX[tempo.tick] ?? (tempo.tick == 0 && index == 0 ? left + 1 : nil) else { continue }
            let quarter = font.glyph("metNoteQuarterUp")
            let y = -firstAbove + 0.8
            items.append(glyph("metNoteQuarterUp", x, y))
            let bpm = Double(tempo.tempo.milliBPM) / 1000
            let text = " = " + (bpm == bpm.rounded() ? String(Int(bpm)) : String(format: "%.1f", bpm))
            items.append(.text(text, at: Point(x + quarter.box.maxX, y), size: Metric.nameSize, anchor: .start, style: .bold))
        }
        // Time map: every onset in the system.
        var entries: [TimeMapEntry] = []
        for measureIndex in range {
            let measure = measures[measureIndex]
            for column in measure.columns {
                var ids: [String] = []
                for part in layout.parts {
                    for (noteIndex, note) in part.part.notes.enumerated() where note.startTick <= column.tick && note.endTick > column.tick && note.pitch != nil {
                        ids.append("n\(part.index)-\(noteIndex)")
                    }
                }
                entries.append(TimeMapEntry(tick: column.tick, sample: layout.timeMap.sample(atTick: column.tick), measure: measure.number,
                                            system: index, x: placement.columnX[column.tick] ?? column.x, notes: ids))
            }
        }
        return DrawnSystem(items: items, notes: notes, timeMap: entries, above: firstAbove, height: bottom, below: max(0, lastBottom - bottom) + 1)
    }
}
