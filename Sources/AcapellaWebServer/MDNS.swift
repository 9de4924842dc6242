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
    private let report: @Sendable (_ line: String, _ problem: Bool, _ announced: String?) -> Void

    /// Announces `host`.local and the service `service` on `port`;
    /// `report(line, isProblem, announced)` hears what happens (avahi's
    /// thread); `announced` is the full name once the announcement holds
    /// (`acapella.local`, or the next free one after a collision).
    public init(host: String, service: String, port: UInt16,
                report: @escaping @Sendable (_ line: String, _ problem: Bool, _ announced: String?) -> Void) throws(WebServerError) {
        self.report = report
        var why = [CChar](repeating: 0, count: 256)
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let started = acapella_mdns_start(host, service, port, mdnsReport, context, &why, why.count) else {
            let text = String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw WebServerError("mdns: no avahi-daemon to announce \(host).local (\(text))")
        }
        state = started
    }

    fileprivate func heard(_ line: String, problem: Bool, announced: String?) { report(line, problem, announced) }

    /// Withdraws the announcement.
    public func stop() {
        acapella_mdns_stop(state)
        state = nil
    }

    deinit { stop() }
}

/// avahi's thread reporting (a named function: a C callback).
func mdnsReport(_ context: UnsafeMutableRawPointer?, _ problem: Int32, _ line: UnsafePointer<CChar>?, _ announced: UnsafePointer<CChar>?) {
    guard let context, let line else { return }
    Unmanaged<MDNSAnnouncer>.fromOpaque(context).takeUnretainedValue().heard(String(cString: line), problem: problem != 0,
                                                                             announced: announced.map { String(cString: $0) })
}
