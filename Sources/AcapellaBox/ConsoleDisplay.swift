public import AcapellaStatus

#if canImport(Glibc)
import Glibc
#endif

/// The console readout, redrawn in place: the cursor goes home and each
/// line is overwritten (no clearing, so no flicker), sized to the terminal
/// (40×10 at least). The cursor is hidden while it runs and the terminal
/// put back on `finish` (the box calls it on exit and on signals).
public final class ConsoleDisplay {
    private var started = false

    /// A display on standard output.
    public init() {}

    /// The terminal's size, or 80×24 when it does not say.
    public static func size() -> (width: Int, height: Int) {
        var window = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 {
            return (Int(window.ws_col), Int(window.ws_row))
        }
        return (80, 24)
    }

    /// Draws a frame (with `keys` for the help pages).
    public func draw(_ readout: ReadoutState, keys: [String] = []) {
        let (width, height) = Self.size()
        var text = started ? "\u{1B}[H" : "\u{1B}[?25l\u{1B}[2J\u{1B}[H"
        started = true
        text += Readout.console(readout, width: width, height: min(height, 14), keys: keys).joined(separator: "\r\n")
        write(text)
    }

    /// Straight to the terminal's descriptor (no stdio buffer shared with other threads).
    private func write(_ text: String) {
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBufferPointer { Glibc.write(STDOUT_FILENO, $0.baseAddress! + written, bytes.count - written) }
            if result <= 0 { return }
            written += result
        }
    }

    /// Shows the cursor again and leaves the frame on screen.
    public func finish() {
        guard started else { return }
        write("\u{1B}[?25h\r\n")
        started = false
    }
}
