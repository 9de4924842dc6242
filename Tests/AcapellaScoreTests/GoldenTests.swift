@testable import AcapellaScore
import Foundation
import Testing

/// The canonical printer and the JSON dump against checked-in golden files.
/// Re-record with ACAPELLA_RECORD_GOLDEN=1 (the recording run fails).
@Suite struct GoldenTests {
    static let songs: [String] = {
        let folder = packageRoot.appendingPathComponent("Songs")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".acasong") }.sorted()
    }()

    @Test func allFormsPrintCanonically() throws {
        let score = try Acasong.parse(fixture("all-forms.acasong"))
        let printed = Acasong.serialize(score)
        try assertGolden(printed, named: "all-forms.canonical.acasong")
        #expect(try Acasong.parse(printed) == score)
    }

    @Test func allFormsDump() throws {
        try assertGolden(Acasong.parse(fixture("all-forms.acasong")).jsonText(), named: "all-forms.dump.json")
    }

    /// Every mark: printed canonically, read back the same, dumped.
    @Test func marksPrintCanonically() throws {
        let score = try Acasong.parse(fixture("marks.acasong"))
        let printed = Acasong.serialize(score)
        try assertGolden(printed, named: "marks.canonical.acasong")
        #expect(try Acasong.parse(printed) == score)
        try assertGolden(score.jsonText(), named: "marks.dump.json")
    }

    @Test func songLibraryIsNotEmpty() {
        #expect(!Self.songs.isEmpty, "Songs/ has no .acasong files")
    }

    /// Every bundled song validates and is already in canonical form, so what
    /// ships is what the printer would write.
    @Test(arguments: songs)
    func bundledSongIsValidAndCanonical(name: String) throws {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("Songs/\(name)"), encoding: .utf8)
        let score = try Acasong.parse(text, file: name)
        #expect(score.title != nil && score.source != nil && score.license != nil, "\(name) lacks title/source/license")
        #expect(Acasong.serialize(score) == text, "\(name) is not in canonical form")
        // Tagged with a difficulty, the number of voices, and a style.
        #expect(score.tags.contains { ["easy", "medium", "hard"].contains($0) }, "\(name): no difficulty tag")
        #expect(score.tags.contains("\(score.parts.count) voices"), "\(name): no '\(score.parts.count) voices' tag")
        #expect(score.tags.count >= 3, "\(name): no style tag")
        // At most three minutes.
        let seconds = try TimeMap(tempos: score.tempos, sampleRate: 48_000).sample(atTick: score.endTick) / 48_000
        #expect(seconds <= 180, "\(name) lasts \(seconds) s")
    }

    /// The library has what singers asked for: a round, hymn-style SATB, a
    /// carol, a barbershop TTBB piece, real imported scores.
    @Test func libraryCoversTheStyles() throws {
        let scores = try Self.songs.map {
            try Acasong.parse(String(contentsOf: packageRoot.appendingPathComponent("Songs/\($0)"), encoding: .utf8))
        }
        #expect(scores.count >= 8)
        func count(_ tag: String) -> Int { scores.filter { $0.tags.contains(tag) }.count }
        #expect(count("round") >= 1)
        #expect(scores.filter { $0.tags.contains("hymn") && $0.tags.contains("SATB") }.count >= 2)
        #expect(count("carol") >= 1)
        #expect(scores.filter { $0.tags.contains("barbershop") && $0.tags.contains("TTBB") }.count >= 1)
        #expect(count("chorale") >= 2)
        #expect(scores.filter { $0.source?.contains("imported with acapella import") == true }.count >= 4)
    }
}
