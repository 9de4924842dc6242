@testable import AcapellaScore
import Testing

/// Random invalid edits of valid printed scores must be rejected, and the
/// first error must name the edited line, column and measure.
@Suite struct InvalidEditTests {
    struct Site {
        var part: Int
        var note: Int
        var location: TextLocation
        var measure: Int
    }

    /// A valid printed score, its parsed form, and where each note is.
    func printedScore(seed: Int) throws -> (text: [UInt8], score: Score, locations: [[TextLocation]]) {
        var rng = SplitMix64(seed: UInt64(seed) &* 7919)
        let score = ScoreGenerator.random(using: &rng, options: .init(parts: 3, measures: 10))
        let text = Array(Acasong.serialize(score).utf8)
        let parsed = try Acasong.parseWithLocations(bytes: text, file: "edit.acasong")
        return (text, parsed.score, parsed.noteLocations)
    }

    func sites(_ score: Score, _ locations: [[TextLocation]], where accept: (Part, Int, Int) -> Bool) -> [Site] {
        let meterMap = score.meterMap
        var sites: [Site] = []
        for (p, part) in score.parts.enumerated() {
            for index in part.notes.indices {
                let measure = meterMap.measure(containing: part.notes[index].startTick)
                if accept(part, index, measure) {
                    sites.append(Site(part: p, note: index, location: locations[p][index], measure: measure))
                }
            }
        }
        return sites
    }

    /// The range of the token starting at `offset`.
    func token(in text: [UInt8], at offset: Int) -> Range<Int> {
        let separators: Set<UInt8> = [0x20, 0x0A, 0x7C, 0x28, 0x29]  // space, newline, |, (, )
        var end = offset
        while end < text.count, !separators.contains(text[end]) { end += 1 }
        return offset..<end
    }

    func firstError(_ text: [UInt8]) -> ScoreError? {
        do {
            _ = try Acasong.parse(bytes: text, file: "edit.acasong")
            return nil
        } catch {
            return error.errors.first
        }
    }

    /// The edited text is rejected and its first error points at the note:
    /// same line, same column, same measure, and says what it should.
    func expectFirstError(of edited: [UInt8], at site: Site, saying text: String, seed: Int) throws {
        let error = try #require(firstError(edited), "seed \(seed): the edit was accepted")
        #expect(error.line == site.location.line, "seed \(seed): \(error)")
        #expect(error.column == site.location.offset - site.location.lineStart + 1, "seed \(seed): \(error)")
        #expect(error.measure == site.measure, "seed \(seed): \(error)")
        #expect(error.message.contains(text), "seed \(seed): \(error)")
    }

    @Test(arguments: 1...60)
    func changedDurationFailsTheBarlineCheck(seed: Int) throws {
        let (text, score, locations) = try printedScore(seed: seed)
        let meterMap = score.meterMap
        let lastMeasure = meterMap.measure(containing: score.endTick - 1)
        let firstMeasure = score.pickupTicks > 0 ? 0 : 1
        let candidates = sites(score, locations) { part, index, measure in
            part.notes[index].tuplet == nil && measure > firstMeasure && measure < lastMeasure
        }
        var rng = SplitMix64(seed: UInt64(seed))
        let site = try #require(candidates.randomElement(using: &rng))
        let note = score.parts[site.part].notes[site.note]
        // A new value that moves the measure's end off every barline (an edit
        // by exactly a measure's length would still pass the check).
        let measureEnd = meterMap.startTick(ofMeasure: site.measure + 1)
        let newValue = try #require(NoteValue.allowedDenominators.map { NoteValue($0) }
            .filter { !meterMap.isBarline(measureEnd + $0.writtenTicks - note.value.writtenTicks) }
            .randomElement(using: &rng))
        // The duration token follows the pitch token and a space.
        let pitch = token(in: text, at: site.location.offset)
        let duration = token(in: text, at: pitch.upperBound + 1)
        var edited = text
        edited.replaceSubrange(duration, with: Array((newValue.description + (note.tieToNext ? "~" : "")).utf8))

        let error = try #require(firstError(edited), "seed \(seed): edit was accepted")
        #expect(error.line == site.location.line, "seed \(seed): \(error)")
        #expect(error.measure == site.measure, "seed \(seed): \(error)")
        #expect(error.message.contains("barline check failed"), "seed \(seed): \(error)")
        #expect(error.file == "edit.acasong")
    }

    @Test(arguments: 1...40)
    func badPitchIsReportedAtItsColumn(seed: Int) throws {
        let (text, score, locations) = try printedScore(seed: seed)
        var rng = SplitMix64(seed: UInt64(seed))
        let site = try #require(sites(score, locations) { _, _, _ in true }.randomElement(using: &rng))
        let garbage = ["H4", "C", "Q#9", "c4", "Cb#4", "E10", "R4", "*"].randomElement(using: &rng)!
        var edited = text
        edited.replaceSubrange(token(in: text, at: site.location.offset), with: Array(garbage.utf8))

        try expectFirstError(of: edited, at: site, saying: "expected a pitch", seed: seed)
    }

    @Test(arguments: 1...40)
    func tieBetweenDifferentPitchesIsRejected(seed: Int) throws {
        let (text, score, locations) = try printedScore(seed: seed)
        let candidates = sites(score, locations) { part, index, _ in
            let note = part.notes[index]
            guard index + 1 < part.notes.count, let pitch = note.pitch, !note.tieToNext,
                  let next = part.notes[index + 1].pitch else { return false }
            return next.midi != pitch.midi
        }
        var rng = SplitMix64(seed: UInt64(seed))
        let site = try #require(candidates.randomElement(using: &rng))
        let pitch = token(in: text, at: site.location.offset)
        let duration = token(in: text, at: pitch.upperBound + 1)
        var edited = text
        edited.insert(UInt8(ascii: "~"), at: duration.upperBound)

        try expectFirstError(of: edited, at: site, saying: "a tie joins two notes of the same pitch", seed: seed)
    }

    @Test(arguments: 1...20)
    func unknownClefIsReportedOnThePartLine(seed: Int) throws {
        let (text, score, _) = try printedScore(seed: seed)
        var lines = String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var rng = SplitMix64(seed: UInt64(seed))
        let partIndex = Int.random(in: 0..<score.parts.count, using: &rng)
        let lineIndex = try #require(lines.indices.filter { lines[$0].hasPrefix("part ") }.dropFirst(partIndex).first)
        let name = score.parts[partIndex].name
        lines[lineIndex] = "part \(name) [mezzo]"
        let error = try #require(firstError(Array(lines.joined(separator: "\n").utf8)))
        #expect(error.line == lineIndex + 1)
        #expect(error.column == "part \(name) [".count + 1)
        #expect(error.message == "unknown clef 'mezzo'; expected treble, treble8vb, alto, bass")
    }
}
