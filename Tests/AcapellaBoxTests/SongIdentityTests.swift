@testable import AcapellaBox
import AcapellaProject
import AcapellaScore
import AcapellaWeb
import Foundation
import Testing

/// A take never lands in another song's project, whatever the order in
/// which songs and projects come: a song's takes go to folders named from
/// its file's name (`projects/STEM.acaproj`, and `projects/STEM (NAME).acaproj`
/// for the projects named beside it), so a song called "amazing-grace
/// (Yak)" has its first project where Amazing Grace's project 'Yak' is.
/// Every project is marked with the song it was made from and checked at
/// open; songs arriving where the box names them get a name of their own;
/// those it cannot rename (a sync, a copy) are refused a place, said.
@Suite(.serialized) struct SongIdentityTests {
    static let songsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Songs")

    /// Amazing Grace and Row in a folder of their own (the box's library).
    func library() throws -> [String] {
        let folder = NSTemporaryDirectory() + "identity-songs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return try ["amazing-grace", "row-row-row-your-boat"].map { name in
            let path = folder + "/\(name).acasong"
            try FileManager.default.copyItem(atPath: Self.songsDirectory.appendingPathComponent("\(name).acasong").path, toPath: path)
            return path
        }
    }

    /// A song's text with another title: Row's music called `title`.
    static func rowCalled(_ title: String) throws -> String {
        let text = try String(contentsOf: songsDirectory.appendingPathComponent("row-row-row-your-boat.acasong"), encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("title:") ? "title: \(title)" : String($0) }.joined(separator: "\n")
    }

    /// Takes kept in the project at `path` (0 when it is not there).
    static func takes(_ path: String) -> Int {
        guard FileManager.default.fileExists(atPath: path), let opened = try? Project.open(path, for: .read) else { return 0 }
        defer { opened.project.close() }
        return opened.project.manifest.takes.filter { $0.state != .discarded }.count
    }

    /// Records one take in the box's open project and keeps it.
    static func sing(_ box: EmbeddedBox) throws {
        let before = takes(box.project?.path ?? "")
        box.press("r")
        #expect(try box.run { $0.session?.review != nil }, "\(box.lines.suffix(3))")
        box.press("k")
        #expect(try box.run { $0.project.map { Self.takes($0.path) } == before + 1 }, "\(box.lines.suffix(3))")
    }

    /// Amazing Grace's project 'Yak' first; then a song whose first project
    /// would be that folder arrives as a sync or a copy would bring it: it
    /// is not offered (said once), choosing past the library is refused,
    /// and a box given it anyway refuses it at open, back to the last
    /// song — Yak keeps its one take, and nothing else is made.
    @Test func aSongArrivingWhereAnotherSongsProjectIsIsRefused() throws {
        let songs = try library()
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs)
        #expect(try box.change(.project(.create("Yak"))) == .success("project 'Yak' of Amazing Grace"))
        #expect(try box.run { $0.sessionsOpened == 2 })
        let yak = box.data + "/projects/amazing-grace (Yak).acaproj"
        #expect(box.project?.path == yak && SongProjects.madeFrom(yak) == "amazing-grace.acasong")
        try Self.sing(box)
        #expect(try box.change(.project(.select("Main"))) == .success("project 'Main' of Amazing Grace"))
        #expect(try box.run { $0.sessionsOpened == 3 })
        #expect(SongProjects.madeFrom(box.data + "/projects/amazing-grace.acaproj") == "amazing-grace.acasong", "a first project is marked too")

        // Arrives through a sync: the file appears whole in songs/.
        let arriving = SongLibrary.userFolder(box.data) + "/amazing-grace (Yak).acasong"
        try Data(try Self.rowCalled("Yak Song").utf8).write(to: URL(fileURLWithPath: arriving))
        #expect(try box.run { $0.said("amazing-grace (Yak).acasong: its takes would go into projects/amazing-grace (Yak).acaproj") })
        #expect(box.said("which holds the takes of amazing-grace.acasong's project 'Yak'; rename the song's file to keep them apart; not in the library"))
        #expect(box.options.songs == songs && box.web.library().count == 2)
        // The folder changes again (another file): the refusal is not said again.
        try Data(try Self.rowCalled("Other").utf8).write(to: URL(fileURLWithPath: SongLibrary.userFolder(box.data) + "/other.acasong"))
        #expect(try box.run { $0.options.songs.count == 3 })
        #expect(box.lines.filter { $0.contains("its takes would go into") }.count == 1)
        guard case .failure(let past) = try box.change(.choose(song: 3, part: nil)) else {
            Issue.record("a song past the library was chosen")
            return
        }
        #expect(past.status == 404, "\(past)")
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
        #expect(Self.takes(yak) == 1)

        // The box started again reads the library as BoxSetup does: not offered, said.
        var flags = BoxFlags()
        flags.data = box.data
        let setup = try BoxSetup.resolve(flags)
        #expect(!setup.options.songs.contains(arriving) && setup.options.songs.contains(SongLibrary.userFolder(box.data) + "/other.acasong"))
        #expect(setup.notes.contains { $0.contains("amazing-grace (Yak).acasong: its takes would go into") && $0.hasSuffix("not in the library") }, "\(setup.notes)")

        // A box given it anyway (a library read before Yak was made): refused at open.
        let again = try EmbeddedBox(songs: songs + [arriving], data: box.data)
        #expect(try again.change(.choose(song: 2, part: 0)) == .success("switching to Yak Song"))
        #expect(try again.run { $0.said("it leaves the library, back to the last song") }, "\(again.lines.suffix(3))")
        #expect(try again.run { $0.sessionsOpened == 2 })
        #expect(again.options.songs == songs && again.session?.context.songIndex == 0)
        #expect(again.project?.path == again.data + "/projects/amazing-grace.acaproj")
        try Self.sing(again)
        again.press("q")
        #expect(try again.run { $0.ended == .quit })
        #expect(Self.takes(yak) == 1, "Yak's take is Yak's alone")
        #expect(Self.takes(again.data + "/projects/amazing-grace.acaproj") == 1)
        let folders = try FileManager.default.contentsOfDirectory(atPath: again.data + "/projects").filter { $0.hasSuffix(".acaproj") }.sorted()
        #expect(folders == ["amazing-grace (Yak).acaproj", "amazing-grace.acaproj"], "\(folders)")
    }

    /// The other order: the song called "amazing-grace (Yak)" first, its
    /// take in its own project; renamed (its title: the file keeps its
    /// name, and so its takes); then Amazing Grace's project 'Yak' is
    /// refused while the song is there and once it is in the trash (its
    /// takes are still in that folder).
    @Test func aProjectNamedWhereAnotherSongsTakesAreIsRefused() throws {
        let songs = try library()
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs)
        let arriving = SongLibrary.userFolder(box.data) + "/amazing-grace (Yak).acasong"
        try Data(try Self.rowCalled("Yak Song").utf8).write(to: URL(fileURLWithPath: arriving))
        #expect(try box.run { $0.options.songs.count == 3 })
        #expect(try box.change(.choose(song: 2, part: 0)) == .success("switching to Yak Song"))
        #expect(try box.run { $0.sessionsOpened == 2 })
        let yak = box.data + "/projects/amazing-grace (Yak).acaproj"
        #expect(box.project?.path == yak && SongProjects.madeFrom(yak) == "amazing-grace (Yak).acasong")
        try Self.sing(box)
        #expect(try box.change(.describeSong(2, title: "Yak Song, again", tags: nil)) == .success("'Yak Song' is now called 'Yak Song, again'"))
        #expect(try box.change(.choose(song: 0, part: 0)) == .success("switching to Amazing Grace"))
        #expect(try box.run { $0.sessionsOpened == 3 })
        guard case .failure(let beside) = try box.change(.project(.create("Yak"))) else {
            Issue.record("Amazing Grace's Yak was made where Yak Song's takes are")
            return
        }
        #expect(beside.status == 409 && beside.description.contains("would be the project of the song amazing-grace (Yak).acaproj"), "\(beside)")
        #expect(try box.change(.removeSong(2)).map { $0.contains("moved to the trash") } == .success(true))
        guard case .failure(let trashed) = try box.change(.project(.create("Yak"))) else {
            Issue.record("Amazing Grace's Yak was made where a removed song's takes are")
            return
        }
        #expect(trashed.status == 409 && trashed.description.contains("which another song's takes are in (the takes of amazing-grace (Yak).acasong)"), "\(trashed)")
        #expect(box.web.takes().projects.map(\.name) == ["Main"])
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
        #expect(Self.takes(yak) == 1 && SongProjects.madeFrom(yak) == "amazing-grace (Yak).acasong")
    }

    /// Songs sent from the page are stored under names of the box's
    /// making: never a song's already in the library (a shipped one of
    /// that title), never where another song's takes are; the same music
    /// sent again after a removal finds its takes again.
    @Test func anUploadNeverTakesAnotherSongsProjects() throws {
        let songs = try library()
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs)
        let library = SongLibrary.uploadFolder(box.data)
        // Row's music called "Amazing Grace": not amazing-grace.acasong, which is the library's Amazing Grace.
        guard case .success(let same) = box.web.upload(fileName: "x.acasong", bytes: Array(try Self.rowCalled("Amazing Grace").utf8)) else {
            Issue.record("the upload was refused")
            return
        }
        #expect(try box.run { $0.options.songs.count == 3 })
        #expect(box.options.songs[same.index] == library + "/amazing-grace-2.acasong")
        // Sung, removed, and sent again: the same music finds its project; other music of that title does not.
        guard case .success(let yak) = box.web.upload(fileName: "y.acasong", bytes: Array(try Self.rowCalled("Yak").utf8)) else {
            Issue.record("the upload was refused")
            return
        }
        #expect(try box.run { $0.options.songs.count == 4 })
        #expect(box.options.songs[yak.index] == library + "/yak.acasong")
        #expect(try box.change(.choose(song: yak.index, part: 0)) == .success("switching to Yak"))
        #expect(try box.run { $0.sessionsOpened == 2 })
        try Self.sing(box)
        #expect(try box.change(.choose(song: 0, part: 0)) == .success("switching to Amazing Grace"))
        #expect(try box.run { $0.sessionsOpened == 3 })
        #expect(try box.change(.removeSong(yak.index)).map { $0.contains("moved to the trash") } == .success(true))
        let rowScore = try Acasong.parse(try Self.rowCalled("Yak"))
        #expect(SongProjects.isFreeName("yak.acasong", for: rowScore, library: box.options.songs, dataDirectory: box.data), "the same music back")
        let otherMusic = try Acasong.parse(try String(contentsOf: Self.songsDirectory.appendingPathComponent("simple-harmony.acasong"), encoding: .utf8))
        #expect(!SongProjects.isFreeName("yak.acasong", for: otherMusic, library: box.options.songs, dataDirectory: box.data), "other music of that name")
        guard case .success(let back) = box.web.upload(fileName: "y.acasong", bytes: Array(try Self.rowCalled("Yak").utf8)) else {
            Issue.record("the upload was refused")
            return
        }
        #expect(try box.run { $0.options.songs.count == 4 })
        #expect(box.options.songs[back.index] == library + "/yak.acasong")
        #expect(try box.change(.choose(song: back.index, part: 0)) == .success("switching to Yak"))
        #expect(try box.run { $0.sessionsOpened == 4 })
        #expect(box.web.takes().projects == [WebProject(name: "Main", current: true, takes: 1)], "its take again")
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
    }
}

extension SongIdentityTests {
    /// A song of a 200-byte file name: a project of 29 letters beside it is
    /// made, opened, left and moved to the trash (its folder's name is as
    /// long as a project's may be; the trash's stamp used to make it too
    /// long to move: 500); one of 30 letters is refused at once, saying how
    /// long its name may be there.
    @Test func aProjectOfALongSongsNameIsMadeAndRemoved() throws {
        let songs = try library()
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs)
        let long = SongLibrary.userFolder(box.data) + "/" + String(repeating: "h", count: 200) + ".acasong"
        try Data(try Self.rowCalled("Long").utf8).write(to: URL(fileURLWithPath: long))
        #expect(try box.run { $0.options.songs.count == 3 })
        #expect(try box.change(.choose(song: 2, part: 0)) == .success("switching to Long"))
        #expect(try box.run { $0.sessionsOpened == 2 })
        let name = String(repeating: "a", count: 29)
        #expect(try box.change(.project(.create(name))) == .success("project '\(name)' of Long"))
        #expect(try box.run { $0.sessionsOpened == 3 })
        #expect(try box.change(.project(.select("Main"))) == .success("project 'Main' of Long"))
        #expect(try box.run { $0.sessionsOpened == 4 })
        #expect(try box.change(.project(.remove(name))) == .success("project '\(name)' moved to the trash with its 0 takes, kept 30 days"))
        guard case .failure(let tooLong) = try box.change(.project(.create(name + "a"))) else {
            Issue.record("a project whose folder's name would be too long was made")
            return
        }
        #expect(tooLong.status == 422 && tooLong.description.contains("its projects' names are 29 letters at most"), "\(tooLong)")
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
    }
}

/// The rules of a song's projects, without a box.
@Suite struct SongProjectRulesTests {
    func folder() throws -> String {
        let data = NSTemporaryDirectory() + "song-rules-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: data + "/projects", withIntermediateDirectories: true)
        return data
    }

    func project(_ data: String, _ name: String, markedFor song: String?) throws -> String {
        let path = data + "/projects/" + name
        let made = try Project.create(at: path, songText: "acasong 1\ntitle: T\npart A [treble]\nC4 1 |\n")
        made.close()
        if let song { try SongProjects.mark(path, song: song) }
        return path
    }

    @Test func aSongWhoseFirstProjectIsAnotherSongsIsNotAdmitted() throws {
        let data = try folder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let hymn = "/lib/hymn.acasong", yakSong = data + "/songs/hymn (Yak).acasong", choir = data + "/songs/hymn (Choir).acasong"
        _ = try project(data, "hymn (Yak).acaproj", markedFor: "hymn.acasong")
        _ = try project(data, "hymn (Choir).acaproj", markedFor: nil)  // a first project from before the marks: its song's
        #expect(SongProjects.belongsElsewhere(data + "/projects/hymn (Yak).acaproj", song: yakSong)?.contains("the takes of hymn.acasong's project 'Yak'") == true)
        #expect(SongProjects.belongsElsewhere(data + "/projects/hymn (Yak).acaproj", song: hymn) == nil)
        #expect(SongProjects.belongsElsewhere(data + "/projects/hymn (Choir).acaproj", song: choir) == nil)
        let admitted = SongProjects.admissible([yakSong, choir, data + "/library/hymn.acasong", data + "/songs/hymn.acasong"], after: [hymn], dataDirectory: data)
        #expect(admitted.songs == [choir])
        #expect(admitted.refused.count == 3)
        #expect(admitted.refused[0].hasPrefix("hymn (Yak).acasong: its takes would go into projects/hymn (Yak).acaproj"), "\(admitted.refused)")
        for (refusal, song) in zip(admitted.refused.dropFirst(), ["library", "songs"]) {
            #expect(refusal == "\(data)/\(song)/hymn.acasong: a song of this name is already in the library (/lib/hymn.acasong), and the two would share their takes; rename one of them")
        }
        // A name is free when no song has it and no other song's takes are where it would put its own.
        let score = try Acasong.parse("acasong 1\ntitle: Other\npart A [treble]\nD4 1 |\n")
        #expect(!SongProjects.isFreeName("hymn.acasong", for: score, library: [hymn], dataDirectory: data))
        #expect(!SongProjects.isFreeName("hymn (Yak).acasong", for: score, library: [hymn], dataDirectory: data))
        #expect(!SongProjects.isFreeName("hymn (Choir).acasong", for: score, library: [], dataDirectory: data), "other music where a removed song's takes are")
        #expect(SongProjects.isFreeName("hymn (Choir).acasong", for: try Acasong.parse("acasong 1\ntitle: New title\npart A [treble]\nC4 1 |\n"), library: [], dataDirectory: data),
                "the same music back")
        #expect(SongProjects.freeName(stem: "hymn (Yak)", ext: "acasong", in: data + "/songs", for: score, library: [hymn], dataDirectory: data) == "hymn (Yak)-2.acasong")
    }

    /// Songs share projects by their stems, not their file names: Hymn.mxl
    /// and Hymn.acasong are one folder's; a song removed and another sent
    /// under its file name (other parts) is refused its takes; one in the
    /// library corrected (its notes, even its parts) keeps them.
    @Test func songsAreToldApartByTheirProjectsFolderAndTheirMusic() throws {
        let data = try folder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        try FileManager.default.createDirectory(atPath: data + "/songs", withIntermediateDirectories: true)
        let song = data + "/songs/hymn.acasong"
        try Data("acasong 1\ntitle: Hymn\npart A [treble]\nC4 1 |\n".utf8).write(to: URL(fileURLWithPath: song))
        #expect(SongProjects.conflict(song: song, earlier: ["/lib/hymn.mxl"], dataDirectory: data)?.contains("a song of this name is already in the library (/lib/hymn.mxl)") == true)
        #expect(SongProjects.conflict(song: song, earlier: ["/lib/Hymn.acasong"], dataDirectory: data) == nil, "Hymn and hymn are two folders")
        // Its first project made from an earlier hymn.acasong with a part A: the same parts, corrected notes, admitted.
        _ = try project(data, "hymn.acaproj", markedFor: "hymn.acasong")
        try Data("acasong 1\ntitle: Hymn corrected\npart A [treble]\nD4 1 |\n".utf8).write(to: URL(fileURLWithPath: song))
        #expect(SongProjects.conflict(song: song, earlier: [], dataDirectory: data) == nil)
        // Its parts edited (Lead and Bass now): still the library's song, its takes kept.
        try Data("acasong 1\ntitle: Another\npart Lead [treble]\nC4 1 |\npart Bass [bass]\nC3 1 |\n".utf8).write(to: URL(fileURLWithPath: song))
        #expect(SongProjects.conflict(song: song, earlier: [], dataDirectory: data) == nil)
        // The same after a song of that file name was removed: another song sent under its name, refused, said with both songs' parts.
        try FileManager.default.createDirectory(atPath: data + "/trash/songs/20261201-120000-hymn", withIntermediateDirectories: true)
        try Data("acasong 1\ntitle: Hymn\npart A [treble]\nC4 1 |\n".utf8).write(to: URL(fileURLWithPath: data + "/trash/songs/20261201-120000-hymn/hymn.acasong"))
        #expect(SongProjects.conflict(song: song, earlier: [], dataDirectory: data)
                == "hymn.acasong: its takes would go into projects/hymn.acaproj, which holds the takes of another song (its parts: A; this song's: Lead, Bass); rename the song's file to keep them apart")
        // A mark the box cannot read as a plain file: said as such.
        try FileManager.default.removeItem(atPath: data + "/projects/hymn.acaproj/song.txt")
        try FileManager.default.createDirectory(atPath: data + "/projects/hymn.acaproj/song.txt", withIntermediateDirectories: true)
        #expect(SongProjects.conflict(song: song, earlier: [], dataDirectory: data)?.contains("whose mark (song.txt) cannot be read as a plain file") == true)
    }

    /// Marks read as written (a file name may begin with a space), an empty
    /// one as none, a FIFO never waited on; a bundle carries its project's
    /// mark to the box it is imported on.
    @Test func marksAreReadExactlyAndTravelInBundles() throws {
        let data = try folder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let marked = try project(data, "x.acaproj", markedFor: " hymn.acasong")
        #expect(SongProjects.madeFrom(marked) == " hymn.acasong")
        try Data().write(to: URL(fileURLWithPath: marked + "/song.txt"))
        #expect(SongProjects.madeFrom(marked) == nil)
        try FileManager.default.removeItem(atPath: marked + "/song.txt")
        #expect(mkfifo(marked + "/song.txt", 0o644) == 0)
        #expect(SongProjects.madeFrom(marked) == SongProjects.unreadableMark)
        #expect(SongProjects.belongsElsewhere(marked, song: "/lib/x.acasong")?.contains("cannot be read as a plain file") == true)
        try FileManager.default.removeItem(atPath: marked + "/song.txt")

        let yak = try project(data, "hymn (Yak).acaproj", markedFor: "hymn.acasong")
        let opened = try Project.open(yak, for: .read).project
        try ProjectBundle.write(opened, to: data + "/yak.acaproj.zip")
        opened.close()
        try FileManager.default.createDirectory(atPath: data + "/other", withIntermediateDirectories: true)
        let imported = try ProjectBundle.unpack(data + "/yak.acaproj.zip", into: data + "/other").path
        #expect(SongProjects.madeFrom(imported) == "hymn.acasong")
        #expect(SongProjects.belongsElsewhere(imported, song: "/lib/hymn (Yak).acasong")?.contains("which holds the takes of hymn.acasong") == true)
    }

    /// Names as people write them: Hindi's conjuncts and vowel signs,
    /// Persian's non-joiner, Vietnamese's stacked accents, a keycap and a
    /// subdivision flag are names; a letter under 39 accents, a joiner at
    /// either end, a byte-order mark are not; a name with a joiner reads
    /// like the one without. A project of a name older rules allowed is found.
    @Test func namesAsPeopleWriteThem() throws {
        for name in ["स्त्री", "ज़िंदगी", "می\u{200C}خواهم", "Vie\u{323}\u{302}t", "1\u{FE0F}\u{20E3}", "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", "Chœur d'Anna"] {
            #expect(SafeText.nameProblem(name, most: 40) == nil, "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        #expect(SafeText.nameProblem("A" + String(repeating: "\u{301}", count: 39), most: 40) == "puts more than 8 marks on one letter")
        #expect(SafeText.nameProblem("\u{200C}Yak", most: 40) == "holds a character that does not show (U+200C)")
        #expect(SafeText.nameProblem("Yak\u{200D}", most: 40) == "holds a character that does not show (U+200D)")
        #expect(SafeText.nameProblem("\u{FEFF}", most: 40) == "holds a character that does not show (U+FEFF)")
        #expect(SafeText.nameProblem("An\u{200C}n", most: 40) == "holds a character that does not show (U+200C)", "never hidden in a Latin name")
        #expect(SafeText.nameProblem("A\u{FE0F}", most: 40) == "holds a character that does not show (U+FE0F)")
        #expect(SafeText.nameProblem("\u{1F3F4}" + String(repeating: "\u{E0067}", count: 1_000), most: 40) == "joins more than 16 characters into one")
        #expect(SongProjects.nameProblem("می\u{200C}خواهم", taken: []) == nil)
        #expect(SongProjects.nameProblem("می\u{200C}خواهم", taken: ["میخواهم"]) == "this song already has a project called 'میخواهم'", "with and without its joiner, alike")

        let data = try folder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        _ = try project(data, "hymn (Choir: Alto).acaproj", markedFor: "hymn.acasong")
        #expect(SongProjects.nameProblem("Choir: Alto", taken: []) != nil)
        #expect(SongProjects.names(song: "/lib/hymn.acasong", dataDirectory: data, library: ["/lib/hymn.acasong"]) == ["Main", "Choir: Alto"])
    }

    /// A USB stick's song whose name would put its takes in another song's
    /// project comes in under a name of its own.
    @Test func aSticksSongComesInUnderANameOfItsOwn() throws {
        let data = try folder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        _ = try project(data, "amazing-grace (Yak).acaproj", markedFor: "amazing-grace.acasong")
        let stick = data + "/stick"
        try FileManager.default.createDirectory(atPath: stick + "/acapella/songs", withIntermediateDirectories: true)
        try Data(try SongIdentityTests.rowCalled("Yak Song").utf8).write(to: URL(fileURLWithPath: stick + "/acapella/songs/amazing-grace (Yak).acasong"))
        let outcome = try StickJob.run(stick: stick, dataDirectory: data, stillThere: { true }, progress: { _ in })
        #expect(outcome.imported == ["amazing-grace (Yak)-2.acasong"], "\(outcome.imported)")
        let again = try StickJob.run(stick: stick, dataDirectory: data, stillThere: { true }, progress: { _ in })
        #expect(again.imported.isEmpty && again.alreadyThere == 1, "the same song again is already there: \(again.imported)")
    }
}
