// libFuzzer entry point for what users hand-edit in a project: the
// manifest and the take sidecars. Any input must be read or refused with a
// reason — never a crash or an arithmetic trap — and whatever is accepted
// must write back and read back equal.
//
//   swift build -c release --sanitize=fuzzer -Xswiftc -DFUZZING --product acapella-fuzz-manifest
//   .build/release/acapella-fuzz-manifest -runs=1000000 Tests/Fuzz/manifest-corpus
//
// Built normally (without FUZZING) it is a replay driver (see FuzzParser).
import AcapellaProject
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifest(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    checkManifest(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// The song's parts the checks are made against.
let parts = ["Soprano", "Alto", "Tenor", "Bass"]

/// Every input as a manifest and as a sidecar.
func checkManifest(_ bytes: [UInt8]) {
    let data = Data(bytes)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    switch Manifest.decode(data) {
    case .success(var manifest):
        // As a writer opens it: checked, numbered; then saved and read again.
        let original = manifest
        let first = manifest.check(parts: parts)
        for take in manifest.takes where first.conditions[take.id] == nil {
            _ = take.range?.samples.count
            for dropout in take.dropouts { _ = dropout.samples.count }
        }
        guard let written = try? encoder.encode(manifest), case .success(var again) = Manifest.decode(written), again == manifest else {
            fatalError("an accepted manifest did not read back equal")
        }
        let second = again.check(parts: parts)
        precondition(!second.changed, "a checked manifest changed on its second check")
        precondition(second.conditions.count == first.conditions.count, "the second check flagged other takes")
        // A pure function of the records: the same numbers whatever order they
        // are listed in (when every take is sound: of two with one file, the first listed keeps it).
        var shuffled = original
        shuffled.takes.reverse()
        _ = shuffled.check(parts: parts)
        func numbers(_ manifest: Manifest) -> [String: Int] { Dictionary(manifest.takes.map { ($0.file, $0.id) }, uniquingKeysWith: min) }
        precondition(!first.conditions.isEmpty || numbers(shuffled) == numbers(manifest), "the numbering depends on the order of the takes")
    case .failure(let problem):
        precondition(!problem.description.isEmpty, "a refused manifest must say why")
    }
    if let take = try? JSONDecoder().decode(TakeRecord.self, from: data) {
        _ = take.isPunch
        guard let written = try? encoder.encode(take), let again = try? JSONDecoder().decode(TakeRecord.self, from: written), again == take else {
            fatalError("an accepted sidecar did not read back equal")
        }
        var alone = Manifest(sampleRate: 48_000)
        alone.takes = [take]
        _ = alone.check(parts: parts)
    }
}

#if !FUZZING
import AcapellaFuzzSupport

@main
struct ReplayDriver {
    static func main() { replayFiles(checkManifest) }
}
#endif
