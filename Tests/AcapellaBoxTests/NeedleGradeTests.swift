@testable import AcapellaBox
import AcapellaAnalysis
import AcapellaDSP
@testable import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// The needle and the grade read the same pitch (issue 52: the needle
/// showed −61 and −65 cents in a bar the grade scored 100/100). On real
/// singers (../shared/data/voice-real, SSVD v2.0; each annotated note taken
/// as the written note, its nearest semitone), through the live tracker's
/// own path: the needle's word on each note, given a moment after it
/// (`PitchReading.lastNote`), is the centre the grade scores, within
/// ±5 cents, on every note held 400 ms or more.
@Suite struct NeedleGradeTests {
    static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/data/voice-real").standardized.path

    static func recordings() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: data)) ?? []).filter { $0.hasSuffix(".flac") }.map { String($0.dropLast(5)) }.sorted()
    }

    static func tones(_ name: String, rate: Int) throws -> [ToneEvent] {
        let text = try String(contentsOfFile: data + "/" + name + ".notes.txt", encoding: .utf8)
        return text.split(whereSeparator: \.isNewline).compactMap { line -> ToneEvent? in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Double($0) }
            guard fields.count >= 3 else { return nil }
            let midi = Int(fields[2].rounded())
            return ToneEvent(startSample: Int64(fields[0] * Double(rate)), endSample: Int64(fields[1] * Double(rate)), frequency: Tuning.frequency(midi: midi), midi: midi)
        }
    }

    @Test(.fullSuiteOnly, .enabled(if: !recordings().isEmpty, "needs ../shared/data/voice-real"))
    func theNeedlesWordOnANoteIsTheGrades() throws {
        var compared = 0, heldWithoutWord: [String] = [], apart: [String] = []
        var live: [Double] = [], worst = 0.0
        for name in Self.recordings() {
            let (samples, rate) = try AudioFile.readMono(Self.data + "/" + name + ".flac")
            let tones = try Self.tones(name, rate: rate)
            let grades = TakeAnalyzer(sampleRate: rate).analyze(samples, origin: 0, notes: tones.map { TargetNote(start: $0.startSample, end: $0.endSample, frequency: $0.frequency) })
            let readings = PitchTracker.readings(of: samples, tones: tones, sampleRate: rate)
            var words: [Int: Double] = [:]
            for reading in readings { if let note = reading.lastNote, words[note.index] == nil { words[note.index] = note.cents } }
            for (index, (tone, grade)) in zip(tones, grades).enumerated() where Double(tone.endSample - tone.startSample) >= 0.4 * Double(rate) {
                guard grade.sung, let cents = grade.cents else { continue }
                guard let word = words[index] else { heldWithoutWord.append("\(name) note \(index + 1)"); continue }
                compared += 1
                worst = max(worst, abs(word - cents))
                if abs(word - cents) > 1 { print(String(format: "DIFF %@ note %d of %d: needle %+.2f, grade %+.2f", name, index + 1, tones.count, word, cents)) }
                if abs(word - cents) > 5 { apart.append(String(format: "%@ note %d: needle %+.1f, grade %+.1f", name, index + 1, word, cents)) }
                // The live needle over the held note (from 150 ms in), for the record.
                let shown = readings.filter { $0.songSample >= tone.startSample + Int64(rate * 15 / 100) && $0.songSample < tone.endSample }.compactMap(\.cents).sorted()
                if shown.count >= 5 { live.append(abs(shown[shown.count / 2] - cents)) }
            }
        }
        live.sort()
        print(String(format: "needle against grade, %d held notes: the word after each note %d more than 5 cents apart (worst %.2f); the live needle's median over the note %.1f cents apart (median), %.1f (p95)",
                     compared, apart.count, worst, live.isEmpty ? .nan : live[live.count / 2], live.isEmpty ? .nan : live[live.count * 95 / 100]))
        #expect(compared > 400, "held notes compared: \(compared)")
        #expect(heldWithoutWord.isEmpty, "sung and held, but the needle said nothing after: \(heldWithoutWord.prefix(10))")
        #expect(apart.isEmpty, "\(apart.count) notes: \(apart.prefix(10))")
    }

    /// The recording in a room: mains hum (50 Hz and its harmonics to 400
    /// Hz, -45 dBFS) and a fan 15 dB under the singing (white noise, half
    /// of it through a 300 Hz low-pass), seeded.
    static func inARoom(_ samples: [Float], rate: Int, seed: UInt64) -> [Float] {
        var random = SplitMix64(seed: seed)
        var low = 0.0
        let pole = exp(-2 * Double.pi * 300 / Double(rate))
        var fan = samples.indices.map { _ -> Double in
            let white = Double(random.next() >> 11) / Double(1 << 53) * 2 - 1
            low = pole * low + (1 - pole) * white
            return white + 12 * low
        }
        var hum = samples.indices.map { index -> Double in
            let t = Double(index) / Double(rate)
            var sum = 0.0
            for harmonic in 1...8 {
                let k = Double(harmonic)
                sum += sin(2 * Double.pi * 50 * k * t + k) / k
            }
            return sum
        }
        func rms(_ values: [Double]) -> Double { (values.reduce(0) { $0 + $1 * $1 } / Double(max(1, values.count))).squareRoot() }
        // The singing's level: the loudest half of its half-second windows' median RMS.
        let window = rate / 2
        let levels = stride(from: 0, to: max(1, samples.count - window), by: window).map { start in
            rms(samples[start..<min(samples.count, start + window)].map(Double.init))
        }.sorted()
        let singing = levels.isEmpty ? 0.1 : levels[levels.count / 2 + levels.count / 4]
        let (fanScale, humScale) = (singing * pow(10, -15.0 / 20) / rms(fan), pow(10, -45.0 / 20) / rms(hum))
        fan = fan.map { $0 * fanScale }
        hum = hum.map { $0 * humScale }
        return samples.indices.map { Float(max(-1, min(1, Double(samples[$0]) + fan[$0] + hum[$0]))) }
    }

    /// The grade in a room: each note's centre moves little when the room
    /// is added (no more than swift-f0's), and few notes sung are lost. swift-f0 beside (its frames'
    /// median over each note, confidence over 0.9, the 22 with
    /// Tools/real-singers.py's first room): 509 notes, 1 not read in the
    /// room, centres moved median 1.58 cents, p95 6.19.
    @Test(.fullSuiteOnly, .enabled(if: !recordings().isEmpty, "needs ../shared/data/voice-real"))
    func theGradeMovesLittleInARoom() throws {
        var shifts: [Double] = [], lost: [String] = []
        for (number, name) in Self.recordings().enumerated() {
            let (samples, rate) = try AudioFile.readMono(Self.data + "/" + name + ".flac")
            let tones = try Self.tones(name, rate: rate)
            let targets = tones.map { TargetNote(start: $0.startSample, end: $0.endSample, frequency: $0.frequency) }
            let clean = TakeAnalyzer(sampleRate: rate).analyze(samples, origin: 0, notes: targets)
            let room = TakeAnalyzer(sampleRate: rate).analyze(Self.inARoom(samples, rate: rate, seed: UInt64(number + 1)), origin: 0, notes: targets)
            for (index, (tone, (quiet, noisy))) in zip(tones, zip(clean, room)).enumerated() where Double(tone.endSample - tone.startSample) >= 0.4 * Double(rate) {
                guard quiet.sung, let before = quiet.cents else { continue }
                guard noisy.sung, let after = noisy.cents else { lost.append("\(name) note \(index + 1)"); continue }
                shifts.append(abs(after - before))
            }
        }
        shifts.sort()
        let (median, p95) = (shifts[shifts.count / 2], shifts[shifts.count * 95 / 100])
        print(String(format: "the grade in a room: %d notes held, %d no longer sung, centres moved median %.2f cents, p95 %.2f, worst %.1f", shifts.count + lost.count, lost.count, median, p95, shifts.last ?? 0))
        // Measured: 532 held, centres moved median 0.62 cents, p95 4.12 (swift-f0's 6.19);
        // but 20 notes no longer sung (swift-f0 lost 1 of 509): soft notes under the
        // fan. The take analysis reads the take as captured (RoomNoise is `notes`' only).
        #expect(shifts.count > 400)
        #expect(p95 <= 6.2, "the grade's centres moved p95 \(p95) cents in the room, swift-f0's 6.19")
        #expect(lost.count * 100 <= 5 * (shifts.count + lost.count), "\(lost.count) notes no longer sung in the room: \(lost.prefix(10))")
    }

    /// Where the singer is silent the needle is too, in a room as in a
    /// quiet one (the room adds no readings). Each annotated note written on to the next one (or half a
    /// second past its end), so that the singer's breaths and late entries
    /// fall inside written notes, where the needle looks for a voice; the
    /// needle's readings counted from 100 ms after a sung note ends to
    /// 100 ms before the next begins.
    @Test(.fullSuiteOnly, .enabled(if: !recordings().isEmpty, "needs ../shared/data/voice-real"))
    func theNeedleIsSilentWhileTheSingerIsInARoom() throws {
        var rests = 0, shownClean = 0, shownRoom = 0, where_: [String] = []
        for (number, name) in Self.recordings().enumerated() {
            let (samples, rate) = try AudioFile.readMono(Self.data + "/" + name + ".flac")
            let sung = try Self.tones(name, rate: rate)
            let written = sung.indices.map { index in
                var tone = sung[index]
                let next = index + 1 < sung.count ? sung[index + 1].startSample : Int64.max
                tone.endSample = min(next, tone.endSample + Int64(rate / 2))
                return tone
            }
            let margin = Int64(rate / 10)
            func inRest(_ sample: Int64) -> Bool {
                !sung.contains { sample >= $0.startSample - margin && sample < $0.endSample + margin }
                    && written.contains { sample >= $0.startSample && sample < $0.endSample }
            }
            let clean = PitchTracker.readings(of: samples, tones: written, sampleRate: rate).filter { inRest($0.songSample) }
            let room = PitchTracker.readings(of: Self.inARoom(samples, rate: rate, seed: UInt64(number + 1)), tones: written, sampleRate: rate).filter { inRest($0.songSample) }
            rests += room.count
            shownClean += clean.filter { $0.cents != nil }.count
            let shown = room.filter { $0.cents != nil }
            shownRoom += shown.count
            if let first = shown.first { where_.append(String(format: "%@ at %.2f s (%d)", name, Double(first.songSample) / Double(rate), shown.count)) }
        }
        print("the needle in the singer's rests inside written notes: \(rests) readings, shown \(shownClean) clean, \(shownRoom) in the room: \(where_.prefix(12))")
        // Measured: of 6,451 readings in those rests, 173 showed a pitch in
        // the quiet room and 33 in the noisy one (the singer's own sounds
        // past an annotation: 1211 at 21.7 s is a short sung sound the
        // annotators left out). Hum or a fan read as a voice would show in
        // thousands.
        #expect(rests > 5_000, "readings in rests: \(rests)")
        #expect(shownRoom <= shownClean && shownRoom * 100 <= rests, "the needle showed \(shownRoom) readings in the room's rests (\(shownClean) in the quiet room's), of \(rests)")
    }
}
