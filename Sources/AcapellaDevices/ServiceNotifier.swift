internal import CSystemd

/// Talks to systemd when the box runs as a `Type=notify` service: ready
/// once the engine runs, a status line (song, part, state), and the
/// watchdog's heartbeat from the control loop (a hung loop is restarted).
/// Outside systemd (no `NOTIFY_SOCKET`) every call does nothing. The
/// corresponding C functions are `sd_notify` and `sd_watchdog_enabled`.
public final class ServiceNotifier {
    /// How often systemd wants a heartbeat, nanoseconds (nil: no watchdog).
    public let watchdogNanoseconds: Int64?
    private var lastStatus = ""
    private var lastBeat: Int64 = 0

    /// Reads the watchdog settings systemd passed in the environment.
    public init() {
        var microseconds: UInt64 = 0
        watchdogNanoseconds = sd_watchdog_enabled(0, &microseconds) > 0 && microseconds > 0 ? Int64(microseconds) * 1_000 : nil
    }

    /// The engine runs: start-up is over.
    public func ready(status: String) {
        lastStatus = status
        send("READY=1\nSTATUS=\(status)")
    }

    /// A new status line (sent only when it changed).
    public func status(_ text: String) {
        guard text != lastStatus else { return }
        lastStatus = text
        send("STATUS=\(text)")
    }

    /// The heartbeat, at most twice per watchdog interval (`now`: the
    /// monotonic clock, nanoseconds).
    public func heartbeat(now: Int64) {
        guard let interval = watchdogNanoseconds, now - lastBeat >= interval / 2 else { return }
        lastBeat = now
        send("WATCHDOG=1")
    }

    /// Shutting down on purpose.
    public func stopping() { send("STOPPING=1") }

    private func send(_ text: String) { _ = sd_notify(0, text) }
}
