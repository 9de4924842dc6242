@testable import AcapellaBox
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import AcapellaWeb
import Foundation
import Testing

/// The box's control loop as a whole, in-process (`EmbeddedBox`): its
/// sources feed the session, the session's effects reach the rig, the
/// project and the page, and songs follow one another — what only a run
/// of the whole program could show before, in about a second.
@Suite(.serialized) struct SessionLoopTests {
    static let root = getuid() == 0

    /// Copies of shipped songs in a folder of their own (one is removed).
    func library(_ names: [String]) throws -> [String] {
        let folder = NSTemporaryDirectory() + "embedded-songs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return try names.map { name in
            let path = folder + "/\(name).acasong"
            try FileManager.default.copyItem(atPath: songsDirectory.appendingPathComponent("\(name).acasong").path, toPath: path)
            return path
        }
    }

    @Test func aWholeRehearsalRunsThroughTheLoop() throws {
        let songs = try library(["simple-harmony", "row-row-row-your-boat"])
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs, part: 1)
        #expect(box.said("ready: Simple Harmony"), "\(box.lines.suffix(3))")

        // A take: r, the count-in, the song sung through by the room's
        // singer; at the song's end it is put up for review.
        box.press("r")
        #expect(try box.run { $0.snapshot?.state == .recording })
        #expect(try box.run { $0.session?.review != nil })
        let take = try #require(box.session?.review)
        #expect(take.part == "Bass" || take.part == box.project?.score.parts[1].name)
        #expect(take.state == .kept && take.frames > 0)
        let stored = try #require(box.project?.manifest.takes.first { $0.id == take.id })
        #expect(stored.active, "the new take plays")
        // Analysed beside the loop (a child process), published to the page.
        // (A child process in real time: on a loaded machine it takes seconds.)
        #expect(try box.run(turns: 200_000) { $0.web.analysis() != nil }, "\(box.lines.suffix(3))")
        // Its score in the takes list, kept in the data folder's cache.
        #expect(try box.run { $0.web.takes().takes.first { $0.id == take.id }?.score != nil })
        let score = try #require(box.web.takes().takes.first { $0.id == take.id }?.score)
        #expect(TakeScores.load(dataDirectory: box.data).score(of: stored, project: box.project!.path) == score)

        // Review: d discards it; the file stays.
        box.press("d")
        #expect(try box.run { $0.project?.manifest.takes.first { $0.id == take.id }?.state == .discarded })
        #expect(FileManager.default.fileExists(atPath: box.project!.path + "/" + take.file))

        // The page: the take back (an effect's answer), a take that is not there refused.
        #expect(try box.change(.activate(take: take.id)) == .success("take \(take.id) plays"))
        #expect(box.project?.manifest.takes.first { $0.id == take.id }?.active == true)
        guard case .failure(let refused) = try box.change(.nudge(take: 99, milliseconds: 5)) else {
            Issue.record("a nudge of take 99 was carried out")
            return
        }
        #expect(refused.description.contains("no take 99"), "\(refused)")
        // The page's loop reaches the engine.
        guard case .success = try box.change(.loop(2...3)) else {
            Issue.record("the page's loop was refused")
            return
        }
        #expect(try box.run { $0.snapshot?.looping == true })

        // A MusicXML file dropped into the songs folder (copied under a
        // hidden name, then renamed, as a file manager does) is imported
        // once, said, and joins the library.
        let folder = SongLibrary.userFolder(box.data)
        try FileManager.default.copyItem(atPath: WebHubTests.shared + "/bach_bwv26.6.mxl", toPath: folder + "/.copying")
        try FileManager.default.moveItem(atPath: folder + "/.copying", toPath: folder + "/arrived.mxl")
        #expect(try box.run { $0.web.library().count == 3 }, "\(box.lines.suffix(3))")
        #expect(box.lines.filter { $0.contains("arrived.mxl: imported as") }.count == 1, "\(box.lines.suffix(3))")
        let arriving = folder + "/arrived.acasong"
        #expect(box.options.songs.last == arriving)

        // The next song: a session of its own; the first song's take stays on disk.
        box.press("}")
        #expect(try box.run { $0.sessionsOpened == 2 && $0.session?.context.songIndex == 1 })
        #expect(box.said("ready: Row"), "\(box.lines.suffix(3))")

        // A song removed while the box ran, never opened: chosen, it is
        // said and leaves the library, and the box goes back to the song
        // that opened last.
        for name in ["arrived.mxl", "arrived.import.txt", "arrived.acasong"] { try FileManager.default.removeItem(atPath: folder + "/" + name) }
        box.press("}")
        #expect(try box.run { $0.sessionsOpened == 3 })
        #expect(box.said("arrived.acasong: no such file; it leaves the library, back to the last song"), "\(box.lines.suffix(8))")
        #expect(box.options.songs == songs && box.options.songIndex == 1)
        // The next key moves on (past the end: the first song again). With
        // the scores' cache gone (as after a restart on another card), the
        // take is analysed again on first need, quietly: its score back in
        // the list, the page's colours and the readout untouched.
        try FileManager.default.removeItem(atPath: TakeScores.path(dataDirectory: box.data))
        box.press("}")
        #expect(try box.run { $0.sessionsOpened == 4 && $0.session?.context.songIndex == 0 })
        #expect(try box.run(turns: 200_000) { $0.web.takes().takes.first { $0.id == take.id }?.score == score }, "\(box.web.takes().takes)")
        #expect(box.web.analysis() == nil && box.session?.analysis == nil)
        #expect(FileManager.default.fileExists(atPath: TakeScores.path(dataDirectory: box.data)))

        // q: the box stops.
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
        #expect(box.loop == nil)
        let project = try Project.open(box.data + "/projects/simple-harmony.acaproj", for: .read).project
        #expect(project.manifest.takes.map(\.id) == [take.id] && project.manifest.takes[0].active, "the take, kept and playing, on disk")
    }

    /// A recording set (the settings' `together`, `run --parts`): the
    /// room has a microphone a part; r starts every part at once (the foot
    /// switch and the page send the same action) and each becomes its own
    /// take, sung together (one mark), aligned alike; a part the song lacks
    /// is said and left out; u undoes the whole set.
    @Test(.fullSuiteOnly) func aRecordingSetRecordsEveryPartAtOnce() throws {
        let songs = try library(["simple-harmony"])
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let set = [PartOnInput(part: "Soprano", input: 1), PartOnInput(part: "2", input: 2), PartOnInput(part: "Tenor", input: 3)]
        let box = try EmbeddedBox(songs: songs, part: 1, together: set)
        #expect(box.said("ready: Simple Harmony Test, recording together Soprano (input 1), Bass (input 2)"), "\(box.lines.suffix(3))")
        #expect(box.said("together: Tenor is not a part of 'Simple Harmony Test' (its parts: Soprano, Bass); the others are recorded together"), "\(box.lines.suffix(3))")
        // Every part of the set is a singer's own: its guide muted while they sing, on the page's mixer as in the engine.
        #expect(box.session?.mixer.prefix(2).map(\.muted) == [true, true])
        box.press("r")
        #expect(try box.run { $0.snapshot?.state == .recording })
        #expect(try box.run(turns: 200) { ($0.snapshot?.partPeaks.prefix(2).contains { $0 > 0 }) == true } == false, "a set's guide sounded while it sang")
        // The page shows the set: each part with its input.
        #expect(try box.run { $0.web.live().together == ["Soprano 1", "Bass 2"] }, "\(box.web.live().together)")
        // Both takes finished and put up for review (the writers may finish a tick apart, and number the takes in either order).
        #expect(try box.run { $0.session?.review != nil && $0.project?.manifest.takes.allSatisfy { $0.state == .kept } == true })
        let review = try #require(box.session?.review)
        let takes = try #require(box.project?.manifest.takes)
        #expect(takes.map(\.part).sorted() == ["Bass", "Soprano"], "\(takes.map(\.part))")
        #expect(takes.allSatisfy { $0.state == .kept && $0.active && $0.frames > 0 && $0.range == nil })
        #expect(takes[0].ensemble != nil && takes[0].ensemble == takes[1].ensemble, "one mark for takes sung at once")
        #expect(takes[0].alignmentOffsetSamples == takes[1].alignmentOffsetSamples && takes[0].frames == takes[1].frames, "one capture, one clock")
        let audio = try takes.map { try AudioFile.readMono(box.project!.path + "/" + $0.file).samples }
        #expect(audio[0] != audio[1], "each part from its own microphone")
        // One review for the set (said once), and it hears both new takes: each part's in the engine.
        #expect(box.lines.filter { $0.contains(" recorded (") }.count == 1, "\(box.lines.suffix(6))")
        #expect(box.loop?.rig.sentTakes.prefix(2).map(\.layers.count) == [1, 1], "\(box.loop?.rig.sentTakes.map(\.layers.count) ?? [])")
        #expect(review.part == "Bass", "the box's own part's take is put up (the needle's)")
        // Space plays them: both singers' parts sound (their guides were muted while they sang).
        box.press(" ")
        #expect(try box.run { ($0.snapshot?.partPeaks.prefix(2).allSatisfy { $0 > 0 }) == true }, "\(box.snapshot?.partPeaks ?? [])")
        // The page asks how they sang together: worked out beside the loop
        // (a child process), published with each chord's notes by their id
        // on the page's score.
        let versionBefore = box.web.live().blendVersion
        #expect(try box.change(.blend) == .success("listening to how the parts sang together: the score shows it when it is ready"))
        #expect(try box.run(turns: 200_000) { $0.web.blend() != nil }, "\(box.lines.suffix(3))")
        let blend = try #require(try JSONSerialization.jsonObject(with: Data(box.web.blend() ?? [])) as? [String: Any])
        let parts = (blend["parts"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(parts == ["Soprano", "Bass"], "\(blend)")
        let chords = blend["chords"] as? [[String: Any]] ?? []
        #expect(chords.count >= 4, "\(chords.count) chords")
        for chord in chords {
            let notes = chord["notes"] as? [String: String] ?? [:]
            #expect(notes.keys.sorted() == ["Bass", "Soprano"] && notes["Soprano"]?.hasPrefix("n0-") == true && notes["Bass"]?.hasPrefix("n1-") == true, "\(chord)")
        }
        #expect(box.web.live().blendVersion == versionBefore + 1, "the page hears of it once")
        // u: the set is undone together.
        box.press("u")
        #expect(try box.run { $0.project?.manifest.takes.allSatisfy { $0.state == .discarded } == true })
        #expect(box.loop?.rig.sentTakes.prefix(2).map(\.layers.count) == [0, 0], "every part's takes out again")
        #expect(box.said("takes " + takes.map { "\($0.id) (\($0.part))" }.joined(separator: ", ") + ", sung together, discarded; their files stay in the project"),
                "\(box.lines.suffix(3))")
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
    }

    /// The recording set chosen on the page: a box started for one part on
    /// a room not given its microphones is offered up to eight inputs; a
    /// part the song lacks, an input beyond the device's and a change while
    /// a take is being recorded are refused with words and change nothing;
    /// a set taken opens the song again on a device with an input for each
    /// part (as `Box.sessions` does), the next Record makes a take of each
    /// part at once, and "one part at a time" opens it again on one input.
    @Test func aRecordingSetChosenOnThePage() throws {
        let songs = try library(["simple-harmony"])
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs, part: 0)
        #expect(box.inputs == 1 && box.sessionsOpened == 1)
        #expect(try box.run { $0.web.live().mostInputs == 8 }, "the room offers \(box.web.live().mostInputs)")
        #expect(box.web.live().recordingSet == [])
        let pair = [WebPartInput(part: 0, input: 1), WebPartInput(part: 1, input: 2)]
        #expect(try box.change(.together([WebPartInput(part: 0, input: 1), WebPartInput(part: 1, input: 9)]))
                == .failure(WebFailure(422, "Bass on input 9: \(box.loop?.device.name ?? "?") has 8 inputs")))
        #expect(try box.change(.together([WebPartInput(part: 2, input: 1)])) == .failure(WebFailure(404, "no part 3 in Simple Harmony Test: it has 2")))
        #expect(box.sessionsOpened == 1 && box.options.together.isEmpty, "a refusal changes nothing")
        #expect(try box.change(.together(pair))
                == .success("recording together Soprano (input 1), Bass (input 2) from now on: the song opens again with the set"))
        #expect(try box.run { $0.sessionsOpened == 2 && $0.loop != nil })
        #expect(box.inputs == 2 && box.options.together == [PartOnInput(part: "Soprano", input: 1), PartOnInput(part: "Bass", input: 2)])
        #expect(box.said("ready: Simple Harmony Test, recording together Soprano (input 1), Bass (input 2)"), "\(box.lines.suffix(3))")
        #expect(try box.run { $0.web.live().recordingSet == [1, 2] && $0.web.live().together == ["Soprano 1", "Bass 2"] }, "\(box.web.live().recordingSet)")
        box.press("r")
        #expect(try box.run { $0.snapshot?.state == .recording })
        #expect(try box.change(.together([])) == .failure(WebFailure(409, "a take is being recorded: stop first (the song opens again with the set)")))
        #expect(try box.run { $0.session?.review != nil && $0.project?.manifest.takes.count == 2 && $0.project?.manifest.takes.allSatisfy { $0.state == .kept } == true })
        let takes = try #require(box.project?.manifest.takes)
        #expect(takes.map(\.part).sorted() == ["Bass", "Soprano"], "\(takes.map(\.part))")
        #expect(takes[0].ensemble != nil && takes[0].ensemble == takes[1].ensemble && takes[0].frames == takes[1].frames, "one capture, one mark")
        // The same set again: said, and the song is not opened again.
        #expect(try box.change(.together(pair)) == .success("recording together Soprano (input 1), Bass (input 2), as now"))
        #expect(box.sessionsOpened == 2)
        #expect(try box.change(.together([])) == .success("one part at a time (Soprano) from now on: the song opens again with the set"))
        #expect(try box.run { $0.sessionsOpened == 3 && $0.loop != nil })
        #expect(box.inputs == 1 && box.options.together.isEmpty)
        #expect(try box.run { $0.web.live().recordingSet == [] && $0.web.live().together == [] })
        #expect(box.project?.manifest.takes.count == 2, "the takes stay")
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
    }

    /// A set chosen on the page is kept in the form the settings read back
    /// as the same parts: parts named by numbers out of order ("2", "1")
    /// by name, a name two parts share (in other cases) by number.
    @Test func aSetFromThePageNamesTheSamePartsAgain() throws {
        let text = """
            acasong 1
            title: Numbers
            time: 4/4
            key: C major
            tempo: 90

            part 2 [treble]
            C5 1

            part 1 [treble]
            E4 1

            part Voice 3 [bass]
            C3 1

            part voice 3 [bass]
            G2 1
            """
        let score = try Acasong.parse(text)
        let set = [WebPartInput(part: 0, input: 1), WebPartInput(part: 1, input: 2), WebPartInput(part: 2, input: 3), WebPartInput(part: 3, input: 4)]
        let named = SessionLoop.together(set, score: score)
        #expect(named.map(\.part) == ["2", "1", "Voice 3", "4"])
        var options = BoxOptions(songs: [], dataDirectory: "/nonexistent")
        options.together = named
        let back = SessionLoop.together(options, score: score)
        #expect(back.notes.isEmpty && back.set.map(\.partIndex) == [0, 1, 2, 3] && back.set.map(\.input) == [0, 1, 2, 3], "\(back)")
    }

    /// A stick plugged in while the box runs (a tmpfs mounted under the
    /// box's USB folder: root only): the job runs beside the loop, its
    /// steps reach the readout, and the project's mix lands on the stick.
    @Test(.fullSuiteOnly, .enabled(if: SessionLoopTests.root, "mounting a stick needs root")) func aStickPluggedInMidRehearsal() throws {
        let songs = try library(["simple-harmony"])
        let media = NSTemporaryDirectory() + "embedded-media-\(UUID().uuidString)"
        let stick = media + "/stick"
        try FileManager.default.createDirectory(atPath: stick, withIntermediateDirectories: true)
        defer {
            // Detached, not unmounted: the box's last look at the stick can
            // still hold it busy here, and a plain umount then left it
            // mounted (15 on this machine after a day of runs).
            umount2(stick, Int32(MNT_DETACH))
            try? FileManager.default.removeItem(atPath: media)
            try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent)
        }
        let box = try EmbeddedBox(songs: songs, part: 0, usbRoot: media)
        box.press("r")
        #expect(try box.run { $0.session?.review != nil })
        box.press("k")
        #expect(mount("tmpfs", stick, "tmpfs", 0, "size=64m") == 0)
        try FileManager.default.createDirectory(atPath: stick + "/acapella", withIntermediateDirectories: true)
        #expect(try box.run(turns: 20_000) { $0.said("files out — safe to remove") }, "\(box.lines.suffix(3))")
        #expect(box.said("USB stick \(stick): songs in, results out"))
        let exported = (try? FileManager.default.contentsOfDirectory(atPath: stick + "/acapella/export")) ?? []
        let mix = stick + "/acapella/export/\(exported.first ?? "?")/mix.flac"
        #expect(exported.count == 1 && FileManager.default.fileExists(atPath: mix), "\(exported) \(box.lines.suffix(5))")
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
    }

    /// A song the singer added leaves the library for the trash (with the
    /// MusicXML it came from and its report), the songs after it move up;
    /// a shipped song and the song open now stay.
    @Test func aSongOfYoursGoesToTheTrash() throws {
        let songs = try library(["simple-harmony", "row-row-row-your-boat"])
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs)
        let folder = SongLibrary.userFolder(box.data)
        try FileManager.default.copyItem(atPath: WebHubTests.shared + "/bach_bwv26.6.mxl", toPath: folder + "/.copying")
        try FileManager.default.moveItem(atPath: folder + "/.copying", toPath: folder + "/chorale.mxl")
        try FileManager.default.copyItem(atPath: songs[1], toPath: folder + "/row.acasong")
        #expect(try box.run { $0.web.library().count == 4 }, "\(box.lines.suffix(3))")
        let chorale = try #require(box.web.library().firstIndex { $0.title.contains("26") || $0.index == box.options.songs.firstIndex(of: folder + "/chorale.acasong") })
        #expect(box.options.songs[chorale] == folder + "/chorale.acasong")
        // Renamed and tagged first: its file's header, the library's list.
        let imported = box.web.library()[chorale].title
        let renamed = try box.change(.describeSong(chorale, title: "Ach wie flüchtig (ours)", tags: nil))
        #expect(renamed == .success("'\(imported)' is now called 'Ach wie flüchtig (ours)'"), "\(renamed)")
        #expect(box.web.library()[chorale].title == "Ach wie flüchtig (ours)" && box.session?.context.songTitles[chorale] == "Ach wie flüchtig (ours)")
        #expect(try box.change(.describeSong(chorale, title: nil, tags: ["bach", "lent"])) == .success("'Ach wie flüchtig (ours)' tagged bach, lent"))
        #expect(box.web.library()[chorale].tags == ["bach", "lent"] && box.web.library()[chorale].parts.count == 4)
        let header = try String(contentsOfFile: folder + "/chorale.acasong", encoding: .utf8)
        #expect(header.contains("\ntitle: Ach wie flüchtig (ours)\n") && header.contains("\ntags: bach, lent\n"))
        guard case .failure(let shippedName) = try box.change(.describeSong(0, title: "Mine", tags: nil)) else {
            Issue.record("a shipped song was renamed")
            return
        }
        #expect(shippedName.status == 403)
        guard case .success(let said) = try box.change(.removeSong(chorale)) else {
            Issue.record("the chorale was not removed: \(box.lines.suffix(3))")
            return
        }
        #expect(said.hasSuffix("moved to the trash for 30 days; its takes stay"), "\(said)")
        #expect(box.options.songs == songs + [folder + "/row.acasong"] && box.web.library().count == 3)
        #expect(box.session?.context.songCount == 3 && box.session?.context.songIndex == 0)
        let trashed = try FileManager.default.contentsOfDirectory(atPath: Trash.songsFolder(box.data))
        #expect(trashed.count == 1 && trashed[0].hasSuffix("-chorale"))
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: Trash.songsFolder(box.data) + "/" + trashed[0])) == ["chorale.acasong", "chorale.mxl", "chorale.import.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["row.acasong"])
        // Refused: a shipped song, a song not there, the song open now
        // (the library still moves from song to song: back from the first
        // is the last, the user's).
        guard case .failure(let shipped) = try box.change(.removeSong(1)), case .failure(let missing) = try box.change(.removeSong(7)) else {
            Issue.record("a removal that should be refused was done")
            return
        }
        #expect(shipped.status == 403 && shipped.description.contains("came with the box"))
        #expect(missing.status == 404)
        box.press("{")
        #expect(try box.run { $0.sessionsOpened == 2 && $0.session?.context.songIndex == 2 }, "\(box.lines.suffix(3))")
        guard case .failure(let open) = try box.change(.removeSong(2)) else {
            Issue.record("the song open now was removed")
            return
        }
        #expect(open.status == 409 && open.description.contains("is open now"))
        #expect(FileManager.default.fileExists(atPath: folder + "/row.acasong"))
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
    }

    /// A song's projects from the page: a new one named and opened (its
    /// own takes), back to the first, the other to the trash with its
    /// takes; what cannot be done refused with why.
    @Test func aSongKeepsSeveralProjects() throws {
        let songs = try library(["simple-harmony", "row-row-row-your-boat"])
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs, part: 1)
        #expect(try box.run { $0.web.takes().projects == [WebProject(name: "Main", current: true, takes: 0)] }, "\(box.web.takes().projects)")
        let made = try box.change(.project(.create("Choir")))
        #expect(made == .success("project 'Choir' of Simple Harmony Test"), "\(made)")
        #expect(try box.run { $0.sessionsOpened == 2 }, "\(box.lines.suffix(3))")
        let choir = box.data + "/projects/simple-harmony (Choir).acaproj"
        #expect(box.project?.path == choir && box.session?.context.songIndex == 0 && box.session?.context.partIndex == 1)
        // A take sung into it.
        box.press("r")
        #expect(try box.run { $0.session?.review != nil }, "\(box.lines.suffix(3))")
        box.press("k")
        #expect(try box.run { $0.web.takes().projects == [WebProject(name: "Main", current: false, takes: 0), WebProject(name: "Choir", current: true, takes: 1)] },
                "\(box.web.takes().projects)")
        let choirKey = box.web.takes().key
        #expect(choirKey == WebTakes.key(ofProject: choir) && choirKey.count == 16)
        // The take named from the page, listed by it.
        let take = try #require(box.project?.manifest.takes.first?.id)
        #expect(try box.change(.name(take: take, "first try")) == .success("take \(take) named 'first try'"))
        #expect(try box.run { $0.web.takes().takes.first?.name == "first try" })
        guard case .failure(let twoLines) = try box.change(.name(take: take, "a\tb")) else {
            Issue.record("a name of two lines was taken")
            return
        }
        #expect(twoLines.status == 409 && twoLines.description.contains("does not show (U+9)"), "\(twoLines)")
        // Refused: a name taken or not a name, one not there, the open one, while recording.
        guard case .failure(let taken) = try box.change(.project(.create("main"))), case .failure(let slash) = try box.change(.project(.create("a/b"))),
              case .failure(let missing) = try box.change(.project(.select("Tenors"))), case .failure(let open) = try box.change(.project(.remove("Choir"))) else {
            Issue.record("a project change that should be refused was done: \(box.lines.suffix(3))")
            return
        }
        #expect(taken.status == 422 && taken.description.contains("already has a project called 'Main'"))
        #expect(slash.status == 422 && missing.status == 404 && missing.description.contains("it has Main, Choir"))
        #expect(open.status == 409 && open.description.contains("open now"))
        // One that cannot be opened (its song damaged since): said, and this one stays open.
        let broken = box.data + "/projects/simple-harmony (Broken).acaproj"
        try FileManager.default.createDirectory(atPath: broken + "/takes", withIntermediateDirectories: true)
        try Data("acasong 1\ntitle: Simple Harmony Test\npart X [treble]\nH9 4 |\n".utf8).write(to: URL(fileURLWithPath: broken + "/score.acasong"))
        try SongProjects.mark(broken, song: songs[0])
        guard case .failure(let damaged) = try box.change(.project(.select("Broken"))) else {
            Issue.record("a project that cannot be opened was chosen")
            return
        }
        #expect(damaged.status == 409 && damaged.description.contains("'Broken' cannot be opened"), "\(damaged)")
        #expect(box.project?.path == choir && box.sessionsOpened == 2)
        try FileManager.default.removeItem(atPath: broken)
        // Back to Main: its own takes (none), the session carries on in it.
        let opened = try box.change(.project(.select("Main")))
        #expect(opened == .success("project 'Main' of Simple Harmony Test"), "\(opened)")
        #expect(try box.run { $0.sessionsOpened == 3 })
        #expect(box.project?.path == box.data + "/projects/simple-harmony.acaproj" && box.project?.manifest.takes.isEmpty == true)
        #expect(try box.run { $0.web.takes().projects == [WebProject(name: "Main", current: true, takes: 0), WebProject(name: "Choir", current: false, takes: 1)] })
        #expect(box.web.takes().key != choirKey, "a list of Choir's takes is known for another project's")
        box.press("r")
        #expect(try box.run { $0.snapshot?.state == .recording })
        guard case .failure(let recording) = try box.change(.project(.remove("Choir"))) else {
            Issue.record("a project was removed while a take was being recorded")
            return
        }
        #expect(recording.status == 409 && recording.description.contains("stop first"))
        box.press(" ")
        #expect(try box.run { $0.snapshot?.state == .stopped })
        // Choir to the trash, whole: its take with it.
        guard case .success(let said) = try box.change(.project(.remove("Choir"))) else {
            Issue.record("Choir was not moved to the trash: \(box.lines.suffix(3))")
            return
        }
        #expect(said == "project 'Choir' moved to the trash with its 1 take, kept 30 days")
        #expect(!FileManager.default.fileExists(atPath: choir))
        let trashed = try FileManager.default.contentsOfDirectory(atPath: Trash.projectsFolder(box.data))
        #expect(trashed.count == 1 && trashed[0].hasSuffix("-simple-harmony (Choir).acaproj"))
        let takes = try FileManager.default.contentsOfDirectory(atPath: Trash.projectsFolder(box.data) + "/" + trashed[0] + "/takes")
        #expect(takes.filter { $0.hasSuffix(".wav") }.count == 1, "\(takes)")
        #expect(try box.run { $0.web.takes().projects.map(\.name) == ["Main"] })
        // The project chosen last is the one the song opens in after a restart.
        #expect(try box.change(.project(.create("Tenors"))) == .success("project 'Tenors' of Simple Harmony Test"))
        #expect(try box.run { $0.sessionsOpened == 4 })
        let tenors = box.data + "/projects/simple-harmony (Tenors).acaproj"
        #expect(SongProjects.chosen(song: songs[0], dataDirectory: box.data, library: songs) == tenors)
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
        let again = try EmbeddedBox(songs: songs, part: 1, data: box.data)
        #expect(again.project?.path == tenors, "\(String(describing: again.project?.path))")
        #expect(try again.change(.project(.select("main"))) == .success("project 'Main' of Simple Harmony Test"))
        #expect(try again.run { $0.sessionsOpened == 2 })
        #expect(SongProjects.chosen(song: songs[0], dataDirectory: box.data, library: songs) == nil, "Main is the song's own")
        again.press("q")
        #expect(try again.run { $0.ended == .quit })
    }

    /// The rehearsal (tempo, key, count-in, metronome, verse) is one value
    /// handed whole from the settings to the session, from song to song,
    /// and saved with each song's project: a song sung again resumes its own.
    @Test func theRehearsalCarriesFromSongToSongAndEachSongResumesItsOwn() throws {
        let songs = try library(["simple-harmony", "row-row-row-your-boat"])
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs)
        #expect(box.session?.rehearsal == Rehearsal(), "the settings' defaults")
        box.press("-mt")
        #expect(try box.run { $0.session?.rehearsal == Rehearsal(tempoPercent: 95, transpose: -1, metronome: true) },
                "\(String(describing: box.session?.rehearsal))")
        box.press("}")
        #expect(try box.run { $0.sessionsOpened == 2 })
        #expect(box.session?.rehearsal == Rehearsal(tempoPercent: 95, transpose: -1, metronome: true), "carried to the next song")
        box.press("++c")
        #expect(try box.run { $0.session?.rehearsal == Rehearsal(tempoPercent: 105, transpose: -1, countIn: 2, metronome: true) })
        box.press("{")
        #expect(try box.run { $0.sessionsOpened == 3 })
        #expect(box.said("resumed as last left"))
        #expect(box.session?.rehearsal == Rehearsal(tempoPercent: 95, transpose: -1, metronome: true), "the first song as it was left")
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
        #expect(box.options.rehearsal == Rehearsal(tempoPercent: 95, transpose: -1, metronome: true), "what the box hands on")
    }

    /// A part put on its tones from the page, in a whole box: its take is
    /// kept and still active, the engine is sent none for it; the session
    /// file says so, the box started again resumes it, and the mix as last
    /// rehearsed sings that part's tones (a choice: not listed as a take
    /// left out). Takes follow the tempo (issue 36): the take sung at 100 %
    /// is heard stretched at 105 %, and one sung at 105 % is stamped so.
    @Test func aPartOnItsTonesAndTakesThatFollowTheTempo() throws {
        let songs = try library(["simple-harmony"])
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs, part: 1)
        box.press("r")
        #expect(try box.run { $0.session?.review != nil })
        let take = try #require(box.session?.review)
        box.press("k")
        #expect(try box.run { $0.session?.review == nil })
        let part = take.part
        box.press("+")
        #expect(try box.run { $0.session?.rehearsal.tempoPercent == 105 }, "\(box.lines.suffix(3))")
        #expect(try box.run { $0.loop?.rig.heardTakes[1] == ["take \(take.id) (\(part)) at 105 % of the tempo sung"] }, "\(box.loop?.rig.heardTakes ?? [])")
        #expect(try box.change(.mixSwitch(part: 1, .takes, on: false)) == .success("\(part): its tones (its takes kept, left out)"))
        #expect(box.project?.manifest.takes.first { $0.id == take.id }.map { $0.active && $0.state == .kept } == true)
        let project = box.project!.path
        #expect(try box.run { _ in (try? SessionState.read(project: project, parts: ["Soprano", part, "Tenor", "Bass"]).get())??.parts[part]?.takes == false })
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
        // Started again (the first box's folder: it is removed when that box goes, after this one):
        // resumed on its tones, the tempo as left.
        let again = try EmbeddedBox(songs: songs, part: 1, data: box.data)
        #expect(again.session?.context.tones == [1] && again.session?.mixer[1].takes == false && again.session?.rehearsal.tempoPercent == 105)
        // The mix as last rehearsed (read beside the box): every part's tones at 105 %, the take not named as left out.
        do {
            let opened = try Project.open(project, for: .read).project
            defer { opened.close() }
            let result = try ProjectExport.mix(opened, ProjectMixRequest(), to: box.data + "/tones.wav")
            #expect(!result.hadTakes && result.notes.contains { $0.contains("\(part) on its tones (takes left out)") } && !result.notes.contains { $0.contains("not played") },
                    "\(result.notes)")
        }
        // A take sung on the part left on its tones is heard at its review: the part's takes on again.
        again.press("r")
        #expect(try again.run { $0.session?.review != nil })
        #expect(again.session?.context.tones.isEmpty == true && again.said("\(part): its takes again, with the new one"), "\(again.lines.suffix(4))")
        // Sung at 105 %, stamped so; back at 100 % it is stretched, the first one heard as sung.
        let second = try #require(again.session?.review)
        again.press("k-")
        #expect(try again.run { $0.session?.rehearsal.tempoPercent == 100 }, "\(again.lines.suffix(3))")
        #expect(again.project?.manifest.takes.first { $0.id == second.id }?.tempoScale == "21/20")
        #expect(try again.run { $0.loop?.rig.heardTakes[1] == ["take \(second.id) (\(part)) at 95.2 % of the tempo sung"] }, "\(again.loop?.rig.heardTakes ?? [])")
        again.press("t")
        #expect(try again.run { $0.loop?.rig.heardTakes[1] == ["take \(second.id) (\(part)) at 95.2 % of the tempo sung, 1 semitone down"] },
                "\(again.loop?.rig.heardTakes ?? [])")
        again.press("q")
        #expect(try again.run { $0.ended == .quit })
    }

    /// "Put it in tune" from the page (issue 36): a take sung 30 cents flat
    /// in the whole box; the correction runs beside the loop in a process of
    /// its own, the box keeps its audio as a new take, puts it up for review
    /// and analyses it: in tune; the take as sung stays, kept.
    @Test(.fullSuiteOnly) func aTakePutInTuneFromThePage() throws {
        let songs = try library(["simple-harmony"])
        defer { try? FileManager.default.removeItem(atPath: (songs[0] as NSString).deletingLastPathComponent) }
        let box = try EmbeddedBox(songs: songs, part: 1, detune: -30)
        box.press("r")
        // A take is sung to one tempo: no tempo change while it is.
        #expect(try box.run { $0.snapshot.map { $0.state == .countIn || $0.state == .recording } == true })
        box.press("-")
        #expect(try box.run { $0.said("not while recording (or counting in): stop first") }, "\(box.lines.suffix(3))")
        #expect(try box.run { $0.session?.review != nil })
        #expect(box.session?.rehearsal.tempoPercent == 100 && box.session?.review?.tempoScale == "1")
        let take = try #require(box.session?.review)
        box.press("k")
        #expect(try box.run { $0.session?.review == nil })
        #expect(try box.change(.correct(take: 99, measures: nil)).map { $0.contains("in tune") } == .success(true))
        #expect(try box.run { $0.said("no take 99 to put in tune here") })
        let answer = try box.change(.correct(take: take.id, measures: nil))
        #expect(answer == .success("putting take \(take.id)'s the notes 15 cents or more off in tune: the new take comes up for review when it is ready (the take as sung stays)"))
        #expect(try box.run(turns: 200_000) { $0.session?.review.map { $0.id != take.id } == true }, "\(box.lines.suffix(4))")
        let fixed = try #require(box.session?.review)
        #expect(fixed.part == take.part && fixed.note?.contains("take \(take.id) put in tune") == true)
        #expect(box.said("take \(fixed.id): take \(take.id) with"), "\(box.lines.suffix(4))")
        let project = try #require(box.project)
        #expect(project.manifest.takes.first { $0.id == take.id }?.state == .kept)
        let report = try TakeReport.analyze(fixed, in: project).report
        let worst = report.notes.compactMap { $0.analysis.cents.map(abs) }.max() ?? 99
        #expect(worst <= 3, "the new take in tune: \(worst) cents at worst")
        box.press("q")
        #expect(try box.run { $0.ended == .quit })
    }
}
