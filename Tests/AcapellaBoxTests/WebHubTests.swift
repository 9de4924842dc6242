@testable import AcapellaBox
import AcapellaEngine
@testable import AcapellaProject
import AcapellaScore
import AcapellaWeb
import Foundation
import Testing

/// The box's side of the web page: uploads validated before anything is
/// written and stored only in the library folder; downloads rendered from
/// the project as a reader sees it.
@Suite struct WebHubTests {
    static let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/data/musicxml").path

    /// The `acapella` built beside these tests: the box's children (the
    /// download's mix) are this program.
    static let program = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        .deletingLastPathComponent().appendingPathComponent("acapella").path

    func folder() -> String {
        let path = NSTemporaryDirectory() + "webhub-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The open song's entry made from the score the session holds is the
    /// entry read from its file; a file whose header says otherwise (its
    /// title changed on disk) is read.
    @Test func theOpenSongsEntryIsItsFilesEntry() throws {
        let songs = SongIdentityTests.songsDirectory.path
        let paths = [songs + "/amazing-grace.acasong", songs + "/silent-night.acasong"]
        let score = try Acasong.parse(try songText("silent-night.acasong"))
        let read = WebHub(dataDirectory: folder()), held = WebHub(dataDirectory: folder())
        read.publishLibrary(paths, current: 1)
        held.publishLibrary(paths, current: 1, open: (paths[1], score))
        #expect(held.library() == read.library() && held.library()[1].parts.count == score.parts.count && held.library()[1].seconds > 0)
        var retitled = score
        retitled.title = "Stille Nacht"
        let other = WebHub(dataDirectory: folder())
        other.publishLibrary(paths, current: 1, open: (paths[1], retitled))
        #expect(other.library() == read.library(), "the file's own title, not the held score's")
    }

    @Test func uploadsAreValidatedThenStoredInTheLibraryOnly() throws {
        let data = folder()
        let hub = WebHub(dataDirectory: data)
        hub.publishLibrary([], current: 0)
        // Refused before anything is written: not a song, empty, broken.
        #expect(hub.upload(fileName: "notes.txt", bytes: Array("x".utf8)) == .failure(WebFailure(415, "that file is not a song: send .acasong, .musicxml, .xml or .mxl")))
        #expect(hub.upload(fileName: "empty.xml", bytes: []) == .failure(WebFailure(400, "the file is empty")))
        guard case .failure(let broken) = hub.upload(fileName: "hymn.musicxml", bytes: Array("<score-partwise><part-list>".utf8)) else {
            Issue.record("broken MusicXML must be refused")
            return
        }
        #expect(broken.status == 422 && broken.description.hasPrefix("hymn.musicxml:1:"), "\(broken)")
        guard case .failure(let badSong) = hub.upload(fileName: "mine.acasong", bytes: Array("title: x\n(".utf8)) else {
            Issue.record("a broken .acasong must be refused")
            return
        }
        #expect(badSong.description.hasPrefix("mine.acasong:"), "\(badSong)")
        let written = (try? FileManager.default.contentsOfDirectory(atPath: data + "/library")) ?? []
        #expect(written.isEmpty)
        // A real score, under a hostile name: stored under the box's name, inside the library.
        let bytes = try #require(FileManager.default.contents(atPath: Self.shared + "/liliuokalani_aloha_oe.mxl"))
        guard case .success(let first) = hub.upload(fileName: "../../../etc/passwd.mxl", bytes: [UInt8](bytes)) else {
            Issue.record("the score must import")
            return
        }
        #expect(first.title == "Aloha Oe" && first.index == 0 && first.report.contains { $0.contains("kept as one part") })
        guard case .success(let second) = hub.upload(fileName: "aloha.mxl", bytes: [UInt8](bytes)) else {
            Issue.record("the same score again is another song")
            return
        }
        #expect(second.index == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data + "/library").sorted() == ["aloha-oe-2.acasong", "aloha-oe.acasong"])
        let stored = try Acasong.parse(String(decoding: FileManager.default.contents(atPath: data + "/library/aloha-oe.acasong")!, as: UTF8.self))
        #expect(stored.title == "Aloha Oe" && stored.parts.count == 6)
        #expect(hub.library().map(\.uploaded) == [true, true])
        #expect(hub.newUploads() == [data + "/library/aloha-oe.acasong", data + "/library/aloha-oe-2.acasong"])
        #expect(hub.live().libraryVersion >= 2)
        // The loop learns of the first: the second, not yet learned, stays in the page's library.
        hub.publishLibrary([data + "/library/aloha-oe.acasong"], current: 0)
        #expect(hub.newUploads() == [data + "/library/aloha-oe-2.acasong"] && hub.library().count == 2)
        // A song a sync brought that the loop has not taken in yet: the next upload is named past it too.
        try FileManager.default.createDirectory(atPath: data + "/songs", withIntermediateDirectories: true)
        try Data(try songText("amazing-grace.acasong").utf8).write(to: URL(fileURLWithPath: data + "/songs/aloha-oe-3.acasong"))
        guard case .success = hub.upload(fileName: "aloha.mxl", bytes: [UInt8](bytes)) else {
            Issue.record("a third upload")
            return
        }
        #expect(hub.newUploads().last == data + "/library/aloha-oe-4.acasong", "\(hub.newUploads())")
    }

    @Test func downloadsComeFromTheProject() throws {
        let data = folder()
        let hub = WebHub(dataDirectory: data, program: Self.program)
        #expect(hub.download(.mix(format: "wav")) == .failure(WebFailure(404, "no song is open")))
        let song = try songText("amazing-grace.acasong")
        let project = try Project.create(at: data + "/grace.acaproj", songText: song)
        project.close()
        hub.publishTakes([], project: project.path, song: "Amazing Grace", parts: project.score.parts.map(\.name), currentPart: 1, sampleRate: 48_000) { _ in 1 }
        #expect(hub.takes().parts == ["Soprano", "Alto", "Tenor", "Bass"])
        #expect(hub.download(.take(3)) == .failure(WebFailure(404, "no finished take 3 in Amazing Grace")))
        guard case .success(let mix) = hub.download(.practice(part: 1, format: "wav")) else {
            Issue.record("a practice track renders")
            return
        }
        #expect(mix.temporary && mix.path.hasPrefix(data + "/exports/") && mix.downloadName == "grace-part-2-practice.wav")
        let audio = try AudioFile.read(mix.path)
        let loudness = try Loudness.measure(interleaved: audio.samples, channels: audio.channels, sampleRate: audio.sampleRate)
        #expect(abs(loudness.integratedLUFS + 16) < 0.1, "\(loudness.integratedLUFS)")
        guard case .success(let bundle) = hub.download(.project) else {
            Issue.record("the project zips")
            return
        }
        #expect(bundle.downloadName == "grace.acaproj.zip")
        let listing = FileManager.default.contents(atPath: bundle.path).map { [UInt8]($0) } ?? []
        #expect(listing.starts(with: [0x50, 0x4B, 0x03, 0x04]))
        #expect(hub.download(.practice(part: 9, format: "wav")) == .failure(WebFailure(404, "no part 10 in Amazing Grace")))
    }
}
