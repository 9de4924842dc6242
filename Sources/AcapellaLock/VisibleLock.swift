#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a pthread mutex, for state that control threads and the
/// butler share (never the render thread, which takes no lock). Unlike
/// Synchronization's `Mutex` (futex words inside the standard library,
/// which is not built with Thread Sanitizer), its locking is seen by
/// Thread Sanitizer, so the race check sees its accesses ordered.
public final class VisibleLock<Value>: @unchecked Sendable {
    // @unchecked: `value` is touched only with `mutex` held.
    private var value: Value
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init(_ value: Value) {
        self.value = value
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
