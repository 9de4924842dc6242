import AcapellaJSON
import Foundation

/// One calibrated route.
public struct RouteCalibration: Codable, Hashable, Sendable {
    /// The measured round trip, frames.
    public var measuredFrames: Double
    /// What the device reported for the route, frames.
    public var reportedFrames: Double
    /// measured − reported: what recording adds to the device's figure.
    public var trimFrames: Double
    /// When (ISO 8601, UTC).
    public var date: String

    /// A calibration.
    public init(measuredFrames: Double, reportedFrames: Double, trimFrames: Double, date: String) {
        self.measuredFrames = measuredFrames
        self.reportedFrames = reportedFrames
        self.trimFrames = trimFrames
        self.date = date
    }
}

/// Round-trip calibrations per route (card, device, rate, period, buffer),
/// in `calibration.json` under the data directory; written atomically.
public struct CalibrationStore: Sendable {
    /// The file.
    public let path: String
    /// Route → calibration.
    public private(set) var routes: [String: RouteCalibration] = [:]

    /// The data directory: `$ACAPELLA_DATA_DIR`, else `$XDG_DATA_HOME/acapella`,
    /// else `~/.local/share/acapella`.
    public static var dataDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["ACAPELLA_DATA_DIR"], !explicit.isEmpty { return explicit }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/acapella" }
        return NSHomeDirectory() + "/.local/share/acapella"
    }

    /// Loads the store (an absent file is an empty store; a damaged one is
    /// an error naming it, never silently replaced).
    public init(path: String = CalibrationStore.dataDirectory + "/calibration.json") throws(ProjectError) {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path) else { return }
        do {
            routes = try JSONDecoder().decode([String: RouteCalibration].self, from: data)
        } catch let error as DecodingError {
            throw ProjectError(description: "\(path): \(error.located); move it aside to start over")
        } catch {
            throw ProjectError(description: "\(path): not a calibration store; move it aside to start over")
        }
        for (route, calibration) in routes.sorted(by: { $0.key < $1.key }) {
            for (key, value, range) in [("measuredFrames", calibration.measuredFrames, 0.0...192_000), ("reportedFrames", calibration.reportedFrames, 0...192_000),
                                        ("trimFrames", calibration.trimFrames, -96_000...96_000)] where !(value.isFinite && range.contains(value)) {
                throw ProjectError(description: "\(path): \(route).\(key): \(value) is outside \(Int(range.lowerBound))…\(Int(range.upperBound)) frames; calibrate again or move the file aside")
            }
        }
    }

    /// The calibration for `route`, if any.
    public func calibration(for route: String) -> RouteCalibration? { routes[route] }

    /// Records a calibration and saves the store.
    public mutating func store(_ calibration: RouteCalibration, for route: String) throws(ProjectError) {
        routes[route] = calibration
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty { try Folders.make(folder) }
            try AtomicFile.write(Array(try encoder.encode(routes)) + [10], to: path)
        } catch let error as FileError {
            throw ProjectError(description: error.description)
        } catch {
            throw ProjectError(description: "\(path): cannot save the calibrations")
        }
    }
}
