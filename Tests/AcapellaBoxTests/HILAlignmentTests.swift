@testable import AcapellaBox
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// Run by Tests/hil/scenarios.sh inside the hardware-in-the-loop VM after
/// `acapella record PROJECT --part PART --guide` on the loopback card (and
/// after `--parts` on a four-input loopback whose inputs hear the two played
/// channels in four known mixes), and by Tests/cli-tests.sh after the same in
/// the simulated room at real time with the microphone hearing nothing but
/// the playback: the captured signal is the box's own playback (every part's
/// guide, the recorded part's included). Both stall the recording on purpose
/// (`SIGSTOP`) so the device xruns. Each take, read through its alignment,
/// must line up with the same mix rendered offline in every stretch between
/// its dropouts — before the first xrun, after the first, the tenth, the
/// hundredth — and be silent inside each dropout, in place. Takes recorded
/// together must share their mark, offset, length and dropouts. Skipped (and
/// reported as skipped) anywhere else: it needs that recording.
@Suite struct HILAlignmentTests {
    static let environment = ProcessInfo.processInfo.environment
    static let project = environment["ACAPELLA_HIL_PROJECT"]

    /// `ACAPELLA_HIL_PARTS`: `PART=LEFT:RIGHT,…`, each part's input as a mix
    /// of the played channels; else `ACAPELLA_HIL_PART` (default Alto)
    /// hearing their average, as a one-input capture does.
    static func inputs() throws -> [(part: String, left: Float, right: Float)] {
        guard let spec = environment["ACAPELLA_HIL_PARTS"] else { return [(environment["ACAPELLA_HIL_PART"] ?? "Alto", 0.5, 0.5)] }
        return try spec.split(separator: ",").map { item in
            let pair = item.split(separator: "=")
            let gains = pair.count == 2 ? pair[1].split(separator: ":").compactMap { Float($0) } : []
            guard gains.count == 2 else { throw ProjectError(description: "ACAPELLA_HIL_PARTS: '\(item)' is not PART=LEFT:RIGHT") }
            return (String(pair[0]), gains[0], gains[1])
        }
    }

    @Test(.enabled(if: project != nil, "needs a take recorded on the loopback card or in a silent room (Tests/hil/scenarios.sh, Tests/cli-tests.sh)"))
    func loopbackTakeLinesUpWithThePlayback() throws {
        let (project, _) = try Project.open(try #require(Self.project), for: .read)
        let inputs = try Self.inputs()
        var takes: [TakeRecord] = []
        for input in inputs {
            let take = try #require(project.manifest.takes.last { $0.part == input.part && $0.state == .kept }, "no kept \(input.part) take")
            try check(take, in: project, hearing: input.left, input.right)
            takes.append(take)
        }
        // Recorded together: one capture, so one mark, one alignment, one length, the same dropouts.
        if let first = takes.first, takes.count > 1 {
            for take in takes.dropFirst() {
                #expect(take.ensemble != nil && take.ensemble == first.ensemble, "take \(take.id) was not recorded with take \(first.id)")
                #expect(take.alignmentOffsetSamples == first.alignmentOffsetSamples && take.frames == first.frames,
                        "take \(take.id): offset \(take.alignmentOffsetSamples), \(take.frames) frames; take \(first.id): \(first.alignmentOffsetSamples), \(first.frames)")
                #expect(take.dropouts == first.dropouts, "take \(take.id)'s dropouts differ from take \(first.id)'s")
            }
            print("hil alignment: \(takes.count) takes recorded together (\(takes.map { "\($0.id) \($0.part)" }.joined(separator: ", "))): one mark, offset \(first.alignmentOffsetSamples), \(first.frames) frames each, the same \(first.dropouts.count) dropouts")
        }
    }

    func check(_ take: TakeRecord, in project: Project, hearing leftGain: Float, _ rightGain: Float) throws {
        let part = take.part
        // The xruns forced on the recording: at least as many dropouts.
        let forced = Int(Self.environment["ACAPELLA_HIL_XRUNS"] ?? "0") ?? 0
        let (samples, _) = try AudioFile.readMono(project.path + "/" + take.file)
        func taken(_ song: Int64) -> Float {
            let frame = song + take.alignmentOffsetSamples + take.nudgeSamples
            return frame >= 0 && frame < Int64(samples.count) ? samples[Int(frame)] : 0
        }
        // What the recording played: every part spread as the session does,
        // its own guide on (--guide), the session's clicks; captured as the
        // input's mix of the two channels.
        let schedule = try Schedule(score: project.score, options: ScheduleOptions(sampleRate: project.manifest.sampleRate, countInMeasures: 1))
        let played = OfflineRender.render(schedule, mixes: PartMix.spread(count: project.score.parts.count), clickGain: 0.2)
        func heard(_ song: Int64) -> Float {
            let index = Int(song - played.firstSample)
            return index >= 0 && index < played.left.count ? leftGain * played.left[index] + rightGain * played.right[index] : 0
        }
        let dropouts = take.dropouts.sorted { $0.start < $1.start }
        #expect(dropouts.count >= forced, "\(forced) xruns forced, \(dropouts.count) dropouts in the take")

        // Silent in place: every song sample a dropout lists is a zero in the take.
        var loud = 0
        for dropout in dropouts {
            for song in dropout.start..<dropout.end where taken(song) != 0 { loud += 1 }
        }
        #expect(loud == 0, "\(loud) samples inside the dropouts are not silent")

        // The stretches between dropouts (a little kept clear of each edge,
        // where the converter's reach and the capture's first frames after a
        // restart lie), from the song's first sample (the count-in's clicks
        // are the session's, not the offline render's) to its end.
        let margin: Int64 = 64
        var stretches: [Range<Int64>] = []
        var from = max(0, -take.alignmentOffsetSamples) + margin
        // To the song's end, or the take's when it was stopped before it.
        let end = min(schedule.endSample, Int64(samples.count) - take.alignmentOffsetSamples - take.nudgeSamples)
        for dropout in dropouts + [SongRange(end, end)] {
            let to = dropout.start - margin
            if to - from >= 1_024 { stretches.append(from..<to) }
            from = max(from, dropout.end + margin)
        }
        // Lag 0 in every stretch: the residual against the playback far
        // below it (one period off is +3 dB).
        var worst = -Double.infinity
        var misaligned: [String] = []
        var compared = 0
        for (index, stretch) in stretches.enumerated() {
            var energy = 0.0
            var error = 0.0
            for song in stretch {
                energy += Double(heard(song) * heard(song))
                error += Double((taken(song) - heard(song)) * (taken(song) - heard(song)))
            }
            compared += stretch.count
            guard energy > 1e-3 else { continue }  // silence between notes says nothing
            let residual = 10 * log10(max(error, 1e-20) / energy)
            worst = max(worst, residual)
            if residual >= -30 { misaligned.append(String(format: "stretch %d (song %lld..<%lld): %.1f dB", index, stretch.lowerBound, stretch.upperBound, residual)) }
        }
        // The lag after 0, 1, 10 and 100 xruns: the shift of the take that
        // leaves the least residual against the playback over the first
        // sounding stretch after that many dropouts. (The most correlated
        // shift is not it: unnormalised, a louder note a shift away wins
        // over silence at lag 0 — 980 samples "off" in a stretch the
        // residual check found -224 dB exact.)
        var lags: [String] = []
        for after in [0, 1, 10, 100] where after <= dropouts.count {
            let start = after == 0 ? (stretches.first?.lowerBound ?? 0) : dropouts[after - 1].end + margin
            let windows = stretches.filter { $0.upperBound > start }.map { max($0.lowerBound, start)..<min($0.upperBound, max($0.lowerBound, start) + 4_096) }
            guard let window = windows.first(where: { window in window.reduce(0.0) { $0 + Double(heard($1) * heard($1)) } > 1e-3 }) else {
                lags.append("none after \(after) (silent to the end)")
                continue
            }
            let lag = leastResidualLag(heard, taken, over: window, maximumLag: 1_100)
            lags.append("\(lag) after \(after)")
            #expect(lag == 0, "the take is \(lag) samples off after \(after) xruns (song \(window.lowerBound)..<\(window.upperBound))")
        }
        print(String(format: "hil alignment: take %d (%@, hearing %.2f left + %.2f right): %d dropouts (%d xruns forced); lag %@; %d stretches between them, %d samples, the worst %.1f dB against the playback; every dropout silent in place: %@; calibration: %@",
                     take.id, part, leftGain, rightGain, dropouts.count, forced, lags.joined(separator: ", "), stretches.count, compared, worst, loud == 0 ? "yes" : "no",
                     take.calibration ?? "none"))
        #expect(misaligned.isEmpty, "\(misaligned.count) stretches off the playback: \(misaligned.prefix(5))")
        #expect(compared > 100_000, "only \(compared) samples compared")
    }
}

/// The shift of `taken` against `heard` over `range` that leaves the least
/// squared difference: the take's lag when it should equal the playback.
func leastResidualLag(_ heard: (Int64) -> Float, _ taken: (Int64) -> Float, over range: Range<Int64>, maximumLag: Int64) -> Int64 {
    var best: (lag: Int64, error: Double) = (0, .infinity)
    for lag in -maximumLag...maximumLag {
        var error = 0.0
        for s in range {
            let difference = Double(taken(s + lag) - heard(s))
            error += difference * difference
        }
        // The nearer lag on a tie (a silent or periodic window).
        if error < best.error || (error == best.error && abs(lag) < abs(best.lag)) { best = (lag, error) }
    }
    return best.lag
}
