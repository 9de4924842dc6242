import AcapellaControl
import AcapellaStatus
@testable import AcapellaDevices
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real `LCDd` (Debian's lcdproc) with its `text` driver, which prints
/// every screen it shows to its standard output.
final class TextLCDd {
    let process = Process()
    let output: URL
    let port: UInt16

    init(columns: Int, rows: Int, port: UInt16) throws {
        self.port = port
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-lcdd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let drivers = ["/usr/lib/x86_64-linux-gnu/lcdproc", "/usr/lib/aarch64-linux-gnu/lcdproc", "/usr/lib/arm-linux-gnueabihf/lcdproc", "/usr/lib/lcdproc"]
            .first { FileManager.default.fileExists(atPath: $0 + "/text.so") } ?? "/usr/lib/lcdproc"
        let config = """
            [server]
            DriverPath=\(drivers)/
            Driver=text
            Bind=127.0.0.1
            Port=\(port)
            ReportLevel=1
            ReportToSyslog=no
            Foreground=yes
            ServerScreen=no
            Heartbeat=off
            [text]
            Size=\(columns)x\(rows)
            """
        let configPath = folder.appendingPathComponent("LCDd.conf")
        try config.write(to: configPath, atomically: true, encoding: .utf8)
        output = folder.appendingPathComponent("screen.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        process.arguments = ["-o0", "/usr/sbin/LCDd", "-c", configPath.path, "-f"]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait until it listens.
        for _ in 0..<100 {
            let probe = LCDClient(port: port)
            if (try? probe.connect()) != nil { return }
            usleep(50_000)
        }
    }

    /// Waits (up to 10 s: a loaded machine draws late) until the screen
    /// shows every line of `frame`, then stops it and returns what it printed.
    func stop(after frame: [String]) -> String {
        for _ in 0..<200 {
            let screen = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if frame.allSatisfy({ screen.contains("|\($0)|") }) { break }
            usleep(50_000)
        }
        return stop()
    }

    /// Stops it and returns what it printed (unbuffered: all of it is in the file).
    func stop() -> String {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }
}

@Suite(.serialized) struct LCDTests {
    static var lcddInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/sbin/LCDd") }

    /// The box's 16×2 and 20×4 frames, sent to a real LCDd, are what its
    /// screen shows; after LCDd restarts, the client reconnects.
    @Test(arguments: [(16, 2), (20, 4)])
    func framesAppearOnARealLCDd(columns: Int, rows: Int) throws {
        try #require(Self.lcddInstalled, "LCDd is not installed (Debian package lcdproc; ./test installs it)")
        let port = UInt16(14_000 + Int(getpid() % 500) + columns)
        let state = ReadoutState(song: "Amazing Grace", part: "Alto", mode: .recording, measure: 12, beat: 3, tempo: 72, note: "F#4", cents: 17.6)
        let frame = Readout.lcd(state, columns: columns, rows: rows)
        var server = try TextLCDd(columns: columns, rows: rows, port: port)
        let client = LCDClient(port: port)
        #expect(client.show(frame))
        #expect(client.columns == columns && client.rows == rows)
        var screen = server.stop(after: frame)
        for line in frame { #expect(screen.contains("|\(line)|"), "\(line) not on the screen:\n\(screen.suffix(400))") }
        // LCDd goes away: the client says so, then reconnects to the new one.
        #expect(!client.show(frame))
        server = try TextLCDd(columns: columns, rows: rows, port: port)
        var moved = state
        moved.measure = 13
        let next = Readout.lcd(moved, columns: columns, rows: rows)
        let reconnected = client.show(next)
        #expect(reconnected, "\(server.process.isRunning) \((try? String(contentsOf: server.output, encoding: .utf8))?.prefix(300) ?? "")")
        screen = server.stop(after: [next[rows == 2 ? 0 : 1]])
        #expect(screen.contains("|\(next[rows == 2 ? 0 : 1])|"), "after reconnecting:\n\(screen.suffix(400))")
    }

    @Test func noLCDdIsAClearMessage() {
        let client = LCDClient(port: 9)
        do {
            try client.connect()
            Issue.record("connected to nothing")
        } catch {
            #expect(error.description.hasPrefix("LCD: no LCDd at 127.0.0.1:9") && error.description.contains("runs on without the display"))
        }
        #expect(!client.show(["x"]))
    }
}
