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
///
/// Pairing lasts: a phone paired stays paired across the box's restarts,
/// and the code stays the same until the singer asks for a new one (or a
/// guesser forces one). What lasts is `Saved` (the box keeps it in its
/// data folder): the code, and each session by its token's hash only —
/// whoever reads the file cannot sign in with what is in it.
public struct Pairing: Sendable {
    /// A paired page.
    public struct Session: Hashable, Sendable, Codable {
        /// The cookie's value: 32 hex digits from the system's random
        /// source (only on the sessions `pair` and `session(token:)`
        /// return; what is kept is its hash).
        public var token: String
        /// Sent back by the page in `X-CSRF-Token` on every change.
        public var csrf: String
        public var createdMilliseconds: Int64
        /// The client group it paired from (`WebClient.group`).
        public var group: String = ""
    }

    /// What lasts across restarts: the code, and the sessions in the order
    /// they paired, each by its token's hash.
    public struct Saved: Hashable, Sendable, Codable {
        public struct Kept: Hashable, Sendable, Codable {
            public var tokenHash: String
            public var csrf: String
            public var group: String
            public init(tokenHash: String, csrf: String, group: String) {
                self.tokenHash = tokenHash
                self.csrf = csrf
                self.group = group
            }
        }
        public var code: String
        public var sessions: [Kept]
        public init(code: String, sessions: [Kept] = []) {
            self.code = code
            self.sessions = sessions
        }
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
        /// Every phone was signed out from the page; `newCode` pairs now.
        case everyoneSignedOut(newCode: String)
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
    /// Sessions by their token's hash (the token itself is not kept).
    private var sessions: [String: Session] = [:]
    /// Pairing order: a session's place among the others (the oldest goes
    /// first when there are too many).
    private var order: [String: Int] = [:]
    private var nextOrder = 0
    /// The hash a token is kept by (SHA-256 in the box).
    private let hash: @Sendable (String) -> String
    /// Moves on whenever what `saved` holds changes (a pairing, a sign-out,
    /// a new code): the box saves when it has moved.
    public private(set) var revision = 0
    private var failures: [String: [Int64]] = [:]
    private var wrongSinceCodeShown = 0
    private var pausedUntil: Int64 = .min
    /// Events since `takeEvents`.
    private var events: [Event] = []

    /// Pairing with `code` (six digits); tokens kept by `hash`.
    public init(code: String, hash: @escaping @Sendable (String) -> String = { $0 }) {
        precondition(Self.isCode(code), "a pairing code is six digits")
        self.code = code
        self.hash = hash
    }

    /// Pairing as it was saved (a code that is not six digits is replaced
    /// by `newCode`; a session without its hash or CSRF token is dropped).
    public init(saved: Saved, hash: @escaping @Sendable (String) -> String, newCode: () -> String) {
        let code = Self.isCode(saved.code) ? saved.code : newCode()
        self.init(code: Self.isCode(code) ? code : "000000", hash: hash)
        for kept in saved.sessions.suffix(Self.maximumSessions) where !kept.tokenHash.isEmpty && !kept.csrf.isEmpty && sessions[kept.tokenHash] == nil {
            sessions[kept.tokenHash] = Session(token: "", csrf: kept.csrf, createdMilliseconds: 0, group: kept.group)
            order[kept.tokenHash] = nextOrder
            nextOrder += 1
        }
    }

    /// What lasts: the code and the sessions in pairing order.
    public var saved: Saved {
        Saved(code: code, sessions: sessions.keys.sorted { order[$0, default: 0] < order[$1, default: 0] }.map { key in
            Saved.Kept(tokenHash: key, csrf: sessions[key]!.csrf, group: sessions[key]!.group)
        })
    }

    /// Signs out the page holding `token`; whether it was paired.
    public mutating func signOut(token: String) -> Bool {
        let key = hash(token)
        guard sessions.removeValue(forKey: key) != nil else { return false }
        order[key] = nil
        revision += 1
        return true
    }

    /// Signs out every page and shows a new code (`newCode`).
    public mutating func signOutEveryone(newCode: String) {
        sessions = [:]
        order = [:]
        if Self.isCode(newCode) { code = newCode }
        wrongSinceCodeShown = 0
        revision += 1
        events.append(.everyoneSignedOut(newCode: code))
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
                revision += 1
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
        if sessions.count >= Self.maximumSessions, let oldest = sessions.keys.min(by: { order[$0, default: 0] < order[$1, default: 0] }) {
            sessions[oldest] = nil
            order[oldest] = nil
        }
        let key = hash(session.token)
        var kept = session
        kept.token = ""
        sessions[key] = kept
        order[key] = nextOrder
        nextOrder += 1
        revision += 1
        return .success(session)
    }

    /// The session a cookie names, if any.
    public func session(token: String?) -> Session? {
        guard let token, !token.isEmpty, var session = sessions[hash(token)] else { return nil }
        session.token = token
        return session
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
