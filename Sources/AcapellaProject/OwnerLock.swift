import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One writer at a time for a folder (a project package, a data
/// directory): an advisory `flock` on a lock file inside it, held for as
/// long as the writer lives. The holder writes who it is into the file, so
/// a refused writer can say "in use by acapella record, pid 4312". The
/// kernel drops the lock when the holder exits, however it exits, so a
/// lock that can be taken *proves* the previous writer is gone.
///
/// The corresponding C functions are `open`, `flock`, `ftruncate`, `pwrite`.
public final class OwnerLock: @unchecked Sendable {
    // @unchecked: the descriptor is set once and only closed by `release`
    // (on the owning thread) or deinit.
    /// The lock file.
    public let path: String
    private var descriptor: Int32

    /// The lock file's name inside the folder.
    public static let fileName = ".lock"

    /// Who holds a folder, as the holder wrote it.
    public struct Holder: Hashable, Sendable, CustomStringConvertible {
        /// "acapella record".
        public var owner: String
        /// The holder's process id (0 when the file did not say).
        public var pid: Int32

        /// "acapella record, pid 4312".
        public var description: String { pid > 0 ? "\(owner), pid \(pid)" : owner }
    }

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    /// Takes the folder for `owner` at once, or throws naming who holds it.
    /// A reader's momentary probe (`holder(of:)`) is waited out (up to
    /// `patience` seconds); a writer is never waited for.
    public static func acquire(_ folder: String, owner: String, patience: Double = 1) throws(ProjectError) -> OwnerLock {
        let path = folder + "/" + fileName
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            if errno == EROFS || errno == EACCES || errno == EPERM {
                throw ProjectError(description: "\(folder): read-only (\(reason)): nothing can be recorded or changed here")
            }
            throw ProjectError(description: "\(folder): cannot take the lock (\(reason))")
        }
        var waited = 0.0
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            if failure == EINTR { continue }
            guard failure == EWOULDBLOCK else {
                close(descriptor)
                throw ProjectError(description: "\(folder): cannot take the lock (\(String(cString: strerror(failure))))")
            }
            // Held. A live writer named in the file is refused at once; an
            // empty or stale name is a reader probing: wait a moment.
            let holder = read(descriptor)
            if let holder, holder.pid > 0, kill(holder.pid, 0) == 0 || errno == EPERM {
                close(descriptor)
                throw ProjectError(description: "\(folder): in use by \(holder)")
            }
            if waited >= patience {
                close(descriptor)
                throw ProjectError(description: "\(folder): in use by \(holder?.description ?? "another process")")
            }
            usleep(10_000)
            waited += 0.01
        }
        let text = Array("\(owner)\n\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBufferPointer { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return OwnerLock(path: path, descriptor: descriptor)
    }

    /// Who holds `folder` now, or nil when nobody does (a probe: takes a
    /// shared lock for an instant and gives it back; never waits).
    public static func holder(of folder: String) -> Holder? {
        let descriptor = open(folder + "/" + fileName, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }  // no lock file: never held
        defer { close(descriptor) }
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return nil
        }
        return read(descriptor) ?? Holder(owner: "another process", pid: 0)
    }

    /// Gives the folder back (also on deinit); the holder's name is cleared
    /// first so a stale name never outlives its writer.
    public func release() {
        guard descriptor >= 0 else { return }
        _ = ftruncate(descriptor, 0)
        close(descriptor)
        descriptor = -1
    }

    private static func read(_ descriptor: Int32) -> Holder? {
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = bytes.withUnsafeMutableBufferPointer { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let lines = String(decoding: bytes[0..<count], as: UTF8.self).split(separator: "\n")
        guard let owner = lines.first, !owner.isEmpty else { return nil }
        return Holder(owner: String(owner), pid: lines.count > 1 ? Int32(lines[1]) ?? 0 : 0)
    }
}
