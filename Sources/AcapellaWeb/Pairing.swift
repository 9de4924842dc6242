/// Pairing a phone with the box: the box shows a 6-digit code (LCD and
/// console); a page that sends it back gets a session (a cookie) and a
/// CSRF token. Wrong codes are rate-limited per client address. A value
/// type: time and randomness come in from the caller, so it is tested
/// without clocks or threads.
public struct Pairing: Sendable {
    /// A paired page.
    public struct Session: Hashable, Sendable {
        /// The cookie's value: 32 hex digits from the system's random source.
        public var token: String
        /// Sent back by the page in `X-CSRF-Token` on every change.
        public var csrf: String
        public var createdMilliseconds: Int64
    }

    /// Why pairing failed.
    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        case wrongCode(attemptsLeft: Int)
        case tooManyAttempts(retryAfterSeconds: Int)

        public var description: String {
            switch self {
            case .wrongCode(let left): "wrong code; \(left) more tr\(left == 1 ? "y" : "ies") before a pause"
            case .tooManyAttempts(let seconds): "too many wrong codes; try again in \(seconds) s"
            }
        }
    }

    /// Wrong codes allowed per address in `window` before a `lockout`.
    public static let maximumFailures = 5
    public static let windowMilliseconds: Int64 = 60_000
    public static let lockoutMilliseconds: Int64 = 60_000
    /// Sessions kept at most (the oldest goes first).
    public static let maximumSessions = 64

    /// The code on the box's display.
    public let code: String
    private var sessions: [String: Session] = [:]
    private var failures: [String: [Int64]] = [:]

    /// Pairing with `code` (six digits).
    public init(code: String) {
        precondition(code.count == 6 && code.allSatisfy(\.isASCII) && code.allSatisfy(\.isNumber), "a pairing code is six digits")
        self.code = code
    }

    /// A six-digit code from random bytes.
    public static func code(from random: UInt64) -> String {
        let digits = String(random % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// Checks a code from `client`; on success a new session.
    public mutating func pair(code attempt: String, client: String, nowMilliseconds now: Int64,
                              token: () -> String) -> Result<Session, Failure> {
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
            failures[client] = recent
            return .failure(recent.count >= Self.maximumFailures
                ? .tooManyAttempts(retryAfterSeconds: Int(Self.lockoutMilliseconds / 1000))
                : .wrongCode(attemptsLeft: Self.maximumFailures - recent.count))
        }
        failures[client] = nil
        let session = Session(token: token(), csrf: token(), createdMilliseconds: now)
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
}
