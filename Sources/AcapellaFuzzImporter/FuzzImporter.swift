// libFuzzer entry point for the MusicXML importer. Any bytes — XML, zip,
// garbage — must end in a valid score or an ImportError; never a crash.
//
//   swift build -c release --sanitize=fuzzer -Xswiftc -DFUZZING --product acapella-fuzz-importer --scratch-path .build/fuzz
//   .build/fuzz/release/acapella-fuzz-importer -runs=100000 CORPUS_DIR
//
// Built normally it replays the files named on the command line.
import AcapellaMusicXML
import AcapellaScore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImporter(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    checkImporter(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// Imports as a user would (voices split, repeats unfolded) and as written
/// with every voice split; an accepted score must be valid and survive the
/// text format.
func checkImporter(_ bytes: [UInt8]) {
    for options in [ImportOptions(), ImportOptions(split: .always, unfold: false)] {
        guard let result = try? MusicXML.importScore(bytes: bytes, options: options) else { return }
        precondition(result.score.isValid, "importer produced an invalid score")
        let text = Acasong.serialize(result.score)
        guard let again = try? Acasong.parse(text), again == result.score else {
            fatalError("imported score does not round-trip through .acasong")
        }
    }
}

#if !FUZZING
import AcapellaFuzzSupport

@main
struct ReplayDriver {
    static func main() { replayFiles(checkImporter) }
}
#endif
