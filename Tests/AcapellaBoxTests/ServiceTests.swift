import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket standing in for systemd's notification socket.
final class NotifySocket {
    let path: String
    let descriptor: Int32

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-notify-\(UUID().uuidString.prefix(8))").path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.prefix(bytes.count - 1).enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        struct CannotBind: Error {}
        guard descriptor >= 0, bound == 0 else { throw CannotBind() }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// The messages that arrive within `seconds` (or until `enough` says so).
    func messages(for seconds: Double, until enough: ([String]) -> Bool = { _ in false }) -> [String] {
        var received: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while Date() < deadline && !enough(received) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 { received += String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").map(String.init) }
        }
        return received
    }
}

/// The box as a service: started the way systemd starts it (no terminal,
/// no time limit, `NOTIFY_SOCKET` and `WATCHDOG_USEC` in its environment),
/// it says it is ready once the engine runs, keeps a status line, beats the
/// watchdog from its control loop, idles until told otherwise, and stops
/// cleanly on SIGTERM. Through the real libsystemd, to a real socket.
@Suite(.serialized) struct ServiceTests {
    @Test func theBoxTalksToSystemdAndRunsUntilStopped() throws {
        let notify = try NotifySocket()
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-service-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let box = try Spawned(["run", "--data", data, "--device", "sim:speed=1"],
                              environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000", "JOURNAL_STREAM": ""])
        let first = notify.messages(for: 15) { $0.contains("READY=1") }
        #expect(first.contains("READY=1"), "\(first) \(box.err)")
        #expect(first.contains("STATUS=Amazing Grace — Alto: stopped"), "\(first)")
        // Idle, as a service waits for its MIDI controller and foot switch.
        let later = notify.messages(for: 3)
        #expect(later.filter { $0 == "WATCHDOG=1" }.count >= 8, "a heartbeat at least every 200 ms: \(later)")
        #expect(box.process.isRunning, "the box without a terminal keeps running: \(box.err)")
        #expect(box.err.contains("no terminal: running until stopped (SIGTERM), driven by MIDI and the foot switch"))
        kill(box.pid, SIGTERM)
        #expect(box.wait() == 0, "\(box.err)")
        #expect(notify.messages(for: 1).contains("STOPPING=1"))
        #expect(box.err.contains("stop signal: finishing and quitting"))
    }

    /// `--once` is the demo mode: the song plays through and the box quits.
    @Test func onceIsTheDemo() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-once-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let box = try Spawned(["run", "--data", data, "--device", "sim", "--once", "--song", songsDirectory.appendingPathComponent("simple-harmony.acasong").path])
        #expect(box.wait() == 0, "\(box.err)")
        #expect(box.err.contains("transport: playing from") && box.err.contains("transport: stopped at measure 3"), "\(box.err)")
    }

    /// Log lines carry journald's priority when stderr is the journal.
    @Test func journalPriorities() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-journal-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let stderrFile = data + ".err"
        _ = FileManager.default.createFile(atPath: stderrFile, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: stderrFile) }
        var status = stat()
        stat(stderrFile, &status)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try acapellaExecutable())
        process.arguments = ["run", "--data", data, "--device", "sim", "--seconds", "0.5"]
        process.environment = ProcessInfo.processInfo.environment.merging(["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino)"]) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrFile))
        try process.run()
        process.waitUntilExit()
        let text = try String(contentsOfFile: stderrFile, encoding: .utf8)
        #expect(text.contains("<6>acapella: ready: Amazing Grace"), "\(text)")
        #expect(text.contains("<4>acapella: MIDI: ") || text.contains("<4>acapella: LCD: no LCDd"), "warnings at priority 4: \(text)")
    }
}

/// A sound card that goes away mid-session (a USB interface pulled out)
/// does not end the box: it says so, waits, reopens it when it is back and
/// carries on — in the same session, without a restart.
@Suite struct DeviceLossInTheBoxTests {
    @Test func theBoxWaitsForItsDeviceAndCarriesOn() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-loss-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let box = try Spawned(["run", "--data", data, "--device", "sim:speed=4,lose=150", "--seconds", "4", "--play"])
        #expect(box.wait() == 0, "\(box.err)")
        #expect(box.err.contains("the device went away; waiting for the device to come back (the take so far is kept)"), "\(box.err)")
        #expect(box.err.contains("the device is back: simulated room"), "\(box.err)")
        #expect(box.err.components(separatedBy: "ready: ").count == 2, "one session throughout, no restart: \(box.err)")
    }
}
