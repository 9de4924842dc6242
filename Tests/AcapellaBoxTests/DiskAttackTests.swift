import AcapellaProject
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs of its own (root only: it mounts one), for a disk that
/// really fills and a project that is really read-only.
final class SmallDisk {
    let path: String

    /// Whether this process may mount (root, with the capability).
    static let available: Bool = {
        guard getuid() == 0, let disk = try? SmallDisk(megabytes: 1) else { return false }
        disk.unmount()
        return true
    }()

    init(megabytes: Int) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-disk-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.run(["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) == 0 else {
            struct CannotMount: Error {}
            throw CannotMount()
        }
    }

    /// Fills what is left (a file of every free block), at once: a take
    /// being written beside it can make the single fallocate fail (tmpfs
    /// then takes nothing), and filling a byte at a time took longer than
    /// the whole take under load (the suite saw the take end unfilled).
    func fill() {
        var status = statvfs()
        statvfs(path, &status)
        let descriptor = open(path + "/filler", O_WRONLY | O_CREAT, 0o644)
        _ = posix_fallocate(descriptor, 0, off_t(Int64(status.f_bavail) * Int64(status.f_frsize)))
        // What fallocate could not take: in 64 KiB blocks, then 4 KiB, then bytes.
        var block = [UInt8](repeating: 0, count: 65_536)
        lseek(descriptor, 0, SEEK_END)
        for size in [65_536, 4_096, 1] {
            while write(descriptor, &block, size) == size {}
        }
        close(descriptor)
    }

    func empty() { unlink(path + "/filler") }

    func readOnly() { _ = Self.run(["mount", "-o", "remount,ro", path]) }

    func unmount() {
        _ = Self.run(["umount", "-l", path])
        rmdir(path)
    }

    @discardableResult
    static func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// The disk fills during a take; a recorder is killed on a full disk; a
/// project is on a read-only disk. Real tmpfs mounts, real processes.
@Suite(.serialized, .enabled(if: SmallDisk.available, "DISK ATTACKS SKIPPED: mounting a small tmpfs needs root"))
struct DiskAttackTests {
    static let device = "sim:speed=24"

    /// A project on `disk` with a Soprano take under way, `frames` into it.
    static func recording(on disk: SmallDisk, after frames: Int64, device: String = device) throws -> (project: String, recorder: Spawned) {
        let project = disk.path + "/song.acaproj"
        try Project.create(at: project, songText: try songText("simple-harmony.acasong")).close()
        let recorder = try Spawned(["record", project, "--part", "Soprano", "--device", device, "--progress"])
        #expect(recorder.waitFor { $0.captured > frames })
        return (project, recorder)
    }

    /// The disk fills mid-take: the take stops, keeps what was written, and
    /// the manifest on disk says so before `record` says "kept"; listing,
    /// mixing and recovering all work on the still-full disk; no copy of
    /// the take is ever attempted; with room again, recording goes on.
    @Test(.fullSuiteOnly) func theDiskFillsDuringATake() throws {
        let disk = try SmallDisk(megabytes: 8)
        defer { disk.unmount() }
        // At twice real time: the disk fills well inside the take, however loaded the machine.
        let (project, recorder) = try Self.recording(on: disk, after: 48_000, device: "sim:speed=2")
        disk.fill()
        #expect(recorder.wait() == 1, "\(recorder.err)")
        #expect(recorder.err.contains("\(project): takes/soprano-spawned-1.wav: No space left on device; the take is kept up to"), "\(recorder.err)")
        #expect(recorder.out.split(separator: "\n").last { !$0.hasPrefix("captured") }?.hasPrefix("take 1  Soprano  kept, active") == true, "\(recorder.out)")
        // What it said is what the disk holds.
        let (opened, report) = try Project.open(project, for: .read)
        #expect(report.isEmpty, "\(report)")
        let take = try #require(opened.manifest.takes.first)
        #expect(take.state == .kept && take.active && take.note?.contains("No space left on device") == true, "\(take)")
        #expect(TakeFile.frameCount(project + "/" + take.file) == take.frames && take.frames >= 48_000)
        let recorded = try AudioFile.readMono(project + "/" + take.file).samples
        // On the full disk: list, mix (to another disk), recover.
        let list = try Spawned(["takes", project])
        #expect(list.wait() == 0 && list.out.hasPrefix("take 1  Soprano  kept, active"), "\(list.err)")
        let mixPath = FileManager.default.temporaryDirectory.path + "/full-\(UUID().uuidString).wav"
        defer { for file in [mixPath, mixPath.dropLast(4) + ".lrc"] { try? FileManager.default.removeItem(atPath: String(file)) } }
        let mix = try Spawned(["mix", project, "-o", mixPath])
        #expect(mix.wait() == 0, "\(mix.err)")
        let recover = try Spawned(["takes", project, "recover"])
        #expect(recover.wait() == 0, "\(recover.err)")
        let unchanged = try AudioFile.readMono(project + "/" + take.file).samples == recorded
        #expect(unchanged)
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: project + "/takes")).contains { $0.contains("repair") || $0.hasSuffix(".tmp") })
        // A new take on the full disk is refused before the singer sings.
        let refused = try Spawned(["record", project, "--part", "Bass", "--device", Self.device])
        #expect(refused.wait() == 1 && refused.err.contains("the disk is full") && refused.out.isEmpty, "\(refused.err)")
        disk.empty()
        let again = try Spawned(["record", project, "--part", "Bass", "--device", Self.device])
        #expect(again.wait() == 0 && again.out.hasPrefix("take 2  Bass  kept, active"), "\(again.err)")
    }

    /// Killed mid-take, then the disk filled: the next writer repairs the
    /// take in place (no second copy that would need room) and saves the
    /// manifest from the reserve kept for it.
    @Test func killedThenTheDiskIsFull() throws {
        let disk = try SmallDisk(megabytes: 6)
        defer { disk.unmount() }
        let (project, recorder) = try Self.recording(on: disk, after: 96_000, device: "sim:speed=2")
        kill(recorder.pid, SIGKILL)
        #expect(recorder.wait() == nil)
        let received = recorder.captured
        disk.fill()
        let recover = try Spawned(["takes", project, "recover"])
        #expect(recover.wait() == 0, "\(recover.err)")
        #expect(recover.err.contains("take 1 (Soprano) recovered after an interruption"), "\(recover.err)")
        let (opened, report) = try Project.open(project, for: .read)
        #expect(report.isEmpty, "the repair is on disk: \(report)")
        let take = try #require(opened.manifest.takes.first)
        #expect(take.state == .recovered && take.active && take.frames >= received - 12_000, "\(take), \(received) received")
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: project + "/takes")).contains { $0.contains("repair") })
    }

    /// A read-only project: `record` refuses at once, before playing a note,
    /// and prints no take; listing and mixing work; the box plays it with
    /// recording off.
    @Test func aReadOnlyProject() throws {
        let disk = try SmallDisk(megabytes: 8)
        defer { disk.unmount() }
        let project = disk.path + "/song.acaproj"
        try Project.create(at: project, songText: try songText("simple-harmony.acasong")).close()
        let first = try Spawned(["record", project, "--part", "Soprano", "--device", Self.device])
        #expect(first.wait() == 0)
        disk.readOnly()
        let started = Date()
        let refused = try Spawned(["record", project, "--part", "Bass", "--device", "sim:speed=1"])
        #expect(refused.wait() == 1)
        #expect(Date().timeIntervalSince(started) < 5, "refused at once, not after performing the take")
        #expect(refused.err == "acapella record: error: \(project): read-only (Read-only file system): nothing can be recorded or changed here\n", "\(refused.err)")
        #expect(refused.out.isEmpty)
        let list = try Spawned(["takes", project])
        #expect(list.wait() == 0 && list.out.hasPrefix("take 1  Soprano  kept, active"), "\(list.err)")
        let mixPath = FileManager.default.temporaryDirectory.path + "/readonly-\(UUID().uuidString).wav"
        let mix = try Spawned(["mix", project, "-o", mixPath])
        #expect(mix.wait() == 0, "\(mix.err)")
        for file in [mixPath, mixPath.dropLast(4) + ".lrc"] { try? FileManager.default.removeItem(atPath: String(file)) }
        let data = FileManager.default.temporaryDirectory.path + "/readonly-box-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: data) }
        let box = try Spawned(["run", "--project", project, "--data", data, "--seconds", "0.3", "--device", Self.device])
        #expect(box.wait() == 0 && box.err.contains("read-only (Read-only file system): nothing can be recorded or changed here: playing only, recording is off"), "\(box.err)")
    }
}
