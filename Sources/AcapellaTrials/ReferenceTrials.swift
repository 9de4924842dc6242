public import AcapellaAnalysis
public import AcapellaScore
import AcapellaBox
import AcapellaEngine
import AcapellaProject
import Foundation

/// Ground truth for the reference alignment (issue 23's measure): the song
/// rendered as a recording would hold it — another timbre (eight
/// harmonics weighted per part, vibrato, an attack as long as asked), entries a few ms
/// off, each part at its own level, noise, at 44.1 kHz — starting at a
/// known place, at the song's tempo or another. Shared by the test suite
/// (which holds it to ≥ 95 % within 5 ms, every other tempo refused) and
/// `acapella-bench align` (which prints it beside a plain waveform
/// cross-correlation).
public enum ReferenceTrials {
    /// One recording to make and align.
    public struct Case: Sendable {
        public var song: String
        /// Seconds into the recording where the song starts (negative: the
        /// recording starts that far into the song).
        public var offsetSeconds: Double
        /// The recording's tempo against the song's (1.03: 3 % faster).
        public var tempo: Double
        /// Noise below the music, dB.
        public var noiseDB: Double
        /// How long each note takes to swell to its level (raised cosine).
        public var attackSeconds: Double
        public var seed: UInt64
    }

    /// The shipped songs the trials use.
    public static let songs = ["amazing-grace", "bach-bwv66.6", "silent-night", "ode-to-joy", "my-bonnie"]

    /// `perSong` cases at the song's tempo per song, then `otherTempos` at
    /// tempos 2.5 – 6 % off (half slower, half faster).
    public static func cases(perSong: Int = 8, otherTempos: Int = 10, attackSeconds: Double = 0.005) -> [Case] {
        var rng = SplitMix64(seed: 2_326)
        var result: [Case] = []
        for (number, song) in songs.enumerated() {
            for index in 0..<perSong {
                let offset = Double.random(in: -4...12, using: &rng)
                result.append(Case(song: song, offsetSeconds: offset, tempo: 1, noiseDB: index % 3 == 2 ? -12 : -22, attackSeconds: attackSeconds, seed: UInt64(number * 100 + index)))
            }
        }
        for index in 0..<otherTempos {
            let off = Double.random(in: 0.025...0.06, using: &rng)
            result.append(Case(song: songs[index % songs.count], offsetSeconds: Double.random(in: 0...6, using: &rng), tempo: index % 2 == 0 ? 1 + off : 1 - off,
                               noiseDB: -22, attackSeconds: attackSeconds, seed: UInt64(1_000 + index)))
        }
        return result
    }

    /// The recording of `trial` at `rate`, and the true frame (at
    /// `projectRate`) that holds song sample 0.
    public static func recording(of score: Score, _ trial: Case, rate: Int = 44_100, projectRate: Int = 48_000) throws -> (samples: [Float], songStartFrame: Int64) {
        var rng = SplitMix64(seed: trial.seed &+ 77)
        let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: rate, tempoScale: Rational(Int128((trial.tempo * 1_000).rounded()), 1_000)))
        let lead = Int((trial.offsetSeconds * Double(rate)).rounded())
        let length = Int(schedule.endSample) + rate
        var music = [Float](repeating: 0, count: length)
        let table = 2_048
        for tones in schedule.tones {
            // This part's timbre: one cycle of eight harmonics.
            let weights = (1...8).map { k in (k % 2 == 1 ? 1.0 : Double.random(in: 0.2...0.7, using: &rng)) / pow(Double(k), Double.random(in: 0.8...1.4, using: &rng)) }
            let wave: [Float] = (0...table).map { (i: Int) -> Float in
                let sum: Double = (1...8).reduce(0.0) { (total: Double, k: Int) -> Double in total + weights[k - 1] * sin(2 * Double.pi * Double(k * i) / Double(table)) }
                return Float(sum)
            }
            let peak = wave.map(abs).max() ?? 1
            let level = Float(pow(10, Double.random(in: -4...0, using: &rng) / 20)) * 0.2 / peak
            for tone in tones {
                let jitter = Int(Double.random(in: -0.003...0.003, using: &rng) * Double(rate))
                let start = max(0, Int(tone.startSample) + jitter)
                let end = min(length, Int(tone.endSample) + Int(0.06 * Double(rate)))
                let attack = trial.attackSeconds * Double(rate), release = 0.06 * Double(rate)
                let sounding = Double(Int(tone.endSample) - start)
                var phase = Double.random(in: 0..<1, using: &rng)
                let vibratoPhase = Double.random(in: 0..<(2 * Double.pi), using: &rng)
                for index in start..<max(start, end) {
                    let t = Double(index - start)
                    let vibrato = t > 0.15 * Double(rate) ? 0.25 / 12 * sin(2 * Double.pi * 5.5 * t / Double(rate) + vibratoPhase) : 0
                    phase += tone.frequency * pow(2, vibrato) / Double(rate)
                    phase -= phase.rounded(.down)
                    let position = phase * Double(table)
                    let slot = Int(position)
                    let fraction = Float(position - Double(slot))
                    let sample = wave[slot] + fraction * (wave[slot + 1] - wave[slot])
                    var envelope: Double = t < attack ? 0.5 - 0.5 * cos(Double.pi * t / attack) : 1.0 - 0.15 * min(1, t / Double(rate))
                    if t > sounding { envelope *= max(0, 1 - (t - sounding) / release) }
                    let scaled: Float = sample * level
                    music[index] += scaled * Float(envelope)
                }
            }
        }
        var energy = 0.0
        for value in music { energy += Double(value * value) }
        let noise = Float((energy / Double(length)).squareRoot() * pow(10, trial.noiseDB / 20) * 3.0.squareRoot())
        var result = [Float](repeating: 0, count: max(0, lead) + length - max(0, -lead))
        for index in result.indices {
            let source = index - lead
            result[index] = (source >= 0 && source < length ? music[source] : 0) + noise * Float.random(in: -1...1, using: &rng)
        }
        return (result, Int64((trial.offsetSeconds * Double(projectRate)).rounded()))
    }

    /// What one trial gave.
    public struct Outcome: Sendable {
        public var trial: Case
        public var truth: Int64
        public var result: Result<ReferenceAlignment, ReferenceAlignmentRefusal>
        /// Found minus true, ms (nil when refused).
        public var errorMilliseconds: Double? {
            guard case .success(let found) = result else { return nil }
            return Double(found.songStartFrame - truth) / 48
        }
    }

    /// Makes the recording of each case, converts it to 48 kHz as
    /// `reference add` does and aligns it against the song's guide tones.
    public static func run(_ trials: [Case], align: ([Float], [Float]) -> Result<ReferenceAlignment, ReferenceAlignmentRefusal> = {
        ReferenceAligner.align(reference: $0, guide: $1, sampleRate: 48_000)
    }) throws -> [Outcome] {
        var guides: [String: (score: Score, guide: [Float])] = [:]
        var outcomes: [Outcome] = []
        for trial in trials {
            if guides[trial.song] == nil {
                let score = try Acasong.parse(String(contentsOfFile: songsFolder + "/" + trial.song + ".acasong", encoding: .utf8))
                guides[trial.song] = (score, try Project.guideTones(of: score, sampleRate: 48_000))
            }
            let (score, guide) = guides[trial.song]!
            let (made, truth) = try recording(of: score, trial)
            let converted = try ReferenceAudio.convert(made, from: 44_100, to: 48_000)
            outcomes.append(Outcome(trial: trial, truth: truth, result: align(converted, guide)))
        }
        return outcomes
    }

    /// The shipped songs' folder, from the source tree or beside the program.
    public static var songsFolder: String { ShippedFiles.songs ?? "Songs" }
}
