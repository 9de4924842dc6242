/// Ticks → audio samples through the tempo map, exactly.
///
/// Each tempo segment's start is kept as an exact rational sample position,
/// so the sample of any tick is *one* rounding of the exact value: no error
/// accumulates however many measures or tempo changes come before it. An
/// exact half rounds towards +∞.
///
/// Ticks before the first tempo change (count-in, negative ticks) use the
/// first tempo.
public struct TimeMap: Hashable, Sendable {
    struct Segment: Hashable, Sendable {
        var startTick: Int
        var startSample: Rational
        var samplesPerTick: Rational
    }

    /// The tempo map needs more than 128-bit exact arithmetic; the message
    /// names the tempo change where that happened.
    public struct Inexact: Error, Hashable, Sendable, CustomStringConvertible {
        /// Index of the tempo change whose segment could not be represented.
        public var tempoIndex: Int
        /// One-line explanation.
        public var description: String {
            "tempo change \(tempoIndex + 1) makes the tempo map too fine-grained to time exactly"
        }
    }

    /// Samples per second.
    public let sampleRate: Int
    let segments: [Segment]

    /// Builds the map for a validated tempo list (first entry at tick 0,
    /// ticks increasing, valid tempos). `tempoScale` multiplies every tempo
    /// (0.9 = 10 % slower).
    public init(tempos: [TempoChange], sampleRate: Int, tempoScale: Rational = Rational(1)) throws(Inexact) {
        precondition(sampleRate > 0 && tempoScale.numerator > 0, "sample rate and tempo scale must be positive")
        precondition(!tempos.isEmpty && tempos.allSatisfy(\.tempo.isValid), "tempo map must be validated first")
        self.sampleRate = sampleRate
        var segments: [Segment] = []
        for (index, change) in tempos.enumerated() {
            do {
                // samples/tick = 60 s · rate / (ppq · bpm · scale), bpm = milliBPM / 1000.
                let perTick = try Rational(Int128(60_000) * Int128(sampleRate), Int128(ticksPerQuarter) * Int128(change.tempo.milliBPM))
                    .multiplied(by: Rational(tempoScale.denominator, tempoScale.numerator))
                var start = Rational(0)
                if let previous = segments.last {
                    start = try previous.startSample.adding(
                        previous.samplesPerTick.multiplied(by: Rational(Int128(change.tick - previous.startTick), 1)))
                }
                segments.append(Segment(startTick: change.tick, startSample: start, samplesPerTick: perTick))
            } catch {
                throw Inexact(tempoIndex: index)
            }
        }
        self.segments = segments
    }

    private func segment(forTick tick: Int) -> Segment {
        segments[segments.lastIndex(keyAtMost: tick) { $0.startTick }]
    }

    /// The exact (unrounded) sample position of a tick, or `nil` when it
    /// exceeds 128-bit arithmetic.
    public func exactSample(atTick tick: Int) -> Rational? {
        let segment = segment(forTick: tick)
        return try? segment.startSample.adding(
            segment.samplesPerTick.multiplied(by: Rational(Int128(tick - segment.startTick), 1)))
    }

    /// The tick (with its fraction) at `sample`: the inverse of the map, for
    /// placing what was played (a keyboard's notes) back on the music.
    public func tick(atSample sample: Int64) -> Double {
        func value(_ rational: Rational) -> Double { Double(rational.numerator) / Double(rational.denominator) }
        let position = Double(sample)
        let segment = segments.last { value($0.startSample) <= position } ?? segments[0]
        return Double(segment.startTick) + (position - value(segment.startSample)) / value(segment.samplesPerTick)
    }

    /// The sample a tick lands on: the exact position rounded once.
    public func sample(atTick tick: Int) -> Int64 {
        if let exact = exactSample(atTick: tick) { return Int64(exact.roundedHalfUp) }
        // Only reachable for tempo maps far beyond anything validation
        // accepts; keep going approximately rather than trap.
        let segment = segment(forTick: tick)
        let start = Double(segment.startSample.numerator) / Double(segment.startSample.denominator)
        let perTick = Double(segment.samplesPerTick.numerator) / Double(segment.samplesPerTick.denominator)
        let approximate = start + Double(tick - segment.startTick) * perTick + 0.5
        guard approximate.isFinite, abs(approximate) < 9.2e18 else { return approximate < 0 ? Int64.min : Int64.max }
        let truncated = Int64(approximate)
        return Double(truncated) > approximate ? truncated - 1 : truncated
    }
}
