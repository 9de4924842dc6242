import AcapellaScore
import Foundation
import AcapellaLock

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

    /// Every value of the cookie `name` in the `Cookie` header, in the
    /// order sent (a browser may send two of one name: a stale one set for
    /// another path or host beside the current one).
    public func cookies(named name: String) -> [String] {
        (headers["cookie"] ?? "").split(separator: ";").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return parts.count == 2 && parts[0] == name ? parts[1] : nil
        }
    }
}

/// A response: status, type, extra headers and body — or an event stream
/// the server feeds from a blocking producer on the connection's thread.
public enum WebReply: Sendable {
    case response(WebResponse)
    /// Server-Sent Events: `next` blocks until the next message is due and
    /// returns its bytes, or nil to end the stream.
    case events(@Sendable () -> [UInt8]?)
    /// A file the server opens and sends (a download).
    case file(WebFile)
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
    /// The recording set, when several parts are recorded at once: each
    /// part and its input ("Soprano 1"); empty: `part` alone.
    public var together: [String] = []
    /// The recording set as the page chooses it: each part of the song's
    /// input (from 1; 0: not in the set; empty: no set), and the most
    /// inputs the device offers.
    public var recordingSet: [Int] = []
    public var mostInputs = 1
    public var note: String?
    public var cents: Double?
    /// The reading before the needle steadied it (the faint trail), cents.
    public var rawCents: Double?
    /// The last note sung and its centre, as the grade reads it.
    public var lastNote: String?
    public var lastCents: Double?
    public var level: Double = 0
    /// What the rehearsal is set to: the sounding tempo (quarter notes a
    /// minute), as a share of the written one, the count-in measures, the
    /// metronome, the transposition (semitones), the singer's part alone,
    /// the singer's guide muted.
    public var tempo: Double = 0
    public var tempoPercent = 100
    public var countIn = 0
    public var metronome = false
    public var transpose = 0
    public var soloed = false
    public var guideMuted = true
    /// The live mixer: each part's level (dB from its default, nil:
    /// silent) and pan, the reference recording's last when there is one.
    public var mixer: [WebMixerStrip] = []
    /// The take under review and its length (seconds), for the review sheet.
    public var reviewTake: Int?
    public var reviewSeconds = 0.0
    public var review = false
    /// What the box said last (the readout's message line), if anything.
    public var message: String?
    /// The reference recording ("ref director", "ref off") and its lyric
    /// line now, while it is heard with lyrics.
    public var reference: String?
    public var referenceLyric: String?
    /// The verse the lyric line follows.
    public var verse = 1
    /// The loop and the punch range set ("5-8"), if any.
    public var loop: String?
    public var punch: String?
    /// Count up when the takes or the library change (the page reloads them).
    public var takesVersion = 0
    public var libraryVersion = 0
    public var analysisVersion = 0
    /// Counts up when how the parts sang together (`WebBox.blend`) is new.
    public var blendVersion = 0
    /// Counts up when the song's score for the page is ready (engraved
    /// after the song is loaded; the page loads it then).
    public var scoreVersion = 0
    /// Each size's `scoreVersion` when it was stored (by `WebScoreSize`
    /// name): the page reloads only when the size it shows changed.
    public var scoreVersions: [String: Int] = [:]
    /// The voice's spectrum for the panel beside the needle: band levels
    /// and the envelope in whole dB (0 = the loudest band; nil: no
    /// envelope there), bands spaced evenly in log frequency from
    /// `spectrumFrom` to `spectrumTo` Hz; the formants in Hz. Empty in
    /// silence.
    public var spectrumLevels: [Int] = []
    public var spectrumEnvelope: [Int?] = []
    public var spectrumFrom = 80
    public var spectrumTo = 8_000
    public var formants: [Int] = []
    /// When the box published it (CLOCK_MONOTONIC, ns): the page's event
    /// delay is measured against it (`acapella-bench web`).
    public var publishedNanoseconds: Int64 = 0

    public init() {}

    var json: [String: Any] {
        var object: [String: Any] = ["serial": serial, "state": state, "sample": sample, "measure": measure, "beat": beat,
                                     "song": song, "part": part, "level": level.isFinite ? level : -120, "review": review, "verse": verse,
                                     "takesVersion": takesVersion, "libraryVersion": libraryVersion, "analysisVersion": analysisVersion, "blendVersion": blendVersion,
                                     "scoreVersion": scoreVersion, "scoreVersions": scoreVersions,
                                     "tempo": tempo.isFinite ? (tempo * 10).rounded() / 10 : 0, "tempoPercent": tempoPercent, "countIn": countIn,
                                     "metronome": metronome, "transpose": transpose, "soloed": soloed, "guideMuted": guideMuted,
                                     "published": publishedNanoseconds]
        object["note"] = note ?? NSNull()
        object["together"] = together
        object["recordingSet"] = recordingSet
        object["mostInputs"] = mostInputs
        object["cents"] = cents.flatMap { $0.isFinite ? $0 : nil } ?? NSNull()
        object["reviewTake"] = reviewTake ?? NSNull()
        object["reviewSeconds"] = reviewSeconds
        object["rawCents"] = rawCents.flatMap { $0.isFinite ? $0 : nil } ?? NSNull()
        object["lastNote"] = lastNote ?? NSNull()
        object["lastCents"] = lastCents.flatMap { $0.isFinite ? $0 : nil } ?? NSNull()
        object["mixer"] = mixer.map { strip -> [String: Any] in
            ["name": strip.name, "reference": strip.reference, "pan": strip.pan.isFinite ? strip.pan : 0, "muted": strip.muted, "soloed": strip.soloed, "metronome": strip.metronome,
             "takes": strip.takes ?? NSNull(),
             "levelDB": strip.levelDB.flatMap { $0.isFinite ? ($0 * 10).rounded() / 10 : nil } ?? NSNull()]
        }
        object["loop"] = loop ?? NSNull()
        object["message"] = message ?? NSNull()
        object["reference"] = reference ?? NSNull()
        object["referenceLyric"] = referenceLyric ?? NSNull()
        object["punch"] = punch ?? NSNull()
        object["spectrum"] = spectrumLevels.isEmpty ? NSNull() : [
            "from": spectrumFrom, "to": spectrumTo, "levels": spectrumLevels,
            "envelope": spectrumEnvelope.map { $0.map { $0 as Any } ?? NSNull() }, "formants": formants,
        ] as [String: Any]
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
    /// Files the page asks for that the box sends from the disk, never
    /// holds (the fonts: megabytes each), by their paths on the page.
    let files: [String: (type: String, path: String)]
    let guests: GuestAccess
    let pairing: VisibleLock<Pairing>
    let box: any WebBox
    /// Between two event-stream messages (about 30 a second).
    let eventInterval: Duration
    let clock: @Sendable () -> Int64
    let random: @Sendable () -> String
    /// A fresh pairing code, when too many wrong ones were tried.
    let newPairingCode: @Sendable () -> String

    /// Body size the server accepts at most (an upload).
    public static let maximumBody = 8 << 20
    /// A pairing code's body, and any other change's, at most.
    public static let maximumSmallBody = 4_096
    /// Event streams open at once: for guests (unpaired, when they may
    /// watch) in all and per client group, and for paired pages in all.
    public static let maximumGuestStreams = 8
    public static let maximumGuestStreamsPerGroup = 2
    public static let maximumPairedStreams = 32

    /// The box's own names (its mDNS name, its host name): a request must
    /// name one of them, or an address, in `Host` (nil: any name; tests).
    /// A page elsewhere that makes a browser's name for it resolve to the
    /// box (DNS rebinding) is refused.
    let hostNames = VisibleLock<Set<String>?>(nil)
    /// Event streams open now: guests' by group, and paired pages'.
    let streams = VisibleLock<(guests: [String: Int], paired: Int)>(([:], 0))

    public init(assets: [String: (type: String, bytes: [UInt8])], files: [String: (type: String, path: String)] = [:], guests: GuestAccess, pairingCode: String,
                box: any WebBox, eventInterval: Duration = .milliseconds(33), clock: @escaping @Sendable () -> Int64, random: @escaping @Sendable () -> String,
                newPairingCode: @escaping @Sendable () -> String = { "000000" }, pairing restored: Pairing? = nil) {
        self.newPairingCode = newPairingCode
        self.assets = assets
        self.files = files
        self.guests = guests
        pairing = VisibleLock(restored ?? Pairing(code: pairingCode))
        self.box = box
        self.eventInterval = eventInterval
        self.clock = clock
        self.random = random
    }

    /// The code to show on the box.
    public var pairingCode: String { pairing.withLock { $0.code } }

    /// What pairing has to say since the last call (wrong codes, a code replaced).
    public func takePairingEvents() -> [Pairing.Event] { pairing.withLock { $0.takeEvents() } }

    /// What pairing keeps across restarts, and its revision (the box saves
    /// it when the revision has moved).
    public var savedPairing: (revision: Int, saved: Pairing.Saved) { pairing.withLock { ($0.revision, $0.saved) } }
    public var pairingRevision: Int { pairing.withLock { $0.revision } }

    /// Whether a page paired from this client group.
    public func isPaired(group: String) -> Bool { pairing.withLock { $0.hasSession(group: group) } }

    /// Sets the names a request may give in `Host` (lower case; a port and
    /// a trailing dot are taken off before comparing). Addresses and
    /// `localhost` are always allowed.
    public func setHostNames(_ names: [String]) {
        hostNames.withLock { $0 = Set(names.map { $0.lowercased() }) }
    }

    /// Whether `host` (a `Host` header) names the box.
    func isBoxHost(_ host: String?) -> Bool {
        guard let host, !host.isEmpty, host.utf8.count <= 255 else { return false }
        var name = host.lowercased()
        if name.hasPrefix("[") {
            // [IPv6]:port
            return name.contains("]")
        }
        if let colon = name.lastIndex(of: ":"), name[name.index(after: colon)...].allSatisfy(\.isNumber) { name = String(name[..<colon]) }
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || Self.isIPv4(name) { return true }
        return hostNames.withLock { names in names.map { $0.contains(name) } ?? true }
    }

    static func isIPv4(_ text: String) -> Bool {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        return pieces.count == 4 && pieces.allSatisfy { piece in piece.count <= 3 && !piece.isEmpty && piece.allSatisfy(\.isNumber) && Int(piece)! <= 255 }
    }

    /// What the server may do with a request once its headers are in,
    /// before a byte of its body is read: take a body of at most this many
    /// bytes, or answer at once (no session, no CSRF token, another site,
    /// another host's name) — so nobody unpaired can make the box hold a body.
    public enum Admission: Sendable {
        case accept(bodyLimit: Int)
        case refuse(WebResponse)
    }

    /// The admission of a request (method, path and headers only).
    public func admit(method: String, path: String, headers: [String: String], client: String) -> Admission {
        guard isBoxHost(headers["host"]) else {
            return .refuse(.error(headers["host"] == nil ? 400 : 403, headers["host"] == nil ? "a request without Host is refused" : "this is not the box's name"))
        }
        if method == "GET" || method == "HEAD" { return .accept(bodyLimit: 0) }
        guard method == "POST" else { return .refuse(.error(405, "GET or POST")) }
        let request = WebRequest(method: method, path: path, headers: headers, client: client)
        guard !Self.isCrossSite(request) else { return .refuse(.error(403, "requests from other sites are refused")) }
        if path == "/api/pair" { return .accept(bodyLimit: Self.maximumSmallBody) }
        guard let paired = session(request) else { return .refuse(.error(401, "pair with the box first")) }
        guard headers["x-csrf-token"] == paired.csrf else { return .refuse(.error(403, "missing or wrong CSRF token")) }
        return .accept(bodyLimit: path == "/api/upload" ? Self.maximumBody : Self.maximumSmallBody)
    }

    static let cookieName = "acapella-session"

    /// The page's session: the first of the request's session cookies
    /// that names a live one (a stale cookie beside it, before or after,
    /// changes nothing).
    func session(_ request: WebRequest) -> Pairing.Session? {
        let tokens = request.cookies(named: Self.cookieName)
        return pairing.withLock { pairing in
            for token in tokens { if let live = pairing.session(token: token) { return live } }
            return nil
        }
    }

    /// Whether a request with these headers comes from a paired page (its
    /// connection is then served before any unpaired one).
    public func carriesSession(_ headers: [String: String]) -> Bool {
        session(WebRequest(method: "GET", path: "", headers: headers)) != nil
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
        guard isBoxHost(request.headers["host"]) else {
            return .response(.error(request.headers["host"] == nil ? 400 : 403, request.headers["host"] == nil ? "a request without Host is refused" : "this is not the box's name"))
        }
        if request.method == "GET" || request.method == "HEAD" {
            if let file = files[request.path] {
                // A font never changes within a version: kept a day.
                var sent = WebFile(path: file.path, contentType: file.type, downloadName: nil, temporary: false)
                sent.cacheSeconds = 86_400
                return .file(sent)
            }
            if let asset = assets[request.path] {
                // The font never changes within a version; the page's own files may.
                let cache = request.path.hasSuffix(".otf") || request.path.hasSuffix(".ttf") ? "max-age=86400" : "no-cache"
                return .response(WebResponse(status: 200, contentType: asset.type, headers: [("Cache-Control", cache)], body: asset.bytes))
            }
            return get(request)
        }
        guard request.method == "POST" else { return .response(.error(405, "GET or POST")) }
        guard !Self.isCrossSite(request) else { return .response(.error(403, "requests from other sites are refused")) }
        if request.path == "/api/pair" { return pair(request) }
        guard let paired = session(request) else { return .response(.error(401, "pair with the box first")) }
        guard request.headers["x-csrf-token"] == paired.csrf else { return .response(.error(403, "missing or wrong CSRF token")) }
        switch request.path {
        case "/api/sign-out":
            // This phone only; its cookie cleared.
            _ = pairing.withLock { $0.signOut(token: paired.token) }
            return .response(.json(["signedOut": true], headers: [("Set-Cookie", "\(Self.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")]))
        case "/api/sign-out-everyone":
            // Every phone, and a new code on the box (a code someone else
            // may have seen no longer pairs).
            let code = newPairingCode()
            pairing.withLock { $0.signOutEveryone(newCode: code) }
            return .response(.json(["signedOut": true], headers: [("Set-Cookie", "\(Self.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")]))
        default:
            return post(request)
        }
    }

    /// Reads: the live state, the score and the event stream for paired
    /// pages (and guests when allowed); takes, library and downloads for
    /// paired pages only.
    func get(_ request: WebRequest) -> WebReply {
        let paired = session(request)
        let mayView = paired != nil || guests == .view
        guard mayView else { return .response(.error(401, "pair with the box first")) }
        switch request.path {
        case "/api/state":
            var object = box.live().json
            object["paired"] = paired != nil
            if let paired { object["csrf"] = paired.csrf }
            return .response(.json(object))
        case _ where WebScoreSize(scorePath: request.path) != nil:
            guard let score = box.score(WebScoreSize(scorePath: request.path)!) else {
                if let problem = box.scoreProblem() { return .response(.error(500, "the score could not be engraved: \(problem)")) }
                return .response(.error(404, box.live().song.isEmpty ? "no song is loaded" : "the score is being engraved; the page loads it when it is ready"))
            }
            guard request.path.hasSuffix(".svg") else { return .file(WebFile(path: score.timeMapPath, contentType: "application/json", downloadName: nil, temporary: false)) }
            // Sent from the file as engraved: compressed, or inflated on its way.
            var file = WebFile(path: score.svgGzipPath, contentType: "image/svg+xml", downloadName: nil, temporary: false)
            file.gzip = true
            file.inflate = !(request.headers["accept-encoding"] ?? "").contains("gzip")
            return .file(file)
        case "/events":
            // Guests' streams capped in all and per client group, paired pages' in all: none can take the box's threads.
            let group = WebClient.group(request.client)
            let admitted = streams.withLock { open -> Bool in
                if paired != nil {
                    guard open.paired < Self.maximumPairedStreams else { return false }
                    open.paired += 1
                } else {
                    guard open.guests.values.reduce(0, +) < Self.maximumGuestStreams, open.guests[group, default: 0] < Self.maximumGuestStreamsPerGroup else { return false }
                    open.guests[group, default: 0] += 1
                }
                return true
            }
            guard admitted else { return .response(.error(503, "too many pages are watching; try again in a moment")) }
            let ticket = StreamTicket { [self] in
                streams.withLock { open in
                    if paired != nil { open.paired -= 1 } else {
                        open.guests[group, default: 1] -= 1
                        if open.guests[group] == 0 { open.guests[group] = nil }
                    }
                }
            }
            return .events(eventStream(ticket: ticket))
        default:
            break
        }
        guard paired != nil else { return .response(.error(401, "pair with the box first: guests see the score only")) }
        switch request.path {
        case "/api/takes":
            return .response(.json(box.takes().json))
        case "/api/library":
            return .response(.json(["songs": box.library().map(\.json)]))
        case "/api/analysis":
            guard let analysis = box.analysis() else { return .response(.error(404, "no take analysed yet for this song")) }
            return .response(WebResponse(status: 200, contentType: "application/json", body: analysis))
        case "/api/blend":
            guard let blend = box.blend() else { return .response(.error(404, "not worked out yet: ask for 'together' first")) }
            return .response(WebResponse(status: 200, contentType: "application/json", body: blend))
        default:
            guard let download = Self.download(request.path) else { return .response(.error(404, "no such page")) }
            switch box.download(download) {
            case .success(let file): return .file(file)
            case .failure(let failure): return .response(.error(failure.status, failure.description))
            }
        }
    }

    /// The downloads' addresses: `/download/take-7.wav`,
    /// `/download/take-7-with-others.wav`, `/download/mix.flac`,
    /// `/download/practice-2.mp3`, `/download/mix.m4a` (AAC: what a phone
    /// keeps), `/download/project.zip`.
    static func download(_ path: String) -> WebDownload? {
        guard path.hasPrefix("/download/") else { return nil }
        let name = path.dropFirst("/download/".count)
        guard let dot = name.lastIndex(of: ".") else { return nil }
        let stem = name[..<dot]
        let format = String(name[name.index(after: dot)...])
        if stem == "project" { return format == "zip" ? .project : nil }
        guard ["wav", "flac", "mp3", "m4a"].contains(format) else { return nil }
        if stem == "mix" { return .mix(format: format) }
        if stem.hasPrefix("practice-"), let part = number(stem.dropFirst("practice-".count), in: partIndexes) { return .practice(part: part, format: format) }
        guard stem.hasPrefix("take-"), format == "wav" else { return nil }
        let rest = stem.dropFirst("take-".count)
        if rest.hasSuffix("-with-others"), let id = number(rest.dropLast("-with-others".count), in: takeIDs) { return .takeWithOthers(id) }
        if let id = number(rest, in: takeIDs) { return .take(id) }
        return nil
    }

    /// A whole number from a request (a path piece, a body), checked to be
    /// in `range` before anything does arithmetic with it: ASCII digits
    /// with an optional sign, at most 12 characters.
    static func number(_ text: Substring, in range: ClosedRange<Int>) -> Int? {
        guard (1...12).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x2B }),
              let value = Int(text), range.contains(value) else { return nil }
        return value
    }

    /// Whether a request's text is one line (no control or direction
    /// character) of at most `most` characters.
    static func isOneLine(_ text: String, most: Int) -> Bool {
        text.count <= most && !text.unicodeScalars.contains(where: SafeText.isControl)
    }

    /// What a take id, a song's place in the library, a part's index and a
    /// nudge may be.
    static let takeIDs = 1...Int(Int32.max)
    static let songIndexes = 0...99_999
    static let partIndexes = 0...(ScoreLimits.maximumParts - 1)
    /// A card's inputs, as the page may name them (`--parts` takes as many).
    static let inputNumbers = 1...32
    static let nudgeMilliseconds = -1_000...1_000

    func pair(_ request: WebRequest) -> WebReply {
        let code = String(decoding: request.body.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let now = clock()
        let newCode = newPairingCode
        let result = pairing.withLock { $0.pair(code: code, client: WebClient.group(request.client), nowMilliseconds: now, token: random, newCode: newCode) }
        switch result {
        case .success(let session):
            // Lasting: the phone stays paired across the box's restarts (a year, renewed at each pairing).
            return .response(.json(["paired": true, "csrf": session.csrf],
                                   headers: [("Set-Cookie", "\(Self.cookieName)=\(session.token); Path=/; HttpOnly; SameSite=Strict; Max-Age=31536000")]))
        case .failure(let failure):
            if let seconds = failure.retryAfterSeconds {
                return .response(.json(["error": failure.description], status: 429, headers: [("Retry-After", "\(seconds)")]))
            }
            return .response(.error(403, failure.description))
        }
    }

    /// Changes, from a paired page with its CSRF token.
    func post(_ request: WebRequest) -> WebReply {
        let text = String(decoding: request.body.prefix(256), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let change: WebChange
        switch request.path {
        case "/api/action":
            guard box.act(text) else { return .response(.error(400, "no action named '\(text.prefix(40))'")) }
            return .response(.json(["done": text]))
        case "/api/upload":
            switch box.upload(fileName: request.headers["x-file-name"] ?? "", bytes: request.body) {
            case .success(let upload):
                return .response(.json(["title": upload.title, "index": upload.index, "report": upload.report]))
            case .failure(let failure):
                return .response(.error(failure.status, failure.description))
            }
        case "/api/undo":
            change = .undo
        case "/api/blend":
            change = .blend
        case "/api/together":
            // PART=INPUT, commas between (a part's index, its input from 1); empty: one part at a time.
            // Read whole or not at all (the text above is its first 256 bytes).
            guard request.body.count <= 256 else { return .response(.error(413, "a recording set is at most 256 bytes")) }
            let usage = "together expects PART=INPUT pairs, commas between (a part's number from 0, an input from 1 to \(Self.inputNumbers.upperBound)), or nothing for one part at a time"
            var set: [WebPartInput] = []
            for item in text.split(separator: ",", omittingEmptySubsequences: false) where !text.isEmpty {
                let pair = item.split(separator: "=", omittingEmptySubsequences: false)
                guard pair.count == 2, let part = Self.number(pair[0], in: Self.partIndexes), let input = Self.number(pair[1], in: Self.inputNumbers) else {
                    return .response(.error(400, usage))
                }
                guard !set.contains(where: { $0.part == part }) else { return .response(.error(400, "part \(part) is given twice")) }
                guard !set.contains(where: { $0.input == input }) else { return .response(.error(400, "input \(input) is given twice (a microphone a part)")) }
                set.append(WebPartInput(part: part, input: input))
            }
            change = .together(set)
        case "/api/reference/remove":
            change = .removeReference
        case "/api/choose":
            let words = text.split(separator: " ")
            guard (1...2).contains(words.count), let song = Self.number(words[0], in: Self.songIndexes) else {
                return .response(.error(400, "choose expects a song number (and a part number)"))
            }
            var part: Int?
            if words.count == 2 {
                guard let number = Self.number(words[1], in: Self.partIndexes) else {
                    return .response(.error(400, "choose expects a part number from 0 to \(ScoreLimits.maximumParts - 1)"))
                }
                part = number
            }
            change = .choose(song: song, part: part)
        case "/api/project/new", "/api/project/open", "/api/project/remove":
            // The project's name in the body, as the page lists it (the box checks it).
            guard !text.isEmpty, Self.isOneLine(text, most: 80) else {
                return .response(.error(400, "expects a project's name"))
            }
            switch request.path {
            case "/api/project/new": change = .project(.create(text))
            case "/api/project/open": change = .project(.select(text))
            default: change = .project(.remove(text))
            }
        case _ where request.path.hasPrefix("/api/song/"):
            // /api/song/3/remove: one of the singer's songs to the trash;
            // /api/song/3/title (body: the title), /api/song/3/tags (body: tags, commas between).
            let pieces = request.path.split(separator: "/")
            guard pieces.count == 4, ["remove", "title", "tags"].contains(pieces[3]), let song = Self.number(pieces[2], in: Self.songIndexes) else {
                return .response(.error(404, "expects /api/song/N/remove, /title or /tags"))
            }
            guard Self.isOneLine(text, most: 256) else { return .response(.error(400, "one line of text, please")) }
            switch pieces[3] {
            case "title":
                if let problem = SafeText.nameProblem(text, most: 120) { return .response(.error(400, "a title \(problem)")) }
                change = .describeSong(song, title: text, tags: nil)
            case "tags":
                let tags = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                guard tags.count <= 12, tags.allSatisfy({ $0.count <= 30 }) else { return .response(.error(400, "at most 12 tags of at most 30 characters, commas between")) }
                change = .describeSong(song, title: nil, tags: tags)
            default:
                change = .removeSong(song)
            }
        case _ where request.path.hasPrefix("/api/mix/"):
            // /api/mix/2/level (a part's index, or "reference"), body 0…127 as
            // a MIDI fader's value; /api/mix/2/mute, /solo or /takes, body on or off.
            let pieces = request.path.split(separator: "/")
            let usage = "expects /api/mix/PART/level or /pan with a value from 0 to 127, or /mute, /solo or /takes with on or off"
            guard pieces.count == 4 else { return .response(.error(400, usage)) }
            if pieces[2] == "metronome" {
                guard pieces[3] == "level", let value = Self.number(Substring(text), in: 0...127) else {
                    return .response(.error(400, "expects /api/mix/metronome/level with a value from 0 to 127"))
                }
                change = .metronomeLevel(value)
                break
            }
            var part: Int?
            if pieces[2] != "reference" {
                guard let number = Self.number(pieces[2], in: Self.partIndexes) else { return .response(.error(404, "no such part")) }
                part = number
            }
            if let control = WebFaderControl(rawValue: String(pieces[3])), let value = Self.number(Substring(text), in: 0...127) {
                change = .fader(part: part, control: control, value: value)
            } else if let which = WebMixSwitch(rawValue: String(pieces[3])), text == "on" || text == "off" {
                change = .mixSwitch(part: part, which, on: text == "on")
            } else {
                return .response(.error(400, usage))
            }
        case "/api/loop", "/api/punch":
            var range: ClosedRange<Int>?
            if text != "off" {
                guard let parsed = Self.measures(text) else { return .response(.error(400, "expects measures like 5-8, or off")) }
                range = parsed
            }
            change = request.path == "/api/loop" ? .loop(range) : .punch(range)
        default:
            // /api/take/7/activate, /api/take/7/discard, /api/take/7/nudge (body: ±milliseconds), /api/take/7/name (body: the name),
            // /api/take/7/correct (body: measures like 7-9, or flagged)
            let pieces = request.path.split(separator: "/")
            guard pieces.count == 4, pieces[0] == "api", pieces[1] == "take", let id = Self.number(pieces[2], in: Self.takeIDs) else {
                return .response(.error(404, "no such action"))
            }
            // Chosen from a list of another project's takes (another song's, or
            // the song's other project): take 3 there is not take 3 here.
            if let shown = request.headers["x-takes"], shown != box.takes().key {
                return .response(.error(409, "the takes shown were another project's: here is the list of the one open now"))
            }
            switch pieces[3] {
            case "activate": change = .activate(take: id)
            case "discard": change = .discard(take: id)
            case "correct":
                guard text == "flagged" || Self.measures(text) != nil else { return .response(.error(400, "correct expects measures like 7-9, or flagged")) }
                change = .correct(take: id, measures: Self.measures(text))
            case "name":
                // The body is the name (empty: none), checked as the box keeps it.
                if !text.isEmpty, let problem = SafeText.takeNameProblem(text) { return .response(.error(400, problem)) }
                change = .name(take: id, text.isEmpty ? nil : text)
            case "nudge":
                guard let milliseconds = Self.number(Substring(text), in: Self.nudgeMilliseconds) else {
                    return .response(.error(400, "nudge expects milliseconds from -1000 to 1000"))
                }
                change = .nudge(take: id, milliseconds: milliseconds)
            default: return .response(.error(404, "no such action"))
            }
        }
        switch box.perform(change) {
        case .success(let said): return .response(.json(["done": said]))
        case .failure(let failure): return .response(.error(failure.status, failure.description))
        }
    }

    /// "5-8" or "5" → measures (at most 4 digits each).
    static func measures(_ text: String) -> ClosedRange<Int>? {
        let ends = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(ends.count), ends.allSatisfy({ (1...4).contains($0.count) && $0.allSatisfy(\.isASCII) }),
              let from = Int(ends[0]), let to = Int(ends[ends.count - 1]), from >= 0, from <= to else { return nil }
        return from...to
    }

    /// `data: {live state}` each time the box publishes a changed one
    /// (about 30 times a second while playing) and at least once a second
    /// (a wait that times out), so the page sees the stream is alive;
    /// `event: takes` and `event: library` when those change.
    func eventStream(ticket: StreamTicket? = nil) -> @Sendable () -> [UInt8]? {
        // The last state sent, its generation, and how many waits since.
        let last = VisibleLock<(state: WebLiveState?, generation: Int, quiet: Int)>((nil, 0, 0))
        let interval = eventInterval
        let box = self.box
        return {
            _ = ticket  // held while the stream is: released, it counts the stream out
            while true {
                let generation = last.withLock { $0.generation }
                let (state, newer) = box.nextLive(after: generation, timeout: interval * 30)
                let previous = last.withLock { last -> WebLiveState?? in
                    last.generation = newer
                    last.quiet += 1
                    guard last.state != state || last.quiet >= 30 || newer == generation else { return .none }
                    defer { last.state = state; last.quiet = 0 }
                    return .some(last.state)
                }
                guard case .some(let before) = previous else { continue }
                var message: [UInt8] = []
                if let before, before.takesVersion != state.takesVersion { message += Array("event: takes\ndata: \(state.takesVersion)\n\n".utf8) }
                if let before, before.libraryVersion != state.libraryVersion { message += Array("event: library\ndata: \(state.libraryVersion)\n\n".utf8) }
                if let before, before.analysisVersion != state.analysisVersion { message += Array("event: analysis\ndata: \(state.analysisVersion)\n\n".utf8) }
                if let before, before.blendVersion != state.blendVersion { message += Array("event: blend\ndata: \(state.blendVersion)\n\n".utf8) }
                let data = (try? JSONSerialization.data(withJSONObject: state.json, options: [.sortedKeys])) ?? Data()
                return message + Array("data: ".utf8) + [UInt8](data) + Array("\n\n".utf8)
            }
        }
    }
}

/// Held by an event stream while it is open; counts it out when released.
final class StreamTicket: Sendable {
    private let release: @Sendable () -> Void
    init(release: @escaping @Sendable () -> Void) { self.release = release }
    deinit { release() }
}
