@testable import AcapellaScore
import Testing

/// Property tests on random scores: the canonical printer and the parser are
/// inverses, and printing is a fixed point.
@Suite struct RoundTripTests {
    @Test(arguments: 1...150)
    func randomScoreRoundTrips(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed))
        let score = ScoreGenerator.random(
            using: &rng, options: .init(parts: 1 + seed % 5, measures: 4 + seed % 29))
        #expect(score.validate().isEmpty, "generator produced an invalid score (seed \(seed)): \(score.validate())")
        let printed = Acasong.serialize(score)
        let parsed = try Acasong.parse(printed)
        #expect(parsed == score, "parse(print(s)) != s for seed \(seed)")
        #expect(Acasong.serialize(parsed) == printed, "printing is not canonical for seed \(seed)")
    }

    @Test func generatorCoversTheFormat() {
        // The property above is only as strong as what the generator makes:
        // check that over the seeds used it produces every feature.
        var features: Set<String> = []
        for seed in 1...150 {
            var rng = SplitMix64(seed: UInt64(seed))
            let score = ScoreGenerator.random(using: &rng, options: .init(parts: 1 + seed % 5, measures: 4 + seed % 29))
            if score.pickupTicks > 0 { features.insert("pickup") }
            if score.meters.count > 1 { features.insert("meter change") }
            if score.keys.count > 1 { features.insert("key change") }
            if score.tempos.contains(where: { !score.meterMap.isBarline($0.tick) }) { features.insert("mid-measure tempo") }
            if score.tempos.contains(where: { $0.tempo.milliBPM % 1000 != 0 }) { features.insert("fractional tempo") }
            for part in score.parts {
                if part.name.contains(" ") { features.insert("spaced name") }
                if part.clef == nil { features.insert("inferred clef") }
                for (index, note) in part.notes.enumerated() {
                    if note.isRest { features.insert("rest") }
                    if note.value.dots > 0 { features.insert("dots") }
                    if note.value.denominator == 32 { features.insert("32nd") }
                    if let tuplet = note.tuplet { features.insert("tuplet \(tuplet.actual):\(tuplet.normal)") }
                    if note.tieToNext, index + 1 < part.notes.count,
                       score.meterMap.measure(containing: part.notes[index + 1].startTick) != score.meterMap.measure(containing: note.startTick)
                    {
                        features.insert("tie across barline")
                    }
                    if note.lyric?.continuesWord == true { features.insert("hyphenated lyric") }
                    if note.lyric?.text.unicodeScalars.contains(where: { $0.value > 127 }) == true { features.insert("non-ASCII lyric") }
                    if index > 0, note.pitch != nil, note.lyric == nil, !part.notes[index - 1].tieToNext { features.insert("melisma") }
                }
            }
        }
        let expected: Set<String> = [
            "pickup", "meter change", "key change", "mid-measure tempo", "fractional tempo", "spaced name",
            "inferred clef", "rest", "dots", "32nd", "tuplet 3:2", "tuplet 5:4", "tuplet 7:4", "tie across barline",
            "hyphenated lyric", "non-ASCII lyric", "melisma",
        ]
        #expect(expected.subtracting(features).isEmpty, "generator never made: \(expected.subtracting(features).sorted())")
    }

    @Test func largeScoreRoundTrips() throws {
        var rng = SplitMix64(seed: 99)
        let score = ScoreGenerator.random(using: &rng, options: .init(parts: 8, measures: 400))
        let printed = Acasong.serialize(score)
        #expect(try Acasong.parse(printed) == score)
    }
}
