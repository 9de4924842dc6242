internal import CAvahi
import Foundation

/// The box on the practice room's network as `NAME.local` (every address
/// of its interfaces that are up) with its page as an `_http._tcp` service,
/// through avahi-daemon (libavahi-client, on avahi's own thread). A name
/// already taken becomes the next free one (`acapella-2`), said. Without
/// the daemon, `start` says why and the page stays at its address.
public final class MDNSAnnouncer: @unchecked Sendable {
    // @unchecked: `state` is written in init and read in stop(); `report`
    // is called on avahi's thread only.
    private var state: UnsafeMutablePointer<acapella_mdns>?
    private let report: @Sendable (String, Bool) -> Void

    /// Announces `host`.local and the service `service` on `port`;
    /// `report(line, isProblem)` hears what happens (avahi's thread).
    public init(host: String, service: String, port: UInt16, report: @escaping @Sendable (String, Bool) -> Void) throws(WebServerError) {
        self.report = report
        var why = [CChar](repeating: 0, count: 256)
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let started = acapella_mdns_start(host, service, port, mdnsReport, context, &why, why.count) else {
            let text = String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw WebServerError("mdns: no avahi-daemon to announce \(host).local (\(text))")
        }
        state = started
    }

    fileprivate func heard(_ line: String, problem: Bool) { report(line, problem) }

    /// Withdraws the announcement.
    public func stop() {
        acapella_mdns_stop(state)
        state = nil
    }

    deinit { stop() }
}

/// avahi's thread reporting (a named function: a C callback).
func mdnsReport(_ context: UnsafeMutableRawPointer?, _ problem: Int32, _ line: UnsafePointer<CChar>?) {
    guard let context, let line else { return }
    Unmanaged<MDNSAnnouncer>.fromOpaque(context).takeUnretainedValue().heard(String(cString: line), problem: problem != 0)
}
