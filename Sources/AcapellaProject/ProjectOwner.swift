import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The thread a `Project` belongs to. A project is one thread's value:
/// the thread that opened it (or the one it was handed to with
/// `Project.adopt`) reads and changes it, and nobody else — the
/// recorder's writer thread hands its takes to that thread instead of
/// touching the manifest (`Recorder`). Every read or change of the
/// manifest checks it.
///
/// Touching a project from another thread is a programming error, never
/// bad input: it is counted (`violations`), said once on standard error,
/// and fatal where asked to be (`ACAPELLA_CHECK_OWNER=abort`, which the
/// test suite sets, and every debug build), so a test that reaches it
/// fails rather than racing quietly.
public enum ProjectOwnership {
    private static let count = Atomic<Int>(0)
    private static let fatal: Bool = {
        #if DEBUG
        return true
        #else
        return ProcessInfo.processInfo.environment["ACAPELLA_CHECK_OWNER"] == "abort"
        #endif
    }()

    /// Accesses made off a project's owner thread since the process started.
    public static var violations: Int { count.load(ordering: .relaxed) }

    static func violated(_ path: String, _ function: StaticString) {
        let first = count.add(1, ordering: .relaxed).oldValue == 0
        let line = "acapella: internal error: \(path) used off the thread that owns it (in \(function)); tell the people who made this box\n"
        if first || fatal { FileHandle.standardError.write(Data(line.utf8)) }
        if fatal { fatalError("project used off its owner thread (\(function))") }
    }
}

/// Which thread owns one project (see `ProjectOwnership`).
struct OwnerThread {
    private var thread = pthread_self()

    var isCurrent: Bool { pthread_equal(thread, pthread_self()) != 0 }

    mutating func becomeCurrent() { thread = pthread_self() }
}

extension Project {
    /// This thread owns the project from now on: the one that opened it
    /// has handed it over and no longer touches it.
    public func adopt() {
        owner.becomeCurrent()
    }

    /// Checks that the calling thread owns the project.
    @inline(__always)
    func checkOwner(_ function: StaticString = #function) {
        if !owner.isCurrent { ProjectOwnership.violated(path, function) }
    }
}
