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
    }
}
