import Foundation
import Synchronization

/// An HTTP request as the server hands it over: header names lower-case,
/// the body already read (and capped).
public struct WebRequest: Sendable {
    public var method: String
    public var path: String
    public var headers: [String: String]
    public var body: [UInt8]
    /// The client's address (for rate limits).
    public var client: String

    public init(method: String, path: String, headers: [String: String] = [:], body: [UInt8] = [], client: String = "test") {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.client = client
    }

    /// Cookies from the `Cookie` header.
    public var cookies: [String: String] {
        var cookies: [String: String] = [:]
        for pair in (headers["cookie"] ?? "").split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2 { cookies[parts[0]] = parts[1] }
        }
        return cookies
    }
}

/// A response: status, type, extra headers and body — or an event stream
/// the server feeds from a blocking producer on the connection's thread.
public enum WebReply: Sendable {
    case response(WebResponse)
    /// Server-Sent Events: `next` blocks until the next message is due and
    /// returns its bytes, or nil to end the stream.
    case events(@Sendable () -> [UInt8]?)
}

public struct WebResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, contentType: String, headers: [(String, String)] = [], body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    public static func json(_ object: [String: Any], status: Int = 200, headers: [(String, String)] = []) -> WebResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return WebResponse(status: status, contentType: "application/json", headers: headers, body: [UInt8](data))
    }

    public static func error(_ status: Int, _ message: String) -> WebResponse {
        json(["error": message], status: status)
    }
}

/// Who may look without pairing.
public enum GuestAccess: String, Sendable {
    /// Others in the room may watch the score and the cursor.
    case view
    /// Nothing without pairing.
    case none
}

/// What the page shows live: the engine's published snapshot and the
/// box's state, gathered by the box (never a lock the render thread takes).
public struct WebLiveState: Sendable, Hashable {
    public var serial: Int64 = 0
    public var state = "stopped"
    public var sample: Int64 = 0
    public var measure = 0
    public var beat = 0
    public var song = ""
    public var part = ""
    public var note: String?
    public var cents: Double?
    public var level: Double = 0
    public var review = false

    public init() {}

    var json: [String: Any] {
        var object: [String: Any] = ["serial": serial, "state": state, "sample": sample, "measure": measure, "beat": beat,
                                     "song": song, "part": part, "level": level, "review": review]
        object["note"] = note ?? NSNull()
        object["cents"] = cents ?? NSNull()
        return object
    }
}

/// The box's web application: routes, pairing, the security checks and
/// the live state. The server (libmicrohttpd) calls `handle` from its
/// connection threads; the only state here is behind one mutex, shared
/// with those threads and the box's control loop — never the render thread.
public final class WebApp: Sendable {
    /// Shipped page files by their URL path ("/", "/app.js"…): the only
    /// files served; nothing from a request is ever used as a file path.
    let assets: [String: (type: String, bytes: [UInt8])]
    let guests: GuestAccess
    let pairing: Mutex<Pairing>
    let live: @Sendable () -> WebLiveState
    let score: @Sendable () -> (svg: [UInt8], timeMap: [UInt8])?
    /// Carries out a control action by name ("play-pause"…); false when
    /// there is no such action.
    let act: @Sendable (String) -> Bool
    /// Between two event-stream messages (about 30 a second).
    let eventInterval: Duration
    let clock: @Sendable () -> Int64
    let random: @Sendable () -> String

    /// Body size the server accepts at most.
    public static let maximumBody = 8 << 20

    public init(assets: [String: (type: String, bytes: [UInt8])], guests: GuestAccess, pairingCode: String,
                live: @escaping @Sendable () -> WebLiveState, score: @escaping @Sendable () -> (svg: [UInt8], timeMap: [UInt8])?,
                act: @escaping @Sendable (String) -> Bool = { _ in false }, eventInterval: Duration = .milliseconds(33), clock: @escaping @Sendable () -> Int64,
                random: @escaping @Sendable () -> String) {
        self.assets = assets
        self.guests = guests
        pairing = Mutex(Pairing(code: pairingCode))
        self.live = live
        self.score = score
        self.act = act
        self.eventInterval = eventInterval
        self.clock = clock
        self.random = random
    }

    /// The code to show on the box.
    public var pairingCode: String { pairing.withLock { $0.code } }

    static let cookieName = "acapella-session"

    func session(_ request: WebRequest) -> Pairing.Session? {
        let token = request.cookies[Self.cookieName]
        return pairing.withLock { $0.session(token: token) }
    }

    /// A request from another site (a page elsewhere posting to the box):
    /// the browser says so in `Sec-Fetch-Site`, or its `Origin` names
    /// another host than the one asked.
    static func isCrossSite(_ request: WebRequest) -> Bool {
        if let site = request.headers["sec-fetch-site"], site != "same-origin", site != "none" { return true }
        if let origin = request.headers["origin"], let host = request.headers["host"] {
            let originHost = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
            return originHost != host
        }
        return false
    }

    public func handle(_ request: WebRequest) -> WebReply {
        if request.method == "GET" || request.method == "HEAD" {
            if let asset = assets[request.path] {
                return .response(WebResponse(status: 200, contentType: asset.type, headers: [("Cache-Control", "no-cache")], body: asset.bytes))
            }
            let paired = session(request)
            let mayView = paired != nil || guests == .view
            switch request.path {
            case "/api/state":
                guard mayView else { return .response(.error(401, "pair with the box first")) }
                var object = live().json
                object["paired"] = paired != nil
                if let paired { object["csrf"] = paired.csrf }
                return .response(.json(object))
            case "/score.svg", "/timemap.json":
                guard mayView else { return .response(.error(401, "pair with the box first")) }
                guard let score = score() else { return .response(.error(404, "no song is loaded")) }
                return .response(request.path == "/score.svg"
                    ? WebResponse(status: 200, contentType: "image/svg+xml", headers: [("Cache-Control", "no-cache")], body: score.svg)
                    : WebResponse(status: 200, contentType: "application/json", body: score.timeMap))
            case "/events":
                guard mayView else { return .response(.error(401, "pair with the box first")) }
                return .events(eventStream())
            default:
                return .response(.error(404, "no such page"))
            }
        }
        guard request.method == "POST" else { return .response(.error(405, "GET or POST")) }
        guard !Self.isCrossSite(request) else { return .response(.error(403, "requests from other sites are refused")) }
        if request.path == "/api/pair" {
            let code = String(decoding: request.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let now = clock()
            let result = pairing.withLock { $0.pair(code: code, client: request.client, nowMilliseconds: now, token: random) }
            switch result {
            case .success(let session):
                return .response(.json(["paired": true, "csrf": session.csrf],
                                       headers: [("Set-Cookie", "\(Self.cookieName)=\(session.token); Path=/; HttpOnly; SameSite=Strict")]))
            case .failure(let failure):
                if case .tooManyAttempts(let seconds) = failure {
                    return .response(.json(["error": failure.description], status: 429, headers: [("Retry-After", "\(seconds)")]))
                }
                return .response(.error(403, failure.description))
            }
        }
        guard let paired = session(request) else { return .response(.error(401, "pair with the box first")) }
        guard request.headers["x-csrf-token"] == paired.csrf else { return .response(.error(403, "missing or wrong CSRF token")) }
        if request.path == "/api/action" {
            let name = String(decoding: request.body.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard act(name) else { return .response(.error(400, "no action named '\(name.prefix(40))'")) }
            return .response(.json(["done": name]))
        }
        return .response(.error(404, "no such action"))
    }

    /// `data: {live state}` about 30 times a second, only when it changed
    /// (and at least once a second, so the page sees the stream is alive).
    func eventStream() -> @Sendable () -> [UInt8]? {
        let last = Mutex<(WebLiveState?, Int)>((nil, 0))
        let interval = eventInterval
        let live = self.live
        return {
            while true {
                Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18 + Double(interval.components.seconds))
                let state = live()
                let send = last.withLock { previous -> Bool in
                    previous.1 += 1
                    if previous.0 != state || previous.1 >= 30 {
                        previous = (state, 0)
                        return true
                    }
                    return false
                }
                guard send else { continue }
                let data = (try? JSONSerialization.data(withJSONObject: state.json, options: [.sortedKeys])) ?? Data()
                return Array("data: ".utf8) + [UInt8](data) + Array("\n\n".utf8)
            }
        }
    }
}
