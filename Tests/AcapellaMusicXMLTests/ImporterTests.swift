@testable import AcapellaMusicXML
import AcapellaScore
import Foundation
import Testing

let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
/// The shared test data beside the repository (CI has it at the same place).
let musicXMLDirectory = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("shared/data/musicxml")

func importFile(_ name: String, options: ImportOptions = ImportOptions()) throws -> ImportResult {
    let data = try Data(contentsOf: musicXMLDirectory.appendingPathComponent(name))
    return try MusicXML.importScore(bytes: [UInt8](data), fileName: name, options: options)
}

/// Attacks as the comparison with music21 counts them: onset tick and MIDI
/// pitch of every sounding note that does not continue a tie.
func attacks(_ part: Part) -> [[Int]] {
    part.notes.indices.filter { part.isAttack(at: $0) }.map { [part.notes[$0].startTick, part.notes[$0].pitch!.midi] }
}

struct GoldenAttacks: Decodable {
    struct PartAttacks: Decodable {
        var name: String
        var attacks: [[Int]]
    }
    var file: String
    var reader: String
    /// False where music21's own parts end at different times (it lays out
    /// each part alone, so a measure the parts disagree on makes them drift;
    /// the importer keeps barlines aligned): only pitches compare there.
    var partsEndTogether: Bool
    var parts: [PartAttacks]
}

@Suite struct Music21AgreementTests {
    static let files: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: testsDirectory.appendingPathComponent("Golden").path)) ?? []
        return names.filter { $0.hasSuffix(".attacks.json") && !$0.hasSuffix(".unfolded.attacks.json") }.map { String($0.dropLast(".attacks.json".count)) }.sorted()
    }()

    @Test func everySharedScoreHasAGolden() {
        let scores = (try? FileManager.default.contentsOfDirectory(atPath: musicXMLDirectory.path)) ?? []
        #expect(!scores.isEmpty, "../shared/data/musicxml is missing")
        #expect(Set(scores) == Set(Self.files), "regenerate goldens with Tools/compare-music21.py --write-golden")
    }

    /// Note attacks per part (onset, MIDI pitch; ties merged, top note of
    /// chords, voice 1) of the score as written (one part per MusicXML
    /// part, repeats not unfolded) equal what music21 read from the same file.
    @Test(arguments: files)
    func attacksMatchMusic21(file: String) throws {
        let golden = try JSONDecoder().decode(
            GoldenAttacks.self, from: Data(contentsOf: testsDirectory.appendingPathComponent("Golden/\(file).attacks.json")))
        let score = try importFile(file, options: ImportOptions(split: .never, unfold: false)).score
        try #require(score.parts.count == golden.parts.count, "\(file): part count")
        for (part, expected) in zip(score.parts, golden.parts) {
            let ours = attacks(part)
            if !golden.partsEndTogether {
                #expect(ours.map { $0[1] } == expected.attacks.map { $0[1] }, "\(file) part \(part.name): pitch sequence")
            } else {
                #expect(ours == expected.attacks, "\(file) part \(part.name): first difference at #\(zip(ours, expected.attacks).prefix { $0 == $1 }.count)")
            }
        }
    }

    @Test(arguments: files)
    func importIsValidAndRoundTrips(file: String) throws {
        let score = try importFile(file).score
        #expect(score.validate().isEmpty)
        let text = Acasong.serialize(score)
        #expect(try Acasong.parse(text) == score)
    }
}

@Suite struct ImportDetailTests {
    @Test func bachChoraleWithPickup() throws {
        let result = try importFile("bach_bwv66.6.mxl")
        let score = result.score
        #expect(score.parts.map(\.name) == ["Soprano", "Alto", "Tenor", "Bass"])
        #expect(score.parts.map(\.clef) == [.treble, .treble, .bass, .bass])  // this edition writes the tenor in bass clef
        #expect(score.pickupTicks == 960)
        #expect(score.keys == [KeyChange(measure: 1, key: Key(fifths: 3, mode: .minor))])
        // Played at 96 (<sound tempo>), printed without a metronome mark;
        // common time as C; the last measure the three beats the file
        // writes (its hidden padding is no rest), its meter not printed.
        #expect(score.tempos == [TempoChange(tick: 0, tempo: Tempo(bpm: 96), printed: false)])
        #expect(score.meters == [MeterChange(measure: 1, meter: Meter(4, 4), symbol: .common), MeterChange(measure: 9, meter: Meter(3, 4), printed: false)])
        #expect(score.parts.allSatisfy { $0.notes.last?.pitch != nil })
        #expect(result.report.lines == ["measures whose length differs from their time signature written as time changes ×1, first at measure 9"])
        // Its six fermatas, on the soprano's notes that carry them.
        let fermatas = score.parts[0].notes.enumerated().filter(\.element.marks.fermata).map { score.meterMap.position(ofTick: $0.element.startTick).measure }
        #expect(fermatas == [1, 2, 3, 5, 7, 9])
        // (This edition writes them over the soprano only.)
        #expect(score.parts.map { $0.notes.filter(\.marks.fermata).count } == [6, 0, 0, 0])
        // The soprano's pickup: C#5 B4 eighths.
        #expect(score.parts[0].notes.prefix(2).map(\.pitch) == [Pitch(step: .c, alter: 1, octave: 5), Pitch(step: .b, octave: 4)])
    }

    @Test func reportsReadLikeAChoirDirectorWouldWant() throws {
        let twoVoices = try importFile("demos_two-voices.xml").report.lines
        #expect(twoVoices.contains("part 'Piano' (one staff, an accompaniment): kept as one part, the top notes; import with --split for one part per voice"))
        #expect(twoVoices.contains("lower voices dropped in part 'Piano' ×16, first at measure 1"))
        #expect(try importFile("demos_voices_with_chords.xml").report.lines.contains(
            "part 'Part 1' (one staff, chords of more than two notes and no words: read as an accompaniment): kept as one part, the top notes; import with --split for one part per voice"))
        let aloha = try importFile("liliuokalani_aloha_oe.mxl").report.lines
        #expect(aloha.contains("part 'Tenor' (one staff, mostly one line, brief divisi): kept as one part, the top notes; import with --split for one part per voice"))
        #expect(aloha.contains("chords: kept the top note ×44, first at measure 15"))
        #expect(try importFile("bach_bwv328.mxl").report.lines.contains(
            "repeats written out in singing order: 57 written measures sung as 80 (5 repeats); import with --no-unfold to keep them as written"))
        #expect(try importFile("bach_bwv328.mxl", options: ImportOptions(unfold: false)).report.lines.contains("repeats kept as written, a single pass (--no-unfold)"))
        #expect(try importFile("demos_multiple-verses.xml").report.lines == ["no tempo marking: 120 BPM assumed (played, not printed)"])
        let beach = try importFile("beach_prayer_of_a_tired_child.musicxml").report.lines
        #expect(beach.contains("part 'Piano' (2 staves, an accompaniment): kept as one part, the top notes; import with --split for one part per voice"))
        #expect(beach.contains("notes on lower staves dropped in part 'Piano' ×306, first at measure 1"))
        #expect(!beach.contains { $0.contains("dynamics") || $0.contains("hairpins") || $0.contains("text directions") })
        let monteverdi = try importFile("monteverdi_madrigal.3.2.mxl").report.lines
        #expect(monteverdi.contains("part 'Quinto': overfull measures cut at the barline ×7, first at measure 1"))
        #expect(monteverdi.contains("ties with no written end joined to the next note of the same pitch ×43, first at measure 11"))
    }

    @Test func nestedTupletsFlattenIntoExactGroups() throws {
        let notes = try importFile("demos_nested_tuplet_finale_test.xml").score.parts[0].notes
        #expect(notes.prefix(4).map { $0.tuplet.map { "\($0.actual):\($0.normal)" } } == ["3:2", "9:4", "9:4", "9:4"])
        #expect(notes.prefix(5).map(\.startTick) == [0, 320, 533, 746, 960])
    }

    @Test func utf16ScoreImports() throws {
        let score = try importFile("monteverdi_madrigal.3.2.mxl").score
        #expect(score.parts.map(\.name) == ["Canto", "Quinto", "Alto", "Tenor", "Basso"])
        #expect(score.meters.first == MeterChange(measure: 1, meter: Meter(4, 4), symbol: .common))
    }

    @Test func lyricsKeepSyllabicAndMelismas() throws {
        let score = try importFile("bach_bwv26.6.mxl").score
        #expect(score.parts[0].notes.contains { $0.lyric != nil } || score.parts.allSatisfy { $0.notes.allSatisfy { $0.lyric == nil } })
        let lift = try importFile("johnson_j_r_lift_every_voice.mxl").score
        let syllabics = lift.parts[0].syllabics().compactMap { $0 }
        #expect(syllabics.contains(.begin) && syllabics.contains(.end) && syllabics.contains(.single))
        let words = lift.parts[0].notes.compactMap(\.lyric?.text).prefix(4)
        #expect(words == ["Lift", "ev", "'ry", "voice"])
    }

    @Test func partsCanBeChosen() throws {
        let score = try importFile("liliuokalani_aloha_oe.mxl", options: ImportOptions(partNames: ["bass", "Soprano"])).score
        #expect(score.parts.map(\.name) == ["Bass", "Soprano"])
        #expect(throws: ImportError.self) { try importFile("bach_bwv66.6.mxl", options: ImportOptions(partNames: ["Descant"])) }
        do {
            _ = try importFile("bach_bwv66.6.mxl", options: ImportOptions(partNames: ["Descant"]))
        } catch let error as ImportError {
            #expect(error.description == "bach_bwv66.6.mxl/bwv66.6.xml: error: no part named 'Descant'; the parts are: Soprano, Alto, Tenor, Bass")
        }
    }
}
