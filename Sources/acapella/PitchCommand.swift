import AcapellaAnalysis
import AcapellaCLI
import AcapellaDSP
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import AcapellaStatus
import Foundation

/// `acapella pitch FILE.wav [--song SONG --part NAME --offset N] [--truth CSV] [--hop N]`:
/// YIN over a file, as CSV (time, Hz, cents, note, confidence); with a
/// song and part, the expected note narrows the search and the cents are
/// against it; with a truth CSV, the accuracy figures.
func runPitch(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    let decoded = try readRecording(path, for: "pitch tracking")
    let hop = try arguments.int("--hop", default: 512 * decoded.sampleRate / 48_000, range: 16...8_192)
    var expectedNote: ((Int64) -> Int?)?
    if let song = arguments.value("--song") {
        guard let partName = arguments.value("--part") else { throw CLIError("--song needs --part NAME") }
        let score = try loadScore(song)
        guard let part = score.parts.firstIndex(where: { $0.name.lowercased() == partName.lowercased() }) else {
            throw CLIError("no part named '\(partName)'; the parts are: " + score.parts.map(\.name).joined(separator: ", "), exitCode: 1)
        }
        let schedule: Schedule
        do { schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: decoded.sampleRate)) } catch { throw CLIError(error.description, exitCode: 1) }
        let offset = Int64(try arguments.int("--offset", default: 0, range: -100_000_000...100_000_000))
        let tones = schedule.tones[part]
        // File frame f holds song sample f − offset (a take's alignment).
        expectedNote = { frame in
            tones.tone(at: frame - offset)?.midi
        }
    } else if arguments.value("--part") != nil || arguments.value("--offset") != nil {
        throw CLIError("--part and --offset need --song")
    }
    let detector = YINDetector(sampleRate: decoded.sampleRate)
    let estimates = detector.track(decoded.samples, hop: hop) { frame in
        expectedNote?(frame).map { Tuning.frequency(midi: $0) }
    }
    if let truthPath = arguments.value("--truth") {
        guard let text = try? String(contentsOfFile: truthPath, encoding: .utf8) else { throw CLIError("\(truthPath): cannot read", exitCode: 1) }
        let reference: [Double]
        do { reference = try PitchMetrics.truth(csv: text, file: truthPath) } catch { throw CLIError(error.description, exitCode: 1) }
        print(PitchMetrics(estimates: estimates, truth: reference))
        return 0
    }
    print("time_s,f0_hz,cents,note,confidence")
    for estimate in estimates {
        // To the nanosecond: the stamp is a whole sample; rounded to the
        // microsecond, a reader that interpolates (mir_eval) mixed a voiced
        // frame with the unvoiced one beside it at every voicing edge.
        let time = String(format: "%.9f", Double(estimate.centreSample) / Double(decoded.sampleRate))
        guard estimate.voiced else {
            print("\(time),0,,,0")
            continue
        }
        let note: String
        let cents: Double
        if let expected = expectedNote?(estimate.centreSample) {
            note = NoteName.name(expected)
            cents = NoteName.cents(estimate.frequency, from: expected)
        } else {
            let nearest = NoteName.nearest(estimate.frequency)
            note = nearest.name
            cents = nearest.cents
        }
        print(String(format: "%@,%.3f,%+.1f,%@,%.3f", time, estimate.frequency, cents, note, estimate.confidence))
    }
    return 0
}

/// A recording decoded to mono, at a rate pitch tracking works at; else
/// the one-line error (`purpose` names what needs it).
func readRecording(_ path: String, for purpose: String) throws -> (samples: [Float], sampleRate: Int) {
    let decoded: (samples: [Float], sampleRate: Int)
    do { decoded = try AudioFile.readMono(path) } catch { throw CLIError(error.description, exitCode: 1) }
    guard YINDetector.sampleRates.contains(decoded.sampleRate) else {
        throw CLIError("\(path): recorded at \(decoded.sampleRate) Hz; \(purpose) needs \(YINDetector.sampleRates.lowerBound)–\(YINDetector.sampleRates.upperBound) Hz", exitCode: 1)
    }
    return decoded
}
