import AcapellaScore
import Foundation

/// One part's staff in one system: preamble, barlines, notes, stems,
/// beams, flags, ties, lyrics. Staff top at y 0; the system stacks staves.
struct StaffDrawing {
    let builder: SystemBuilder
    let part: PartLayout
    let shown: Int
    let placement: Placement
    let range: ClosedRange<Int>
    let system: Int
    var items: [DisplayItem] = []
    var notes: [EngravedNote] = []
    /// Ink extent above the top line (negative) and below the bottom.
    var minY = 0.0
    var maxY = 4.0
    /// The outline of everything drawn (notes, marks, words).
    var skyline = Skyline()
    /// Stem ends by note, for ties and lyrics placement.
    var stemUp: [Int: Bool] = [:]
    /// Where each stem ends (y), beamed or not: what marks keep clear of.
    var stemTips: [Int: Double] = [:]
    /// Two voices on one staff: this voice's stems all up (the upper
    /// voice) or all down, its rests moved out of the other's way.
    var fixedUp: Bool?
    /// Whether this drawing draws the staff's clef, key, time and barlines
    /// (the first voice of a staff does).
    var furniture = true
    /// The other voice on the staff and its index among the shown parts.
    var otherVoice: (PartLayout, Int)?

    init(builder: SystemBuilder, part: PartLayout, shown: Int, placement: Placement, range: ClosedRange<Int>, system: Int) {
        self.builder = builder
        self.part = part
        self.shown = shown
        self.placement = placement
        self.range = range
        self.system = system
    }

    var font: SMuFLFont { builder.font }
    var layout: Layout { builder.layout }
    var notesOfPart: [NoteEvent] { part.part.notes }

    mutating func add(_ name: String, _ x: Double, _ y: Double) {
        let glyph = font.glyph(name)
        items.append(.glyph(name: name, codepoint: glyph.codepoint, at: Point(x, y)))
        minY = min(minY, y + glyph.box.minY)
        maxY = max(maxY, y + glyph.box.maxY)
        skyline.add(minX: x + glyph.box.minX, maxX: x + glyph.box.maxX, minY: y + glyph.box.minY, maxY: y + glyph.box.maxY)
    }

    mutating func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, _ thickness: Double) {
        items.append(.line(from: Point(x1, y1), to: Point(x2, y2), thickness: thickness))
        minY = min(minY, min(y1, y2))
        maxY = max(maxY, max(y1, y2))
        skyline.add(minX: min(x1, x2), maxX: max(x1, x2), minY: min(y1, y2) - thickness / 2, maxY: max(y1, y2) + thickness / 2)
    }

    mutating func polygon(_ points: [Point]) {
        items.append(.polygon(points))
        for point in points {
            minY = min(minY, point.y)
            maxY = max(maxY, point.y)
        }
        for (a, b) in zip(points, points.dropFirst() + points.prefix(1)) {
            skyline.add(minX: min(a.x, b.x), maxX: max(a.x, b.x), minY: min(a.y, b.y), maxY: max(a.y, b.y))
        }
    }

    mutating func draw() {
        let measures = layout.measures
        // Preamble: clef, key, time.
        var x = placement.start + 1.0
        let first = measures[range.lowerBound]
        if furniture {
            add(clefGlyph, x, clefY)
            x += font.glyph("gClef").box.maxX + 0.8
            x = drawCancellation(first, at: x)
            x = drawKey(first.key, at: x)
            if first.showsMeter || range.lowerBound == 0 { x = drawMeter(first.meter, symbol: first.meterSymbol, at: x) }
        }
        // Measures.
        let barline = font.value("thinBarlineThickness", 0.16)
        for measureIndex in range {
            let measure = measures[measureIndex]
            guard let (start, width) = placement.measureX[measureIndex] else { continue }
            if furniture, measureIndex != range.lowerBound, measure.showsKey || measure.showsMeter {
                var changeX = start - layout.preambleWidth(measure, first: false, clef: false)
                if measure.showsKey { changeX = drawKey(measure.key, at: drawCancellation(measure, at: changeX + 0.3)) }
                if measure.showsMeter { _ = drawMeter(measure.meter, symbol: measure.meterSymbol, at: changeX + 0.2) }
            }
            drawNotes(of: measure, start: start, width: width)
            guard furniture else { continue }
            let end = start + width
            if measure.repeatStart { drawRepeat(at: start, start: true) }
            if measure.repeatEnd {
                drawRepeat(at: end, start: false)
            } else if measureIndex == layout.measures.count - 1 {
                let thick = font.value("thickBarlineThickness", 0.5)
                let gap = font.value("barlineSeparation", 0.4)
                line(end - thick - gap - barline / 2, 0, end - thick - gap - barline / 2, 4, barline)
                line(end - thick / 2, 0, end - thick / 2, 4, thick)
            } else {
                line(end - barline / 2, 0, end - barline / 2, 4, barline)
            }
        }
    }

    /// A repeat barline: `|:` from `x` rightwards (thick, thin, dots) or
    /// `:|` ending at `x` (dots, thin, thick), from the font's thicknesses.
    mutating func drawRepeat(at x: Double, start: Bool) {
        let thick = font.value("thickBarlineThickness", 0.5)
        let thin = font.value("thinBarlineThickness", 0.16)
        let gap = font.value("barlineSeparation", 0.4)
        let dotGap = font.value("repeatBarlineDotSeparation", 0.16)
        let dot = font.glyph("repeatDot").box.maxX
        let direction: Double = start ? 1 : -1
        let thickX = x + direction * thick / 2
        let thinX = x + direction * (thick + gap + thin / 2)
        let dotsX = start ? x + thick + gap + thin + dotGap : x - (thick + gap + thin + dotGap + dot)
        line(thickX, 0, thickX, 4, thick)
        line(thinX, 0, thinX, 4, thin)
        add("repeatDot", dotsX, 1.5)
        add("repeatDot", dotsX, 2.5)
    }

    var clefGlyph: String {
        switch part.clef {
        case .treble: "gClef"
        case .treble8vb: "gClef8vb"
        case .alto: "cClef"
        case .bass: "fClef"
        }
    }

    var clefY: Double {
        switch part.clef {
        case .treble, .treble8vb: 3
        case .alto: 2
        case .bass: 1
        }
    }

    /// Key signature positions on the treble staff (steps above the middle
    /// line), moved for the clef.
    func keyPositions(_ key: Key) -> [Int] {
        let sharps = [4, 1, 5, 2, -1, 3, 0]
        let flats = [0, 3, -1, 2, -3, 1, -4]
        let shift: Int
        switch part.clef {
        case .treble, .treble8vb: shift = 0
        case .alto: shift = -1
        case .bass: shift = -2
        }
        return (key.fifths > 0 ? sharps.prefix(key.fifths) : flats.prefix(-key.fifths)).map { $0 + shift }
    }

    /// Naturals for the accidentals of the previous key that a change drops.
    mutating func drawCancellation(_ measure: MeasureLayout, at start: Double) -> Double {
        guard measure.cancelled > 0, let old = measure.previousKey else { return start }
        let kept = abs(old.fifths) - measure.cancelled
        var x = start
        for position in keyPositions(old).dropFirst(old.fifths.signum() == measure.key.fifths.signum() ? kept : 0) {
            add("accidentalNatural", x, Layout.y(position))
            x += font.glyph("accidentalNatural").box.maxX + 0.15
        }
        return x + 0.4
    }

    mutating func drawKey(_ key: Key, at start: Double) -> Double {
        guard key.fifths != 0 else { return start }
        let name = key.fifths > 0 ? "accidentalSharp" : "accidentalFlat"
        var x = start
        for position in keyPositions(key) {
            add(name, x, Layout.y(position))
            x += font.glyph(name).box.maxX + 0.15
        }
        return x + 0.6
    }

    mutating func drawMeter(_ meter: Meter, symbol: MeterSymbol?, at start: Double) -> Double {
        let width = layout.meterWidth(meter, symbol: symbol)
        if let symbol {
            add(symbol == .common ? "timeSigCommon" : "timeSigCutCommon", start, 2)
            return start + width + 0.8
        }
        for (value, y) in [(meter.numerator, 1.0), (meter.denominator, 3.0)] {
            let digits = String(value).map { "timeSig\($0)" }
            let total = digits.reduce(0) { $0 + font.glyph($1).box.maxX }
            var x = start + (width - total) / 2
            for digit in digits {
                add(digit, x, y)
                x += font.glyph(digit).box.maxX
            }
        }
        return start + width + 0.8
    }

    // MARK: Notes

    func noteheadGlyph(_ value: NoteValue) -> String {
        value.denominator == 1 ? "noteheadWhole" : value.denominator == 2 ? "noteheadHalf" : "noteheadBlack"
    }

    func restGlyph(_ value: NoteValue) -> String {
        switch value.denominator {
        case 1: "restWhole"
        case 2: "restHalf"
        case 4: "restQuarter"
        case 8: "rest8th"
        case 16: "rest16th"
        default: "rest32nd"
        }
    }

    /// The beat groups eighths are beamed in.
    func beamGroupTicks(_ meter: Meter, measureTicks: Int) -> Int {
        if meter.isCompound { return meter.beatTicks * 3 }
        if meter.denominator >= 8 { return measureTicks }
        return 960
    }

    /// Groups of beamed notes in a measure: eighths and shorter within a
    /// beat; in a part with words, a new syllable starts a new group (notes
    /// are beamed only within a melisma, as vocal music is written).
    func beamGroups(_ indices: [Int], measure: MeasureLayout) -> [[Int]] {
        let group = beamGroupTicks(measure.meter, measureTicks: measure.endTick - measure.startTick)
        var groups: [[Int]] = []
        var current: [Int] = []
        func close() {
            if current.count > 1 { groups.append(current) }
            current = []
        }
        for index in indices {
            let note = notesOfPart[index]
            let beat = (note.startTick - measure.startTick) / group
            guard note.pitch != nil, note.value.denominator >= 8, (note.endTick - 1 - measure.startTick) / group == beat else {
                close()
                continue
            }
            if let last = current.last {
                let lastBeat = (notesOfPart[last].startTick - measure.startTick) / group
                let newSyllable = part.hasLyrics && note.lyric(verse: part.verses.first ?? 1) != nil
                // A tuplet is beamed within its group, never into the next.
                let otherTuplet = notesOfPart[last].tuplet?.id != note.tuplet?.id
                if lastBeat != beat || newSyllable || otherTuplet || notesOfPart[last].endTick != note.startTick { close() }
            }
            current.append(index)
        }
        close()
        return groups
    }

    mutating func drawNotes(of measure: MeasureLayout, start: Double, width: Double) {
        let indices = part.byMeasure[measure.number] ?? []
        let groups = beamGroups(indices, measure: measure)
        var beamed: [Int: Int] = [:]
        for (number, group) in groups.enumerated() { for index in group { beamed[index] = number } }
        // Stem directions: a group by its note farthest from the middle line.
        var up: [Int: Bool] = [:]
        for index in indices {
            guard let pitch = notesOfPart[index].pitch else { continue }
            up[index] = Layout.position(pitch, clef: part.clef) < 0
        }
        for group in groups {
            let positions = group.compactMap { notesOfPart[$0].pitch.map { Layout.position($0, clef: part.clef) } }
            let farthest = positions.max { abs($0) < abs($1) } ?? 0
            for index in group { up[index] = farthest < 0 }
        }
        if let fixedUp { for index in up.keys { up[index] = fixedUp } }
        stemUp.merge(up) { $1 }
        let wholeRest = indices.count == 1 && notesOfPart[indices[0]].pitch == nil
        var stemEnds: [Int: (x: Double, y: Double)] = [:]
        for index in indices {
            let note = notesOfPart[index]
            guard let x = placement.noteX[shown]?[index] else { continue }
            let id = Score.noteID(part: part.index, note: index)
            var data = [DataAttribute("part", part.part.name), DataAttribute("measure", "\(measure.number)"), DataAttribute("tick", "\(note.startTick)"),
                        DataAttribute("sample", "\(layout.timeMap.sample(atTick: note.startTick))")]
            if let pitch = note.pitch { data.append(DataAttribute("midi", "\(pitch.midi)")) }
            if let lyric = note.lyric(verse: part.verses.first ?? 1) { data.append(DataAttribute("lyric", lyric.text)) }
            items.append(.beginGroup(id: id, className: "note", data: data))
            var record = EngravedNote(id: id, part: part.index, note: index, measure: measure.number, tick: note.startTick,
                                      sample: layout.timeMap.sample(atTick: note.startTick), system: system, x: x, y: 2, staffTop: 0,
                                      staffPosition: nil, accidental: nil, clef: part.clef)
            if let pitch = note.pitch {
                let position = Layout.position(pitch, clef: part.clef)
                let y = Layout.y(position)
                record.y = y
                record.staffPosition = position
                let head = noteheadGlyph(note.value)
                let headWidth = font.glyph(head).box.maxX
                // Ledger lines.
                let ledger = font.value("legerLineThickness", 0.16)
                let extend = font.value("legerLineExtension", 0.4)
                if position >= 6 {
                    for step in stride(from: 6, through: position, by: 2) { line(x - extend, Layout.y(step), x + headWidth + extend, Layout.y(step), ledger) }
                } else if position <= -6 {
                    for step in stride(from: -6, through: position, by: -2) { line(x - extend, Layout.y(step), x + headWidth + extend, Layout.y(step), ledger) }
                }
                if let accidental = part.accidentals[index] {
                    let width = font.glyph(accidental).box.maxX
                    var left = x - width - 0.25
                    // The lower voice's accidental goes left of the upper's.
                    if fixedUp == false, let (upper, _) = otherVoice, let other = upper.part.notes.firstIndex(where: { $0.startTick == note.startTick }),
                       let otherAccidental = upper.accidentals[other], let column = placement.columnX[note.startTick] {
                        left = min(left, column - font.glyph(otherAccidental).box.maxX - 0.25 - width - 0.2)
                    }
                    add(accidental, left, y)
                    record.accidental = accidental
                }
                add(head, x, y)
                // Dots follow the widest notehead of the staff at this moment.
                var headRight = x + headWidth
                if let (other, shownOther) = otherVoice, let otherIndex = other.part.notes.firstIndex(where: { $0.startTick == note.startTick && $0.pitch != nil }),
                   let otherX = placement.noteX[shownOther]?[otherIndex] {
                    headRight = max(headRight, otherX + font.glyph(noteheadGlyph(other.part.notes[otherIndex].value)).box.maxX)
                }
                drawDots(note.value.dots, x: headRight + 0.3, position: position)
                // Stem.
                if note.value.denominator >= 2 {
                    let isUp = up[index] ?? true
                    let anchor = font.glyph(head).anchors[isUp ? "stemUpSE" : "stemDownNW"] ?? Point(isUp ? headWidth : 0, 0)
                    let stemThickness = font.value("stemThickness", 0.12)
                    let stemX = x + anchor.x + (isUp ? -stemThickness / 2 : stemThickness / 2)
                    let flags = max(0, Int(log2(Double(note.value.denominator))) - 2)
                    var length = Metric.stemLength + (beamed[index] == nil ? Double(max(0, flags - 1)) * 0.5 : 0)
                    // Stems of notes far from the staff reach the middle line.
                    length = max(length, abs(y - 2))
                    let endY = isUp ? y - length : y + length
                    stemEnds[index] = (stemX, endY)
                    stemTips[index] = endY
                    if beamed[index] == nil {
                        line(stemX, y + anchor.y, stemX, endY, stemThickness)
                        if flags > 0 {
                            let name = ["flag8th", "flag16th", "flag32nd"][min(flags, 3) - 1] + (isUp ? "Up" : "Down")
                            let flag = font.glyph(name)
                            let attach = flag.anchors[isUp ? "stemUpNW" : "stemDownSW"] ?? Point(0, 0)
                            add(name, stemX - stemThickness / 2 - attach.x, endY - attach.y)
                        }
                    }
                }
            } else {
                let name = wholeRest ? "restWhole" : restGlyph(note.value)
                let glyphWidth = font.glyph(name).box.maxX
                let restX = wholeRest ? start + (width - glyphWidth) / 2 : x
                let shift = fixedUp.map { $0 ? -2.0 : 2.0 } ?? 0
                let y = (name == "restWhole" ? 1.0 : 2.0) + shift
                add(name, restX, y)
                if !wholeRest { drawDots(note.value.dots, x: restX + glyphWidth + 0.3, position: 1) }
                record.x = restX
                record.y = y
            }
            items.append(.endGroup)
            notes.append(record)
        }
        for group in groups { drawBeam(group, ends: stemEnds, up: up[group[0]] ?? true) }
        drawTuplets(indices, ends: stemEnds, up: up, beamed: beamed)
        drawMarks(indices, measureEnd: start + width)
        for index in indices where notesOfPart[index].tieToNext { drawTie(from: index) }
        // A tie coming in from the previous system.
        if let first = indices.first, first > 0, notesOfPart[first - 1].tieToNext, measure.number == layout.measures[range.lowerBound].number,
           let x = placement.noteX[shown]?[first], let pitch = notesOfPart[first].pitch {
            tieCurve(from: x - 2.2, to: x - 0.1, y: Layout.y(Layout.position(pitch, clef: part.clef)), above: fixedUp ?? !(up[first] ?? true))
        }
    }

    /// A tuplet's number over its group (on the stems' side), with a
    /// bracket unless one beam already holds the whole group.
    mutating func drawTuplets(_ indices: [Int], ends: [Int: (x: Double, y: Double)], up: [Int: Bool], beamed: [Int: Int]) {
        var groups: [[Int]] = []
        for index in indices {
            guard let tuplet = notesOfPart[index].tuplet else { continue }
            if let last = groups.last?.last, notesOfPart[last].tuplet?.id == tuplet.id, last == index - 1 {
                groups[groups.count - 1].append(index)
            } else {
                groups.append([index])
            }
        }
        for group in groups {
            guard let tuplet = notesOfPart[group[0]].tuplet, let first = placement.noteX[shown]?[group[0]],
                  let last = placement.noteX[shown]?[group[group.count - 1]] else { continue }
            let pitched = group.filter { notesOfPart[$0].pitch != nil }
            let above = pitched.isEmpty ? true : pitched.filter { up[$0] ?? true }.count * 2 >= pitched.count
            // Clear of the notes and their stems.
            var extreme = above ? 0.0 : 4.0
            for index in group {
                let headY = notesOfPart[index].pitch.map { Layout.y(Layout.position($0, clef: part.clef)) } ?? 2
                let stemY = ends[index]?.y ?? headY
                extreme = above ? min(extreme, min(headY - 0.6, stemY)) : max(extreme, max(headY + 0.6, stemY))
            }
            let y = above ? extreme - 1.0 : extreme + 1.6
            let left = first
            let right = last + 1.18
            let digits = String(tuplet.actual).map { "tuplet\($0)" }
            let width = digits.reduce(0) { $0 + font.glyph($1).box.maxX }
            let centre = (left + right) / 2
            var x = centre - width / 2
            for digit in digits {
                add(digit, x, y + 0.45)
                x += font.glyph(digit).box.maxX
            }
            // No bracket only where one beam holds exactly the group.
            let beam = beamed[group[0]]
            let oneBeam = beam != nil && group.allSatisfy { beamed[$0] == beam } && beamed.values.filter { $0 == beam }.count == group.count
            // (A group of one note, as a nested tuplet flattens to, keeps its number alone.)
            if !oneBeam && right - left > width + 1.0 {
                let thickness = font.value("tupletBracketThickness", 0.16)
                let hook = above ? 0.6 : -0.6
                line(left, y + hook, left, y, thickness)
                line(left, y, centre - width / 2 - 0.4, y, thickness)
                line(centre + width / 2 + 0.4, y, right, y, thickness)
                line(right, y, right, y + hook, thickness)
            }
        }
    }

    mutating func drawDots(_ count: Int, x: Double, position: Int) {
        guard count > 0 else { return }
        // A dot on a line moves to the space above (below, for the lower of
        // two voices).
        let y = Layout.y(position) + (position % 2 == 0 ? (fixedUp == false ? 0.5 : -0.5) : 0)
        for dot in 0..<count { add("augmentationDot", x + Double(dot) * 0.6, y) }
    }

    /// A straight beam over a group's stems (slope at most one staff space),
    /// its stems drawn to it; secondary beams for sixteenths.
    mutating func drawBeam(_ group: [Int], ends: [Int: (x: Double, y: Double)], up: Bool) {
        let stems = group.compactMap { index in ends[index].map { (index, $0.x, $0.y) } }
        guard stems.count == group.count, let first = stems.first, let last = stems.last, last.1 > first.1 else { return }
        let thickness = font.value("beamThickness", 0.5)
        let spacing = font.value("beamSpacing", 0.25)
        let stemThickness = font.value("stemThickness", 0.12)
        let slope = beamSlope(group, width: last.1 - first.1, up: up)
        // Every stem at least 2.5 staff spaces long (plus its beams).
        var offset = first.2
        let levels = group.map { max(1, Int(log2(Double(notesOfPart[$0].value.denominator))) - 2) }
        for (index, stem) in stems.enumerated() {
            guard let pitch = notesOfPart[stem.0].pitch else { continue }
            let noteY = Layout.y(Layout.position(pitch, clef: part.clef))
            let extra = Double(levels[index] - 1) * (thickness + spacing)
            let beamY = offset + slope * (stem.1 - first.1)
            if up, beamY > noteY - 2.5 - extra { offset -= beamY - (noteY - 2.5 - extra) }
            if !up, beamY < noteY + 2.5 + extra { offset += (noteY + 2.5 + extra) - beamY }
        }
        // The beams also clear the group's accidentals (a flat reaches high).
        let stack = thickness + Double((levels.max() ?? 1) - 1) * (thickness + spacing)
        for stem in stems {
            guard let accidental = part.accidentals[stem.0], let pitch = notesOfPart[stem.0].pitch,
                  let noteX = placement.noteX[shown]?[stem.0] else { continue }
            let box = font.glyph(accidental).box
            let noteY = Layout.y(Layout.position(pitch, clef: part.clef))
            for x in [noteX - box.maxX - 0.45, noteX - 0.2] {
                let y = offset + slope * (x - first.1)
                if up, y + stack > noteY + box.minY - 0.3 { offset -= y + stack - (noteY + box.minY - 0.3) }
                if !up, y - stack < noteY + box.maxY + 0.3 { offset += noteY + box.maxY + 0.3 - (y - stack) }
            }
        }
        // And the other voice's notes where the voices cross.
        for box in otherVoiceBoxes(from: first.1, to: last.1) {
            for x in [box.minX, box.maxX] {
                let y = offset + slope * (x - first.1)
                if up, y + stack > box.minY - 0.3, box.minY < y + stack + 3 { offset -= y + stack - (box.minY - 0.3) }
                if !up, y - stack < box.maxY + 0.3, box.maxY > y - stack - 3 { offset += box.maxY + 0.3 - (y - stack) }
            }
        }
        offset = quantisedBeamEdge(offset, rise: slope * (last.1 - first.1), up: up, thickness: thickness)
        func beamY(_ x: Double) -> Double { offset + slope * (x - first.1) }
        for stem in stems {
            guard let pitch = notesOfPart[stem.0].pitch else { continue }
            let head = noteheadGlyph(notesOfPart[stem.0].value)
            let anchor = font.glyph(head).anchors[up ? "stemUpSE" : "stemDownNW"] ?? Point(0, 0)
            let noteY = Layout.y(Layout.position(pitch, clef: part.clef))
            line(stem.1, noteY + anchor.y, stem.1, beamY(stem.1), stemThickness)
            stemTips[stem.0] = beamY(stem.1)
        }
        // Beam levels: the primary over the group, then each level over the
        // runs of notes that have it (a lone note gets a stub).
        let direction: Double = up ? 1 : -1
        let maxLevel = levels.max() ?? 1
        for level in 1...maxLevel {
            let shift = Double(level - 1) * (thickness + spacing) * direction
            var run: [Int] = []
            func flush() {
                guard !run.isEmpty else { return }
                var x1 = stems[run.first!].1 - stemThickness / 2
                var x2 = stems[run.last!].1 + stemThickness / 2
                if run.count == 1 {
                    if run[0] == stems.count - 1 || (run[0] > 0 && level > 1) { x1 = x2 - 1.2 } else { x2 = x1 + 1.2 }
                }
                let y1 = beamY(x1) + shift
                let y2 = beamY(x2) + shift
                polygon([Point(x1, y1), Point(x2, y2), Point(x2, y2 + thickness * direction), Point(x1, y1 + thickness * direction)])
                run = []
            }
            for index in stems.indices {
                if levels[index] >= level { run.append(index) } else { flush() }
            }
            flush()
        }
    }

    /// A beam's slant as Gould gives it (Behind Bars): by the interval from
    /// the first note to the last — a quarter of a space for a second, a half
    /// for a third, three quarters for a fourth, a space for a fifth or more
    /// — and level where the melody returns or an inner note goes beyond
    /// both ends on the stems' side.
    func beamSlope(_ group: [Int], width: Double, up: Bool) -> Double {
        let positions = group.compactMap { notesOfPart[$0].pitch.map { Layout.position($0, clef: part.clef) } }
        guard let first = positions.first, let last = positions.last, positions.count == group.count, width > 0 else { return 0 }
        let inner = positions.dropFirst().dropLast()
        let beyond = up ? inner.contains { $0 > max(first, last) } : inner.contains { $0 < min(first, last) }
        guard first != last, !beyond else { return 0 }
        let rise = min(Double(abs(last - first)) * 0.25, 1.0)
        // Positions count up; y counts down.
        return (last > first ? -rise : rise) / width
    }

    /// The beam's outer edge moved away from the notes (never nearer: the
    /// stems keep their length) to the nearest quarter space where both
    /// ends of the primary beam sit on a line, straddle it or hang from it
    /// inside the staff — never a beam in the middle of a space, which
    /// leaves a thin white wedge against the lines (LilyPond's quants).
    func quantisedBeamEdge(_ edge: Double, rise: Double, up: Bool, thickness: Double) -> Double {
        let towardNotes: Double = up ? 1 : -1
        func allowed(_ centre: Double) -> Bool {
            guard centre > -0.3 && centre < 4.3 else { return true }
            let fraction = centre - centre.rounded(.down)
            return abs(fraction - 0.5) > 0.2
        }
        let start = ((edge + towardNotes * thickness / 2) * 4).rounded(up ? .down : .up) / 4
        for step in 0..<8 {
            let centre = start - towardNotes * Double(step) * 0.25
            if allowed(centre) && allowed(centre + rise) { return centre - towardNotes * thickness / 2 }
        }
        return edge
    }

    /// A tie to the next note: to it in this system, else to the system's end.
    mutating func drawTie(from index: Int) {
        guard let x = placement.noteX[shown]?[index], let pitch = notesOfPart[index].pitch else { return }
        // A tie leaves after the note's dots.
        let dots = notesOfPart[index].value.dots
        let head = font.glyph(noteheadGlyph(notesOfPart[index].value)).box.maxX + (dots > 0 ? 0.3 + Double(dots) * 0.6 : 0)
        let y = Layout.y(Layout.position(pitch, clef: part.clef))
        // Away from the stem; two voices on a staff: each voice's own side.
        let above = fixedUp ?? !(stemUp[index] ?? true)
        if let next = placement.noteX[shown]?[index + 1] {
            tieCurve(from: x + head + 0.15, to: next - 0.15, y: y, above: above)
        } else {
            tieCurve(from: x + head + 0.15, to: placement.end - 0.3, y: y, above: above)
        }
    }

    /// A tie as a filled crescent: thin at its ends, thicker in the middle.
    /// The other voice's noteheads and accidentals between `x1` and `x2`
    /// (on a staff of two voices): what this voice's ties and beams avoid
    /// where the voices cross.
    func otherVoiceBoxes(from x1: Double, to x2: Double) -> [Box] {
        guard let (other, shownOther) = otherVoice else { return [] }
        var boxes: [Box] = []
        for (index, x) in placement.noteX[shownOther] ?? [:] where x < x2 + 0.5 && x + 2 > x1 - 0.5 {
            guard let pitch = other.part.notes[index].pitch else { continue }
            let y = Layout.y(Layout.position(pitch, clef: other.clef))
            boxes.append(font.glyph(noteheadGlyph(other.part.notes[index].value)).box.offset(x, y))
            if let accidental = other.accidentals[index] {
                let box = font.glyph(accidental).box
                boxes.append(box.offset(x - box.maxX - 0.25, y))
            }
        }
        return boxes.filter { $0.maxX > x1 && $0.minX < x2 }
    }

    mutating func tieCurve(from start1: Double, to end1: Double, y: Double, above: Bool) {
        var (x1, x2) = (start1, end1)
        let direction: Double = above ? -1 : 1
        let start = y + 0.5 * direction
        // The other voice's notes at the tie's ends (a second beside it):
        // the tie starts after them and ends before them.
        for box in otherVoiceBoxes(from: x1, to: x2) where (above ? box.minY < start + 0.3 : box.maxY > start - 0.3) {
            if box.minX < x1 + 0.25 * (end1 - start1) { x1 = max(x1, box.maxX + 0.15) }
            if box.maxX > x2 - 0.25 * (end1 - start1) { x2 = min(x2, box.minX - 0.15) }
        }
        // Never drop a tie: squeezed too far, it keeps its full span.
        if x2 - x1 < 0.6 { (x1, x2) = (start1, end1) }
        guard x2 > x1 else { return }
        let middle = font.value("tieMidpointThickness", 0.22)
        var height = min(1.2, 0.35 + (x2 - x1) * 0.08)
        // Arch over the other voice where it crosses into the tie's way.
        for box in otherVoiceBoxes(from: x1, to: x2) {
            for step in 1..<16 {
                let t = Double(step) / 16
                let x = x1 + (x2 - x1) * t
                guard x > box.minX - 0.15 && x < box.maxX + 0.15 else { continue }
                let bulge = 4 * t * (1 - t)
                if above, box.minY < start { height = max(height, (start - box.minY + 0.15) / bulge + middle) }
                if !above, box.maxY > start { height = max(height, (box.maxY + 0.15 - start) / bulge + middle) }
            }
        }
        height = min(height, 5)
        var outer: [Point] = []
        var inner: [Point] = []
        let segments = 16
        for step in 0...segments {
            let t = Double(step) / Double(segments)
            let bulge = 4 * t * (1 - t)
            let x = x1 + (x2 - x1) * t
            outer.append(Point(x, start + direction * height * bulge))
            inner.append(Point(x, start + direction * (height - middle) * bulge))
        }
        polygon(outer + inner.reversed())
    }

    // MARK: Lyrics

    /// Each verse a row under the staff: syllables centred on their notes,
    /// hyphens between the syllables of a word, extender lines under a
    /// word's melisma.
    mutating func drawLyrics() {
        guard !part.verses.isEmpty else { return }
        let baseline = max(4 + 2.4, maxY + 1.8)
        let xs = placement.noteX[shown] ?? [:]
        // Rows for the verses sung in this system, in verse order (a verse
        // with no words here leaves no empty row).
        let verses = part.verses.filter { verse in xs.keys.contains { notesOfPart[$0].lyric(verse: verse) != nil } }
        for (row, verse) in verses.enumerated() {
            let y = baseline + Double(row) * Metric.lyricRow
            let shownNotes = xs.keys.sorted()
            // Each verse's number before its first word, on the first system
            // of a song of several verses (as hymnals print them).
            if system == 0 && part.verses.count > 1, let first = shownNotes.first(where: { notesOfPart[$0].lyric(verse: verse) != nil }),
               let x = placement.columnX[notesOfPart[first].startTick] ?? xs[first], let lyric = notesOfPart[first].lyric(verse: verse) {
                let left = x + 0.59 - layout.text.width(lyric.text, size: Metric.lyricSize) / 2
                items.append(.text("\(verse).", at: Point(left - 0.7, y), size: Metric.lyricSize, anchor: .end, style: .normal))
                let numberWidth = layout.text.width("\(verse).", size: Metric.lyricSize)
                skyline.add(minX: left - 0.7 - numberWidth, maxX: left - 0.7, minY: y - Metric.lyricSize * 0.75, maxY: y + Metric.lyricSize * 0.25)
            }
            for (position, index) in shownNotes.enumerated() {
                // Words centre on the column (a note moved aside for a second
                // keeps its syllable in line with the others).
                guard let lyric = notesOfPart[index].lyric(verse: verse),
                      let x = placement.columnX[notesOfPart[index].startTick] ?? xs[index] else { continue }
                let centre = x + 0.59
                let width = layout.text.width(lyric.text, size: Metric.lyricSize)
                // A group the web page lights while the syllable is sung.
                items.append(.beginGroup(id: nil, className: "syl", data: [DataAttribute("part", part.part.name), DataAttribute("verse", "\(verse)"),
                                                                          DataAttribute("sample", "\(layout.timeMap.sample(atTick: notesOfPart[index].startTick))")]))
                items.append(.text(lyric.text, at: Point(centre, y), size: Metric.lyricSize, anchor: .middle, style: .normal))
                skyline.add(minX: centre - width / 2, maxX: centre + width / 2, minY: y - Metric.lyricSize * 0.75, maxY: y + Metric.lyricSize * 0.25)
                items.append(.endGroup)
                let right = centre + width / 2
                // The next syllable of this verse.
                let later = shownNotes[(position + 1)...]
                let nextSyllable = later.first { notesOfPart[$0].lyric(verse: verse) != nil }
                if lyric.continuesWord {
                    let nextLeft = nextSyllable.flatMap { next in
                        xs[next].map { $0 + 0.59 - layout.text.width(notesOfPart[next].lyric(verse: verse)!.text, size: Metric.lyricSize) / 2 }
                    } ?? min(right + 2.0, placement.end)
                    if nextLeft - right > 0.5 {
                        let hyphenX = (right + nextLeft) / 2
                        line(hyphenX - 0.35, y - 0.55, hyphenX + 0.35, y - 0.55, 0.14)
                    }
                } else {
                    // A melisma: the word's last syllable held over more notes.
                    let held = later.prefix { notesOfPart[$0].lyric(verse: verse) == nil && notesOfPart[$0].pitch != nil && !part.wordStarts.contains($0) }
                    if let last = held.last, let lastX = xs[last], lastX + 1.18 > right + 0.6 {
                        line(right + 0.2, y + 0.1, lastX + 1.18, y + 0.1, font.value("lyricLineThickness", 0.16))
                    }
                }
            }
            maxY = max(maxY, y + 0.8)
        }
    }
}
