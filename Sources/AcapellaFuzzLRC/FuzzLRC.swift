// libFuzzer entry point for LRC files (timed lyrics that come with a
// reference recording). Any input must be read or refused in one line
// naming the file — never a crash — and whatever is read must write back
// and read back equal.
//
//   swift build -c release --sanitize=fuzzer -Xswiftc -DFUZZING --product acapella-fuzz-lrc
//   .build/release/acapella-fuzz-lrc -runs=1000000 Tests/Fuzz/lrc-corpus
//
// Built normally (without FUZZING) it is a replay driver (see FuzzParser).
import AcapellaScore
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLRC(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    checkLRC(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

func checkLRC(_ bytes: [UInt8]) {
    do {
        var lyrics = try LRC.parse(bytes, file: "song.lrc")
        precondition(lyrics.skipped.allSatisfy { $0.hasPrefix("line ") && !$0.contains("\n") }, "each note a located line")
        precondition(zip(lyrics.lines, lyrics.lines.dropFirst()).allSatisfy { $0.milliseconds <= $1.milliseconds }, "lines in order of time")
        lyrics.skipped = []
        guard let again = try? LRC.parse(Array(lyrics.text().utf8), file: "song.lrc"), again == lyrics else {
            fatalError("accepted lyrics did not read back equal: \(lyrics) vs \(String(describing: try? LRC.parse(Array(lyrics.text().utf8), file: "song.lrc")))")
        }
    } catch {
        precondition(error.description.hasPrefix("song.lrc: ") && !error.description.contains("\n") && !error.description.contains("\r"), "one line naming the file")
    }
}

#if !FUZZING
import AcapellaFuzzSupport

@main
struct ReplayDriver {
    static func main() { replayFiles(checkLRC) }
}
#endif
