import AcapellaScore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A song file's bytes, read by every command and by the box alike: a
/// plain file (a FIFO would block, a device never end), no larger than a
/// song may be (`ScoreLimits`), refused in one line otherwise.
public enum SongFileReader {
    /// Why a song file cannot be read.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        /// `PATH: what`.
        public var description: String
    }

    /// The bytes of `path`. The corresponding C functions are `open`
    /// (`O_NONBLOCK`: a FIFO does not block the opening), `fstat`, `read`.
    public static func read(_ path: String) throws(Refusal) -> [UInt8] {
        let shown = SafeText.printable(path)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw Refusal(description: "\(shown): no such file") }
            throw Refusal(description: "\(shown): cannot be read (\(String(cString: strerror(errno))))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Refusal(description: "\(shown): cannot be read (\(String(cString: strerror(errno))))") }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw Refusal(description: "\(shown): is a directory, not a song file")
        default: throw Refusal(description: "\(shown): is not a plain file (a FIFO or a device), not a song file")
        }
        if let problem = ScoreLimits.fileProblem(bytes: Int(status.st_size)) { throw Refusal(description: "\(shown): \(problem)") }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var done = 0
        while done < bytes.count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + done, $0.count - done) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw Refusal(description: "\(shown): cannot be read (\(String(cString: strerror(errno))))") }
            if got == 0 { break }
            done += got
        }
        return Array(bytes.prefix(done))
    }
}
