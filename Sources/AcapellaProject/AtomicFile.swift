import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A file-system problem, with the path.
public struct FileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `PATH: what went wrong`.
    public var description: String
    /// The file was to be created and already exists.
    public var exists = false
    /// The C error number behind it (`ENOSPC`…), 0 when there is none.
    public var errorNumber: Int32 = 0

    /// An error saying `description`.
    public init(description: String, exists: Bool = false, errorNumber: Int32 = 0) {
        self.description = description
        self.exists = exists
        self.errorNumber = errorNumber
    }
}

/// Writes that survive a crash or a power cut whole or not at all: the
/// bytes go to a temporary file beside the target, which is flushed to the
/// disk, renamed over the target, and the directory flushed so the rename
/// itself is durable.
public enum AtomicFile {
    /// Replaces `path` with `bytes`. The corresponding C functions are
    /// `open`, `write`, `fsync`, `rename`.
    public static func write(_ bytes: [UInt8], to path: String) throws(FileError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(path, "cannot create a temporary file") }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBufferPointer { Glibc.write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            if result < 0 && errno == EINTR { continue }
            if result <= 0 {
                let error = failure(path, "cannot write")
                close(descriptor)
                unlink(temporary)
                throw error
            }
            written += result
        }
        if fsync(descriptor) != 0 {
            let error = failure(path, "cannot flush to disk")
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let error = failure(path, "cannot move into place")
            unlink(temporary)
            throw error
        }
        syncDirectory(of: path)
    }

    /// Flushes a directory entry change (a rename or a new file) to disk.
    public static func syncDirectory(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let descriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }

    static func failure(_ path: String, _ what: String) -> FileError {
        let number = errno
        return FileError(description: "\(path): \(what): \(String(cString: strerror(number)))", errorNumber: number)
    }
}
