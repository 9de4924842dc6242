@testable import AcapellaAnalysis
@testable import AcapellaBox
import AcapellaDevices
import AcapellaEngine
import AcapellaScore
import Foundation
import Testing

/// Ground truth from the synthetic singer: each note detuned, early or
/// late, or missed by an amount the test chose; the take analysis must
/// find it again (issue 20's measures: cents within ±3 at p95, onsets
/// within ±10 ms at p95, missed notes with ≥ 95 % recall and ≤ 2 % false
/// alarms) on 8 songs and 3 singers.
@Suite struct TakeAnalysisTruthTests {
    struct Profile {
        var name: String
        var vibratoCents: Double
        var vibratoHz: Double
        var noise: Float
        var detune: Double
        var lateMilliseconds: Double
        var missed: Double
    }

    static let profiles = [
        Profile(name: "steady", vibratoCents: 0, vibratoHz: 5.5, noise: 0.003, detune: 30, lateMilliseconds: 60, missed: 0.05),
        Profile(name: "vibrato", vibratoCents: 30, vibratoHz: 5.5, noise: 0.005, detune: 40, lateMilliseconds: 80, missed: 0.05),
        Profile(name: "wide and breathy", vibratoCents: 55, vibratoHz: 6.3, noise: 0.02, detune: 50, lateMilliseconds: 100, missed: 0.08),
    ]

    static let songs = ["amazing-grace", "bach-bwv26.6-ach-wie-fluechtig", "bach-bwv40.8-freuet-euch-ihr-christen", "bach-bwv66.6",
                        "lift-every-voice-and-sing", "my-bonnie", "ode-to-joy", "silent-night"]

    struct Outcome {
        var cents: [Double] = []
        var onsets: [Double] = []
        var missedTruth = 0
        var missedFound = 0
        var sungTruth = 0
        var falseAlarms = 0
    }

    /// One song, one singer: the take rendered, analysed, compared.
    static func run(song: String, profile: Profile, seed: UInt64) throws -> Outcome {
        let score = try Acasong.parse(songText(song + ".acasong"))
        let schedule = try Schedule(score: score)
        let part = min(1, score.parts.count - 1)
        var rng = SplitMix64(seed: seed)
        func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
        let tones = schedule.tones[part]
        let errors = tones.indices.map { index -> SungNoteError in
            // The first note is always sung (a take starts somewhere).
            SungNoteError(cents: (uniform() * 2 - 1) * profile.detune, lateSamples: Int64((uniform() * 2 - 1) * profile.lateMilliseconds * 48),
                          missed: index > 0 && uniform() < profile.missed)
        }
        var singer = SyntheticSinger(tones: SyntheticSinger.tones(tones, with: errors), sampleRate: 48_000)
        singer.vibratoCents = profile.vibratoCents
        singer.vibratoHz = profile.vibratoHz
        singer.noise = profile.noise
        let length = Int(schedule.endSample) + 48_000
        let samples = (0..<length).map { singer.sample(atSong: Int64($0)) }
        let report = TakeReport.make(score: score, schedule: schedule, part: part, samples: samples, origin: 0, analyzer: TakeAnalyzer(sampleRate: 48_000))
        var outcome = Outcome()
        #expect(report.notes.count == tones.count, "\(song): every note analysed")
        for note in report.notes {
            let truth = errors[note.tone]
            if truth.missed {
                outcome.missedTruth += 1
                if !note.analysis.sung { outcome.missedFound += 1 }
                continue
            }
            outcome.sungTruth += 1
            guard note.analysis.sung, let cents = note.analysis.cents else {
                outcome.falseAlarms += 1
                continue
            }
            outcome.cents.append(abs(cents - truth.cents))
            // An onset not found counts as far off.
            outcome.onsets.append(note.analysis.onsetMilliseconds.map { abs($0 - Double(truth.lateSamples) / 48) } ?? 1_000)
        }
        return outcome
    }

    static func p95(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.95).rounded(.up)) - 1)]
    }

    @Test(arguments: 0..<3)
    func theAnalysisFindsWhatTheSingerDid(profile index: Int) throws {
        let profile = Self.profiles[index]
        var all = Outcome()
        for (number, song) in Self.songs.enumerated() {
            let outcome = try Self.run(song: song, profile: profile, seed: UInt64(number * 10 + index + 1))
            all.cents += outcome.cents
            all.onsets += outcome.onsets
            all.missedTruth += outcome.missedTruth
            all.missedFound += outcome.missedFound
            all.sungTruth += outcome.sungTruth
            all.falseAlarms += outcome.falseAlarms
        }
        let recall = Double(all.missedFound) / Double(max(1, all.missedTruth))
        let falseAlarms = Double(all.falseAlarms) / Double(all.sungTruth)
        let summary = String(format: "%@: %d notes, cents p95 %.2f, onsets p95 %.1f ms, missed %d/%d found, %d false alarms", profile.name,
                             all.sungTruth + all.missedTruth, Self.p95(all.cents), Self.p95(all.onsets), all.missedFound, all.missedTruth, all.falseAlarms)
        print(summary)
        #expect(all.missedTruth >= 10, "\(summary)")
        #expect(Self.p95(all.cents) <= 3, "\(summary)")
        #expect(Self.p95(all.onsets) <= 10, "\(summary)")
        #expect(recall >= 0.95, "\(summary)")
        #expect(falseAlarms <= 0.02, "\(summary)")
    }
}
