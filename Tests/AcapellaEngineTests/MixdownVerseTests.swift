@testable import AcapellaEngine
@testable import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// `mix --verse`: one verse's words, or the song once per verse with the
/// takes playing in each.
@Suite struct MixdownVerseTests {
    static let song = """
        acasong 1
        title: Two Verses
        time: 2/4
        tempo: 120
        part Melody [treble]
        C5 4 D5 4 | E5 2 | G4 4 A4 4 | C5 2 |
        lyrics Melody: one two three four five six
        lyrics[2] Melody: sev- en eight nine _ twelve
        part Low [bass]
        C3 2 | G2 2 | E3 2 | C3 2 |
        """

    @Test func aVersePastTheLastIsRefused() throws {
        let score = try Acasong.parse(Self.song)
        #expect(throws: MixdownError.self) { try Mixdown.verses(.verse(3), of: score, takes: nil, options: MixdownOptions()) }
        do {
            _ = try Mixdown.verses(.verse(3), of: score, takes: nil, options: MixdownOptions())
        } catch {
            #expect(error.description == "the song has 2 verses; --verse expects 1–2 or all")
        }
        let second = try Mixdown.verses(.verse(2), of: score, takes: nil, options: MixdownOptions())
        #expect(second.passes == 1)
        #expect(second.score.parts[0].notes.compactMap(\.lyric?.text) == ["sev", "en", "eight", "nine", "twelve"])
    }

    /// Every verse: the second pass sounds exactly as the first, the take
    /// included (sung once, played in each verse, never running on into
    /// the next).
    @Test func everyVerseRepeatsTonesAndTakes() throws {
        let score = try Acasong.parse(Self.song)
        let options = MixdownOptions()
        let passSamples = 4 * 48_000  // four 2/4 measures at 120 BPM
        // A take for the low part: a tone that runs half a second past the song.
        let takeSamples = (0..<(passSamples + 24_000)).map { Float(sin(Double($0) * 0.031)) * 0.25 }
        let takes = [PartTakes.none, PartTakes([TakePlayback(samples: takeSamples, alignmentOffsetSamples: 0)])]
        let (all, repeated, passes) = try Mixdown.verses(.all, of: score, takes: takes, options: options)
        #expect(passes == 2)
        let layers = try #require(repeated?[1].layers)
        #expect(layers.map(\.range) == [0..<Int64(passSamples), Int64(passSamples)..<Int64(2 * passSamples)])
        let schedule = try Schedule(score: all, options: ScheduleOptions(sampleRate: options.sampleRate))
        #expect(schedule.endSample == Int64(2 * passSamples))
        let mixes = PartMix.spread(count: 2)
        let stereo = OfflineRender.render(schedule, mixes: mixes, takes: repeated)
        let first = Array(stereo.left[2_400..<(passSamples - 2_400)])
        let second = Array(stereo.left[(passSamples + 2_400)..<(2 * passSamples - 2_400)])
        let difference = zip(first, second).map { abs($0 - $1) }.max() ?? 1
        #expect(difference < 1e-5, "the second verse differs from the first by \(difference)")
        #expect(first.map(abs).max()! > 0.05, "the mix is silent")
        let lyrics = try #require(try Mixdown.lyrics(all, options: options, part: nil))
        #expect(lyrics == "[ti:Two Verses]\n[00:00.00]one two three four five six\n[00:04.00]sev-en eight nine twelve\n")
    }
}
