import AcapellaTrials
import AcapellaBox
import AcapellaCLI
import AcapellaDevices
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
    // Leaving a load out says what each costs (`--without stress,web,analysis`).
    let without = Set((arguments.value("--without") ?? "").split(separator: ",").map(String.init))
    guard without.isSubset(of: ["stress", "web", "analysis"]) else { throw CLIError("--without expects stress, web or analysis, separated by commas") }
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
    box.arguments = ["run", "--config", settings, "--data", folder + "/data", "--device", "sim:speed=1,period=128" + (arguments.flags.contains("--unlocked") ? ",lock=0" : ""), "--project", project.path, "--play",
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
    for _ in 0..<(without.contains("web") ? 0 : 10) { try start(["curl", "-s", "-N", "-b", cookies, "-o", "/dev/null", "--max-time", String(seconds + 5), web + "/events"]) }
    if !without.contains("analysis") { try start(["sh", "-c", "end=$(($(date +%s) + \(seconds))); while [ $(date +%s) -lt $end ]; do \"$0\" analyze \"$1\" --part \"$2\" >/dev/null 2>&1; done",
               executable, project.path, score.parts[0].name]) }
    let stress = FileManager.default.isExecutableFile(atPath: "/usr/bin/stress-ng") && !without.contains("stress")
    // The peer: cyclictest (Debian's rt-tests), a thread at the same
    // priority waking every 128-frame period under the same load — how
    // late this machine wakes a real-time thread at all.
    let peerLog = folder + "/cyclictest.txt"
    let peer = FileManager.default.isExecutableFile(atPath: "/usr/bin/cyclictest")
    if peer {
        try start(["sh", "-c", "exec cyclictest -m -q -p 70 -i \(128 * 1_000_000 / rate) -D \(seconds) -h 2700 > \"$0\" 2>&1", peerLog])
    }
    if stress { try start(["stress-ng", "--cpu", "1", "--timeout", "\(seconds)s", "--quiet"]) }
    print("bench load: the box in the simulated room at real time for \(seconds) s, 128-frame periods, memory \(arguments.flags.contains("--unlocked") ? "NOT locked" : "locked"): 32 parts (16 takes streamed), the needle, "
          + (without.contains("web") ? "NO web clients, " : "10 web clients on its events, ")
          + (without.contains("analysis") ? "NO analysis beside it, " : "a take analysed over and over beside it, ")
          + (stress ? "the other core busy (stress-ng --cpu 1)" : "the other core NOT loaded" + (without.contains("stress") ? "" : " (install stress-ng)")))
    let stealBefore = stealTicks()
    box.waitUntilExit()
    let steal = Double(stealTicks() - stealBefore) / Double(sysconf(Int32(_SC_CLK_TCK)))
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
    print(String(format: "  time the hypervisor took from this machine's CPUs meanwhile (steal): %.2f s of %d s × %d CPUs", steal, seconds, ProcessInfo.processInfo.activeProcessorCount))
    if peer, let wakeups = CyclictestHistogram(text: (try? String(contentsOfFile: peerLog, encoding: .utf8)) ?? "") {
        print(String(format: "  cyclictest beside it (SCHED_FIFO 70, woken every %d µs): %d wakeups, p99.9 %d µs late, worst %d µs, %d more than a period late",
                     128 * 1_000_000 / rate, wakeups.total, wakeups.percentile(0.999), wakeups.maximum, wakeups.overflows))
        print("    (a wakeup later than a period is an xrun for any program on this machine: the box's late periods beside it are the platform's where they match)")
    } else {
        print("  cyclictest beside it: not run (install Debian's rt-tests for how late this machine wakes any real-time thread)")
    }
    return met ? 0 : 1
}

/// The CPUs' steal time so far (clock ticks, /proc/stat): time a
/// hypervisor gave this virtual machine's CPUs to others.
func stealTicks() -> Int {
    guard let line = (ProcFile.read("/proc/stat") ?? "").split(separator: "\n").first else { return 0 }
    let fields = line.split(separator: " ")
    return fields.count > 8 ? Int(fields[8]) ?? 0 : 0
}

/// What `cyclictest -h N -q` printed: wakeup latencies (µs) by bucket,
/// those over N, the worst.
struct CyclictestHistogram {
    var buckets: [Int: Int] = [:]
    var total = 0
    var overflows = 0
    var maximum = 0

    init?(text: String) {
        for line in text.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if words.count == 2, let bucket = Int(words[0]), let count = Int(words[1]) {
                buckets[bucket] = count
            } else if line.hasPrefix("# Total:"), let value = Int(words.last ?? "") {
                total = value
            } else if line.hasPrefix("# Max Latencies:"), let value = Int(words.last ?? "") {
                maximum = value
            } else if line.hasPrefix("# Histogram Overflows:"), let value = Int(words.last ?? "") {
                overflows = value
            }
        }
        guard total > 0 else { return nil }
    }

    /// The latency (µs) that `share` of the wakeups stay within (the
    /// histogram's end when the overflows reach it).
    func percentile(_ share: Double) -> Int {
        let wanted = Int((Double(total) * share).rounded(.up))
        var seen = 0
        for bucket in buckets.keys.sorted() {
            seen += buckets[bucket] ?? 0
            if seen >= wanted { return bucket }
        }
        return (buckets.keys.max() ?? 0) + 1
    }
}
