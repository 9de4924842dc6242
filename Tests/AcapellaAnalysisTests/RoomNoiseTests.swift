@testable import AcapellaAnalysis
import Foundation
import Testing

/// A singer in a room with a fan: `acapella notes` reads the notes with the
/// room's steady noise taken out (RoomNoise). Real singers in such a room
/// lost their soft notes (SSVD, pink noise 15 dB under the singing: F fell
/// 0.018 where swift-f0's fell 0.009; with the noise taken out, 0.001).
@Suite struct RoomNoiseTests {
    typealias Sung = NoteSplitterTests.Sung
    /// Loud and soft notes (12 dB softer), each after a breath.
    static let line: [(sung: Sung, soft: Bool)] = [
        (Sung(midi: 60, cents: 0, seconds: 0.6, vibrato: false, gapBefore: 0.4), false),
        (Sung(midi: 64, cents: 0, seconds: 0.6, vibrato: true, gapBefore: 0.3), false),
        (Sung(midi: 67, cents: 0, seconds: 0.6, vibrato: false, gapBefore: 0.3), true),
        (Sung(midi: 62, cents: 0, seconds: 0.6, vibrato: true, gapBefore: 0.3), true),
        (Sung(midi: 59, cents: 0, seconds: 0.6, vibrato: false, gapBefore: 0.3), false),
        (Sung(midi: 65, cents: 0, seconds: 0.6, vibrato: false, gapBefore: 0.3), true),
    ]
    static let rate = 48_000

    /// The line sung (soft notes 12 dB down) and where each note sounds.
    static func sung() -> (samples: [Float], notes: [Range<Int>]) {
        var (samples, onsets) = NoteSplitterTests.render(rate: rate, line: line.map(\.sung))
        var notes: [Range<Int>] = []
        for (index, note) in line.enumerated() {
            let start = Int(onsets[index] * Double(rate))
            let range = start..<(start + Int(note.sung.seconds * Double(rate)))
            notes.append(range)
            if note.soft { for sample in range { samples[sample] *= Float(pow(10, -12.0 / 20)) } }
        }
        return (samples, notes)
    }

    /// Pink noise (Paul Kellett's economy filter on seeded white noise) at
    /// `level` dBFS RMS.
    static func pink(count: Int, level: Double, seed: UInt64) -> [Float] {
        var state = seed
        var (b0, b1, b2) = (0.0, 0.0, 0.0)
        var noise = (0..<count).map { _ -> Double in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let white = Double(Int64(bitPattern: (state >> 11) << 11)) / Double(Int64.max)
            b0 = 0.997_65 * b0 + white * 0.099_046
            b1 = 0.963_00 * b1 + white * 0.296_516_4
            b2 = 0.570_00 * b2 + white * 1.052_691_3
            return b0 + b1 + b2 + white * 0.184_8
        }
        let mean = noise.reduce(0, +) / Double(count)
        noise = noise.map { $0 - mean }
        let rms = (noise.reduce(0) { $0 + $1 * $1 } / Double(count)).squareRoot()
        return noise.map { Float($0 * pow(10, level / 20) / rms) }
    }

    static func level(_ samples: [Float], _ range: Range<Int>) -> Double {
        10 * log10(range.reduce(0.0) { $0 + Double(samples[$1]) * Double(samples[$1]) } / Double(range.count))
    }

    /// The loud notes' level less 15 dB: the fan as SSVD's rooms had it.
    static func inTheRoom(_ samples: [Float], notes: [Range<Int>], seed: UInt64) -> [Float] {
        let loud = notes.indices.filter { !line[$0].soft }.map { level(samples, notes[$0]) }.reduce(0, +) / 3
        let fan = pink(count: samples.count, level: loud - 15, seed: seed)
        return zip(samples, fan).map { $0 + $1 }
    }

    /// How many of the sung notes were found: a note at their pitch
    /// within 50 ms of their onset (mir_eval's onset and pitch).
    static func right(_ found: [SplitNote], _ notes: [Range<Int>]) -> Int {
        zip(line, notes).filter { sung, range in
            found.contains { $0.midi == sung.sung.midi && abs(Int($0.onset) - range.lowerBound) <= rate / 20 }
        }.count
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func softNotesInAFanAreKept(seed: UInt64) {
        let (clean, notes) = Self.sung()
        let noisy = Self.inTheRoom(clean, notes: notes, seed: seed)
        let splitter = NoteSplitter(sampleRate: Self.rate)
        let found = splitter.notes(in: noisy)
        let described = { (notes: [SplitNote]) in notes.map { "\($0.midi)@\(Double($0.onset) / Double(Self.rate))" } }
        #expect(found.count == Self.line.count && Self.right(found, notes) == Self.line.count, "\(described(found))")
        // What the test is about: read as heard, the soft notes are lost in
        // the fan, found late or an octave down (each seed loses one or two).
        let raw = splitter.notes(from: YINDetector(sampleRate: Self.rate).track(noisy, hop: splitter.hop), levels: NoteSplitter.levels(noisy, hop: splitter.hop))
        #expect(Self.right(raw, notes) < Self.line.count, "without the noise taken out: \(described(raw))")
    }

    @Test func theNoiseGoesAndTheVoiceStays() throws {
        let (clean, notes) = Self.sung()
        let noisy = Self.inTheRoom(clean, notes: notes, seed: 7)
        let quieted = try #require(RoomNoise.quieted(noisy, sampleRate: Self.rate))
        #expect(quieted.count == noisy.count)
        // A rest (the breath before the second note, its middle 200 ms): the fan 6 dB quieter or more.
        let rest = (notes[0].upperBound + Self.rate / 20)..<(notes[1].lowerBound - Self.rate / 20)
        let fanBefore = Self.level(noisy, rest), fanAfter = Self.level(quieted, rest)
        #expect(fanAfter < fanBefore - 6, "the fan \(fanBefore) dB, then \(fanAfter) dB")
        // Each note keeps its level within 1.5 dB of the clean note's, the soft ones too
        // (with the fan on them they were up to 3 dB over it).
        for (index, range) in notes.enumerated() {
            let inner = (range.lowerBound + Self.rate / 20)..<(range.upperBound - Self.rate / 20)
            let sungLevel = Self.level(clean, inner), heard = Self.level(quieted, inner)
            #expect(abs(heard - sungLevel) < 1.5, "note \(index): sung \(sungLevel) dB, after \(heard) dB")
        }
    }

    @Test func aQuietRecordingIsLeftAsItIs() {
        let (clean, _) = Self.sung()
        #expect(RoomNoise.quieted(clean, sampleRate: Self.rate) == nil ? true : false, "digital silence between the notes")
        // Hiss 60 dB under the singing: no room to take out.
        let hiss = Self.pink(count: clean.count, level: -78, seed: 3)
        #expect(RoomNoise.quieted(zip(clean, hiss).map { $0 + $1 }, sampleRate: Self.rate) == nil ? true : false, "hiss 60 dB under")
        #expect(RoomNoise.quieted([Float](repeating: 0, count: 1_000), sampleRate: Self.rate) == nil ? true : false, "too short to tell")
    }

    /// Over a loud note the fan is 15 dB under: the voice's harmonics
    /// pass and the fan between them goes, so the note comes back nearer
    /// the clean note than it was heard (returning the input unchanged
    /// would not).
    @Test func aLoudNoteComesBackNearerTheCleanNote() throws {
        let (clean, notes) = Self.sung()
        let noisy = Self.inTheRoom(clean, notes: notes, seed: 5)
        let quieted = try #require(RoomNoise.quieted(noisy, sampleRate: Self.rate))
        let inner = (notes[0].lowerBound + 4_800)..<(notes[0].upperBound - 4_800)
        func apart(_ heard: [Float]) -> Double {
            10 * log10(inner.reduce(0.0) { $0 + pow(Double(heard[$1] - clean[$1]), 2) } / Double(inner.count))
        }
        #expect(apart(quieted) < apart(noisy) - 3, "what differs from the clean note: \(apart(noisy)) dB heard, \(apart(quieted)) dB after")
        // Samples that are not numbers are silence, not a frame of NaN.
        var broken = noisy
        broken[notes[1].lowerBound + 1_000] = .nan
        let mended = try #require(RoomNoise.quieted(broken, sampleRate: Self.rate))
        let finite = mended.allSatisfy { $0.isFinite }
        #expect(finite)
        #expect(RoomNoise.quieted(noisy, sampleRate: 1_000) == nil ? true : false, "a rate YIN cannot read")
    }
}
