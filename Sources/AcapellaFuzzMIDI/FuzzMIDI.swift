// libFuzzer entry point for the raw-MIDI decoder and the interpreter: any
// bytes must decode to well-formed messages — never a crash or a trap.
//
//   swift build -c release --sanitize=fuzzer -Xswiftc -DFUZZING --product acapella-fuzz-midi --scratch-path .build/fuzz
//   .build/fuzz/release/acapella-fuzz-midi -runs=1000000 Tests/Fuzz/midi-corpus
//
// Built normally (without FUZZING) it replays the files named on the
// command line.
import AcapellaControl

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMIDI(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    checkMIDI(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// Decodes and interprets; every message must be in range.
func checkMIDI(_ bytes: [UInt8]) {
    var decoder = MIDIDecoder()
    var interpreter = MIDIInterpreter(bindings: [
        MIDIBinding(event: .controlChange(64), action: .punchIn), MIDIBinding(event: .note(60), action: .record),
        MIDIBinding(event: .program(1), action: .nextSong),
    ])
    interpreter.faders = [MIDIFader(controller: 7, control: .level, target: .part(2)), MIDIFader(controller: 10, channel: 3, control: .pan, target: .reference)]
    for message in decoder.feed(bytes) {
        switch message {
        case .noteOn(let c, let n, let v): precondition((1...16).contains(c) && (0...127).contains(n) && (1...127).contains(v))
        case .noteOff(let c, let n): precondition((1...16).contains(c) && (0...127).contains(n))
        case .controlChange(let c, let n, let v): precondition((1...16).contains(c) && (0...127).contains(n) && (0...127).contains(v))
        case .programChange(let c, let p): precondition((1...16).contains(c) && (0...127).contains(p))
        case .systemExclusive(let sysex): precondition(sysex.first == 0xF0 && sysex.last == 0xF7 && sysex.count <= MIDIDecoder.maximumSysexBytes + 1)
        case .realtime(let byte): precondition(byte >= 0xF8)
        }
        _ = interpreter.action(for: message)
        switch interpreter.meaning(of: message) {
        case .key(let note, let velocity)?: precondition((0...127).contains(note) && (0...127).contains(velocity))
        case .locate(let milliseconds)?: precondition((0..<(24 * 3_600_000)).contains(milliseconds), "a time code under 24 h")
        case .fader(let fader, let value)?:
            precondition((0...127).contains(value) && [7, 10].contains(fader.controller))
            if let decibels = MIDIFader.decibels(value) { precondition((-60...4.2).contains(decibels)) }
            precondition((-1...1).contains(MIDIFader.pan(value)))
        case .action?, nil: break
        }
        if case .systemExclusive(let sysex) = message { _ = MMCCommand.parse(sysex) }
    }
}

#if !FUZZING
import AcapellaFuzzSupport

@main
struct ReplayDriver {
    static func main() { replayFiles(checkMIDI) }
}
#endif
