@testable import AcapellaScore
import Testing

/// Any input ends in a score or in located errors: never a crash, a trap or
/// a hang. (The libFuzzer target explores this further; these are the
/// shapes the issue names, kept as regression tests.)
@Suite struct HostileInputTests {
    func expectRejected(_ bytes: [UInt8], _ comment: Comment? = nil) -> [ScoreError] {
        do {
            _ = try Acasong.parse(bytes: bytes, file: "hostile")
            Issue.record("accepted hostile input \(comment?.description ?? "")")
            return []
        } catch {
            #expect(!error.errors.isEmpty)
            #expect(error.errors.count <= Acasong.maximumErrors + 1)
            return error.errors
        }
    }

    @Test(arguments: 1...200)
    func binaryGarbage(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed))
        let count = Int.random(in: 0...4096, using: &rng)
        var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
        if seed % 2 == 0 { bytes = Array("acasong 1\npart A\n".utf8) + bytes }  // get past the magic
        _ = expectRejected(bytes, "seed \(seed)")
    }

    @Test(arguments: 1...200)
    func tokenSoup(seed: Int) {
        // Valid-looking tokens in random order: the parser's hardest input.
        var rng = SplitMix64(seed: UInt64(seed))
        let pieces = ["C4", "4", "8.", "~", "|", "3(", "5:4(", ")", "R", "2..", "F#3", "Bbb2", "32", "\n", " ", "part X", "lyrics X:",
                      "la-", "_", "tempo@2:", "time@0:", "99999999999999999999", "//", "(", "[", "]", "\t", "\r", "é", "0:0(", "1:1("]
        var text = "acasong 1\n"
        for _ in 0..<Int.random(in: 1...300, using: &rng) { text += pieces.randomElement(using: &rng)! + " " }
        do {
            let score = try Acasong.parse(text)
            // Whatever is accepted must round-trip.
            #expect(try Acasong.parse(Acasong.serialize(score)) == score)
        } catch {
            #expect(!error.errors.isEmpty)
        }
    }

    @Test func hugeLineOfGarbageEndsInErrors() {
        // 15 MB on one line (under the file limit). Errors stop at the cap; the scan stays linear.
        let bytes = Array(("acasong 1\npart A\n" + String(repeating: "Zq7x ", count: (15 << 20) / 5)).utf8)
        let errors = expectRejected(bytes)
        #expect(errors.last?.message == "too many errors; stopping here")
        #expect(errors.first?.line == 3)
    }

    @Test func hugeLineOfNotesHitsTheNoteLimit() {
        // Valid notes, far too many: refused at the cap, not after eating memory.
        var bytes = Array("acasong 1\npart A\n".utf8)
        let note = Array("C4 32 ".utf8)
        for _ in 0...(ScoreLimits.maximumNotes) { bytes += note }
        let errors = expectRejected(bytes)
        #expect(errors.map(\.message) == ["more than 200000 notes; the box takes 200000 at most"])
    }

    /// Parts, notes across parts, measures, the file's size, a title's
    /// length and its control characters: each past the limit refused in
    /// one located line.
    @Test func limitsAreLocatedRefusals() {
        var many = "acasong 1\n"
        for part in 1...65 { many += "part P\(part)\nC4 1\n" }
        #expect(expectRejected(Array(many.utf8)).map(\.message) == ["more than 64 parts; the box takes 64 at most"])
        var spread = "acasong 1\n"
        for part in 1...4 { spread += "part P\(part)\n" + String(repeating: "C4 32 ", count: 50_001) + "\n" }
        let notes = expectRejected(Array(spread.utf8))
        #expect(notes.map(\.message) == ["more than 200000 notes; the box takes 200000 at most"] && notes.first?.line == 9)
        let long = "acasong 1\npart A\n" + String(repeating: "C4 1 | ", count: 10_001) + "\n"
        #expect(expectRejected(Array(long.utf8)).map(\.message) == ["the song has 10001 measures; the box takes 10000 at most"])
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: ScoreLimits.maximumFileBytes + 1)
        #expect(expectRejected(huge).map(\.message) == ["the file is 16 MB; a song file is 16 MB at most"])
        #expect(expectRejected(Array("acasong 1\ntitle: \u{1B}]2;pwned\u{7}\npart A\nC4 1\n".utf8)).map(\.message) == ["title contains a control character"])
        #expect(expectRejected(Array("acasong 1\ntitle: a\u{202E}b\npart A\nC4 1\n".utf8)).map(\.message) == ["title contains a control character"])
        let title = "acasong 1\ntitle: " + String(repeating: "x", count: 1_001) + "\npart A\nC4 1\n"
        #expect(expectRejected(Array(title.utf8)).map(\.message) == ["title is longer than 1000 characters"])
    }

    @Test func deepTupletNesting() {
        let text = "acasong 1\npart A\n" + String(repeating: "3(", count: 100_000) + "C4 8" + String(repeating: ")", count: 100_000) + "\n"
        let errors = expectRejected(Array(text.utf8))
        #expect(errors.first?.message.hasPrefix("nested tuplets are not supported") == true)
    }

    @Test func hugeNumbersAreErrorsNotOverflows() {
        for line in ["C4 99999999999999999999", "99999999999999999999:2(C4 8)", "time: 99999999999999999/4",
                     "tempo@99999999999999: 80", "pickup: 999999999999999/1", "tempo: 99999999999999.5",
                     "time@999999999: 3/4", "tempo@999999999+999999999: 60"]
        {
            let isHeader = line.contains(":") && !line.contains("(")
            let text = "acasong 1\n" + (isHeader ? "\(line)\npart A\nC4 1\n" : "part A\n\(line)\n")
            _ = expectRejected(Array(text.utf8), "\(line)")
        }
    }

    @Test func invalidUTF8IsLocated() {
        let bytes = Array("acasong 1\ntitle: Caf".utf8) + [0xC3] + Array("\npart A\nC4 1\n".utf8)
        let errors = expectRejected(bytes)
        #expect(errors.map(\.description) == ["hostile:2:11: error: the file is not UTF-8 text (invalid byte 0xC3)"])
    }
}
