public import AcapellaWeb
internal import CZlib
import Foundation

extension WebScore {
    /// The score in `folder` (as an engraving wrote it), if both files are there.
    public init?(folder: String) {
        self.init(svgGzipPath: folder + "/" + Self.svgName, timeMapPath: folder + "/" + Self.timeMapName)
        guard FileManager.default.fileExists(atPath: svgGzipPath), FileManager.default.fileExists(atPath: timeMapPath) else { return nil }
    }
}

/// A gzip file written as it is made (zlib's `gzwrite`) under a hidden
/// name, and named only when `finish` has closed it whole.
public final class GzipFileWriter {
    private var file: gzFile?
    private let path: String
    private let temporary: String

    public init(path: String) throws(WebFailure) {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        temporary = (directory.isEmpty ? "." : directory) + "/." + (path as NSString).lastPathComponent + ".part"
        guard let opened = gzopen(temporary, "wb6") else { throw WebFailure(500, "\(temporary): cannot write") }
        file = opened
    }

    deinit {
        if let file {
            gzclose(file)
            unlink(temporary)
        }
    }

    /// Compresses and writes `text`.
    public func write(_ text: String) throws(WebFailure) {
        guard let file else { return }
        var text = text
        let written = text.withUTF8 { bytes in bytes.isEmpty ? 0 : gzwrite(file, bytes.baseAddress, UInt32(bytes.count)) }
        guard written == text.utf8.count else { throw WebFailure(500, "\(temporary): the disk refused the score (full?)") }
    }

    /// Closes the file and names it.
    public func finish() throws(WebFailure) {
        guard let file else { return }
        self.file = nil
        guard gzclose(file) == Z_OK else {
            unlink(temporary)
            throw WebFailure(500, "\(temporary): the disk refused the score (full?)")
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw WebFailure(500, "\(path): cannot name the score")
        }
    }
}

/// A gzip file read back decompressed a piece at a time (zlib's
/// `gzread`): the score for a client that does not take gzip, never
/// inflated whole. Used by one connection's thread at a time.
public final class GzipFileReader: @unchecked Sendable {
    private var file: gzFile?

    public init?(path: String) {
        guard let opened = gzopen(path, "rb") else { return nil }
        file = opened
    }

    deinit { if let file { gzclose(file) } }

    /// Up to 64 KiB more, or nil at the end (or when the file is damaged).
    public func next() -> [UInt8]? {
        guard let file else { return nil }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { gzread(file, $0.baseAddress, UInt32($0.count)) }
        guard count > 0 else { return nil }
        chunk.removeLast(chunk.count - Int(count))
        return chunk
    }
}


