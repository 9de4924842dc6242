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
        let temporary = try flushedTemporary(bytes, for: path)
        do { try moveIntoPlace(temporary, path) } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Renames the flushed file `temporary` to `path` (over what is there)
    /// and makes the rename last: the file is flushed again under its new
    /// name — on FAT a rename writes a new entry with no size and no
    /// clusters, filled in only when the file itself is written back (a
    /// USB stick pulled out before that showed the name holding nothing in
    /// the VM's trials) — and then its folder.
    public static func moveIntoPlace(_ temporary: String, _ path: String) throws(FileError) {
        guard rename(temporary, path) == 0 else { throw failure(path, "cannot move into place") }
        try flush(path)
        syncDirectory(of: path)
    }

    /// Flushes a file's data and its entry to the disk.
    public static func flush(_ path: String) throws(FileError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path, "cannot open to flush") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure(path, "cannot flush to disk") }
    }

    /// Creates `path` holding `bytes`, whole or not at all, never over
    /// anything already there (`FileError.exists` then): the bytes are
    /// flushed under a temporary name and linked into place. The
    /// corresponding C functions are `open`, `write`, `fsync`, `link`.
    public static func create(_ bytes: [UInt8], at path: String) throws(FileError) {
        try linkIntoPlace(try flushedTemporary(bytes, for: path), path)
    }

    /// `bytes` written and flushed to a hidden temporary file beside `path`; its name.
    private static func flushedTemporary(_ bytes: [UInt8], for path: String) throws(FileError) -> String {
        try flushedTemporary(for: path) { (descriptor) throws(FileError) in
            guard bytes.withUnsafeBytes({ writeAll(descriptor, $0) }) else { throw failure(path, "cannot write") }
        }
    }

    /// A hidden temporary file beside `path`, filled by `fill` (given its
    /// descriptor) and flushed; its name. Removed again on any failure.
    static func flushedTemporary(for path: String, _ fill: (Int32) throws(FileError) -> Void) throws(FileError) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(path, "cannot create a temporary file") }
        do throws(FileError) {
            try fill(descriptor)
            if fsync(descriptor) != 0 { throw failure(path, "cannot flush to disk") }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        return temporary
    }

    /// Writes all of `bytes` (again after an interruption); false when the write fails.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var written = 0
        while written < bytes.count {
            let result = Glibc.write(descriptor, bytes.baseAddress! + written, bytes.count - written)
            if result < 0 && errno == EINTR { continue }
            if result <= 0 { return false }
            written += result
        }
        return true
    }

    /// `temporary` given the name `path` — never over a file already there
    /// (`FileError.exists` then) — and removed under its own name either way.
    static func linkIntoPlace(_ temporary: String, _ path: String) throws(FileError) {
        defer { unlink(temporary) }
        guard link(temporary, path) == 0 else {
            let exists = errno == EEXIST
            var error = failure(path, exists ? "already exists" : "cannot move into place")
            error.exists = exists
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

/// Folders made on demand, with errors in words (never Foundation's
/// "The operation could not be completed").
public enum Folders {
    /// Creates `folder` and its missing parents (`mkdir -p`); the error
    /// names the first one that cannot be made and why.
    public static func make(_ folder: String) throws(FileError) {
        var made = folder.hasPrefix("/") ? "" : "."
        for component in folder.split(separator: "/") {
            made += "/" + component
            if mkdir(made, 0o755) != 0 && errno != EEXIST {
                let number = errno
                throw FileError(description: "\(folder): cannot create the folder (\(made): \(String(cString: strerror(number))))", errorNumber: number)
            }
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw FileError(description: "\(folder): cannot create the folder (a file of that name is in the way)", errorNumber: ENOTDIR)
        }
    }

    /// Checks that `path` can be written as a file: not a folder, and its
    /// folder exists. The error says which, in words.
    public static func checkWritableFile(_ path: String) throws(FileError) {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw FileError(description: "\(path): is a folder; give a file name (like \(path.hasSuffix("/") ? path : path + "/")NAME)", errorNumber: EISDIR)
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, !FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder) || !isFolder.boolValue {
            throw FileError(description: "\(path): the folder \(parent) does not exist", errorNumber: ENOENT)
        }
    }
}

/// Copies of whole files, made safely: a copy appears under its final name
/// only complete and flushed, and never over a file already there.
public enum FileCopy {
    /// Bytes moved per read and write.
    static let chunk = 1 << 20

    /// Copies `source` to `target`, which must not exist (`FileError.exists`
    /// when it does): written to a hidden temporary file beside it,
    /// flushed, then linked into place (removed again on any failure).
    /// `progress` gets the bytes copied so far. Returns the bytes copied.
    /// The corresponding C functions are `open`, `read`, `write`, `fsync`, `link`.
    @discardableResult
    /// The source is never followed through a symbolic link, and must be
    /// a plain file (a FIFO or a device would block or never end).
    public static func copy(_ source: String, to target: String, progress: ((Int64) -> Void)? = nil) throws(FileError) -> Int64 {
        let input = open(source, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard input >= 0 else {
            if errno == ELOOP { throw FileError(description: "\(source): is a symbolic link; links are not followed") }
            throw AtomicFile.failure(source, "cannot open")
        }
        defer { close(input) }
        var status = stat()
        guard fstat(input, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw FileError(description: "\(source): is not a plain file") }
        var total: Int64 = 0
        let temporary = try AtomicFile.flushedTemporary(for: target) { (output) throws(FileError) in
            var buffer = [UInt8](repeating: 0, count: chunk)
            while true {
                let got = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, chunk) }
                if got < 0 && errno == EINTR { continue }
                if got < 0 { throw AtomicFile.failure(source, "cannot read") }
                if got == 0 { return }
                guard buffer.withUnsafeBytes({ AtomicFile.writeAll(output, UnsafeRawBufferPointer(rebasing: $0[0..<got])) }) else {
                    throw AtomicFile.failure(target, "cannot write")
                }
                total += Int64(got)
                progress?(total)
            }
        }
        try AtomicFile.linkIntoPlace(temporary, target)
        return total
    }

    /// Whether two files hold the same bytes (false when either cannot be read).
    public static func sameContents(_ first: String, _ second: String) -> Bool {
        var one = stat(), two = stat()
        guard stat(first, &one) == 0, stat(second, &two) == 0, one.st_size == two.st_size else { return false }
        guard let a = FileHandle(forReadingAtPath: first), let b = FileHandle(forReadingAtPath: second) else { return false }
        defer { try? a.close(); try? b.close() }
        while true {
            let left = (try? a.read(upToCount: chunk)) ?? nil
            let right = (try? b.read(upToCount: chunk)) ?? nil
            if left != right { return false }
            if left == nil || left!.isEmpty { return true }
        }
    }
}
