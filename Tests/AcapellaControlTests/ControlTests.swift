import AcapellaJSON
@testable import AcapellaControl
@testable import AcapellaEngine
import AcapellaScore
import Foundation
import Testing

@Suite struct DuplicateKeyTests {
    /// A key given twice in one object is found, wherever it is (escaped
    /// spellings of one key too); the same key in two objects is fine.
    @Test func keysGivenTwiceAreFound() {
        func scan(_ text: String) -> String? { JSONFile.duplicateKey(in: Data(text.utf8)) }
        #expect(scan(#"{"a": 1, "a": 2}"#) == "a")
        #expect(scan(#"{"midi": {"bindings": [{"note": 1}, {"note": 2, "action": "x", "note": 3}]}}"#) == "midi.bindings[1].note")
        #expect(scan(#"{"a": "x", "\u0061": 2}"#) == "a")
        #expect(scan(#"{"a": {"b": 1}, "c": {"b": 2}, "d": [{"b": 1}, {"b": 1}]}"#) == nil)
        #expect(scan(#"{"s": "a \" \"s\": ", "t": 1}"#) == nil)
        #expect(scan(#"[{"x": 1}, {"y": [1, {"z": 1, "z": 2}]}]"#) == "[1].y[1].z")
    }

    /// Two foot switches on one line are refused, naming the second.
    @Test func oneSwitchALine() {
        let text = #"{ "footSwitches": [ { "chip": "gpiochip0", "line": 17, "tap": "punch-in" }, { "chip": "gpiochip0", "line": 17, "tap": "stop" } ] }"#
        #expect(throws: ControlConfigError(description: "c.json: footSwitches[1]: chip gpiochip0 line 17 is footSwitches[0]'s too; one switch a line")) {
            try ControlConfig.parse(Data(text.utf8), file: "c.json")
        }
    }
}

@Suite struct MIDIDecoderTests {
    @Test func runningStatusRealtimeAndSplitSysex() {
        var decoder = MIDIDecoder()
        // Note on, then running status with a realtime clock in the middle, velocity 0 = off.
        #expect(decoder.feed([0x90, 60, 100, 62, 0xF8, 90, 60, 0]) == [
            .noteOn(channel: 1, note: 60, velocity: 100), .realtime(0xF8), .noteOn(channel: 1, note: 62, velocity: 90), .noteOff(channel: 1, note: 60),
        ])
        // CC on channel 16, program change (one data byte) with running status.
        #expect(decoder.feed([0xBF, 64, 127, 64, 0, 0xC2, 5, 6]) == [
            .controlChange(channel: 16, controller: 64, value: 127), .controlChange(channel: 16, controller: 64, value: 0),
            .programChange(channel: 3, program: 5), .programChange(channel: 3, program: 6),
        ])
        // An MMC play split over three reads, a timing clock inside it.
        #expect(decoder.feed([0xF0, 0x7F]).isEmpty)
        #expect(decoder.feed([0x7F, 0xF8, 0x06]) == [.realtime(0xF8)])
        #expect(decoder.feed([0x02, 0xF7]) == [.systemExclusive([0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7])])
        // System common cancels running status: the data bytes after it are ignored.
        #expect(decoder.feed([0x90, 60, 100, 0xF3, 1, 61, 100]) == [.noteOn(channel: 1, note: 60, velocity: 100)])
        // Stray data with no status: ignored; an unterminated sysex is dropped when a status arrives.
        var fresh = MIDIDecoder()
        #expect(fresh.feed([1, 2, 3, 0xF0, 1, 2, 0x80, 60, 0]) == [.noteOff(channel: 1, note: 60)])
    }

    @Test func machineControl() {
        var locate = MMCCommand(device: 0x7F, kind: .locate(hours: 1, minutes: 2, seconds: 3, frames: 4))
        locate.framesPerSecond = 25  // the hours byte 0x21: rate bits 01
        #expect(MMCCommand.parse([0xF0, 0x7F, 0x7F, 0x06, 0x01, 0xF7]) == MMCCommand(device: 0x7F, kind: .stop))
        #expect(MMCCommand.parse([0xF0, 0x7F, 0x10, 0x06, 0x06, 0xF7]) == MMCCommand(device: 0x10, kind: .recordStrobe))
        #expect(MMCCommand.parse([0xF0, 0x7F, 0x7F, 0x06, 0x44, 0x06, 0x01, 0x21, 2, 3, 4, 0, 0xF7]) == locate)
        #expect(MMCCommand.parse([0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7]) == nil, "a non-realtime universal sysex")
        #expect(MMCCommand.parse([0xF0, 0x7F, 0x7F, 0x06, 0x55, 0xF7]) == nil)
        #expect(MMCCommand(device: 0x10, kind: .stop).isFor(device: 0x10) && !MMCCommand(device: 0x10, kind: .stop).isFor(device: 0x11))
    }

    /// Any bytes: no trap, and every message is well-formed (channels 1–16,
    /// data 0–127, sysex framed and bounded).
    @Test func randomBytesNeverBreakTheDecoder() {
        var rng = SplitMix64(seed: 77)
        var decoder = MIDIDecoder()
        var messages = 0
        for _ in 0..<200_000 {
            // Biased towards status bytes and sysex so every path is hit.
            let roll = rng.next() % 10
            let byte: UInt8 = roll == 0 ? 0xF0 : roll == 1 ? 0xF7 : UInt8(truncatingIfNeeded: rng.next())
            guard let message = decoder.feed(byte) else { continue }
            messages += 1
            switch message {
            case .noteOn(let c, let n, let v): #expect((1...16).contains(c) && (0...127).contains(n) && (1...127).contains(v))
            case .noteOff(let c, let n): #expect((1...16).contains(c) && (0...127).contains(n))
            case .controlChange(let c, let n, let v): #expect((1...16).contains(c) && (0...127).contains(n) && (0...127).contains(v))
            case .programChange(let c, let p): #expect((1...16).contains(c) && (0...127).contains(p))
            case .systemExclusive(let bytes): #expect(bytes.first == 0xF0 && bytes.last == 0xF7 && bytes.count <= MIDIDecoder.maximumSysexBytes + 1)
            case .realtime(let b): #expect(b >= 0xF8)
            }
        }
        #expect(messages > 10_000)
    }
}

@Suite struct InterpreterTests {
    /// MMC locate: a time of the song (the frame rate from the hours byte),
    /// for this box's device or all; nothing when MMC is off.
    @Test func machineControlLocateIsAPlace() {
        var midi = MIDIInterpreter(bindings: [])
        // 0 h 1 min 23 s, frame 12 at 25 fps (rate bits 01): 83,480 ms.
        let locate: [UInt8] = [0xF0, 0x7F, 0x7F, 0x06, 0x44, 0x06, 0x01, 0x20, 0x01, 0x17, 0x0C, 0x00, 0xF7]
        #expect(MMCCommand.parse(locate)?.locateMilliseconds == 83_480)
        #expect(midi.meaning(of: .systemExclusive(locate)) == .locate(milliseconds: 83_480))
        var at30 = locate
        at30[7] = 0x60  // 30 fps
        #expect(midi.meaning(of: .systemExclusive(at30)) == .locate(milliseconds: 83_400))
        var elsewhere = locate
        elsewhere[2] = 0x05
        #expect(midi.meaning(of: .systemExclusive(elsewhere)) == nil, "sent to device 5: not this box (device 127)")
        midi.machineControlDevice = 5
        #expect(midi.meaning(of: .systemExclusive(elsewhere)) == .locate(milliseconds: 83_480))
        midi.machineControl = false
        #expect(midi.meaning(of: .systemExclusive(locate)) == nil)
        #expect(MMCCommand.parse([0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7])?.locateMilliseconds == nil)
        var badMinutes = locate
        badMinutes[8] = 60
        #expect(MMCCommand.parse(badMinutes) == nil, "60 minutes is not a time code")
    }

    /// A keyboard: every note no binding takes sounds (on its channel when
    /// one is set), and its release is passed on; bound notes act.
    @Test func notesNobodyBindsAreAKeyboard() throws {
        var midi = MIDIInterpreter(bindings: [MIDIBinding(event: .note(36), channel: 10, action: .record)])
        #expect(midi.meaning(of: .noteOn(channel: 10, note: 36, velocity: 90)) == .action(.record))
        #expect(midi.meaning(of: .noteOff(channel: 10, note: 36)) == nil, "a bound note's release means nothing")
        #expect(midi.meaning(of: .noteOn(channel: 1, note: 60, velocity: 100)) == .key(note: 60, velocity: 100))
        #expect(midi.meaning(of: .noteOn(channel: 10, note: 37, velocity: 5)) == .key(note: 37, velocity: 5))
        #expect(midi.meaning(of: .noteOff(channel: 1, note: 60)) == .key(note: 60, velocity: 0))
        #expect(midi.meaning(of: .noteOff(channel: 1, note: 60)) == nil, "released once")
        #expect(midi.meaning(of: .controlChange(channel: 1, controller: 64, value: 127)) == nil)
        midi.keyboard = .channel(2)
        #expect(midi.meaning(of: .noteOn(channel: 1, note: 62, velocity: 100)) == nil)
        #expect(midi.meaning(of: .noteOn(channel: 2, note: 62, velocity: 100)) == .key(note: 62, velocity: 100))
        midi.keyboard = .off
        #expect(midi.meaning(of: .noteOn(channel: 2, note: 64, velocity: 100)) == nil)
        #expect(midi.meaning(of: .noteOff(channel: 2, note: 62)) == .key(note: 62, velocity: 0), "a note that sounded is still released")
        // The setting, read and written back.
        for (text, expected) in [(#"{"midi": {"keyboard": 3}}"#, MIDIInterpreter.KeyboardChannel.channel(3)), (#"{"midi": {"keyboard": "off"}}"#, .off), ("{}", .any)] {
            let config = try ControlConfig.parse(Data(text.utf8), file: "c.json")
            #expect(config.midi.keyboard == expected)
            #expect(try ControlConfig.parse(config.serialized(), file: "c.json").midi.keyboard == expected)
        }
    }

    @Test func controllersActOnTheRisingEdge() {
        var midi = MIDIInterpreter(bindings: [
            MIDIBinding(event: .controlChange(64), action: .punchIn),
            MIDIBinding(event: .note(36), channel: 10, action: .record),
            MIDIBinding(event: .program(3), action: .nextSong),
        ])
        // A pedal sending a ramp of values: one action per press.
        let ramp = [0, 20, 70, 100, 127, 127, 90, 30, 0, 80, 127, 10].map { MIDIMessage.controlChange(channel: 1, controller: 64, value: $0) }
        #expect(ramp.compactMap { midi.action(for: $0) } == [.punchIn, .punchIn])
        #expect(midi.action(for: .noteOn(channel: 10, note: 36, velocity: 1)) == .record)
        #expect(midi.action(for: .noteOn(channel: 9, note: 36, velocity: 100)) == nil, "bound to channel 10 only")
        #expect(midi.action(for: .programChange(channel: 4, program: 3)) == .nextSong)
        #expect(midi.action(for: .systemExclusive([0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7])) == .playPause)
        midi.machineControl = false
        #expect(midi.action(for: .systemExclusive([0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7])) == nil)
    }
}

@Suite struct GestureTests {
    static let ms: Int64 = 1_000_000

    /// Edges of one press with contact bounce: `bounce` ms of chatter on
    /// each transition, ending on the new level.
    static func press(at start: Int64, holdFor: Int64, bounce: Int64, rng: inout SplitMix64) -> [(Bool, Int64)] {
        var edges: [(Bool, Int64)] = []
        func chatter(to level: Bool, at time: Int64) {
            var t = time
            var current = level
            edges.append((current, t))
            let end = time + bounce * ms
            while true {
                t += Int64(rng.next() % 3 + 1) * ms / 2
                if t >= end { break }
                current.toggle()
                edges.append((current, t))
            }
            if current != level { edges.append((level, end)) }
        }
        chatter(to: true, at: start)
        chatter(to: false, at: start + holdFor * ms)
        return edges
    }

    /// 1,000 presses, each bouncing for 1–20 ms on press and release:
    /// exactly 1,000 taps (with a double tap bound, so each tap waits out
    /// its window).
    @Test func aThousandBouncyPressesAreAThousandTaps() {
        var rng = SplitMix64(seed: 1_000)
        var recognizer = GestureRecognizer(settings: GestureSettings(tap: .punchIn, hold: .stop, doubleTap: .discardTake))
        var actions: [ControlAction] = []
        var time: Int64 = 0
        for _ in 0..<1_000 {
            let bounce = Int64(rng.next() % 20 + 1)
            let holdFor = Int64(80 + rng.next() % 300)
            for (level, at) in Self.press(at: time, holdFor: holdFor, bounce: bounce, rng: &rng) { actions += recognizer.edge(pressed: level, at: at) }
            time += (holdFor + 900) * Self.ms
            actions += recognizer.advance(to: time - 100 * Self.ms)
        }
        #expect(actions.count == 1_000 && actions.allSatisfy { $0 == .punchIn }, "\(actions.count) actions")
    }

    @Test func tapsHoldsAndDoubleTapsAtTheirBoundaries() {
        let ms = Self.ms
        let settings = GestureSettings(tap: .punchIn, hold: .stop, doubleTap: .discardTake)
        // A hold fires at exactly 600 ms, while still pressed; the release then does nothing.
        var hold = GestureRecognizer(settings: settings)
        #expect(hold.edge(pressed: true, at: 0).isEmpty)
        #expect(hold.advance(to: 600 * ms - 1).isEmpty)
        #expect(hold.advance(to: 600 * ms) == [.stop])
        #expect(hold.edge(pressed: false, at: 700 * ms).isEmpty && hold.advance(to: 2_000 * ms).isEmpty)
        // 599 ms is still a tap, decided when the double-tap window closes (350 ms after release).
        var tap = GestureRecognizer(settings: settings)
        _ = tap.edge(pressed: true, at: 0)
        #expect(tap.edge(pressed: false, at: 599 * ms).isEmpty)
        #expect(tap.nextDeadline == 949 * ms)
        #expect(tap.advance(to: 949 * ms - 1).isEmpty)
        #expect(tap.advance(to: 949 * ms) == [.punchIn])
        // A second press 349 ms after the release: a double tap, on that press.
        var double = GestureRecognizer(settings: settings)
        _ = double.edge(pressed: true, at: 0)
        _ = double.edge(pressed: false, at: 100 * ms)
        #expect(double.edge(pressed: true, at: 449 * ms) == [.discardTake])
        #expect(double.edge(pressed: false, at: 500 * ms).isEmpty && double.advance(to: 3_000 * ms).isEmpty)
        // At 350 ms it is too late: a tap, then a new press.
        var late = GestureRecognizer(settings: settings)
        _ = late.edge(pressed: true, at: 0)
        _ = late.edge(pressed: false, at: 100 * ms)
        #expect(late.edge(pressed: true, at: 450 * ms) == [.punchIn])
        // With no double tap and no hold bound, the tap fires on the press itself.
        var instant = GestureRecognizer(settings: GestureSettings(tap: .record))
        #expect(instant.edge(pressed: true, at: 5 * ms) == [.record])
        #expect(instant.edge(pressed: false, at: 50 * ms).isEmpty)
        // A bounce that settles back released within the debounce: nothing.
        var glitch = GestureRecognizer(settings: GestureSettings(tap: .record))
        #expect(glitch.edge(pressed: true, at: 0) == [.record])
        #expect(glitch.edge(pressed: false, at: 10 * ms).isEmpty)
        #expect(glitch.edge(pressed: true, at: 12 * ms).isEmpty)
        #expect(glitch.advance(to: 40 * ms).isEmpty, "settled pressed: no second tap")
    }
}

@Suite struct ControlConfigTests {
    static let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Config/controls.json").path

    @Test func theShippedDefaultsLoad() throws {
        let config = try ControlConfig.parse(Data(contentsOf: URL(fileURLWithPath: Self.shipped)), file: Self.shipped)
        #expect(config.footSwitches.count == 1)
        let pedal = try #require(config.footSwitches.first)
        #expect(pedal.line == "17" && pedal.activeLow && pedal.bias == "pull-up")
        #expect(pedal.gestures.tap == .punchIn && pedal.gestures.hold == .stop && pedal.gestures.doubleTap == .discardTake)
        #expect(config.midi.bindings.contains(MIDIBinding(event: .controlChange(64), action: .punchIn)))
        #expect(config.midi.machineControl && config.punchQuantize == .bar)
    }

    @Test(arguments: [
        (#"{"midi": {"bindings": [{"event": "cc", "controller": 64, "action": "frob"}]}}"#, "c.json: midi.bindings[0].action: unknown action 'frob'; known: play-pause, stop,"),
        (#"{"midi": {"bindings": [{"event": "cc", "action": "stop"}]}}"#, "c.json: midi.bindings[0].controller: missing"),
        (#"{"midi": {"bindings": [{"event": "cc", "controller": 200, "action": "stop"}]}}"#, "c.json: midi.bindings[0].controller: expected a whole number from 0 to 127"),
        (#"{"midi": {"ccThreshold": true}}"#, "c.json: midi.ccThreshold: expected a whole number from 1 to 127"),
        (#"{"footSwitches": [{"chip": "gpiochip0", "tap": "stop"}]}"#, "c.json: footSwitches[0].line: missing (e.g. 17 or \"GPIO17\")"),
        (#"{"footSwitches": [{"chip": "gpiochip0", "line": 17}]}"#, "c.json: footSwitches[0]: binds no action (tap, hold or doubleTap)"),
        (#"{"footSwitches": [{"chip": "gpiochip0", "line": 17, "tap": "stop", "bias": "up"}]}"#, "c.json: footSwitches[0].bias: expected \"pull-up\", \"pull-down\" or \"none\""),
        (#"{"footswitches": []}"#, "c.json: footswitches: unknown key; known: midi, footSwitches, punchQuantize, comment"),
        (#"{"punchQuantize": "soon"}"#, "c.json: punchQuantize: expected \"immediate\", \"beat\" or \"bar\""),
        (#"{"midi": "#, "c.json: not valid JSON"),
        (#"{"midi": {"bindings": [{"event": "note", "note": 36, "action": "stop"}, {"event": "note", "note": 36, "channel": 10, "action": "record"}]}}"#,
         "c.json: midi.bindings[1]: note 36 is bound to stop by midi.bindings[0] already; one event, one action"),
        (#"{"midi": {"bindings": [{"event": "note", "note": 36, "velocity": 1, "action": "stop"}]}}"#,
         "c.json: midi.bindings[0].velocity: unknown key; known: event, note, controller, program, channel, action"),
        (#"{"midi": {"bindings": [{"event": "note", "note": 36, "controller": 1, "action": "stop"}]}}"#,
         "c.json: midi.bindings[0].controller: not used by a note binding (it takes \"note\")"),
        (#"{"midi": {"ccThreshold": 1e30}}"#, "c.json: midi.ccThreshold: expected a whole number from 1 to 127"),
        (#"{"midi": {"keyboard": 17}}"#, "c.json: midi.keyboard: expected \"any\", \"off\" or a channel from 1 to 16"),
        (#"{"footSwitches": [{"chip": "gpiochip0", "line": 17, "tap": "stop", "colour": 1}]}"#,
         "c.json: footSwitches[0].colour: unknown key; known: chip, line, activeLow, bias, debounceMs, holdMs, doubleTapMs, tap, hold, doubleTap"),
        ("{\"mi\\ndi\": 1}", "c.json: mi\\ndi: unknown key"),
        (#"{"midi": {"faders": [{"controller": 7, "control": "volume", "part": 2}]}}"#, "c.json: midi.faders[0].control: expected \"level\" or \"pan\""),
        (#"{"midi": {"faders": [{"controller": 7, "control": "level", "part": 0}]}}"#, "c.json: midi.faders[0].part: expected a whole number from 1 to 64, or \"reference\""),
        (#"{"midi": {"faders": [{"controller": 7, "control": "level"}]}}"#, "c.json: midi.faders[0].part: missing"),
        (#"{"midi": {"bindings": [{"event": "cc", "controller": 7, "action": "stop"}], "faders": [{"controller": 7, "channel": 2, "control": "pan", "part": 1}]}}"#,
         "c.json: midi.faders[0]: controller 7 is bound to stop in midi.bindings already"),
        (#"{"midi": {"faders": [{"controller": 7, "control": "pan", "part": 1}, {"controller": 7, "channel": 3, "control": "level", "part": 2}]}}"#,
         "c.json: midi.faders[1]: controller 7 moves midi.faders[0] already"),
    ])
    func wrongConfigsSayWhere(text: String, message: String) {
        do {
            _ = try ControlConfig.parse(Data(text.utf8), file: "c.json")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix(message), "\(error.description)")
        }
    }
}

@Suite struct FaderTests {
    /// Faders in the controls file: read, written back the same, heard as
    /// every value they send (no threshold); a controller bound to an
    /// action still acts once per press; learning a fader replaces what
    /// that controller or that part's control did before.
    @Test func fadersAreReadHeardAndLearned() throws {
        let text = #"{"midi": {"bindings": [{"event": "cc", "controller": 64, "action": "punch-in"}], "faders": [{"controller": 7, "channel": 1, "control": "level", "part": 2}, {"controller": 10, "control": "pan", "part": "reference"}]}}"#
        let config = try ControlConfig.parse(Data(text.utf8), file: "c.json")
        #expect(config.midi.faders == [MIDIFader(controller: 7, channel: 1, control: .level, target: .part(2)), MIDIFader(controller: 10, control: .pan, target: .reference)])
        #expect(try ControlConfig.parse(config.serialized(), file: "c.json").midi.faders == config.midi.faders)
        var midi = config.midi
        #expect(midi.meaning(of: .controlChange(channel: 1, controller: 7, value: 3)) == .fader(config.midi.faders[0], value: 3))
        #expect(midi.meaning(of: .controlChange(channel: 1, controller: 7, value: 2)) == .fader(config.midi.faders[0], value: 2))
        #expect(midi.meaning(of: .controlChange(channel: 2, controller: 7, value: 90)) == nil)  // another channel: not this fader
        #expect(midi.meaning(of: .controlChange(channel: 9, controller: 10, value: 0)) == .fader(config.midi.faders[1], value: 0))
        #expect(midi.meaning(of: .controlChange(channel: 1, controller: 64, value: 127)) == .action(.punchIn))
        #expect(midi.meaning(of: .controlChange(channel: 1, controller: 64, value: 120)) == nil)

        // Learning: the pedal's controller becomes part 1's pan; part 2's level moves to controller 20.
        var learned = try ControlConfig.learning(MIDIFader(controller: 64, channel: 1, control: .pan, target: .part(1)), into: config.serialized(), file: "c.json")
        learned = try ControlConfig.learning(MIDIFader(controller: 20, channel: 1, control: .level, target: .part(2)), into: learned, file: "c.json")
        let after = try ControlConfig.parse(learned, file: "c.json")
        #expect(after.midi.bindings.isEmpty)
        #expect(Set(after.midi.faders.map(\.controller)) == [10, 64, 20])
        #expect(after.midi.faders.first { $0.target == .part(2) }?.controller == 20)
        // And an action learned on a fader's controller takes it back.
        let back = try ControlConfig.parse(try ControlConfig.learning(MIDIBinding(event: .controlChange(20), channel: 1, action: .stop), into: learned, file: "c.json"), file: "c.json")
        #expect(!back.midi.faders.contains { $0.controller == 20 })
        #expect(MIDILearner.fader(.noteOn(channel: 1, note: 60, velocity: 10), control: .level, target: .part(1)) == nil)
        #expect(MIDILearner.fader(.controlChange(channel: 4, controller: 11, value: 0), control: .level, target: .reference) == MIDIFader(controller: 11, channel: 4, control: .level, target: .reference))
    }

    /// A fader's travel: 100 is the part's own level, 127 about +4 dB, each
    /// halving −12 dB, 0 silence; a pan knob's 64 the centre.
    @Test func faderTravel() {
        #expect(MIDIFader.decibels(100) == 0)
        #expect(abs(MIDIFader.decibels(127)! - 4.155) < 0.01)
        #expect(abs(MIDIFader.decibels(50)! - -12.04) < 0.01)
        #expect(MIDIFader.decibels(1) == -60)
        #expect(MIDIFader.decibels(0) == nil)
        #expect(MIDIFader.pan(64) == 0 && MIDIFader.pan(127) == 1 && MIDIFader.pan(0) == -1 && MIDIFader.pan(1) == -1)
    }
}

@Suite struct DispatchTests {
    /// A CC 64 pedal press, from raw bytes to the engine: applied in the
    /// next period, recording starts on exactly the next barline's sample.
    @Test(arguments: [128, 500])
    func aPedalPunchLandsOnTheNextBarline(period: Int) throws {
        let score = try Acasong.parse(String(contentsOf: ControlConfigTests.shipped.replacingOccurrences(of: "Config/controls.json", with: "Songs/simple-harmony.acasong").asFileURL, encoding: .utf8))
        let schedule = try Schedule(score: score)
        var core = EngineCore(schedule: schedule, mixes: score.parts.map { _ in PartMix() }, maximumFrames: period)
        let link = core.link
        var decoder = MIDIDecoder()
        var midi = MIDIInterpreter(bindings: [MIDIBinding(event: .controlChange(64), action: .punchIn)])
        var dispatcher = ActionDispatcher(quantize: .bar)
        link.send(.play)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: period)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: period)
        defer { left.deallocate(); right.deallocate() }
        var events: [EngineEvent] = []
        var pressedAt: Int64?
        var appliedBy: Int64?
        for index in 0..<(Int(schedule.barlines[2]) / period + 2) {
            if index == Int(schedule.barlines[1]) / period + 3 {
                // The pedal goes down (with a ramp of values) while playing measure 2.
                for message in decoder.feed([0xB0, 64, 90, 64, 127, 64, 127]) {
                    if let action = midi.action(for: message), case .engine(let commands) = dispatcher.dispatch(action, snapshot: link.snapshot()) {
                        for command in commands { link.send(command) }
                    }
                }
                pressedAt = link.snapshot().position
            }
            core.process(left: left, right: right, frames: period)
            if pressedAt != nil && appliedBy == nil { appliedBy = core.renderer.position }
            while let event = link.nextEvent() { events.append(event) }
        }
        let press = try #require(pressedAt)
        #expect(appliedBy! - press == Int64(period), "applied within the next period")
        let barline = schedule.barlines.first { $0 >= press }!
        #expect(events.filter { if case .recordingStarted = $0 { true } else { false } } == [.recordingStarted(at: barline)])
    }

    @Test func actionsBecomeCommandsOrBoxWork() {
        var dispatcher = ActionDispatcher(quantize: .beat)
        var snapshot = EngineSnapshot(serial: 1, position: 0, state: .stopped, measure: 3, beat: 1, looping: false, currentMIDI: [], partPeaks: [], outputPeak: 0, refusedCommands: 0)
        #expect(dispatcher.dispatch(.playPause, snapshot: snapshot) == .engine([.play]))
        #expect(dispatcher.dispatch(.punchOut, snapshot: snapshot) == .ignored)
        snapshot.state = .playing
        #expect(dispatcher.dispatch(.playPause, snapshot: snapshot) == .engine([.stop, .locate(measure: 3)]))
        #expect(dispatcher.dispatch(.punchIn, snapshot: snapshot) == .engine([.record(.beat)]))
        #expect(dispatcher.dispatch(.loopStartHere, snapshot: snapshot) == .ignored)
        snapshot.measure = 5
        #expect(dispatcher.dispatch(.loopEndHere, snapshot: snapshot) == .engine([.loop(3...5)]))
        snapshot.looping = true
        #expect(dispatcher.dispatch(.loop, snapshot: snapshot) == .engine([.loop(nil)]))
        #expect(dispatcher.dispatch(.nextMeasure, snapshot: snapshot) == .engine([.locate(measure: 6)]))
        #expect(dispatcher.dispatch(.metronome, snapshot: snapshot) == .engine([.metronome(0.4)]))
        #expect(dispatcher.dispatch(.metronome, snapshot: snapshot) == .engine([.metronome(0)]))
        #expect(dispatcher.dispatch(.nextPart, snapshot: snapshot) == .box(.nextPart))
        #expect(dispatcher.dispatch(.undoTake, snapshot: snapshot) == .box(.undoTake))
    }
}

extension String {
    var asFileURL: URL { URL(fileURLWithPath: self) }
}

@Suite struct LearningAndFeedbackTests {
    /// Learning a binding replaces the same event's binding, keeps the rest
    /// of the file, and the result parses.
    @Test func learningRewritesOneBinding() throws {
        let original = try Data(contentsOf: URL(fileURLWithPath: ControlConfigTests.shipped))
        let before = try ControlConfig.parse(original, file: "controls.json")
        let learned = try ControlConfig.learning(MIDIBinding(event: .note(38), channel: 10, action: .undoTake), into: original, file: "controls.json")
        let after = try ControlConfig.parse(learned, file: "controls.json")
        #expect(after.midi.bindings.count == before.midi.bindings.count, "replaced, not added")
        var interpreter = after.midi
        #expect(interpreter.action(for: .noteOn(channel: 10, note: 38, velocity: 100)) == .undoTake)
        #expect(after.footSwitches == before.footSwitches)
        let added = try ControlConfig.learning(MIDIBinding(event: .program(9), action: .nextSong), into: learned, file: "controls.json")
        #expect(try ControlConfig.parse(added, file: "controls.json").midi.bindings.count == before.midi.bindings.count + 1)
    }

    @Test func feedbackLightsFollowTheState() throws {
        let config = try ControlConfig.parse(Data(#"{"midi": {"feedback": [{"state": "recording", "note": 38, "channel": 10}, {"state": "playing", "controller": 20}]}}"#.utf8), file: "c.json")
        let feedback = config.feedback
        #expect(feedback.messages(from: [], to: ["playing"]) == [0xB0, 20, 127])
        #expect(feedback.messages(from: ["playing"], to: ["playing", "recording"]) == [0x99, 38, 127])
        #expect(feedback.messages(from: ["playing", "recording"], to: []) == [0x89, 38, 0, 0xB0, 20, 0])
        #expect(throws: ControlConfigError.self) { try ControlConfig.parse(Data(#"{"midi": {"feedback": [{"state": "recording"}]}}"#.utf8), file: "c.json") }
    }

    @Test func consoleKeysAreDistinctAndListed() {
        let keys = ConsoleKeys.bindings.map(\.key)
        #expect(Set(keys).count == keys.count)
        #expect(ConsoleKeys.action(for: " ") == .playPause && ConsoleKeys.action(for: "r") == .record && ConsoleKeys.action(for: "?") == nil)
        #expect(ConsoleKeys.help.contains("space  play-pause"))
    }
}

@Suite struct BoxConfigTests {
    @Test func theShippedSettingsLoad() throws {
        let path = ControlConfigTests.shipped.replacingOccurrences(of: "controls.json", with: "acapella.json")
        let config = try BoxConfig.parse(try Data(contentsOf: URL(fileURLWithPath: path)), file: "acapella.json")
        #expect(config.countIn == 1 && !config.metronome && config.quantize == .bar && config.part == 2)
        #expect(config.consoleReadout && config.lcdHost == "127.0.0.1" && config.lcdPort == 13_666 && config.device == nil)
        #expect(config.webEnabled && config.webPort == 8080 && config.webGuests == .none && config.webBind == nil)
        #expect(try BoxConfig.parse(Data(#"{"web": false}"#.utf8), file: "a.json").webEnabled == false)
        let custom = try BoxConfig.parse(Data(#"{"web": {"port": 9000, "bind": "127.0.0.1", "guests": "view"}}"#.utf8), file: "a.json")
        #expect(custom.webPort == 9000 && custom.webBind == "127.0.0.1" && custom.webGuests == .view && custom.webName == "acapella")
        #expect(try BoxConfig.parse(Data(#"{"web": {"name": "Alto-Box"}}"#.utf8), file: "a.json").webName == "alto-box")
        #expect(try BoxConfig.parse(Data(#"{"web": {"name": false}}"#.utf8), file: "a.json").webName == nil)
        #expect(try BoxConfig.parse(custom.serialized(), file: "a.json") == custom)
        // A recording set: parts (names or numbers) on their inputs; written back equal.
        let set = try BoxConfig.parse(Data(#"{"together": {"Soprano": 1, "Alto": 2, "3": 3, "Bass": 4}}"#.utf8), file: "a.json")
        #expect(set.together == ["Soprano": 1, "Alto": 2, "3": 3, "Bass": 4])
        #expect(try BoxConfig.parse(set.serialized(), file: "a.json") == set)
    }

    @Test(arguments: [
        (#"{"colour": 1}"#, "a.json: colour: unknown key; known: device, dataDirectory, countIn, metronome, confirmations, quantize, part, together, song, singer, usb, readouts, powerOff, web, comment"),
        (#"{"together": {"Soprano": 0}}"#, "a.json: together: expected an object of parts (names or numbers) and their inputs from 1 to 32, a microphone each, like {\"Soprano\": 1, \"Alto\": 2}"),
        (#"{"together": {"Soprano": 1, "Alto": 1}}"#, "a.json: together: expected an object of parts (names or numbers) and their inputs from 1 to 32, a microphone each, like {\"Soprano\": 1, \"Alto\": 2}"),
        (#"{"together": {}}"#, "a.json: together: expected an object of parts (names or numbers) and their inputs from 1 to 32, a microphone each, like {\"Soprano\": 1, \"Alto\": 2}"),
        (#"{"together": "Soprano=1"}"#, "a.json: together: expected an object of parts (names or numbers) and their inputs from 1 to 32, a microphone each, like {\"Soprano\": 1, \"Alto\": 2}"),
        (#"{"together": {"Soprano": 1, "soprano": 2}}"#, "a.json: together: expected an object of parts (names or numbers) and their inputs from 1 to 32, a microphone each, like {\"Soprano\": 1, \"Alto\": 2}"),
        (#"{"powerOff": "yes"}"#, "a.json: powerOff: expected true, false or a command as a list of strings"),
        (#"{"powerOff": []}"#, "a.json: powerOff: expected true, false or a command as a list of strings"),
        (#"{"countIn": 9}"#, "a.json: countIn: expected a whole number from 0 to 4"),
        (#"{"metronome": "yes"}"#, "a.json: metronome: expected true or false"),
        (#"{"device": "hw:0"}"#, "a.json: device: expected \"alsa\", \"alsa:NAME\", \"sim\" or \"sim:…\", not 'hw:0'"),
        (#"{"readouts": {"lcd": "localhost"}}"#, "a.json: readouts.lcd: expected \"HOST:PORT\" or false"),
        (#"{"readouts": {"tv": true}}"#, "a.json: readouts.tv: unknown key; known: console, lcd"),
        (#"[1, 2]"#, "a.json: not a JSON object (truncated or damaged?)"),
        (#"{"web": {"port": 0}}"#, "a.json: web.port: expected a whole number from 1 to 65535"),
        (#"{"web": {"guests": "all"}}"#, "a.json: web.guests: expected \"view\" or \"none\""),
        (#"{"web": {"tls": true}}"#, "a.json: web.tls: unknown key; known: port, bind, guests, name"),
        (#"{"web": "on"}"#, "a.json: web: expected false or an object with port, bind, guests and name"),
        (#"{"web": {"name": "-box"}}"#, "a.json: web.name: expected a host name of letters, digits and inner hyphens (up to 63), or false"),
    ])
    func wrongSettingsSayWhere(text: String, message: String) {
        do {
            _ = try BoxConfig.parse(Data(text.utf8), file: "a.json")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description == message)
        }
    }

    /// Whatever parses writes back and parses equal (the fuzz oracle, on the shipped files).
    @Test func settingsWriteBackEqual() throws {
        let path = ControlConfigTests.shipped.replacingOccurrences(of: "controls.json", with: "acapella.json")
        let settings = try BoxConfig.parse(try Data(contentsOf: URL(fileURLWithPath: path)), file: "a.json")
        #expect(try BoxConfig.parse(settings.serialized(), file: "a.json") == settings)
        let controls = try ControlConfig.parse(Data(contentsOf: URL(fileURLWithPath: ControlConfigTests.shipped)), file: ControlConfigTests.shipped)
        #expect(try ControlConfig.parse(controls.serialized(), file: "c.json") == controls)
    }

    @Test func powerOffChoices() throws {
        #expect(try BoxConfig.parse(Data(#"{"powerOff": true}"#.utf8), file: "a.json").powerOffCommand == ["systemctl", "poweroff"])
        #expect(try BoxConfig.parse(Data(#"{"powerOff": false}"#.utf8), file: "a.json").powerOffCommand == nil)
        #expect(try BoxConfig.parse(Data(#"{"powerOff": ["sudo", "poweroff"]}"#.utf8), file: "a.json").powerOffCommand == ["sudo", "poweroff"])
        #expect(try BoxConfig.parse(Data("{}".utf8), file: "a.json").powerOffCommand == nil)
    }

    @Test func lcdCanBeTurnedOff() throws {
        let config = try BoxConfig.parse(Data(#"{"readouts": {"lcd": false, "console": false}}"#.utf8), file: "a.json")
        #expect(config.lcdHost == nil && !config.consoleReadout)
    }
}

@Suite struct MIDILearnerTests {
    /// The next note-on, program change or controller press is bound; a
    /// controller's values below the threshold, a held pedal's further
    /// values, note-offs and clock bytes are not.
    @Test func learnsWhatTheBoxWouldHear() {
        var learner = MIDILearner(action: .punchIn, threshold: 64)
        #expect(learner.learn(.controlChange(channel: 1, controller: 64, value: 10)) == nil)
        #expect(learner.learn(.controlChange(channel: 1, controller: 64, value: 100)) == MIDIBinding(event: .controlChange(64), channel: 1, action: .punchIn))
        #expect(learner.learn(.controlChange(channel: 1, controller: 64, value: 127)) == nil, "held: not a new press")
        #expect(learner.learn(.noteOff(channel: 10, note: 36)) == nil)
        #expect(learner.learn(.realtime(0xF8)) == nil)
        #expect(learner.learn(.noteOn(channel: 10, note: 36, velocity: 90)) == MIDIBinding(event: .note(36), channel: 10, action: .punchIn))
        #expect(learner.learn(.programChange(channel: 2, program: 5)) == MIDIBinding(event: .program(5), channel: 2, action: .punchIn))
    }
}
