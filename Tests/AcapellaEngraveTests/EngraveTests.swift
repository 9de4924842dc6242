@testable import AcapellaEngrave
import AcapellaEngravePDF
import AcapellaMusicXML
import AcapellaScore
import Foundation
import Testing

let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let sharedMusicXML = repository.deletingLastPathComponent().appendingPathComponent("shared/data/musicxml")

let bravura: SMuFLFont = {
    let folder = repository.appendingPathComponent("Fonts/bravura")
    return try! SMuFLFont.load(metadata: folder.appendingPathComponent("bravura_metadata.json").path, glyphNames: folder.appendingPathComponent("glyphnames.json").path)
}()

/// The shipped text font, measured by FreeType (what the commands and the box use).
let gentium: TextFont = {
    let folder = repository.appendingPathComponent("Fonts/gentium").path
    return try! TextFont.load(TextFontFiles(family: "Gentium Book Plus", files: [
        .normal: folder + "/GentiumBookPlus-Regular.ttf", .italic: folder + "/GentiumBookPlus-Italic.ttf", .bold: folder + "/GentiumBookPlus-Bold.ttf",
    ]))
}()

/// The engraver with both shipped fonts.
let engraver = Engraver(font: bravura, text: gentium)

/// Every shipped song and every shared MusicXML file, as songs.
let engravingCorpus: [String] = {
    let songs = ((try? FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent("Songs").path)) ?? [])
        .filter { $0.hasSuffix(".acasong") }.map { "Songs/" + $0 }
    let xml = ((try? FileManager.default.contentsOfDirectory(atPath: sharedMusicXML.path)) ?? []).map { "shared/" + $0 }
    // The MusicXML as written (as `acapella engrave` prints it), and one
    // with its repeats sung out (as the web page shows it).
    return (songs + xml + ["shared/bach_bwv328.mxl --unfold"]).sorted()
}()

/// Each file engraved as written (a staff a part) and, where it has
/// several parts, as closed score (two parts a staff).
let engravingCases: [String] = engravingCorpus + engravingCorpus.map { $0 + " --closed" }

func engraveCase(_ name: String) throws -> (score: Score, engraving: Engraving, options: EngraveOptions) {
    var options = EngraveOptions()
    options.closed = name.hasSuffix(" --closed")
    let score = try loadSong(options.closed ? String(name.dropLast(" --closed".count)) : name)
    return (score, try engraver.engrave(score, options: options), options)
}

func loadSong(_ name: String) throws -> Score {
    if name.hasPrefix("shared/") {
        let unfold = name.hasSuffix(" --unfold")
        let file = String(name.dropFirst("shared/".count).dropLast(unfold ? " --unfold".count : 0))
        let data = try Data(contentsOf: sharedMusicXML.appendingPathComponent(file))
        return try MusicXML.importScore(bytes: [UInt8](data), fileName: file, options: ImportOptions(unfold: unfold)).score
    }
    return try Acasong.parse(String(contentsOf: repository.appendingPathComponent(name), encoding: .utf8))
}

@Suite struct EngraveCorrectnessTests {
    /// Any text keeps the SVG well-formed: markup as entities; control
    /// characters, U+FFFE and direction overrides left out.
    @Test func svgTextIsAlwaysWellFormed() {
        #expect(SVGWriter.escape("a<b>&\"c") == "a&lt;b&gt;&amp;&quot;c")
        #expect(SVGWriter.escape("x\u{1}y\u{1B}[2Jz\u{202E}w\u{FFFE}") == "xy[2Jzw")
        #expect(SVGWriter.escape("Ünïcödé ♩") == "Ünïcödé ♩")
    }

    @Test func theCorpusIsThere() {
        #expect(engravingCorpus.count >= 20, "Songs/ and ../shared/data/musicxml: \(engravingCorpus.count) files")
    }

    /// A phone's narrow page (the web page's): the title and credits wrap
    /// to stay on it, and every song still engraves every note.
    @Test func aNarrowPageKeepsTheHeaderOnIt() throws {
        var options = EngraveOptions()
        options.pageWidthMM = 100
        options.marginMM = 4
        for name in engravingCorpus {
            let score = try loadSong(name)
            let engraving = try engraver.engrave(score, options: options)
            #expect(engraving.notes.count == score.parts.reduce(0) { $0 + $1.notes.count }, "\(name)")
            for item in engraving.scroll.items {
                guard case .text(let text, let at, let size, let anchor, let style) = item, text.count > 1, at.y < engraving.systems[0].top else { continue }
                let width = gentium.width(text, size: size, style: style)
                let left = anchor == .end ? at.x - width : anchor == .middle ? at.x - width / 2 : at.x
                #expect(left >= -0.01 && left + width <= engraving.scroll.width + 0.01 || !text.contains(" "), "\(name): '\(text)' runs off the page")
            }
        }
    }

    /// Every note of the song appears exactly once, as one group, where its
    /// pitch belongs on the staff under its clef; the time map lists every
    /// onset in order of time, at the song sample the engine uses.
    @Test(arguments: engravingCases)
    func everyNoteOnceWhereItsPitchBelongs(song: String) throws {
        let (score, engraving, _) = try engraveCase(song)
        let total = score.parts.reduce(0) { $0 + $1.notes.count }
        #expect(engraving.notes.count == total, "\(song): \(engraving.notes.count) notes engraved of \(total)")
        let ids = engraving.scroll.items.compactMap { item -> String? in
            if case .beginGroup(let id, "note", _) = item { return id }
            return nil
        }
        #expect(ids.count == total && Set(ids).count == total, "\(song): note groups")
        var wrong = 0
        for note in engraving.notes {
            guard let pitch = score.parts[note.part].notes[note.note].pitch else { continue }
            let middle: Int = switch note.clef {
            case .treble: 34
            case .treble8vb: 27
            case .alto: 28
            case .bass: 22
            }
            let expected = pitch.octave * 7 + pitch.step.rawValue - middle
            if note.staffPosition != expected || abs(note.y - (note.staffTop + 2 - Double(expected) / 2)) > 1e-9 { wrong += 1 }
        }
        #expect(wrong == 0, "\(song): \(wrong) noteheads off their staff position")
        // Every tie drawn (one crossing a system break is drawn as two halves).
        let tied = score.parts.reduce(0) { $0 + $1.notes.filter(\.tieToNext).count }
        let ties = curves(engraving.scroll.items).filter { !$0.slur }.count
        #expect(ties >= tied && ties <= 2 * tied, "\(song): \(ties) tie outlines for \(tied) ties")
        let onsets = Set(score.parts.flatMap { $0.notes.map(\.startTick) })
        #expect(engraving.timeMap.map(\.tick) == onsets.sorted(), "\(song): time map onsets")
        #expect(zip(engraving.timeMap, engraving.timeMap.dropFirst()).allSatisfy { $0.sample < $1.sample })
        let timeMap = try TimeMap(tempos: score.tempos, sampleRate: 48_000)
        #expect(engraving.timeMap.allSatisfy { $0.sample == timeMap.sample(atTick: $0.tick) })
        // Each sounding note is in the entry of its own onset, on its system.
        let entries = Dictionary(uniqueKeysWithValues: engraving.timeMap.map { ($0.tick, $0) })
        let missing = engraving.notes.filter { note in
            score.parts[note.part].notes[note.note].pitch != nil
                && !(entries[note.tick]?.notes.contains(note.id) ?? false && entries[note.tick]?.system == note.system)
        }
        #expect(missing.isEmpty, "\(song): \(missing.count) notes missing from their time-map entry")
    }

    /// Every accidental the key and the measure require is drawn; any other
    /// is a courtesy accidental on the first note of its step in a measure.
    @Test(arguments: engravingCases)
    func accidentalsWhereRequired(song: String) throws {
        let (score, engraving, options) = try engraveCase(song)
        let drawn = Dictionary(uniqueKeysWithValues: engraving.notes.map { ("\($0.part)-\($0.note)", $0.accidental) })
        let map = score.meterMap
        var problems: [String] = []
        // Voices of one staff share the measure's accidentals, read in time
        // order (the upper voice first at one moment).
        let staves = options.closed ? stride(from: 0, to: score.parts.count, by: 2).map { Array($0..<min($0 + 2, score.parts.count)) }
            : score.parts.indices.map { [$0] }
        for voices in staves {
            var measure = Int.min
            var inForce: [Int: Int] = [:]
            let events = voices.flatMap { partIndex in score.parts[partIndex].notes.indices.map { (partIndex, $0) } }
                .sorted { (score.parts[$0.0].notes[$0.1].startTick, $0.0) < (score.parts[$1.0].notes[$1.1].startTick, $1.0) }
            for (partIndex, index) in events {
                let part = score.parts[partIndex]
                let note = part.notes[index]
                let number = map.measure(containing: note.startTick)
                if number != measure { (measure, inForce) = (number, [:]) }
                guard let pitch = note.pitch else { continue }
                let slot = pitch.octave * 7 + pitch.step.rawValue
                let key = score.key(atMeasure: number)
                let order: [Step] = key.fifths >= 0 ? [.f, .c, .g, .d, .a, .e, .b] : [.b, .e, .a, .d, .g, .c, .f]
                let keyAlter = order.prefix(abs(key.fifths)).contains(pitch.step) ? key.fifths.signum() : 0
                let tiedOver = index > 0 && part.notes[index - 1].tieToNext && part.notes[index - 1].pitch == pitch
                let required = !tiedOver && pitch.alter != (inForce[slot] ?? keyAlter)
                let shown = drawn["\(partIndex)-\(index)"] ?? nil
                let firstOfStep = inForce[slot] == nil
                if required && shown == nil { problems.append("\(pitch) in measure \(number): no accidental") }
                if !required && shown != nil && !(firstOfStep && !tiedOver) { problems.append("\(pitch) in measure \(number): needless \(shown!)") }
                // A tied-over note carries only itself over the barline.
                if !tiedOver { inForce[slot] = pitch.alter }
            }
        }
        #expect(problems.isEmpty, "\(song): \(problems.prefix(5))")
    }

    /// Each system spans the page's width (margins aside) within 0.5 mm:
    /// its staff lines start at its left edge and its last barline ends at
    /// the right margin.
    /// (A short last system keeps its natural spacing: it ends where its
    /// last barline does, short of the margin.)
    @Test(arguments: engravingCases)
    func systemsAreJustifiedToTheWidth(song: String) throws {
        let (_, engraving, options) = try engraveCase(song)
        let tolerance = 0.5 / options.staffSpaceMM
        let right = options.pageWidthMM / options.staffSpaceMM - options.marginMM / options.staffSpaceMM
        for (index, system) in engraving.systems.enumerated() {
            let verticals = engraving.scroll.items.compactMap { item -> Double? in
                guard case .line(let from, let to, let thickness) = item, from.x == to.x, from.y >= system.top - 0.01, to.y <= system.bottom + 0.01 else { return nil }
                return from.x + thickness / 2
            }
            let rightmost = verticals.max() ?? 0
            let end = index == engraving.systems.count - 1 ? system.right : right
            #expect(abs(rightmost - end) < tolerance, "\(song): system \(system.measures) ends at \(rightmost), page at \(end)")
            #expect(abs(system.right - right) < tolerance || index == engraving.systems.count - 1 && index > 0 && system.right < right)
        }
    }

    /// No notehead collides with another symbol of its staff (accidentals,
    /// dots, other noteheads); consecutive syllables of a verse never touch.
    @Test(arguments: engravingCases)
    func noCollisions(song: String) throws {
        let (_, engraving, _) = try engraveCase(song)
        var boxes: [(String, Box)] = []
        for item in engraving.scroll.items {
            // Noteheads, accidentals, dots and the marks on the notes.
            if case .glyph(let name, _, let at) = item, name.hasPrefix("notehead") || name.hasPrefix("accidental") || name == "augmentationDot"
                || ["fermata", "artic", "dynamic", "breathMark"].contains(where: name.hasPrefix) {
                boxes.append((name, bravura.glyph(name).box.offset(at.x, at.y)))
            }
        }
        var overlaps: [String] = []
        for i in boxes.indices {
            // Two voices' unison shares one notehead: the same glyph exactly
            // on the same place is meant.
            for j in (i + 1)..<boxes.count where boxes[i].1.overlaps(boxes[j].1, by: 0.05) && !(boxes[i] == boxes[j]) {
                overlaps.append("\(boxes[i].0) and \(boxes[j].0) at \(boxes[i].1.minX), \(boxes[i].1.minY)")
            }
        }
        #expect(overlaps.isEmpty, "\(song): \(overlaps.count) overlaps, first \(overlaps.prefix(3))")
        var texts: [Box] = []
        var words: [String] = []
        for item in engraving.scroll.items {
            if case .text(let text, let at, let size, .middle, .normal) = item, size == Metric.lyricSize {
                let width = gentium.width(text, size: size)
                texts.append(Box(minX: at.x - width / 2, minY: at.y - size * 0.7, maxX: at.x + width / 2, maxY: at.y + size * 0.2))
                words.append(text)
            }
        }
        var touching: [String] = []
        for i in texts.indices {
            for j in (i + 1)..<texts.count where texts[i].overlaps(texts[j], by: 0.05) { touching.append("'\(words[i])' and '\(words[j])' at \(texts[i])") }
        }
        #expect(touching.isEmpty, "\(song): syllables overlap: \(touching.prefix(3))")
        // Beams and ties keep clear of noteheads, accidentals and dots: a
        // beam (a parallelogram) by separating axes, a tie by the points of
        // its outline.
        var crossings: [String] = []
        let slurs = Set(curves(engraving.scroll.items).filter(\.slur).map(\.points))
        for item in engraving.scroll.items {
            guard case .polygon(let points) = item else { continue }
            let kind = points.count == 4 ? "beam" : slurs.contains(points) ? "slur" : "tie"
            let xs = points.map(\.x), ys = points.map(\.y)
            let bounds = Box(minX: xs.min()!, minY: ys.min()!, maxX: xs.max()!, maxY: ys.max()!)
            for (name, box) in boxes where box.overlaps(bounds, by: 0.05) {
                let inner = Box(minX: box.minX + 0.05, minY: box.minY + 0.05, maxX: box.maxX - 0.05, maxY: box.maxY - 0.05)
                let hit = points.count == 4 ? convexPolygon(points, overlaps: inner)
                    : points.contains { $0.x > inner.minX && $0.x < inner.maxX && $0.y > inner.minY && $0.y < inner.maxY }
                if hit { crossings.append("\(kind) over \(name) at \(box.minX), \(box.minY)") }
            }
        }
        #expect(crossings.isEmpty, "\(song): \(crossings.count) beams, ties or slurs over symbols: \(crossings.prefix(3))")
        // Words keep clear of every glyph (noteheads, rests, flags, clefs…).
        var glyphs: [Box] = []
        for item in engraving.scroll.items {
            if case .glyph(let name, _, let at) = item { glyphs.append(bravura.glyph(name).box.offset(at.x, at.y)) }
        }
        let hits = texts.indices.filter { index in glyphs.contains { $0.overlaps(texts[index], by: 0.05) } }.map { words[$0] }
        #expect(hits.isEmpty, "\(song): syllables run into a symbol: \(hits.prefix(5))")
        // No text touches another, each measured in the font it is set in
        // (titles, names, words over the music, tempo, endings, syllables).
        let all = engraving.scroll.items.compactMap { item -> (String, Box)? in
            guard case .text(let text, let at, let size, let anchor, let style) = item else { return nil }
            let width = gentium.width(text, size: size, style: style)
            let left = anchor == .start ? at.x : anchor == .middle ? at.x - width / 2 : at.x - width
            return (text, Box(minX: left, minY: at.y - size * 0.7, maxX: left + width, maxY: at.y + size * 0.2))
        }.sorted { $0.1.minX < $1.1.minX }
        var clashes: [String] = []
        for i in all.indices {
            for j in (i + 1)..<all.count {
                if all[j].1.minX >= all[i].1.maxX { break }
                if all[i].1.overlaps(all[j].1, by: 0.05) { clashes.append("'\(all[i].0)' and '\(all[j].0)' at \(all[i].1.minX), \(all[i].1.minY)") }
            }
        }
        #expect(clashes.isEmpty, "\(song): \(clashes.count) texts touch: \(clashes.prefix(3))")
    }
}

@Suite struct AccidentalTests {
    /// A sharp tied over the barline shows none on the tied note; the same
    /// pitch later in that measure states it again.
    @Test func aTieCarriesOnlyTheTiedNote() throws {
        let score = try Acasong.parse("""
            acasong 1
            part Melody [treble]
            C4 2 F#4 2~ | F#4 4 F#4 4 F4 2 |
            """)
        let engraving = try engraver.engrave(score)
        let accidentals = engraving.notes.map { $0.accidental.map { $0.replacingOccurrences(of: "accidental", with: "") } ?? "-" }
        #expect(accidentals == ["-", "Sharp", "-", "Sharp", "Natural"])
    }

    /// G major: F♯ needs nothing, F♮ a natural, a repeated F♮ nothing, F♯
    /// again a sharp; a note tied over the barline shows none, and the next
    /// measure's F (after one altered) gets a courtesy sharp.
    @Test func fromTheKeyAndTheMeasure() throws {
        let score = try Acasong.parse("""
            acasong 1
            key: G major
            part Melody [treble]
            F#4 4 F4 4 F4 4 F#4 4 | Bb4 2 B4 4 Bb4 4~ | Bb4 4 B4 4 F4 4 F#4 4 | F#4 4 G4 2. |
            """)
        let engraving = try engraver.engrave(score)
        let accidentals = engraving.notes.map { $0.accidental.map { $0.replacingOccurrences(of: "accidental", with: "") } ?? "-" }
        #expect(accidentals == ["-", "Natural", "-", "Sharp", "Flat", "Natural", "Flat", "-", "Natural", "Natural", "Sharp", "-", "-"])
    }
}

@Suite struct KeyChangeTests {
    /// D major to F major cancels both sharps; F major to C major its flat;
    /// G to D keeps G's sharp (none cancelled).
    @Test func cancellations() throws {
        let score = try Acasong.parse("""
            acasong 1
            key: D major
            key@2: F major
            key@3: C major
            key@4: G major
            key@5: D major
            part M [treble]
            D5 1 | F5 1 | C5 1 | G4 1 | D5 1 |
            """)
        let engraving = try engraver.engrave(score)
        let glyphs = engraving.scroll.items.compactMap { item -> String? in if case .glyph(let name, _, _) = item { name } else { nil } }
        #expect(glyphs.filter { $0 == "accidentalNatural" }.count == 3)
        #expect(glyphs.filter { $0 == "accidentalSharp" }.count == 2 + 1 + 2)
        #expect(glyphs.filter { $0 == "accidentalFlat" }.count == 1)
    }
}

@Suite struct PDFTests {
    /// The pages go to a PDF through cairo with Bravura embedded from the
    /// shipped file: as many pages as the layout made, each A4.
    @Test func pagesToPrint() throws {
        let score = try loadSong("Songs/lift-every-voice-and-sing.acasong")
        let engraving = try engraver.engrave(score)
        #expect(engraving.pages.count >= 2, "a long song breaks into pages")
        #expect(engraving.pages.flatMap(\.items).filter { if case .beginGroup(_, "note", _) = $0 { true } else { false } }.count
                == score.parts.reduce(0) { $0 + $1.notes.count }, "every note on some page, once")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("engrave-\(UUID().uuidString).pdf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try PDFWriter.write(engraving.pages, staffSpaceMM: engraving.staffSpaceMM,
                            fontFile: repository.appendingPathComponent("Fonts/bravura/Bravura.otf").path, to: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(String(decoding: bytes.prefix(5), as: UTF8.self) == "%PDF-")
        // Read back by poppler, as a viewer would (cairo 1.18 on trixie puts
        // the page objects in compressed object streams: not greppable).
        let info = try poppler("pdfinfo", path)
        #expect(info.contains { $0.hasPrefix("Pages:") && $0.hasSuffix(" \(engraving.pages.count)") }, "page count: \(info)")
        #expect(info.contains { $0.hasPrefix("Page size:") && $0.contains("595.276 x 841.89") }, "A4 pages: \(info)")
        let fonts = try poppler("pdffonts", path)
        #expect(fonts.contains { $0.contains("+Bravura") && $0.contains(" yes ") }, "the music font is embedded: \(fonts)")
        #expect(throws: EngraveError.self) { try PDFWriter.write(engraving.pages, staffSpaceMM: 1.75, fontFile: "/nonexistent.otf", to: path) }
    }
}

/// A poppler tool's output lines (poppler-utils, installed by `./test`).
func poppler(_ tool: String, _ path: String) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool)
    process.arguments = [path]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// Separating-axis test of a convex polygon against a box.
func convexPolygon(_ points: [Point], overlaps box: Box) -> Bool {
    let corners = [Point(box.minX, box.minY), Point(box.maxX, box.minY), Point(box.maxX, box.maxY), Point(box.minX, box.maxY)]
    var axes = [Point(1, 0), Point(0, 1)]
    for index in points.indices {
        let a = points[index], b = points[(index + 1) % points.count]
        axes.append(Point(-(b.y - a.y), b.x - a.x))
    }
    for axis in axes {
        let project = { (p: Point) in p.x * axis.x + p.y * axis.y }
        let polygon = points.map(project), rectangle = corners.map(project)
        if polygon.max()! <= rectangle.min()! || rectangle.max()! <= polygon.min()! { return false }
    }
    return true
}

/// The curved outlines (ties and slurs: polygons of more than four points)
/// and whether each is a slur (drawn in a `slur` group).
func curves(_ items: [DisplayItem]) -> [(points: [Point], slur: Bool)] {
    var found: [(points: [Point], slur: Bool)] = []
    var groups: [String?] = []
    for item in items {
        switch item {
        case .beginGroup(_, let className, _): groups.append(className)
        case .endGroup: _ = groups.popLast()
        case .polygon(let points) where points.count > 4: found.append((points, groups.last == "slur"))
        default: break
        }
    }
    return found
}
