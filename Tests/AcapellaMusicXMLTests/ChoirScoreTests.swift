@testable import AcapellaMusicXML
import AcapellaScore
import Foundation
import Testing

/// The closed-score versions of three chorales, beside the open originals.
let closedScoreDirectory = musicXMLDirectory.deletingLastPathComponent().appendingPathComponent("musicxml-closed")

func importClosed(_ name: String, options: ImportOptions = ImportOptions()) throws -> ImportResult {
    let data = try Data(contentsOf: closedScoreDirectory.appendingPathComponent(name))
    return try MusicXML.importScore(bytes: [UInt8](data), fileName: name, options: options)
}

/// What a note is for the comparison of two readings: where, how long,
/// which pitch, whether tied on.
func timing(_ part: Part) -> [String] {
    part.notes.map { "\($0.startTick)+\($0.durationTicks) \($0.pitch?.midi ?? -1)\($0.tieToNext ? "~" : "")" }
}

/// A one-part score from measures of MusicXML `<note>`s (and backups); the
/// part name, staves and the measures' extra elements are the test's.
func choirXML(name: String = "Choir", staves: Int = 1, divisions: Int = 1, beats: Int = 4, measures: [String]) -> String {
    let clefs = staves == 2 ? "<clef number=\"1\"><sign>G</sign><line>2</line></clef><clef number=\"2\"><sign>F</sign><line>4</line></clef>"
        : "<clef><sign>G</sign><line>2</line></clef>"
    var text = """
        <score-partwise><part-list><score-part id="P1"><part-name>\(name)</part-name></score-part></part-list><part id="P1">
        """
    for (index, body) in measures.enumerated() {
        text += "<measure number=\"\(index + 1)\">"
        if index == 0 {
            text += "<attributes><divisions>\(divisions)</divisions><key><fifths>0</fifths></key><time><beats>\(beats)</beats><beat-type>4</beat-type></time>"
                + (staves > 1 ? "<staves>\(staves)</staves>" : "") + clefs + "</attributes>"
        }
        text += body + "</measure>\n"
    }
    return text + "</part></score-partwise>"
}

/// `<note>` shorthand: "C5 4 v1 s1" → pitch, duration, voice, staff; "R" a
/// rest; extra XML inside the note after the rest.
func n(_ pitch: String, _ duration: Int, voice: Int = 1, staff: Int = 1, chord: Bool = false, type: String? = nil, extra: String = "") -> String {
    var xml = "<note>" + (chord ? "<chord/>" : "")
    if pitch == "R" {
        xml += "<rest/>"
    } else {
        let step = pitch.prefix(1)
        let alter = pitch.contains("#") ? "<alter>1</alter>" : pitch.contains("b") && pitch.count > 2 ? "<alter>-1</alter>" : ""
        xml += "<pitch><step>\(step)</step>\(alter)<octave>\(pitch.last!)</octave></pitch>"
    }
    xml += "<duration>\(duration)</duration><voice>\(voice)</voice>" + (type.map { "<type>\($0)</type>" } ?? "") + "<staff>\(staff)</staff>" + extra + "</note>"
    return xml
}

func backup(_ duration: Int) -> String { "<backup><duration>\(duration)</duration></backup>" }

func importText(_ text: String, options: ImportOptions = ImportOptions()) throws -> ImportResult {
    try MusicXML.importScore(bytes: Array(text.utf8), fileName: "t.xml", options: options)
}

func pitches(_ part: Part) -> [String] { part.notes.map { $0.pitch?.description ?? "R" } }

@Suite struct ClosedScoreTests {
    static let pairs = [
        ("bwv26.6-closed-chords.musicxml", "bach_bwv26.6.mxl"),
        ("bwv40.8-closed.musicxml", "bach_bwv40.8.mxl"),
        ("bwv66.6-closed.musicxml", "bach_bwv66.6.mxl"),
    ]

    /// Each closed-score chorale (two staves, two voices each, or chords
    /// where the voices share a rhythm) imports into four parts equal note
    /// for note to the open-score original.
    @Test(arguments: pairs)
    func closedScoreEqualsOpenScore(closed: String, open: String) throws {
        let result = try importClosed(closed)
        let original = try importFile(open).score
        #expect(result.score.parts.map(\.name) == ["Choir 1", "Choir 2", "Choir 3", "Choir 4"])
        try #require(result.score.parts.count == 4)
        for (ours, theirs) in zip(result.score.parts, original.parts) {
            let (a, b) = (timing(ours), timing(theirs))
            #expect(a == b, "\(closed) \(ours.name) vs \(theirs.name): first difference at #\(zip(a, b).prefix { $0 == $1 }.count) of \(b.count)")
        }
        #expect(result.score.parts.map(\.effectiveClef) == [.treble, .treble, .bass, .bass])
        #expect(result.score.isValid)
        #expect(try Acasong.parse(Acasong.serialize(result.score)) == result.score)
    }

    @Test func reportSaysWhatWasSplit() throws {
        let chords = try importClosed("bwv26.6-closed-chords.musicxml").report.lines
        #expect(chords.contains("Choir: staff 1 → Choir 1, Choir 2; staff 2 → Choir 3, Choir 4 (chords split ×28)"))
        #expect(chords.contains("lyrics: Choir 2, Choir 3, Choir 4 sing the words written for Choir 1 (copied where the notes start together)"))
        let voices = try importClosed("bwv40.8-closed.musicxml").report.lines
        #expect(voices.contains("Choir: staff 1 → Choir 1, Choir 2; staff 2 → Choir 3, Choir 4"))
    }

    /// The words under the soprano are sung by all four where they move together.
    @Test func lowerVoicesSingTheWordsOfTheTop() throws {
        let score = try importClosed("bwv26.6-closed-chords.musicxml").score
        let soprano = score.parts[0].notes.compactMap(\.lyric?.text)
        let alto = score.parts[1].notes.compactMap(\.lyric?.text)
        #expect(soprano.prefix(3) == ["Ach", "wie", "flüch"])
        #expect(alto.prefix(3) == ["Ach", "wie", "flüch"])
        #expect(alto.count <= soprano.count && alto.count > soprano.count / 2)
    }

    @Test func partsSelectAmongTheSplitParts() throws {
        let score = try importClosed("bwv66.6-closed.musicxml", options: ImportOptions(partNames: ["choir 4", "Choir 1"])).score
        let original = try importFile("bach_bwv66.6.mxl").score
        #expect(score.parts.map(\.name) == ["Choir 4", "Choir 1"])
        #expect(timing(score.parts[0]) == timing(original.parts[3]))
    }

    @Test func noSplitKeepsTheTopLine() throws {
        let result = try importClosed("bwv40.8-closed.musicxml", options: ImportOptions(split: .never))
        #expect(result.score.parts.count == 1)
        #expect(timing(result.score.parts[0]) == timing(try importFile("bach_bwv40.8.mxl").score.parts[0]))
    }

    @Test(arguments: [
        ("Soprano Alto", 1, ["Soprano", "Alto"]),
        ("Tenor/Bass", 1, ["Tenor", "Bass"]),
        ("SATB", 2, ["S", "A", "T", "B"]),
        ("S A T B", 2, ["S", "A", "T", "B"]),
        ("Women", 1, ["Women 1", "Women 2"]),
        ("", 2, ["Choir 1", "Choir 2", "Choir 3", "Choir 4"]),
        ("Soprano", 1, ["Soprano 1", "Soprano 2"]),
    ])
    func linesAreNamedFromThePartName(name: String, staves: Int, expected: [String]) throws {
        var measure = n("E5", 4) + backup(4) + n("C5", 4, voice: 2)
        if staves == 2 { measure += backup(4) + n("G3", 4, voice: 5, staff: 2) + backup(4) + n("C3", 4, voice: 6, staff: 2) }
        let score = try importText(choirXML(name: name, staves: staves, measures: [measure, measure])).score
        #expect(score.parts.map(\.name) == expected)
    }

    /// Chords split by pitch; a single note in a chord-style staff (a
    /// unison) sounds in both voices; a voice that rests gets rests; a
    /// measure in chords and the next in two voices stay the same two parts.
    @Test func chordsUnisonsAndRests() throws {
        let chords = n("E5", 1) + n("C5", 1, chord: true) + n("D5", 1) + n("B4", 1, chord: true) + n("C5", 2)
        let voices = n("G5", 2) + n("F5", 2) + backup(4) + n("R", 2, voice: 2) + n("A4", 2, voice: 2)
        let score = try importText(choirXML(name: "Soprano Alto", measures: [chords, voices])).score
        #expect(score.parts.map(\.name) == ["Soprano", "Alto"])
        #expect(pitches(score.parts[0]) == ["E5", "D5", "C5", "G5", "F5"])
        #expect(pitches(score.parts[1]) == ["C5", "B4", "C5", "R", "A4"])
    }

    /// Voices numbered against their pitch (voice 2 above voice 1) still
    /// come out top to bottom.
    @Test func linesFollowPitchNotVoiceNumbers() throws {
        let measure = n("C4", 4, voice: 1) + backup(4) + n("C5", 4, voice: 2)
        let score = try importText(choirXML(name: "Soprano Alto", measures: [measure, measure])).score
        #expect(pitches(score.parts[0]) == ["C5", "C5"])
        #expect(pitches(score.parts[1]) == ["C4", "C4"])
    }

    @Test func pianoStaysOnePartUnlessSplit() throws {
        let measure = n("E5", 4) + n("C5", 4, chord: true) + n("G4", 4, chord: true) + backup(4) + n("C3", 4, staff: 2) + n("G3", 4, staff: 2, chord: true)
        let text = choirXML(name: "Piano", staves: 2, measures: [measure])
        let auto = try importText(text)
        #expect(auto.score.parts.map(\.name) == ["Piano"])
        #expect(pitches(auto.score.parts[0]) == ["E5"])
        #expect(auto.report.lines.contains("part 'Piano' (2 staves, an accompaniment): kept as one part, the top notes; import with --split for one part per voice"))
        let split = try importText(text, options: ImportOptions(split: .always))
        #expect(split.score.parts.map(\.name) == ["Piano 1", "Piano 2", "Piano 3", "Piano 4", "Piano 5"])
        #expect(split.score.parts.map { pitches($0)[0] } == ["E5", "C5", "G4", "G3", "C3"])
    }

    /// A melody with one passing chord is one part (divisi), not two.
    @Test func briefDivisiStaysOnePart() throws {
        let plain = n("C5", 4)
        let chord = n("E5", 4) + n("C5", 4, chord: true)
        let result = try importText(choirXML(name: "Soprano", measures: [plain, plain, plain, plain, plain, chord]))
        #expect(result.score.parts.map(\.name) == ["Soprano"])
        #expect(pitches(result.score.parts[0]).last == "E5")
        #expect(result.report.lines.contains("chords: kept the top note ×1, first at measure 6"))
    }
}

@Suite struct InexactFileTests {
    /// Two parts (voice, trumpet) from measures of notes each.
    static func twoParts(_ voice: [String], _ trumpet: [String]) -> String {
        func part(_ id: String, _ measures: [String]) -> String {
            "<part id=\"\(id)\">" + measures.enumerated().map { index, body in
                "<measure number=\"\(index + 1)\">" + (index == 0 ? "<attributes><divisions>1</divisions><time><beats>4</beats><beat-type>4</beat-type></time></attributes>" : "") + body + "</measure>"
            }.joined() + "</part>"
        }
        return "<score-partwise><part-list><score-part id=\"P1\"><part-name>Soprano</part-name></score-part><score-part id=\"P2\"><part-name>Trumpet</part-name></score-part></part-list>"
            + part("P1", voice) + part("P2", trumpet) + "</score-partwise>"
    }
    static func forward(_ beats: Int) -> String { "<forward><duration>\(beats)</duration></forward>" }

    /// A pickup in the middle of a piece, written as one beat in the voice
    /// and padded to a full measure with hidden forwards in a resting part:
    /// the measure is one beat long (the voice sings on, no gap).
    @Test func hiddenPaddingDoesNotLengthenAPickup() throws {
        let full = n("C5", 4)
        let score = try importText(Self.twoParts([full, n("D5", 1), full], [n("R", 4), n("R", 1) + Self.forward(3), n("R", 4)])).score
        #expect(score.meters.map(\.measure) == [1, 2, 3])
        #expect(score.meters[1].meter == Meter(1, 4))
        #expect(score.parts[0].notes.map(\.startTick) == [0, 3840, 4800])
    }

    /// Every part ends its last measure early and pads it with a hidden
    /// `<forward>` (as exporters write a chorale's last measure after a
    /// pickup): the measure is as long as its notes, its meter unprinted —
    /// no rest is invented. In any other measure the padding stands.
    @Test func paddingEverywhereInTheLastMeasureIsNoRest() throws {
        let full = n("C5", 4)
        let last = n("C5", 3) + Self.forward(1)
        let score = try importText(Self.twoParts([full, last], [full, last])).score
        #expect(score.meters == [MeterChange(measure: 1, meter: Meter(4, 4)), MeterChange(measure: 2, meter: Meter(3, 4), printed: false)])
        #expect(score.parts.allSatisfy { $0.notes.map(\.pitch?.midi) == [72, 72] })
        let middle = try importText(Self.twoParts([full, last, full], [full, last, full])).score
        #expect(middle.meters == [MeterChange(measure: 1, meter: Meter(4, 4))])
        #expect(middle.parts[0].notes.map(\.pitch?.midi) == [72, 72, nil, 72])
    }

    /// A triplet of eighths written at 256 divisions as 85, 85, 86: exact
    /// ticks from the written type and the tuplet ratio, reported.
    @Test func roundedTupletDurationsAreMadeExact() throws {
        let triplet = "<time-modification><actual-notes>3</actual-notes><normal-notes>2</normal-notes></time-modification>"
        let start = "<notations><tuplet type=\"start\"/></notations>"
        let measure = n("C5", 85, type: "eighth", extra: triplet + start) + n("D5", 85, type: "eighth", extra: triplet) + n("E5", 86, type: "eighth", extra: triplet)
            + n("F5", 768, type: "half", extra: "<dot/>")
        let result = try importText(choirXML(divisions: 256, measures: [measure]))
        let notes = result.score.parts[0].notes
        #expect(notes.map(\.durationTicks) == [320, 320, 320, 2880])
        #expect(notes.prefix(3).allSatisfy { $0.tuplet == Tuplet(id: 1, actual: 3, normal: 2) })
        #expect(result.report.lines.contains("durations rounded by the notation program read exactly from the written note values (tuplets) ×3, first at measure 1"))
        #expect(!result.report.lines.contains { $0.contains("rounded") && $0.contains("32nd") })
    }

    /// A duration far from its written type is the duration (a whole-measure
    /// rest typed "whole" in 3/4 stays three beats).
    @Test func writtenTypeDoesNotOverrideRealDurations() throws {
        let result = try importText(choirXML(beats: 3, measures: [n("R", 3, type: "whole"), n("C5", 3, type: "half", extra: "<dot/>")]))
        #expect(result.score.parts[0].notes.map(\.durationTicks) == [2880, 2880])
    }

    static let tieStart = "<tie type=\"start\"/><notations><tied type=\"start\"/></notations>"
    static let tieStop = "<tie type=\"stop\"/><notations><tied type=\"stop\"/></notations>"

    @Test func tieStartWithoutStopJoinsTheSamePitch() throws {
        let result = try importText(choirXML(measures: [n("C5", 2) + n("C5", 2, extra: Self.tieStart), n("C5", 4)]))
        let part = result.score.parts[0]
        #expect(part.notes.map(\.tieToNext) == [false, true, false])
        #expect(part.notes.indices.filter { part.isAttack(at: $0) } == [0, 1])
        #expect(result.report.lines == ["no tempo marking: 120 BPM assumed (played, not printed)", "ties with no written end joined to the next note of the same pitch ×1, first at measure 1"])
    }

    @Test func tieToAnotherPitchIsRemovedAndStopWithoutStartIgnored() throws {
        let result = try importText(choirXML(measures: [n("C5", 2, extra: Self.tieStart) + n("D5", 2, extra: Self.tieStop), n("D5", 4, extra: Self.tieStop)]))
        let part = result.score.parts[0]
        #expect(part.notes.map(\.tieToNext) == [false, false, false])
        #expect(part.notes.indices.filter { part.isAttack(at: $0) } == [0, 1, 2])
        #expect(result.report.lines.contains("ties to a different note (or to nothing) removed ×1, first at measure 1"))
        #expect(result.report.lines.contains("tie ends with no tie start ignored ×2, first at measure 1"))
    }
}

@Suite struct VerseTests {
    @Test func everyVerseIsKept() throws {
        let score = try importFile("demos_multiple-verses.xml").score
        #expect(score.verseCount == 5)
        let note = score.parts[0].notes.first { $0.hasLyric }!
        #expect((1...5).compactMap { note.lyric(verse: $0)?.text }.count == 5)
        let text = Acasong.serialize(score)
        #expect(text.contains("\nlyrics[5] "))
        #expect(try Acasong.parse(text) == score)
    }

    /// Lyric numbers become verses in numeric order, whatever order the
    /// file lists them in and whatever numbers it starts from.
    @Test func versesAreNumberedInOrder() throws {
        func lyric(_ number: String, _ text: String) -> String { "<lyric number=\"\(number)\"><syllabic>single</syllabic><text>\(text)</text></lyric>" }
        let measure = n("C5", 2, extra: lyric("10", "ten") + lyric("2", "two")) + n("D5", 2, extra: lyric("2", "deux"))
        let score = try importText(choirXML(measures: [measure])).score
        let notes = score.parts[0].notes
        #expect(notes[0].lyric(verse: 1)?.text == "two" && notes[0].lyric(verse: 2)?.text == "ten")
        #expect(notes[1].lyric(verse: 1)?.text == "deux" && notes[1].lyric(verse: 2) == nil)
    }
}

@Suite struct RepeatTests {
    static func measures(_ bodies: [(marks: String, pitch: String)]) -> [String] {
        bodies.map { $0.marks + n($0.pitch, 4) }
    }

    static let forward = "<barline location=\"left\"><repeat direction=\"forward\"/></barline>"
    static func backward(times: Int? = nil) -> String {
        "<barline location=\"right\"><repeat direction=\"backward\"\(times.map { " times=\"\($0)\"" } ?? "")/></barline>"
    }
    static func ending(_ number: String, _ type: String) -> String {
        "<barline location=\"\(type == "start" ? "left" : "right")\"><ending number=\"\(number)\" type=\"\(type)\"/></barline>"
    }

    func sung(_ text: String, unfold: Bool? = nil) throws -> (pitches: [String], written: [Int], report: [String]) {
        let result = try importText(text, options: ImportOptions(unfold: unfold))
        return (pitches(result.score.parts[0]), result.score.writtenMeasures, result.report.lines)
    }

    @Test func repeatWithVoltas() throws {
        // A |: B [1. C :| [2. D | E
        let text = choirXML(measures: [
            n("A4", 4), Self.forward + n("B4", 4), Self.ending("1", "start") + n("C5", 4) + Self.ending("1", "stop") + Self.backward(),
            Self.ending("2", "start") + n("D5", 4) + Self.ending("2", "discontinue"), n("E5", 4),
        ])
        let result = try sung(text)
        #expect(result.pitches == ["A4", "B4", "C5", "B4", "D5", "E5"])
        #expect(result.written == [1, 2, 3, 2, 4, 5])
        #expect(result.report.contains("repeats written out in singing order: 5 written measures sung as 6 (1 repeat); import with --no-unfold to keep them as written"))
        let asWritten = try sung(text, unfold: false)
        #expect(asWritten.pitches == ["A4", "B4", "C5", "D5", "E5"])
        #expect(asWritten.written == [])
    }

    @Test func repeatTimesAndFromTheStart() throws {
        // No forward repeat: back to the start; times="3".
        let text = choirXML(measures: [n("C5", 4), n("D5", 4) + Self.backward(times: 3), n("E5", 4)])
        #expect(try sung(text).pitches == ["C5", "D5", "C5", "D5", "C5", "D5", "E5"])
    }

    @Test func daCapoAlFine() throws {
        let fine = "<direction><direction-type><words>Fine</words></direction-type><sound fine=\"yes\"/></direction>"
        let dc = "<direction><direction-type><words>D.C. al Fine</words></direction-type><sound dacapo=\"yes\"/></direction>"
        let text = choirXML(measures: [n("C5", 4), fine + n("D5", 4), n("E5", 4) + dc])
        let result = try sung(text)
        #expect(result.pitches == ["C5", "D5", "E5", "C5", "D5"])
        #expect(result.written == [1, 2, 3, 1, 2])
    }

    @Test func dalSegnoAlCoda() throws {
        let segno = "<direction><direction-type><segno/></direction-type><sound segno=\"s\"/></direction>"
        let toCoda = "<direction><direction-type><words>To Coda</words></direction-type><sound tocoda=\"c\"/></direction>"
        let ds = "<direction><direction-type><words>D.S. al Coda</words></direction-type><sound dalsegno=\"s\"/></direction>"
        let coda = "<direction><direction-type><coda/></direction-type><sound coda=\"c\"/></direction>"
        let text = choirXML(measures: [n("C5", 4), segno + n("D5", 4), toCoda + n("E5", 4), n("F5", 4) + ds, coda + n("G5", 4)])
        #expect(try sung(text).pitches == ["C5", "D5", "E5", "F5", "D5", "E5", "G5"])
    }

    /// Each pass of a repeated passage sings its own line of words; after
    /// the repeat, the first line again. The unfolded song has one verse.
    @Test func eachPassSingsItsLine() throws {
        func lyric(_ number: Int, _ text: String) -> String { "<lyric number=\"\(number)\"><syllabic>single</syllabic><text>\(text)</text></lyric>" }
        let text = choirXML(measures: [
            Self.forward + n("C5", 4, extra: lyric(1, "one") + lyric(2, "two")),
            n("D5", 4, extra: lyric(1, "a") + lyric(2, "b")) + Self.backward(),
            n("E5", 4, extra: lyric(1, "end")),
        ])
        let score = try importText(text).score
        #expect(score.parts[0].notes.compactMap(\.lyric?.text) == ["one", "a", "two", "b", "end"])
        #expect(score.verseCount == 1)
        let asWritten = try importText(text, options: ImportOptions(unfold: false)).score
        #expect(asWritten.verseCount == 2)
    }

    /// The chorale with five repeats unfolds as music21's expandRepeats
    /// does: same measures (written numbers), same notes in every part.
    @Test func bachRepeatsUnfoldAsMusic21Does() throws {
        let golden = try JSONDecoder().decode(GoldenAttacks.self, from: Data(contentsOf: testsDirectory.appendingPathComponent("Golden/bach_bwv328.mxl.unfolded.attacks.json")))
        let score = try importFile("bach_bwv328.mxl", options: ImportOptions(split: .never)).score
        #expect(score.writtenMeasures.count == 80)
        #expect(score.writtenMeasures.prefix(16) == [0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 4, 5, 6, 7, 8, 8])
        try #require(score.parts.count == golden.parts.count)
        for (part, expected) in zip(score.parts, golden.parts) {
            let ours = attacks(part)
            #expect(ours == expected.attacks, "\(part.name): first difference at #\(zip(ours, expected.attacks).prefix { $0 == $1 }.count)")
        }
        #expect(try Acasong.parse(Acasong.serialize(score)) == score)
    }

    /// Marks that would loop forever are kept as written, reported.
    @Test func repeatsThatNeverEndAreKeptAsWritten() throws {
        #expect(Unfolder.order([RepeatMarks(backward: 16)]) != nil)
        var loop = [RepeatMarks](repeating: RepeatMarks(), count: 3)
        loop[0].segno = true
        loop[2].dalSegno = true
        loop[1].daCapo = true
        let order = Unfolder.order(loop)
        #expect(order.map { $0.count } ?? 0 <= Unfolder.maximumMeasures)
    }
}
