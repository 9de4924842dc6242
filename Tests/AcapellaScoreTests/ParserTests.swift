@testable import AcapellaScore
import Testing

@Suite struct ParserTests {
    @Test func everyFormParses() throws {
        let score = try Acasong.parse(fixture("all-forms.acasong"), file: "all-forms.acasong")
        #expect(score.title == "All The Forms")
        #expect(score.composer == "Anonymous")
        #expect(score.arranger == "Test Suite")
        #expect(score.source == "https://example.invalid/forms.xml")  // '//' inside a URL is not a comment
        #expect(score.license == "CC0")
        #expect(score.tags == ["demo", "hard", "3 voices"])
        #expect(score.meters == [MeterChange(measure: 1, meter: Meter(3, 4)), MeterChange(measure: 4, meter: Meter(6, 8))])
        #expect(score.keys == [KeyChange(measure: 1, key: Key(fifths: -3, mode: .major)), KeyChange(measure: 5, key: Key(fifths: -3, mode: .minor))])
        #expect(score.pickupTicks == 960)
        // tempo@3 is measure 3's downbeat: pickup + 2 measures of 3/4.
        // tempo@5+480: measure 4 is 6/8 (2880 ticks), so measure 5 starts at 960 + 3·2880 + 2880.
        #expect(score.tempos == [
            TempoChange(tick: 0, tempo: Tempo(milliBPM: 72_500)),
            TempoChange(tick: 960 + 2 * 2880, tempo: Tempo(bpm: 92)),
            TempoChange(tick: 960 + 4 * 2880 + 480, tempo: Tempo(bpm: 60)),
        ])
        #expect(score.parts.map(\.name) == ["Tenor Two", "Bass", "Alto"])
        #expect(score.parts.map(\.shortName) == ["T2", nil, nil])
        #expect(score.parts.map(\.clef) == [.treble8vb, nil, .alto])
        #expect(score.parts[1].effectiveClef == .bass)

        let tenor = score.parts[0].notes
        #expect(tenor[0] == NoteEvent(startTick: 0, durationTicks: 960, value: NoteValue(4), pitch: Pitch(step: .b, alter: -1, octave: 3),
                                      lyric: Lyric("Gló", continuesWord: true)))
        #expect(tenor[1].value == NoteValue(4, dots: 1) && tenor[1].durationTicks == 1440)
        // 3(Ab4 8 G4 8 F4 8): three eighths in the time of two.
        let triplet = tenor[4...6]
        #expect(triplet.map(\.durationTicks) == [320, 320, 320])
        #expect(triplet.allSatisfy { $0.tuplet == Tuplet(id: 1, actual: 3, normal: 2) })
        #expect(tenor[7].startTick == 960 + 2880 + 960)
        // Rest, dotted eighth, sixteenth.
        #expect(tenor[9].isRest && tenor[9].value == NoteValue(8, dots: 1) && tenor[9].durationTicks == 720)
        #expect(tenor[10].value == NoteValue(16))
        // 5:4( five sixteenths ): 192 ticks each.
        let quintuplet = tenor[14...18]
        #expect(quintuplet.map(\.durationTicks) == [192, 192, 192, 192, 192])
        #expect(quintuplet.allSatisfy { $0.tuplet == Tuplet(id: 2, actual: 5, normal: 4) })
        // Tie across the dotted quarters of measure 5.
        #expect(tenor[21].tieToNext && tenor[21].pitch == tenor[22].pitch && !tenor[22].tieToNext)
        #expect(tenor[22].lyric == nil)  // a tied-over note takes no syllable
        // Thirty-seconds.
        #expect(tenor[23].value == NoteValue(32) && tenor[23].durationTicks == 120)
        // Double-dotted quarter.
        #expect(tenor[33].value == NoteValue(4, dots: 2) && tenor[33].durationTicks == 1680)
        #expect(tenor[34].pitch == Pitch(step: .f, alter: 1, octave: 4))

        // Lyrics: '_' skips a note; the second line continues where the first stopped.
        let sung = tenor.enumerated().filter { $0.element.pitch != nil && ($0.offset == 0 || !tenor[$0.offset - 1].tieToNext) }.map(\.element)
        #expect(sung[5].lyric == Lyric("cel", continuesWord: true))
        #expect(sung[6].lyric == nil)
        #expect(sung[7].lyric == Lyric("sis"))
        #expect(sung[12].lyric == Lyric("na,"))
        #expect(sung[13..<23].allSatisfy { $0.lyric == nil })
        #expect(sung[23].lyric == Lyric("sing!"))
        #expect(sung[24].lyric == Lyric("a", continuesWord: true))
        #expect(sung[25].lyric == Lyric("men"))
        #expect(Syllabic(lyric: sung[25].lyric!, previousContinues: true) == .end)
        let syllabics = score.parts[0].syllabics().compactMap { $0 }
        #expect(syllabics.prefix(9) == [.begin, .middle, .end, .single, .begin, .middle, .end, .begin, .end])
    }

    /// The SPEC's example uses every form, but as a whole it is not a valid
    /// song: with `pickup: 1/4` its first bar holds four quarters, and
    /// `tempo@17` is past its three measures. Strict validation says so.
    @Test func specExampleIsRejectedWhereItIsWrong() throws {
        let text = try fixture("spec-example.acasong")
        #expect(throws: ScoreErrors.self) { try Acasong.parse(text) }
        do {
            _ = try Acasong.parse(text, file: "spec.acasong")
        } catch {
            #expect(error.errors.map(\.description) == [
                "spec.acasong:13:24: error: barline check failed: measures 0–1 hold 4/4 but should hold 5/4 (measure 0 is the 1/4 pickup) (measure 1)",
                "spec.acasong:16:24: error: barline check failed: measures 0–1 hold 4/4 but should hold 5/4 (measure 0 is the 1/4 pickup) (measure 1)",
            ])
        }
        // Without the pickup line, the notes are fine and the tempo past the end is the error.
        let noPickup = text.replacingOccurrences(of: "pickup: 1/4\n", with: "")
        do {
            _ = try Acasong.parse(noPickup, file: "spec.acasong")
            Issue.record("tempo@17 in a 3-measure song was accepted")
        } catch {
            #expect(error.errors.map(\.description) == [
                "spec.acasong:9:1: error: tempo change is past the end of the music (measure 17)",
            ])
        }
        // And without both, the SPEC's song is valid and means what it says.
        let fixed = noPickup.replacingOccurrences(of: "tempo@17: 92          // measure 17\n", with: "tempo@3: 92\n")
        let score = try Acasong.parse(fixed)
        #expect(score.parts[1].notes[8].tuplet == Tuplet(id: 1, actual: 3, normal: 2))
        #expect(score.parts[0].notes[7].tieToNext)
        #expect(score.parts[0].notes.compactMap(\.lyric?.text) == ["A", "ma", "zing", "grace,", "how", "sweet", "the", "sound"])
    }

    @Test(arguments: [
        ("", "x:1:1: error: empty file; expected 'acasong 1' on the first line"),
        ("acasong 2\n", "x:1:1: error: unsupported format version 'acasong 2'; this build reads 'acasong 1'"),
        ("title: x\n", "x:1:1: error: expected 'acasong 1' on the first line"),
        ("acasong 1\nC4 4\n", "x:2:1: error: expected a header line ('title: …') or 'part NAME'; notes must follow a 'part' line"),
        ("acasong 1\ncolour: red\npart A\nC4 1\n", "x:2:1: error: unknown header 'colour'; expected title, subtitle, composer, arranger, source, license, tags, time, key, tempo, pickup, written, text, rehearsal, repeat, ending or sign"),
        ("acasong 1\ntime: 4/5\npart A\nC4 1\n", "x:2:7: error: expected a time signature like 4/4, 3/4 or 6/8, found '4/5'"),
        ("acasong 1\nkey: H major\npart A\nC4 1\n", "x:2:6: error: expected a key like 'G major', 'F# minor' or 'Bb major', found 'H major'"),
        ("acasong 1\ntempo: fast\npart A\nC4 1\n", "x:2:8: error: expected a tempo in quarter notes per minute between 1 and 999.999 (and 'unprinted' if the score does not print it), found 'fast'"),
        ("acasong 1\ntitle: a\ntitle: b\npart A\nC4 1\n", "x:3:1: error: 'title' is given twice"),
        ("acasong 1\npart A\nC4 1\ntempo: 90\n", "x:4:1: error: header line 'tempo' must come before the first 'part' line"),
        ("acasong 1\npart A\nC4 3\n", "x:3:4: error: expected a duration after 'C4': 1, 2, 4, 8, 16 or 32, then dots '.' and a tie '~' if any; found '3' (measure 1)"),
        ("acasong 1\npart A\nC4\n", "x:3:1: error: expected a duration after 'C4': 1, 2, 4, 8, 16 or 32, then dots '.' and a tie '~' if any; found nothing (measure 1)"),
        ("acasong 1\npart A\nC4 2 3(C4 8 D4 8 E4 8 3(F4 8) G4 4\n", "x:3:23: error: nested tuplets are not supported; close the first group with ')' before opening another (measure 1)"),
        ("acasong 1\npart A\nC4 2 3(C4 8 D4 8\n", "x:3:6: error: tuplet opened here is never closed with ')' (measure 1)"),
        ("acasong 1\npart A\nC4 2 3(C4 8 | D4 8 E4 8) C4 4\n", "x:3:13: error: a barline cannot stand inside a tuplet; close the group with ')' first (measure 1)"),
        ("acasong 1\npart A\nC4 2 40:3(C4 8) C4 4\n", "x:3:6: error: unsupported tuplet '40:3('; write 3( … ) or N:M( … ) with N and M from 1 to 32 (measure 1)"),
        ("acasong 1\npart A\nC4 1 )\n", "x:3:6: error: ')' closes no tuplet (measure 2)"),
        ("acasong 1\npart A\nR 4~ R 2.\n", "x:3:1: error: a rest cannot be tied (measure 1)"),
        ("acasong 1\npart A\nC4 1~\n", "x:3:1: error: the last note of part 'A' is tied to nothing (measure 1)"),
        ("acasong 1\npart A\nG9 1 | G#9 1\n", "x:3:8: error: pitch G#9 is outside the MIDI range C-1…G9 (measure 2)"),
        ("acasong 1\npart A\nC4 1\npart A\nC4 1\n", "x:4:1: error: there are two parts named 'A'"),
        ("acasong 1\npart A\nC4 1\npart B\nC4 1 | D4 1\n", "x:3:1: error: part 'A' ends after measure 1 but part 'B' runs to measure 2 (measure 1)"),
        ("acasong 1\npart A\nC4 1\nlyrics A: la la\n", "x:4:14: error: more syllables than sung notes in part 'A'"),
        ("acasong 1\npart A\nR 1\nlyrics A: la\n", "x:4:11: error: more syllables than sung notes in part 'A'"),
        ("acasong 1\npart A (a\nC4 1\n", "x:2:8: error: short name opened with '(' is not closed with ')'"),
        ("acasong 1\npart [bass]\nC4 1\n", "x:2:6: error: expected a part name after 'part', like 'part Soprano [treble]'"),
        ("acasong 1\npickup: 1/1\npart A\nC4 1\n", "x:2:1: error: a pickup must be shorter than the first measure (4/4)"),
        ("acasong 1\ntime@3+1: 3/4\npart A\nC4 1\n", "x:2:1: error: time changes at the start of a measure; remove '+1'"),
        ("acasong 1\ntempo@0+480: 90\npart A\nC4 1\n", "x:2:1: error: tempo@0+… needs a pickup; measure 0 is the pickup"),
        ("acasong 1\ntime@9: 3/4\npart A\nC4 1\n", "x:2:1: error: time signature at measure 9 is past the last measure (1)"),
        ("acasong 1\npart A\nC4 2. D4 2\n", "x:3:7: error: note crosses the barline into measure 2; split it at the barline and tie with ~ (measure 1)"),
        ("acasong 1\ntempo@0: 90\npart A\nC4 1\n", "x:2:1: error: tempo@0 needs a pickup; measure 0 is the pickup (the opening tempo is 'tempo:')"),
        ("acasong 1\ntitle: x\n\n", "x:2:1: error: the score has no parts; add one after the headers: 'part NAME [clef]' and a line of its notes"),
        ("acasong 1\npart A\nC4 4 ( D4 4 E4 4 F4 4 |\n", "x:3:6: error: '(' opens no tuplet: write 3( … ) or N:M( … ) with the ratio before it (measure 1)"),
        // Marks, texts, repeats (issue 35).
        ("acasong 1\nending@1: (\npart A\nC4 1\n", "x:2:11: error: expected the ending's length as '(1 measure)' or '(N measures)', found '('"),
        ("acasong 1\nending@1: 1 (999999999 measures)\npart A\nC4 1\n", "x:2:11: error: an ending of 999999999 measures is longer than a song may be (10000)"),
        ("acasong 1\nending@1: 1, 1\npart A\nC4 1\n", "x:2:11: error: expected an ending's numbers (1 to 16, each once) like '1' or '1, 2', then '(N measures)'; found '1, 1'"),
        ("acasong 1\nsign@1: ,\npart A\nC4 1\n", "x:2:9: error: expected signs, each once, separated by commas: 'segno', 'coda', 'To Coda', 'Fine', 'D.C.', 'D.S.'"),
        ("acasong 1\nrepeat@1: end x1\npart A\nC4 1\n", "x:2:11: error: a passage is played 2 to 16 times, not 1"),
        ("acasong 1\ntime: 4/4 unprinted\npart A\nC4 1\n", "x:2:7: error: after the time signature: 'common' (4/4 as C), 'cut' (2/2 as ¢) or 'unprinted' (not the first: it is always printed); found 'unprinted'"),
        ("acasong 1\ntime: 3/4 common\npart A\nC4 2.\n", "x:2:7: error: after the time signature: 'common' (4/4 as C), 'cut' (2/2 as ¢) or 'unprinted' (not the first: it is always printed); found 'common'"),
        ("acasong 1\nsign@2: Fine\npart A\nC4 1\n", "x:2:1: error: sign@2 is not on the music (measures 1–1) (measure 2)"),
        ("acasong 1\ntext@1+960: rit.\ntext@3: far\npart A\nC4 1\n", "x:3:1: error: text 'far' is not on the music (it ends in measure 1) (measure 3)"),
        ("acasong 1\ntext@0: Andante\npart A\nC4 1\n", "x:2:1: error: measure 0 is the pickup, and there is none"),
        ("acasong 1\npart A\n\\fermata C4 1\n", "x:3:1: error: a mark follows the note it belongs to; '\\fermata' has none before it (measure 1)"),
        ("acasong 1\npart A\nC4 1 \\loud\n", "x:3:6: error: unknown mark '\\loud'; marks are \\fermata \\staccato \\tenuto \\accent \\marcato \\breathe \\caesura, dynamics \\p \\mf \\f…, hairpins \\< \\> \\!, slurs \\( \\) (measure 1)"),
        ("acasong 1\npart A\nC4 1 \\< \\!\n", "x:3:9: error: '\\!': the note has a hairpin mark already; a note takes one (measure 1)"),
        ("acasong 1\npart A\nC4 1 \\p \\f\n", "x:3:9: error: '\\f': the note has a dynamic already; a note takes one (measure 1)"),
        ("acasong 1\npart A\nC4 1\nlyrics A: two__words\n", "x:4:11: error: syllable 'two__words' has a space other than one between words (measure 1)"),
    ])
    func errorsAreLocatedAndExplained(input: String, expected: String) {
        do {
            _ = try Acasong.parse(input, file: "x")
            Issue.record("accepted: \(input.debugDescription)")
        } catch {
            #expect(error.errors.first?.description == expected, "for \(input.debugDescription)")
        }
    }

    @Test func columnsCountCharactersNotBytes() {
        do {
            _ = try Acasong.parse("acasong 1\npart Ténor Ü\nC4 1 H4 4\n", file: "x")
        } catch {
            #expect(error.errors.first?.description == "x:3:6: error: expected a pitch like C4, F#3 or Bb4, or R for a rest; found 'H4' (measure 2)")
        }
        do {
            _ = try Acasong.parse("acasong 1\ntitle: Ça ira\nkey: Ü major\npart A\nC4 1\n", file: "x")
        } catch {
            #expect(error.errors.first?.column == 6)
        }
    }

    @Test func everyMIDIPitchCanBeWrittenAndReadBack() throws {
        // Octave −1 (MIDI 0–11) as well as the top of the range.
        let score = try Acasong.parse("acasong 1\npart A\nC-1 4 Bb-1 4 G9 4 C#-1 4\n")
        #expect(score.parts[0].notes.map { $0.pitch!.midi } == [0, 10, 127, 1])
        #expect(try Acasong.parse(Acasong.serialize(score)) == score)
        #expect(throws: ScoreErrors.self) { try Acasong.parse("acasong 1\npart A\nCb-1 1\n") }  // MIDI −1
        #expect(throws: ScoreErrors.self) { try Acasong.parse("acasong 1\npart A\nC-2 1\n") }
    }

    @Test func longPickupsRoundTrip() throws {
        // A whole-note pickup in 13/8 (found by the importer fuzzer): printed as 1/1.
        let score = try Acasong.parse("acasong 1\ntime: 13/8\npickup: 1/1\npart A\nC4 1 | C4 1. C4 8\n")
        #expect(score.pickupTicks == 3840)
        #expect(Acasong.serialize(score).contains("pickup: 1/1\n"))
        #expect(try Acasong.parse(Acasong.serialize(score)) == score)
    }

    @Test func crlfLineEndingsAndTabsAreAccepted() throws {
        let score = try Acasong.parse("acasong 1\r\ntitle: Windows\r\npart A\r\nC4\t4 D4 4  E4 2 |\r\nF4 1\r\n")
        #expect(score.title == "Windows")
        #expect(score.parts[0].notes.count == 4)
    }

    @Test func mapEntriesMayComeInAnyOrder() throws {
        let score = try Acasong.parse("acasong 1\ntime@3: 3/4\ntempo@2: 90\ntempo: 60\ntime: 2/4\nkey@2: D major\npart A\nC4 2 | C4 2 | C4 2.\n")
        #expect(score.meters.map(\.measure) == [1, 3])
        #expect(score.tempos.map(\.tick) == [0, 1920])
        // A key change given without a key: C major applies until it.
        #expect(score.keys == [KeyChange(measure: 1, key: Key(fifths: 0, mode: .major)), KeyChange(measure: 2, key: Key(fifths: 2, mode: .major))])
    }

    @Test func defaultsAreExplicitAfterPrinting() throws {
        let score = try Acasong.parse("acasong 1\npart A\nC4 1\n")
        #expect(Acasong.serialize(score) == "acasong 1\ntime: 4/4\nkey: C major\ntempo: 120\n\npart A\nC4 1\n")
    }

    @Test func sparseBarlineChecksAreAllowed() throws {
        // Checks every other measure are fine; a wrong one names the nearest barline.
        _ = try Acasong.parse("acasong 1\npart A\nC4 1 D4 1 | E4 1 F4 1 |\n")
        do {
            _ = try Acasong.parse("acasong 1\npart A\nC4 1 D4 1 | E4 1 F4 2. |\n", file: "x")
        } catch {
            #expect(error.errors.first?.description == "x:3:24: error: barline check failed: measures 3–4 hold 7/4 but should hold 8/4 (measure 4)")
        }
    }
}

@Suite struct ParserEdgeTests {
    /// A stray '(' is one error, and the parser goes on from the next token
    /// (it used to repeat the same error until it gave up, 50 times).
    @Test func aStrayParenthesisIsOneError() {
        do {
            _ = try Acasong.parse("acasong 1\npart A\nC4 4 ( D4 4 E4 4 F4 4 | G4 1 | A4 1 | ( B4 1 |\n", file: "x")
            Issue.record("accepted")
        } catch {
            #expect(error.errors.map(\.description) == [
                "x:3:6: error: '(' opens no tuplet: write 3( … ) or N:M( … ) with the ratio before it (measure 1)",
                "x:3:39: error: '(' opens no tuplet: write 3( … ) or N:M( … ) with the ratio before it (measure 4)",
            ])
        }
    }

    /// A UTF-8 byte-order mark (Notepad writes one) is not text.
    @Test func aByteOrderMarkIsAccepted() throws {
        let plain = "acasong 1\ntime: 4/4\npart A\nC4 1 |\n"
        let marked = try Acasong.parse(bytes: [0xEF, 0xBB, 0xBF] + Array(plain.utf8), file: "x")
        #expect(marked == (try Acasong.parse(plain)))
    }

    /// With a pickup, measure 0 exists and a tempo may change inside it.
    @Test func tempoInThePickupNeedsAPickup() throws {
        let score = try Acasong.parse("acasong 1\ntempo: 60\npickup: 1/2\ntempo@0+480: 90\npart A\nC4 2 | C4 1 |\n")
        #expect(score.tempos.map(\.tick) == [0, 480])
    }
}
