public import AcapellaControl

#if canImport(Glibc)
import Glibc
#endif

/// Keys from the terminal, one at a time without Enter: the console's
/// controls (`ConsoleKeys`). Only when standard input is a terminal; the
/// terminal is put back as it was when this goes away.
public final class ConsoleInput {
    private var saved = termios()

    /// Raw keys from standard input, or nil when it is not a terminal.
    public init?() {
        guard isatty(STDIN_FILENO) != 0, tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 0
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return nil }
    }

    deinit { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }

    /// The keys pressed within `timeoutMilliseconds`: their actions, `?`
    /// (help) and `q` (quit: the take in progress is finished first).
    public func poll(timeoutMilliseconds: Int32) -> (actions: [ControlAction], help: Bool, quit: Bool) {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard Glibc.poll(&descriptor, 1, timeoutMilliseconds) > 0 else { return ([], false, false) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(STDIN_FILENO, &buffer, buffer.count)
        guard count > 0 else { return ([], false, false) }
        var actions: [ControlAction] = []
        var help = false
        var quit = false
        for byte in buffer[0..<count] {
            let key = Character(Unicode.Scalar(byte))
            if key == "?" { help = true } else if key == "q" { quit = true } else if let action = ConsoleKeys.action(for: key) { actions.append(action) }
        }
        return (actions, help, quit)
    }
}
