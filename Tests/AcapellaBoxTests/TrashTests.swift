@testable import AcapellaBox
import AcapellaProject
import Foundation
import Testing

/// The trash: a song and the files of its name moved in whole, only the
/// user's songs, a project whole; emptied after 30 days and not before.
@Suite struct TrashTests {
    @Test func keptThirtyDaysThenEmptied() throws {
        let data = NSTemporaryDirectory() + "trash-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: data) }
        let songs = SongLibrary.uploadFolder(data)
        try FileManager.default.createDirectory(atPath: songs, withIntermediateDirectories: true)
        for name in ["hymn.acasong", "hymn.import.txt", "hymnal.acasong", "other.mxl.error.txt"] {
            try Data(name.utf8).write(to: URL(fileURLWithPath: songs + "/" + name))
        }
        #expect(Trash.isUsers(songs + "/hymn.acasong", dataDirectory: data))
        #expect(Trash.isUsers(SongLibrary.userFolder(data) + "/x.acasong", dataDirectory: data))
        #expect(!Trash.isUsers("/usr/share/acapella/songs/amazing-grace.acasong", dataDirectory: data))
        #expect(!Trash.isUsers(songs + "/sub/hymn.acasong", dataDirectory: data))
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let folder = try Trash.move(song: songs + "/hymn.acasong", dataDirectory: data, now: start)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == ["hymn.acasong", "hymn.import.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: songs).sorted() == ["hymnal.acasong", "other.mxl.error.txt"])
        #expect((folder as NSString).lastPathComponent == "20260921-141320-hymn")
        // A song not there: said, nothing moved.
        #expect(throws: ProjectError.self) { try Trash.move(song: songs + "/gone.acasong", dataDirectory: data, now: start) }
        #expect(Trash.purge(dataDirectory: data, now: start.addingTimeInterval(29 * 86_400)).isEmpty)
        #expect(FileManager.default.fileExists(atPath: folder))
        #expect(Trash.purge(dataDirectory: data, now: start.addingTimeInterval(31 * 86_400)) == ["songs/20260921-141320-hymn"])
        #expect(!FileManager.default.fileExists(atPath: folder))
    }

    @Test func aProjectGoesWholeAndIsEmptiedAfterThirtyDays() throws {
        let data = NSTemporaryDirectory() + "trash-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: data) }
        let project = data + "/projects/hymn (Choir).acaproj"
        try FileManager.default.createDirectory(atPath: project + "/takes", withIntermediateDirectories: true)
        try Data("take".utf8).write(to: URL(fileURLWithPath: project + "/takes/take-1.wav"))
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let moved = try Trash.move(project: project, dataDirectory: data, now: start)
        #expect(moved == Trash.projectsFolder(data) + "/20260921-141320-hymn (Choir).acaproj")
        #expect(!FileManager.default.fileExists(atPath: project))
        #expect(try Data(contentsOf: URL(fileURLWithPath: moved + "/takes/take-1.wav")) == Data("take".utf8), "the takes go with it")
        #expect(throws: ProjectError.self) { try Trash.move(project: project, dataDirectory: data, now: start) }
        #expect(Trash.purge(dataDirectory: data, now: start.addingTimeInterval(29 * 86_400)).isEmpty)
        #expect(Trash.purge(dataDirectory: data, now: start.addingTimeInterval(31 * 86_400)) == ["projects/20260921-141320-hymn (Choir).acaproj"])
        #expect(!FileManager.default.fileExists(atPath: moved))
    }

    /// A project as long as a project's name may be (a 29-letter name
    /// beside a 200-byte song file name), or a song of the longest file
    /// name, goes to the trash as any other, twice in one second too: its
    /// name there loses the end of its stem, never its stamp.
    @Test func theLongestNamesGoToTheTrash() throws {
        let data = NSTemporaryDirectory() + "trash-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: data) }
        let stem = String(repeating: "h", count: 200), name = String(repeating: "a", count: 29)
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        for _ in 0..<2 {
            let project = data + "/projects/\(stem) (\(name)).acaproj"
            #expect((project as NSString).lastPathComponent.utf8.count == Project.longestName)
            try FileManager.default.createDirectory(atPath: project + "/takes", withIntermediateDirectories: true)
            let moved = try Trash.move(project: project, dataDirectory: data, now: start)
            #expect((moved as NSString).lastPathComponent.hasPrefix("20260921-141320-\(stem) (aaaa") && moved.hasSuffix(".acaproj") || moved.hasSuffix(".acaproj-2"))
            #expect(FileManager.default.fileExists(atPath: moved + "/takes") && !FileManager.default.fileExists(atPath: project))
        }
        let songs = SongLibrary.uploadFolder(data)
        try FileManager.default.createDirectory(atPath: songs, withIntermediateDirectories: true)
        let song = songs + "/" + String(repeating: "s", count: 247) + ".acasong"
        try Data("acasong 1\n".utf8).write(to: URL(fileURLWithPath: song))
        let folder = try Trash.move(song: song, dataDirectory: data, now: start)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [(song as NSString).lastPathComponent])
        #expect(Trash.purge(dataDirectory: data, now: start.addingTimeInterval(31 * 86_400)).count == 3)
    }
}

/// A song's projects: the first where it always was, named ones beside
/// it, a name that is another song's first project never counted as this
/// song's, names checked.
@Suite struct SongProjectsTests {
    @Test func namedProjectsBesideTheFirst() throws {
        let data = NSTemporaryDirectory() + "projects-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: data) }
        let songs = data + "/songs"
        try FileManager.default.createDirectory(atPath: songs, withIntermediateDirectories: true)
        let hymn = songs + "/hymn.acasong", choirSong = songs + "/hymn (Choir).acasong", other = songs + "/hymnal.acasong"
        for (song, title) in [(hymn, "Hymn"), (choirSong, "The Choir's Hymn"), (other, "Hymnal")] {
            try Data("acasong 1\ntitle: \(title)\n".utf8).write(to: URL(fileURLWithPath: song))
        }
        #expect(SongProjects.path(song: hymn, name: nil, dataDirectory: data) == data + "/projects/hymn.acaproj")
        #expect(SongProjects.path(song: hymn, name: "main", dataDirectory: data) == data + "/projects/hymn.acaproj")
        #expect(SongProjects.path(song: hymn, name: "Choir", dataDirectory: data) == data + "/projects/hymn (Choir).acaproj")
        #expect(SongProjects.names(song: hymn, dataDirectory: data, library: [hymn]) == ["Main"], "Main before it exists")
        // A named project is marked with the song it was made from; a song's first is not.
        for (name, from) in [("hymn", nil), ("hymn (Choir)", nil), ("hymn (anna 2)", hymn), ("hymnal", nil), ("hymnal (Choir)", other),
                             ("hymn (a(b))", hymn), ("hymn (Old)", nil), ("hymn (Else)", songs + "/hymn-else.acasong"), ("hymn (\u{301}x)", hymn)] {
            let project = data + "/projects/\(name).acaproj"
            try FileManager.default.createDirectory(atPath: project, withIntermediateDirectories: true)
            if let from { try SongProjects.mark(project, song: from) }
        }
        #expect(SongProjects.names(song: hymn, dataDirectory: data, library: [hymn, other]) == ["Main", "a(b)", "anna 2", "\u{301}x"],
                "not the other song's (in the library or not); names made under older rules read as they are")
        #expect(SongProjects.names(song: other, dataDirectory: data, library: [hymn, other]) == ["Main", "Choir"])
        #expect(SongProjects.names(song: hymn, dataDirectory: data, library: [hymn, choirSong]) == ["Main", "a(b)", "anna 2", "\u{301}x"])
        #expect(SongProjects.name(of: data + "/projects/hymn (Choir).acaproj", song: hymn, dataDirectory: data) == "Choir")
        #expect(SongProjects.name(of: data + "/projects/hymn.acaproj", song: hymn, dataDirectory: data) == "Main")
        #expect(SongProjects.name(of: data + "/projects/hymn (\u{301}x).acaproj", song: hymn, dataDirectory: data) == "\u{301}x")
        #expect(SongProjects.name(of: data + "/projects/hymn (a\u{1B}[2J).acaproj", song: hymn, dataDirectory: data) == nil, "never what garbles a line")
        #expect(SongProjects.name(of: "/elsewhere/hymn (Choir).acaproj", song: hymn, dataDirectory: data) == nil)
        #expect(SongProjects.nameProblem("Choir 2", taken: ["Main"]) == nil)
        #expect(SongProjects.nameProblem("Chœur d'Anna", taken: ["Main"]) == nil)
        for bad in ["", " Choir", "a/b", "a(b)", ".hidden", "-x", "\u{301}ab", "a\u{202E}b", String(repeating: "x", count: 41), "tab\there"] {
            #expect(SongProjects.nameProblem(bad, taken: []) != nil, "\(bad)")
        }
        #expect(SongProjects.nameProblem("main", taken: ["Main"])?.contains("already has a project called 'Main'") == true)
    }
}

/// What the library lists of a song, read from the song itself.
@Suite struct SongSummaryTests {
    @Test func partsLengthAndVerses() throws {
        // Amazing Grace: SATB, a 1-beat pickup and 14 measures of 3/4 at
        // 72 bpm (43 beats: 35.8 s), two verses.
        let grace = SongSummary.read(songsDirectory.appendingPathComponent("amazing-grace.acasong").path)
        #expect(grace.title == "Amazing Grace" && grace.tags.contains("SATB"))
        #expect(grace.parts == ["Soprano", "Alto", "Tenor", "Bass"])
        #expect(grace.measures == 15 && grace.seconds == 36 && grace.verses == 2, "\(grace)")
        // Not a song: its name, nothing more.
        let broken = NSTemporaryDirectory() + "broken-\(UUID().uuidString).acasong"
        defer { try? FileManager.default.removeItem(atPath: broken) }
        try Data("acasong 1\ntitle: Half\npart X [treble]\nH9 4 |".utf8).write(to: URL(fileURLWithPath: broken))
        let half = SongSummary.read(broken)
        #expect(half.title == "Half" && half.parts.isEmpty && half.measures == 0)
    }
}
