/// Pairing a phone with the box: the box shows a 6-digit code (LCD and
/// console); a page that sends it back gets a session (a cookie) and a
/// CSRF token. A value type: time and randomness come in from the caller,
/// so it is tested without clocks or threads.
///
/// Guessing is made hopeless, not merely slow: wrong codes are limited per
/// client (an address; a whole IPv6 /64 or the loopback /8, which one host
/// can speak from with many addresses: `WebClient.group`), and — whatever
/// the addresses — after `wrongCodesPerCode` wrong codes the code itself
/// is replaced and pairing pauses for everyone: a guesser gets about twenty
/// tries at each code, one in fifty thousand, while the box says on its
/// display that someone is guessing and shows the new code to the singer.
public struct Pairing: Sendable {
    /// A paired page.
    public struct Session: Hashable, Sendable {
        /// The cookie's value: 32 hex digits from the system's random source.
        public var token: String
        /// Sent back by the page in `X-CSRF-Token` on every change.
        public var csrf: String
        public var createdMilliseconds: Int64
        /// The client group it paired from (`WebClient.group`).
        public var group: String = ""
    }

    /// Why pairing failed.
    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        case wrongCode(attemptsLeft: Int)
        case tooManyAttempts(retryAfterSeconds: Int)
        /// Too many wrong codes from anywhere: the code was replaced and
        /// pairing pauses for everyone.
        case codeReplaced(retryAfterSeconds: Int)

        public var description: String {
            switch self {
            case .wrongCode(let left): "wrong code; \(left) more tr\(left == 1 ? "y" : "ies") before a pause"
            case .tooManyAttempts(let seconds): "too many wrong codes; try again in \(seconds) s"
            case .codeReplaced(let seconds): "too many wrong codes were tried: the box now shows a new code; try it in \(seconds) s"
            }
        }

        /// Seconds to wait, when there is a wait.
        public var retryAfterSeconds: Int? {
            switch self {
            case .wrongCode: nil
            case .tooManyAttempts(let seconds), .codeReplaced(let seconds): seconds
            }
        }
    }

    /// What the box should hear about (and say).
    public enum Event: Hashable, Sendable {
        /// A wrong code from `group`: its failures in the last window, and
        /// the wrong codes since the code was shown.
        case wrongCode(group: String, fromGroup: Int, sinceCodeShown: Int)
        /// The code was replaced after `wrongCodes` wrong ones.
        case codeReplaced(newCode: String, wrongCodes: Int)
    }

    /// Wrong codes allowed per client group in `window` before a `lockout`.
    public static let maximumFailures = 5
    public static let windowMilliseconds: Int64 = 60_000
    public static let lockoutMilliseconds: Int64 = 60_000
    /// Wrong codes (from anywhere) after which the code is replaced, and
    /// how long pairing then pauses for everyone.
    public static let wrongCodesPerCode = 20
    public static let pauseMilliseconds: Int64 = 30_000
    /// Sessions kept at most (the oldest goes first).
    public static let maximumSessions = 64
    /// Client groups whose failures are remembered at most (the oldest forgotten first).
    static let maximumTrackedGroups = 4_096

    /// The code on the box's display.
    public private(set) var code: String
    private var sessions: [String: Session] = [:]
    private var failures: [String: [Int64]] = [:]
    private var wrongSinceCodeShown = 0
    private var pausedUntil: Int64 = .min
    /// Events since `takeEvents`.
    private var events: [Event] = []

    /// Pairing with `code` (six digits).
    public init(code: String) {
        precondition(Self.isCode(code), "a pairing code is six digits")
        self.code = code
    }

    static func isCode(_ code: String) -> Bool { code.count == 6 && code.allSatisfy(\.isASCII) && code.allSatisfy(\.isNumber) }

    /// A six-digit code from random bytes.
    public static func code(from random: UInt64) -> String {
        let digits = String(random % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// Checks a code from `client` (its group, `WebClient.group`); on
    /// success a new session. `newCode` gives the code that replaces this
    /// one when too many wrong ones were tried.
    public mutating func pair(code attempt: String, client: String, nowMilliseconds now: Int64,
                              token: () -> String, newCode: () -> String = { "000000" }) -> Result<Session, Failure> {
        if now < pausedUntil {
            return .failure(.codeReplaced(retryAfterSeconds: Int((pausedUntil - now + 999) / 1000)))
        }
        var recent = (failures[client] ?? []).filter { now - $0 < Self.windowMilliseconds + Self.lockoutMilliseconds }
        if recent.count >= Self.maximumFailures, let last = recent.last, now - last < Self.lockoutMilliseconds {
            failures[client] = recent
            return .failure(.tooManyAttempts(retryAfterSeconds: Int((Self.lockoutMilliseconds - (now - last) + 999) / 1000)))
        }
        recent = recent.filter { now - $0 < Self.windowMilliseconds }
        // Constant-time comparison: the code's digits are not timed out.
        var difference = attempt.utf8.count == code.utf8.count ? 0 : 1
        for (a, b) in zip(attempt.utf8, code.utf8) { difference |= Int(a ^ b) }
        guard difference == 0 else {
            recent.append(now)
            if failures[client] == nil, failures.count >= Self.maximumTrackedGroups {
                // Forget the group whose last failure is oldest.
                if let oldest = failures.min(by: { ($0.value.last ?? .min) < ($1.value.last ?? .min) })?.key { failures[oldest] = nil }
            }
            failures[client] = recent
            wrongSinceCodeShown += 1
            events.append(.wrongCode(group: client, fromGroup: recent.count, sinceCodeShown: wrongSinceCodeShown))
            if wrongSinceCodeShown >= Self.wrongCodesPerCode {
                let replaced = wrongSinceCodeShown
                var fresh = newCode()
                if !Self.isCode(fresh) || fresh == code { fresh = Self.code(from: UInt64(now) &* 0x9E37_79B9_7F4A_7C15 ^ 0x2545_F491_4F6C_DD1D) }
                code = fresh
                wrongSinceCodeShown = 0
                pausedUntil = now + Self.pauseMilliseconds
                events.append(.codeReplaced(newCode: fresh, wrongCodes: replaced))
                return .failure(.codeReplaced(retryAfterSeconds: Int(Self.pauseMilliseconds / 1000)))
            }
            return .failure(recent.count >= Self.maximumFailures
                ? .tooManyAttempts(retryAfterSeconds: Int(Self.lockoutMilliseconds / 1000))
                : .wrongCode(attemptsLeft: Self.maximumFailures - recent.count))
        }
        failures[client] = nil
        var session = Session(token: token(), csrf: token(), createdMilliseconds: now)
        session.group = client
        if sessions.count >= Self.maximumSessions, let oldest = sessions.values.min(by: { $0.createdMilliseconds < $1.createdMilliseconds }) {
            sessions[oldest.token] = nil
        }
        sessions[session.token] = session
        return .success(session)
    }

    /// The session a cookie names, if any.
    public func session(token: String?) -> Session? {
        token.flatMap { sessions[$0] }
    }

    /// Whether a page paired from `group` (its connections are let in
    /// first when the box is busy).
    public func hasSession(group: String) -> Bool {
        sessions.values.contains { $0.group == group }
    }

    /// The events since the last call.
    public mutating func takeEvents() -> [Event] {
        defer { events = [] }
        return events
    }
}

/// Where a request comes from, as the limits see it: a client's address,
/// or the network one host can speak from with many addresses.
public enum WebClient {
    /// The group an address's connections and wrong codes count in: an
    /// IPv4 address as it is, any loopback address (127.0.0.0/8, ::1) as
    /// one, an IPv6 address by its /64 (one host's SLAAC and privacy
    /// addresses share it), an IPv4-mapped IPv6 address as its IPv4.
    public static func group(_ address: String) -> String {
        var text = address
        if text.hasPrefix("::ffff:"), text.contains(".") { text = String(text.dropFirst(7)) }
        if text.contains(".") && !text.contains(":") {
            return text.hasPrefix("127.") ? "127.0.0.0/8" : text
        }
        guard text.contains(":") else { return text }
        if text == "::1" { return "127.0.0.0/8" }
        // Expand "a:b::c" to eight hextets; the first four are the /64.
        let halves = text.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false).map { $0.split(separator: ":", omittingEmptySubsequences: true).map(String.init) }
        var hextets = halves[0]
        if halves.count == 2 { hextets += Array(repeating: "0", count: max(0, 8 - halves[0].count - halves[1].count)) + halves[1] }
        let prefix = hextets.prefix(4).map { String(UInt16($0, radix: 16) ?? 0, radix: 16) }
        return prefix.joined(separator: ":") + "::/64"
    }
}
