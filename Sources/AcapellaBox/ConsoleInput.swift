public import AcapellaControl

#if canImport(Glibc)
import Glibc
#endif

/// Keys from the terminal, one at a time without Enter: the console's
/// controls (`ConsoleKeys`). Only when standard input is a terminal; the
/// terminal is put back as it was when this goes away.
public final class ConsoleInput {
    private var saved = termios()
    /// The descriptor the keys are read from.
    public let fileDescriptor: Int32
    /// Whether the terminal's settings are this input's to put back.
    private let terminal: Bool

    /// Raw keys from standard input, or nil when it is not a terminal.
    public init?() {
        fileDescriptor = STDIN_FILENO
        terminal = true
        guard isatty(STDIN_FILENO) != 0, tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 0
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return nil }
    }

    /// Keys read from `descriptor` as they are (a pipe a test writes
    /// keys into); nothing about a terminal is changed.
    init(reading descriptor: Int32) {
        fileDescriptor = descriptor
        terminal = false
    }

    deinit { if terminal { tcsetattr(STDIN_FILENO, TCSANOW, &saved) } }

    /// A key read from the terminal.
    public enum Key: Hashable, Sendable {
        case action(ControlAction)
        /// `?`: the key help.
        case help
        /// `q`: quit (the take in progress is finished first).
        case quit
        /// A key that means nothing here.
        case unknown(Character)
    }

    /// The keys waiting now (call when the descriptor is readable).
    public func take() -> [Key] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fileDescriptor, &buffer, buffer.count)
        guard count > 0 else { return [] }
        return buffer[0..<count].map { byte in
            let key = Character(Unicode.Scalar(byte))
            if key == "?" { return .help }
            if key == "q" { return .quit }
            return ConsoleKeys.action(for: key).map(Key.action) ?? .unknown(key)
        }
    }
}
