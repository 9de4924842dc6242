import AcapellaTrials
import AcapellaAnalysis
import AcapellaBox
import AcapellaCLI
import AcapellaDevices
import AcapellaEngine
import AcapellaMusicXML
import AcapellaProject
import AcapellaScore
import Foundation
import AcapellaLock

/// `acapella-bench NAME`. Timing lives here, never in unit tests.
func runBench(_ arguments: ParsedArguments) throws -> Int32 {
    switch arguments.positionals[0] {
    case "parse": return try benchParse(arguments)
    case "import": return try benchImport(arguments)
    case "engrave": return try benchEngrave(arguments)
    case "render": return try benchRender(arguments)
    case "mix": return try benchMix(arguments)
    case "tones": return try benchTones(arguments)
    case "calibrate": return try benchCalibrate(arguments)
    case "pitch": return try benchPitch(arguments)
    case "box": return try benchBox(arguments)
    case "latency": return try benchLatency(arguments)
    case "web": return try benchWeb(arguments)
    case "analyze": return try benchAnalyze(arguments)
    case "merge": return try benchMerge(arguments)
    case "usb": return try benchUSB(arguments)
    case "stream": return try benchStream(arguments)
    case "load": return try benchLoad(arguments)
    case "align": return try benchAlign(arguments)
    case "needle": return try benchNeedle(arguments)
    case "stretch": return try benchStretch(arguments)
    default: throw CLIError("unknown benchmark '\(arguments.positionals[0])'; see 'acapella-bench --help'")
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

func benchParse(_ arguments: ParsedArguments) throws -> Int32 {
    let parts = try arguments.int("--parts", default: 8, range: 1...64)
    let measures = try arguments.int("--measures", default: 10_000, range: 1...100_000)
    let repeats = try arguments.int("--repeat", default: 5, range: 1...100)
    var rng = SplitMix64(seed: 2026)
    let score = ScoreGenerator.random(using: &rng, options: .init(parts: parts, measures: measures))
    let text = Acasong.serialize(score)
    let bytes = Array(text.utf8)
    let notes = score.parts.reduce(0) { $0 + $1.notes.count }
    print("bench parse: \(parts) parts × \(measures) measures, \(notes) notes, \(bytes.count) bytes of .acasong")

    let clock = ContinuousClock()
    var bestParse = Double.infinity
    var bestPrint = Double.infinity
    for _ in 0..<repeats {
        var parsed: Score?
        let parseTime = clock.measure { parsed = try? Acasong.parse(bytes: bytes) }
        guard let parsed, parsed == score else { throw CLIError("benchmark score did not round-trip", exitCode: 1) }
        var printed = ""
        let printTime = clock.measure { printed = Acasong.serialize(parsed) }
        guard printed.utf8.count == bytes.count else { throw CLIError("benchmark print differs", exitCode: 1) }
        bestParse = min(bestParse, seconds(parseTime))
        bestPrint = min(bestPrint, seconds(printTime))
    }
    let total = bestParse + bestPrint
    func rate(_ time: Double) -> String { String(format: "%.2f M notes/s", Double(notes) / time / 1e6) }
    print(String(format: "  parse + validate  %7.1f ms   %@", bestParse * 1000, rate(bestParse)))
    print(String(format: "  print             %7.1f ms   %@", bestPrint * 1000, rate(bestPrint)))
    print(String(format: "  round trip        %7.1f ms   %@   (best of %d)", total * 1000, rate(total), repeats))
    return 0
}

/// Runs a program and returns what it printed (nil when it cannot start or
/// fails), its error output discarded or passed through.
func capture(_ arguments: [String], passErrors: Bool = false) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    if !passErrors { process.standardError = FileHandle.nullDevice }
    do { try process.run() } catch { return nil }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return output
}

/// music21's corpus of Bach chorales, when music21 is installed.
func music21BachCorpus() -> String? {
    let script = "import music21, os; print(os.path.join(os.path.dirname(music21.__file__), 'corpus', 'bach'))"
    guard let path = capture(["python3", "-c", script])?.trimmingCharacters(in: .whitespacesAndNewlines), !path.isEmpty,
          FileManager.default.fileExists(atPath: path) else { return nil }
    return path
}

/// Imports every MusicXML file in a folder, best of N, and runs music21 on
/// the same files side by side when it is installed (development peer).
/// With `--corpus bach`: music21's 410 Bach chorales, and the note-for-note
/// comparison with music21 (Tools/compare-music21.py) after the timing.
func benchImport(_ arguments: ParsedArguments) throws -> Int32 {
    let corpus = arguments.value("--corpus")
    if let corpus, corpus != "bach" { throw CLIError("--corpus: only 'bach' (music21's Bach chorales)", exitCode: 2) }
    var folder = arguments.value("--dir") ?? "../shared/data/musicxml"
    if corpus != nil {
        guard let bach = music21BachCorpus() else { throw CLIError("--corpus bach needs music21 (pip install music21)", exitCode: 1) }
        folder = bach
    }
    let repeats = try arguments.int("--repeat", default: 5, range: 1...100)
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter(MusicXML.isFile).sorted()
    guard !names.isEmpty else { throw CLIError("no MusicXML files in \(folder); pass --dir", exitCode: 1) }
    let paths = names.map { (folder as NSString).appendingPathComponent($0) }
    let files = try paths.map(readSongBytes)
    let bytes = files.reduce(0) { $0 + $1.count }
    var notes = 0
    let clock = ContinuousClock()
    var best = Double.infinity
    for _ in 0..<repeats {
        var count = 0
        let time = try clock.measure {
            for (path, file) in zip(paths, files) {
                do {
                    count += try MusicXML.importScore(bytes: file, fileName: path).score.parts.reduce(0) { $0 + $1.notes.count }
                } catch let error as ImportError {
                    throw CLIError(error.description, exitCode: 1)
                }
            }
        }
        notes = count
        best = min(best, seconds(time))
    }
    print("bench import: \(names.count) files, \(bytes / 1024) KiB, \(notes) notes imported")
    print(String(format: "  acapella  %8.1f ms   (best of %d)", best * 1000, repeats))
    // Where the time goes: each stage includes the ones before it (but
    // "expat alone", which replaces the tree: the floor of a reader on expat).
    var floor = Double.infinity
    for stage in MusicXML.Stage.allCases {
        var bestStage = Double.infinity
        for _ in 0..<repeats {
            let time = try clock.measure {
                for file in files {
                    do { _ = try MusicXML.importStages(file, through: stage) } catch let error as ImportError { throw CLIError(error.description, exitCode: 1) }
                }
            }
            bestStage = min(bestStage, seconds(time))
        }
        if stage == .expat { floor = bestStage }
        print("    up to " + stage.name.padding(toLength: 12, withPad: " ", startingAt: 0) + String(format: "%8.1f ms", bestStage * 1000))
    }

    let script = """
        import sys, time
        try:
            import music21
        except ImportError:
            print("missing"); sys.exit(0)
        best = float("inf")
        for _ in range(int(sys.argv[1])):
            start = time.perf_counter()
            for path in sys.argv[2:]:
                music21.converter.parse(path, forceSource=True)
            best = min(best, time.perf_counter() - start)
        print(best)
        """
    let peerRepeats = corpus != nil ? 1 : max(1, min(repeats, 3))
    guard let output = capture(["python3", "-c", script, String(peerRepeats)] + paths) else {
        print("  music21   not run (no python3)")
        return 0
    }
    guard let peer = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
        print("  music21   not installed (pip install music21 for the side-by-side figure)")
        return 0
    }
    print(String(format: "  music21   %8.1f ms   (best of %d, converter.parse with forceSource)", peer * 1000, peerRepeats))
    print(String(format: "  ratio     %8.1f× faster than music21 (unzip and expat alone, nothing read: %.1f×)", peer / best, peer / floor))
    guard corpus != nil else { return 0 }
    // The notes themselves, compared with music21's reading of every file.
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    let tool = ["Tools/compare-music21.py", executable.appendingPathComponent("../../Tools/compare-music21.py").path]
        .first { FileManager.default.fileExists(atPath: $0) }
    guard let tool, let comparison = capture(["python3", tool, "--acapella", executable.appendingPathComponent("acapella").path, "--corpus", "bach", "--unfold"], passErrors: true) else {
        print("  comparison not run (Tools/compare-music21.py not found; run from the repository)")
        return 0
    }
    for line in comparison.split(separator: "\n") where !line.hasPrefix("same ") { print("  " + line) }
    return 0
}

/// Worst-case time to render one period (8 parts, clicks), as a share of the
/// period's duration: the render loop's real-time budget.
func benchRender(_ arguments: ParsedArguments) throws -> Int32 {
    let parts = try arguments.int("--parts", default: 8, range: 1...64)
    let periods = try arguments.int("--periods", default: 100_000, range: 1_000...10_000_000)
    let frames = try arguments.int("--frames", default: 128, range: 16...8192)
    let rate = 48_000
    var times = try renderTimes(parts: parts, periods: periods, frames: frames, rate: rate)
    times.sort()
    let budget = Double(frames) / Double(rate)
    func share(_ quantile: Double) -> String {
        let time = quantileOf(times, quantile)
        return String(format: "%7.2f µs = %5.2f %%", time * 1e6, time / budget * 100)
    }
    print("bench render: \(parts) parts (half on full takes, a quarter with punch-ins) + clicks through the engine, \(periods) periods of \(frames) frames at \(rate) Hz (budget \(String(format: "%.0f", budget * 1e6)) µs)")
    print("  median  \(share(0.5))")
    print("  p99     \(share(0.99))")
    print("  p99.9   \(share(0.999))")
    print("  max     \(share(1.0))")
    // --no-slope: these periods only (Tools/pi-budget.sh counts their instructions).
    if arguments.flags.contains("--no-slope") { return 0 }
    // The cost of one more part: the same engine with 1 and with 32 parts
    // (the same mix of tones, takes and punch-ins), the slope between them.
    let few = try renderTimes(parts: 1, periods: 20_000, frames: frames, rate: rate).sorted()
    let many = try renderTimes(parts: 32, periods: 20_000, frames: frames, rate: rate).sorted()
    let perPart = (quantileOf(many, 0.5) - quantileOf(few, 0.5)) / 31
    let perPartTail = (quantileOf(many, 0.999) - quantileOf(few, 0.999)) / 31
    let fixed = max(0, quantileOf(few, 0.5) - perPart)
    let allowance = 0.03 * budget
    print(String(format: "  one part costs %.3f µs a period at the median (%.3f µs at p99.9), the rest %.2f µs (1 and 32 parts, 20000 periods each)",
                 perPart * 1e6, perPartTail * 1e6, fixed * 1e6))
    for slower in [1.0, 4.0, 8.0] {
        let fit = Int((allowance / slower - fixed) / max(perPartTail, perPart, 1e-12))
        print(String(format: "  on a CPU %.0f× slower than this one: %d parts within 3 %% of the period at p99.9 (median cost × %.0f: %.2f %% for 32 parts)",
                     slower, max(0, fit), slower, (fixed + 32 * perPart) * slower / budget * 100))
    }
    return 0
}

/// The sorted-list quantile `q` (0…1).
func quantileOf(_ sorted: [Double], _ q: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }

/// Each period's time through the engine: `parts` parts (half on full
/// takes, a quarter with punch-ins over their tones every other measure,
/// the metronome), `periods` periods of `frames`.
func renderTimes(parts: Int, periods: Int, frames: Int, rate: Int) throws -> [Double] {
    // Long enough that every period has music: periods × frames samples.
    var measures = max(8, periods * frames / rate / 2 + 8)
    var score: Score
    var schedule: Schedule
    repeat {
        var rng = SplitMix64(seed: 128)
        score = ScoreGenerator.random(using: &rng, options: .init(parts: parts, measures: measures))
        schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: rate))
        measures += measures / 2
    } while schedule.endSample < Int64(periods * frames)
    let mixes = score.parts.indices.map { PartMix(gain: 0.2, pan: -0.7 + Float($0 % 8) * 0.2) }
    let takeAudio = (0..<(periods * frames + rate)).map { sinf(Float($0) * 0.0573) * 0.3 }
    var takes = score.parts.map { _ in PartTakes.none }
    for part in score.parts.indices where part % 2 == 0 {
        takes[part] = PartTakes([TakePlayback(samples: takeAudio, alignmentOffsetSamples: Int64(100 + part))])
    }
    for part in score.parts.indices where part % 4 == 1 {
        takes[part] = PartTakes(stride(from: 2, to: min(measures, schedule.barlines.count - 1), by: 2).compactMap { measure in
            schedule.loopRange(measures: measure...measure).map { TakePlayback(samples: takeAudio, alignmentOffsetSamples: 0, range: $0) }
        })
    }
    var core = EngineCore(schedule: schedule, mixes: mixes, takes: takes, clickGain: 0.5, maximumFrames: frames)
    core.link.send(.play)
    let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
    defer { left.deallocate(); right.deallocate() }
    var times = [Double](repeating: 0, count: periods)
    let clock = ContinuousClock()
    for index in 0..<periods {
        let start = clock.now
        core.process(left: left, right: right, frames: frames)
        times[index] = seconds(clock.now - start)
    }
    let end = core.link.snapshot()
    guard end.state == .playing, end.position == Int64(periods * frames) else {
        throw CLIError("bench render: the engine stopped early (\(end.state) at \(end.position)); the figures would flatter it")
    }
    return times
}

/// Mixdown of a 3-minute 4-part song from four take files (rendered first)
/// against `sox -m` mixing the same four files, side by side.
func benchMix(_ arguments: ParsedArguments) throws -> Int32 {
    let repeats = try arguments.int("--repeat", default: 3, range: 1...20)
    let rate = 48_000
    let score = try threeMinuteScore(rate: rate)
    let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: rate))
    let folder = NSTemporaryDirectory() + "acapella-bench-mix-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }

    // The takes: each part rendered alone (with a 4800-sample lead-in) to a 24-bit WAV.
    var takePaths: [String] = []
    for part in score.parts.indices {
        var solo = score.parts.map { _ in PartMix(gain: 1, pan: -1, muted: true) }
        solo[part].muted = false
        let mono = OfflineRender.render(schedule, mixes: solo).left
        let take = [Float](repeating: 0, count: 4_800) + mono
        let path = folder + "/take-\(part).wav"
        try AudioFile.write(left: take, right: take, sampleRate: rate, to: path, bits: 24)
        takePaths.append(path)
    }
    let seconds180 = Double(schedule.endSample) / Double(rate)
    print(String(format: "bench mix: 4 parts, %.0f s, 4 take files (24-bit WAV)", seconds180))

    let clock = ContinuousClock()
    var best = Double.infinity
    var result: LoudnessMeasurement?
    for _ in 0..<repeats {
        let time = try clock.measure {
            let takes = try loadTakes(takePaths)
            var options = MixdownOptions()
            options.includeTones = false
            result = try Mixdown.mix(score, options: options, takes: takes, to: folder + "/mix.wav", bits: 24).loudness
        }
        best = min(best, seconds(time))
    }
    print(String(format: "  acapella  %8.1f ms   decode + render + limiter + two-pass loudness (%.1f LUFS, true peak %@) + write, in chunks over two cores", best * 1000,
                 result?.integratedLUFS ?? .nan, result?.truePeakText ?? "?"))

    guard let soxBest = bestPeerTime(["sox", "-m"] + takePaths + ["-b", "24", folder + "/sox.wav"], repeats: repeats) else {
        print("  sox -m    not run (install Debian's sox for the side-by-side figure)")
        return 0
    }
    print(String(format: "  sox -m    %8.1f ms   mix only (no limiter, no loudness)", soxBest * 1000))
    print(String(format: "  ratio     %8.2f× (above 1: acapella faster)", soxBest / best))
    return 0
}

/// Decodes take files to mono, two at a time (the box has two cores or more).
func loadTakes(_ paths: [String]) throws -> [PartTakes] {
    let results = VisibleLock<[Result<[Float], AudioFileError>?]>(Array(repeating: nil, count: paths.count))
    DispatchQueue.concurrentPerform(iterations: paths.count) { index in
        let result = Result { () throws(AudioFileError) in try AudioFile.readMono(paths[index]).samples }
        results.withLock { $0[index] = result }
    }
    return try results.withLock { $0 }.map { PartTakes([TakePlayback(samples: try $0!.get(), alignmentOffsetSamples: 4_800)]) }
}

/// A generated 4-part score lengthened until it lasts at least 3 minutes.
/// A project of `threeMinuteScore` with a full take (a tone of its own) on
/// every part, closed; and the frames of each take.
func threeMinuteProject(at path: String, parts: Int, rate: Int) throws -> (project: Project, frames: Int) {
    let score = try threeMinuteScore(rate: rate, parts: parts)
    let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: rate))
    let project = try Project.create(at: path, songText: Acasong.serialize(score), sampleRate: rate)
    let frames = Int(schedule.endSample)
    var tone = [Float](repeating: 0, count: frames)
    for (part, name) in score.parts.map(\.name).enumerated() {
        let step = 2 * Double.pi * 110 * Double(part + 1) / Double(rate)
        for index in 0..<frames { tone[index] = Float(0.2 * sin(step * Double(index))) }
        _ = try ChoirMerge.record(tone, part: name, into: project, options: schedule.options, offset: 0)
    }
    project.close()
    return (project, frames)
}

func threeMinuteScore(rate: Int, parts: Int = 4) throws -> Score {
    try longScore(rate: rate, parts: parts, seconds: 180)
}

/// A generated score of `parts` parts lengthened until it lasts at least `seconds`.
func longScore(rate: Int, parts: Int, seconds: Int) throws -> Score {
    var measures = 40
    var score: Score
    repeat {
        var rng = SplitMix64(seed: 180)
        score = ScoreGenerator.random(using: &rng, options: .init(parts: parts, measures: measures))
        measures += max(10, measures / 4)
    } while (try TimeMap(tempos: score.tempos, sampleRate: rate).sample(atTick: score.endTick)) < Int64(seconds * rate)
    return score
}

/// Guide tones of a 3-minute 4-part song rendered to a 16-bit WAV, against
/// `fluidsynth -F` rendering the same notes from a MIDI file with a General
/// MIDI soundfont (reverb and chorus off), side by side.
func benchTones(_ arguments: ParsedArguments) throws -> Int32 {
    let repeats = try arguments.int("--repeat", default: 3, range: 1...20)
    let rate = 48_000
    let score = try threeMinuteScore(rate: rate)
    let folder = NSTemporaryDirectory() + "acapella-bench-tones-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let notes = score.parts.reduce(0) { $0 + $1.notes.filter { $0.pitch != nil }.count }
    let length = Double(try TimeMap(tempos: score.tempos, sampleRate: rate).sample(atTick: score.endTick)) / Double(rate)
    print(String(format: "bench tones: 4 parts, %d notes, %.0f s, to a 16-bit WAV at 48 kHz", notes, length))

    let clock = ContinuousClock()
    var best = Double.infinity
    for _ in 0..<repeats {
        let time = try clock.measure {
            let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: rate))
            let mixes = score.parts.indices.map { PartMix(gain: 0.3, pan: -0.6 + 0.4 * Float($0)) }
            let writer = try AudioFileWriter(path: folder + "/tones.wav", sampleRate: rate, bits: 16)
            try OfflineRender.stream(schedule, mixes: mixes, periodFrames: 4_096) { (left, right, frames) throws(AudioFileError) in
                try writer.write(left: left, right: right, frames: frames)
            }
            try writer.finish()
        }
        best = min(best, seconds(time))
    }
    print(String(format: "  acapella    %8.1f ms   compile + render + write, streamed", best * 1000))

    let midi = folder + "/tones.mid"
    try Data(MIDIExport.standardMIDIFile(score)).write(to: URL(fileURLWithPath: midi))
    let soundfonts = ["/usr/share/sounds/sf2/FluidR3_GM.sf2", "/usr/share/sounds/sf2/default-GM.sf2"]
    guard let soundfont = soundfonts.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
        print("  fluidsynth  not run (install Debian's fluidsynth and fluid-soundfont-gm for the side-by-side figure)")
        return 0
    }
    let fluidsynth = ["fluidsynth", "-n", "-i", "-q", "-R", "0", "-C", "0", "-r", "48000", "-T", "wav", "-O", "s16", "-F", folder + "/fluidsynth.wav", soundfont, midi]
    guard let peerBest = bestPeerTime(fluidsynth, repeats: repeats) else {
        print("  fluidsynth  not run (install Debian's fluidsynth and fluid-soundfont-gm for the side-by-side figure)")
        return 0
    }
    let written = (try? FileManager.default.attributesOfItem(atPath: folder + "/fluidsynth.wav")[.size] as? Int) ?? 0
    print(String(format: "  fluidsynth  %8.1f ms   -F from MIDI, FluidR3 GM, reverb and chorus off (%.0f s written)", peerBest * 1000, Double(written) / 4 / 48_000))
    print(String(format: "  ratio       %8.1f× faster than fluidsynth", peerBest / best))
    return 0
}

/// The best wall time of a peer command over `repeats` runs, or nil when it
/// is not installed or fails.
func bestPeerTime(_ command: [String], repeats: Int) -> Double? {
    let clock = ContinuousClock()
    var best = Double.infinity
    for _ in 0..<repeats {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let start = clock.now
        do { try process.run() } catch { return nil }
        process.waitUntilExit()
        if process.terminationStatus != 0 { return nil }
        best = min(best, seconds(clock.now - start))
    }
    return best
}

/// A calibration in the simulated room (317.4-frame round trip, noise 30 dB
/// down): the whole run, the cross-correlation alone with its FFT size, and
/// the same correlation done directly in the time domain side by side.
func benchCalibrate(_ arguments: ParsedArguments) throws -> Int32 {
    let repeats = try arguments.int("--repeat", default: 3, range: 1...20)
    var options = SimulatedRoom.Options()
    options.latencyFrames = 317.4
    options.bleed = 1
    options.noise = 0.0194
    let clock = ContinuousClock()
    var best = Double.infinity
    var result: CalibrationResult?
    for _ in 0..<repeats {
        let room = try SimulatedRoom(options)
        let time = try clock.measure { result = try Calibration.measure(device: room) }
        best = min(best, seconds(time))
    }
    guard let result else { return 1 }
    print(String(format: "bench calibrate: 1 s sweep, simulated room, 317.4-frame round trip, noise 30 dB down → measured %.3f frames", result.roundTripFrames))
    print(String(format: "  whole calibration   %8.1f ms   (the room free-running: play, record, correlate)", best * 1000))
    // The correlation alone, on the same lengths.
    let signal = Calibration.testSignal(sampleRate: 48_000)
    let maximum = 24_000
    var played = [Float](repeating: 0, count: signal.count + maximum)
    for index in signal.indices { played[index] = signal[index] }
    var recorded = [Float](repeating: 0, count: played.count)
    for index in signal.indices { recorded[index + 317] = signal[index] }
    var fftBest = Double.infinity
    for _ in 0..<repeats { fftBest = min(fftBest, seconds(try clock.measure { _ = try Calibration.estimate(played: played, recorded: recorded, maximumFrames: maximum) })) }
    print(String(format: "  FFT correlation     %8.1f ms   (%d-point real FFTs, FFTW single precision, plus the sub-sample search)", fftBest * 1000, result.fftSize))
    var directBest = Double.infinity
    var sink: Float = 0
    for _ in 0..<max(1, repeats / 3) {
        directBest = min(directBest, seconds(clock.measure {
            played.withUnsafeBufferPointer { p in recorded.withUnsafeBufferPointer { r in
                for lag in 0...maximum {
                    var sum: Float = 0
                    for index in 0..<signal.count { sum += p[index] * r[index + lag] }
                    sink = max(sink, sum)
                }
            } }
        }))
    }
    print(String(format: "  direct correlation  %8.1f ms   (%d lags × %d samples, time domain; peak %.0f)", directBest * 1000, maximum + 1, signal.count, sink))
    print(String(format: "  ratio               %8.1f× faster with the FFT", directBest / fftBest))
    return 0
}

/// YIN on the shared voice files against aubio's YIN (`aubiopitch -p yin
/// -B 2048 -H 512`), side by side: time and the accuracy figures for both
/// (aubio's times moved back 1,024 samples to its windows' centres).
func benchPitch(_ arguments: ParsedArguments) throws -> Int32 {
    let repeats = try arguments.int("--repeat", default: 3, range: 1...20)
    _ = try pitchFigures(arguments.value("--dir") ?? "../shared/data/voice", repeats: repeats)
    return 0
}

/// The figures of `benchPitch` for every voice file in `directory`, printed;
/// returns ours (accuracy and real-time factor of the tracking) per file.
func pitchFigures(_ directory: String, repeats: Int) throws -> [(name: String, metrics: PitchMetrics, realTime: Double)] {
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".wav") }.sorted()
    guard !names.isEmpty else { throw CLIError("no .wav files in \(directory)", exitCode: 1) }
    let clock = ContinuousClock()
    var figures: [(name: String, metrics: PitchMetrics, realTime: Double)] = []
    for name in names {
        let path = directory + "/" + name
        let truthPath = path.replacingOccurrences(of: ".wav", with: ".f0.csv")
        let reference: [Double]
        do { reference = try PitchMetrics.truth(csv: (try? String(contentsOfFile: truthPath, encoding: .utf8)) ?? "", file: truthPath) } catch {
            throw CLIError(error.description, exitCode: 1)
        }
        var ours: [PitchEstimate] = []
        var best = Double.infinity
        var trackingBest = Double.infinity
        var audioSeconds = 0.0
        for _ in 0..<repeats {
            var tracking = Duration.zero
            let time = try clock.measure {
                let decoded = try AudioFile.readMono(path)
                audioSeconds = Double(decoded.samples.count) / Double(decoded.sampleRate)
                let detector = YINDetector(sampleRate: decoded.sampleRate)
                tracking = clock.measure { ours = detector.track(decoded.samples, hop: 512) }
            }
            best = min(best, seconds(time))
            trackingBest = min(trackingBest, seconds(tracking))
        }
        print(String(format: "bench pitch: %@ (%.1f s)", name, audioSeconds))
        print(String(format: "  acapella YIN  %7.1f ms  (%.0f× real time, decode and FFT planning included)  %@", best * 1000, audioSeconds / best, PitchMetrics(estimates: ours, truth: reference).description))
        print(String(format: "    of which tracking %.1f ms  (%.0f× real time on one core)", trackingBest * 1000, audioSeconds / trackingBest))
        figures.append((name, PitchMetrics(estimates: ours, truth: reference), audioSeconds / trackingBest))
        // aubio, the same file, the same window and hop.
        var aubioBest = Double.infinity
        var output = ""
        for _ in 0..<repeats {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["aubiopitch", "-i", path, "-p", "yin", "-B", "2048", "-H", "512"]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            let start = clock.now
            do { try process.run() } catch { break }
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { break }
            aubioBest = min(aubioBest, seconds(clock.now - start))
            output = String(decoding: data, as: UTF8.self)
        }
        guard aubioBest.isFinite else {
            print("  aubio YIN     not run (install Debian's aubio-tools for the side-by-side figure)")
            continue
        }
        // aubio stamps a window 1,024 samples after its centre: estimate j belongs to truth frame j − 2.
        let values = output.split(separator: "\n").compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
        var aubio = [PitchEstimate](repeating: PitchEstimate(centreSample: 0, frequency: 0, aperiodicity: 1, voiced: false), count: reference.count)
        for (index, value) in values.enumerated() where index - 2 >= 0 && index - 2 < aubio.count {
            aubio[index - 2] = PitchEstimate(centreSample: Int64((index - 2) * 512), frequency: value, aperiodicity: 0, voiced: value > 0)
        }
        print(String(format: "  aubio YIN     %7.1f ms  (%.0f× real time, process included)  %@", aubioBest * 1000, audioSeconds / aubioBest, PitchMetrics(estimates: aubio, truth: reference).description))
        print(String(format: "  ratio         %7.1f× faster than aubio's YIN", aubioBest / best))
    }
    return figures
}

/// The box as a process: start-up (process start to "ready": device open,
/// song parsed, project opened, engine running), the median of `--repeat`
/// runs; and the resident size of a box rehearsing an 8-part, 3-minute
/// project with a full take on every part, against the issue's budget of
/// 40 MB + 1.1 × the decoded take data.
func benchBox(_ arguments: ParsedArguments) throws -> Int32 {
    let repeats = try arguments.int("--repeat", default: 10, range: 1...50)
    let rate = 48_000
    // The appliance beside this benchmark program (the same build folder).
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("acapella").path
    guard FileManager.default.isExecutableFile(atPath: executable) else { throw CLIError("bench box: no acapella program at \(executable); build it first", exitCode: 1) }
    let folder = NSTemporaryDirectory() + "acapella-bench-box-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let settings = folder + "/acapella.json"
    try #"{ "readouts": { "console": false, "lcd": false } }"#.write(toFile: settings, atomically: true, encoding: .utf8)
    guard let song = ShippedFiles.path("Songs/amazing-grace.acasong", installed: "share/acapella/songs/amazing-grace.acasong") else {
        throw CLIError("bench box: the song library is not here (run from the repository)", exitCode: 1)
    }

    /// Starts the box; returns seconds to its "ready" line and its resident
    /// size (kB) `settle` seconds after it (nil: not asked).
    func startBox(_ extra: [String], settle: Double?) throws -> (ready: Double, residentKB: Int?) {
        let run = try boxProcess(executable, ["run", "--config", settings, "--data", folder + "/data", "--device", "sim:speed=1", "--seconds", String((settle ?? 0) + 5)] + extra,
                                 settle: settle)
        guard let ready = run.ready else { throw CLIError("bench box: the box never said ready:\n\(run.text)", exitCode: 1) }
        return (ready, settle == nil ? nil : run.status["VmRSS"])
    }

    var times: [Double] = []
    for _ in 0..<repeats { times.append(try startBox(["--song", song], settle: nil).ready) }
    times.sort()
    let median = times[times.count / 2]
    print("bench box: start-up, process start to \"ready\" (device open, song parsed, project opened, engine running), \(repeats) runs")
    print(String(format: "  median %6.1f ms   fastest %6.1f ms   slowest %6.1f ms   goal ≤ 500 ms: %@", median * 1000, times[0] * 1000,
                 times[times.count - 1] * 1000, median <= 0.5 ? "met" : "NOT met"))

    // An 8-part, 3-minute project with a full take on every part.
    let (project, frames) = try threeMinuteProject(at: folder + "/eight.acaproj", parts: 8, rate: rate)
    let decodedMB = Double(8 * frames * MemoryLayout<Float>.size) / 1_048_576
    let (ready, measured) = try startBox(["--project", project.path], settle: 2)
    guard let resident = measured else { throw CLIError("bench box: could not read the box's resident size from /proc", exitCode: 1) }
    let residentMB = Double(resident) / 1_024
    let budget = 40 + 1.1 * decodedMB
    print(String(format: "bench box: memory, 8 parts × %.0f s with a full take each (%.1f MB of decoded takes), ready in %.0f ms", Double(frames) / Double(rate), decodedMB, ready * 1000))
    print(String(format: "  resident %6.1f MB   budget 40 MB + 1.1 × %.1f MB = %.1f MB: %@ (%.1f MB besides the takes)", residentMB, decodedMB, budget,
                 residentMB <= budget ? "met" : "NOT met", residentMB - decodedMB))
    return 0
}

/// `acapella-bench latency`: the box on the simulated room in real time, in
/// a terminal (tmux), 40 key presses 100 ms apart (each an engine command:
/// the metronome on or off); the box measures each from the moment its key
/// was read to the start of the period that applied it, and this prints
/// the figures against the goal (one period + 1 ms at p99).
func benchLatency(_ arguments: ParsedArguments) throws -> Int32 {
    let presses = try arguments.int("--repeat", default: 40, range: 5...1_000)
    let period = try arguments.int("--frames", default: 128, range: 16...4_096)
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("acapella").path
    let folder = NSTemporaryDirectory() + "acapella-bench-latency-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try #"{ "readouts": { "console": true, "lcd": false } }"#.write(toFile: folder + "/settings.json", atomically: true, encoding: .utf8)
    let socket = "acapella-bench-\(getpid())"
    func tmux(_ words: [String]) -> Int32 { DetachedCommand.run(["tmux", "-L", socket] + words) ?? -1 }
    defer { _ = tmux(["kill-server"]) }
    let log = folder + "/log"
    let command = "ACAPELLA_DATA_DIR=\(folder) \(executable) run --data \(folder) --config \(folder)/settings.json --device sim:speed=1,period=\(period) 2> \(log); sleep 5"
    guard tmux(["new-session", "-d", "-s", "bench", "-x", "80", "-y", "24", command]) == 0 else {
        throw CLIError("bench latency: tmux will not start (Debian package tmux)", exitCode: 1)
    }
    func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
    let start = Date()
    while !logText().contains("ready: ") && Date().timeIntervalSince(start) < 20 { usleep(50_000) }
    guard logText().contains("ready: ") || FileManager.default.fileExists(atPath: folder + "/box.log") else {
        throw CLIError("bench latency: the box did not start: \(logText().suffix(300))", exitCode: 1)
    }
    usleep(300_000)
    for _ in 0..<presses {
        _ = tmux(["send-keys", "-t", "bench", "-l", "m"])
        usleep(100_000)
    }
    _ = tmux(["send-keys", "-t", "bench", "-l", "q"])
    let boxLog = folder + "/box.log"
    var summary: String?
    let deadline = Date().addingTimeInterval(15)
    while summary == nil && Date() < deadline {
        let text = logText() + ((try? String(contentsOfFile: boxLog, encoding: .utf8)) ?? "")
        summary = text.split(separator: "\n").first { $0.contains("input to engine: ") }.map(String.init)
        usleep(100_000)
    }
    guard let summary, let range = summary.range(of: "input to engine: ") else {
        throw CLIError("bench latency: the box reported no figures: \(logText().suffix(300))", exitCode: 1)
    }
    let figures = String(summary[range.upperBound...])
    print("bench latency: \(presses) console keys, \(period)-frame periods at 48 kHz, the simulated room in real time")
    print("  \(figures)")
    let numbers = figures.split(separator: " ").compactMap { Double($0) }
    if numbers.count >= 5 {
        let p99 = numbers[2]
        let periodMilliseconds = numbers[4]
        print(String(format: "  goal: p99 ≤ one period + 1 ms = %.2f ms: %@", periodMilliseconds + 1, p99 <= periodMilliseconds + 1 ? "met" : "NOT met"))
    }
    return 0
}

/// The box (`acapella` with `arguments`) as a process: seconds from its
/// start to its "ready" line (nil: it never said it), then, `settle`
/// seconds later (when asked), its /proc status (kB by field: VmRSS,
/// VmHWM…) before it is stopped; and all it printed.
/// With `waitFor`, the settling starts once the box has also printed that
/// (and `then` has run with what it printed so far: a client asking the page).
func boxProcess(_ executable: String, _ arguments: [String], settle: Double?, waitFor: String? = nil, then: ((String) -> Void)? = nil)
    throws -> (ready: Double?, status: [String: Int], text: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardError = pipe
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    let start = ContinuousClock.now
    try process.run()
    var text = ""
    var ready: Double?
    while ready == nil {
        let data = pipe.fileHandleForReading.availableData
        if data.isEmpty { break }
        text += String(decoding: data, as: UTF8.self)
        if text.contains("acapella: ready: ") { ready = seconds(ContinuousClock.now - start) }
    }
    if let waitFor, ready != nil {
        while !text.contains(waitFor) {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        then?(text)
    }
    var status: [String: Int] = [:]
    if let settle, ready != nil {
        usleep(useconds_t(settle * 1_000_000))
        status = ProcessStatus.read(String(process.processIdentifier))
        kill(process.processIdentifier, SIGTERM)
    }
    text += String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (ready, status, text)
}
