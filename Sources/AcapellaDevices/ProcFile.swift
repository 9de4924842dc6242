#if canImport(Glibc)
import Glibc
#endif

/// A file of the kernel's (`/proc`, `/sys`) read to its end. These files
/// report a size of 0 and are made as they are read, a page at a time:
/// a reader that trusts the size, or stops after the first read (as
/// Foundation's `String(contentsOfFile:)` does), sees only the first 4 KiB —
/// a machine with many mounts would hide the USB stick mounted last.
public enum ProcFile {
    /// The whole text of `path`, or nil when it cannot be read. The
    /// corresponding C functions are `open` and `read`.
    public static func read(_ path: String, limit: Int = 16 << 20) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while bytes.count < limit {
            let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { return nil }
            if got == 0 { break }
            bytes += buffer[0..<got]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
