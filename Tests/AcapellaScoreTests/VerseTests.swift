@testable import AcapellaScore
import Testing

/// Choosing a verse, and singing every verse in turn.
@Suite struct ScoreVerseTests {
    /// A hymn: a pickup, two verses in the first two measures, a refrain
    /// printed once in the last.
    static let hymn = """
        acasong 1
        title: Hymn
        time: 3/4
        key: F major
        tempo: 90
        pickup: 1/4

        part Soprano [treble]
        C4 4 | F4 4 F4 4 G4 4 | A4 2 G4 4 | F4 2. |
        lyrics Soprano: O come, all ye faith- ful
        lyrics[2] Soprano: Sing choirs of an- gels
        part Bass [bass]
        C3 4 | F2 2. | C3 2. | F2 2 R 4 |
        """

    @Test func oneVerseIsChosen() throws {
        let score = try Acasong.parse(Self.hymn)
        #expect(score.verseCount == 2)
        let second = score.singing(verse: 2)
        #expect(second.verseCount == 1)
        #expect(second.parts[0].notes.compactMap(\.lyric?.text) == ["Sing", "choirs", "of", "an", "gels"])
        // The refrain measure (words in verse 1 only) keeps them.
        #expect(score.singing(verse: 1).parts[0].notes.compactMap(\.lyric?.text) == ["O", "come,", "all", "ye", "faith", "ful"])
        #expect(second.parts.map(\.notes.count) == score.parts.map(\.notes.count))
    }

    @Test func aRefrainPrintedOnceIsSungInEveryVerse() throws {
        let text = Self.hymn.replacingOccurrences(of: "lyrics Soprano: O come, all ye faith- ful", with: "lyrics Soprano: O come, all ye faith- ful A- men")
            .replacingOccurrences(of: "F4 2. |\nlyrics", with: "F4 4 F4 2 |\nlyrics")
        let score = try Acasong.parse(text)
        #expect(score.singing(verse: 2).parts[0].notes.compactMap(\.lyric?.text).suffix(2) == ["A", "men"])
    }

    @Test func allVersesSingsTheSongOncePerVerse() throws {
        let score = try Acasong.parse(Self.hymn)
        let all = try #require(score.allVerses())
        #expect(all.validate().isEmpty, "\(all.validate())")
        #expect(all.verseCount == 1)
        // Pickup + 3 measures of 3/4 a pass: the second pass starts at the
        // barline after the first pass's last measure, with its pickup.
        let passTicks = 960 + 3 * 2880
        #expect(all.parts[0].notes.filter { $0.startTick >= passTicks }.map(\.startTick).first == passTicks)
        #expect(all.parts[0].notes.compactMap(\.lyric?.text) == ["O", "come,", "all", "ye", "faith", "ful", "Sing", "choirs", "of", "an", "gels"])
        #expect(all.meters == [MeterChange(measure: 1, meter: Meter(3, 4)), MeterChange(measure: 4, meter: Meter(1, 4)), MeterChange(measure: 5, meter: Meter(3, 4))])
        #expect(all.writtenMeasures == [0, 1, 2, 3, 0, 1, 2, 3])
        #expect(all.writtenMeasure(5) == 1)
        // The bass, rests and all, once per verse.
        #expect(all.parts[1].notes.map(\.startTick) == score.parts[1].notes.map(\.startTick) + score.parts[1].notes.map { $0.startTick + passTicks })
        #expect(try Acasong.parse(Acasong.serialize(all)) == all)
    }

    @Test func oneVerseHasNothingToRepeat() throws {
        let score = try Acasong.parse(Self.hymn).singing(verse: 1)
        #expect(score.allVerses() == nil)
    }

    @Test func choicesRead() {
        #expect(VerseChoice("all") == .all)
        #expect(VerseChoice("3") == .verse(3))
        #expect(VerseChoice("0") == nil)
        #expect(VerseChoice("100") == nil)
        #expect(VerseChoice("two") == nil)
    }

    /// Every random song with verses sung verse by verse is a valid song
    /// that survives the text format, each pass as long as the song.
    @Test func randomSongsUnfoldByVerse() throws {
        var unfolded = 0
        for seed in 1...80 {
            var rng = SplitMix64(seed: UInt64(seed))
            let score = ScoreGenerator.random(using: &rng, options: .init(parts: 1 + seed % 4, measures: 3 + seed % 11))
            guard score.verseCount >= 2 else { continue }
            let all = try #require(score.allVerses(), "seed \(seed)")
            unfolded += 1
            #expect(all.validate().isEmpty, "seed \(seed): \(all.validate().prefix(3))")
            #expect(all.endTick == score.endTick * score.verseCount, "seed \(seed)")
            #expect(all.writtenMeasures.count == score.measureNumbers!.count * score.verseCount)
            #expect(try Acasong.parse(Acasong.serialize(all)) == all, "seed \(seed)")
            for (part, original) in zip(all.parts, score.parts) {
                #expect(part.notes.count == original.notes.count * score.verseCount, "seed \(seed)")
            }
        }
        #expect(unfolded >= 10, "the generator made only \(unfolded) songs with verses")
    }
}
