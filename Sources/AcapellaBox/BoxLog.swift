import AcapellaDevices
import AcapellaScore
import AcapellaEngine
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
import AcapellaLock
#endif

/// The box's log: one line each, to stderr — with journald's priority
/// prefix (`<3>` error, `<4>` warning, `<6>` info) when stderr is the
/// journal (systemd says so in `JOURNAL_STREAM`). While the readout is
/// drawn on the terminal stderr also goes to, a line would scribble over
/// it: then the lines go to a file instead (`box.log` in the data
/// directory) and the readout shows the latest.
public final class BoxLog: @unchecked Sendable {
    // @unchecked: the mutable state is behind `state`'s mutex.
    private struct State {
        var file: FileHandle?
        var filePath: String?
        var latest: String?
    }

    private let state = VisibleLock(State())
    private let journal: Bool
    /// Also called with every line (tests, the CLI's own prefixes).
    private let prefix: String

    /// A log writing `prefix` before each line ("acapella: ").
    public init(prefix: String = "acapella: ") {
        self.prefix = prefix
        journal = Self.stderrIsTheJournal()
    }

    /// Whether stderr is connected to journald: `JOURNAL_STREAM` names its
    /// device and inode.
    static func stderrIsTheJournal() -> Bool {
        guard let value = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] else { return false }
        let pieces = value.split(separator: ":")
        var status = stat()
        guard pieces.count == 2, fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(pieces[0]) == UInt64(status.st_dev) && UInt64(pieces[1]) == UInt64(status.st_ino)
    }

    /// Whether stderr and stdout are the same terminal (the readout's).
    public static var stderrSharesTheReadout: Bool {
        var out = stat()
        var err = stat()
        guard isatty(STDOUT_FILENO) != 0, isatty(STDERR_FILENO) != 0, fstat(STDOUT_FILENO, &out) == 0, fstat(STDERR_FILENO, &err) == 0 else { return false }
        return out.st_rdev == err.st_rdev
    }

    /// From now on lines go to `path` (appended) instead of stderr: the
    /// readout is being drawn where stderr would write. Nil: back to stderr.
    public func divert(to path: String?) {
        state.withLock { state in
            try? state.file?.close()
            state.file = nil
            state.filePath = path
            guard let path else { return }
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            state.file = FileHandle(forWritingAtPath: path)
            _ = try? state.file?.seekToEnd()
        }
    }

    /// The file lines go to, while diverted.
    public var divertedTo: String? { state.withLock { $0.filePath } }

    /// The newest line, for the readout (and clears it).
    public func takeLatest() -> String? {
        state.withLock { state in
            defer { state.latest = nil }
            return state.latest
        }
    }

    /// Logs a line.
    public func callAsFunction(_ line: String, _ priority: LogPriority = .info) {
        // One line, and nothing in it that a terminal would act on (a song's
        // title, a file's name, a client's words can carry an escape).
        let text = SafeText.printable(line.replacingOccurrences(of: "\n", with: " "))
        state.withLock { state in
            if let file = state.file {
                state.latest = text
                file.write(Data("\(Self.timestamp()) \(Self.word(priority))\(text)\n".utf8))
                return
            }
            let full = (journal ? "<\(priority.rawValue)>" : "") + prefix + text + "\n"
            FileHandle.standardError.write(Data(full.utf8))
        }
    }

    static func word(_ priority: LogPriority) -> String {
        switch priority {
        case .error: "error: "
        case .warning: "warning: "
        case .info: ""
        }
    }

    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        localtime_r(&seconds, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}

/// A process's `/proc/PID/status` figures by field (VmRSS, VmHWM… in kB).
public enum ProcessStatus {
    public static func read(_ process: String = "self") -> [String: Int] {
        var status: [String: Int] = [:]
        let lines = ProcFile.read("/proc/\(process)/status") ?? ""
        for line in lines.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == ":" })
            if words.count >= 2, let value = Int(words[1]) { status[String(words[0])] = value }
        }
        return status
    }
}
