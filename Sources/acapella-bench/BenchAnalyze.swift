import AcapellaTrials
import AcapellaAnalysis
import AcapellaBox
import AcapellaCLI
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation

/// `acapella-bench analyze`: issue 20's measures, side by side.
/// 1. The take analysis against the synthetic singer's truth (8 songs, 3
///    singers: `AnalysisTruth`, the same takes the tests hold to the
///    thresholds), and aubio on the same takes: each note's pitch from
///    `aubiopitch` (the median over the note's middle, as ours), its entry
///    from `aubioonset` (the nearest onset), missed where aubio finds no
///    pitch over most of the note.
/// 2. Pitch without a score on the shared voice files and their
///    harmonic-heavy re-syntheses (Tools/make-harmonic-voices.py), aubio's
///    YIN beside (`bench pitch`'s figures).
/// 3. Note splitting against aubionotes, scored with mir_eval
///    (Tools/compare-notes.py).
/// 4. A 3-minute take analysed (goal: 0.5 s here).
/// 5. Pitch and notes without a score on the harder voices
///    (Tools/make-hard-voices.py) and the shared ones, beside the public
///    trackers (Tools/compare-trackers.py in `Tools/python-env peers`:
///    swift-f0, Praat, pYIN, CREPE, basic-pitch), each scored alike. Only
///    when asked (`--only 5`): its first run installs torch and tensorflow
///    (a few GB), and CREPE takes about 20 minutes here.
/// 6. Real singers (../shared/data/voice-real, SSVD v2.0): notes on the
///    recordings clean and in nine rooms, swift-f0 and basic-pitch run
///    beside (Tools/real-singers.py --peers-live in `Tools/python-env
///    peers`), scored alike, with each one's CPU per second of audio. Only
///    when asked (`--only 6`): basic-pitch reads about 15 minutes here.
func benchAnalyze(_ arguments: ParsedArguments) throws -> Int32 {
    let folder = NSTemporaryDirectory() + "acapella-bench-analyze-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let aubio = capture(["aubiopitch", "--help"], passErrors: true) != nil
    let sections = Set((arguments.value("--only") ?? "1,2,3,4").split(separator: ",").compactMap { Int($0) })

    if sections.contains(1) {
    print("bench analyze: 1. the take analysis against the synthetic singer's truth (8 songs, 3 singers; goals: cents p95 ≤ 3, onsets p95 ≤ 10 ms, missed recall ≥ 95 %, false alarms ≤ 2 %)")
    let scores = try AnalysisTruth.songs.map { name -> Score in
        guard let path = ShippedFiles.path("Songs/\(name).acasong", installed: "share/acapella/songs/\(name).acasong") else {
            throw CLIError("bench analyze: the song library is not here (run from the repository)", exitCode: 1)
        }
        return try loadScore(path)
    }
    for (index, profile) in AnalysisTruth.profiles.enumerated() {
        var ours = AnalysisTruth.Outcome()
        var theirs = AnalysisTruth.Outcome()
        for (number, score) in scores.enumerated() {
            let take = try AnalysisTruth.take(score: score, profile: profile, seed: AnalysisTruth.seed(song: number, profile: index))
            ours.add(AnalysisTruth.compare(take, score: score))
            if aubio { theirs.add(try aubioOutcome(take, file: folder + "/take.wav")) }
        }
        print("  acapella  " + ours.summary(profile.name))
        print("  aubio     " + (aubio ? theirs.summary(profile.name) + " (aubiopitch yinfft, aubioonset hfc)" : "not run (install Debian's aubio-tools)"))
    }

    }
    var directories = ["../shared/data/voice"]
    // The Python with pyworld and mir_eval (made once, for sections 2 and 3).
    let pythonTools = sections.contains(2) || sections.contains(3)
        ? capture([ShippedFiles.path("Tools/python-env", installed: "share/acapella/tools/python-env") ?? "Tools/python-env"])?
            .trimmingCharacters(in: .whitespacesAndNewlines) : nil
    if sections.contains(2) || sections.contains(3) {
    print("bench analyze: 2. pitch without a score (goals: raw pitch accuracy ≥ 0.99 on every file, median ≤ 3 cents, ≥ 1000× real time)")
    if let python = pythonTools, !python.isEmpty,
       let generator = ShippedFiles.path("Tools/make-harmonic-voices.py", installed: "share/acapella/tools/make-harmonic-voices.py"),
       capture([python, generator, "--voices", "../shared/data/voice", folder + "/voices"]) != nil {
        directories.append(folder + "/voices")
    } else {
        print("  (the harmonic-heavy voices were not made: Tools/python-env or pyworld is missing)")
    }
    var all: [(name: String, metrics: PitchMetrics, realTime: Double)] = []
    for directory in directories { all += try pitchFigures(directory, repeats: 3) }
    if let worst = all.min(by: { $0.metrics.rawPitchAccuracy < $1.metrics.rawPitchAccuracy }), let slowest = all.min(by: { $0.realTime < $1.realTime }) {
        print(String(format: "  acapella over %d files: accuracy %.4f at worst (%@), median %.2f cents at worst, %.0f× real time at slowest (%@)",
                     all.count, worst.metrics.rawPitchAccuracy, worst.name, all.map(\.metrics.medianCents).max() ?? 0, slowest.realTime, slowest.name))
    }

    }
    if sections.contains(3) {
    print("bench analyze: 3. note splitting against aubionotes, mir_eval onset+pitch F (goal ≥ 0.9 and above aubionotes)")
    if let python = pythonTools, !python.isEmpty,
       let tool = ShippedFiles.path("Tools/compare-notes.py", installed: "share/acapella/tools/compare-notes.py") {
        let acapella = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("acapella").path
        let files = directories.flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".wav") }.sorted().map { directory + "/" + $0 }
        }
        print((capture([python, tool, "--acapella", acapella] + files, passErrors: true) ?? "  compare-notes.py did not run\n").split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
    } else {
        print("  not run: Tools/python-env (mir_eval) is missing")
    }

    }
    if sections.contains(4) { try benchLongTake() }
    if sections.contains(5) { benchAgainstTrackers(folder: folder) }
    if sections.contains(6) { benchRealSingers(folder: folder) }
    return 0
}

/// Section 6: real singers, clean and in the rooms, beside swift-f0 and
/// basic-pitch run here (goal, issue 52: F at or above the best peer's,
/// a room costing no more, CPU under a third of swift-f0's).
func benchRealSingers(folder: String) {
    print("bench analyze: 6. notes of real singers (SSVD v2.0), clean and in nine rooms, beside swift-f0 and basic-pitch run here")
    let tool = { (name: String) in ShippedFiles.path("Tools/\(name)", installed: "share/acapella/tools/\(name)") }
    let data = "../shared/data/voice-real"
    guard FileManager.default.fileExists(atPath: data) else {
        print("  not run: \(data) is missing")
        return
    }
    guard let environment = tool("python-env"), let python = capture([environment, "peers"])?.trimmingCharacters(in: .whitespacesAndNewlines), !python.isEmpty,
          let script = tool("real-singers.py") else {
        print("  not run: `Tools/python-env peers` (the trackers from PyPI) or Tools/real-singers.py is missing")
        return
    }
    let acapella = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("acapella").path
    let output = capture([python, script, "--acapella", acapella, "--peers-live", "swift-f0,basic-pitch", "--more", data, folder + "/real-singers"]) ?? "  real-singers.py did not run\n"
    print(output.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
}

/// Section 5: the harder voices made, then every tracker on them and on the
/// shared voices (goal: at or above the best peer on accuracy and note F
/// on every file, keeping the precision and the speed).
func benchAgainstTrackers(folder: String) {
    print("bench analyze: 5. pitch and notes without a score on the harder voices and the shared ones, beside swift-f0, Praat, pYIN, CREPE and basic-pitch")
    let tool = { (name: String) in ShippedFiles.path("Tools/\(name)", installed: "share/acapella/tools/\(name)") }
    guard let environment = tool("python-env"), let python = capture([environment, "peers"])?.trimmingCharacters(in: .whitespacesAndNewlines), !python.isEmpty,
          let generator = tool("make-hard-voices.py"), let compare = tool("compare-trackers.py"),
          capture([python, generator, folder + "/hard"]) != nil else {
        print("  not run: `Tools/python-env peers` (the trackers from PyPI) or the voice generator is missing")
        return
    }
    let acapella = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("acapella").path
    let files = [folder + "/hard", "../shared/data/voice"].flatMap { directory in
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".wav") }.sorted().map { directory + "/" + $0 }
    }
    print((capture([python, compare, "--acapella", acapella] + files) ?? "  compare-trackers.py did not run\n").split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
}

/// Section 4: a 3-minute take's guide taken out and its notes analysed.
func benchLongTake() throws {
    print("bench analyze: 4. a 3-minute take analysed (goal ≤ 0.5 s)")
    let long = try threeMinuteScore(rate: 48_000)
    let take = try AnalysisTruth.take(score: long, profile: AnalysisTruth.profiles[1], seed: 7)
    let clock = ContinuousClock()
    var best = (guide: Double.infinity, analysis: Double.infinity, notes: 0)
    for _ in 0..<3 {
        var cleaned: [Float] = []
        let guide = clock.measure {
            cleaned = TakeReport.removingGuide(take.samples, origin: 0, schedule: take.schedule, part: take.part, takes: nil).samples
        }
        var notes = 0
        let analysis = clock.measure {
            notes = TakeReport.make(score: long, schedule: take.schedule, part: take.part, samples: cleaned, origin: 0,
                                    analyzer: TakeAnalyzer(sampleRate: 48_000)).notes.count
        }
        best = (min(best.guide, seconds(guide)), min(best.analysis, seconds(analysis)), notes)
    }
    print(String(format: "  %.0f s take, %d notes: guide rendered and taken out %.0f ms + analysis %.0f ms = %.2f s (best of 3)",
                 Double(take.samples.count) / 48_000, best.notes, best.guide * 1_000, best.analysis * 1_000, best.guide + best.analysis))
}

/// aubio's reading of a truth take: `aubiopitch` (its default yinfft, hop
/// 256) for each note's pitch — the median over the note's middle (30 ms
/// in from each end), missed when under half of those frames have a
/// pitch — and `aubioonset` (its default hfc) for its entry: the nearest
/// onset (none within 150 ms: counted 1 s off, as ours).
func aubioOutcome(_ take: AnalysisTruth.Take, file: String) throws -> AnalysisTruth.Outcome {
    try AudioFile.write(left: take.samples, right: take.samples, sampleRate: 48_000, to: file)
    let pitchLines = (capture(["aubiopitch", "-i", file, "-H", "256"]) ?? "").split(separator: "\n")
    let track: [(time: Double, hz: Double)] = pitchLines.compactMap { line in
        let fields = line.split(separator: " ")
        guard fields.count == 2, let time = Double(fields[0]), let hz = Double(fields[1]) else { return nil }
        return (time, hz)
    }
    let onsets = (capture(["aubioonset", "-i", file]) ?? "").split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    var outcome = AnalysisTruth.Outcome()
    for (index, tone) in take.schedule.tones[take.part].enumerated() {
        let truth = take.errors[index]
        let start = Double(tone.startSample + truth.lateSamples) / 48_000
        let end = Double(tone.endSample + truth.lateSamples) / 48_000
        let middle = track.filter { $0.time >= start + 0.03 && $0.time <= end - 0.03 }
        let pitched = middle.map(\.hz).filter { $0 > 0 }.sorted()
        let missed = middle.isEmpty || pitched.count * 2 < middle.count
        if truth.missed {
            outcome.missedTruth += 1
            if missed { outcome.missedFound += 1 }
            continue
        }
        outcome.sungTruth += 1
        guard !missed else {
            outcome.falseAlarms += 1
            continue
        }
        let median = pitched[pitched.count / 2]
        outcome.cents.append(abs(1_200 * log2(median / tone.frequency) - truth.cents))
        let nearest = onsets.min { abs($0 - start) < abs($1 - start) }
        outcome.onsets.append(nearest.map { abs($0 - start) <= 0.15 ? abs($0 - start) * 1_000 : 1_000 } ?? 1_000)
    }
    return outcome
}
