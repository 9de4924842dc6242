@testable import AcapellaScore
import Foundation
import Testing

/// A line played on a keyboard, written into the song (issue 23): on the
/// grid, one voice, rests between, split at barlines with ties, triplets
/// as 3:2 groups; canonical and valid; the report says what changed.
@Suite struct KeyboardLineTests {
    static func song(_ name: String) throws -> Score {
        try Acasong.parse(String(contentsOf: packageRoot.appendingPathComponent("Songs/\(name).acasong"), encoding: .utf8))
    }

    /// Four notes played a little off the 16th grid, one held across a
    /// barline: onsets and ends on the grid, a rest first and between,
    /// the held note tied over the barline, rests to the song's end;
    /// the song prints and reads back the same, the other parts untouched.
    @Test func aLineLandsOnTheGrid() throws {
        let score = try Self.song("simple-harmony")  // 4/4, three measures: 11,520 ticks
        let played = [
            KeyboardLine.Played(midi: 67, start: 975, end: 1_900),  // → 960…1920 (a quarter), 15 ticks late
            KeyboardLine.Played(midi: 69, start: 1_930, end: 2_390),  // → 1920…2400 (an 8th)
            KeyboardLine.Played(midi: 71, start: 3_350, end: 4_790),  // → 3360…4800: over the barline at 3840
            KeyboardLine.Played(midi: 72, start: 5_760, end: 5_770),  // too short: one 16th
        ]
        let (written, report) = try KeyboardLine.written(played, grid: .sixteenth, name: "Keyboard", into: score)
        #expect(written.parts.count == 3)
        let part = written.parts[2]
        let sounding = part.notes.filter { !$0.isRest }
        #expect(sounding.map(\.startTick) == [960, 1_920, 3_360, 3_840, 5_760])
        #expect(sounding.map(\.durationTicks) == [960, 480, 480, 960, 240])
        #expect(sounding.map { $0.pitch!.midi } == [67, 69, 71, 71, 72])
        #expect(sounding.map(\.tieToNext) == [false, false, true, false, false])
        // Contiguous from 0 to the song's end, every event a value the format writes.
        var at = 0
        for note in part.notes {
            #expect(note.startTick == at && note.value.isValid && note.value.writtenTicks == note.durationTicks)
            at = note.endTick
        }
        #expect(at == score.endTick)
        #expect(part.clef == .treble)
        let text = Acasong.serialize(written)
        let back = try Acasong.parse(text)
        #expect(back == written && Acasong.serialize(back) == text)
        for name in ["Soprano", "Bass"] { #expect(back.fingerprint(ofPart: name) == score.fingerprint(ofPart: name)) }
        #expect(report[0] == "Keyboard: 4 notes on a grid of 16th notes")
        #expect(report.contains("4 notes moved onto the grid, the furthest by about a 32nd note") || report.contains { $0.hasPrefix("4 notes moved onto the grid") })
        #expect(report.contains("1 note shorter than a grid step: made one step long"))
    }

    /// One voice: of keys pressed together the top one; a key held into the
    /// next is cut; a note before the song or after its end left out.
    @Test func aLineIsOneVoice() throws {
        let score = try Self.song("simple-harmony")
        let played = [
            KeyboardLine.Played(midi: 60, start: 0, end: 960), KeyboardLine.Played(midi: 64, start: 5, end: 950),  // a chord: E4 kept
            KeyboardLine.Played(midi: 62, start: 480, end: 1_440),  // starts while E4 sounds (on the grid at 480): E4 cut there
            KeyboardLine.Played(midi: 65, start: 20_000, end: 21_000),  // after the end
        ]
        let (written, report) = try KeyboardLine.written(played, grid: .eighth, name: "Keyboard", into: score)
        let sounding = written.parts[2].notes.filter { !$0.isRest }
        #expect(sounding.map { $0.pitch!.midi } == [64, 62])
        #expect(sounding.map(\.startTick) == [0, 480] && sounding.map(\.durationTicks) == [480, 960])
        #expect(report.contains("1 note played with another: the top note kept (a part sings one note at a time)"))
        #expect(report.contains("1 note held into the next: cut where it starts"))
        #expect(report.contains("1 note outside the song left out"))
        #expect(throws: KeyboardLine.Refusal.self) { try KeyboardLine.written([], grid: .eighth, name: "K", into: score) }
        #expect(throws: KeyboardLine.Refusal.self) { try KeyboardLine.written([KeyboardLine.Played(midi: 60, start: 99_999, end: 100_500)], grid: .eighth, name: "K", into: score) }
    }

    /// Triplets: notes on the 8th-triplet grid become 3:2 groups a beat
    /// each (a whole beat stays a plain quarter), and read back the same;
    /// a song counted in dotted quarters refuses the triplet grid.
    @Test func tripletsAreGroupsOfABeat() throws {
        let score = try Self.song("simple-harmony")
        let played = [
            KeyboardLine.Played(midi: 67, start: 0, end: 320), KeyboardLine.Played(midi: 69, start: 320, end: 960),  // 8th + quarter, triplets
            KeyboardLine.Played(midi: 71, start: 960, end: 1_920),  // a whole beat
        ]
        let (written, _) = try KeyboardLine.written(played, grid: .eighthTriplet, name: "Keyboard", into: score)
        let notes = written.parts[2].notes
        #expect(notes[0].durationTicks == 320 && notes[0].value == NoteValue(8) && notes[0].tuplet?.actual == 3 && notes[0].tuplet?.normal == 2)
        #expect(notes[1].durationTicks == 640 && notes[1].value == NoteValue(4) && notes[1].tuplet?.id == notes[0].tuplet?.id)
        #expect(notes[2].durationTicks == 960 && notes[2].tuplet == nil && notes[2].pitch?.midi == 71)
        let text = Acasong.serialize(written)
        #expect(try Acasong.parse(text) == written)
        #expect(text.contains("3(G4 8 A4 4)"))

        let compound = try Self.song("row-row-row-your-boat")
        #expect(throws: KeyboardLine.Refusal.self) { try KeyboardLine.written(played, grid: .eighthTriplet, name: "K", into: compound) }
        // The straight grids work there.
        _ = try KeyboardLine.written(played, grid: .eighth, name: "K", into: compound)
    }

    /// The time map's inverse puts a sample back on its tick (with the
    /// fraction), across a tempo change.
    @Test func samplesGoBackToTicks() throws {
        let score = try Self.song("simple-harmony")  // 80 bpm, 92 from measure 3
        let map = try TimeMap(tempos: score.tempos, sampleRate: 48_000)
        for tick in [0, 1, 960, 7_679, 7_680, 7_681, 11_519] {
            #expect(abs(map.tick(atSample: map.sample(atTick: tick)) - Double(tick)) < 0.02, "\(tick)")
        }
        #expect(abs(map.tick(atSample: 18_000) - 480) < 1e-9)  // an 8th at 80 bpm is 18,000 samples
    }
}
