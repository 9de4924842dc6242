@testable import AcapellaEngrave
import AcapellaMusicXML
import AcapellaScore
import Foundation
import Testing

/// What a singer reads besides the notes, on the page: each mark drawn
/// once, where it belongs; the music as written.
@Suite struct MarkEngravingTests {
    static func marksSong() throws -> Score {
        try Acasong.parse(String(contentsOf: repository.appendingPathComponent("Tests/AcapellaScoreTests/Fixtures/marks.acasong"), encoding: .utf8))
    }

    static func glyphs(_ engraving: Engraving) -> [(name: String, at: Point)] {
        engraving.scroll.items.compactMap { if case .glyph(let name, _, let at) = $0 { (name, at) } else { nil } }
    }

    static func texts(_ engraving: Engraving) -> [(text: String, at: Point, style: TextStyle)] {
        engraving.scroll.items.compactMap { if case .text(let text, let at, _, _, let style) = $0 { (text, at, style) } else { nil } }
    }

    static func groups(_ engraving: Engraving, _ className: String) -> Int {
        engraving.scroll.items.filter { if case .beginGroup(_, className, _) = $0 { true } else { false } }.count
    }

    /// Tests/AcapellaScoreTests/Fixtures/marks.acasong has one or more of
    /// every mark; each is drawn as many times as it is written.
    @Test func everyMarkIsDrawn() throws {
        let engraving = try engraver.engrave(Self.marksSong())
        let names = Self.glyphs(engraving).map(\.name)
        func count(_ prefix: String) -> Int { names.filter { $0.hasPrefix(prefix) }.count }
        #expect(count("fermata") == 3)
        #expect(count("articStaccato") == 1 && count("articTenuto") == 1 && count("articAccent") == 1 && count("articMarcato") == 1)
        #expect(count("breathMarkComma") == 1 && count("caesura") == 1)
        #expect(names.filter { $0.hasPrefix("dynamic") }.sorted()
            == ["dynamicForte", "dynamicFortePiano", "dynamicMF", "dynamicPPP", "dynamicPiano", "dynamicSforzato"])
        #expect(Self.groups(engraving, "hairpin") == 2)
        #expect(Self.groups(engraving, "slur") == 1)
        // Common time as C on both staves, the unprinted 3/4 not at all.
        #expect(count("timeSigCommon") == 2 && count("timeSig3") == 0 && count("timeSig4") == 0)
        // |: at measure 1 and :| at measure 2, on both staves; segno.
        #expect(count("repeatDot") == 8 && count("segno") == 1)
        let texts = Self.texts(engraving)
        for (text, style) in [("Molto tranquillo", TextStyle.italic), ("rit.", .italic), ("A", .bold), ("Fine", .italic), ("D.S.", .italic),
                              ("1.", .normal), ("2. 3.", .normal), ("A test of every mark", .normal), ("Hold on,", .normal)] {
            #expect(texts.contains { $0.text == text && $0.style == style }, "'\(text)' is printed")
        }
        // The opening tempo is played, not printed; the one at measure 3 is.
        #expect(count("metNoteQuarterUp") == 1 && texts.contains { $0.text == " = 66" } && !texts.contains { $0.text == " = 80" })
    }

    /// Fermatas over the staff (a lower voice's under it), articulations by
    /// the notehead away from the stem, dynamics under the staff and above
    /// the words, on every song that has them.
    @Test(arguments: engravingCases)
    func marksKeepTheirPlaces(song: String) throws {
        let (score, engraving, options) = try engraveCase(song)
        let glyphs = Self.glyphs(engraving)
        let marked = engraving.notes.filter { !score.parts[$0.part].notes[$0.note].marks.isEmpty }
        for note in marked {
            let marks = score.parts[note.part].notes[note.note].marks
            let lower = options.closed && score.parts.count > 1 && note.part % 2 == 1 && note.part < score.parts.count - (score.parts.count % 2)
            if marks.fermata {
                let name = lower ? "fermataBelow" : "fermataAbove"
                // Centred on the notehead (a whole note's is wider): the nearest one.
                let found = glyphs.filter { $0.name == name && abs($0.at.x + 1.2 - (note.x + 0.6)) < 0.6 && abs($0.at.y - note.y) < 14 && ($0.at.y < note.y) != lower }
                    .min { abs($0.at.y - note.y) < abs($1.at.y - note.y) }
                #expect(found != nil, "\(song): \(note.id)'s fermata")
                if let found {
                    let box = bravura.glyph(name).box.offset(found.at.x, found.at.y)
                    if lower { #expect(box.minY > max(note.staffTop + 4, note.y), "\(song): \(note.id)'s fermata under the staff") }
                    else { #expect(box.maxY < min(note.staffTop, note.y), "\(song): \(note.id)'s fermata over the staff") }
                }
            }
            if marks.dynamic != nil {
                let found = glyphs.first { $0.name.hasPrefix("dynamic") && abs($0.at.x - note.x) < 4 && $0.at.y > note.staffTop + 4 && $0.at.y < note.staffTop + 20 }
                #expect(found != nil, "\(song): \(note.id)'s dynamic under its staff")
                // Above the staff's words.
                if let found {
                    let words = engraving.scroll.items.compactMap { item -> Double? in
                        guard case .text(_, let at, Metric.lyricSize, .middle, .normal) = item, at.y > note.staffTop + 4, at.y < found.at.y + 6 else { return nil }
                        return abs(at.x - note.x) < 3 ? at.y : nil
                    }
                    #expect(words.allSatisfy { $0 > found.at.y + 1 }, "\(song): \(note.id)'s dynamic above the words")
                }
            }
        }
    }

    /// The shared chorales as written: their fermatas, common time, no
    /// meter changes the score does not print, no tempo it does not state,
    /// no rest it does not write, repeats as signs.
    @Test func choralesPrintAsWritten() throws {
        // (bach_bwv1.6.mxl writes no fermata.)
        for file in ["bach_bwv66.6.mxl", "bach_bwv26.6.mxl", "bach_bwv40.8.mxl", "bach_bwv304.mxl", "bach_bwv328.mxl"] {
            let score = try loadSong("shared/" + file)
            let engraving = try engraver.engrave(score)
            let names = Self.glyphs(engraving).map(\.name)
            let fermatas = score.parts.reduce(0) { $0 + $1.notes.filter(\.marks.fermata).count }
            #expect(fermatas > 0 && names.filter { $0.hasPrefix("fermata") }.count == fermatas, "\(file): \(fermatas) fermatas")
            // A time signature on the first system only (these chorales write one).
            let figures = names.filter { $0.hasPrefix("timeSig") }.count
            #expect(figures <= 2 * score.parts.count, "\(file): \(figures) time signature glyphs")
            #expect(!score.tempos.contains(where: \.printed) && !names.contains("metNoteQuarterUp"), "\(file): no tempo printed")
            // Every part's last event is a note: no rest invented.
            #expect(score.parts.allSatisfy { $0.notes.last?.pitch != nil }, "\(file): ends on notes")
        }
        let bwv328 = try engraver.engrave(try loadSong("shared/bach_bwv328.mxl"))
        #expect(Self.glyphs(bwv328).filter { $0.name == "repeatDot" }.count == 4 * 2 * 10, "bwv328: five repeats, |: and :| on four staves")
        #expect(try loadSong("shared/bach_bwv66.6.mxl").meters.first?.symbol == .common)
    }

    /// Each shared file printed as written on A4 takes no more pages than
    /// verovio 4.3.1 makes of it (its A4 page, 12 mm margins, as
    /// Tools/compare-engravers.py sets it): measured there once and kept
    /// here, so the suite checks it without Python. Lusitano is the count
    /// verovio gives when told the file is MusicXML.
    @Test func noMorePagesThanVerovio() throws {
        let verovio = ["bach_bwv1.6.mxl": 3, "bach_bwv26.6.mxl": 1, "bach_bwv304.mxl": 2, "bach_bwv328.mxl": 5, "bach_bwv40.8.mxl": 2,
                       "bach_bwv66.6.mxl": 1, "johnson_j_r_lift_every_voice.mxl": 3, "liliuokalani_aloha_oe.mxl": 3,
                       "lusitano_allor_che_ignuda.mxl": 3, "monteverdi_madrigal.3.2.mxl": 10, "beach_prayer_of_a_tired_child.musicxml": 4,
                       "demos_multiple-verses.xml": 1, "demos_nested_tuplet_finale_test.xml": 1, "demos_two-voices.xml": 1,
                       "demos_voices_with_chords.xml": 1]
        for (file, pages) in verovio {
            let ours = try engraver.engrave(try loadSong("shared/" + file)).pages.count
            #expect(ours <= pages, "\(file): \(ours) pages, verovio \(pages)")
        }
    }

    /// Texts where they are written, on the page whatever their length:
    /// words after a measure's last note (a jump's "Fine") over that note,
    /// a text wider than the system in lines, rehearsal marks between the
    /// same notes side by side.
    @Test func textsStayOnThePage() throws {
        let long = Array(repeating: "sempre legatissimo e molto tranquillo", count: 20).joined(separator: " ")
        let song = try Acasong.parse([
            "acasong 1", "text@1: " + long, "text@2+960: Fine", "rehearsal@1+240: A", "rehearsal@1+480: B",
            "part S", "C5 2 D5 2 | C5 1",
        ].joined(separator: "\n") + "\n")
        let engraving = try engraver.engrave(song)
        let texts = Self.texts(engraving)
        #expect(texts.contains { $0.text == "Fine" }, "the words at the last measure's end are printed")
        let lines = texts.filter { $0.style == .italic && $0.text.contains("legatissimo") }
        #expect(lines.count > 2, "the long text in \(lines.count) lines")
        let page = engraving.scroll.width
        for (text, at, style) in texts where style == .italic {
            let width = gentium.width(text, size: Metric.nameSize, style: style)
            #expect(at.x >= 0 && at.x + width <= page + 0.01, "'\(text.prefix(20))…' on the page")
        }
        let marks = texts.filter { $0.style == .bold && ($0.text == "A" || $0.text == "B") }.map(\.at.x).sorted()
        #expect(marks.count == 2 && marks[1] - marks[0] > gentium.width("A", size: Metric.subtitleSize, style: .bold) + 0.8)
    }

    /// What a hostile or careless MusicXML file does to the marks: an
    /// offset far past its measure lands at the measure's end (no crash),
    /// words at the barline stay in their measure, words written in pieces
    /// at one moment are one text, a volta never closed ends at its
    /// backward repeat.
    @Test func musicXMLMarksAtTheEdges() throws {
        func note(_ step: String) -> String { "<note><pitch><step>\(step)</step><octave>5</octave></pitch><duration>1</duration><voice>1</voice><type>quarter</type></note>" }
        func words(_ text: String, offset: String = "") -> String {
            "<direction><direction-type><words>\(text)</words></direction-type>" + (offset.isEmpty ? "" : "<offset>\(offset)</offset>") + "</direction>"
        }
        let attributes = "<attributes><divisions>1</divisions><time><beats>4</beats><beat-type>4</beat-type></time></attributes>"
        let m1 = attributes + words("Andante") + words(" con moto")
            + "<direction><direction-type><dynamics><p/></dynamics></direction-type><offset>10000000000000000</offset></direction>"
            + words("far", offset: "10000000000000000") + note("C") + note("D") + note("E") + note("F") + words("D.S. al Coda")
        let m2 = "<barline location=\"left\"><ending number=\"1\" type=\"start\"/></barline>" + note("G") + note("A") + note("B") + note("C")
            + "<barline location=\"right\"><repeat direction=\"backward\"/></barline>"
        let m3 = note("D") + note("E") + note("F") + note("G")
        let measures = [m1, m2, m3].enumerated().map { "<measure number=\"\($0.offset + 1)\">\($0.element)</measure>" }.joined()
        let xml = "<score-partwise><part-list><score-part id=\"P1\"><part-name>S</part-name></score-part></part-list><part id=\"P1\">" + measures + "</part></score-partwise>"
        let score = try MusicXML.importScore(bytes: Array(xml.utf8), fileName: "edges.musicxml", options: ImportOptions(unfold: false)).score
        #expect(score.texts.first?.text == "Andante con moto")
        #expect(score.texts.allSatisfy { score.meterMap.measure(containing: $0.tick) == 1 }, "in measure 1: \(score.texts)")
        #expect(score.texts.contains { $0.text.contains("D.S. al Coda") } && score.texts.contains { $0.text.contains("far") })
        #expect(score.parts[0].notes[3].marks.dynamic == .p, "the far dynamic on the measure's last note")
        #expect(score.barMarks == [BarMark(measure: 2, kind: .repeatEnd(times: 2)), BarMark(measure: 2, kind: .ending(numbers: [1], measures: 1))])
        #expect(try Acasong.parse(Acasong.serialize(score)) == score)
        _ = try engraver.engrave(score)
    }

    /// What the importer keeps from MusicXML's notations and directions.
    @Test func musicXMLMarksAreKept() throws {
        func note(_ step: String, _ extra: String = "") -> String {
            "<note><pitch><step>\(step)</step><octave>5</octave></pitch><duration>1</duration><voice>1</voice><type>quarter</type>\(extra)</note>"
        }
        func direction(_ type: String, staff: Bool = false) -> String {
            "<direction placement=\"below\"><direction-type>\(type)</direction-type></direction>"
        }
        let measure1 = "<attributes><divisions>1</divisions><key><fifths>0</fifths></key><time symbol=\"cut\"><beats>2</beats><beat-type>2</beat-type></time></attributes>"
            + direction("<words>Molto tranquillo</words>") + direction("<rehearsal>A</rehearsal>") + direction("<dynamics><mp/></dynamics>")
            + direction("<wedge type=\"crescendo\"/>")
            + note("C", "<notations><slur type=\"start\"/><articulations><staccato/><accent/></articulations></notations>")
            + note("D", "<notations><articulations><tenuto/><strong-accent/></articulations></notations>")
            + direction("<wedge type=\"stop\"/>")
            + note("E", "<notations><slur type=\"stop\"/><articulations><breath-mark/></articulations></notations>")
            + note("F", "<notations><fermata/><dynamics><sfz/></dynamics><articulations><caesura/></articulations></notations>")
        let measure2 = "<barline location=\"left\"><repeat direction=\"forward\"/></barline>"
            + "<direction><direction-type><metronome><beat-unit>half</beat-unit><per-minute>40</per-minute></metronome></direction-type><sound tempo=\"80\"/></direction>"
            + note("G") + note("A") + note("B") + note("C")
            + "<barline location=\"right\"><ending number=\"1\" type=\"stop\"/><repeat direction=\"backward\" times=\"3\"/></barline>"
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?><score-partwise><work><work-title>Work</work-title></work><movement-title>Movement</movement-title>
            <part-list><score-part id="P1"><part-name>Soprano</part-name></score-part></part-list>
            <part id="P1"><measure number="1">\(measure1)</measure><measure number="2"><barline location="left"><ending number="1" type="start"/></barline>\(measure2)</measure></part></score-partwise>
            """
        let score = try MusicXML.importScore(bytes: Array(xml.utf8), fileName: "marks.musicxml", options: ImportOptions(unfold: false)).score
        let marks = score.parts[0].notes.map(\.marks)
        #expect(marks[0].slurStart && marks[0].articulations == [.staccato, .accent] && marks[0].dynamic == .mp && marks[0].hairpin == .crescendo)
        // The hairpin's stop written before E: it reaches E.
        #expect(marks[1].articulations == [.tenuto, .marcato] && marks[1].hairpin == nil)
        #expect(marks[2].slurEnd && marks[2].breath == .breath && marks[2].hairpin == .end)
        #expect(marks[3].fermata && marks[3].dynamic == .sfz && marks[3].breath == .caesura)
        #expect(score.texts == [ScoreText(tick: 0, kind: .words, text: "Molto tranquillo"), ScoreText(tick: 0, kind: .rehearsal, text: "A")])
        #expect(score.meters == [MeterChange(measure: 1, meter: Meter(2, 2), symbol: .cut)])
        #expect(score.tempos.map(\.printed) == [false, true] && score.tempos.last?.tempo == Tempo(bpm: 80))
        #expect(score.barMarks == [BarMark(measure: 2, kind: .repeatStart), BarMark(measure: 2, kind: .repeatEnd(times: 3)),
                                   BarMark(measure: 2, kind: .ending(numbers: [1], measures: 1))])
        #expect(score.title == "Work" && score.subtitle == "Movement")
        // And back through the text format unchanged.
        #expect(try Acasong.parse(Acasong.serialize(score)) == score)
    }
}
