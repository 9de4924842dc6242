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

/// `acapella-bench stream`: issue 22's memory and disk measures.
///
/// Memory: the box as a process (`acapella run --play` in the simulated
/// room at real time) on a project of 32 parts × 10 minutes with a full
/// take and two punch-ins on every part, and on one of 8 parts × 3
/// minutes; its peak resident size (VmHWM) after 12 s of playing, takes
/// streamed, beside the same box decoding the 8-part takes into memory
/// (`--takes memory`: how every take played before).
///
/// Disk: the engine and the butler thread in this process, 32 parts
/// playing at (sped-up) real time through the punch-ins and a locate,
/// every take file read through one shared budget of bytes per second (a
/// slow card, simulated: the files are in the page cache); the slowest
/// budget with no block missed, against what the parts need.
func benchStream(_ arguments: ParsedArguments) throws -> Int32 {
    let minutes = try arguments.int("--minutes", default: 10, range: 1...60)
    let parts = try arguments.int("--parts", default: 32, range: 2...64)
    let rate = 48_000
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("acapella").path
    guard FileManager.default.isExecutableFile(atPath: executable) else { throw CLIError("bench stream: no acapella program at \(executable); build it first", exitCode: 1) }
    // With --dir the projects are kept there (and used again when present).
    let keep = arguments.value("--dir")
    let sections = Set((arguments.value("--only") ?? "memory,download,disk,device").split(separator: ",").map(String.init))
    guard sections.isSubset(of: ["memory", "download", "disk", "device"]) else { throw CLIError("bench stream --only expects memory, download, disk or device, separated by commas") }
    let folder = keep ?? NSTemporaryDirectory() + "acapella-bench-stream-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { if keep == nil { try? FileManager.default.removeItem(atPath: folder) } }
    let settings = folder + "/acapella.json"
    try #"{ "readouts": { "console": false, "lcd": false } }"#.write(toFile: settings, atomically: true, encoding: .utf8)

    var clock = ContinuousClock.now
    let big = try layeredProject(at: folder + "/big.acaproj", parts: parts, seconds: minutes * 60, rate: rate)
    let small = try layeredProject(at: folder + "/small.acaproj", parts: 8, seconds: 180, rate: rate)
    print(String(format: "bench stream: projects written in %.1f s: %d parts × %.1f min and 8 parts × %.1f min, a full take and two punch-ins on every part (32-bit float WAV)",
                 seconds(ContinuousClock.now - clock), parts, Double(big.frames) / Double(rate) / 60, Double(small.frames) / Double(rate) / 60))

    // With the page: guests may look, so a client fetches the score without pairing.
    let port = 20_000 + Int(getpid() % 20_000)
    let webSettings = folder + "/acapella-web.json"
    try #"{ "readouts": { "console": false, "lcd": false }, "web": { "port": \#(port), "guests": "view", "name": false } }"#
        .write(toFile: webSettings, atomically: true, encoding: .utf8)

    /// The box playing `project` for 12 s: its peak and current resident
    /// size (MB) and its start-up to ready (s). With the page: once both
    /// scores are engraved (by `page-score`, in a process of its own: its
    /// peak and the seconds the box waited for it), a client fetches them
    /// (wide inflated on its way, narrow compressed), then the 12 s.
    func box(_ project: String, takes: String, web: Bool = false, data: String = "data", speed: Int = 1) throws -> (peak: Double, resident: Double, ready: Double, engraver: Double, engraved: Double) {
        let start = ContinuousClock.now
        var engraved = 0.0
        let run = try boxProcess(executable, ["run", "--config", web ? webSettings : settings, "--data", folder + "/" + data, "--device", "sim:speed=\(speed)",
                                              "--project", project, "--play", "--takes", takes, "--seconds", web ? "600" : "30"] + (web ? [] : ["--web", "off"]),
                                 settle: 12, waitFor: web ? "web: the score for phones" : nil) { _ in
            engraved = seconds(ContinuousClock.now - start)
            _ = capture(["curl", "-s", "-o", "/dev/null", "http://127.0.0.1:\(port)/score.svg"])
            _ = capture(["curl", "-s", "-o", "/dev/null", "-H", "Accept-Encoding: gzip", "http://127.0.0.1:\(port)/score-narrow.svg"])
        }
        guard let ready = run.ready else { throw CLIError("bench stream: the box never said ready:\n\(run.text)", exitCode: 1) }
        if run.text.contains("not read from the disk in time") { print("  (the box said: \(run.text.split(separator: "\n").filter { $0.contains("not read") }.prefix(2).joined(separator: "; ")))") }
        if web && !run.text.contains("the score for phones engraved") { print("  (the box said: \(run.text.split(separator: "\n").filter { $0.contains("web: the score") }.joined(separator: "; ")))") }
        // The engraver's peak: "…; peak 123 MB", the larger of the two.
        let peaks = run.text.split(separator: "\n").filter { $0.contains("web: the score") }.compactMap { line in
            line.range(of: #"peak [0-9]+ MB"#, options: .regularExpression).flatMap { Double(line[$0].dropFirst(5).dropLast(3)) }
        }
        return (Double(run.status["VmHWM"] ?? 0) / 1_024, Double(run.status["VmRSS"] ?? 0) / 1_024, ready, peaks.max() ?? 0, engraved - ready)
    }
    var met = true
    if sections.contains("memory") {
        let bigStreamed = try box(big.path, takes: "stream")
        // The same through its first punch-ins (a third of the way): 64 takes sounding at once.
        let bigThrough = try box(big.path, takes: "stream", speed: 30)
        let smallStreamed = try box(small.path, takes: "stream")
        let smallDecoded = try box(small.path, takes: "memory")
        let bigWithPage = try box(big.path, takes: "stream", web: true)
        let smallWithPage = try box(small.path, takes: "stream", web: true)
        let decodedBig = Double(big.takeFrames) * 4 / 1_048_576
        print("  memory, the box playing for 12 s, its web page off (peak resident, VmHWM)          goal ≤ 80 MB, flat in length and take count")
        print(String(format: "    %2d parts × %4.1f min, %3d takes streamed    peak %6.1f MB  now %6.1f MB  ready in %4.0f ms   (decoded they would be %.0f MB)",
                     parts, Double(big.frames) / Double(rate) / 60, 3 * parts, bigStreamed.peak, bigStreamed.resident, bigStreamed.ready * 1_000, decodedBig))
        print(String(format: "    %2d parts × %4.1f min, %3d takes streamed    peak %6.1f MB  now %6.1f MB  (the same 12 s at 30× real time: through the first punch-ins, 64 takes sounding)",
                     parts, Double(big.frames) / Double(rate) / 60, 3 * parts, bigThrough.peak, bigThrough.resident))
        print(String(format: "    %2d parts × %4.1f min, %3d takes streamed    peak %6.1f MB  now %6.1f MB  ready in %4.0f ms",
                     8, Double(small.frames) / Double(rate) / 60, 24, smallStreamed.peak, smallStreamed.resident, smallStreamed.ready * 1_000))
        print(String(format: "    %2d parts × %4.1f min, %3d takes decoded     peak %6.1f MB  now %6.1f MB  ready in %4.0f ms   (how takes played before: the peer)",
                     8, Double(small.frames) / Double(rate) / 60, 24, smallDecoded.peak, smallDecoded.resident, smallDecoded.ready * 1_000))
        print("  with the web page on, a client fetching both scores (engraved by acapella page-score in a process of its own, niced, then served from its files)")
        for (name, run) in [(String(format: "%2d parts × %4.1f min", parts, Double(big.frames) / Double(rate) / 60), bigWithPage),
                            (String(format: "%2d parts × %4.1f min", 8, Double(small.frames) / Double(rate) / 60), smallWithPage)] {
            print(String(format: "    %@: the box's peak %6.1f MB  now %6.1f MB; the engraver's peak %6.1f MB, both scores ready %.1f s after the box", name, run.peak, run.resident,
                         run.engraver, run.engraved))
        }
        met = bigStreamed.peak <= 80 && bigThrough.peak <= 80 && smallStreamed.peak <= 80 && bigWithPage.peak <= 80 && smallWithPage.peak <= 80
        print(String(format: "    streamed, page off and on: %@ (%.1f MB and %.1f MB: %.1f MB apart for %.0f× the audio)", met ? "met" : "NOT met", bigStreamed.peak, smallStreamed.peak,
                     bigStreamed.peak - smallStreamed.peak, Double(big.takeFrames) / Double(small.takeFrames)))
    }

    if sections.contains("download") {
        // The page's mix download: a paired client fetches the mix of the
        // big project while the box plays; the box's peak beside the same
        // box playing alone. The mix is made by the one mix path
        // (ProjectExport: takes streamed), as `acapella mix` makes it.
        // The same box playing alone first (then the download's box, on its own data).
        // A data folder of its own: a score already engraved is not engraved (nor said) again.
        try? FileManager.default.removeItem(atPath: folder + "/data-alone")
        let alone = try box(big.path, takes: "stream", web: true, data: "data-alone")
        var took = 0.0
        var bytes = 0
        let run = try boxProcess(executable, ["run", "--config", webSettings, "--data", folder + "/data-download", "--device", "sim:speed=1", "--project", big.path,
                                              "--play", "--takes", "stream", "--seconds", "900"], settle: 1, waitFor: "pairing code") { text in
            let code = text.range(of: #"pairing code [0-9]+"#, options: .regularExpression).map { String(text[$0].split(separator: " ").last!) } ?? ""
            let cookies = folder + "/cookies"
            _ = capture(["curl", "-s", "-c", cookies, "-o", "/dev/null", "-X", "POST", "--data", code, "http://127.0.0.1:\(port)/api/pair"])
            let start = ContinuousClock.now
            _ = capture(["curl", "-s", "-b", cookies, "-o", folder + "/download.flac", "http://127.0.0.1:\(port)/download/mix.flac"])
            took = seconds(ContinuousClock.now - start)
            bytes = (try? FileManager.default.attributesOfItem(atPath: folder + "/download.flac")[.size] as? Int) ?? 0
        }
        let downloading = Double(run.status["VmHWM"] ?? 0) / 1_024
        let decoded = Double(big.takeFrames) * 4 / 1_048_576
        print("  download: a paired client fetches the mix (FLAC) of \(parts) parts × \(minutes) min while the box plays (peak resident, VmHWM)   goal: as playing (≤ 80 MB)")
        print(String(format: "    the box downloading: peak %6.1f MB; the mix %.1f MB in %.1f s", downloading, Double(bytes) / 1_048_576, took))
        print(String(format: "    the box playing alone: peak %6.1f MB (%+.1f MB for the download)", alone.peak, downloading - alone.peak))
        print(String(format: "    the page's old path decoded every take into the box: %.0f MB of takes (the peer: could not run here)", decoded))
        // Met when the download costs the box nothing it did not need to play (within 2 MB).
        let fine = bytes > 0 && alone.peak > 0 && downloading <= max(80, alone.peak + 2)
        print("    " + (fine ? "met" : "NOT met"))
        met = met && fine
    }

    let need = Double(parts) * Double(rate) * 4
    if sections.contains("disk") {
        clock = ContinuousClock.now
        // The disk: the slowest shared read budget with no block missed.
        let speed = 4.0
        var cleanest: Double?
        var rows: [String] = []
        for megabytes in [24.0, 20, 16, 14, 13, 12, 10] {
            let outcome = try playThrottled(big.path, schedule: big.schedule, bytesPerSecond: megabytes * 1_048_576, speed: speed, songSeconds: 40)
            rows.append(String(format: "    %5.1f MB/s (%4.2f× the need): %7d frames missed in %d streams, %6.1f MB read%@", megabytes, megabytes * 1_048_576 / need,
                               outcome.missed, outcome.streamsMissing, Double(outcome.bytesRead) / 1_048_576, outcome.where.isEmpty ? "" : " (last misses in measures \(outcome.where))"))
            if outcome.missed == 0 { cleanest = megabytes } else { break }
        }
        print(String(format: "  disk: %d parts played for 40 s of song (through a punch-in, a loop of 2 measures ×3, a locate), the take files read through one budget (simulated slow card), %.0f× real time", parts, speed))
        print(String(format: "    the parts need %.2f MB/s (%d takes × %d Hz × 4 bytes) where full takes sound alone, %.2f MB/s where a punch-in sounds over each",
                     need / 1_048_576, parts, rate, 2 * need / 1_048_576))
        for row in rows { print(row) }
        if let cleanest {
            print(String(format: "    slowest clean: %.1f MB/s = %.2f× what the parts need at the punch-ins (%.1f s)", cleanest, cleanest * 1_048_576 / (2 * need), seconds(ContinuousClock.now - clock)))
        } else {
            print("    no budget tried was clean")
        }
    }

    // The same on the real disk, slowed by the kernel, at real time.
    if !sections.contains("device") {
        // not asked for
    } else if let throttle = DiskThrottle(path: folder) {
        print("  disk, for real: the same 30 s of song at real time, the take files dropped from the page cache, this process's reads of \(throttle.device) slowed by \(throttle.how)")
        // From the disk as it is (no limit) down, until a rate misses.
        for megabytes in [0, 64, 48, 32, 24, 16, 12] {
            try throttle.limit(bytesPerSecond: megabytes * 1_048_576)
            DiskThrottle.dropFromCache(big.path + "/takes")
            let outcome = try playThrottled(big.path, schedule: big.schedule, bytesPerSecond: nil, speed: 1, songSeconds: 30)
            print(String(format: "    %@: %7d frames missed in %d streams, %6.1f MB read%@",
                         megabytes == 0 ? "     no limit                        " : String(format: "%5d MB/s (%4.2f× the need at the punch-ins)", megabytes, Double(megabytes * 1_048_576) / (2 * need)),
                         outcome.missed, outcome.streamsMissing, Double(outcome.bytesRead) / 1_048_576, outcome.where.isEmpty ? "" : " (last misses in measures \(outcome.where))"))
            if outcome.missed > 0 { break }
        }
        throttle.release()
    } else {
        print("  disk, for real: not measured (needs root and the blkio (cgroup v1) or io (cgroup v2) controller)")
    }
    return met ? 0 : 1
}

/// This process's reads of the disk holding a path slowed by the kernel:
/// the process moved into a cgroup of its own with a read limit on that
/// disk (cgroup v2 `io.max`, or v1 `blkio.throttle.read_bps_device`).
/// nil when that cannot be set up (not root, no such controller).
final class DiskThrottle {
    let device: String
    let how: String
    private let group: String
    private let limitFile: String
    private let v2: Bool
    private let home: String

    init?(path: String) {
        guard geteuid() == 0 else { return nil }
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let dev = UInt64(status.st_dev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
        let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
        var device = "\(major):\(minor)"
        // A partition: the limit is the whole disk's.
        if FileManager.default.fileExists(atPath: "/sys/dev/block/\(device)/partition"),
           let parent = ProcFile.read("/sys/dev/block/\(device)/../dev") {
            device = parent.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        self.device = device
        let own = ProcFile.read("/proc/self/cgroup") ?? ""
        let name = "acapella-bench-\(getpid())"
        if let controllers = ProcFile.read("/sys/fs/cgroup/cgroup.controllers"), controllers.split(separator: " ").contains(where: { $0.hasPrefix("io") }) {
            v2 = true
            try? "+io".write(toFile: "/sys/fs/cgroup/cgroup.subtree_control", atomically: false, encoding: .utf8)
            group = "/sys/fs/cgroup/" + name
            limitFile = group + "/io.max"
            home = "/sys/fs/cgroup" + (own.split(separator: "\n").first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) } ?? "/")
            how = "io.max (cgroup v2)"
        } else if FileManager.default.fileExists(atPath: "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device") {
            v2 = false
            group = "/sys/fs/cgroup/blkio/" + name
            limitFile = group + "/blkio.throttle.read_bps_device"
            home = "/sys/fs/cgroup/blkio" + (own.split(separator: "\n").first { $0.contains(":blkio:") }.map { String($0.split(separator: ":", maxSplits: 2)[2]) } ?? "/")
            how = "blkio.throttle.read_bps_device (cgroup v1)"
        } else {
            return nil
        }
        guard mkdir(group, 0o755) == 0 || errno == EEXIST, FileManager.default.fileExists(atPath: limitFile) else { return nil }
        guard (try? "\(getpid())".write(toFile: group + "/cgroup.procs", atomically: false, encoding: .utf8)) != nil else {
            rmdir(group)
            return nil
        }
    }

    /// 0: no limit.
    func limit(bytesPerSecond: Int) throws {
        let rule = v2 ? "\(device) rbps=\(bytesPerSecond == 0 ? "max" : String(bytesPerSecond))" : "\(device) \(bytesPerSecond)"
        do { try rule.write(toFile: limitFile, atomically: false, encoding: .utf8) } catch {
            throw CLIError("bench stream: \(limitFile): cannot set '\(rule)': \(error.localizedDescription)", exitCode: 1)
        }
    }

    /// Back to the cgroup the process came from; the group removed.
    func release() {
        try? "\(getpid())".write(toFile: home + "/cgroup.procs", atomically: false, encoding: .utf8)
        rmdir(group)
    }

    /// Every file in `folder` dropped from the page cache (read again from the disk).
    static func dropFromCache(_ folder: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            let descriptor = open(folder + "/" + name, O_RDONLY)
            guard descriptor >= 0 else { continue }
            fdatasync(descriptor)
            _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
            close(descriptor)
        }
    }
}

/// A project of `parts` parts lasting at least `seconds`: a full take on
/// every part and two punch-ins (4 measures each, at a third and two
/// thirds of the song), as `ChoirMerge.record` writes them.
func layeredProject(at path: String, parts: Int, seconds: Int, rate: Int) throws -> (path: String, frames: Int, takeFrames: Int, schedule: Schedule) {
    let score = try longScore(rate: rate, parts: parts, seconds: seconds)
    let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: rate))
    if let (kept, _) = try? Project.open(path, for: .read), kept.manifest.takes.count == 3 * parts {
        kept.close()
        return (path, Int(schedule.endSample), kept.manifest.takes.map { Int($0.frames) }.reduce(0, +), schedule)
    }
    let project = try Project.create(at: path, songText: Acasong.serialize(score), sampleRate: rate)
    defer { project.close() }
    let frames = Int(schedule.endSample)
    // One period of a 220 Hz tone with a little noise, repeated (cheap to make, not silence).
    let cycle: [Float] = (0..<rate).map { (index: Int) -> Float in
        let tone = Float(0.2 * sin(2 * Double.pi * 220 * Double(index) / Double(rate)))
        return tone + Float(index % 7) * 1e-4
    }
    let full = (0..<frames).map { cycle[$0 % rate] }
    var takeFrames = 0
    let measures = schedule.barlines.count
    for (part, name) in score.parts.map(\.name).enumerated() {
        _ = try ChoirMerge.record(full, part: name, into: project, options: schedule.options, offset: Int64(part))
        takeFrames += frames
        for third in [1, 2] {
            let first = measures * third / 3
            guard let range = schedule.loopRange(measures: (schedule.firstMeasureNumber + first)...(schedule.firstMeasureNumber + min(measures - 1, first + 3))) else { continue }
            let start = max(0, range.lowerBound - Int64(rate))
            let length = Int(range.upperBound + Int64(rate) - start)
            _ = try ChoirMerge.record(Array(full[Int(start)..<min(frames, Int(start) + length)]), part: name, into: project, options: schedule.options, offset: -start) {
                $0.range = SongRange(range.lowerBound, range.upperBound)
            }
            takeFrames += length
        }
    }
    return (path, frames, takeFrames, schedule)
}

/// The engine playing `path`'s takes streamed through a `ReadBudget`, at
/// `speed` × real time for `songSeconds` of song from just before the
/// first punch-ins: through them, a loop of two measures three times, a
/// locate forward. Blocks missed, streams that missed, bytes read.
/// `bytesPerSecond` nil: the reads as fast as the disk gives them.
func playThrottled(_ path: String, schedule: Schedule, bytesPerSecond: Double?, speed: Double, songSeconds: Double) throws -> (missed: Int64, streamsMissing: Int, bytesRead: Int64, where: String) {
    let (project, _) = try Project.open(path, for: .read)
    defer { project.close() }
    let budget = bytesPerSecond.map { ReadBudget(bytesPerSecond: $0 * speed) }
    let takes = project.activeTakes(for: schedule.options, loading: .streamed(throttle: budget)).takes
    let streams = takes.flatMap { $0.layers.compactMap(\.stream) }
    let butler = TakeStreamButler(cue: StreamCue())
    let frames = 128
    var core = EngineCore(schedule: schedule, mixes: PartMix.spread(count: takes.count), takes: takes, maximumFrames: frames)
    core.attachStreams(cue: butler.cue)
    let control = EngineControl(link: core.link, score: project.score, options: schedule.options)
    control.cue = butler.cue
    control.initialSchedule = schedule
    butler.watch(takes, fade: Int64(core.renderer.rampSamples))
    let barlines = schedule.barlines.count
    let start = schedule.firstMeasureNumber + barlines / 3 - 1
    control.send(.locate(measure: start))
    butler.service()
    let thread = ButlerThread(butler: butler)
    thread.start()
    defer { thread.stop() }
    let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
    defer {
        left.deallocate()
        right.deallocate()
    }
    let periods = Int(songSeconds * Double(schedule.options.sampleRate)) / frames
    let periodSeconds = Double(frames) / Double(schedule.options.sampleRate) / speed
    let began = ContinuousClock.now
    for period in 0..<periods {
        switch period {
        case 10: control.send(.play)
        case periods / 4: control.send(.loop((start + 2)...(start + 3)))
        case periods / 2: control.send(.loop(nil))
        case 3 * periods / 5: control.send(.locate(measure: schedule.firstMeasureNumber + 2 * barlines / 3))
        default: break
        }
        core.process(left: left, right: right, frames: frames)
        core.link.collectRetired()
        let due = began + .seconds(Double(period + 1) * periodSeconds)
        let wait = ContinuousClock.now.duration(to: due)
        if wait > .zero {
            let (whole, fraction) = wait.components
            var request = timespec(tv_sec: Int(whole), tv_nsec: Int(fraction / 1_000_000_000))
            nanosleep(&request, nil)
        }
    }
    let read = streams.map(\.reads).reduce(0, +) * Int64(TakeStream.blockFrames) * 4
    let measures = Set(streams.filter { $0.missed > 0 }.map { schedule.measure(at: $0.lastMissAt) }).sorted()
    return (streams.map(\.missed).reduce(0, +), streams.filter { $0.missed > 0 }.count, read, measures.map(String.init).joined(separator: ", "))
}
