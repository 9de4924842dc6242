@testable import AcapellaWeb
import AcapellaWebServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
import Glibc

@Suite struct PairingTests {
    /// Pairing lasts across restarts: what is saved restores the code and
    /// every paired phone, keeps no token (only its hash), and keeps the
    /// pairing order (the oldest still goes first when there are too many).
    @Test func pairingLastsAcrossARestartWithOnlyTheTokensHashesKept() throws {
        var serial = 0
        let token = { () -> String in serial += 1; return String(format: "%032x", serial * 7919) }
        var pairing = Pairing(code: "042917", hash: sessionTokenHash)
        var sessions: [Pairing.Session] = []
        for phone in 0..<Pairing.maximumSessions {
            guard case .success(let session) = pairing.pair(code: "042917", client: "10.0.0.\(phone)", nowMilliseconds: Int64(phone), token: token) else {
                Issue.record("phone \(phone) did not pair")
                return
            }
            sessions.append(session)
        }
        #expect(pairing.revision == Pairing.maximumSessions)
        let saved = pairing.saved
        let json = String(decoding: try JSONEncoder().encode(saved), as: UTF8.self)
        #expect(saved.code == "042917" && saved.sessions.count == Pairing.maximumSessions)
        #expect(sessions.allSatisfy { !json.contains($0.token) }, "a token was saved as it is")
        #expect(saved.sessions.map(\.tokenHash) == sessions.map { sessionTokenHash($0.token) })
        // The box starts again: the same code, every phone still paired with its CSRF token.
        var restored = Pairing(saved: try JSONDecoder().decode(Pairing.Saved.self, from: Data(json.utf8)), hash: sessionTokenHash, newCode: { "999999" })
        #expect(restored.code == "042917")
        for session in sessions {
            #expect(restored.session(token: session.token)?.csrf == session.csrf)
            #expect(restored.session(token: session.token)?.group == session.group)
        }
        #expect(restored.session(token: sessionTokenHash(sessions[0].token)) == nil, "the saved hash signs nobody in")
        // One more phone: the oldest (the first to pair before the restart) goes.
        guard case .success(let newest) = restored.pair(code: "042917", client: "10.0.1.1", nowMilliseconds: 0, token: token) else {
            Issue.record("the new phone did not pair")
            return
        }
        #expect(restored.session(token: sessions[0].token) == nil && restored.session(token: sessions[1].token) != nil)
        #expect(restored.session(token: newest.token) != nil)
        // This phone signs out; then everyone, with a new code.
        #expect(restored.signOut(token: sessions[1].token) && !restored.signOut(token: sessions[1].token))
        #expect(restored.session(token: sessions[1].token) == nil && restored.session(token: sessions[2].token) != nil)
        let revision = restored.revision
        restored.signOutEveryone(newCode: "314159")
        #expect(restored.code == "314159" && restored.revision > revision)
        #expect(restored.saved.sessions.isEmpty && restored.session(token: newest.token) == nil)
        #expect(restored.pair(code: "042917", client: "10.0.1.1", nowMilliseconds: 0, token: token) == .failure(.wrongCode(attemptsLeft: 4)))
        // A damaged save: a code that is not six digits is replaced, sessions without a hash dropped.
        let damaged = Pairing(saved: Pairing.Saved(code: "12ab", sessions: [.init(tokenHash: "", csrf: "c", group: "g")]), hash: sessionTokenHash, newCode: { "271828" })
        #expect(damaged.code == "271828" && damaged.saved.sessions.isEmpty)
    }

    /// SHA-256 as Nettle computes it: the FIPS 180-2 test vectors.
    @Test func tokensAreHashedWithSHA256() {
        #expect(sessionTokenHash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(sessionTokenHash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func theRightCodePairsAndWrongOnesAreLimited() {
        var pairing = Pairing(code: "042917")
        var counter = 0
        func token() -> String { counter += 1; return "t\(counter)" }
        #expect(pairing.pair(code: "111111", client: "a", nowMilliseconds: 0, token: token) == .failure(.wrongCode(attemptsLeft: 4)))
        for attempt in 1...3 { _ = pairing.pair(code: "00000\(attempt)", client: "a", nowMilliseconds: Int64(attempt) * 1000, token: token) }
        #expect(pairing.pair(code: "222222", client: "a", nowMilliseconds: 5_000, token: token) == .failure(.tooManyAttempts(retryAfterSeconds: 60)))
        // Locked out even with the right code, until a minute has passed.
        #expect(pairing.pair(code: "042917", client: "a", nowMilliseconds: 30_000, token: token) == .failure(.tooManyAttempts(retryAfterSeconds: 35)))
        // Another address is not locked.
        guard case .success(let session) = pairing.pair(code: "042917", client: "b", nowMilliseconds: 30_000, token: token) else {
            Issue.record("the right code from another address must pair")
            return
        }
        #expect(pairing.session(token: session.token) == session)
        #expect(pairing.session(token: "forged") == nil)
        guard case .success = pairing.pair(code: "042917", client: "a", nowMilliseconds: 66_000, token: token) else {
            Issue.record("after the pause the right code pairs")
            return
        }
        #expect(Pairing.code(from: 42) == "000042")
    }
}

@Suite struct GuessingTests {
    /// Twenty wrong codes from anywhere (each client within its own limit)
    /// replace the code and pause pairing for everyone: the old code no
    /// longer pairs, the new one does after the pause; every wrong code and
    /// the replacement are events for the box to say.
    @Test func manyAddressesCannotBruteForceTheCode() {
        var pairing = Pairing(code: "042917")
        var counter = 0
        func token() -> String { counter += 1; return "t\(counter)" }
        var codes = ["777777"]
        for guess in 0..<19 {
            let result = pairing.pair(code: String(format: "%06d", guess + 1), client: "10.0.0.\(guess)", nowMilliseconds: Int64(guess), token: token, newCode: { codes.removeFirst() })
            #expect(result == .failure(.wrongCode(attemptsLeft: 4)))
        }
        #expect(pairing.pair(code: "000020", client: "10.0.1.1", nowMilliseconds: 20, token: token, newCode: { codes.removeFirst() })
            == .failure(.codeReplaced(retryAfterSeconds: 30)))
        #expect(pairing.code == "777777")
        let events = pairing.takeEvents()
        #expect(events.count == 21 && events.last == .codeReplaced(newCode: "777777", wrongCodes: 20))
        #expect(events.first == .wrongCode(group: "10.0.0.0", fromGroup: 1, sinceCodeShown: 1))
        // Paused for everyone, the right (new) code too; then the new code pairs and the old does not.
        #expect(pairing.pair(code: "777777", client: "192.168.1.5", nowMilliseconds: 10_000, token: token) == .failure(.codeReplaced(retryAfterSeconds: 21)))
        #expect(pairing.pair(code: "042917", client: "192.168.1.5", nowMilliseconds: 31_000, token: token) == .failure(.wrongCode(attemptsLeft: 4)))
        guard case .success(let session) = pairing.pair(code: "777777", client: "192.168.1.5", nowMilliseconds: 32_000, token: token) else {
            Issue.record("the new code must pair")
            return
        }
        #expect(session.group == "192.168.1.5" && pairing.hasSession(group: "192.168.1.5") && !pairing.hasSession(group: "10.0.0.0"))
    }

    /// One host speaking from many addresses counts as one: the loopback
    /// /8, an IPv6 /64 (however written), an IPv4-mapped address as IPv4.
    @Test func clientGroups() {
        #expect(WebClient.group("127.4.5.6") == "127.0.0.0/8" && WebClient.group("::1") == "127.0.0.0/8")
        #expect(WebClient.group("192.168.1.9") == "192.168.1.9" && WebClient.group("::ffff:192.168.1.9") == "192.168.1.9")
        #expect(WebClient.group("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(WebClient.group("2001:db8:1:2:bbbb:cccc:dddd:eeee") == "2001:db8:1:2::/64")
        #expect(WebClient.group("2001:db8::1") == "2001:db8:0:0::/64")
        #expect(WebClient.group("fe80::1") == "fe80:0:0:0::/64")
    }
}

let actionsTaken = Mutex<[String]>([])

/// A request as a browser sends one (its `Host` the box's name).
func testRequest(method: String, path: String, headers: [String: String] = [:], body: [UInt8] = [], client: String = "test") -> WebRequest {
    WebRequest(method: method, path: path, headers: ["host": "box.local"].merging(headers) { _, given in given }, body: body, client: client)
}

/// A box for the web app: live states whose measures count up, two
/// actions, changes and downloads recorded, an upload refused or kept.
final class FakeBox: WebBox {
    let serial = Atomic<Int64>(0)
    let changes = Mutex<[WebChange]>([])
    let uploads = Mutex<[(String, Int)]>([])

    func live() -> WebLiveState {
        var state = WebLiveState()
        state.serial = serial.add(1, ordering: .relaxed).newValue
        state.state = "playing"
        state.measure = Int(state.serial)
        state.takesVersion = Int(state.serial / 3)
        return state
    }

    /// Set: the score could not be engraved, for this reason.
    let engraveProblem: String?

    init(engraveProblem: String? = nil) { self.engraveProblem = engraveProblem }

    func score(_ size: WebScoreSize) -> WebScore? {
        engraveProblem != nil ? nil : size == .narrow ? FakeBox.narrowScore : size == .wide ? FakeBox.wideScore : nil
    }

    func scoreProblem() -> String? { engraveProblem }

    /// The wide score: an SVG of 400 kB (inflated in several pieces); the narrow one small.
    static let wideSVG = "<svg>\n" + (0..<8_000).map { "<line x1=\"\($0)\" y1=\"0\" x2=\"\($0 % 97)\" y2=\"4\"/>\n" }.joined() + "</svg>\n"
    static let wideScore = written(wideSVG, timeMap: "[]")
    static let narrowScore = written("<svg n/>", timeMap: "[1]")

    /// A score's files as the engraver writes them.
    static func written(_ svg: String, timeMap: String) -> WebScore? {
        let folder = NSTemporaryDirectory() + "fake-score-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard let writer = try? GzipFileWriter(path: folder + "/" + WebScore.svgName) else { return nil }
        for piece in stride(from: 0, to: svg.utf8.count, by: 50_000) {
            try? writer.write(String(decoding: Array(svg.utf8)[piece..<min(svg.utf8.count, piece + 50_000)], as: UTF8.self))
        }
        try? writer.finish()
        _ = FileManager.default.createFile(atPath: folder + "/" + WebScore.timeMapName, contents: Data(timeMap.utf8))
        return WebScore(folder: folder)
    }

    func act(_ name: String) -> Bool {
        guard ["play-pause", "stop"].contains(name) else { return false }
        actionsTaken.withLock { $0.append(name) }
        return true
    }

    func takes() -> WebTakes {
        WebTakes(song: "Song", parts: ["Alto", "Bass"], currentPart: 0,
                 takes: [WebTake(id: 3, part: "Alto", state: "kept", active: true, seconds: 12.5, measures: "5-8", nudgeMilliseconds: -2.5)])
    }

    func perform(_ change: WebChange) -> Result<String, WebFailure> {
        changes.withLock { $0.append(change) }
        if case .activate(let id) = change, id == 99 { return .failure(WebFailure(409, "no take 99")) }
        return .success("done \(change)")
    }

    func download(_ what: WebDownload) -> Result<WebFile, WebFailure> {
        guard case .take(3) = what else { return .failure(WebFailure(404, "no \(what)")) }
        return .success(WebFile(path: "/etc/hostname", contentType: "audio/wav", downloadName: "song-take-3.wav", temporary: false))
    }

    func library() -> [WebSong] { [WebSong(index: 0, title: "Song", tags: ["hymn"], current: true, uploaded: false)] }

    func upload(fileName: String, bytes: [UInt8]) -> Result<WebUpload, WebFailure> {
        uploads.withLock { $0.append((fileName, bytes.count)) }
        return .success(WebUpload(title: "New", index: 1, report: []))
    }
}

func testApp(guests: GuestAccess = .none, interval: Duration = .milliseconds(5), box: FakeBox = FakeBox()) -> WebApp {
    WebApp(assets: ["/": (type: "text/html", bytes: Array("<html>box</html>".utf8))], guests: guests, pairingCode: "123456", box: box,
           eventInterval: interval, clock: { 0 }, random: { UUID().uuidString.replacingOccurrences(of: "-", with: "") })
}

@Suite struct WebAppTests {
    func response(_ reply: WebReply) -> WebResponse {
        switch reply {
        case .response(let response): return response
        case .file(let file): return WebResponse(status: 200, contentType: file.contentType, body: Array(FileManager.default.contents(atPath: file.path) ?? Data()))
        case .events: return WebResponse(status: 0, contentType: "", body: [])
        }
    }

    /// A phone signs itself out (its cookie cleared, its session gone);
    /// "every phone" signs all out and shows a new code.
    @Test func phonesSignOut() throws {
        let codes = Mutex(["654321"])
        let app = WebApp(assets: ["/": (type: "text/html", bytes: Array("<html>box</html>".utf8))], guests: .none, pairingCode: "123456", box: FakeBox(),
                         clock: { 0 }, random: { UUID().uuidString.replacingOccurrences(of: "-", with: "") },
                         newPairingCode: { codes.withLock { $0.removeFirst() } })
        func pair(_ code: String) throws -> (cookie: String, csrf: String) {
            let paired = response(app.handle(testRequest(method: "POST", path: "/api/pair", body: Array(code.utf8))))
            let cookie = try #require(paired.headers.first { $0.0 == "Set-Cookie" }?.1)
            #expect(cookie.contains("Max-Age=31536000"), "a pairing that lasts")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(paired.body)) as? [String: Any])
            return (String(cookie.split(separator: ";")[0]), try #require(object["csrf"] as? String))
        }
        func state(_ phone: (cookie: String, csrf: String)) -> Int {
            response(app.handle(testRequest(method: "GET", path: "/api/state", headers: ["cookie": phone.cookie]))).status
        }
        let first = try pair("123456"), second = try pair("123456")
        let before = app.pairingRevision
        let out = response(app.handle(testRequest(method: "POST", path: "/api/sign-out", headers: ["cookie": first.cookie, "x-csrf-token": first.csrf])))
        #expect(out.status == 200 && out.headers.contains { $0.0 == "Set-Cookie" && $0.1.contains("Max-Age=0") })
        #expect(state(first) == 401 && state(second) == 200 && app.pairingRevision > before)
        let everyone = response(app.handle(testRequest(method: "POST", path: "/api/sign-out-everyone", headers: ["cookie": second.cookie, "x-csrf-token": second.csrf])))
        #expect(everyone.status == 200 && state(second) == 401)
        #expect(app.pairingCode == "654321" && app.savedPairing.saved.sessions.isEmpty)
        // Signing out needs the session and its CSRF token, like any change.
        #expect(response(app.handle(testRequest(method: "POST", path: "/api/sign-out-everyone", headers: ["cookie": second.cookie]))).status == 401)
        _ = try pair("654321")
    }

    @Test func pairingGivesASessionAndCSRFGuardsChanges() throws {
        let app = testApp()
        #expect(response(app.handle(testRequest(method: "GET", path: "/"))).status == 200)
        #expect(response(app.handle(testRequest(method: "GET", path: "/api/state"))).status == 401)
        #expect(response(app.handle(testRequest(method: "GET", path: "/../etc/passwd"))).status == 401)
        #expect(response(app.handle(testRequest(method: "POST", path: "/api/pair", body: Array("654321".utf8)))).status == 403)
        let paired = response(app.handle(testRequest(method: "POST", path: "/api/pair", body: Array("123456".utf8))))
        #expect(paired.status == 200)
        let cookie = try #require(paired.headers.first { $0.0 == "Set-Cookie" }?.1)
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        let token = String(cookie.split(separator: ";")[0])
        let state = response(app.handle(testRequest(method: "GET", path: "/api/state", headers: ["cookie": token])))
        #expect(state.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(state.body)) as? [String: Any])
        #expect(object["state"] as? String == "playing")
        let csrf = try #require(object["csrf"] as? String)
        // A change without the token, with a wrong one, or from another site.
        #expect(response(app.handle(testRequest(method: "POST", path: "/api/action", headers: ["cookie": token]))).status == 403)
        #expect(response(app.handle(testRequest(method: "POST", path: "/api/action", headers: ["cookie": token, "x-csrf-token": "x"]))).status == 403)
        #expect(response(app.handle(testRequest(method: "POST", path: "/api/action",
                                               headers: ["cookie": token, "x-csrf-token": csrf, "sec-fetch-site": "cross-site"]))).status == 403)
        #expect(response(app.handle(testRequest(method: "POST", path: "/api/action",
                                               headers: ["cookie": token, "x-csrf-token": csrf, "origin": "http://evil.example", "host": "box:8080"]))).status == 403)
        #expect(response(app.handle(testRequest(method: "POST", path: "/api/action", headers: ["x-csrf-token": csrf]))).status == 401)
        // With the session and the token, an action reaches the box; an
        // unknown one is refused by name.
        let before = actionsTaken.withLock { $0.count }
        #expect(response(app.handle(testRequest(method: "POST", path: "/api/action", headers: ["cookie": token, "x-csrf-token": csrf],
                                               body: Array("play-pause".utf8)))).status == 200)
        #expect(actionsTaken.withLock { Array($0.dropFirst(before)) } == ["play-pause"])
        #expect(response(app.handle(testRequest(method: "POST", path: "/api/action", headers: ["cookie": token, "x-csrf-token": csrf],
                                               body: Array("explode".utf8)))).status == 400)
    }

    @Test func guestsMayWatchWhenAllowed() {
        #expect(response(testApp(guests: .view).handle(testRequest(method: "GET", path: "/score.svg"))).status == 200)
        #expect(response(testApp(guests: .none).handle(testRequest(method: "GET", path: "/score.svg"))).status == 401)
        // A guest watches; takes, the library and downloads are the singer's.
        let guest = testApp(guests: .view)
        for path in ["/api/takes", "/api/library", "/download/take-3.wav", "/download/mix.wav"] {
            #expect(response(guest.handle(testRequest(method: "GET", path: path))).status == 401, "\(path)")
        }
    }

    /// A paired app's cookie and CSRF token.
    func paired(_ app: WebApp) throws -> (cookie: String, csrf: String) {
        let reply = response(app.handle(testRequest(method: "POST", path: "/api/pair", body: Array("123456".utf8))))
        let cookie = String(try #require(reply.headers.first { $0.0 == "Set-Cookie" }?.1).split(separator: ";")[0])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
        return (cookie, try #require(object["csrf"] as? String))
    }

    @Test func takesLibraryAndChangesReachTheBox() throws {
        let box = FakeBox()
        let app = testApp(box: box)
        let (cookie, csrf) = try paired(app)
        let takes = response(app.handle(testRequest(method: "GET", path: "/api/takes", headers: ["cookie": cookie])))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(takes.body)) as? [String: Any])
        #expect(object["parts"] as? [String] == ["Alto", "Bass"])
        let take = try #require((object["takes"] as? [[String: Any]])?.first)
        #expect(take["id"] as? Int == 3 && take["measures"] as? String == "5-8" && take["nudgeMilliseconds"] as? Double == -2.5)
        let library = response(app.handle(testRequest(method: "GET", path: "/api/library", headers: ["cookie": cookie])))
        #expect(String(decoding: library.body, as: UTF8.self).contains("\"tags\":[\"hymn\"]"))
        #expect(response(app.handle(testRequest(method: "GET", path: "/api/analysis", headers: ["cookie": cookie]))).status == 404)
        func post(_ path: String, _ body: String, headers: [String: String] = [:]) -> Int {
            response(app.handle(testRequest(method: "POST", path: path, headers: ["cookie": cookie, "x-csrf-token": csrf].merging(headers) { $1 },
                                           body: Array(body.utf8)))).status
        }
        #expect(post("/api/take/3/activate", "") == 200)
        #expect(post("/api/take/99/activate", "") == 409)
        #expect(post("/api/take/3/nudge", "-10") == 200)
        #expect(post("/api/take/3/nudge", "5000") == 400)
        #expect(post("/api/take/3/correct", "7-9") == 200)
        #expect(post("/api/take/3/correct", "flagged") == 200)
        #expect(post("/api/take/3/correct", "most") == 400)
        #expect(post("/api/take/3/explode", "") == 404)
        #expect(post("/api/take/x/discard", "") == 404)
        #expect(post("/api/take/3/discard", "") == 200)
        // A take chosen from another project's list of takes: refused, nothing done.
        #expect(post("/api/take/3/discard", "", headers: ["x-takes": "0123456789abcdef"]) == 409)
        #expect(post("/api/take/3/discard", "", headers: ["x-takes": ""]) == 200)
        #expect(post("/api/undo", "") == 200)
        #expect(post("/api/choose", "2 1") == 200)
        #expect(post("/api/choose", "two") == 400)
        #expect(post("/api/loop", "5-8") == 200)
        #expect(post("/api/loop", "8-5") == 400)
        #expect(post("/api/loop", "off") == 200)
        #expect(post("/api/punch", "3") == 200)
        #expect(post("/api/punch", "99999-1") == 400)
        // The live mixer: a part's (or the reference's) level or pan, 0…127.
        #expect(post("/api/mix/1/level", "80") == 200)
        #expect(post("/api/mix/reference/pan", "0") == 200)
        #expect(post("/api/mix/1/level", "128") == 400)
        #expect(post("/api/mix/1/volume", "10") == 400)
        #expect(post("/api/mix/x/level", "10") == 404)
        #expect(post("/api/mix/99999/level", "10") == 404)
        // Its mute and solo, on or off.
        #expect(post("/api/mix/3/mute", "on") == 200)
        #expect(post("/api/mix/reference/solo", "off") == 200)
        #expect(post("/api/mix/3/mute", "yes") == 400)
        #expect(post("/api/mix/3/solo", "") == 400)
        #expect(post("/api/mix/99999/solo", "on") == 404)
        // A song of the singer's to the trash.
        #expect(post("/api/song/4/remove", "") == 200)
        #expect(post("/api/song/4/delete", "") == 404)
        #expect(post("/api/song/x/remove", "") == 404)
        // The song's projects, by name (the box checks the name).
        #expect(post("/api/project/new", "Choir") == 200)
        #expect(post("/api/project/open", " Main\n") == 200)
        #expect(post("/api/project/remove", "Choir") == 200)
        #expect(post("/api/project/new", "") == 400)
        #expect(post("/api/project/new", "a\u{7}b") == 400)
        #expect(post("/api/project/new", String(repeating: "x", count: 81)) == 400)
        #expect(post("/api/project/rename", "Choir") == 404)
        // How the parts sang together: asked for, then read (none yet from this box).
        #expect(post("/api/blend", "") == 200)
        #expect(response(app.handle(testRequest(method: "GET", path: "/api/blend", headers: ["cookie": cookie]))).status == 404)
        // The recording set: parts (from 0) on inputs (from 1); nothing: one part at a time.
        #expect(post("/api/together", "0=1,1=2,3=4") == 200)
        #expect(post("/api/together", "") == 200)
        #expect(post("/api/together", "0=1,0=2") == 400)
        #expect(post("/api/together", "0=1,1=1") == 400)
        #expect(post("/api/together", "0=33") == 400)
        #expect(post("/api/together", "0=0") == 400)
        #expect(post("/api/together", "Soprano=1") == 400)
        #expect(post("/api/together", "0=1,") == 400)
        #expect(post("/api/together", "0=1=2") == 400)
        #expect(post("/api/together", String(repeating: " ", count: 250) + "0=1,1=2") == 413, "read whole or not at all")
        #expect(box.changes.withLock { $0 } == [.activate(take: 3), .activate(take: 99), .nudge(take: 3, milliseconds: -10), .correct(take: 3, measures: 7...9),
                                                .correct(take: 3, measures: nil), .discard(take: 3), .discard(take: 3), .undo,
                                                .choose(song: 2, part: 1), .loop(5...8), .loop(nil), .punch(3...3),
                                                .fader(part: 1, control: .level, value: 80), .fader(part: nil, control: .pan, value: 0),
                                                .mixSwitch(part: 3, .mute, on: true), .mixSwitch(part: nil, .solo, on: false), .removeSong(4),
                                                .project(.create("Choir")), .project(.select("Main")), .project(.remove("Choir")), .blend,
                                                .together([WebPartInput(part: 0, input: 1), WebPartInput(part: 1, input: 2), WebPartInput(part: 3, input: 4)]), .together([])])
        // Changes need the token; an upload goes to the box with its name.
        #expect(response(app.handle(testRequest(method: "POST", path: "/api/take/3/activate", headers: ["cookie": cookie]))).status == 403)
        #expect(post("/api/upload", "<score-partwise/>", headers: ["x-file-name": "hymn.musicxml"]) == 200)
        #expect(box.uploads.withLock { $0.map(\.0) } == ["hymn.musicxml"])
        // Downloads: only the addresses the box makes; a file reply for a take.
        guard case .file(let file) = app.handle(testRequest(method: "GET", path: "/download/take-3.wav", headers: ["cookie": cookie])) else {
            Issue.record("a take downloads as a file")
            return
        }
        #expect(file.downloadName == "song-take-3.wav")
        #expect(response(app.handle(testRequest(method: "GET", path: "/download/take-4.wav", headers: ["cookie": cookie]))).status == 404)
        #expect(response(app.handle(testRequest(method: "GET", path: "/download/../../etc/passwd", headers: ["cookie": cookie]))).status == 404)
    }

    /// The score is sent from its gzip file as it is to a browser that
    /// takes gzip, inflated on its way to one that does not; the time map as JSON.
    @Test func theScoreIsCompressedWhenAccepted() throws {
        let app = testApp(guests: .view)
        guard case .file(let compressed) = app.handle(testRequest(method: "GET", path: "/score.svg", headers: ["accept-encoding": "gzip, deflate"])) else {
            Issue.record("the score is sent from its file")
            return
        }
        #expect(compressed.gzip && !compressed.inflate && compressed.downloadName == nil && compressed.contentType == "image/svg+xml")
        guard case .file(let plain) = app.handle(testRequest(method: "GET", path: "/score.svg")) else { return }
        #expect(plain.gzip && plain.inflate)
        guard case .file(let narrow) = app.handle(testRequest(method: "GET", path: "/score-narrow.svg")) else { return }
        var inflated: [UInt8] = []
        let reader = try #require(GzipFileReader(path: narrow.path))
        while let piece = reader.next() { inflated += piece }
        #expect(inflated == Array("<svg n/>".utf8))
        #expect(response(app.handle(testRequest(method: "GET", path: "/timemap-narrow.json"))).body == Array("[1]".utf8))
        // The zoom steps, asked for by name: one not engraved yet is a 404 (the page keeps the one it shows); no other size exists.
        #expect(response(app.handle(testRequest(method: "GET", path: "/score-large.svg"))).status == 404)
        #expect(response(app.handle(testRequest(method: "GET", path: "/score-huge.svg"))).status != 200)
        #expect(WebScoreSize(scorePath: "/timemap-medium.json") == .medium && WebScoreSize(scorePath: "/score.svg") == .wide)
        #expect(WebScoreSize(scorePath: "/score-huge.svg") == nil && WebScoreSize(scorePath: "/score-large.json") == nil)
        #expect(WebScoreSize.allCases.map(\.widthMM) == [nil, 130, 100, 75])
        // zlib's own reader gives the SVG back whole.
        let gunzip = Process()
        gunzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gunzip.arguments = ["-dc", compressed.path]
        let pipe = Pipe()
        gunzip.standardOutput = pipe
        try gunzip.run()
        let text = pipe.fileHandleForReading.readDataToEndOfFile()
        gunzip.waitUntilExit()
        #expect(String(decoding: text, as: UTF8.self) == FakeBox.wideSVG)
    }

    /// A score that could not be engraved is said, not promised.
    @Test func aScoreThatCouldNotBeEngravedIsSaid() throws {
        let app = testApp(guests: .view, box: FakeBox(engraveProblem: "the music font is missing"))
        let reply = response(app.handle(testRequest(method: "GET", path: "/score.svg")))
        #expect(reply.status == 500)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
        #expect(object["error"] as? String == "the score could not be engraved: the music font is missing")
    }

    /// Silence reads -inf dB: the state still goes out, as JSON can carry it.
    @Test func aSilentInputStillMakesJSON() throws {
        var state = WebLiveState()
        state.level = -.infinity
        state.cents = .nan
        let data = try JSONSerialization.data(withJSONObject: state.json)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["level"] as? Double == -120)
        #expect(object["cents"] is NSNull)
    }

    @Test func downloadAddresses() {
        #expect(WebApp.download("/download/take-7.wav") == .take(7))
        #expect(WebApp.download("/download/take-7-with-others.wav") == .takeWithOthers(7))
        #expect(WebApp.download("/download/mix.flac") == .mix(format: "flac"))
        #expect(WebApp.download("/download/mix.ogg") == nil)
        #expect(WebApp.download("/download/practice-2.mp3") == .practice(part: 2, format: "mp3"))
        #expect(WebApp.download("/download/practice--2.mp3") == nil)
        #expect(WebApp.download("/download/project.zip") == .project)
        #expect(WebApp.download("/download/take-7.flac") == nil)
        #expect(WebApp.download("/download/take-x.wav") == nil)
        #expect(WebApp.measures("12-14") == 12...14)
        #expect(WebApp.measures("5") == 5...5)
        #expect(WebApp.measures("-5") == nil)
        #expect(WebApp.measures("123456") == nil)
    }
}

/// The real server (libmicrohttpd) on a free port, asked over HTTP.
@Suite struct AdmissionTests {
    /// Before a byte of a body is read: only a pairing code, or a paired
    /// page's change with its CSRF token, may send one, each within its
    /// size; a request naming another host (DNS rebinding) or none is refused.
    @Test func bodiesOnlyFromThoseWhoMaySendThem() throws {
        let app = testApp(guests: .none)
        app.setHostNames(["acapella.local", "choirbox"])
        func admitted(_ method: String, _ path: String, _ headers: [String: String]) -> Int {
            switch app.admit(method: method, path: path, headers: headers, client: "10.1.1.1") {
            case .accept(let limit): return limit
            case .refuse(let response): return -response.status
            }
        }
        #expect(admitted("POST", "/api/upload", ["host": "acapella.local:8080"]) == -401)
        #expect(admitted("POST", "/api/action", ["host": "acapella.local"]) == -401)
        #expect(admitted("POST", "/api/pair", ["host": "acapella.local:8080"]) == WebApp.maximumSmallBody)
        #expect(admitted("POST", "/api/pair", ["host": "evil.example:8080"]) == -403)
        #expect(admitted("GET", "/api/state", ["host": "evil.example"]) == -403)
        #expect(admitted("GET", "/", [:]) == -400)
        #expect(admitted("GET", "/", ["host": "192.168.1.20:8080"]) == 0 && admitted("GET", "/", ["host": "[fe80::1]:8080"]) == 0)
        #expect(admitted("GET", "/", ["host": "CHOIRBOX."]) == 0 && admitted("GET", "/", ["host": "localhost:8080"]) == 0)
        #expect(admitted("PUT", "/api/pair", ["host": "choirbox"]) == -405)
        let reply = app.handle(WebRequest(method: "POST", path: "/api/pair", headers: ["host": "acapella.local"], body: Array("123456".utf8)))
        guard case .response(let paired) = reply, let cookie = paired.headers.first(where: { $0.0 == "Set-Cookie" })?.1.split(separator: ";").first else {
            Issue.record("no session")
            return
        }
        let csrf = try #require((try JSONSerialization.jsonObject(with: Data(paired.body)) as? [String: Any])?["csrf"] as? String)
        #expect(admitted("POST", "/api/upload", ["host": "acapella.local", "cookie": String(cookie), "x-csrf-token": csrf]) == WebApp.maximumBody)
        #expect(admitted("POST", "/api/action", ["host": "acapella.local", "cookie": String(cookie), "x-csrf-token": csrf]) == WebApp.maximumSmallBody)
        #expect(admitted("POST", "/api/action", ["host": "acapella.local", "cookie": String(cookie)]) == -403)
        #expect(app.isPaired(group: "test") && !app.isPaired(group: "10.1.1.1"))
    }

    /// Guests' event streams are capped per client group and in all, and
    /// counted out when a stream ends.
    @Test func guestStreamsAreCapped() {
        let app = testApp(guests: .view)
        var open: [@Sendable () -> [UInt8]?] = []
        func watch(_ client: String) -> Int {
            switch app.handle(testRequest(method: "GET", path: "/events", client: client)) {
            case .events(let next):
                open.append(next)
                return 200
            case .response(let response): return response.status
            case .file: return 0
            }
        }
        #expect(watch("10.0.0.1") == 200 && watch("10.0.0.1") == 200 && watch("10.0.0.1") == 503)
        for index in 2...4 { #expect(watch("10.0.0.\(index)") == 200 && watch("10.0.0.\(index)") == 200) }
        #expect(watch("10.0.0.9") == 503, "eight guest streams in all")
        open.removeAll()  // the streams end
        #expect(watch("10.0.0.9") == 200)
    }
}

@Suite struct WebServerTests {
    /// A session that keeps no cookies: each test sends its own, never
    /// those another test's server set on 127.0.0.1 (cookies know no port).
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return URLSession(configuration: configuration)
    }()

    func fetch(_ url: String, method: String = "GET", body: String? = nil, headers: [String: String] = [:]) throws -> (Int, [String: String], Data) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let result = Mutex<(Int, [String: String], Data)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Self.session.dataTask(with: request) { data, response, _ in
            let http = response as? HTTPURLResponse
            let headers = (http?.allHeaderFields ?? [:]).reduce(into: [String: String]()) { $0["\($1.key)".lowercased()] = "\($1.value)" }
            result.withLock { $0 = (http?.statusCode ?? 0, headers, data ?? Data()) }
            done.signal()
        }.resume()
        _ = done.wait(timeout: .now() + 10)
        return result.withLock { $0 } ?? (0, [:], Data())
    }

    @Test func servesPairsAndStreamsEvents() throws {
        let port = UInt16(20_000 + Int.random(in: 0..<20_000))
        let server = try WebServer(app: testApp(), port: port, bind: "127.0.0.1")
        defer { server.stop() }
        let base = "http://127.0.0.1:\(port)"
        let (status, headers, page) = try fetch(base + "/")
        #expect(status == 200)
        #expect(String(decoding: page, as: UTF8.self) == "<html>box</html>")
        #expect(headers["x-content-type-options"] == "nosniff")
        #expect(try fetch(base + "/api/state").0 == 401)
        let (pairStatus, pairHeaders, _) = try fetch(base + "/api/pair", method: "POST", body: "123456")
        #expect(pairStatus == 200)
        let cookie = String((pairHeaders["set-cookie"] ?? "").split(separator: ";").first ?? "")
        #expect(cookie.hasPrefix("acapella-session="))
        #expect(try fetch(base + "/api/state", headers: ["Cookie": cookie]).0 == 200)
        let big = String(repeating: "x", count: WebApp.maximumBody + 1)
        #expect(try fetch(base + "/api/pair", method: "POST", body: big).0 == 413)
        // The event stream: messages whose measures count up.
        let socket = try #require(TCPLine(port: port))
        socket.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(cookie)\r\n\r\n")
        let text = socket.read(until: "\ndata: {", count: 6, timeoutSeconds: 5)
        let measures = text.components(separatedBy: "\"measure\":").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        #expect(measures.count >= 6 && measures == measures.sorted(), "\(text.prefix(300))")
        // The takes changed (the fake's version counts up every third state): a named event.
        #expect(text.contains("event: takes\ndata: "), "\(text.prefix(600))")
        // A download: the file the box named, sent whole, saved under its name.
        let (fileStatus, fileHeaders, bytes) = try fetch(base + "/download/take-3.wav", headers: ["Cookie": cookie])
        #expect(fileStatus == 200)
        #expect(bytes == FileManager.default.contents(atPath: "/etc/hostname"))
        #expect(fileHeaders["content-disposition"] == "attachment; filename=\"song-take-3.wav\"")
        // Ranges of it, as a phone's player asks to seek (Safari's first
        // request is bytes=0-1); one outside it refused with its size.
        #expect(fileHeaders["accept-ranges"] == "bytes")
        let whole = try #require(FileManager.default.contents(atPath: "/etc/hostname"))
        #expect(whole.count >= 2)
        let (partStatus, partHeaders, part) = try fetch(base + "/download/take-3.wav", headers: ["Cookie": cookie, "Range": "bytes=1-1"])
        #expect(partStatus == 206 && part == whole[1...1] && partHeaders["content-range"] == "bytes 1-1/\(whole.count)")
        let (tailStatus, _, tail) = try fetch(base + "/download/take-3.wav", headers: ["Cookie": cookie, "Range": "bytes=-2"])
        #expect(tailStatus == 206 && tail == whole.suffix(2))
        let (outStatus, outHeaders, _) = try fetch(base + "/download/take-3.wav", headers: ["Cookie": cookie, "Range": "bytes=\(whole.count)-"])
        #expect(outStatus == 416 && outHeaders["content-range"] == "bytes */\(whole.count)")
    }

    /// The paired page is served whoever else is in its client group: 64
    /// connections from the loopback /8 (the page's own group, as the
    /// phones of one IPv6 /64 are), each a request head begun and never
    /// ended, are shut, the slowest first, to make room for it; none of
    /// the page's 20 requests is refused. (Before, a group a page had
    /// paired from held 16 connections, whoever's, and the page was refused.)
    @Test func aPairedPageIsServedThroughSlowConnectionsFromItsOwnGroup() throws {
        let port = UInt16(20_000 + Int.random(in: 0..<20_000))
        let server = try WebServer(app: testApp(), port: port, bind: "127.0.0.1")
        defer { server.stop() }
        let base = "http://127.0.0.1:\(port)"
        let (pairStatus, pairHeaders, _) = try fetch(base + "/api/pair", method: "POST", body: "123456")
        #expect(pairStatus == 200)
        let cookie = String((pairHeaders["set-cookie"] ?? "").split(separator: ";").first ?? "")
        var slow: [TCPLine] = []
        for n in 0..<64 {
            guard let line = TCPLine(port: port, from: "127.0.\(200 + n / 16).\(1 + n % 16)") else { continue }
            line.send("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            slow.append(line)
        }
        #expect(slow.count == 64)
        var served = 0
        var statuses: [Int] = []
        for _ in 0..<20 {
            let status = try fetch(base + "/api/state", headers: ["Cookie": cookie, "Connection": "close"]).0
            statuses.append(status)
            if status == 200 { served += 1 }
        }
        #expect(served == 20, "the paired page was refused \(20 - served) times of 20: \(statuses), \(server.refusals)")
        usleep(200_000)
        let shut = slow.filter(\.isClosed).count
        // The group holds 32: at least the 32 past them were shut.
        #expect(shut >= 32 && server.refusals.madeRoom >= 32, "\(shut) slow connections shut, \(server.refusals.madeRoom) to make room")
        #expect(server.refusals.atAccept == 0)
    }

    /// An upload's body goes to a nameless file in the spool folder as it
    /// arrives and reaches the box whole when it is in; one that does not
    /// fit the folder's disk is refused (507), nothing left behind.
    @Test func uploadsArriveThroughTheDisk() throws {
        let port = UInt16(20_000 + Int.random(in: 0..<20_000))
        let box = FakeBox()
        let spool = NSTemporaryDirectory() + "spool-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let server = try WebServer(app: testApp(box: box), port: port, bind: "127.0.0.1", spoolFolder: spool)
        defer { server.stop() }
        let base = "http://127.0.0.1:\(port)"
        let (_, pairHeaders, pairBody) = try fetch(base + "/api/pair", method: "POST", body: "123456")
        let cookie = String((pairHeaders["set-cookie"] ?? "").split(separator: ";").first ?? "")
        let csrf = try #require((try JSONSerialization.jsonObject(with: pairBody) as? [String: Any])?["csrf"] as? String)
        let song = String(repeating: "x", count: 3 << 20)
        let (status, _, _) = try fetch(base + "/api/upload", method: "POST", body: song, headers: ["Cookie": cookie, "X-CSRF-Token": csrf, "X-File-Name": "big.acasong"])
        #expect(status == 200)
        #expect(box.uploads.withLock { $0.map(\.1) } == [3 << 20], "the whole body reached the box")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty, "the spool has no names")
        // A spool folder that went away (the cache cleaned) is made again.
        try FileManager.default.removeItem(atPath: spool)
        let (again, _, _) = try fetch(base + "/api/upload", method: "POST", body: "acasong 1", headers: ["Cookie": cookie, "X-CSRF-Token": csrf, "X-File-Name": "s.acasong"])
        #expect(again == 200 && FileManager.default.fileExists(atPath: spool), "\(again)")
        // One that cannot be a folder (a file in its place): said, not a crash.
        try FileManager.default.removeItem(atPath: spool)
        try Data("a file".utf8).write(to: URL(fileURLWithPath: spool))
        let (gone, _, said) = try fetch(base + "/api/upload", method: "POST", body: "acasong 1", headers: ["Cookie": cookie, "X-CSRF-Token": csrf, "X-File-Name": "s.acasong"])
        #expect(gone == 507 && String(decoding: said, as: UTF8.self).contains("cannot keep the upload"), "\(gone)")
    }

    /// Two session cookies (a stale one beside the current, in either
    /// order, on one line or two): the live one is the session.
    @Test func theLiveOfTwoSessionCookiesIsTheSession() throws {
        let app = testApp()
        let paired = app.handle(WebRequest(method: "POST", path: "/api/pair", headers: ["host": "localhost"], body: Array("123456".utf8)))
        guard case .response(let answer) = paired, let setCookie = answer.headers.first(where: { $0.0 == "Set-Cookie" })?.1 else {
            Issue.record("not paired")
            return
        }
        let live = String(setCookie.split(separator: ";")[0])
        func state(_ cookie: String) -> Int {
            guard case .response(let reply) = app.handle(WebRequest(method: "GET", path: "/api/state", headers: ["host": "localhost", "cookie": cookie])) else { return 0 }
            return reply.status
        }
        #expect(state("acapella-session=stale; " + live) == 200)
        #expect(state(live + "; acapella-session=stale") == 200)
        #expect(state("acapella-session=stale; acapella-session=older") == 401)
        #expect(app.carriesSession(["cookie": "acapella-session=stale; " + live]) && !app.carriesSession(["cookie": "acapella-session=stale"]))
    }

    /// HTTP ranges as RFC 9110 has them: one range served, several or a
    /// malformed one ignored (the whole file), one outside it refused.
    @Test func byteRangesAreRead() {
        #expect(ByteRange.parse(nil, size: 100) == .success(nil))
        #expect(ByteRange.parse("bytes=0-1", size: 100) == .success(0...1))
        #expect(ByteRange.parse("bytes=10-", size: 100) == .success(10...99))
        #expect(ByteRange.parse("bytes=90-500", size: 100) == .success(90...99))
        #expect(ByteRange.parse("bytes=-30", size: 100) == .success(70...99))
        #expect(ByteRange.parse("bytes=-300", size: 100) == .success(0...99))
        #expect(ByteRange.parse("bytes=100-", size: 100) == .failure(ByteRange.Unsatisfiable()))
        #expect(ByteRange.parse("bytes=-0", size: 100) == .failure(ByteRange.Unsatisfiable()))
        #expect(ByteRange.parse("bytes=0-", size: 0) == .failure(ByteRange.Unsatisfiable()))
        for ignored in ["bytes=5-2", "bytes=0-1,5-6", "items=0-1", "bytes=a-b", "bytes=-", "bytes=99999999999999999999-", "bytes=1-2-3"] {
            #expect(ByteRange.parse(ignored, size: 100) == .success(nil), "\(ignored)")
        }
    }

    /// The score over HTTP: the gzip file as it is (with its encoding) to
    /// a client that takes gzip; inflated on its way, chunk by chunk, to one
    /// that does not — the same SVG either way.
    @Test func theScoreGoesCompressedOrInflated() throws {
        let port = UInt16(20_000 + Int.random(in: 0..<20_000))
        let server = try WebServer(app: testApp(guests: .view), port: port, bind: "127.0.0.1")
        defer { server.stop() }
        func get(_ headers: String) throws -> (head: String, body: [UInt8]) {
            let socket = try #require(TCPLine(port: port))
            socket.send("GET /score.svg HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\(headers)\r\n")
            let raw = socket.readAll(timeoutSeconds: 5)
            let split = try #require(raw.firstRange(of: Array("\r\n\r\n".utf8)))
            return (String(decoding: raw[..<split.lowerBound], as: UTF8.self).lowercased(), Array(raw[split.upperBound...]))
        }
        let (gzipHead, gzipBody) = try get("Accept-Encoding: gzip\r\n")
        #expect(gzipHead.contains("content-encoding: gzip") && gzipHead.contains("vary: accept-encoding") && gzipHead.contains("cache-control: no-cache"))
        #expect(gzipBody == Array(FileManager.default.contents(atPath: try #require(FakeBox.wideScore).svgGzipPath) ?? Data()))
        let (plainHead, plainBody) = try get("")
        #expect(!plainHead.contains("content-encoding") && plainHead.contains("transfer-encoding: chunked"), "\(plainHead)")
        #expect(String(decoding: TCPLine.unchunked(plainBody), as: UTF8.self) == FakeBox.wideSVG)
    }
}

/// A raw TCP client for reading an event stream.
final class TCPLine {
    let descriptor: Int32

    /// Connected to the box on 127.0.0.1 from `source` (any address of the loopback /8).
    init?(port: UInt16, from source: String? = nil) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            if bound != 0 { close(descriptor); return nil }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        if connected != 0 { close(descriptor); return nil }
    }

    deinit { close(descriptor) }

    func send(_ text: String) { _ = Array(text.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }

    /// Whether the server has closed it (a read finds the end).
    var isClosed: Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT)) == 0
    }

    /// Everything until the server closes.
    func readAll(timeoutSeconds: Int) -> [UInt8] {
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let got = Glibc.read(descriptor, &buffer, buffer.count)
            if got <= 0 { break }
            bytes += buffer[0..<got]
        }
        return bytes
    }

    /// An HTTP/1.1 chunked body's bytes joined.
    static func unchunked(_ body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while let end = body[index...].firstRange(of: Array("\r\n".utf8)), let size = Int(String(decoding: body[index..<end.lowerBound], as: UTF8.self), radix: 16), size > 0 {
            out += body[end.upperBound..<min(body.count, end.upperBound + size)]
            index = end.upperBound + size + 2
            guard index < body.count else { break }
        }
        return out
    }

    func read(until marker: String, count: Int, timeoutSeconds: Int) -> String {
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while text.components(separatedBy: marker).count - 1 < count + 1 {
            let got = Glibc.read(descriptor, &buffer, buffer.count)
            if got <= 0 { break }
            text += String(decoding: buffer[0..<got], as: UTF8.self)
        }
        return text
    }
}
