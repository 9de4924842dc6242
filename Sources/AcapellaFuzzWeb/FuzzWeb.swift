// libFuzzer entry point for the web page's router: any request — method,
// path, headers, body, paired or not — is answered, never a crash or a
// trap, and every number it hands the box is within range.
//
//   swift build -c release --sanitize=fuzzer -Xswiftc -DFUZZING --product acapella-fuzz-web --scratch-path .build/fuzz
//   .build/fuzz/release/acapella-fuzz-web -runs=1000000 Tests/Fuzz/web-corpus
//
// Built normally (without FUZZING) it replays the files named on the
// command line. An input is: a byte choosing the method and whether the
// request carries the paired session and its CSRF token, then the path up
// to a newline, header lines up to an empty line, then the body.
import AcapellaScore
import AcapellaWeb
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWeb(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    checkWeb(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// A box that checks what the router hands it.
struct CheckingBox: WebBox {
    func live() -> WebLiveState { WebLiveState() }
    func score(_ size: WebScoreSize) -> WebScore? { nil }
    func act(_ name: String) -> Bool { name == "play-pause" }
    func takes() -> WebTakes { WebTakes() }
    func library() -> [WebSong] { [] }
    func nextLive(after generation: Int, timeout: Duration) -> (state: WebLiveState, generation: Int) { (live(), generation + 1) }
    func perform(_ change: WebChange) -> Result<String, WebFailure> {
        switch change {
        case .activate(let id), .discard(let id): precondition(id >= 1 && id <= Int(Int32.max), "take id \(id)")
        case .correct(let id, let range):
            precondition(id >= 1 && id <= Int(Int32.max), "take id \(id)")
            if let range { precondition(range.lowerBound >= 0 && range.upperBound <= 9_999, "measures \(range)"); _ = range.upperBound + 1 }
        case .name(let id, let name):
            precondition(id >= 1 && id <= Int(Int32.max) && name.map { !$0.isEmpty && $0.count <= 80 } != false, "take \(id) name \(String(describing: name))")
        case .nudge(let id, let milliseconds):
            precondition(id >= 1 && id <= Int(Int32.max) && (-1_000...1_000).contains(milliseconds), "nudge \(id) \(milliseconds)")
            _ = Int64(milliseconds) * 192_000 / 1_000
        case .choose(let song, let part):
            precondition((0...99_999).contains(song), "song \(song)")
            if let part { precondition((0..<ScoreLimits.maximumParts).contains(part), "part \(part)"); _ = part + 1 }
            _ = song + 1
        case .loop(let range), .punch(let range):
            if let range { precondition(range.lowerBound >= 0 && range.upperBound <= 9_999, "measures \(range)"); _ = range.upperBound + 1 }
        case .fader(let part, _, let value):
            if let part { precondition((0..<ScoreLimits.maximumParts).contains(part), "fader part \(part)"); _ = part + 1 }
            precondition((0...127).contains(value), "fader value \(value)")
        case .mixSwitch(let part, _, _):
            if let part { precondition((0..<ScoreLimits.maximumParts).contains(part), "switch part \(part)"); _ = part + 1 }
        case .describeSong(let song, let title, let tags):
            precondition((0...99_999).contains(song) && (title?.count ?? 1) <= 120 && (tags?.count ?? 0) <= 12, "song \(song)")
        case .removeSong(let song):
            precondition((0...99_999).contains(song), "song \(song)"); _ = song + 1
        case .metronomeLevel(let value):
            precondition((0...127).contains(value), "metronome value \(value)")
        case .project(.create(let name)), .project(.select(let name)), .project(.remove(let name)):
            precondition(!name.isEmpty && name.count <= 80 && !name.unicodeScalars.contains(where: SafeText.isControl), "project \(name)")
        case .together(let set):
            precondition(set.count <= ScoreLimits.maximumParts, "a set of \(set.count)")
            for pair in set { precondition((0..<ScoreLimits.maximumParts).contains(pair.part) && (1...32).contains(pair.input), "set \(pair)"); _ = pair.part + pair.input }
            precondition(Set(set.map(\.part)).count == set.count && Set(set.map(\.input)).count == set.count, "set \(set): a part or an input twice")
        case .undo, .removeReference, .blend: break
        }
        return .success("done")
    }
    func download(_ what: WebDownload) -> Result<WebFile, WebFailure> {
        switch what {
        case .take(let id), .takeWithOthers(let id): precondition(id >= 1 && id <= Int(Int32.max), "take \(id)")
        case .practice(let part, let format):
            precondition((0..<ScoreLimits.maximumParts).contains(part) && ["wav", "flac", "mp3"].contains(format), "practice \(part)")
            _ = part + 1
        case .mix(let format): precondition(["wav", "flac", "mp3"].contains(format))
        case .project: break
        }
        return .failure(WebFailure(404, "nothing here"))
    }
    func upload(fileName: String, bytes: [UInt8]) -> Result<WebUpload, WebFailure> {
        precondition(bytes.count <= WebApp.maximumBody)
        return .failure(WebFailure(422, "not a song"))
    }
}

/// One app for every input: the pairing code is known, so a request may be paired.
let app = WebApp(assets: ["/": (type: "text/html", bytes: Array("<html>".utf8))], guests: .view, pairingCode: "123456", box: CheckingBox(),
                 clock: { 0 }, random: { "0123456789abcdef0123456789abcdef" })
let session: (cookie: String, csrf: String) = {
    let reply = app.handle(WebRequest(method: "POST", path: "/api/pair", headers: ["host": "box"], body: Array("123456".utf8), client: "fuzz-pair"))
    guard case .response(let response) = reply, response.status == 200 else { fatalError("the fuzz target could not pair") }
    return ("acapella-session=0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef")
}()

/// Builds the request an input describes and hands it to the router.
func checkWeb(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let methods = ["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "POST", "POST"]
    let method = methods[Int(first & 7)]
    var rest = bytes.dropFirst()
    let pathEnd = rest.firstIndex(of: 0x0A) ?? rest.endIndex
    let path = String(decoding: rest[rest.startIndex..<pathEnd], as: UTF8.self)
    rest = pathEnd < rest.endIndex ? rest[(pathEnd + 1)...] : []
    var headers: [String: String] = ["host": "box"]
    while let end = rest.firstIndex(of: 0x0A), end > rest.startIndex {
        let line = String(decoding: rest[rest.startIndex..<end], as: UTF8.self)
        if let colon = line.firstIndex(of: ":") {
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        }
        rest = rest[(end + 1)...]
    }
    if rest.first == 0x0A { rest = rest.dropFirst() }
    if first & 0x08 != 0 { headers["cookie"] = session.cookie }
    if first & 0x10 != 0 { headers["x-csrf-token"] = session.csrf }
    if first & 0x20 != 0 { headers["host"] = nil }
    let request = WebRequest(method: method, path: path, headers: headers, body: Array(rest.prefix(WebApp.maximumBody)), client: "fuzz")
    switch app.handle(request) {
    case .response(let response): precondition((200...599).contains(response.status), "status \(response.status)")
    case .file, .events: break
    }
}

#if !FUZZING
import AcapellaFuzzSupport

@main
struct ReplayDriver {
    static func main() { replayFiles(checkWeb) }
}
#endif
