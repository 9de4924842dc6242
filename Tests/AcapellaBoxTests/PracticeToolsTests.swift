@testable import AcapellaBox
import AcapellaControl
import AcapellaDSP
@testable import AcapellaEngine
@testable import AcapellaProject
import AcapellaScore
import AcapellaStatus
import AcapellaWeb
import Foundation
import Testing

/// The live mixer and the audible confirmations (issue 23), on the box's
/// session alone: fed by hand, no thread or device.
@Suite struct PracticeToolsTests {
    static func answers(_ effects: [BoxSession.Effect]) -> [Result<String, WebFailure>] {
        effects.compactMap { effect -> Result<String, WebFailure>? in if case .answer(let result) = effect { result } else { nil } }
    }

    static func mixes(_ effects: [BoxSession.Effect]) -> [(part: Int, mix: PartMix)] {
        BoxSessionTests.commands(effects).compactMap { if case .mix(let part, let mix) = $0 { (part, mix) } else { nil } }
    }

    /// A fader sets its part's level (100: the part's own, each halving
    /// −12 dB, 0: silent) or pan; the own part keeps its guide muted; the
    /// readout shows it; the session saves it once the fader rests.
    @Test func fadersMixLive() throws {
        var session = BoxSession(BoxSessionTests.context())
        _ = session.handle(.tick(milliseconds: 10_000), snapshot: BoxSessionTests.snapshot())
        let bass = MIDIFader(controller: 7, control: .level, target: .part(4))
        var sent = Self.mixes(session.handle(.fader(bass, value: 50), snapshot: BoxSessionTests.snapshot()))
        #expect(sent.count == 1 && sent[0].part == 3)
        #expect(abs(sent[0].mix.gain - 0.3 * 0.25) < 1e-6 && sent[0].mix.pan == PartMix.spread(count: 4)[3].pan && !sent[0].mix.muted)
        #expect(session.readout(snapshot: BoxSessionTests.snapshot(), reading: nil, takes: 0).message == "Bass level -12.0 dB")
        sent = Self.mixes(session.handle(.fader(MIDIFader(controller: 8, control: .pan, target: .part(4)), value: 127), snapshot: BoxSessionTests.snapshot()))
        #expect(sent[0].mix.pan == 1 && abs(sent[0].mix.gain - 0.075) < 1e-6)  // the level stays
        // The singer's own part (Alto): its guide stays muted while they sing.
        sent = Self.mixes(session.handle(.fader(MIDIFader(controller: 9, control: .level, target: .part(2)), value: 0), snapshot: BoxSessionTests.snapshot()))
        #expect(sent[0].part == 1 && sent[0].mix.gain == 0 && sent[0].mix.muted)
        // No such part: said, nothing sent.
        #expect(Self.mixes(session.handle(.fader(MIDIFader(controller: 9, control: .level, target: .part(9)), value: 3), snapshot: BoxSessionTests.snapshot())).isEmpty)
        #expect(session.readout(snapshot: BoxSessionTests.snapshot(), reading: nil, takes: 0).message?.contains("no part 9") == true)
        // Not saved while moving; saved once it rests.
        #expect(session.rehearsal(over: SessionState(), looping: false).parts["Bass"] == nil)
        _ = session.handle(.tick(milliseconds: 11_100), snapshot: BoxSessionTests.snapshot())
        let saved = session.rehearsal(over: SessionState(), looping: false)
        #expect(abs((saved.parts["Bass"]?.volumeDB ?? 0) - -12.04) < 0.01 && saved.parts["Bass"]?.pan == 1)
        #expect(saved.parts["Alto"]?.volumeDB == -60)
        // What was saved gives the same mixes back.
        let back = saved.partMixes(for: BoxSessionTests.score)
        #expect(abs(back[3].gain - 0.075) < 1e-4 && back[3].pan == 1)
        // A fader never mutes or unmutes: a part muted in the session stays muted.
        var base = SessionState()
        base.parts["Bass"] = SessionState.Part(mute: true)
        #expect(session.rehearsal(over: base, looping: false).parts["Bass"]?.mute == true)
    }

    /// The page's mixer moves the live mixer's own faders, answers in the
    /// readout's words, and shows each part's level as the page draws it.
    @Test func thePagesMixerIsTheLiveMixer() throws {
        var session = BoxSession(BoxSessionTests.context())
        #expect(session.mixer.map(\.name) == ["Soprano", "Alto", "Tenor", "Bass", "Metronome"] && session.mixer.allSatisfy { $0.levelDB.map { abs($0) < 1e-9 } == true })
        var effects = session.handle(.web(.fader(part: 3, control: .level, value: 50)), snapshot: BoxSessionTests.snapshot())
        let sent = Self.mixes(effects)
        #expect(sent.count == 1 && sent[0].part == 3 && abs(sent[0].mix.gain - 0.3 * 0.25) < 1e-6)
        #expect(Self.answers(effects) == [.success("Bass level -12.0 dB")])
        #expect(abs((session.mixer[3].levelDB ?? 0) - -12.04) < 0.01 && session.mixer[3].pan == Double(PartMix.spread(count: 4)[3].pan))
        effects = session.handle(.web(.fader(part: 0, control: .level, value: 0)), snapshot: BoxSessionTests.snapshot())
        #expect(session.mixer[0].levelDB == nil)
        effects = session.handle(.web(.fader(part: 1, control: .pan, value: 127)), snapshot: BoxSessionTests.snapshot())
        #expect(session.mixer[1].pan == 1)
        // No such part, no reference: refused in words, nothing sent.
        effects = session.handle(.web(.fader(part: 8, control: .level, value: 100)), snapshot: BoxSessionTests.snapshot())
        #expect(Self.mixes(effects).isEmpty && Self.answers(effects) == [.failure(WebFailure(404, "no part 9 for that fader: the song has 4"))])
        effects = session.handle(.web(.fader(part: nil, control: .level, value: 100)), snapshot: BoxSessionTests.snapshot())
        #expect(Self.mixes(effects).isEmpty && session.mixer.count == 5)
        // With a reference recording, its strip comes last.
        let withReference = BoxSession(ReferenceTests.context(lyrics: nil))
        #expect(withReference.mixer.dropLast().last?.reference == true && withReference.mixer.dropLast().last?.levelDB.map { abs($0) < 1e-9 } == true)
        #expect(withReference.mixer.last?.metronome == true)
    }

    /// The page's Mute and Solo: another part's sent to the engine, shown
    /// on its strip and saved with the session (once switched; parts not
    /// touched stay as the file has them); the singer's own part's mute is
    /// its guide's and its solo the `s` key's; the reference's mute its key's.
    @Test func thePagesMuteAndSolo() throws {
        var session = BoxSession(BoxSessionTests.context())
        var effects = session.handle(.web(.mixSwitch(part: 3, .mute, on: true)), snapshot: BoxSessionTests.snapshot())
        var sent = Self.mixes(effects)
        #expect(sent.count == 1 && sent[0].part == 3 && sent[0].mix.muted && abs(sent[0].mix.gain - 0.3) < 1e-6)
        #expect(Self.answers(effects) == [.success("Bass muted")])
        #expect(session.mixer[3].muted && !session.mixer[2].muted)
        // A fader then moves the muted part's level; it stays muted.
        sent = Self.mixes(session.handle(.web(.fader(part: 3, control: .level, value: 50)), snapshot: BoxSessionTests.snapshot()))
        #expect(sent[0].mix.muted && abs(sent[0].mix.gain - 0.075) < 1e-6)
        effects = session.handle(.web(.mixSwitch(part: 2, .solo, on: true)), snapshot: BoxSessionTests.snapshot())
        #expect(BoxSessionTests.commands(effects).contains { if case .solo(2, true) = $0 { true } else { false } })
        #expect(Self.answers(effects) == [.success("Tenor soloed")] && session.mixer[2].soloed && session.soloedParts == [2])
        // Saved: the switched parts' mute and solo; an untouched part as the file has it.
        var base = SessionState()
        base.parts["Soprano"] = SessionState.Part(mute: true)
        var saved = session.rehearsal(over: base, looping: false)
        #expect(saved.parts["Bass"]?.mute == true && saved.parts["Bass"]?.solo == false)
        #expect(saved.parts["Tenor"]?.solo == true && saved.parts["Tenor"]?.mute == false)
        #expect(saved.parts["Soprano"]?.mute == true)
        // Restored by the next session: the strips as they were.
        var next = BoxSession(BoxSessionTests.context())
        let restored = BoxSessionTests.commands(next.restore(saved, score: BoxSessionTests.score))
        #expect(restored.contains { if case .solo(2, true) = $0 { true } else { false } })
        #expect(next.mixer[3].muted && next.mixer[2].soloed && next.mixer[0].muted && !next.mixer[1].soloed)
        // Off again: no solo left, all parts heard.
        effects = session.handle(.web(.mixSwitch(part: 2, .solo, on: false)), snapshot: BoxSessionTests.snapshot())
        #expect(Self.answers(effects) == [.success("all parts")] && session.soloedParts.isEmpty)
        saved = session.rehearsal(over: saved, looping: false)
        #expect(saved.parts["Tenor"] == nil)
        // The singer's own part (Alto): mute is its guide (muted while they sing it).
        #expect(session.mixer[1].muted)
        effects = session.handle(.web(.mixSwitch(part: 1, .mute, on: false)), snapshot: BoxSessionTests.snapshot())
        #expect(!session.guideMuted && !session.mixer[1].muted && Self.mixes(effects).first.map { $0.part == 1 && !$0.mix.muted } == true)
        effects = session.handle(.web(.mixSwitch(part: 1, .mute, on: false)), snapshot: BoxSessionTests.snapshot())
        #expect(Self.mixes(effects).isEmpty && Self.answers(effects) == [.success("Alto guide already on")])
        effects = session.handle(.web(.mixSwitch(part: 1, .solo, on: true)), snapshot: BoxSessionTests.snapshot())
        #expect(session.soloed && session.mixer[1].soloed && Self.answers(effects) == [.success("Alto alone")])
        // No such part, no reference: refused in words, nothing sent.
        effects = session.handle(.web(.mixSwitch(part: 7, .mute, on: true)), snapshot: BoxSessionTests.snapshot())
        #expect(Self.mixes(effects).isEmpty && Self.answers(effects) == [.failure(WebFailure(404, "no part 8: the song has 4"))])
        effects = session.handle(.web(.mixSwitch(part: nil, .solo, on: true)), snapshot: BoxSessionTests.snapshot())
        #expect(Self.answers(effects) == [.failure(WebFailure(404, "this project has no reference recording"))])
        // The reference: its mute is the reference key's.
        var withReference = BoxSession(ReferenceTests.context(lyrics: nil))
        effects = withReference.handle(.web(.mixSwitch(part: nil, .mute, on: true)), snapshot: BoxSessionTests.snapshot())
        #expect(withReference.referenceMuted && withReference.mixer.dropLast().last?.muted == true && Self.mixes(effects).first?.mix.muted == true)
        effects = withReference.handle(.web(.mixSwitch(part: nil, .solo, on: true)), snapshot: BoxSessionTests.snapshot())
        #expect(withReference.mixer.dropLast().last?.soloed == true)
        #expect(withReference.rehearsal(over: SessionState(), looping: false).parts[ReferenceRecord.trackName] == SessionState.Part(mute: true, solo: true))
    }

    /// The page's Takes switch: a part on its guide tones (its takes kept,
    /// left out of what plays), shown on its strip, saved with the session
    /// (only while off: a session from before reads the same) and restored;
    /// the reference recording has none to switch.
    @Test func aPartOnItsTones() throws {
        var session = BoxSession(BoxSessionTests.context())
        #expect(session.mixer.prefix(4).allSatisfy { $0.takes == true } && session.mixer.last?.takes == nil)
        var effects = session.handle(.web(.mixSwitch(part: 3, .takes, on: false)), snapshot: BoxSessionTests.snapshot())
        #expect(effects.contains(.reloadAllTakes) && Self.answers(effects) == [.success("Bass: its tones (its takes kept, left out)")])
        #expect(session.context.tones == [3] && session.mixer[3].takes == false && session.mixer[2].takes == true)
        effects = session.handle(.web(.mixSwitch(part: 3, .takes, on: false)), snapshot: BoxSessionTests.snapshot())
        #expect(!effects.contains(.reloadAllTakes) && Self.answers(effects) == [.success("Bass already on its tones")])
        let saved = session.rehearsal(over: SessionState(), looping: false)
        #expect(saved.parts["Bass"] == SessionState.Part(takes: false) && saved.parts["Tenor"] == nil)
        #expect(saved.tonesParts(for: BoxSessionTests.score) == [3])
        #expect(saved.describe(partNames: ["Soprano", "Alto", "Tenor", "Bass"]) == "Bass on its tones (takes left out)")
        // As the file has it: "takes" written only when off, read back the same.
        let bytes = try JSONEncoder().encode(saved)
        #expect(String(decoding: bytes, as: UTF8.self).components(separatedBy: "\"takes\"").count == 2)
        #expect(try JSONDecoder().decode(SessionState.self, from: bytes) == saved)
        // Back on: its takes again, and nothing left to save.
        effects = session.handle(.web(.mixSwitch(part: 3, .takes, on: true)), snapshot: BoxSessionTests.snapshot())
        #expect(effects.contains(.reloadAllTakes) && Self.answers(effects) == [.success("Bass: its takes")] && session.context.tones.isEmpty)
        #expect(session.rehearsal(over: saved, looping: false).parts["Bass"] == nil)
        // The reference recording is not takes.
        var withReference = BoxSession(ReferenceTests.context(lyrics: nil))
        effects = withReference.handle(.web(.mixSwitch(part: nil, .takes, on: false)), snapshot: BoxSessionTests.snapshot())
        #expect(Self.answers(effects) == [.failure(WebFailure(409, "the reference recording is a recording, not takes: mute it instead"))])
    }

    /// The metronome's level from the page: kept while it is off (its strip
    /// shows it off), heard at once when on, saved once it rests, restored.
    @Test func theMetronomesLevel() throws {
        var session = BoxSession(BoxSessionTests.context())
        _ = session.handle(.tick(milliseconds: 10_000), snapshot: BoxSessionTests.snapshot())
        var effects = session.handle(.web(.metronomeLevel(50)), snapshot: BoxSessionTests.snapshot())
        #expect(BoxSessionTests.commands(effects).isEmpty && Self.answers(effects) == [.success("metronome level -12.0 dB")])
        #expect(session.mixer.last.map { $0.metronome && $0.muted && abs(($0.levelDB ?? 0) + 12.04) < 0.01 } == true)
        effects = session.handle(.action(.metronome), snapshot: BoxSessionTests.snapshot())
        #expect(BoxSessionTests.commands(effects).contains { if case .metronome(let gain) = $0 { abs(gain - 0.1) < 1e-6 } else { false } })
        effects = session.handle(.web(.metronomeLevel(100)), snapshot: BoxSessionTests.snapshot())
        #expect(BoxSessionTests.commands(effects).contains { if case .metronome(let gain) = $0 { abs(gain - 0.4) < 1e-6 } else { false } })
        _ = session.handle(.web(.metronomeLevel(0)), snapshot: BoxSessionTests.snapshot())
        #expect(session.mixer.last?.levelDB == nil)
        #expect(session.rehearsal(over: SessionState(), looping: false).metronomeVolumeDB == 0, "not saved while moving")
        _ = session.handle(.tick(milliseconds: 11_100), snapshot: BoxSessionTests.snapshot())
        var saved = session.rehearsal(over: SessionState(), looping: false)
        #expect(saved.metronomeVolumeDB == -60 && saved.problem(parts: ["Soprano", "Alto", "Tenor", "Bass"]) == nil)
        saved.metronomeVolumeDB = -6
        var next = BoxSession(BoxSessionTests.context())
        _ = next.restore(saved, score: BoxSessionTests.score)
        #expect(next.mixer.last.map { abs(($0.levelDB ?? 0) + 6) < 1e-9 } == true)
        saved.metronomeVolumeDB = 40
        #expect(saved.problem(parts: []) == "metronomeVolumeDB: 40.0 is outside −60…+12")
    }

    /// The reference's fader moves the reference, muted or not.
    @Test func theReferenceHasAFaderToo() throws {
        var session = BoxSession(ReferenceTests.context(lyrics: nil))
        let fader = MIDIFader(controller: 7, control: .level, target: .reference)
        var sent = Self.mixes(session.handle(.fader(fader, value: 100), snapshot: BoxSessionTests.snapshot()))
        #expect(sent.count == 1 && sent[0].part == 4 && sent[0].mix.gain == PartMix.trackGain && !sent[0].mix.muted)
        _ = session.handle(.action(.reference), snapshot: BoxSessionTests.snapshot())
        sent = Self.mixes(session.handle(.fader(fader, value: 50), snapshot: BoxSessionTests.snapshot()))
        #expect(sent[0].mix.muted && abs(sent[0].mix.gain - PartMix.trackGain / 4) < 1e-6)
        var plain = BoxSession(BoxSessionTests.context())
        #expect(Self.mixes(plain.handle(.fader(fader, value: 50), snapshot: BoxSessionTests.snapshot())).isEmpty)
    }

    static func tones(_ effects: [BoxSession.Effect]) -> [(key: Int, frequency: Double, samples: Int)] {
        BoxSessionTests.commands(effects).compactMap { if case .tone(let key, let frequency, _, let samples) = $0 { (key, frequency, samples) } else { nil } }
    }

    /// With confirmations on: a punch in is heard when it is asked for
    /// (before the take starts), the end of recording once it has ended
    /// (never in the take), a keep as a third, a discard low and long —
    /// four sounds unlike each other; with them off, none.
    @Test func confirmationsAreHeard() throws {
        var context = BoxSessionTests.context()
        context.confirmations = true
        var session = BoxSession(context)
        let punchIn = Self.tones(session.handle(.action(.punchIn), snapshot: BoxSessionTests.snapshot(.playing)))
        #expect(punchIn.map(\.key) == [VoicePool.confirmationKey] && abs(punchIn[0].frequency - Tuning.frequency(midi: 88)) < 1e-9 && punchIn[0].samples == 4_320)
        // Pressed while recording (punch out at the barline): nothing yet.
        #expect(Self.tones(session.handle(.action(.punchOut), snapshot: BoxSessionTests.snapshot(.recording))).isEmpty)
        let out = Self.tones(session.handle(.engine(.recordingStopped(at: 96_000)), snapshot: BoxSessionTests.snapshot(.playing)))
        #expect(out.count == 1 && abs(out[0].frequency - Tuning.frequency(midi: 76)) < 1e-9)
        // A take finished and reviewed, then kept: two tones together.
        _ = session.handle(.takeFinished(BoxSessionTests.take(3)), snapshot: BoxSessionTests.snapshot(.playing))
        _ = session.handle(.engine(.stopped(at: 96_000, returnTo: 0, finishedTake: true)), snapshot: BoxSessionTests.snapshot())
        let keep = Self.tones(session.handle(.action(.keepTake), snapshot: BoxSessionTests.snapshot()))
        #expect(keep.map(\.key) == [VoicePool.confirmationKey, VoicePool.confirmationKey + 1])
        let discard = Self.tones(session.handle(.undone(.success([BoxSessionTests.take(3)])), snapshot: BoxSessionTests.snapshot()))
        #expect(discard.count == 1 && discard[0].samples == 320 * 48 && discard[0].frequency < 120)
        // Four sounds, each unlike the others.
        let all = [punchIn, out, keep, discard].map { $0.map { "\($0.frequency)/\($0.samples)" }.joined(separator: "+") }
        #expect(Set(all).count == 4)

        var quiet = BoxSession(BoxSessionTests.context())
        #expect(Self.tones(quiet.handle(.action(.punchIn), snapshot: BoxSessionTests.snapshot(.playing))).isEmpty)
        #expect(Self.tones(quiet.handle(.engine(.recordingStopped(at: 96_000)), snapshot: BoxSessionTests.snapshot(.playing))).isEmpty)
    }

    /// A line played in on the box: `record-line` arms it, keys are timed
    /// against the song while it plays (not before, not while stopped), a
    /// stop ends it and sends it to be written, placed through the time
    /// map the song plays at; the answer restarts the session with the new
    /// part. Nothing played: nothing written.
    @Test func aLineIsPlayedIn() throws {
        var session = BoxSession(BoxSessionTests.context())
        #expect(BoxSessionTests.said(session.handle(.action(.recordLine), snapshot: BoxSessionTests.snapshot(.playing))).first?.hasPrefix("line: play it on the keyboard") == true)
        // Armed while stopped (note by note), then the song started with nothing entered: played in.
        var early = BoxSession(BoxSessionTests.context())
        _ = early.handle(.action(.recordLine), snapshot: BoxSessionTests.snapshot())
        _ = early.handle(.engine(.playing(at: 0)), snapshot: BoxSessionTests.snapshot(.playing))
        #expect(early.steps == nil && early.line != nil)
        _ = session.handle(.key(note: 60, velocity: 90), snapshot: BoxSessionTests.snapshot(.countIn, position: -1_000))  // before the song: not part of it
        _ = session.handle(.key(note: 72, velocity: 90), snapshot: BoxSessionTests.snapshot(.playing, position: 48_000))
        _ = session.handle(.key(note: 72, velocity: 0), snapshot: BoxSessionTests.snapshot(.playing, position: 72_000))
        _ = session.handle(.key(note: 74, velocity: 90), snapshot: BoxSessionTests.snapshot(.playing, position: 72_000))
        let effects = session.handle(.engine(.stopped(at: 96_000, returnTo: 0, finishedTake: false)), snapshot: BoxSessionTests.snapshot())
        let write = effects.compactMap { if case .writeLine(let played, let grid) = $0 { (played, grid) } else { nil } }.first
        let (played, grid) = try #require(write)
        #expect(grid == .sixteenth && session.line == nil)
        let map = BoxSessionTests.context().schedule.timeMap
        #expect(played.map(\.midi) == [72, 74])
        #expect(abs(played[0].start - map.tick(atSample: 48_000)) < 1e-9 && abs(played[1].end - map.tick(atSample: 96_000)) < 1e-9)
        let answer = session.handle(.lineWritten(.success(KeyboardLine.Written(part: "Keyboard", report: ["Keyboard: 2 notes on a grid of 16th notes"]))), snapshot: BoxSessionTests.snapshot())
        #expect(answer.contains(.end(.switchTo(song: 0, part: 1))))
        // Armed and ended with nothing played: said, nothing written.
        var empty = BoxSession(BoxSessionTests.context())
        _ = empty.handle(.action(.recordLine), snapshot: BoxSessionTests.snapshot())
        let nothing = empty.handle(.action(.recordLine), snapshot: BoxSessionTests.snapshot())
        #expect(!nothing.contains { if case .writeLine = $0 { true } else { false } })
        #expect(BoxSessionTests.said(nothing).first?.contains("nothing written") == true)
        // Where nothing may be recorded, nothing may be written.
        var refused = BoxSession(BoxSessionTests.context(refused: "read-only"))
        #expect(BoxSessionTests.said(refused.handle(.action(.recordLine), snapshot: BoxSessionTests.snapshot())).first?.contains("cannot be changed") == true)
    }

    /// Written into a project: the song gains the part (canonical, valid,
    /// reopened with it), the report is kept beside it, the other parts'
    /// takes still fit, a second line is "Keyboard 2".
    @Test func aLineIsWrittenIntoTheProject() throws {
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let before = project.score
        let written = try project.addLine([KeyboardLine.Played(midi: 76, start: 960, end: 2_880)], grid: .eighth)
        #expect(written.part == "Keyboard" && written.report.first == "Keyboard: 1 note on a grid of 8th notes")
        #expect(FileManager.default.fileExists(atPath: project.path + "/keyboard.line.txt"))
        let path = project.path
        project.close()
        let (reopened, report) = try Project.open(path, for: .write(owner: "test"))
        defer { reopened.close() }
        #expect(report.isEmpty, "\(report)")
        #expect(reopened.score.parts.map(\.name) == before.parts.map(\.name) + ["Keyboard"])
        for part in before.parts { #expect(reopened.score.fingerprint(ofPart: part.name) == before.fingerprint(ofPart: part.name)) }
        let second = try reopened.addLine([KeyboardLine.Played(midi: 64, start: 0, end: 960)], grid: .sixteenth)
        #expect(second.part == "Keyboard 2")
        // Nothing inside the song: refused, the song unchanged.
        let text = try String(contentsOfFile: path + "/score.acasong", encoding: .utf8)
        #expect(throws: ProjectError.self) { try reopened.addLine([KeyboardLine.Played(midi: 64, start: 1e9, end: 1e9 + 10)], grid: .sixteenth) }
        #expect(try String(contentsOfFile: path + "/score.acasong", encoding: .utf8) == text)
    }

    /// Note by note: `record-line` while stopped enters notes at a cursor
    /// from the measure the transport is at, each key a note of the length
    /// chosen (quarter at first; `step-…` from the console or pads), a rest
    /// moves the cursor; `record-line` again writes exactly what was entered.
    @Test func aLineIsEnteredNoteByNote() throws {
        var session = BoxSession(BoxSessionTests.context())
        let schedule = BoxSessionTests.context().schedule
        let start = Double(Int(schedule.timeMap.tick(atSample: schedule.barline(ofMeasure: 2)!).rounded()))
        let armed = BoxSessionTests.said(session.handle(.action(.recordLine), snapshot: BoxSessionTests.snapshot(measure: 2)))
        #expect(armed.first?.hasPrefix("line, note by note from measure 2") == true)
        _ = session.handle(.key(note: 64, velocity: 80), snapshot: BoxSessionTests.snapshot())
        _ = session.handle(.key(note: 64, velocity: 0), snapshot: BoxSessionTests.snapshot())
        _ = session.handle(.action(.stepEighth), snapshot: BoxSessionTests.snapshot())
        let said = BoxSessionTests.said(session.handle(.key(note: 67, velocity: 80), snapshot: BoxSessionTests.snapshot()))
        #expect(said.first?.hasPrefix("line: G4 8th") == true)
        _ = session.handle(.action(.stepRest), snapshot: BoxSessionTests.snapshot())
        _ = session.handle(.action(.stepHalf), snapshot: BoxSessionTests.snapshot())
        _ = session.handle(.key(note: 69, velocity: 80), snapshot: BoxSessionTests.snapshot())
        let effects = session.handle(.action(.recordLine), snapshot: BoxSessionTests.snapshot())
        let played = try #require(effects.compactMap { if case .writeLine(let played, _) = $0 { played } else { nil } }.first)
        #expect(played == [KeyboardLine.Played(midi: 64, start: start, end: start + 960), KeyboardLine.Played(midi: 67, start: start + 960, end: start + 1_440),
                           KeyboardLine.Played(midi: 69, start: start + 1_920, end: start + 3_840)])
        // The lengths mean nothing without a line entered note by note.
        var plain = BoxSession(BoxSessionTests.context())
        #expect(BoxSessionTests.said(plain.handle(.action(.stepEighth), snapshot: BoxSessionTests.snapshot())).first?.contains("note by note") == true)
    }
}
