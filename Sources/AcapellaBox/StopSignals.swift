public import AcapellaDevices
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT (Ctrl-C, `systemctl stop`, a closed
/// terminal, Ctrl-\) ask the box or a recording to finish what it is doing —
/// a take in progress is finished and kept — and stop. SIGQUIT too: by
/// default it dumps core, and the Swift runtime reported it as a crash with
/// a backtrace, over a take that is in fact safe. The flag is an
/// atomic, not a plain global: the optimizer may hoist a plain load out of
/// a control loop, and the loop would never see the signal.
public enum StopSignals {
    /// The signal that arrived (0: none yet).
    static let arrived = Atomic<Int32>(0)
    /// The write end of a wake pipe the handler writes to (−1: none), so a
    /// control loop asleep in `poll` wakes at once.
    static let wakeWriteEnd = Atomic<Int32>(-1)

    /// Wakes `wake` when a stop signal arrives.
    public static func wake(_ wake: WakeDescriptor) {
        wakeWriteEnd.store(wake.writeEnd, ordering: .relaxed)
    }

    /// Whether a stop signal has arrived.
    public static var received: Bool { arrived.load(ordering: .relaxed) != 0 }

    /// Installs the handlers and unblocks the signals (a parent may have
    /// left them blocked; threads started afterwards inherit the mask).
    /// Call once, from the main thread, before starting other threads.
    public static func install() {
        _ = received  // initializes the flag before a handler can touch it
        var set = sigset_t()
        sigemptyset(&set)
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            signal(number, stopSignalHandler)
            sigaddset(&set, number)
        }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}

/// The handler: only sets the flag (a lock-free atomic store is
/// async-signal-safe). A named function: a closure written at top level
/// would be main-actor isolated, and a signal may land on any thread.
func stopSignalHandler(_ number: Int32) {
    StopSignals.arrived.store(number, ordering: .relaxed)
    let wake = StopSignals.wakeWriteEnd.load(ordering: .relaxed)
    if wake >= 0 { WakeDescriptor.wake(wake) }  // write(2): async-signal-safe
}
