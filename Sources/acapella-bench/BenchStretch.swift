import AcapellaAnalysis
import AcapellaCLI
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import AcapellaTrials
import Foundation

/// `acapella-bench stretch`: takes at another tempo and key (issue 36).
/// 1. The render loop at real time with 8 streamed takes, as written and
///    at 80 % a tone lower (Rubber Band on the butler): p99.9 of a
///    128-frame period, frames the streams missed, the process's CPU.
/// 2. Quality and speed on the shared sung voice with its f0 truth,
///    stretched to 80 % and shifted a tone down: ours (real-time as the
///    butler runs it, offline as the mixdown does) beside the rubberband
///    command line (its R2 and R3 engines) and sox's tempo + pitch.
func benchStretch(_ arguments: ParsedArguments) throws -> Int32 {
    let songSeconds = Double(arguments.value("--seconds") ?? "20") ?? 20
    let voices = arguments.value("--dir") ?? "../shared/data/voice"
    let (voice, rate) = try AudioFile.readMono(voices + "/bwv66.6_soprano.wav")
    let truth = try PitchMetrics.truth(csv: try String(contentsOfFile: voices + "/bwv66.6_soprano.f0.csv", encoding: .utf8))
    let scratch = NSTemporaryDirectory() + "acapella-bench-stretch-\(getpid())"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }

    print("1. the render loop at real time, 8 streamed takes of the sung voice, \(Int(songSeconds)) s of song each way")
    let project = try stretchProject(at: scratch + "/eight.acaproj", voice: voice, rate: rate, parts: 8, seconds: Int(songSeconds) + 10)
    defer { project.close() }
    let written = try renderAtRealTime(project, options: ScheduleOptions(sampleRate: rate), seconds: songSeconds)
    let slow = try renderAtRealTime(project, options: ScheduleOptions(sampleRate: rate, tempoScale: Rational(4, 5), transpose: -2), seconds: songSeconds)
    let period = 128.0 / Double(rate) * 1e6
    for (name, run) in [("as written", written), ("80 %, a tone lower (stretched)", slow)] {
        print("   " + name.padding(toLength: 32, withPad: " ", startingAt: 0) + String(format: " p99.9 %5.1f µs (%.1f %% of the period), worst %6.1f µs, %lld frames missed, CPU %.0f %% of a core",
                     run.p999, run.p999 / period * 100, run.worst, run.missed, run.cpu * 100))
    }
    print(String(format: "   p99.9 stretched / as written: %.2f×", slow.p999 / max(written.p999, 0.001)))

    print("2. the sung voice (\(String(format: "%.1f", Double(voice.count) / Double(rate))) s, f0 truth) at 80 % and a tone lower: pitch against the truth, speed")
    let input = scratch + "/voice.wav"
    try AudioFile.write(left: voice, right: voice, sampleRate: rate, to: input, bits: 24)
    let stretch = TakeStretch(ratio: Rational(5, 4), semitones: -2)
    var rows: [(name: String, samples: [Float]?, seconds: Double)] = []
    var began = ContinuousClock.now
    let source = try StretchedBlockSource(MemoryBlockSource(voice), sampleRate: rate, stretch: stretch, anchors: [StretchAnchor(input: 0, output: 0)])
    var realTime = [Float](repeating: 0, count: Int(source.frameCount))
    var at = 0
    while at < realTime.count {
        let n = min(TakeStream.blockFrames, realTime.count - at)
        realTime.withUnsafeMutableBufferPointer { _ = source.read(from: Int64(at), count: n, into: $0.baseAddress! + at) }
        at += n
    }
    rows.append(("acapella real-time (the butler)", realTime, seconds(ContinuousClock.now - began)))
    began = ContinuousClock.now
    let offline = try OfflineStretcher.process(voice, sampleRate: rate, stretch: stretch)
    rows.append(("acapella offline (the mixdown)", offline, seconds(ContinuousClock.now - began)))
    for (name, tool, words) in [("rubberband CLI (R2, default)", "rubberband", ["-t", "1.25", "-p", "-2", "-F"]), ("rubberband CLI -3 (R3, finer)", "rubberband", ["-3", "-t", "1.25", "-p", "-2", "-F"]),
                                ("sox tempo 0.8 pitch -200", "sox", [])] {
        let output = scratch + "/\(rows.count).wav"
        let command = tool == "sox" ? [input, output, "tempo", "-s", "0.8", "pitch", "-200"] : words + [input, output]
        began = ContinuousClock.now
        let ran = runTool(tool, command)
        let took = seconds(ContinuousClock.now - began)
        rows.append((name, ran ? try? AudioFile.readMono(output).samples : nil, took))
    }
    let audio = Double(voice.count) / Double(rate)
    let ours = rows[0].seconds
    for row in rows {
        guard let samples = row.samples else {
            print("   " + row.name.padding(toLength: 32, withPad: " ", startingAt: 0) + " not run (not installed)")
            continue
        }
        // Frame k of the truth is at 512·k in the voice: at 640·k in the stretched one, its pitch a tone lower.
        let estimates = YINDetector(sampleRate: rate).track(samples, hop: 640)
        let metrics = PitchMetrics(estimates: estimates, truth: truth.map { $0 * pow(2, -2.0 / 12) })
        print("   " + row.name.padding(toLength: 32, withPad: " ", startingAt: 0) + String(format: " raw pitch accuracy %.3f, median %.2f cents, p95 %.1f cents; %5.2f s (%.0f× real time; %.2f× ours real-time)",
                     metrics.rawPitchAccuracy, metrics.medianCents, metrics.p95Cents, row.seconds, audio / row.seconds, row.seconds / ours))
    }
    return 0
}

/// A project of `parts` parts, each with one full take of `voice` looped
/// to `seconds` (the song: whole notes, one per part, long enough).
private func stretchProject(at path: String, voice: [Float], rate: Int, parts: Int, seconds: Int) throws -> Project {
    let score = try longScore(rate: rate, parts: parts, seconds: seconds)
    let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: rate))
    let project = try Project.create(at: path, songText: Acasong.serialize(score), sampleRate: rate)
    let frames = Int(schedule.endSample)
    let take = (0..<frames).map { voice[$0 % voice.count] }
    for (part, name) in score.parts.map(\.name).enumerated() {
        _ = try ChoirMerge.record(take, part: name, into: project, options: schedule.options, offset: Int64(part))
    }
    return project
}

/// The engine playing `project`'s takes at `options` in real time (a
/// period every 128 frames' worth of wall time) with the butler on its
/// thread: each period's render time, frames missed, and the process's
/// CPU over the run (the butler's stretching included).
private func renderAtRealTime(_ project: Project, options: ScheduleOptions, seconds songSeconds: Double) throws -> (p999: Double, worst: Double, missed: Int64, cpu: Double) {
    let schedule = try Schedule(score: project.score, options: options)
    let takes = project.activeTakes(for: options, loading: .streamed()).takes
    let butler = TakeStreamButler(cue: StreamCue())
    let frames = 128
    var core = EngineCore(schedule: schedule, mixes: PartMix.spread(count: takes.count), takes: takes, maximumFrames: frames)
    core.attachStreams(cue: butler.cue)
    butler.watch(takes, fade: Int64(core.renderer.rampSamples))
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
    _ = core.link.send(.play)
    let periods = Int(songSeconds * Double(options.sampleRate)) / frames
    let periodSeconds = Double(frames) / Double(options.sampleRate)
    var times: [Double] = []
    times.reserveCapacity(periods)
    let cpuBefore = clock()
    let began = ContinuousClock.now
    for index in 0..<periods {
        let start = ContinuousClock.now
        core.process(left: left, right: right, frames: frames)
        times.append(seconds(ContinuousClock.now - start) * 1e6)
        core.link.collectRetired()
        while core.link.nextEvent() != nil {}
        // Paced as a device would: the next period at its time.
        let due = Double(index + 1) * periodSeconds - seconds(ContinuousClock.now - began)
        if due > 0 { usleep(useconds_t(due * 1e6)) }
    }
    let wall = seconds(ContinuousClock.now - began)
    let cpu = Double(clock() - cpuBefore) / Double(CLOCKS_PER_SEC) / wall
    let missed = takes.flatMap { $0.layers.compactMap(\.stream) }.map(\.missed).reduce(0, +)
    times.sort()
    return (times[min(times.count - 1, Int(Double(times.count) * 0.999))], times.last ?? 0, missed, cpu)
}

/// Runs `tool` with `arguments` quietly; false when it is not there or fails.
private func runTool(_ tool: String, _ arguments: [String]) -> Bool {
    guard let path = ["/usr/bin/", "/usr/local/bin/"].map({ $0 + tool }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return false }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
}
