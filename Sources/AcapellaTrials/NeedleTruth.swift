import AcapellaBox
import AcapellaDSP
public import AcapellaScore
import AcapellaEngine
import AcapellaDevices
import Foundation

/// Ground truth for the live needle (issue 34's measure): the synthetic
/// singer's vibrato takes (`AnalysisTruth`'s singers with vibrato) run
/// through the needle's own path, offline; every reading from 150 ms into
/// a sung note to its end is compared with that note's true centre (the
/// written pitch moved by the singer's detune). A reading without a pitch
/// there counts as a miss. Shared by the tests and `acapella-bench needle`.
public enum NeedleTruth {
    /// How far into a note the needle is judged from, ms.
    public static let settleMilliseconds = 150.0

    /// Per judged reading: |shown − true centre| cents for the needle and
    /// for the raw reading it was steadied from (nil: no pitch shown).
    public struct Outcome: Sendable {
        public var needle: [Double?] = []
        public var raw: [Double?] = []
        /// Song samples sung through the needle.
        public var songSamples = 0

        public init() {}

        public mutating func add(_ other: Outcome) {
            needle += other.needle
            raw += other.raw
            songSamples += other.songSamples
        }

        /// The share of judged readings within ± `cents` of the centre.
        public static func share(_ errors: [Double?], within cents: Double) -> Double {
            Double(errors.filter { ($0 ?? .infinity) <= cents }.count) / Double(max(1, errors.count))
        }

        public func summary(_ name: String) -> String {
            String(format: "%@: %d readings, needle within ±5 cents %.1f %% (raw %.1f %%), within ±10 cents %.1f %% (raw %.1f %%)", name, needle.count,
                   100 * Self.share(needle, within: 5), 100 * Self.share(raw, within: 5), 100 * Self.share(needle, within: 10), 100 * Self.share(raw, within: 10))
        }
    }

    /// One song, one singer: the take through the needle, judged.
    public static func run(score: Score, profile: AnalysisTruth.Profile, seed: UInt64) throws -> Outcome {
        let take = try AnalysisTruth.take(score: score, profile: profile, seed: seed)
        let sung = SyntheticSinger.tones(take.schedule.tones[take.part], with: take.errors)
        let readings = PitchTracker.readings(of: take.samples, tones: take.schedule.tones[take.part], sampleRate: 48_000)
        var outcome = Outcome()
        outcome.songSamples = take.samples.count
        let settle = Int64(settleMilliseconds * 48)
        var index = 0
        for reading in readings {
            while index < sung.count && sung[index].endSample <= reading.songSample { index += 1 }
            guard index < sung.count, reading.songSample >= sung[index].startSample + settle else { continue }
            let truth = Tuning.midi(frequency: sung[index].frequency)
            outcome.raw.append(reading.frequency > 0 ? abs(Tuning.midi(frequency: reading.frequency) - truth) * 100 : nil)
            outcome.needle.append(reading.centre.map { abs($0 - truth) * 100 })
        }
        return outcome
    }

    /// The singers the needle is judged on: those with vibrato.
    public static var profiles: [Int] { AnalysisTruth.profiles.indices.filter { AnalysisTruth.profiles[$0].vibratoCents > 0 } }

    /// Every song (`AnalysisTruth.songs`, parsed by the caller, in order) for one profile.
    public static func run(scores: [Score], profile index: Int) throws -> Outcome {
        var all = Outcome()
        for (number, score) in scores.enumerated() {
            all.add(try run(score: score, profile: AnalysisTruth.profiles[index], seed: AnalysisTruth.seed(song: number, profile: index)))
        }
        return all
    }
}
