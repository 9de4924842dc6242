@testable import AcapellaBox
import AcapellaEngine
@testable import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// The project has one owner: the thread that opened it. The recorder's
/// writer thread asks that thread to begin a take and hands each finished
/// take back; it never reads or changes the manifest itself (the old
/// writer did, under a lock the readouts once forgot — with the owner
/// check, any test recording a take would stop the suite on it).
@Suite struct ProjectOwnerTests {
    final class Seen: @unchecked Sendable {
        var values: [Bool] = []
    }

    @Test func onlyTheOwnersThreadOwnsTheProject() throws {
        let project = try temporaryProject("simple-harmony.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        #expect(project.owner.isCurrent, "the thread that opened it owns it")
        let seen = Seen()
        let handed = UncheckedProject(project)
        let done = DispatchSemaphore(value: 0)
        Thread {
            seen.values.append(handed.project.owner.isCurrent)
            handed.project.adopt()
            seen.values.append(handed.project.owner.isCurrent)
            done.signal()
        }.start()
        done.wait()
        #expect(seen.values == [false, true], "another thread owns it only once it adopts it")
        #expect(!project.owner.isCurrent, "and then the opener no longer does")
        project.adopt()
        #expect(project.owner.isCurrent)
    }

    @Test func theWriterAsksTheOwnerToBeginATakeDrainsTheRingMeanwhileAndHandsItBack() throws {
        let project = try temporaryProject("simple-harmony.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let violations = ProjectOwnership.violations
        let recorder = Recorder(project: project, part: "Alto", options: ScheduleOptions(sampleRate: 48_000))
        // Two loop passes over samples 0..<24,000 (a gap of 100 lost in the
        // first, silence in place), then stopped.
        var frames: [CapturedFrame] = []
        for pass in 0..<2 {
            for sample in 0..<24_000 where pass == 1 || !(10_000..<10_100).contains(sample) {
                frames.append(CapturedFrame(value: Float(pass + 1) / 4, mark: FrameMark(songSample: Int64(sample), kind: .recording)))
            }
        }
        frames += Array(repeating: CapturedFrame(value: 0, mark: .none), count: 100)
        #expect(frames.withUnsafeBufferPointer { recorder.ring.push($0.baseAddress!, count: $0.count) } == frames.count)
        recorder.start()
        // The owner is busy (this thread serves nothing yet): the writer
        // drains the whole first pass all the same; nothing is listed or
        // made until the owner begins the take.
        var spins = 0
        while recorder.receivedFrames < 23_900 && spins < 50_000_000 { sched_yield(); spins += 1 }
        #expect(recorder.receivedFrames >= 23_900, "the ring is drained while the owner is busy")
        #expect(project.manifest.takes.isEmpty)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: project.path + "/takes")) ?? []).isEmpty)
        recorder.finish()
        #expect(recorder.finished.map(\.frames) == [24_000, 24_000], "both passes handed back and stored, the lost capture in place")
        #expect(recorder.finished.first?.dropouts == [SongRange(10_000, 10_100)])
        #expect(project.manifest.takes.map(\.state) == [.kept, .kept])
        #expect(project.manifest.takes.filter(\.active).map(\.id) == [recorder.finished[1].id], "the last pass plays")
        #expect(recorder.problems.isEmpty, "\(recorder.problems)")
        #expect(ProjectOwnership.violations == violations, "nobody but this thread touched the project")
        // Every sample where it was sung: the first pass 0.25 with silence
        // over the lost 100, the second 0.5.
        let first = try AudioFile.readMono(project.path + "/" + recorder.finished[0].file).samples
        let second = try AudioFile.readMono(project.path + "/" + recorder.finished[1].file).samples
        #expect(first.count == 24_000 && second.count == 24_000)
        #expect(first.indices.allSatisfy { first[$0] == ((10_000..<10_100).contains($0) ? 0 : 0.25) })
        #expect(second.allSatisfy { $0 == 0.5 })
        // What the owner stored is on disk: a reader sees both takes.
        let reader = try Project.open(project.path, for: .read).project
        #expect(reader.manifest.takes.count == 2)
    }
}

/// A project handed to another thread in a test (it adopts it there).
struct UncheckedProject: @unchecked Sendable {
    let project: Project
    init(_ project: Project) { self.project = project }
}
