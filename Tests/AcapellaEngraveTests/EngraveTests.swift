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
    return try! SMuFLFont(metadata: folder.appendingPathComponent("bravura_metadata.json"), glyphNames: folder.appendingPathComponent("glyphnames.json"))
}()

/// Every shipped song and every shared MusicXML file, as songs.
let engravingCorpus: [String] = {
    let songs = ((try? FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent("Songs").path)) ?? [])
        .filter { $0.hasSuffix(".acasong") }.map { "Songs/" + $0 }
    let xml = ((try? FileManager.default.contentsOfDirectory(atPath: sharedMusicXML.path)) ?? []).map { "shared/" + $0 }
    return (songs + xml).sorted()
}()

func loadSong(_ name: String) throws -> Score {
    if name.hasPrefix("shared/") {
        let data = try Data(contentsOf: sharedMusicXML.appendingPathComponent(String(name.dropFirst("shared/".count))))
        return try MusicXML.importScore(bytes: [UInt8](data), fileName: name).score
    }
    return try Acasong.parse(String(contentsOf: repository.appendingPathComponent(name), encoding: .utf8))
}

@Suite struct EngraveCorrectnessTests {
    @Test func theCorpusIsThere() {
        #expect(engravingCorpus.count >= 20, "Songs/ and ../shared/data/musicxml: \(engravingCorpus.count) files")
    }

    /// Every note of the song appears exactly once, as one group, where its
    /// pitch belongs on the staff under its clef; the time map lists every
    /// onset in order of time, at the song sample the engine uses.
    @Test(arguments: engravingCorpus)
    func everyNoteOnceWhereItsPitchBelongs(song: String) throws {
        let score = try loadSong(song)
        let engraving = try Engraver(font: bravura).engrave(score)
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
        let onsets = Set(score.parts.flatMap { $0.notes.map(\.startTick) })
        #expect(engraving.timeMap.map(\.tick) == onsets.sorted(), "\(song): time map onsets")
        #expect(zip(engraving.timeMap, engraving.timeMap.dropFirst()).allSatisfy { $0.sample < $1.sample })
        let timeMap = try TimeMap(tempos: score.tempos, sampleRate: 48_000)
        #expect(engraving.timeMap.allSatisfy { $0.sample == timeMap.sample(atTick: $0.tick) })
    }

    /// Each system spans the page's width (margins aside) within 0.5 mm:
    /// its staff lines start at its left edge and its last barline ends at
    /// the right margin.
    @Test(arguments: engravingCorpus)
    func systemsAreJustifiedToTheWidth(song: String) throws {
        let score = try loadSong(song)
        let options = EngraveOptions()
        let engraving = try Engraver(font: bravura).engrave(score, options: options)
        let tolerance = 0.5 / options.staffSpaceMM
        let right = options.pageWidthMM / options.staffSpaceMM - options.marginMM / options.staffSpaceMM
        for system in engraving.systems {
            let verticals = engraving.scroll.items.compactMap { item -> Double? in
                guard case .line(let from, let to, let thickness) = item, from.x == to.x, from.y >= system.top - 0.01, to.y <= system.bottom + 0.01 else { return nil }
                return from.x + thickness / 2
            }
            let rightmost = verticals.max() ?? 0
            #expect(abs(rightmost - right) < tolerance, "\(song): system \(system.measures) ends at \(rightmost), page at \(right)")
            #expect(abs(system.right - right) < tolerance)
        }
    }

    /// No notehead collides with another symbol of its staff (accidentals,
    /// dots, other noteheads); consecutive syllables of a verse never touch.
    @Test(arguments: engravingCorpus)
    func noCollisions(song: String) throws {
        let score = try loadSong(song)
        let engraving = try Engraver(font: bravura).engrave(score)
        var boxes: [(String, Box)] = []
        for item in engraving.scroll.items {
            if case .glyph(let name, _, let at) = item, name.hasPrefix("notehead") || name.hasPrefix("accidental") || name == "augmentationDot" {
                boxes.append((name, bravura.glyph(name).box.offset(at.x, at.y)))
            }
        }
        var overlaps: [String] = []
        for i in boxes.indices {
            for j in (i + 1)..<boxes.count where boxes[i].1.overlaps(boxes[j].1, by: 0.05) {
                overlaps.append("\(boxes[i].0) and \(boxes[j].0) at \(boxes[i].1.minX), \(boxes[i].1.minY)")
            }
        }
        #expect(overlaps.isEmpty, "\(song): \(overlaps.count) overlaps, first \(overlaps.prefix(3))")
        var texts: [Box] = []
        for item in engraving.scroll.items {
            if case .text(let text, let at, let size, .middle, .normal) = item, size == Metric.lyricSize {
                let width = TextMetrics.width(text, size: size)
                texts.append(Box(minX: at.x - width / 2, minY: at.y - size * 0.7, maxX: at.x + width / 2, maxY: at.y + size * 0.2))
            }
        }
        var touching = 0
        for i in texts.indices { for j in (i + 1)..<texts.count where texts[i].overlaps(texts[j], by: 0.05) { touching += 1 } }
        #expect(touching == 0, "\(song): \(touching) syllables overlap")
    }
}

@Suite struct AccidentalTests {
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
        let engraving = try Engraver(font: bravura).engrave(score)
        let accidentals = engraving.notes.map { $0.accidental.map { $0.replacingOccurrences(of: "accidental", with: "") } ?? "-" }
        #expect(accidentals == ["-", "Natural", "-", "Sharp", "Flat", "Natural", "Flat", "-", "Natural", "Natural", "Sharp", "-", "-"])
    }
}

@Suite struct PDFTests {
    /// The pages go to a PDF through cairo with Bravura embedded from the
    /// shipped file: as many pages as the layout made, each A4.
    @Test func pagesToPrint() throws {
        let score = try loadSong("Songs/lift-every-voice-and-sing.acasong")
        let engraving = try Engraver(font: bravura).engrave(score)
        #expect(engraving.pages.count >= 2, "a long song breaks into pages")
        #expect(engraving.pages.flatMap(\.items).filter { if case .beginGroup(_, "note", _) = $0 { true } else { false } }.count
                == score.parts.reduce(0) { $0 + $1.notes.count }, "every note on some page, once")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("engrave-\(UUID().uuidString).pdf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try PDFWriter.write(engraving.pages, staffSpaceMM: engraving.staffSpaceMM,
                            fontFile: repository.appendingPathComponent("Fonts/bravura/Bravura.otf").path, to: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("%PDF-"))
        #expect(text.components(separatedBy: "/Type /Page ").count - 1 == engraving.pages.count, "page objects")
        #expect(text.contains("+Bravura"), "the music font is embedded")
        #expect(text.contains("/MediaBox [ 0 0 595.27") , "A4 pages")
        #expect(throws: EngraveError.self) { try PDFWriter.write(engraving.pages, staffSpaceMM: 1.75, fontFile: "/nonexistent.otf", to: path) }
    }
}
