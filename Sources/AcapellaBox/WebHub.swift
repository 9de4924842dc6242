import AcapellaControl
public import AcapellaDevices
import AcapellaEngrave
import AcapellaScore
import AcapellaStatus
public import AcapellaWeb
import AcapellaWebServer
import Foundation
import Synchronization

/// What the web page reads: the live state the control loop publishes
/// about 30 times a second and the current song engraved. The web threads
/// and the control loop share this one mutex; the render thread never
/// touches it.
public final class WebHub: Sendable {
    struct Shared {
        var live = WebLiveState()
        var score: (svg: [UInt8], timeMap: [UInt8])?
        /// Actions from the page, with when they arrived, for the control loop.
        var actions: [(action: ControlAction, nanoseconds: Int64)] = []
    }

    private let shared = Mutex(Shared())
    /// Wakes the control loop when an action arrives.
    private let wake: WakeDescriptor?

    public init(wake: WakeDescriptor? = nil) { self.wake = wake }

    /// An action from the page: queued for the control loop, which is woken.
    func act(_ name: String) -> Bool {
        guard let action = ControlAction(rawValue: name) else { return false }
        let now = MonotonicClock.nanoseconds()
        shared.withLock { $0.actions.append((action, now)) }
        wake?.wake()
        return true
    }

    /// The page's actions since the last call, in order.
    func takeActions() -> [(action: ControlAction, nanoseconds: Int64)] {
        shared.withLock { shared in
            defer { shared.actions = [] }
            return shared.actions
        }
    }

    /// The live state now.
    public func live() -> WebLiveState { shared.withLock { $0.live } }

    /// The engraved song, if any.
    public func score() -> (svg: [UInt8], timeMap: [UInt8])? { shared.withLock { $0.score } }

    /// The control loop's publication (cheap: one small struct).
    public func publish(_ live: WebLiveState) { shared.withLock { $0.live = live } }

    /// A new song: its score for the page, the part highlighted; the
    /// music font served by the page itself.
    func show(_ score: Score, part: String, font: SMuFLFont?) {
        guard let font else { return }
        var options = EngraveOptions()
        options.highlight = part
        guard let engraving = try? Engraver(font: font).engrave(score, options: options) else {
            shared.withLock { $0.score = nil }
            return
        }
        let svg = SVGWriter.svg(engraving.scroll, staffSpaceMM: engraving.staffSpaceMM, fontName: engraving.fontName, font: .url("/bravura.otf"))
        let onsets: [[String: Any]] = engraving.timeMap.map {
            ["tick": $0.tick, "sample": $0.sample, "measure": $0.measure, "system": $0.system, "x": $0.x]
        }
        let systems: [[String: Any]] = engraving.systems.map { ["top": $0.top, "bottom": $0.bottom, "first": $0.measures.lowerBound] }
        let map: [String: Any] = ["width": engraving.scroll.width, "onsets": onsets, "systems": systems]
        let json = (try? JSONSerialization.data(withJSONObject: map, options: [.sortedKeys])).map { [UInt8]($0) } ?? []
        shared.withLock { $0.score = (Array(svg.utf8), json) }
    }
}

/// The page's files, read once at start from the shipped `Web/` folder
/// (the box adds the music font): the only files the server ever sends.
enum WebAssets {
    static func load() -> [String: (type: String, bytes: [UInt8])] {
        var assets: [String: (type: String, bytes: [UInt8])] = [:]
        if let folder = ShippedFiles.path("Web", installed: "share/acapella/web") {
            for (path, file, type) in [("/", "index.html", "text/html; charset=utf-8"), ("/app.js", "app.js", "text/javascript; charset=utf-8"),
                                       ("/style.css", "style.css", "text/css; charset=utf-8")] {
                if let data = FileManager.default.contents(atPath: folder + "/" + file) { assets[path] = (type, [UInt8](data)) }
            }
        }
        return assets
    }
}

extension WebLiveState {
    /// The page's view of a readout and the engine's snapshot.
    init(_ readout: ReadoutState, serial: Int64, sample: Int64) {
        self.init()
        self.serial = serial
        state = readout.mode.rawValue
        self.sample = sample
        measure = readout.measure
        beat = readout.beat
        song = readout.song
        part = readout.part
        note = readout.note
        cents = readout.cents
        level = readout.inputDB
        review = readout.mode == .review
    }
}
