import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The box as a client of LCDproc's `LCDd` (its text protocol over TCP,
/// default localhost:13666): one screen with a line widget per display
/// row. `LCDd`'s drivers cover HD44780 displays on I2C backpacks and many
/// more. When `LCDd` goes away, `show` says so and later calls reconnect.
public final class LCDClient {
    /// Display size `LCDd` reported.
    public private(set) var columns = 0
    public private(set) var rows = 0
    /// Where LCDd is.
    public let host: String
    public let port: UInt16
    private var socket: Int32 = -1
    private var lastAttempt: ContinuousClock.Instant?

    /// A client for `LCDd` at `host`:`port`; connects on first use.
    public init(host: String = "127.0.0.1", port: UInt16 = 13_666) {
        self.host = host
        self.port = port
    }

    deinit { if socket >= 0 { close(socket) } }

    /// Whether a connection is up.
    public var isConnected: Bool { socket >= 0 }

    /// Connects and sets up the screen. Throws a one-line reason.
    public func connect() throws(DeviceError) {
        disconnect()
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw DeviceError(.configuration, "LCD: cannot make a socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(descriptor)
            throw DeviceError(.configuration, "LCD: '\(host)' is not an IPv4 address")
        }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw DeviceError(.lost, "LCD: no LCDd at \(host):\(port) (\(reason)); the box runs on without the display")
        }
        socket = descriptor
        let greeting = try exchange("hello")
        // "connect LCDproc 0.5.9 protocol 0.3 lcd wid 16 hgt 2 cellwid 5 cellhgt 8"
        let words = greeting.split(separator: " ")
        if let index = words.firstIndex(of: "wid"), index + 1 < words.count { columns = Int(words[index + 1]) ?? 0 }
        if let index = words.firstIndex(of: "hgt"), index + 1 < words.count { rows = Int(words[index + 1]) ?? 0 }
        guard greeting.hasPrefix("connect"), columns > 0, rows > 0 else {
            disconnect()
            throw DeviceError(.configuration, "LCD: LCDd did not greet as expected ('\(greeting)')")
        }
        _ = try exchange("client_set -name acapella")
        _ = try exchange("screen_add box")
        _ = try exchange("screen_set box -priority foreground -heartbeat off -name acapella")
        for row in 1...rows { _ = try exchange("widget_add box line\(row) string") }
    }

    func disconnect() {
        if socket >= 0 { close(socket) }
        socket = -1
    }

    /// Sends a command and returns the reply line that answers it (LCDd may
    /// interleave `listen`/`ignore` notices).
    private func exchange(_ command: String) throws(DeviceError) -> String {
        let bytes = Array((command + "\n").utf8)
        guard send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            disconnect()
            throw DeviceError(.lost, "LCD: LCDd went away")
        }
        var reply = ""
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else {
                disconnect()
                throw DeviceError(.lost, "LCD: LCDd went away")
            }
            reply += String(decoding: buffer[0..<count], as: UTF8.self)
            let lines = reply.split(separator: "\n").map(String.init)
            if let answer = lines.first(where: { $0.hasPrefix("success") || $0.hasPrefix("huh?") || $0.hasPrefix("connect") }) {
                if answer.hasPrefix("huh?") { throw DeviceError(.configuration, "LCD: LCDd refused '\(command)': \(answer)") }
                return answer
            }
        }
    }

    /// Shows `lines` (one per row, cut to the width). Returns false when the
    /// display is not there; a later call retries the connection (at most
    /// every two seconds).
    @discardableResult
    public func show(_ lines: [String]) -> Bool {
        if socket < 0 {
            let clock = ContinuousClock()
            if let last = lastAttempt, clock.now - last < .seconds(2) { return false }
            lastAttempt = clock.now
            do { try connect() } catch { return false }
            lastAttempt = nil  // only failed attempts wait before the next
        }
        do {
            for (index, line) in lines.prefix(rows).enumerated() {
                let text = String(line.prefix(columns)).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                _ = try exchange("widget_set box line\(index + 1) 1 \(index + 1) \"\(text)\"")
            }
            return true
        } catch {
            return false
        }
    }
}
