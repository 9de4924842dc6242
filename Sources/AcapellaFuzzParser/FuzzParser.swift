// libFuzzer entry point for the .acasong parser. Any input must end in a
// score or a list of located errors — never a crash, a hang or a trap.
//
//   swift build -c release --sanitize=fuzzer -Xswiftc -DFUZZING --product acapella-fuzz-parser
//   .build/release/acapella-fuzz-parser -runs=1000000 Tests/Fuzz/corpus
//
// Built normally (without FUZZING) it is a replay driver: it runs the same
// check on each file named on the command line, to reproduce a crash.
import AcapellaScore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    checkParser(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// Parses; whatever parses must print canonically and parse back to itself,
/// whatever fails must say why.
func checkParser(_ bytes: [UInt8]) {
    do {
        let score = try Acasong.parse(bytes: bytes)
        let printed = Acasong.serialize(score)
        guard let again = try? Acasong.parse(printed), again == score, Acasong.serialize(again) == printed else {
            fatalError("round trip failed for an accepted input")
        }
    } catch {
        precondition(!error.errors.isEmpty, "a rejected input must say why")
    }
}

#if !FUZZING
import AcapellaFuzzSupport

@main
struct ReplayDriver {
    static func main() { replayFiles(checkParser) }
}
#endif
