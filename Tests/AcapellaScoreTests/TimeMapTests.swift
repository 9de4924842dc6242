@testable import AcapellaScore
import Testing

/// An independent exact fraction for reference values (deliberately not the
/// product's `Rational`).
struct Fraction {
    var n: Int128
    var d: Int128

    init(_ n: Int128, _ d: Int128) {
        var a = n.magnitude
        var b = d.magnitude
        while b != 0 { (a, b) = (b, a % b) }
        self.n = n / Int128(a)
        self.d = d / Int128(a)
    }

    static func + (x: Fraction, y: Fraction) -> Fraction { Fraction(x.n * y.d + y.n * x.d, x.d * y.d) }

    /// Round half up, with Int128 floor division.
    var rounded: Int64 {
        let num = 2 * n + d
        let den = 2 * d
        var q = num / den
        if num % den != 0 && num < 0 { q -= 1 }
        return Int64(q)
    }
}

@Suite struct TimeMapTests {
    @Test func quarterAt80BPMIs36000Samples() throws {
        let map = try TimeMap(tempos: [TempoChange(tick: 0, tempo: Tempo(bpm: 80))], sampleRate: 48_000)
        #expect(map.sample(atTick: 960) == 36_000)
        #expect(map.sample(atTick: 3840 * 4) == 576_000)
        #expect(map.sample(atTick: -960) == -36_000)  // count-in extends the first tempo backwards
        #expect(map.sample(atTick: 1) == 38)  // 37.5 rounds half up
        #expect(map.sample(atTick: -1) == -37)  // −37.5 rounds half up too
    }

    @Test func tempoScaleStretchesTime() throws {
        let tempos = [TempoChange(tick: 0, tempo: Tempo(bpm: 120))]
        let slower = try TimeMap(tempos: tempos, sampleRate: 48_000, tempoScale: Rational(9, 10))
        // A quarter at 108 BPM: 48000 · 60 / 108 = 26666.67
        #expect(slower.sample(atTick: 960) == 26_667)
        #expect(slower.exactSample(atTick: 960) == Rational(80_000, 3))
    }

    /// 10,000 measures with meter and tempo changes (fractional tempos among
    /// them, changes inside measures too): every barline lands on the sample
    /// exact rational arithmetic gives.
    @Test(arguments: [44_100, 48_000, 96_000])
    func tenThousandMeasuresDoNotDrift(rate: Int) throws {
        var rng = SplitMix64(seed: 10_000)
        let score = ScoreGenerator.random(using: &rng, options: .init(parts: 1, measures: 10_000))
        #expect(score.tempos.count > 500 && score.meters.count > 500, "the test needs many changes")
        let meterMap = score.meterMap
        let map = try TimeMap(tempos: score.tempos, sampleRate: rate)

        // Reference: walk measure by measure, splitting each at the tempo
        // changes inside it, summing exact fractions of seconds·rate.
        var position = Fraction(0, 1)
        var tick = 0
        var tempoIndex = 0
        var naiveRounded: Int64 = 0
        var naiveDouble = 0.0
        var naiveDiverged = false
        var doubleDiverged = false
        var checked = 0
        let firstMeasure = score.pickupTicks > 0 ? 0 : 1
        for measure in firstMeasure...10_000 {
            let barline = meterMap.startTick(ofMeasure: measure + 1)
            var measureSamples = Fraction(0, 1)
            while tick < barline {
                let tempo = score.tempos[tempoIndex].tempo.milliBPM
                let segmentEnd = min(barline, tempoIndex + 1 < score.tempos.count ? score.tempos[tempoIndex + 1].tick : Int.max)
                // ticks · 60 · rate · 1000 / (960 · milliBPM)
                let piece = Fraction(Int128(segmentEnd - tick) * 60 * Int128(rate) * 1000, 960 * Int128(tempo))
                measureSamples = measureSamples + piece
                tick = segmentEnd
                if tempoIndex + 1 < score.tempos.count && score.tempos[tempoIndex + 1].tick == tick { tempoIndex += 1 }
            }
            position = position + measureSamples
            naiveRounded += measureSamples.rounded
            naiveDouble += Double(measureSamples.n) / Double(measureSamples.d)
            #expect(map.sample(atTick: barline) == position.rounded, "barline of measure \(measure + 1) at \(rate) Hz")
            if naiveRounded != position.rounded { naiveDiverged = true }
            if Int64((naiveDouble + 0.5).rounded(.down)) != position.rounded { doubleDiverged = true }
            checked += 1
        }
        #expect(checked >= 10_000)
        // The test is sensitive: summing per-measure rounded lengths drifts.
        #expect(naiveDiverged, "per-measure rounding should have drifted; the test would not catch it")
        _ = doubleDiverged
    }

    @Test func pathologicalTempoMapIsRejectedNotTrapped() {
        // Many distinct prime-ish tempos make the exact denominators explode;
        // validation must say so instead of overflowing.
        let tempos = [1_009, 1_013, 1_019, 1_021, 1_031, 1_033, 1_039, 1_049, 1_051, 1_061, 1_063, 1_069, 1_087]
            .enumerated().map { TempoChange(tick: $0.offset * 3840, tempo: Tempo(milliBPM: $0.element * 97)) }
        var score = Score(tempos: tempos)
        score.parts = [Part(name: "A", notes: (0..<14).map {
            NoteEvent(startTick: $0 * 3840, durationTicks: 3840, value: NoteValue(1), pitch: Pitch(step: .c, octave: 4))
        })]
        let errors = score.validate()
        #expect(errors.contains { $0.message.contains("too fine-grained") }, "\(errors)")
    }
}

@Suite struct MeterMapTests {
    @Test func measuresWithPickupAndMeterChanges() {
        let map = MeterMap(meters: [MeterChange(measure: 1, meter: Meter(4, 4)), MeterChange(measure: 3, meter: Meter(3, 4))],
                           pickupTicks: 960)
        #expect(map.startTick(ofMeasure: 0) == 0)
        #expect(map.startTick(ofMeasure: 1) == 960)
        #expect(map.startTick(ofMeasure: 3) == 960 + 2 * 3840)
        #expect(map.startTick(ofMeasure: 4) == 960 + 2 * 3840 + 2880)
        #expect(map.measure(containing: 959) == 0)
        #expect(map.measure(containing: 960) == 1)
        #expect(map.position(ofTick: 960 + 2 * 3840 + 2880 + 5).measure == 4)
        #expect(map.position(ofTick: 960 + 2 * 3840 + 2880 + 5).offset == 5)
        #expect(map.isBarline(0) && map.isBarline(960) && !map.isBarline(961))
        // Before the pickup: the count-in measures, in the first meter.
        #expect(map.measure(containing: -1) == 0)
        #expect(map.measure(containing: 960 - 3840 - 1) == -1)
    }
}
