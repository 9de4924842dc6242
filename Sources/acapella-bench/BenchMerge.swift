import AcapellaTrials
import AcapellaBox
import AcapellaCLI
import AcapellaProject
import Foundation

/// `acapella-bench merge`: issue 21's merge measure on a shipped song at
/// 48 kHz — 5 singers × 4 parts × 3 takes, each singer's project carried
/// as a bundle and merged into one (`ChoirMerge`, the harness the tests
/// hold to the same figures): takes present and bit-identical, lost, the
/// mix against the same takes recorded into one project; the merge's time
/// beside `cp` of the same take files (the least any merge must do).
func benchMerge(_ arguments: ParsedArguments) throws -> Int32 {
    let folder = NSTemporaryDirectory() + "acapella-bench-merge-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    guard let songs = ShippedFiles.songs, let text = try? String(contentsOfFile: songs + "/amazing-grace.acasong", encoding: .utf8) else {
        throw CLIError("bench merge: the shipped songs (Songs/) are not found", exitCode: 1)
    }
    let outcome = try ChoirMerge.run(in: folder, songText: text, sampleRate: 48_000)
    print(String(format: "bench merge: 5 singers × 4 parts × 3 takes of Amazing Grace (%.1f s each, 48 kHz), each singer's project as a bundle, merged into one", outcome.takeSeconds))
    print("  takes recorded \(outcome.recorded), in the merged project \(outcome.present), bit-identical \(outcome.identical), lost \(outcome.lost)   goal: all, 0 lost: \(outcome.present == outcome.recorded && outcome.identical == outcome.recorded && outcome.lost == 0 ? "met" : "NOT met")")
    print("  merging the same bundles again: \(outcome.alreadyHereOnRepeat) of \(outcome.recorded) found already there, none copied twice")
    print(String(format: "  the choir's mix against the same takes recorded into one project: largest difference %g over %d frames: %@", Double(outcome.mixDifference), outcome.mixFrames,
                 outcome.mixDifference == 0 ? "equal" : "NOT equal"))
    // The peer: cp of the same take files (unpacked) into an empty folder.
    let copies = folder + "/cp-copy"
    try FileManager.default.createDirectory(atPath: copies, withIntermediateDirectories: true)
    let sources = (0..<5).map { "\(folder)/unpacked\($0)/singer\($0 + 1).acaproj/takes" }
    let started = DispatchTime.now().uptimeNanoseconds
    for (index, source) in sources.enumerated() {
        _ = capture(["sh", "-c", "mkdir -p '\(copies)/\(index)' && cp '\(source)'/*.wav '\(copies)/\(index)/' && sync -f '\(copies)'"])
    }
    let copySeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    let megabytes = Double(outcome.bytes) / 1_048_576
    print(String(format: "  time: unpack 5 bundles and merge %.0f MB %.2f s (each file flushed)   cp of the same files + sync %.2f s   ratio %.2f×", megabytes,
                 outcome.mergeSeconds, copySeconds, outcome.mergeSeconds / max(copySeconds, 1e-9)))
    return outcome.present == outcome.recorded && outcome.lost == 0 && outcome.mixDifference == 0 ? 0 : 1
}
