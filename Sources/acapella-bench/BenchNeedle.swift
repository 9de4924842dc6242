import AcapellaBox
import AcapellaCLI
import AcapellaScore
import AcapellaTrials
import Foundation

/// `acapella-bench needle`: the live needle against the synthetic singer's
/// vibrato takes (8 songs, 2 singers): the share of readings from 150 ms
/// into a note within ±5 cents of the note's true centre, the raw YIN
/// reading (the needle before issue 34) beside; and the cost per reading.
func benchNeedle(_ arguments: ParsedArguments) throws -> Int32 {
    let scores = try AnalysisTruth.songs.map { name -> Score in
        guard let path = ShippedFiles.path("Songs/\(name).acasong", installed: "share/acapella/songs/\(name).acasong") else {
            throw CLIError("bench needle: the song library is not here (run from the repository)", exitCode: 1)
        }
        return try loadScore(path)
    }
    print("bench needle: readings from \(Int(NeedleTruth.settleMilliseconds)) ms into each sung note against its true centre (goal: ≥ 90 % within ±5 cents)")
    for index in NeedleTruth.profiles {
        let clock = ContinuousClock()
        var outcome = NeedleTruth.Outcome()
        let time = try clock.measure { outcome = try NeedleTruth.run(scores: scores, profile: index) }
        let profile = AnalysisTruth.profiles[index]
        print("  " + outcome.summary(String(format: "%@ (±%.0f cents at %.1f Hz)", profile.name, profile.vibratoCents, profile.vibratoHz)))
        print(String(format: "    %.1f s of song through the needle in %.2f s", Double(outcome.songSamples) / 48_000, seconds(time)))
    }
    return 0
}
