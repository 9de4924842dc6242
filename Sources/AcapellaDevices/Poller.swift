#if canImport(Glibc)
import Glibc
#endif

/// A descriptor to wait on, and for what (readable, by default).
public struct PollDescriptor: Hashable, Sendable {
    /// The file descriptor.
    public var fd: Int32
    /// `POLLIN`-style event bits.
    public var events: Int16

    /// `POLLIN`: readable.
    public static let readable: Int16 = 0x001

    /// Wait for `fd` to be readable.
    public init(fd: Int32, events: Int16 = PollDescriptor.readable) {
        self.fd = fd
        self.events = events
    }
}

/// One `poll` over every input of the box (console, sequencer, GPIO lines,
/// a wake descriptor): whichever is ready first wakes the control loop at
/// once. The corresponding C function is `poll`.
public enum Poller {
    /// Waits up to `timeoutMilliseconds` (−1: forever) for any of
    /// `descriptors`; returns the ones that are ready (an interrupted wait
    /// returns none).
    public static func wait(_ descriptors: [PollDescriptor], timeoutMilliseconds: Int32) -> Set<Int32> {
        var entries = descriptors.map { pollfd(fd: $0.fd, events: $0.events, revents: 0) }
        let count = entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
        guard count > 0 else { return [] }
        return Set(entries.filter { $0.revents != 0 }.map(\.fd))
    }
}

/// A descriptor that can be made readable from anywhere — another thread
/// or a signal handler (`write` to a pipe is async-signal-safe) — to wake
/// a `Poller.wait` at once: the self-pipe. The corresponding C functions
/// are `pipe`, `fcntl`, `write` and `read`.
public final class WakeDescriptor: @unchecked Sendable {
    // @unchecked: the descriptors are fixed from init to deinit.
    /// The descriptor to poll (the pipe's read end).
    public let fd: Int32
    /// The pipe's write end.
    public let writeEnd: Int32

    /// A fresh pipe, both ends non-blocking and closed on exec.
    public init() {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends where end >= 0 {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        fd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        if fd >= 0 { close(fd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// Makes it readable (a full pipe is readable already).
    public func wake() { Self.wake(writeEnd) }

    /// The same from a signal handler, given the write end.
    public static func wake(_ writeEnd: Int32) {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Reads it back to unreadable.
    public func clear() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(fd, &buffer, buffer.count) > 0 {}
    }
}
