import AcapellaScore
import Foundation

/// What a singer reads on the notes besides pitch and rhythm, placed from
/// the font's glyph boxes: articulations by the notehead (away from the
/// stem; a voice sharing its staff keeps to its own side), fermatas
/// outside the staff, breaths after the note, slurs as Bézier curves clear
/// of the notes they span, dynamics and hairpins on one line under the
/// staff (above the words).
extension StaffDrawing {
    /// Whether a note's marks go above it: opposite its stem, or on its
    /// voice's side of a shared staff.
    func marksAbove(_ index: Int) -> Bool {
        if let fixedUp { return fixedUp }
        return !(stemUp[index] ?? true)
    }

    /// The notehead (or rest) of a note: left x, width and centre line y.
    func head(_ index: Int) -> (x: Double, width: Double, y: Double)? {
        guard let x = placement.noteX[shown]?[index] else { return nil }
        let note = notesOfPart[index]
        guard let pitch = note.pitch else { return (x, font.glyph(restGlyph(note.value)).box.maxX, 2) }
        return (x, font.glyph(noteheadGlyph(note.value)).box.maxX, Layout.y(Layout.position(pitch, clef: part.clef)))
    }

    mutating func drawMarks(_ indices: [Int], measureEnd: Double) {
        for (position, index) in indices.enumerated() {
            let marks = notesOfPart[index].marks
            guard !marks.isEmpty, let (x, width, y) = head(index) else { continue }
            let above = marksAbove(index)
            let centre = x + width / 2
            // The side's edge: the notehead, or the stem's tip on the stem side.
            var edge = above ? y - 0.5 : y + 0.5
            if let tip = stemTips[index], (tip < y) == above { edge = above ? min(edge, tip) : max(edge, tip) }
            for (articulation, name) in [(Articulations.staccato, "articStaccato"), (.tenuto, "articTenuto"), (.accent, "articAccent"), (.marcato, "articMarcato")]
                where marks.articulations.contains(articulation)
            {
                let glyphName = name + (above ? "Above" : "Below")
                let box = font.glyph(glyphName).box
                var glyphY = above ? edge - 0.3 - box.maxY : edge + 0.3 - box.minY
                // Dots and lines sit in a space inside the staff; accents
                // and marcatos outside it.
                if articulation == .staccato || articulation == .tenuto {
                    let middle = glyphY + (box.minY + box.maxY) / 2
                    if middle > -0.2 && middle < 4.2 && abs(middle - middle.rounded()) < 0.25 { glyphY += above ? -0.5 : 0.5 }
                } else {
                    glyphY = above ? min(glyphY, -0.4 - box.maxY) : max(glyphY, 4.4 - box.minY)
                }
                add(glyphName, centre - (box.minX + box.maxX) / 2, glyphY)
                edge = above ? glyphY + box.minY : glyphY + box.maxY
            }
            if let breath = marks.breath {
                // Halfway to the next note (or the barline), above the staff.
                let next = indices.dropFirst(position + 1).first.flatMap { placement.noteX[shown]?[$0] } ?? measureEnd
                let name = breath == .breath ? "breathMarkComma" : "caesura"
                let box = font.glyph(name).box
                let breathX = max(x + width + 0.3, (x + width + next) / 2 - box.maxX / 2)
                add(name, breathX, breath == .breath ? -0.5 : 1.0)
            }
        }
    }

    // MARK: Fermatas

    /// Fermatas outside everything else on their side: over the staff, the
    /// notes, their marks and slurs (under them for a staff's lower voice),
    /// centred on the note; drawn once the system's slurs are.
    mutating func drawFermatas() {
        guard let xs = placement.noteX[shown] else { return }
        for index in xs.keys.sorted() where notesOfPart[index].marks.fermata {
            guard let (x, width, y) = head(index) else { continue }
            let above = fixedUp != false
            let name = above ? "fermataAbove" : "fermataBelow"
            let box = font.glyph(name).box
            let left = x + width / 2 - (box.minX + box.maxX) / 2
            let columns = Int((left + box.minX).rounded(.down))...Int((left + box.maxX).rounded(.down))
            let glyphY: Double
            if above {
                let top = columns.compactMap { skyline.top[$0] }.min() ?? 0
                glyphY = min(top, y - 0.5, -0.5) - 0.4 - box.maxY
            } else {
                let bottom = columns.compactMap { skyline.bottom[$0] }.max() ?? 4
                glyphY = max(bottom, y + 0.5, 4.5) + 0.4 - box.minY
            }
            add(name, left, glyphY)
        }
    }

    // MARK: Slurs

    /// The part's slurs that reach into this system: from the first note's
    /// head (or the system's start) to the last's (or the system's end).
    mutating func drawSlurs() {
        guard let xs = placement.noteX[shown], let first = xs.keys.min(), let last = xs.keys.max() else { return }
        for slur in part.slurs where slur.end >= first && slur.start <= last {
            let inside = (max(slur.start, first)...min(slur.end, last)).filter { xs[$0] != nil }
            guard !inside.isEmpty else { continue }
            let pitched = inside.filter { notesOfPart[$0].pitch != nil }
            // Stems all up: below; all down or mixed: above; a shared staff: the voice's side.
            let above = fixedUp ?? !pitched.allSatisfy { stemUp[$0] ?? true }
            let direction: Double = above ? -1 : 1
            func endY(_ index: Int) -> Double {
                guard let (_, _, y) = head(index) else { return 2 }
                var end = y + direction * 0.7
                if let tip = stemTips[index], (tip < y) == above { end = above ? min(end, tip - 0.3) : max(end, tip + 0.3) }
                return end
            }
            let startIn = xs[slur.start] != nil
            let endIn = xs[slur.end] != nil
            let x1 = startIn ? (head(slur.start).map { $0.x + $0.width / 2 } ?? placement.start) : (xs[first] ?? placement.start) - 1.5
            let x2 = endIn ? (head(slur.end).map { $0.x + $0.width / 2 } ?? placement.end) : placement.end - 0.4
            guard x2 - x1 > 0.5 else { continue }
            let y1 = startIn ? endY(slur.start) : endY(inside[0])
            let y2 = endIn ? endY(slur.end) : endY(inside[inside.count - 1])
            // What the curve must clear: the heads (and stems on its side) between.
            var obstacles: [(x: Double, y: Double)] = []
            for index in inside where index != slur.start && index != slur.end {
                guard let (x, width, y) = head(index) else { continue }
                var extreme = y + direction * 0.6
                if let tip = stemTips[index], (tip < y) == above { extreme = above ? min(extreme, tip) : max(extreme, tip) }
                obstacles.append((x, extreme))
                obstacles.append((x + width, extreme))
            }
            // Accidentals under the slur (the end note's too), and the other voice's notes.
            for index in inside where index != slur.start {
                guard let accidental = part.accidentals[index], let (x, _, y) = head(index) else { continue }
                let box = font.glyph(accidental).box.offset(x - font.glyph(accidental).box.maxX - 0.25, y)
                for edge in [box.minX, box.maxX] { obstacles.append((edge, above ? box.minY : box.maxY)) }
            }
            for box in otherVoiceBoxes(from: x1, to: x2) { for edge in [box.minX, box.maxX] { obstacles.append((edge, above ? box.minY : box.maxY)) } }
            items.append(.beginGroup(id: nil, className: "slur", data: []))
            slurCurve(from: Point(x1, y1), to: Point(x2, y2), above: above, clearing: obstacles)
            items.append(.endGroup)
        }
    }

    /// A slur: a cubic Bézier between the ends, its control points a
    /// quarter in from each end, as high as needed to pass 0.4 staff
    /// spaces clear of every obstacle (at most 4), drawn as a filled
    /// crescent — thin at the ends, `slurMidpointThickness` in the middle.
    mutating func slurCurve(from start: Point, to end: Point, above: Bool, clearing obstacles: [(x: Double, y: Double)]) {
        let direction: Double = above ? -1 : 1
        var (p0, p3) = (start, end)
        let span = p3.x - p0.x
        // An obstacle near an end, where the curve has not yet risen, moves that end out.
        for obstacle in obstacles {
            let t = (obstacle.x - p0.x) / span
            if t < 0.2 { p0.y = above ? min(p0.y, obstacle.y - 0.4) : max(p0.y, obstacle.y + 0.4) }
            if t > 0.8 { p3.y = above ? min(p3.y, obstacle.y - 0.4) : max(p3.y, obstacle.y + 0.4) }
        }
        func point(_ t: Double, height: Double) -> Point {
            let c = 4 * height / 3
            let p1 = Point(p0.x + span / 4, p0.y + direction * c)
            let p2 = Point(p3.x - span / 4, p3.y + direction * c)
            let u = 1 - t
            let x = u * u * u * p0.x + 3 * u * u * t * p1.x + 3 * u * t * t * p2.x + t * t * t * p3.x
            let y = u * u * u * p0.y + 3 * u * u * t * p1.y + 3 * u * t * t * p2.y + t * t * t * p3.y
            return Point(x, y)
        }
        let middle = font.value("slurMidpointThickness", 0.22)
        var height = min(2.0, 0.5 + span * 0.06)
        let segments = 24
        while height < 4 {
            // The edge nearer the notes: the inner one.
            let curve = (0...segments).map { point(Double($0) / Double(segments), height: height - middle) }
            let clear = obstacles.allSatisfy { obstacle in
                guard let index = curve.firstIndex(where: { $0.x >= obstacle.x }), index > 0 else { return true }
                let a = curve[index - 1], b = curve[index]
                let y = b.x > a.x ? a.y + (b.y - a.y) * (obstacle.x - a.x) / (b.x - a.x) : b.y
                return above ? y <= obstacle.y - 0.4 : y >= obstacle.y + 0.4
            }
            if clear { break }
            height += 0.25
        }
        let outer = (0...segments).map { point(Double($0) / Double(segments), height: height) }
        let inner = (0...segments).map { point(Double($0) / Double(segments), height: height - middle) }
        polygon(outer + inner.reversed())
    }

    // MARK: Dynamics and hairpins

    /// Dynamics and hairpins of the notes in this system on one line under
    /// the staff (`bottom`: the lowest ink of the staff's voices); `skip`
    /// holds the ticks whose dynamic the other voice of the staff already
    /// printed. Returns the ticks of the dynamics drawn.
    @discardableResult
    mutating func drawDynamics(below bottom: Double, besides others: [(dynamic: Dynamic, box: Box)] = []) -> [(dynamic: Dynamic, box: Box)] {
        guard let xs = placement.noteX[shown], let first = xs.keys.min(), let last = xs.keys.max() else { return [] }
        let hasHairpin = part.hairpins.contains { $0.start <= last && ($0.end ?? Int.max) >= first }
        let dynamics = xs.keys.sorted().filter { notesOfPart[$0].marks.dynamic != nil }
        guard !dynamics.isEmpty || hasHairpin else { return [] }
        let baseline = max(4 + 2.4, bottom + 2.2)
        var drawn = others
        var right: [Int: Double] = [:]
        var left: [Int: Double] = [:]
        for index in dynamics {
            guard let dynamic = notesOfPart[index].marks.dynamic, let (x, width, _) = head(index) else { continue }
            let name = Self.dynamicGlyph(dynamic)
            let box = font.glyph(name).box
            let glyphX = x + width / 2 - (box.minX + box.maxX) / 2
            var placed = box.offset(glyphX, baseline)
            // The other voice of the staff said it already (on whatever line): once is enough.
            if drawn.contains(where: { $0.dynamic == dynamic && $0.box.minX < placed.maxX + 0.5 && placed.minX < $0.box.maxX + 0.5 }) { continue }
            // Another dynamic there: a line lower.
            while drawn.contains(where: { $0.box.overlaps(placed, by: -0.2) }) { placed = placed.offset(0, 2.4) }
            add(name, glyphX, placed.minY - box.minY)
            left[index] = glyphX + box.minX
            right[index] = glyphX + box.maxX
            drawn.append((dynamic, placed))
        }
        let thickness = font.value("hairpinThickness", 0.16)
        let centre = baseline - 0.55
        for hairpin in part.hairpins where hairpin.start <= last && (hairpin.end ?? Int.max) >= first {
            var x1 = xs[hairpin.start].map { $0 } ?? (xs[first] ?? placement.start) - 1.0
            if let edge = right[hairpin.start] { x1 = max(x1, edge + 0.4) }
            var x2: Double
            if let end = hairpin.end, let endX = xs[end] {
                let endsHere = notesOfPart[end].marks.hairpin == .end
                x2 = endsHere ? endX + (head(end)?.width ?? 1.2) : endX - 0.6
                if let edge = left[end] { x2 = min(x2, edge - 0.4) }
            } else if hairpin.end == nil, let endX = xs[last], last == notesOfPart.count - 1 {
                x2 = endX + (head(last)?.width ?? 1.2)
            } else {
                x2 = placement.end - 0.5
            }
            guard x2 - x1 > 1.0 else { continue }
            // Open at the loud end: a crescendo opens to the right.
            let opening = 0.5
            let (leftHalf, rightHalf) = hairpin.crescendo ? (0.0, opening) : (opening, 0.0)
            items.append(.beginGroup(id: nil, className: "hairpin", data: []))
            line(x1, centre - leftHalf, x2, centre - rightHalf, thickness)
            line(x1, centre + leftHalf, x2, centre + rightHalf, thickness)
            items.append(.endGroup)
        }
        maxY = max(maxY, baseline + 0.7, (drawn.map(\.box.maxY).max() ?? 0) + 0.1)
        return drawn
    }

    /// SMuFL's glyph for a dynamic.
    static func dynamicGlyph(_ dynamic: Dynamic) -> String {
        switch dynamic {
        case .ppp: "dynamicPPP"
        case .pp: "dynamicPP"
        case .p: "dynamicPiano"
        case .mp: "dynamicMP"
        case .mf: "dynamicMF"
        case .f: "dynamicForte"
        case .ff: "dynamicFF"
        case .fff: "dynamicFFF"
        case .fp: "dynamicFortePiano"
        case .sf: "dynamicSforzando1"
        case .sfz: "dynamicSforzato"
        case .sffz: "dynamicSforzatoFF"
        case .sfp: "dynamicSforzatoPiano"
        case .fz: "dynamicForzando"
        case .rfz: "dynamicRinforzando2"
        }
    }
}
