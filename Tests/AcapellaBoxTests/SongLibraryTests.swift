@testable import AcapellaBox
import AcapellaDevices
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The user's songs folder: MusicXML imported on arrival with its report
/// beside, failures kept with their error, nothing of the user's overwritten,
/// a changed file imported again; the folder watch notices arrivals.
@Suite struct SongLibraryTests {
    static let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/data/musicxml").standardized.path

    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-songs-\(UUID().uuidString)").path
        try Folders.make(path)
        return path
    }

    @Test func musicXMLArrivesAsASongWithItsReport() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: Self.shared + "/bach_bwv66.6.mxl", toPath: folder + "/chorale.mxl")
        try Data("<score-partwise><part-list>".utf8).write(to: URL(fileURLWithPath: folder + "/broken.musicxml"))
        let arrivals = SongLibrary.importArrivals(in: folder)
        #expect(arrivals.map(\.source) == [folder + "/broken.musicxml", folder + "/chorale.mxl"])
        #expect(arrivals[0].song == nil && arrivals[0].message.hasPrefix("broken.musicxml:1:") && arrivals[0].message.hasSuffix("not imported (the file stays; mend or replace it)"))
        #expect(arrivals[1].song == folder + "/chorale.acasong" && arrivals[1].message.hasPrefix("chorale.mxl: imported as"))
        // The song parses, with the open score's four parts; the report says where it came from.
        let text = try String(contentsOfFile: folder + "/chorale.acasong", encoding: .utf8)
        let score = try Acasong.parse(text)
        #expect(score.parts.map(\.name) == ["Soprano", "Alto", "Tenor", "Bass"])
        #expect(try String(contentsOfFile: folder + "/chorale.import.txt", encoding: .utf8).hasPrefix("Imported from chorale.mxl (4 parts: Soprano, Alto, Tenor, Bass)."))
        #expect(try String(contentsOfFile: folder + "/broken.musicxml.error.txt", encoding: .utf8) == arrivals[0].message + "\n")
        #expect(FileManager.default.fileExists(atPath: folder + "/broken.musicxml"), "a file that fails stays")
        // Nothing new: nothing done.
        #expect(SongLibrary.importArrivals(in: folder).isEmpty)
        #expect(SongLibrary.songs(in: folder) == [folder + "/chorale.acasong"])
        // The broken file mended: imported, its error gone.
        usleep(20_000)
        try FileManager.default.removeItem(atPath: folder + "/broken.musicxml")
        try FileManager.default.copyItem(atPath: Self.shared + "/bach_bwv26.6.mxl", toPath: folder + "/broken.musicxml")
        let mended = SongLibrary.importArrivals(in: folder)
        #expect(mended.map(\.song) == [folder + "/broken.acasong"])
        #expect(!FileManager.default.fileExists(atPath: folder + "/broken.musicxml.error.txt"))
    }

    @Test func aSongOfTheUsersIsNeverOverwritten() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let mine = "acasong 1\ntitle: Mine\ntime: 4/4\ntempo: 100\n\npart A [treble]\nC4 1 |\n"
        try Data(mine.utf8).write(to: URL(fileURLWithPath: folder + "/hymn.acasong"))
        usleep(20_000)
        try FileManager.default.copyItem(atPath: Self.shared + "/bach_bwv66.6.mxl", toPath: folder + "/hymn.mxl")
        let arrivals = SongLibrary.importArrivals(in: folder)
        #expect(arrivals.first?.message == "hymn.mxl: not imported: hymn.acasong is already there and was not made from it; rename one of them")
        #expect(try String(contentsOfFile: folder + "/hymn.acasong", encoding: .utf8) == mine)
    }

    @Test func theWatchNoticesAFileMovedIn() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let watch = try FolderWatch(folder)
        #expect(!watch.drain())
        try FileManager.default.copyItem(atPath: Self.shared + "/bach_bwv66.6.mxl", toPath: folder + "/.partial")
        #expect(watch.drain(), "a file closed after writing")
        try FileManager.default.moveItem(atPath: folder + "/.partial", toPath: folder + "/whole.mxl")
        #expect(watch.drain(), "a file moved in")
        #expect(!watch.drain())
        #expect(throws: DeviceError.self) { try FolderWatch(folder + "/none") }
    }
}
