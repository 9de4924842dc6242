public import AcapellaWeb
internal import CMicroHTTPD
import Foundation
import Glibc
import AcapellaLock

/// The box's HTTP server: libmicrohttpd, a thread per connection (an event
/// stream blocks only its own), every request handed to a `WebApp`.
///
/// Held for the singer against a hostile or broken client (`Connections`):
/// 64 connections in all. A client group (an address, a whole IPv6 /64,
/// the loopback /8: `WebClient.group`) that a page paired from may hold
/// 32, any other 4, and the groups no page paired from 40 together, so room
/// is always kept for paired phones. A connection is a paired page's while
/// its requests carry a live session (read with each request's head; a
/// session signed out no longer counts); the others are unproven. At a
/// limit the slowest unproven connection that may go — still sending its
/// head or a small body, idle between requests, or 10 s into an answer
/// it reads slowly — is shut to make room (in its group first), so a
/// paired phone is served whoever shares its network; only when none can
/// go is a connection refused. A connection that has not sent its whole
/// request head within 10 s, or a body within its time, is shut, and an
/// unproven one still being answered after 60 s; a body is read only once
/// the request may have one (a session, its CSRF token, the box's name in
/// `Host`), each within its route's size: a small one held (all together
/// within 16 MiB), an upload written to the disk as it arrives (all
/// together within 64 MiB).
public final class WebServer: @unchecked Sendable {
    // @unchecked: `daemon` is written once in init and read in stop();
    // `connections` is thread-safe.
    private var daemon: OpaquePointer?
    private let app: WebApp
    let connections: Connections
    /// The port listened on.
    public let port: UInt16

    /// Connections in all; what a client group may hold (one a page
    /// paired from: more), and the groups no page paired from together.
    static let connectionLimit = 64
    static let unpairedPerGroup = 4
    static let pairedPerGroup = 32
    static let unpairedInAll = 40
    /// libmicrohttpd's own cap, above `connectionLimit`: room for the
    /// connections being shut to make room while new ones come in.
    static let hardConnectionLimit = connectionLimit + 16
    /// libmicrohttpd's cap per address (a phone is one).
    static let perAddressLimit = 16
    /// Seconds an unproven connection's answer may take before it may be
    /// shut to make room, and before it is shut whatever happens.
    static let slowAnswerSeconds: Int64 = 10
    static let longestUnprovenAnswer: Int64 = 60
    /// Upload bodies on the disk at once, every connection together.
    static let spoolBudget = 64 << 20
    /// Seconds a connection has to send its request head, a small body, an
    /// upload; seconds of silence before an idle connection is closed.
    static let headDeadline = 10
    static let smallBodyDeadline = 10
    static let uploadDeadline = 120
    static let idleSeconds: UInt32 = 30
    /// Bodies held at once, every connection together.
    static let bodyBudget = 16 << 20

    /// Where an upload's body is written as it arrives (a file with no
    /// name: nothing is left behind), never held in memory.
    let spoolFolder: String
    /// Uploads are read back and handled one at a time: only one upload's
    /// song is ever in the box's memory, however many arrive at once.
    let uploadTurn = NSLock()

    /// Starts serving `app` on `port` (all interfaces, or `bind`: an IPv4
    /// or IPv6 address). Throws with the reason when the port is taken.
    /// Uploads are spooled in `spoolFolder` (the system's temporary folder
    /// when nil).
    public init(app: WebApp, port: UInt16, bind: String? = nil, spoolFolder: String? = nil) throws(WebServerError) {
        self.app = app
        self.port = port
        self.spoolFolder = spoolFolder ?? NSTemporaryDirectory()
        connections = Connections(app: app)
        let context = Unmanaged.passUnretained(self).toOpaque()
        var started: OpaquePointer?
        func start(_ address: UnsafePointer<sockaddr>?) -> OpaquePointer? {
            acapella_mhd_start(port, address, webAccessHandler, context, webRequestCompleted, webAcceptPolicy, webConnectionNotified,
                               UInt32(Self.hardConnectionLimit), UInt32(Self.perAddressLimit), Self.idleSeconds, 256 << 10)
        }
        if let bind {
            var v4 = sockaddr_in()
            var v6 = sockaddr_in6()
            if inet_pton(AF_INET, bind, &v4.sin_addr) == 1 {
                v4.sin_family = sa_family_t(AF_INET)
                v4.sin_port = port.bigEndian
                started = withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { start($0) } }
            } else if inet_pton(AF_INET6, bind, &v6.sin6_addr) == 1 {
                v6.sin6_family = sa_family_t(AF_INET6)
                v6.sin6_port = port.bigEndian
                started = withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { start($0) } }
            } else {
                throw WebServerError("web.bind: '\(bind)' is not an IPv4 or IPv6 address")
            }
        } else {
            started = start(nil)
        }
        guard let started else { throw WebServerError("cannot serve on port \(port) (in use, or not permitted)") }
        daemon = started
        connections.startWatching()
    }

    /// Stops serving (open event streams end).
    public func stop() {
        connections.stopWatching()
        if let daemon { MHD_stop_daemon(daemon) }
        daemon = nil
    }

    deinit { stop() }

    func handle(_ request: WebRequest) -> WebReply { app.handle(request) }

    func admit(method: String, path: String, headers: [String: String], client: String) -> WebApp.Admission {
        app.admit(method: method, path: path, headers: headers, client: client)
    }

    func carriesSession(_ headers: [String: String]) -> Bool { app.carriesSession(headers) }

    /// What the server has refused so far, for a line in the box's log.
    public var refusals: Connections.Refusals { connections.refusals }
}

/// The server's connections, as the limits see them: each with its client
/// group, whether its last request carried a live session (proven, with
/// the cookies it sent, asked again when room is needed: a session signed
/// out since no longer counts), its socket and what it is doing since
/// when; watched once a second for a request head or body that takes too
/// long, or an unproven answer that does (shut down: libmicrohttpd then
/// closes it).
public final class Connections: @unchecked Sendable {
    // @unchecked: everything is behind `state`.
    public struct Refusals: Hashable, Sendable {
        /// Connections refused at accept (nothing unproven could make room).
        public var atAccept = 0
        /// Unproven connections shut to make room for a new one.
        public var madeRoom = 0
        /// Connections shut for a request head or body too slow, or an unproven answer too long.
        public var tooSlow = 0
        /// Bodies refused for the memory (or disk) they would take.
        public var overBudget = 0
    }

    /// What a connection is doing: its request head or body arriving, an
    /// answer going out (an event stream: until it ends), or waiting for
    /// its next request.
    enum Phase: Sendable, Equatable { case head, body(deadline: Int64), answering, streaming, idle }

    struct Entry: Sendable {
        var group: String
        /// Its last request carried a live session: a paired page's.
        var proven = false
        /// The cookies that request sent (asked again: a session may end).
        var cookies: String?
        /// Shut to make room (its socket is going).
        var shut = false
        var socket: Int32
        /// When its phase began.
        var since: Int64
        var phase: Phase = .head
    }

    struct State: Sendable {
        /// By the connection's address (`MHD_Connection *`).
        var entries: [UInt: Entry] = [:]
        /// Accepted but not yet started, by group (accept and start are one after the other on the listening thread).
        var accepted: [String] = []
        var bodyBytes = 0
        var spoolBytes = 0
        var refusals = Refusals()
        var watching = true

        /// Connections that count against the limits (those being shut do not).
        func count(_ include: (Entry) -> Bool) -> Int { entries.values.filter { !$0.shut && include($0) }.count }
    }

    private let state = VisibleLock(State())
    private let app: WebApp
    private let watcherDone = DispatchSemaphore(value: 0)
    private var watcher: Thread?

    init(app: WebApp) { self.app = app }

    var refusals: Refusals { state.withLock { $0.refusals } }

    /// Whether `entry` is a paired page's now (its session still live).
    func isProven(_ entry: Entry) -> Bool {
        entry.proven && entry.cookies.map { app.carriesSession(["cookie": $0]) } ?? false
    }

    /// Whether `entry` may be shut to make room: unproven, and not in the
    /// middle of an answer it reads at a fair pace (a guest's event stream
    /// never; a file read slowly, once 10 s into it).
    func mayGo(_ entry: Entry, now: Int64) -> Bool {
        guard !entry.shut, !isProven(entry) else { return false }
        switch entry.phase {
        case .head, .body, .idle: return true
        case .answering: return now - entry.since > WebServer.slowAnswerSeconds * 1_000_000_000
        case .streaming: return false
        }
    }

    /// Where room is made: in one group, in the groups no page paired
    /// from, or anywhere (those groups first).
    enum Among { case group(String), unpaired, any }

    /// Shuts the slowest connection that may go `among` some; false when none may.
    private func makeRoom(_ state: inout State, among: Among, now: Int64) -> Bool {
        let candidates = state.entries.filter { entry in
            guard mayGo(entry.value, now: now) else { return false }
            switch among {
            case .group(let group): return entry.value.group == group
            case .unpaired: return !app.isPaired(group: entry.value.group)
            case .any: return true
            }
        }
        guard let (key, slowest) = candidates.min(by: { a, b in
            let (pairedA, pairedB) = (app.isPaired(group: a.value.group), app.isPaired(group: b.value.group))
            return pairedA != pairedB ? !pairedA : a.value.since < b.value.since
        }) else { return false }
        state.entries[key]?.shut = true
        if slowest.socket >= 0 { shutdown(slowest.socket, Int32(SHUT_RDWR)) }
        state.refusals.madeRoom += 1
        return true
    }

    /// At accept: whether a client at `address` may connect now — making
    /// room when a limit is reached by shutting the slowest unproven
    /// connection (of its group first), refused only when none can go.
    func mayConnect(address: String) -> Bool {
        let group = WebClient.group(address)
        let paired = app.isPaired(group: group)
        let now = MonotonicNanoseconds.now()
        return state.withLock { state in
            let pending = state.accepted.count, pendingHere = state.accepted.filter { $0 == group }.count
            let unpaired = { (entry: Entry) in !self.app.isPaired(group: entry.group) }
            let allowed = (state.count { $0.group == group } + pendingHere < (paired ? WebServer.pairedPerGroup : WebServer.unpairedPerGroup)
                || makeRoom(&state, among: .group(group), now: now))
                // Room kept for paired phones: the groups no page paired from share 40.
                && (paired || state.count(unpaired) + state.accepted.filter { !app.isPaired(group: $0) }.count < WebServer.unpairedInAll
                    || makeRoom(&state, among: .unpaired, now: now))
                && (state.count { _ in true } + pending < WebServer.connectionLimit || makeRoom(&state, among: .any, now: now))
            if allowed { state.accepted.append(group) } else { state.refusals.atAccept += 1 }
            return allowed
        }
    }

    /// A connection started (after `mayConnect`).
    func started(_ connection: OpaquePointer, address: String, socket: Int32) {
        let group = WebClient.group(address)
        state.withLock { state in
            if let index = state.accepted.firstIndex(of: group) { state.accepted.remove(at: index) }
            state.entries[UInt(bitPattern: connection)] = Entry(group: group, socket: socket, since: MonotonicNanoseconds.now())
        }
    }

    /// A connection closed (before libmicrohttpd closes its socket).
    func closed(_ connection: OpaquePointer) {
        _ = state.withLock { $0.entries.removeValue(forKey: UInt(bitPattern: connection)) }
    }

    /// Its request head is in: a body of up to `bodyLimit` bytes may follow,
    /// within its deadline; with none, it is being answered. `proven`: the
    /// request carries a live session (`cookies`), decided again at each
    /// request.
    func headReceived(_ connection: OpaquePointer, bodyLimit: Int, proven: Bool, cookies: String?) {
        let seconds = bodyLimit > WebApp.maximumSmallBody ? WebServer.uploadDeadline : WebServer.smallBodyDeadline
        let now = MonotonicNanoseconds.now()
        state.withLock { state in
            guard var entry = state.entries[UInt(bitPattern: connection)] else { return }
            entry.phase = bodyLimit > 0 ? .body(deadline: now + Int64(seconds) * 1_000_000_000) : .answering
            entry.since = now
            entry.proven = proven
            entry.cookies = proven ? cookies : nil
            state.entries[UInt(bitPattern: connection)] = entry
        }
    }

    /// It is being answered (its body, if any, is in); `streaming`: an
    /// event stream, answered until it ends.
    func answering(_ connection: OpaquePointer, streaming: Bool = false) {
        let now = MonotonicNanoseconds.now()
        state.withLock { state in
            state.entries[UInt(bitPattern: connection)]?.phase = streaming ? .streaming : .answering
            state.entries[UInt(bitPattern: connection)]?.since = now
        }
    }

    /// Its answer is sent: it waits for the next request (kept alive).
    func answered(_ connection: OpaquePointer) {
        let now = MonotonicNanoseconds.now()
        state.withLock { state in
            state.entries[UInt(bitPattern: connection)]?.phase = .idle
            state.entries[UInt(bitPattern: connection)]?.since = now
        }
    }

    /// What a body may take while it arrives: memory (a request held whole)
    /// or the disk (an upload spooled).
    enum Budget {
        case memory, spool
        var limit: Int { self == .memory ? WebServer.bodyBudget : WebServer.spoolBudget }
        var held: WritableKeyPath<State, Int> { self == .memory ? \.bodyBytes : \.spoolBytes }
    }

    /// Takes `count` bytes of `budget`; false when the bodies under way
    /// hold too much already.
    func reserve(_ count: Int, of budget: Budget) -> Bool {
        state.withLock { state in
            guard state[keyPath: budget.held] + count <= budget.limit else {
                state.refusals.overBudget += 1
                return false
            }
            state[keyPath: budget.held] += count
            return true
        }
    }

    /// Gives `count` bytes of `budget` back.
    func release(_ count: Int, of budget: Budget) {
        state.withLock { $0[keyPath: budget.held] -= count }
    }

    /// Shuts the connections whose head or body is overdue. Under the lock:
    /// libmicrohttpd tells `closed` before it closes a socket, so a socket
    /// in the table is still that connection's.
    func shutOverdue(now: Int64) {
        state.withLock { state in
            for (key, entry) in state.entries where !entry.shut {
                let overdue: Bool
                switch entry.phase {
                case .head: overdue = now - entry.since > Int64(WebServer.headDeadline) * 1_000_000_000
                case .body(let deadline): overdue = now > deadline
                // An unproven client reading a file slowly (a page's asset) is shut at a minute.
                case .answering: overdue = !entry.proven && now - entry.since > WebServer.longestUnprovenAnswer * 1_000_000_000
                case .streaming: overdue = false
                // A paired page's keep-alive waits libmicrohttpd's idle time; an unproven one the head's.
                case .idle: overdue = !entry.proven && now - entry.since > Int64(WebServer.headDeadline) * 1_000_000_000
                }
                if overdue, entry.socket >= 0 {
                    shutdown(entry.socket, Int32(SHUT_RDWR))
                    state.entries[key]?.shut = true
                    state.refusals.tooSlow += 1
                }
            }
        }
    }

    func startWatching() {
        let thread = Thread { [self] in
            while state.withLock({ $0.watching }) {
                shutOverdue(now: MonotonicNanoseconds.now())
                if watcherDone.wait(timeout: .now() + .milliseconds(500)) == .success { break }
            }
        }
        thread.name = "acapella-web-watch"
        watcher = thread
        thread.start()
    }

    func stopWatching() {
        guard state.withLock({ state -> Bool in
            defer { state.watching = false }
            return state.watching
        }) else { return }
        watcherDone.signal()
    }
}

/// CLOCK_MONOTONIC, ns (deadlines of slow clients; never audio timing).
enum MonotonicNanoseconds {
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}

func webAcceptPolicy(_ context: UnsafeMutableRawPointer?, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> MHD_Result {
    guard let context else { return .NO }
    let server = Unmanaged<WebServer>.fromOpaque(context).takeUnretainedValue()
    var text = [CChar](repeating: 0, count: 64)
    acapella_sockaddr_text(address, &text, 64)
    return server.connections.mayConnect(address: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) ? .YES : .NO
}

func webConnectionNotified(_ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                           _ code: MHD_ConnectionNotificationCode) {
    guard let context, let connection else { return }
    let server = Unmanaged<WebServer>.fromOpaque(context).takeUnretainedValue()
    if code.rawValue == 0 {  // MHD_CONNECTION_NOTIFY_STARTED
        var address = [CChar](repeating: 0, count: 64)
        acapella_mhd_client_address(connection, &address, 64)
        server.connections.started(connection, address: String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                                   socket: acapella_mhd_connection_fd(connection))
    } else {
        server.connections.closed(connection)
    }
}

/// A server problem, in one line.
public struct WebServerError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One request's body as it arrives, within its admission's limit: a
/// small one in memory within the server's budget (given back when the
/// request ends); an upload to a nameless file (`spool`), on disk, not in
/// memory, read back only when its turn comes.
final class RequestBody {
    var bytes: [UInt8] = []
    var tooLarge = false
    var overBudget = false
    /// The disk refused the upload (full): why.
    var spoolFailure: String?
    var limit = 0
    var reserved = 0
    var spool: Int32 = -1
    var spooled = 0
    var spoolReserved = 0
    weak var connections: Connections?

    /// A file with no name in `folder` for the body (its space is freed
    /// when it is closed); -1 when none can be made there. The folder is
    /// made again if it went away.
    static func openSpool(in folder: String) -> Int32 {
        mkdir(folder, 0o755)
        let path = folder + "/.upload-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 { unlink(path) }
        return descriptor
    }

    /// The spooled body, read back.
    func readSpool() -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: spooled)
        var done = 0
        while done < spooled {
            let got = bytes.withUnsafeMutableBytes { pread(spool, $0.baseAddress! + done, spooled - done, off_t(done)) }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
    }

    deinit {
        if reserved > 0 { connections?.release(reserved, of: .memory) }
        if spoolReserved > 0 { connections?.release(spoolReserved, of: .spool) }
        if spool >= 0 { close(spool) }
    }
}

/// An event stream's state on its connection thread.
final class EventStreamContext {
    let next: @Sendable () -> [UInt8]?
    var pending: [UInt8] = []
    var offset = 0
    init(next: @escaping @Sendable () -> [UInt8]?) { self.next = next }
}

func headerIterator(_ context: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let context, let key else { return .YES }
    let headers = context.assumingMemoryBound(to: [String: String].self)
    let name = String(cString: key).lowercased(), text = value.map { String(cString: $0) } ?? ""
    // Cookie lines sent apart are one list (RFC 6265 allows one; HTTP/2 proxies split it); any other repeated header: the last.
    if name == "cookie", let earlier = headers.pointee[name] { headers.pointee[name] = earlier + "; " + text } else { headers.pointee[name] = text }
    return .YES
}

func webAccessHandler(_ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
                      _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ upload: UnsafePointer<CChar>?,
                      _ uploadSize: UnsafeMutablePointer<Int>?, _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let context, let connection, let url, let method, let requestContext else { return .NO }
    let server = Unmanaged<WebServer>.fromOpaque(context).takeUnretainedValue()
    var headers: [String: String] = [:]
    _ = withUnsafeMutablePointer(to: &headers) { MHD_get_connection_values(connection, .HEADER_KIND, headerIterator, $0) }
    var address = [CChar](repeating: 0, count: 64)
    acapella_mhd_client_address(connection, &address, 64)
    let client = String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var path = String(cString: url)
    if let question = path.firstIndex(of: "?") { path = String(path[..<question]) }
    if requestContext.pointee == nil {
        // The head is in, no byte of a body read yet: refused now when it may not have one.
        let body = RequestBody()
        body.connections = server.connections
        requestContext.pointee = Unmanaged.passRetained(body).toOpaque()
        let proven = server.carriesSession(headers)
        switch server.admit(method: String(cString: method), path: path, headers: headers, client: client) {
        case .refuse(let response):
            server.connections.headReceived(connection, bodyLimit: 0, proven: proven, cookies: headers["cookie"])
            return queue(connection, response)
        case .accept(let limit):
            body.limit = limit
            // An upload goes to the disk as it arrives.
            if limit > WebApp.maximumSmallBody {
                body.spool = RequestBody.openSpool(in: server.spoolFolder)
                if body.spool < 0 { body.spoolFailure = "the box cannot keep the upload (\(String(cString: strerror(errno))))" }
            }
            server.connections.headReceived(connection, bodyLimit: limit, proven: proven, cookies: headers["cookie"])
            return .YES
        }
    }
    let body = Unmanaged<RequestBody>.fromOpaque(requestContext.pointee!).takeUnretainedValue()
    if let uploadSize, uploadSize.pointee > 0 {
        if let upload, !body.tooLarge, !body.overBudget, body.spoolFailure == nil {
            if body.bytes.count + body.spooled + uploadSize.pointee > body.limit {
                body.tooLarge = true
                body.bytes = []
            } else if body.spool >= 0 {
                guard server.connections.reserve(uploadSize.pointee, of: .spool) else {
                    body.overBudget = true
                    uploadSize.pointee = 0
                    return .YES
                }
                body.spoolReserved += uploadSize.pointee
                let wrote = write(body.spool, upload, uploadSize.pointee)
                if wrote == uploadSize.pointee { body.spooled += wrote } else {
                    body.spoolFailure = errno == ENOSPC ? "the box's disk is full: the song was not kept" : "the box cannot keep the upload (\(String(cString: strerror(errno))))"
                }
            } else if !server.connections.reserve(uploadSize.pointee, of: .memory) {
                body.overBudget = true
                body.bytes = []
            } else {
                body.reserved += uploadSize.pointee
                upload.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                    body.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                }
            }
        }
        uploadSize.pointee = 0
        return .YES
    }
    server.connections.answering(connection)
    let reply: WebReply
    if body.tooLarge {
        reply = .response(.error(413, body.limit > WebApp.maximumSmallBody ? "the upload is larger than \(WebApp.maximumBody >> 20) MiB" : "the request's body is too large"))
    } else if body.overBudget {
        reply = .response(.error(503, "the box is busy with other uploads; try again in a moment"))
    } else if let failure = body.spoolFailure {
        reply = .response(.error(507, failure))
    } else if body.spool >= 0 {
        // One upload at a time in memory: read back from the disk, handled, let go.
        reply = server.uploadTurn.withLock {
            guard let bytes = body.readSpool() else { return .response(.error(500, "the upload could not be read back from the box's disk")) }
            return server.handle(WebRequest(method: String(cString: method), path: path, headers: headers, body: bytes, client: client))
        }
    } else {
        let request = WebRequest(method: String(cString: method), path: path, headers: headers, body: body.bytes, client: client)
        reply = server.handle(request)
    }
    switch reply {
    case .response(let response):
        return queue(connection, response)
    case .file(let file) where file.inflate:
        // A gzip file for a client that does not take gzip: inflated on its way.
        guard let reader = GzipFileReader(path: file.path) else { return queue(connection, .error(500, "the file to send went away")) }
        let stream = Unmanaged.passRetained(EventStreamContext(next: { reader.next() })).toOpaque()
        guard let made = MHD_create_response_from_callback(UInt64.max, 65_536, eventReader, stream, eventStreamFreed) else {
            Unmanaged<EventStreamContext>.fromOpaque(stream).release()
            return .NO
        }
        addHeaders(made, file)
        let result = MHD_queue_response(connection, 200, made)
        MHD_destroy_response(made)
        return result
    case .file(let file):
        // The box named the file; opened here, sent from the descriptor
        // (libmicrohttpd closes it), a temporary one removed at once.
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        var status = stat()
        guard descriptor >= 0, fstat(descriptor, &status) == 0 else {
            if descriptor >= 0 { close(descriptor) }
            return queue(connection, .error(500, "the file to send went away"))
        }
        if file.temporary { unlink(file.path) }
        // One range of it when asked (a player seeking; Safari's first probe), never of a gzip file.
        let size = Int(status.st_size)
        var range: ClosedRange<Int>?
        if !file.gzip {
            switch ByteRange.parse(headers["range"], size: size) {
            case .success(let asked): range = asked
            case .failure:
                close(descriptor)
                let refused = WebResponse(status: 416, contentType: "text/plain; charset=utf-8", headers: [("Content-Range", "bytes */\(size)")],
                                          body: Array("that range is not in the file\n".utf8))
                return queue(connection, refused)
            }
        }
        let made: OpaquePointer?
        if let range {
            made = MHD_create_response_from_fd_at_offset64(UInt64(range.count), descriptor, UInt64(range.lowerBound))
        } else {
            made = MHD_create_response_from_fd(size, descriptor)
        }
        guard let made else {
            close(descriptor)
            return .NO
        }
        if file.gzip { MHD_add_response_header(made, "Content-Encoding", "gzip") } else { MHD_add_response_header(made, "Accept-Ranges", "bytes") }
        if let range { MHD_add_response_header(made, "Content-Range", "bytes \(range.lowerBound)-\(range.upperBound)/\(size)") }
        addHeaders(made, file)
        let result = MHD_queue_response(connection, range == nil ? 200 : 206, made)
        MHD_destroy_response(made)
        return result
    case .events(let next):
        server.connections.answering(connection, streaming: true)
        let stream = Unmanaged.passRetained(EventStreamContext(next: next)).toOpaque()
        guard let made = MHD_create_response_from_callback(UInt64.max, 4096, eventReader, stream, eventStreamFreed) else {
            Unmanaged<EventStreamContext>.fromOpaque(stream).release()
            return .NO
        }
        MHD_add_response_header(made, "Content-Type", "text/event-stream")
        MHD_add_response_header(made, "Cache-Control", "no-cache")
        let result = MHD_queue_response(connection, 200, made)
        MHD_destroy_response(made)
        return result
    }
}

/// A file's headers: its type, and a download's name (a file shown in the
/// page instead is never cached, and may differ by the encoding asked).
func addHeaders(_ response: OpaquePointer, _ file: WebFile) {
    MHD_add_response_header(response, "Content-Type", file.contentType)
    MHD_add_response_header(response, "X-Content-Type-Options", "nosniff")
    if let downloadName = file.downloadName {
        let name = downloadName.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
        MHD_add_response_header(response, "Content-Disposition", "attachment; filename=\"\(name)\"")
    } else {
        MHD_add_response_header(response, "Cache-Control", file.cacheSeconds.map { "max-age=\($0)" } ?? "no-cache")
        if file.gzip { MHD_add_response_header(response, "Vary", "Accept-Encoding") }
    }
}

/// Queues a response made in memory.
func queue(_ connection: OpaquePointer, _ response: WebResponse) -> MHD_Result {
    let made = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!),
                                        .RESPMEM_MUST_COPY)
    }
    guard let made else { return .NO }
    MHD_add_response_header(made, "Content-Type", response.contentType)
    MHD_add_response_header(made, "X-Content-Type-Options", "nosniff")
    MHD_add_response_header(made, "Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src 'self' data:")
    for (name, value) in response.headers { MHD_add_response_header(made, name, value) }
    let result = MHD_queue_response(connection, UInt32(response.status), made)
    MHD_destroy_response(made)
    return result
}

func eventReader(_ context: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ maximum: Int) -> Int {
    guard let context, let buffer else { return -1 }
    let stream = Unmanaged<EventStreamContext>.fromOpaque(context).takeUnretainedValue()
    if stream.offset >= stream.pending.count {
        guard let next = stream.next() else { return -1 }
        stream.pending = next
        stream.offset = 0
    }
    let count = min(maximum, stream.pending.count - stream.offset)
    stream.pending.withUnsafeBytes { bytes in
        UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + stream.offset, byteCount: count)
    }
    stream.offset += count
    return count
}

func eventStreamFreed(_ context: UnsafeMutableRawPointer?) {
    if let context { Unmanaged<EventStreamContext>.fromOpaque(context).release() }
}

func webRequestCompleted(_ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                         _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ reason: MHD_RequestTerminationCode) {
    if let context, let connection { Unmanaged<WebServer>.fromOpaque(context).takeUnretainedValue().connections.answered(connection) }
    if let requestContext, let body = requestContext.pointee {
        Unmanaged<RequestBody>.fromOpaque(body).release()
        requestContext.pointee = nil
    }
}
