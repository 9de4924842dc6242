import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Tells when files arrive in a folder (inotify): a file closed after
/// writing, or moved in whole. The descriptor goes into the control loop's
/// poll; when it is readable, `drain` empties it and the folder is looked
/// at again. The corresponding C functions are `inotify_init1`,
/// `inotify_add_watch` and `read`.
public final class FolderWatch {
    /// The descriptor to poll.
    public let fileDescriptor: Int32
    /// The folder watched.
    public let folder: String

    /// Watches `folder` (which must exist); the error says why not.
    public init(_ folder: String) throws(DeviceError) {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw DeviceError(.configuration, "\(folder): cannot watch for new files: \(String(cString: strerror(errno)))") }
        let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)
        guard inotify_add_watch(descriptor, folder, mask) >= 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw DeviceError(.configuration, "\(folder): cannot watch for new files: \(reason)")
        }
        fileDescriptor = descriptor
        self.folder = folder
    }

    deinit { close(fileDescriptor) }

    /// Reads every pending event; whether there were any.
    @discardableResult
    public func drain() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        var any = false
        while true {
            let got = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
            if got <= 0 { return any }
            any = true
        }
    }
}
