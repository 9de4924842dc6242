@testable import AcapellaTrials
@testable import AcapellaBox
@testable import AcapellaProject
import AcapellaEngine
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Many singers, one project: takes named apart by box, merged from
/// bundles without a take lost or changed, songs that differ refused, and
/// two boxes sharing a synchronised project converging without losing a take.
@Suite struct ChoirTests {
    /// A short four-part song (8 s at 120 BPM) keeps the files small.
    static let song = """
        acasong 1
        title: Merge Round
        time: 4/4
        key: C major
        tempo: 120

        part Soprano [treble]
        C5 1 | D5 1 | E5 1 | C5 1 |
        part Alto [treble]
        E4 1 | F4 1 | G4 1 | E4 1 |
        part Tenor [treble8vb]
        G3 1 | A3 1 | C4 1 | G3 1 |
        part Bass [bass]
        C3 1 | D3 1 | C3 1 | C3 1 |

        """

    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-choir-\(UUID().uuidString)").path
        try Folders.make(path)
        return path
    }

    @Test func fiveSingersFourPartsThreeTakesMergeWhole() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let outcome = try ChoirMerge.run(in: folder, songText: Self.song, sampleRate: 8_000)
        #expect(outcome.recorded == 60)
        #expect(outcome.present == 60 && outcome.identical == 60 && outcome.lost == 0)
        #expect(outcome.alreadyHereOnRepeat == 60, "merging the same bundles again copies nothing")
        #expect(outcome.mixFrames > 8 * 8_000)
        #expect(outcome.mixDifference == 0, "the merged choir's mix differs from the single project's by \(outcome.mixDifference)")
        // Each part lists five singers' takes; one plays.
        let (choir, _) = try Project.open(folder + "/choir.acaproj", for: .read)
        defer { choir.close() }
        for part in choir.score.parts.map(\.name) {
            let takes = choir.manifest.takes.filter { $0.part == part }
            #expect(Set(takes.compactMap(\.singer)).count == 5 && Set(takes.compactMap(\.box)).count == 5 && takes.count == 15)
            #expect(takes.filter(\.active).count == 1)
        }
        #expect(choir.conditions.isEmpty)
    }

    @Test func songsThatDifferAreRefusedWithTheReason() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let into = try Project.create(at: folder + "/into.acaproj", songText: Self.song, sampleRate: 8_000)
        defer { into.close() }
        let cases = [
            ("arrangement", Self.song.replacingOccurrences(of: "part Tenor", with: "part Baritone"), "another arrangement: its parts are Soprano, Alto, Baritone, Bass"),
            ("edit", Self.song.replacingOccurrences(of: "E4 1 | F4 1 | G4 1", with: "E4 1 | F4 1 | A4 1"), "another edit of the song: Alto's notes differ from measure 3"),
            ("tempo", Self.song.replacingOccurrences(of: "tempo: 120", with: "tempo: 100"), "another edit of the song: its tempo marks differ"),
            ("song", Self.song.replacingOccurrences(of: "title: Merge Round", with: "title: Other").replacingOccurrences(of: "time: 4/4", with: "time: 2/2"), "another song: 'Other'"),
        ]
        for (name, text, reason) in cases {
            let other = try Project.create(at: folder + "/\(name).acaproj", songText: text, sampleRate: 8_000)
            other.origin = TakeOrigin(box: "far")
            _ = try ChoirMerge.record([Float](repeating: 0.1, count: 8_000), part: other.score.parts[1].name, into: other, options: ScheduleOptions(sampleRate: 8_000), offset: 0)
            #expect(throws: ProjectError.self) { try into.merge(other) }
            do { _ = try into.merge(other) } catch { #expect(error.description.contains(reason), "\(name): \(error.description)") }
            other.close()
        }
        #expect(into.manifest.takes.isEmpty)
        let rate = try Project.create(at: folder + "/rate.acaproj", songText: Self.song, sampleRate: 16_000)
        #expect(into.mergeRefusal(rate) == "its takes are at 16000 Hz, this project's at 8000 Hz")
        rate.close()
    }

    @Test func aClashOfNamesNeverOverwrites() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let options = ScheduleOptions(sampleRate: 8_000)
        // Two boxes with one id (a copied SD card): the same file name, other audio.
        var projects: [Project] = []
        for (index, level) in [Float(0.1), 0.3].enumerated() {
            let project = try Project.create(at: folder + "/p\(index).acaproj", songText: Self.song, sampleRate: 8_000)
            project.origin = TakeOrigin(box: "same", singer: "S\(index)")
            _ = try ChoirMerge.record([Float](repeating: level, count: 9_000), part: "Alto", into: project, options: options, offset: 0)
            projects.append(project)
        }
        projects[1].close()
        let (other, _) = try Project.open(projects[1].path, for: .read)
        let before = try Data(contentsOf: URL(fileURLWithPath: projects[0].path + "/takes/alto-same-1.wav"))
        let outcome = try projects[0].merge(other)
        #expect(outcome.added.map(\.file) == ["takes/alto-same-1-copy1.wav"] && outcome.added.first?.singer == "S1")
        #expect(try Data(contentsOf: URL(fileURLWithPath: projects[0].path + "/takes/alto-same-1.wav")) == before)
        #expect(FileCopy.sameContents(other.path + "/takes/alto-same-1.wav", projects[0].path + "/takes/alto-same-1-copy1.wav"))
        // The part already had a take playing: it keeps it.
        #expect(projects[0].manifest.takes.filter(\.active).map(\.file) == ["takes/alto-same-1.wav"])
        other.close()
        projects[0].close()
        // A sidecar lost after the merge: the file name still says part and box.
        try FileManager.default.removeItem(atPath: projects[0].path + "/takes/alto-same-1-copy1.json")
        try editManifest(projects[0].path) { $0["takes"] = [Any]() }
        let (reopened, _) = try Project.open(projects[0].path, for: .write(owner: "test"))
        let found = reopened.manifest.takes.first { $0.file == "takes/alto-same-1.wav" }
        #expect(found?.part == "Alto" && found?.singer == "S0" && found?.box == "same")
        reopened.close()
    }

    @Test func aTakesGainPlaysAndMixes() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let project = try Project.create(at: folder + "/g.acaproj", songText: Self.song, sampleRate: 8_000)
        defer { project.close() }
        let options = ScheduleOptions(sampleRate: 8_000)
        _ = try ChoirMerge.record([Float](repeating: 0.4, count: 9_000), part: "Bass", into: project, options: options, offset: 0)
        try project.setGain(1, decibels: -6.0206)
        #expect(throws: ProjectError.self) { try project.setGain(1, decibels: 20) }
        let layer = try #require(project.activeTakes(for: options).takes[3].layers.first)
        #expect(abs(layer.samples[100] - 0.2) < 1e-4)
        let sidecar = try JSONDecoder().decode(TakeRecord.self, from: Data(contentsOf: URL(fileURLWithPath: project.path + "/takes/bass-1.json")))
        #expect(sidecar.gainDB == -6.0206 && sidecar.recorded != nil && sidecar.changed != nil)
    }

    /// A take named as the singer knows it: in the manifest and its
    /// sidecar (so it travels with a merge), taken away again; a name that
    /// is not one line refused, and a manifest carrying one refused as damaged.
    @Test func aTakeIsNamed() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let project = try Project.create(at: folder + "/n.acaproj", songText: Self.song, sampleRate: 8_000)
        let options = ScheduleOptions(sampleRate: 8_000)
        _ = try ChoirMerge.record([Float](repeating: 0.4, count: 9_000), part: "Bass", into: project, options: options, offset: 0)
        try project.name(1, "the good one")
        #expect(throws: ProjectError.self) { try project.name(1, "two\nlines") }
        #expect(throws: ProjectError.self) { try project.name(1, String(repeating: "x", count: 61)) }
        #expect(throws: ProjectError.self) { try project.name(7, "no such take") }
        let sidecar = try JSONDecoder().decode(TakeRecord.self, from: Data(contentsOf: URL(fileURLWithPath: project.path + "/takes/bass-1.json")))
        #expect(sidecar.name == "the good one" && sidecar.changed != nil)
        project.close()
        let (reopened, _) = try Project.open(folder + "/n.acaproj", for: .write(owner: "test"))
        #expect(reopened.manifest.takes.first?.name == "the good one")
        try reopened.name(1, nil)
        #expect(reopened.manifest.takes.first?.name == nil)
        var bad = reopened.manifest.takes[0]
        bad.name = "a\u{7}b"
        #expect(bad.problem(rate: 8_000, parts: ["Soprano", "Alto", "Tenor", "Bass"])?.hasPrefix("name: ") == true)
        reopened.close()
    }

    @Test func aBoxIDIsMadeOnceAndKept() throws {
        guard ProcessInfo.processInfo.environment["ACAPELLA_BOX_ID"] == nil else { return }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try BoxIdentity.current(dataDirectory: folder)
        #expect(BoxIdentity.isValid(first) && first.count == 6)
        #expect(try BoxIdentity.current(dataDirectory: folder) == first)
        try Data("Not An Id\n".utf8).write(to: URL(fileURLWithPath: folder + "/box-id"))
        #expect(throws: ProjectError.self) { try BoxIdentity.current(dataDirectory: folder) }
    }

    // MARK: Two boxes, one synchronised project

    /// Two boxes each change their copy of one project — new takes, a take
    /// discarded, another chosen to play, the same take's record changed on
    /// both — and the copies are synchronised both ways the way Syncthing
    /// does it (a file changed on one side travels; changed on both, the
    /// newer wins and the other is kept as a `.sync-conflict-` copy). After
    /// each box opens its copy again and one more round, the two copies are
    /// the same, file for file, and hold every take either box recorded.
    @Test func twoBoxesShareASynchronisedProject() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let options = ScheduleOptions(sampleRate: 8_000)
        let a = folder + "/a/round.acaproj", b = folder + "/b/round.acaproj"
        try Folders.make(folder + "/a")
        try Folders.make(folder + "/b")
        let base = try Project.create(at: a, songText: Self.song, sampleRate: 8_000)
        base.origin = TakeOrigin(box: "boxa", singer: "Ann")
        _ = try ChoirMerge.record(ChoirMerge.voice(singer: 1, part: 0, take: 1, frames: 9_000, sampleRate: 8_000), part: "Soprano", into: base, options: options, offset: 0)
        _ = try ChoirMerge.record(ChoirMerge.voice(singer: 1, part: 1, take: 1, frames: 9_000, sampleRate: 8_000), part: "Alto", into: base, options: options, offset: 0)
        base.close()
        // What Syncthing must leave alone is listed in the project: the lock, the reserve, temporary files.
        #expect(try String(contentsOfFile: a + "/.stignore", encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("//") } == [".lock", ".reserve", ".*.tmp", ".unpack-*"])
        var synced = Sync(left: a, right: b)
        try synced.run()

        // Box A: a new alto take (it plays), and a nudge of the soprano take.
        let boxA = try Project.open(a, for: .write(owner: "box a")).project
        boxA.origin = TakeOrigin(box: "boxa", singer: "Ann")
        let altoA = try ChoirMerge.record(ChoirMerge.voice(singer: 1, part: 1, take: 2, frames: 9_000, sampleRate: 8_000), part: "Alto", into: boxA, options: options, offset: 5)
        try boxA.nudge(1, by: 7)
        boxA.close()
        usleep(5_000)
        // Box B, a little later: a tenor take and a new alto take of its own, the first alto take
        // discarded, and the soprano take's gain (the same record A changed).
        let boxB = try Project.open(b, for: .write(owner: "box b")).project
        boxB.origin = TakeOrigin(box: "boxb", singer: "Ben")
        let tenorB = try ChoirMerge.record(ChoirMerge.voice(singer: 2, part: 2, take: 1, frames: 9_000, sampleRate: 8_000), part: "Tenor", into: boxB, options: options, offset: 3)
        let altoB = try ChoirMerge.record(ChoirMerge.voice(singer: 2, part: 1, take: 1, frames: 9_000, sampleRate: 8_000), part: "Alto", into: boxB, options: options, offset: 4)
        try boxB.discard(2)
        try boxB.setGain(1, decibels: -3)
        boxB.close()
        usleep(5_000)
        // Box A, later still: a bass take. Its manifest is now the newest, and wins the sync;
        // B's changes to takes 1 and 2 live on in their sidecars.
        let again = try Project.open(a, for: .write(owner: "box a")).project
        again.origin = TakeOrigin(box: "boxa", singer: "Ann")
        let bassA = try ChoirMerge.record(ChoirMerge.voice(singer: 1, part: 3, take: 1, frames: 9_000, sampleRate: 8_000), part: "Bass", into: again, options: options, offset: 2)
        again.close()
        // A's alto take and B's tenor take are both take 3 on their boxes; their names differ.
        #expect(altoA.hasSuffix("-3.wav") && tenorB.hasSuffix("-3.wav"))
        #expect(altoA != altoB)

        try synced.run()
        #expect(Set(synced.conflicts.map { ($0 as NSString).lastPathComponent.components(separatedBy: ".sync-conflict").first! }) == ["manifest", "soprano-boxa-1", "alto-boxa-2"],
                "both boxes wrote the manifest and the sidecars of takes 1 and 2: \(synced.conflicts)")
        #expect(synced.conflicts.first { $0.hasPrefix("manifest") }?.hasSuffix("-RIGHT.json") == true, "A's manifest, the newer, wins")
        for _ in 0..<2 {
            for side in [a, b] {
                let (project, _) = try Project.open(side, for: .write(owner: "box"))
                project.close()
            }
            try synced.run()
        }
        // Converged: the same files, byte for byte.
        let left = try Sync.files(a), right = try Sync.files(b)
        #expect(left.keys.sorted() == right.keys.sorted())
        #expect(left.keys.filter { left[$0] != right[$0] }.sorted() == [])
        // Every take is there, and both boxes read the same project.
        let (project, report) = try Project.open(a, for: .read)
        defer { project.close() }
        let files = Set(project.manifest.takes.map(\.file))
        #expect(files == ["takes/soprano-boxa-1.wav", "takes/alto-boxa-2.wav", altoA, tenorB, altoB, bassA], "\(report)")
        #expect(project.conditions.isEmpty)
        let records = Dictionary(uniqueKeysWithValues: project.manifest.takes.map { ($0.file, $0) })
        // The later change to a record wins: B's gain on the soprano take (A's nudge was earlier;
        // its record is kept in the conflict copy).
        #expect(records["takes/soprano-boxa-1.wav"]?.gainDB == -3 && records["takes/soprano-boxa-1.wav"]?.nudgeSamples == 0)
        #expect(records["takes/alto-boxa-2.wav"]?.state == .discarded)
        // One alto take plays: B's, chosen last.
        #expect(project.manifest.takes.filter { $0.part == "Alto" && $0.active }.map(\.file) == [altoB])
        #expect(records[tenorB]?.active == true && records[tenorB]?.singer == "Ben")
        #expect(records[bassA]?.active == true)
        #expect(Set(project.manifest.takes.map(\.id)).count == 6)
    }

    /// A new project on box a, synchronised to an empty folder on box b.
    static func twoBoxes() throws -> (folder: String, a: String, b: String, synced: Sync) {
        let folder = try Self.folder()
        let a = folder + "/a/round.acaproj", b = folder + "/b/round.acaproj"
        try Folders.make(folder + "/a")
        try Folders.make(folder + "/b")
        try Project.create(at: a, songText: Self.song, sampleRate: 8_000).close()
        var synced = Sync(left: a, right: b)
        try synced.run()
        return (folder, a, b, synced)
    }

    /// Synchronised, a take's file can arrive before its sidecar: a writer
    /// opening the project then adds it with its alignment unknown, but
    /// makes up no sidecar for it (it would travel back and replace the
    /// real one); when the real one arrives, the take is as recorded.
    @Test func aTakesFileBeforeItsSidecar() throws {
        var (folder, a, b, synced) = try Self.twoBoxes()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let boxA = try Project.open(a, for: .write(owner: "box a")).project
        boxA.origin = TakeOrigin(box: "boxa", singer: "Ann")
        let file = try ChoirMerge.record(ChoirMerge.voice(singer: 1, part: 1, take: 1, frames: 6_000, sampleRate: 8_000), part: "Alto", into: boxA,
                                         options: ScheduleOptions(sampleRate: 8_000), offset: 1_234)
        boxA.close()
        let sidecar = (file as NSString).deletingPathExtension + ".json"
        // Only the audio has arrived on box b.
        try Folders.make(b + "/takes")
        try FileManager.default.copyItem(atPath: a + "/" + file, toPath: b + "/" + file)
        let early = try Project.open(b, for: .write(owner: "box b"))
        #expect(early.project.manifest.takes.map(\.isFoundAlone) == [true], "\(early.report)")
        // Box b's undo is not for another box's take; a change to it stays in the manifest.
        early.project.origin = TakeOrigin(box: "boxb", singer: "Ben")
        #expect(throws: ProjectError.self) { try early.project.undoLastTake() }
        try early.project.discard(early.project.manifest.takes[0].id)
        early.project.close()
        #expect(!FileManager.default.fileExists(atPath: b + "/" + sidecar), "a sidecar was made up for a take whose own was on its way")
        // Now the rest (the sidecar among it) arrives.
        try synced.run()
        #expect(synced.conflicts.filter { $0.hasPrefix("takes/") } == [])
        let (late, report) = try Project.open(b, for: .write(owner: "box b"))
        defer { late.close() }
        let take = try #require(late.manifest.takes.first)
        #expect(late.manifest.takes.count == 1 && !take.isFoundAlone && take.alignmentOffsetSamples == 1_234 && take.state == .kept && take.active, "\(report)")
        #expect(report.contains { $0.contains("its record arrived after its file") }, "\(report)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: b + "/" + sidecar)) == Data(contentsOf: URL(fileURLWithPath: a + "/" + sidecar)))
    }

    /// Synchronised, a take another box is still recording arrives as a
    /// record in `recording` state and part of its file. No other box
    /// repairs it (it would rewrite a copy still arriving, and its record
    /// would travel back): it is listed as being recorded there, and is
    /// the recording box's take as it finished once that arrives.
    @Test func aTakeStillBeingRecordedOnAnotherBox() throws {
        var (folder, a, b, synced) = try Self.twoBoxes()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let boxA = try Project.open(a, for: .write(owner: "box a"), origin: TakeOrigin(box: "boxa", singer: "Ann")).project
        defer { boxA.close() }
        #expect(boxA.origin == TakeOrigin(box: "boxa", singer: "Ann"))
        var (record, writer) = try boxA.beginTake(part: "Alto", options: ScheduleOptions(sampleRate: 8_000), syncFrames: 1_000) { $0.alignmentOffsetSamples = 77 }
        let voice = ChoirMerge.voice(singer: 1, part: 1, take: 1, frames: 6_000, sampleRate: 8_000)
        try voice.withUnsafeBufferPointer { (buffer) throws(FileError) in try writer.write(buffer.baseAddress!, count: 3_000) }
        try synced.run()  // mid-take: the record says recording, the file half there
        let arrived = try Data(contentsOf: URL(fileURLWithPath: b + "/" + record.file))
        for access in [Project.Access.read, .write(owner: "box b")] {
            let (project, report) = try Project.open(b, for: access, origin: TakeOrigin(box: "boxb", singer: "Ben"))
            #expect(project.conditions[record.id] == .elsewhere("boxa"), "\(report)")
            #expect(project.manifest.takes.first?.state == .recording)
            project.close()
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: b + "/" + record.file)) == arrived, "box b changed a take box a is recording")
        // Box a finishes it; it arrives whole.
        try voice.withUnsafeBufferPointer { (buffer) throws(FileError) in try writer.write(buffer.baseAddress! + 3_000, count: 3_000) }
        try writer.finish()
        record.frames = 6_000
        record.state = .kept
        try boxA.store(record)
        // Its record (small) arrives before the rest of its file: it is not played half.
        let sidecar = (record.file as NSString).deletingPathExtension + ".json"
        try Data(contentsOf: URL(fileURLWithPath: a + "/" + sidecar)).write(to: URL(fileURLWithPath: b + "/" + sidecar))
        let (ahead, aheadReport) = try Project.open(b, for: .read, origin: TakeOrigin(box: "boxb", singer: "Ben"))
        guard case .arriving(let how) = ahead.conditions[record.id] else {
            Issue.record("a take half there plays: \(ahead.conditions) \(aheadReport)")
            return
        }
        #expect(how.contains("of the 0.8 s recorded on box boxa"), "\(how)")
        ahead.close()
        try synced.run()
        #expect(synced.conflicts == [], "\(synced.conflicts)")
        let (project, report) = try Project.open(b, for: .write(owner: "box b"), origin: TakeOrigin(box: "boxb", singer: "Ben"))
        defer { project.close() }
        #expect(project.conditions.isEmpty && project.manifest.takes.map(\.state) == [.kept] && project.manifest.takes[0].alignmentOffsetSamples == 77, "\(report)")
        #expect(try AudioFile.readMono(b + "/" + record.file).samples == voice)
    }

    /// Three boxes record at once from the same project, so each gives
    /// numbers 1, 2, 3 to its own takes. Synchronised (any box's manifest
    /// may win), every box numbers the nine takes alike — before any of
    /// them writes, and after: the take recorded first keeps a number, the
    /// others are numbered on past every number a box gave; no sidecar is
    /// rewritten for it (nothing to conflict), and the next take on any box
    /// is numbered above them all.
    @Test func takesOfOneNumberFromThreeBoxesAreNumberedAlikeOnEvery() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let options = ScheduleOptions(sampleRate: 8_000)
        let boxes = ["a", "b", "c"].map { folder + "/\($0)/round.acaproj" }
        for box in boxes { try Folders.make((box as NSString).deletingLastPathComponent) }
        try Project.create(at: boxes[0], songText: Self.song, sampleRate: 8_000).close()
        var pairs = [Sync(left: boxes[0], right: boxes[1]), Sync(left: boxes[1], right: boxes[2]), Sync(left: boxes[0], right: boxes[2])]
        func syncAll() throws {
            for _ in 0..<2 { for index in pairs.indices { try pairs[index].run() } }
        }
        try syncAll()
        // Take k of every box is recorded in turn (a, b, c, a, b, c, …): box a's take 1 is the earliest of the number 1s.
        let parts = ["Soprano", "Alto", "Tenor", "Bass"]
        var files: [[String]] = [[], [], []]
        for take in 1...3 {
            for (index, box) in boxes.enumerated() {
                let project = try Project.open(box, for: .write(owner: "box")).project
                project.origin = TakeOrigin(box: "box" + ["a", "b", "c"][index], singer: "Singer \(index)")
                if take == 1 { #expect(project.manifest.takes.isEmpty) }
                let voice = ChoirMerge.voice(singer: index, part: take, take: take, frames: 4_000, sampleRate: 8_000)
                files[index].append(try ChoirMerge.record(voice, part: parts[(index + take) % 4], into: project, options: options, offset: Int64(index)))
                project.close()
                usleep(2_000)
            }
        }
        #expect(files.map { $0.map { ($0 as NSString).lastPathComponent } } == [
            ["\(parts[1].lowercased())-boxa-1.wav", "\(parts[2].lowercased())-boxa-2.wav", "\(parts[3].lowercased())-boxa-3.wav"],
            ["\(parts[2].lowercased())-boxb-1.wav", "\(parts[3].lowercased())-boxb-2.wav", "\(parts[0].lowercased())-boxb-3.wav"],
            ["\(parts[3].lowercased())-boxc-1.wav", "\(parts[0].lowercased())-boxc-2.wav", "\(parts[1].lowercased())-boxc-3.wav"]])
        try syncAll()
        func numbers(_ box: String, _ access: Project.Access) throws -> [String: Int] {
            let (project, _) = try Project.open(box, for: access)
            defer { project.close() }
            #expect(project.conditions.isEmpty, "\(box): \(project.conditions)")
            return Dictionary(uniqueKeysWithValues: project.manifest.takes.map { ($0.file, $0.id) })
        }
        // The earliest of each number keeps it; the others follow in the order their numbers, then their times, put them.
        let expected = [files[0][0]: 1, files[0][1]: 2, files[0][2]: 3, files[1][0]: 4, files[2][0]: 5, files[1][1]: 6, files[2][1]: 7, files[1][2]: 8, files[2][2]: 9]
        for box in boxes { #expect(try numbers(box, .read) == expected, "\(box), read before any writer") }
        for box in boxes { _ = try numbers(box, .write(owner: "box")) }
        let conflictsBefore = pairs.flatMap(\.conflicts).filter { $0.hasPrefix("takes/") }
        try syncAll()
        for box in boxes { #expect(try numbers(box, .read) == expected, "\(box), after every box wrote") }
        #expect(pairs.flatMap(\.conflicts).filter { $0.hasPrefix("takes/") } == conflictsBefore, "numbering rewrote a take's sidecar")
        // The sidecars keep each box's own number.
        let sidecar = try JSONDecoder().decode(TakeRecord.self, from: Data(contentsOf: URL(fileURLWithPath: boxes[0] + "/" + (files[2][2] as NSString).deletingPathExtension + ".json")))
        #expect(sidecar.id == 3 && sidecar.originalID == nil)
        // The same files everywhere, byte for byte.
        let all = try boxes.map(Sync.files)
        #expect(all[1] == all[0] && all[2] == all[0])
        // The next take, on any box, is numbered above them all, and everywhere alike.
        let project = try Project.open(boxes[1], for: .write(owner: "box")).project
        project.origin = TakeOrigin(box: "boxb", singer: "Singer 1")
        let tenth = try ChoirMerge.record(ChoirMerge.voice(singer: 1, part: 0, take: 4, frames: 4_000, sampleRate: 8_000), part: "Soprano", into: project, options: options, offset: 0)
        project.close()
        #expect(tenth.hasSuffix("-boxb-10.wav"))
        try syncAll()
        for box in boxes { #expect(try numbers(box, .read) == expected.merging([tenth: 10]) { $1 }) }
    }
}

/// Two folders synchronised both ways as Syncthing does it, by file copy:
/// a file changed (or new) on one side since the last round goes to the
/// other; changed on both, the one changed later wins on both sides and
/// the other is kept beside as `NAME.sync-conflict-….EXT`. What the
/// project's `.stignore` lists stays on its side.
struct Sync {
    let left: String
    let right: String
    /// The files as both sides had them after the last round.
    var last: [String: Data] = [:]
    /// The conflict copies made so far.
    var conflicts: [String] = []

    init(left: String, right: String) {
        self.left = left
        self.right = right
    }

    static func ignored(_ name: String) -> Bool {
        let file = (name as NSString).lastPathComponent
        return file == ".lock" || file == ".reserve" || (file.hasPrefix(".") && file.hasSuffix(".tmp"))
    }

    /// Every file under `root` that travels, and its bytes.
    static func files(_ root: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        guard FileManager.default.fileExists(atPath: root) else { return files }
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let name = enumerator?.nextObject() as? String {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isFolder)
            if isFolder.boolValue || ignored(name) { continue }
            files[name] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + name))
        }
        return files
    }

    static func modified(_ path: String) -> Double {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        return Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
    }

    static func put(_ data: Data, _ path: String) throws {
        try Folders.make((path as NSString).deletingLastPathComponent)
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    mutating func run() throws {
        let one = try Self.files(left), two = try Self.files(right)
        for name in Set(one.keys).union(two.keys).sorted() {
            let l = one[name], r = two[name], before = last[name]
            if l == r { continue }
            if r == before, let l {
                try Self.put(l, right + "/" + name)
            } else if l == before, let r {
                try Self.put(r, left + "/" + name)
            } else if let l, let r {
                let leftWins = Self.modified(left + "/" + name) > Self.modified(right + "/" + name)
                let (winner, loser) = leftWins ? (l, r) : (r, l)
                let ext = (name as NSString).pathExtension
                let conflict = (name as NSString).deletingPathExtension + ".sync-conflict-20261201-000000-\(leftWins ? "RIGHT" : "LEFT").\(ext)"
                for side in [left, right] {
                    try Self.put(winner, side + "/" + name)
                    try Self.put(loser, side + "/" + conflict)
                }
                conflicts.append(conflict)
            } else if let l {
                try Self.put(l, right + "/" + name)  // deleted on one side and changed on the other: kept
            } else if let r {
                try Self.put(r, left + "/" + name)
            }
        }
        last = try Self.files(left)
    }
}
