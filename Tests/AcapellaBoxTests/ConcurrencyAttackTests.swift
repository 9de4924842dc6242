@testable import AcapellaBox
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A running `acapella` command, its output collected as it comes.
final class Spawned: @unchecked Sendable {
    // @unchecked: the buffers are only touched under `lock`.
    let process = Process()
    private let lock = NSLock()
    private var outText = ""
    private var errText = ""
    private let pipes = (out: Pipe(), err: Pipe())

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: try acapellaExecutable())
        process.arguments = arguments
        // A box id of its own: take names are known, and no id file is made in the user's data directory.
        process.environment = ProcessInfo.processInfo.environment.merging(["ACAPELLA_BOX_ID": "spawned"].merging(environment) { _, new in new }) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = pipes.out
        process.standardError = pipes.err
        pipes.out.fileHandleForReading.readabilityHandler = { [weak self] handle in self?.append(handle.availableData, error: false) }
        pipes.err.fileHandleForReading.readabilityHandler = { [weak self] handle in self?.append(handle.availableData, error: true) }
        try process.run()
    }

    private func append(_ data: Data, error: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if error { errText += String(decoding: data, as: UTF8.self) } else { outText += String(decoding: data, as: UTF8.self) }
    }

    var out: String { lock.lock(); defer { lock.unlock() }; return outText }
    var err: String { lock.lock(); defer { lock.unlock() }; return errText }
    var pid: Int32 { process.processIdentifier }

    /// The frames a `record --progress` had received by its last line.
    var captured: Int64 { out.split(separator: "\n").last { $0.hasPrefix("captured ") }.flatMap { Int64($0.dropFirst(9)) } ?? 0 }

    /// Waits for the end (up to 60 s); the exit status, or nil when killed.
    @discardableResult
    func wait() -> Int32? {
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
        // The rest of the output read here to its end (a busy machine handed
        // it to the handlers late, and a fixed sleep lost it).
        for (pipe, error) in [(pipes.out, false), (pipes.err, true)] {
            pipe.fileHandleForReading.readabilityHandler = nil
            append(pipe.fileHandleForReading.readDataToEndOfFile(), error: error)
        }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }

    /// Waits until `condition` holds for the output (up to 30 s).
    func waitFor(_ condition: (Spawned) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if condition(self) { return true }
            if !process.isRunning { return condition(self) }
            usleep(2_000)
        }
        return false
    }
}

/// Many programs on one project at once, as real processes: two
/// recorders started together, readers and writers during a take, and
/// recorders killed at random moments with the next one starting at once.
/// Each scenario runs 20 times and asserts the exact outcome: who got the
/// project, which takes exist afterwards, that each take holds every frame
/// recorded (sample for sample the same as an undisturbed take), and the
/// message each refused program printed. The simulated room is
/// deterministic, so an undisturbed take is the reference.
@Suite(.serialized) struct ConcurrencyAttackTests {
    static let runs = 20
    static let device = "sim:speed=24"

    static func freshProject() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-attack-\(UUID().uuidString).acaproj").path
        try Project.create(at: path, songText: try songText("simple-harmony.acasong")).close()
        return path
    }

    /// An undisturbed take of the Soprano: what every take must equal.
    static let reference: [Float]? = {
        guard let project = try? freshProject() else { return nil }
        defer { try? FileManager.default.removeItem(atPath: project) }
        guard let recorder = try? Spawned(["record", project, "--part", "Soprano", "--device", device]), recorder.wait() == 0,
              let (opened, _) = try? Project.open(project, for: .read), let take = opened.manifest.takes.first else { return nil }
        return try? AudioFile.readMono(project + "/" + take.file).samples
    }()

    /// 1 when `take` is missing or differs from an undisturbed take, else 0.
    static func lost(_ take: TakeRecord?, in project: String, reference: [Float], run: Int, said: String = "") throws -> Int {
        guard let take else {
            Issue.record("run \(run): the take is missing or not kept")
            return 1
        }
        let samples = try AudioFile.readMono(project + "/" + take.file).samples
        let same = samples == reference  // (compared here: a failing #expect would diff every sample)
        #expect(same, "run \(run): the take differs from an undisturbed one (\(samples.count) frames, \(reference.count) expected) \(said)")
        return same ? 0 : 1
    }

    /// Two `record` commands started at the same moment: one records, the
    /// other is refused at once naming it; one take, whole.
    @Test(.fullSuiteOnly) func twoRecordersAtOnce() throws {
        let reference = try #require(Self.reference)
        var lost = 0
        for run in 0..<Self.runs {
            let project = try Self.freshProject()
            defer { try? FileManager.default.removeItem(atPath: project) }
            let first = try Spawned(["record", project, "--part", "Soprano", "--device", Self.device])
            let second = try Spawned(["record", project, "--part", "Soprano", "--device", Self.device])
            let statuses = [first.wait(), second.wait()]
            let (winner, loser) = statuses[0] == 0 ? (first, second) : (second, first)
            #expect(statuses.sorted { ($0 ?? -1) < ($1 ?? -1) } == [0, 1], "run \(run): \(statuses) \(first.err) \(second.err)")
            #expect(loser.err == "acapella record: error: \(project): in use by acapella record, pid \(winner.pid)\n", "run \(run): \(loser.err)")
            #expect(loser.out.isEmpty, "run \(run): the refused recorder printed a take: \(loser.out)")
            #expect(winner.out.hasPrefix("take 1  Soprano  kept, active"), "run \(run): \(winner.out)")
            let (opened, report) = try Project.open(project, for: .read)
            #expect(report.isEmpty && opened.manifest.takes.count == 1, "run \(run): \(report) \(opened.manifest.takes)")
            lost += try Self.lost(opened.manifest.takes.first.flatMap { $0.state == .kept ? $0 : nil }, in: project, reference: reference, run: run)
        }
        print("attack: two recorders at once, \(Self.runs) runs: \(lost) takes lost")
        #expect(lost == 0)
    }

    /// During a take: `takes` lists it as being recorded, `mix` leaves it
    /// out and says why, `takes recover` and a second `record` are refused,
    /// and the box opened on the project plays it without recording. The
    /// take ends whole, and nobody repaired anything.
    @Test(.fullSuiteOnly) func readersAndWritersDuringATake() throws {
        let reference = try #require(Self.reference)
        var lost = 0
        for run in 0..<Self.runs {
            let project = try Self.freshProject()
            let data = project + ".data"
            defer {
                // (With the mix made beside it, and the words `mix` writes beside that.)
                for path in [project, data, project + ".wav", project + ".lrc"] { try? FileManager.default.removeItem(atPath: path) }
            }
            // With the box beside it the take lasts longer (a quarter of the
            // runs): a box starting on a loaded machine (the suite's tests in
            // parallel) took longer than a take at 24 times real time, found
            // the project free and opened it to record, as it should then.
            let boxBeside = run % 4 == 0
            let recorder = try Spawned(["record", project, "--part", "Soprano", "--device", boxBeside ? "sim:speed=4" : Self.device, "--progress"])
            #expect(recorder.waitFor { $0.captured > 0 }, "run \(run): the take never started: \(recorder.err)")
            let holder = "acapella record, pid \(recorder.pid)"
            let list = try Spawned(["takes", project])
            let mix = try Spawned(["mix", project, "-o", project + ".wav"])
            let recover = try Spawned(["takes", project, "recover"])
            let second = try Spawned(["record", project, "--part", "Bass", "--device", Self.device])
            let box = boxBeside ? try Spawned(["run", "--project", project, "--data", data, "--seconds", "0.3", "--device", Self.device]) : nil
            #expect(list.wait() == 0 && list.out.hasPrefix("take 1  Soprano  recording now") && list.out.contains("being recorded now by \(holder)"),
                    "run \(run): \(list.out) \(list.err)")
            #expect(mix.wait() == 0 && mix.err.contains("take 1 (Soprano) left out: being recorded now by \(holder); not played in this mix"),
                    "run \(run): \(mix.err)")
            #expect(recover.wait() == 1 && recover.err == "acapella takes: error: \(project): in use by \(holder)\n", "run \(run): \(recover.err)")
            #expect(second.wait() == 1 && second.err == "acapella record: error: \(project): in use by \(holder)\n", "run \(run): \(second.err)")
            if let box {
                #expect(box.wait() == 0 && box.err.contains("\(project): in use by \(holder): playing only, recording is off"), "run \(run): \(box.err)")
            }
            #expect(recorder.wait() == 0 && recorder.out.contains("take 1  Soprano  kept, active"), "run \(run): \(recorder.err)")
            let (opened, report) = try Project.open(project, for: .read)
            #expect(report.isEmpty && opened.manifest.takes.map(\.id) == [1], "run \(run): \(report)")
            lost += try Self.lost(opened.manifest.takes.first.flatMap { $0.state == .kept && $0.note == nil ? $0 : nil }, in: project, reference: reference, run: run, said: recorder.err)
        }
        print("attack: readers and writers during a take, \(Self.runs) runs: \(lost) takes lost")
        #expect(lost == 0)
    }

    /// A recorder killed (SIGKILL) at a random moment — before its take,
    /// in the count-in, mid-take — and at once another recorder and a
    /// reader: the next writer repairs the killed take in place (at most
    /// 0.25 s lost of what it had said it received — its progress lines lag
    /// a little, so that is a lower bound), records its own whole, and no
    /// take disappears.
    @Test(.fullSuiteOnly) func killedAtRandomMoments() throws {
        let reference = try #require(Self.reference)
        var rng = SplitMix64(seed: 15)
        var lost = 0
        var losses: [Double] = []
        for run in 0..<Self.runs {
            let project = try Self.freshProject()
            defer { try? FileManager.default.removeItem(atPath: project) }
            let victim = try Spawned(["record", project, "--part", "Soprano", "--device", Self.device, "--progress"])
            if run % 5 == 0 {
                usleep(useconds_t(rng.next() % 60_000))  // early: opening, or the count-in
            } else {
                _ = victim.waitFor { $0.captured > 0 }
                usleep(useconds_t(rng.next() % 350_000))
            }
            kill(victim.pid, SIGKILL)
            let killedMidway = victim.wait() == nil
            let received = victim.captured
            let next = try Spawned(["record", project, "--part", "Bass", "--device", Self.device])
            let reader = try Spawned(["takes", project])
            #expect(next.wait() == 0, "run \(run): \(next.err)")
            #expect(reader.wait() == 0, "run \(run): \(reader.err)")
            let (opened, report) = try Project.open(project, for: .read)
            #expect(report.isEmpty, "run \(run): \(report)")
            let takes = opened.manifest.takes
            let bass = takes.filter { $0.part == "Bass" }
            #expect(bass.count == 1 && bass[0].state == .kept && bass[0].frames == Int64(reference.count), "run \(run): \(takes)")
            let soprano = takes.filter { $0.part == "Soprano" }
            if !killedMidway {
                // It finished before the kill landed: a kept take.
                #expect(soprano.count == 1 && soprano[0].state == .kept, "run \(run): \(takes)")
                continue
            }
            if received == 0 && !soprano.contains(where: { $0.state == .recovered }) {
                // Killed before it said it had audio: no take, or an empty one set aside.
                #expect(soprano.allSatisfy { $0.state == .discarded && $0.frames == 0 } && soprano.count <= 1, "run \(run): \(takes)")
                continue
            }
            guard soprano.count == 1, soprano[0].state == .recovered else {
                lost += 1
                Issue.record("run \(run): the killed take is gone: \(takes)")
                continue
            }
            let take = soprano[0]
            let samples = try AudioFile.readMono(project + "/" + take.file).samples
            #expect(Int64(samples.count) == take.frames)
            let same = Array(reference.prefix(samples.count)) == samples
            #expect(same, "run \(run): the recovered audio differs from what was sung")
            let loss = Double(max(0, received - take.frames)) / 48_000
            losses.append(loss)
            #expect(loss <= 0.25, "run \(run): \(loss) s lost")
            #expect(next.err.contains("recovered after an interruption"), "run \(run): \(next.err)")
        }
        losses.sort()
        print(String(format: "attack: killed recorders, %d runs (%d mid-take): %d takes lost; audio lost median %.3f s, worst %.3f s",
                     Self.runs, losses.count, lost, losses.isEmpty ? 0 : losses[losses.count / 2], losses.last ?? 0))
        #expect(lost == 0)
    }
}

/// The reproductions of two more ways a take was lost, and `record`'s
/// stop signals.
@Suite(.serialized) struct TakeSafetyTests {
    /// Two boxes on one data directory: the second is refused at once,
    /// naming the first, which runs on undisturbed.
    @Test func twoBoxesOnOneDataDirectory() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-two-boxes-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let first = try Spawned(["run", "--data", data, "--seconds", "3", "--device", "sim:speed=1"])
        #expect(first.waitFor { $0.err.contains("ready: ") }, "\(first.err)")
        let second = try Spawned(["run", "--data", data, "--seconds", "1", "--device", "sim:speed=1"])
        #expect(second.wait() == 1)
        #expect(second.err.hasSuffix("acapella run: error: \(data): in use by acapella run, pid \(first.pid)\n"), "\(second.err)")
        #expect(!second.err.contains("ready: "))
        #expect(first.wait() == 0, "\(first.err)")
    }

    /// A manifest whose `nextTakeID` is at or below an existing take's id
    /// used to make the next recording overwrite that take. Now the next
    /// id is above every id the project has, and a file that is in the way
    /// (one nobody listed) is never opened over: the take gets the next name.
    @Test func aLowNextTakeIDOverwritesNothing() throws {
        let fixture = try #require(ProjectDamageTests.fixture)
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-ids-\(UUID().uuidString).acaproj").path
        try FileManager.default.copyItem(atPath: fixture, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let original = try ProjectDamageTests.audio(of: copy)
        try editManifest(copy) { $0["nextTakeID"] = 1 }
        let (project, report) = try Project.open(copy, for: .write(owner: "test"))
        #expect(report == ["manifest.json: nextTakeID: 1 is not above take 3's id; the next take is 4"])
        // A file appears under the name take 4 would get, after the open.
        let stray = Data("not a take of ours".utf8)
        try stray.write(to: URL(fileURLWithPath: copy + "/takes/tenor-4.wav"))
        var request = RecordingRequest(part: "Tenor")
        request.singer = quietSinger()
        let result = try RecordingSession.record(project: project, request: request, device: try quietRoom())
        #expect(result.takes.map(\.id) == [5] && result.takes.first?.file == "takes/tenor-5.wav", "\(result.takes)")
        #expect(FileManager.default.contents(atPath: copy + "/takes/tenor-4.wav") == stray, "the file in the way is untouched")
        for (file, samples) in original {
            let same = try AudioFile.readMono(copy + "/" + file).samples == samples
            #expect(same, "\(file) changed")
        }
        #expect(project.manifest.takes.map(\.id) == [1, 2, 3, 5] && project.manifest.nextTakeID == 6)
        project.close()
    }

    /// Ctrl-C, a stop, or the terminal closing during `record`: the take is
    /// finished and kept as far as it went, the line printed, exit 0.
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
    func recordFinishesItsTakeOnAStopSignal(signal: Int32) throws {
        let project = try ConcurrencyAttackTests.freshProject()
        defer { try? FileManager.default.removeItem(atPath: project) }
        let recorder = try Spawned(["record", project, "--part", "Soprano", "--device", "sim:speed=2", "--progress"])
        #expect(recorder.waitFor { $0.captured > 3 * 48_000 })
        kill(recorder.pid, signal)
        #expect(recorder.wait() == 0, "\(recorder.err)")
        let line = recorder.out.split(separator: "\n").first { $0.hasPrefix("take ") }
        #expect(line?.hasPrefix("take 1  Soprano  kept, active") == true, "\(recorder.out)")
        let (opened, report) = try Project.open(project, for: .read)
        #expect(report.isEmpty)
        let take = try #require(opened.manifest.takes.first)
        #expect(take.state == .kept && take.frames >= 3 * 48_000 && take.frames < 11 * 48_000, "\(take)")
        #expect(TakeFile.frameCount(project + "/" + take.file) == take.frames)
    }
}
