@testable import AcapellaBox
import AcapellaProject
import Foundation
import Testing

/// The trash: a song and the files of its name moved in whole, only the
/// user's songs, emptied after 30 days and not before.
@Suite struct SongTrashTests {
    @Test func keptThirtyDaysThenEmptied() throws {
        let data = NSTemporaryDirectory() + "trash-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: data) }
        let songs = SongLibrary.uploadFolder(data)
        try FileManager.default.createDirectory(atPath: songs, withIntermediateDirectories: true)
        for name in ["hymn.acasong", "hymn.import.txt", "hymnal.acasong", "other.mxl.error.txt"] {
            try Data(name.utf8).write(to: URL(fileURLWithPath: songs + "/" + name))
        }
        #expect(SongTrash.isUsers(songs + "/hymn.acasong", dataDirectory: data))
        #expect(SongTrash.isUsers(SongLibrary.userFolder(data) + "/x.acasong", dataDirectory: data))
        #expect(!SongTrash.isUsers("/usr/share/acapella/songs/amazing-grace.acasong", dataDirectory: data))
        #expect(!SongTrash.isUsers(songs + "/sub/hymn.acasong", dataDirectory: data))
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let folder = try SongTrash.move(songs + "/hymn.acasong", dataDirectory: data, now: start)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == ["hymn.acasong", "hymn.import.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: songs).sorted() == ["hymnal.acasong", "other.mxl.error.txt"])
        #expect((folder as NSString).lastPathComponent == "20260921-141320-hymn")
        // A song not there: said, nothing moved.
        #expect(throws: ProjectError.self) { try SongTrash.move(songs + "/gone.acasong", dataDirectory: data, now: start) }
        #expect(SongTrash.purge(dataDirectory: data, now: start.addingTimeInterval(29 * 86_400)).isEmpty)
        #expect(FileManager.default.fileExists(atPath: folder))
        #expect(SongTrash.purge(dataDirectory: data, now: start.addingTimeInterval(31 * 86_400)) == ["20260921-141320-hymn"])
        #expect(!FileManager.default.fileExists(atPath: folder))
    }
}
