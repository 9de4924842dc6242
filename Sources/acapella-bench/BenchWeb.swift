import AcapellaBox
import AcapellaCLI
import AcapellaScore
import Foundation

/// The web page's four measures (Tools/web-bench.py, driving Debian's
/// Chromium through Selenium against the box beside this program): cursor
/// accuracy, publication → event in the browser, recording under load
/// (10 event streams, 2 mixdowns downloading), and the first paint of a
/// 3-minute song's score. No peer does this; the goals stand beside.
func benchWeb(_ arguments: ParsedArguments) throws -> Int32 {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    let acapella = executable.appendingPathComponent("acapella").path
    guard FileManager.default.isExecutableFile(atPath: acapella) else { throw CLIError("bench web: no acapella program at \(acapella); build it first", exitCode: 1) }
    guard let tool = ShippedFiles.path("Tools/web-bench.py", installed: "share/acapella/tools/web-bench.py") else {
        throw CLIError("bench web: Tools/web-bench.py not found; run from the repository", exitCode: 1)
    }
    let folder = NSTemporaryDirectory() + "acapella-bench-web-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var score = try threeMinuteScore(rate: 48_000)
    score.title = "Three Minutes"
    let song = folder + "/three-minutes.acasong"
    try Acasong.serialize(score).write(toFile: song, atomically: true, encoding: .utf8)
    print("bench web: the box in the simulated room (real time), its page in headless Chromium; a generated 3-minute 4-part song for the paint")
    let seconds = try arguments.int("--repeat", default: 12, range: 4...120)
    guard let output = capture(["/usr/bin/python3", tool, "--acapella", acapella, "--song", song, "--seconds", String(seconds)], passErrors: true) else {
        throw CLIError("bench web: python3 will not run", exitCode: 1)
    }
    print(output, terminator: "")
    return output.contains("  paint ") ? 0 : 1
}
