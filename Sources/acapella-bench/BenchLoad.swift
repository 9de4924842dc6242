import AcapellaBox
import AcapellaCLI
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `acapella-bench load`: the render loop with the load a box really has,
/// in the simulated room at real time (its thread on SCHED_FIFO, as a
/// card's is): 32 parts, 16 of them playing takes streamed from disk, the
/// pitch needle, the web page with 10 clients streaming its events, a
/// take being analysed over and over beside it (`acapella analyze`, the
/// work the box does after each take), and the other core kept busy by
/// `stress-ng`. The box logs its render times and the periods the room
/// saw finish late (an xrun on a card) when it stops; this prints them
/// against the goal: p99.9 ≤ 3 % of a 128-frame period, no xrun.
func benchLoad(_ arguments: ParsedArguments) throws -> Int32 {
    let seconds = try arguments.int("--seconds", default: 600, range: 10...3_600)
    let rate = 48_000
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("acapella").path
    guard FileManager.default.isExecutableFile(atPath: executable) else { throw CLIError("bench load: no acapella program at \(executable); build it first", exitCode: 1) }
    let folder = NSTemporaryDirectory() + "acapella-bench-load-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let settings = folder + "/acapella.json"
    try #"{ "readouts": { "console": false, "lcd": false } }"#.write(toFile: settings, atomically: true, encoding: .utf8)

    // 32 parts lasting longer than the run; a full take on every other part.
    let score = try longScore(rate: rate, parts: 32, seconds: seconds + 30)
    let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: rate))
    let project = try Project.create(at: folder + "/load.acaproj", songText: Acasong.serialize(score), sampleRate: rate)
    let frames = Int(schedule.endSample)
    let take = (0..<frames).map { Float(0.2 * sin(2 * Double.pi * 220 * Double($0 % rate) / Double(rate))) }
    for part in stride(from: 0, to: 32, by: 2) {
        _ = try ChoirMerge.record(take, part: score.parts[part].name, into: project, options: schedule.options, offset: Int64(part))
    }
    project.close()

    let port = 20_000 + Int(getpid() % 20_000)
    let box = Process()
    box.executableURL = URL(fileURLWithPath: executable)
    box.arguments = ["run", "--config", settings, "--data", folder + "/data", "--device", "sim:speed=1,period=128", "--project", project.path, "--play",
                     "--web", String(port), "--seconds", String(seconds)]
    let log = folder + "/box.log"
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    box.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    box.standardOutput = FileHandle.nullDevice
    box.standardInput = FileHandle.nullDevice
    try box.run()
    var code: String?
    for _ in 0..<200 where code == nil {
        usleep(50_000)
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        if let range = text.range(of: #"pairing code [0-9]{6}"#, options: .regularExpression) { code = String(text[range].suffix(6)) }
    }
    guard let code else { throw CLIError("bench load: the box never printed its pairing code:\n" + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""), exitCode: 1) }
    let web = "http://127.0.0.1:\(port)"
    let cookies = folder + "/cookies"
    _ = capture(["curl", "-s", "-c", cookies, "-o", "/dev/null", "-X", "POST", "--data", code, web + "/api/pair"])

    // The load: 10 event streams, the analysis over and over, the other core busy.
    var helpers: [Process] = []
    func start(_ command: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        helpers.append(process)
    }
    for _ in 0..<10 { try start(["curl", "-s", "-N", "-b", cookies, "-o", "/dev/null", "--max-time", String(seconds + 5), web + "/events"]) }
    try start(["sh", "-c", "end=$(($(date +%s) + \(seconds))); while [ $(date +%s) -lt $end ]; do \"$0\" analyze \"$1\" --part \"$2\" >/dev/null 2>&1; done",
               executable, project.path, score.parts[0].name])
    let stress = FileManager.default.isExecutableFile(atPath: "/usr/bin/stress-ng")
    if stress { try start(["stress-ng", "--cpu", "1", "--timeout", "\(seconds)s", "--quiet"]) }
    print("bench load: the box in the simulated room at real time for \(seconds) s, 128-frame periods: 32 parts (16 takes streamed), the needle, "
          + "10 web clients on its events, a take analysed over and over beside it, \(stress ? "the other core busy (stress-ng --cpu 1)" : "NO stress-ng (install it: the other core is not loaded)")")
    box.waitUntilExit()
    for helper in helpers where helper.isRunning { helper.terminate() }
    for helper in helpers { helper.waitUntilExit() }
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    guard let line = text.split(separator: "\n").last(where: { $0.contains("render: ") }) else {
        throw CLIError("bench load: the box printed no render times:\n" + text.split(separator: "\n").suffix(10).joined(separator: "\n"), exitCode: 1)
    }
    let summary = String(line[line.range(of: "render: ")!.upperBound...])
    print("  " + summary)
    let share = summary.range(of: #"= [0-9.]+ %"#, options: .regularExpression).flatMap { Double(summary[$0].dropFirst(2).dropLast(2)) } ?? .infinity
    let late = summary.range(of: #"; [0-9]+ periods late"#, options: .regularExpression).flatMap { Int(summary[$0].dropFirst(2).split(separator: " ")[0]) } ?? -1
    let misses = text.split(separator: "\n").filter { $0.contains("not read from the disk in time") }.count
    let met = share <= 3 && late == 0 && misses == 0
    print(String(format: "  p99.9 %.1f %% of the period (goal ≤ 3 %%), %d periods late (goal 0), %d stream misses said: %@", share, late, misses, met ? "met" : "NOT met"))
    return met ? 0 : 1
}
