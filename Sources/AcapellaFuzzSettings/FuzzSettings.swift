// libFuzzer entry point for the two settings files a user edits by hand:
// the box's settings (acapella.json) and the controls (controls.json).
// Any input must be read or refused in one line naming the file — never a
// crash — and whatever is accepted must write back and read back equal.
//
//   swift build -c release --sanitize=fuzzer -Xswiftc -DFUZZING --product acapella-fuzz-settings
//   .build/release/acapella-fuzz-settings -runs=1000000 Tests/Fuzz/settings-corpus
//
// Built normally (without FUZZING) it is a replay driver (see FuzzParser).
import AcapellaControl
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSettings(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    checkSettings(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// Every input as both files.
func checkSettings(_ bytes: [UInt8]) {
    let data = Data(bytes)
    do {
        let settings = try BoxConfig.parse(data, file: "acapella.json")
        guard let again = try? BoxConfig.parse(settings.serialized(), file: "acapella.json"), again == settings else {
            fatalError("accepted settings did not read back equal")
        }
    } catch {
        precondition(error.description.utf8.starts(with: "acapella.json: ".utf8) && !error.description.utf8.contains(10), "one line naming the file")
    }
    do {
        let controls = try ControlConfig.parse(data, file: "controls.json")
        guard let again = try? ControlConfig.parse(controls.serialized(), file: "controls.json"), again == controls else {
            fatalError("accepted controls did not read back equal")
        }
        // Learning a binding into an accepted file keeps it valid.
        let learned = try ControlConfig.learning(MIDIBinding(event: .note(60), channel: 1, action: .stop), into: data, file: "controls.json")
        _ = try ControlConfig.parse(learned, file: "controls.json")
    } catch {
        precondition(error.description.utf8.starts(with: "controls.json: ".utf8) && !error.description.utf8.contains(10), "one line naming the file")
    }
}

#if !FUZZING
import AcapellaFuzzSupport

@main
struct ReplayDriver {
    static func main() { replayFiles(checkSettings) }
}
#endif
