internal import CChild

#if canImport(Glibc)
import Glibc
#endif

/// A program the box runs beside itself (the page's engraver, a take's
/// analysis): in a process group of its own, killed when the box dies
/// (`PR_SET_PDEATHSIG`), and bounded — its data memory and CPU time by
/// `setrlimit`, its wall time by the caller, who kills the whole group when
/// it runs over. So a hostile song can cost a child its life, never the
/// box its memory, and nothing the box started outlives it.
public enum BoundedChild {
    /// What a child may use.
    public struct Limits: Sendable, Hashable {
        /// Bytes of data (heap and private mappings; `RLIMIT_DATA`).
        public var memoryBytes: Int
        /// Seconds of CPU (`RLIMIT_CPU`).
        public var cpuSeconds: Int
        /// Seconds of wall time before the group is killed.
        public var wallSeconds: Int
        /// How much lower its priority is than the caller's (`nice`).
        public var niceIncrement: Int

        /// Limits.
        public init(memoryBytes: Int, cpuSeconds: Int, wallSeconds: Int, niceIncrement: Int = 10) {
            self.memoryBytes = memoryBytes
            self.cpuSeconds = cpuSeconds
            self.wallSeconds = wallSeconds
            self.niceIncrement = niceIncrement
        }
    }

    /// How a child ended.
    public struct Outcome: Sendable, Hashable {
        /// Its exit status, when it exited.
        public var status: Int32?
        /// The signal that ended it, when one did.
        public var signal: Int32?
        /// It ran past its wall time and was killed.
        public var timedOut: Bool
        /// What it wrote (stdout and stderr together; the first
        /// `outputLimit` bytes).
        public var output: String

        /// It exited with status 0.
        public var succeeded: Bool { status == 0 }

        /// Why it did not succeed, in words ("killed: its 512 MB of memory
        /// ran out"), or nil when it did.
        public func failure(limits: Limits) -> String? {
            if succeeded { return nil }
            if timedOut { return "stopped after \(limits.wallSeconds) s (its time limit)" }
            let said = output.split(separator: "\n").last.map(String.init)
            if let signal {
                switch signal {
                case SIGXCPU: return "stopped after \(limits.cpuSeconds) s of CPU (its limit)"
                case SIGKILL: return "killed (by the system: out of memory?)"
                // A Swift program whose allocation fails traps.
                case SIGILL, SIGTRAP, SIGABRT, SIGSEGV: return "ran out of its \(limits.memoryBytes >> 20) MB of memory (or crashed)"
                default: return "ended by signal \(signal)"
                }
            }
            return said.flatMap { $0.isEmpty ? nil : $0 } ?? "exit \(status ?? -1)"
        }
    }

    /// Runs `path` with `arguments` and waits for it (at most
    /// `limits.wallSeconds`), keeping the first `outputLimit` bytes it
    /// writes; the reason when it would not start.
    public static func run(_ path: String, _ arguments: [String], limits: Limits, outputLimit: Int = 65_536) -> Result<Outcome, DeviceError> {
        var pipeEnds: [Int32] = [0, 0]
        let piped = acapella_pipe_cloexec(&pipeEnds)
        guard piped == 0 else { return .failure(DeviceError(.configuration, "pipe: \(String(cString: strerror(-piped)))")) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The box's environment, but a child that runs out of memory just
        // ends (no crash report of its own to read).
        var environment: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let line = String(cString: pointer)
            if !line.hasPrefix("SWIFT_BACKTRACE=") { environment.append(line) }
            entry += 1
        }
        let envp = (environment + ["SWIFT_BACKTRACE=enable=no"]).map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        let pid = argv.withUnsafeBufferPointer { arguments in
            envp.withUnsafeBufferPointer { environment in
                acapella_spawn_bounded(path, arguments.baseAddress, environment.baseAddress, pipeEnds[1], limits.memoryBytes, limits.cpuSeconds,
                                       Int32(limits.niceIncrement))
            }
        }
        close(pipeEnds[1])
        guard pid > 0 else {
            close(pipeEnds[0])
            return .failure(DeviceError(.configuration, "\(path): cannot start (\(String(cString: strerror(-pid))))"))
        }
        let deadline = MonotonicClock.nanoseconds() + Int64(limits.wallSeconds) * 1_000_000_000
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        var timedOut = false
        var open = true
        while open {
            let left = deadline - MonotonicClock.nanoseconds()
            if left <= 0 {
                timedOut = true
                kill(-pid, SIGKILL)
                break
            }
            var request = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, Int32(min(left / 1_000_000 + 1, 1_000)))
            if ready < 0 && errno != EINTR { break }
            guard ready > 0 else { continue }
            let count = read(pipeEnds[0], &buffer, buffer.count)
            if count > 0 {
                if output.count < outputLimit { output += buffer[0..<min(count, outputLimit - output.count)] }
            } else if count == 0 || errno != EINTR {
                open = false
            }
        }
        close(pipeEnds[0])
        var status: Int32 = 0
        while true {
            let waited = waitpid(pid, &status, timedOut ? 0 : WNOHANG)
            if waited == pid { break }
            if waited < 0 && errno != EINTR { break }
            if waited == 0 {
                // The output closed but the child lingers: wait out its time, then kill the group.
                if MonotonicClock.nanoseconds() >= deadline {
                    timedOut = true
                    kill(-pid, SIGKILL)
                } else {
                    usleep(10_000)
                }
            }
        }
        // Anything it started goes with it.
        kill(-pid, SIGKILL)
        let exited = status & 0x7F == 0
        return .success(Outcome(status: exited ? (status >> 8) & 0xFF : nil, signal: exited ? nil : status & 0x7F, timedOut: timedOut,
                                output: String(decoding: output, as: UTF8.self)))
    }
}
