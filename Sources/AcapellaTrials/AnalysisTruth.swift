import AcapellaAnalysis
import AcapellaBox
public import AcapellaScore
public import AcapellaEngine
public import AcapellaDevices
import Foundation

/// Ground truth for the take analysis (issue 20's measures): the synthetic
/// singer sings a part with each note detuned, early or late, or missed by
/// amounts chosen here; the analysis must find them again. Shared by the
/// test suite (which holds it to the thresholds) and `acapella-bench
/// analyze` (which prints it beside the peers).
public enum AnalysisTruth {
    /// The seed of song `number` for profile `profile` (the same takes in the tests and the benchmark).
    public static func seed(song number: Int, profile: Int) -> UInt64 { UInt64(number * 10 + profile + 1) }

    /// A kind of singer: vibrato, breath, and how far their notes stray.
    public struct Profile: Sendable {
        public var name: String
        public var vibratoCents: Double
        public var vibratoHz: Double
        public var noise: Float
        /// Each note detuned by up to ± this, cents.
        public var detune: Double
        /// Each entry up to ± this early or late, ms.
        public var lateMilliseconds: Double
        /// The share of notes left out (never the first).
        public var missed: Double
    }

    public static let profiles = [
        Profile(name: "steady", vibratoCents: 0, vibratoHz: 5.5, noise: 0.003, detune: 30, lateMilliseconds: 60, missed: 0.05),
        Profile(name: "vibrato", vibratoCents: 30, vibratoHz: 5.5, noise: 0.005, detune: 40, lateMilliseconds: 80, missed: 0.05),
        Profile(name: "wide and breathy", vibratoCents: 55, vibratoHz: 6.3, noise: 0.02, detune: 50, lateMilliseconds: 100, missed: 0.08),
    ]

    /// The shipped songs the truth is taken on (their second part, or the only one).
    public static let songs = ["amazing-grace", "bach-bwv26.6-ach-wie-fluechtig", "bach-bwv40.8-freuet-euch-ihr-christen", "bach-bwv66.6",
                               "lift-every-voice-and-sing", "my-bonnie", "ode-to-joy", "silent-night"]

    /// What the analysis found against what the singer did.
    public struct Outcome: Sendable {
        /// Per sung note: |found − sung| cents, and the same for the entry, ms.
        public var cents: [Double] = []
        public var onsets: [Double] = []
        public var missedTruth = 0
        public var missedFound = 0
        public var sungTruth = 0
        /// Sung notes the analysis called missed.
        public var falseAlarms = 0
        /// Notes the analysis left out (every note should be analysed).
        public var notAnalysed = 0

        public init() {}

        public mutating func add(_ other: Outcome) {
            cents += other.cents
            onsets += other.onsets
            missedTruth += other.missedTruth
            missedFound += other.missedFound
            sungTruth += other.sungTruth
            falseAlarms += other.falseAlarms
            notAnalysed += other.notAnalysed
        }

        public var recall: Double { Double(missedFound) / Double(max(1, missedTruth)) }
        public var falseAlarmShare: Double { Double(falseAlarms) / Double(max(1, sungTruth)) }
        public var centsP95: Double { AnalysisTruth.p95(cents) }
        public var onsetsP95: Double { AnalysisTruth.p95(onsets) }

        public func summary(_ name: String) -> String {
            String(format: "%@: %d notes, cents p95 %.2f, onsets p95 %.1f ms, missed %d/%d found, %d false alarms", name,
                   sungTruth + missedTruth, centsP95, onsetsP95, missedFound, missedTruth, falseAlarms)
        }
    }

    /// The 95th percentile (0 for none).
    public static func p95(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.95).rounded(.up)) - 1)]
    }

    /// A take the truth knows: what was sung, at 48 kHz from song sample 0,
    /// of which part, and each note's error.
    public struct Take: Sendable {
        public var samples: [Float]
        public var schedule: Schedule
        public var part: Int
        public var errors: [SungNoteError]
    }

    /// One song sung by one singer (the second part, or the only one).
    public static func take(score: Score, profile: Profile, seed: UInt64) throws -> Take {
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
        return Take(samples: (0..<length).map { singer.sample(atSong: Int64($0)) }, schedule: schedule, part: part, errors: errors)
    }

    /// One song, one singer: the take rendered, analysed, compared.
    public static func run(score: Score, profile: Profile, seed: UInt64) throws -> Outcome {
        compare(try take(score: score, profile: profile, seed: seed), score: score)
    }

    /// The take analysed and compared with what was sung.
    public static func compare(_ sung: Take, score: Score) -> Outcome {
        let (samples, schedule, part, errors) = (sung.samples, sung.schedule, sung.part, sung.errors)
        let tones = schedule.tones[part]
        let report = TakeReport.make(score: score, schedule: schedule, part: part, samples: samples, origin: 0, analyzer: TakeAnalyzer(sampleRate: 48_000))
        var outcome = Outcome()
        outcome.notAnalysed = tones.count - report.notes.count
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

    /// Every song for one profile (`songs` parsed by the caller, in order).
    public static func run(scores: [Score], profile index: Int) throws -> Outcome {
        var all = Outcome()
        for (number, score) in scores.enumerated() {
            all.add(try run(score: score, profile: profiles[index], seed: seed(song: number, profile: index)))
        }
        return all
    }
}
