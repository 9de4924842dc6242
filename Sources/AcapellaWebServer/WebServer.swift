public import AcapellaWeb
internal import CMicroHTTPD
import Foundation
import Glibc

/// The box's HTTP server: libmicrohttpd, a thread per connection (an event
/// stream blocks only its own), capped connections overall and per
/// address, an idle timeout, a memory cap per connection and a body cap;
/// every request handed to a `WebApp`.
public final class WebServer: @unchecked Sendable {
    // @unchecked: `daemon` is written once in init and read in stop().
    private var daemon: OpaquePointer?
    private let app: WebApp
    /// The port listened on.
    public let port: UInt16

    /// Starts serving `app` on `port` (all interfaces, or `bind`: an IPv4
    /// or IPv6 address). Throws with the reason when the port is taken.
    public init(app: WebApp, port: UInt16, bind: String? = nil) throws(WebServerError) {
        self.app = app
        self.port = port
        let context = Unmanaged.passUnretained(self).toOpaque()
        var started: OpaquePointer?
        if let bind {
            var v4 = sockaddr_in()
            var v6 = sockaddr_in6()
            if inet_pton(AF_INET, bind, &v4.sin_addr) == 1 {
                v4.sin_family = sa_family_t(AF_INET)
                v4.sin_port = port.bigEndian
                started = withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    acapella_mhd_start(port, address, webAccessHandler, context, webRequestCompleted, 64, 16, 60, 256 << 10)
                } }
            } else if inet_pton(AF_INET6, bind, &v6.sin6_addr) == 1 {
                v6.sin6_family = sa_family_t(AF_INET6)
                v6.sin6_port = port.bigEndian
                started = withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    acapella_mhd_start(port, address, webAccessHandler, context, webRequestCompleted, 64, 16, 60, 256 << 10)
                } }
            } else {
                throw WebServerError("web.bind: '\(bind)' is not an IPv4 or IPv6 address")
            }
        } else {
            started = acapella_mhd_start(port, nil, webAccessHandler, context, webRequestCompleted, 64, 16, 60, 256 << 10)
        }
        guard let started else { throw WebServerError("cannot serve on port \(port) (in use, or not permitted)") }
        daemon = started
    }

    /// Stops serving (open event streams end).
    public func stop() {
        if let daemon { MHD_stop_daemon(daemon) }
        daemon = nil
    }

    deinit { stop() }

    func handle(_ request: WebRequest) -> WebReply { app.handle(request) }
}

/// A server problem, in one line.
public struct WebServerError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One request's body as it arrives.
final class RequestBody {
    var bytes: [UInt8] = []
    var tooLarge = false
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
    headers.pointee[String(cString: key).lowercased()] = value.map { String(cString: $0) } ?? ""
    return .YES
}

func webAccessHandler(_ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
                      _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ upload: UnsafePointer<CChar>?,
                      _ uploadSize: UnsafeMutablePointer<Int>?, _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let context, let connection, let url, let method, let requestContext else { return .NO }
    if requestContext.pointee == nil {
        requestContext.pointee = Unmanaged.passRetained(RequestBody()).toOpaque()
        return .YES
    }
    let body = Unmanaged<RequestBody>.fromOpaque(requestContext.pointee!).takeUnretainedValue()
    if let uploadSize, uploadSize.pointee > 0 {
        if let upload, !body.tooLarge {
            if body.bytes.count + uploadSize.pointee > WebApp.maximumBody {
                body.tooLarge = true
                body.bytes = []
            } else {
                upload.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                    body.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                }
            }
        }
        uploadSize.pointee = 0
        return .YES
    }
    let server = Unmanaged<WebServer>.fromOpaque(context).takeUnretainedValue()
    var headers: [String: String] = [:]
    _ = withUnsafeMutablePointer(to: &headers) { MHD_get_connection_values(connection, .HEADER_KIND, headerIterator, $0) }
    var address = [CChar](repeating: 0, count: 64)
    acapella_mhd_client_address(connection, &address, 64)
    var path = String(cString: url)
    if let question = path.firstIndex(of: "?") { path = String(path[..<question]) }
    let reply: WebReply
    if body.tooLarge {
        reply = .response(.error(413, "the upload is larger than \(WebApp.maximumBody >> 20) MiB"))
    } else {
        let request = WebRequest(method: String(cString: method), path: path, headers: headers, body: body.bytes,
                                 client: String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
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
        guard let made = MHD_create_response_from_fd(Int(status.st_size), descriptor) else {
            close(descriptor)
            return .NO
        }
        if file.gzip { MHD_add_response_header(made, "Content-Encoding", "gzip") }
        addHeaders(made, file)
        let result = MHD_queue_response(connection, 200, made)
        MHD_destroy_response(made)
        return result
    case .events(let next):
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
        MHD_add_response_header(response, "Cache-Control", "no-cache")
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
    if let requestContext, let body = requestContext.pointee {
        Unmanaged<RequestBody>.fromOpaque(body).release()
        requestContext.pointee = nil
    }
}
