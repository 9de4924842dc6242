import AcapellaTrials
import AcapellaAnalysis
import AcapellaBox
import AcapellaCLI
import Foundation

/// `acapella-bench align`: issue 23's auto-align measure (`ReferenceTrials`,
/// the harness the tests hold to the same figures): 40 recordings of 5
/// shipped songs in another timbre, with noise, at 44.1 kHz, starting at a
/// known place, plus 10 at tempos 2.5–6 % off; the offset found within
/// 5 ms, and every other tempo refused. Beside it, the plain peer: the
/// waveforms cross-correlated (what lines up two copies of one file).
func benchAlign(_ arguments: ParsedArguments) throws -> Int32 {
    let trials = ReferenceTrials.cases()
    var started = DispatchTime.now().uptimeNanoseconds
    let ours = try ReferenceTrials.run(trials)
    let oursSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    started = DispatchTime.now().uptimeNanoseconds
    let peer = try ReferenceTrials.run(trials) { recording, guide in
        let lags = (-guide.count / 2)...(recording.count - guide.count / 2)
        let correlation = ReferenceAligner.crossCorrelate(recording, guide, lags: lags)
        let best = correlation.indices.max { correlation[$0] < correlation[$1] } ?? 0
        return .success(ReferenceAlignment(songStartFrame: Int64(lags.lowerBound + best), confidence: 0, tempoDifference: 0, driftSeconds: 0))
    }
    let peerSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    func summary(_ outcomes: [ReferenceTrials.Outcome], _ name: String) {
        let same = outcomes.filter { $0.trial.tempo == 1 }
        let other = outcomes.filter { $0.trial.tempo != 1 }
        let errors = same.compactMap { $0.errorMilliseconds.map(abs) }.sorted()
        let within = errors.filter { $0 <= 5 }.count
        let refusedSame = same.count - errors.count
        let refusedOther = other.filter { $0.errorMilliseconds == nil }.count
        let median = errors.isEmpty ? .nan : errors[errors.count / 2]
        print(String(format: "  %@: within 5 ms %d of %d (%.1f %%), median error %.2f ms, worst %.1f ms, refused %d; other tempos refused %d of %d",
                     name, within, same.count, 100 * Double(within) / Double(same.count), median, errors.last ?? .nan, refusedSame, refusedOther, other.count))
        for outcome in same where (outcome.errorMilliseconds.map { abs($0) > 5 } ?? true) {
            let what: String
            switch outcome.result {
            case .success: what = String(format: "off by %.1f ms", outcome.errorMilliseconds ?? 0)
            case .failure(let refusal): what = "refused: \(refusal)"
            }
            print(String(format: "    %@ offset %.3f s noise %.0f dB: %@", outcome.trial.song, outcome.trial.offsetSeconds, outcome.trial.noiseDB, what))
        }
        for outcome in other where outcome.errorMilliseconds != nil {
            print(String(format: "    %@ at tempo %.3f accepted (off by %.0f ms)", outcome.trial.song, outcome.trial.tempo, outcome.errorMilliseconds ?? 0))
        }
    }
    print("bench align: \(trials.count) recordings of \(ReferenceTrials.songs.count) shipped songs (another timbre, 5 ms attacks, entries ±3 ms, noise −22/−12 dB, 44.1 kHz converted by libsoxr)")
    summary(ours, "onset curves (ours)")
    summary(peer, "waveform cross-correlation (peer)")
    print(String(format: "  time: ours %.2f s (%.0f ms per recording), waveforms %.2f s", oursSeconds, 1_000 * oursSeconds / Double(trials.count), peerSeconds))
    // Softer onsets: a note that swells is found later, by about half its swell.
    for attack in [0.010, 0.025] {
        print(String(format: "the same with notes swelling over %.0f ms:", attack * 1_000))
        summary(try ReferenceTrials.run(ReferenceTrials.cases(attackSeconds: attack)), "onset curves (ours)")
    }
    return 0
}
