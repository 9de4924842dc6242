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

let actionsTaken = Mutex<[String]>([])

func testApp(guests: GuestAccess = .none, interval: Duration = .milliseconds(5)) -> WebApp {
    let serial = Atomic<Int64>(0)
    return WebApp(assets: ["/": (type: "text/html", bytes: Array("<html>box</html>".utf8))], guests: guests, pairingCode: "123456",
                  live: {
                      var state = WebLiveState()
                      state.serial = serial.add(1, ordering: .relaxed).newValue
                      state.state = "playing"
                      state.measure = Int(state.serial)
                      return state
                  },
                  score: { (Array("<svg/>".utf8), Array("[]".utf8)) },
                  act: { name in
                      guard ["play-pause", "stop"].contains(name) else { return false }
                      actionsTaken.withLock { $0.append(name) }
                      return true
                  }, eventInterval: interval,
                  clock: { 0 }, random: { UUID().uuidString.replacingOccurrences(of: "-", with: "") })
}

@Suite struct WebAppTests {
    func response(_ reply: WebReply) -> WebResponse {
        guard case .response(let response) = reply else { return WebResponse(status: 0, contentType: "", body: []) }
        return response
    }

    @Test func pairingGivesASessionAndCSRFGuardsChanges() throws {
        let app = testApp()
        #expect(response(app.handle(WebRequest(method: "GET", path: "/"))).status == 200)
        #expect(response(app.handle(WebRequest(method: "GET", path: "/api/state"))).status == 401)
        #expect(response(app.handle(WebRequest(method: "GET", path: "/../etc/passwd"))).status == 404)
        #expect(response(app.handle(WebRequest(method: "POST", path: "/api/pair", body: Array("654321".utf8)))).status == 403)
        let paired = response(app.handle(WebRequest(method: "POST", path: "/api/pair", body: Array("123456".utf8))))
        #expect(paired.status == 200)
        let cookie = try #require(paired.headers.first { $0.0 == "Set-Cookie" }?.1)
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        let token = String(cookie.split(separator: ";")[0])
        let state = response(app.handle(WebRequest(method: "GET", path: "/api/state", headers: ["cookie": token])))
        #expect(state.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(state.body)) as? [String: Any])
        #expect(object["state"] as? String == "playing")
        let csrf = try #require(object["csrf"] as? String)
        // A change without the token, with a wrong one, or from another site.
        #expect(response(app.handle(WebRequest(method: "POST", path: "/api/action", headers: ["cookie": token]))).status == 403)
        #expect(response(app.handle(WebRequest(method: "POST", path: "/api/action", headers: ["cookie": token, "x-csrf-token": "x"]))).status == 403)
        #expect(response(app.handle(WebRequest(method: "POST", path: "/api/action",
                                               headers: ["cookie": token, "x-csrf-token": csrf, "sec-fetch-site": "cross-site"]))).status == 403)
        #expect(response(app.handle(WebRequest(method: "POST", path: "/api/action",
                                               headers: ["cookie": token, "x-csrf-token": csrf, "origin": "http://evil.example", "host": "box:8080"]))).status == 403)
        #expect(response(app.handle(WebRequest(method: "POST", path: "/api/action", headers: ["x-csrf-token": csrf]))).status == 401)
        // With the session and the token, an action reaches the box; an
        // unknown one is refused by name.
        let before = actionsTaken.withLock { $0.count }
        #expect(response(app.handle(WebRequest(method: "POST", path: "/api/action", headers: ["cookie": token, "x-csrf-token": csrf],
                                               body: Array("play-pause".utf8)))).status == 200)
        #expect(actionsTaken.withLock { Array($0.dropFirst(before)) } == ["play-pause"])
        #expect(response(app.handle(WebRequest(method: "POST", path: "/api/action", headers: ["cookie": token, "x-csrf-token": csrf],
                                               body: Array("explode".utf8)))).status == 400)
    }

    @Test func guestsMayWatchWhenAllowed() {
        #expect(response(testApp(guests: .view).handle(WebRequest(method: "GET", path: "/score.svg"))).status == 200)
        #expect(response(testApp(guests: .none).handle(WebRequest(method: "GET", path: "/score.svg"))).status == 401)
    }
}

/// The real server (libmicrohttpd) on a free port, asked over HTTP.
@Suite struct WebServerTests {
    func fetch(_ url: String, method: String = "GET", body: String? = nil, headers: [String: String] = [:]) throws -> (Int, [String: String], Data) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let result = Mutex<(Int, [String: String], Data)?>(nil)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, _ in
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
        let text = socket.read(until: "data: ", count: 3, timeoutSeconds: 5)
        let measures = text.components(separatedBy: "\"measure\":").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        #expect(measures.count >= 3 && measures == measures.sorted(), "\(text.prefix(300))")
    }
}

/// A raw TCP client for reading an event stream.
final class TCPLine {
    let descriptor: Int32

    init?(port: UInt16) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        if connected != 0 { close(descriptor); return nil }
    }

    deinit { close(descriptor) }

    func send(_ text: String) { _ = Array(text.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }

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
