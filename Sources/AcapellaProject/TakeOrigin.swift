import AcapellaScore
import AcapellaJSON
import Foundation

#if canImport(Glibc)
public import Glibc
#endif

/// Where a take comes from: the box it was recorded on and who sang it.
/// A box's id is in each take's file name (`takes/alto-k7q2mz-3.wav`), so
/// takes recorded on different boxes never share a name, and projects from
/// many boxes can be merged or synchronised without overwriting a take.
public struct TakeOrigin: Hashable, Sendable {
    /// The box (`BoxIdentity`), or nil: file names without one (a project
    /// made by a library user or a test).
    public var box: String?
    /// Who sings, when they said (`record --as NAME`, the box's `singer` setting).
    public var singer: String?

    /// An origin.
    public init(box: String? = nil, singer: String? = nil) {
        self.box = box
        self.singer = singer
    }

    /// A singer's name: 1 to 64 characters that show (`SafeText.nameProblem`).
    public static func singerProblem(_ name: String) -> String? {
        SafeText.nameProblem(name, most: 64).map { "a singer's name \($0)" }
    }
}

/// This box's id: short, lowercase letters and digits, made once at
/// random and kept in the data directory (`box-id`), so every box (and
/// every copy of an SD card image, once it runs) names its takes apart.
/// `ACAPELLA_BOX_ID` overrides it.
public enum BoxIdentity {
    /// The file in the data directory.
    public static let fileName = "box-id"
    /// The letters a made-up id uses (no 0/o, 1/l).
    static let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")

    /// 1 to 16 lowercase ASCII letters and digits.
    public static func isValid(_ id: String) -> Bool {
        (1...16).contains(id.utf8.count) && id.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The id: `ACAPELLA_BOX_ID`, else the data directory's `box-id`
    /// (made on first use; of two processes making it, one wins and both
    /// read the winner). A data directory that cannot be written gives an
    /// id derived from `/etc/machine-id`. Errors name the setting or file.
    public static func current(dataDirectory: String = CalibrationStore.dataDirectory) throws(ProjectError) -> String {
        if let given = ProcessInfo.processInfo.environment["ACAPELLA_BOX_ID"], !given.isEmpty {
            guard isValid(given) else { throw ProjectError(description: "ACAPELLA_BOX_ID: '\(given.oneLine)' is not a box id (1 to 16 lowercase letters and digits)") }
            return given
        }
        let path = dataDirectory + "/" + fileName
        for _ in 0..<2 {
            if let data = FileManager.default.contents(atPath: path) {
                let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                guard isValid(text) else { throw ProjectError(description: "\(path): '\(text.oneLine)' is not a box id (1 to 16 lowercase letters and digits); remove the file to have a new one made") }
                return text
            }
            var generator = SystemRandomNumberGenerator()
            let made = String((0..<6).map { _ in alphabet[Int(generator.next(upperBound: UInt32(alphabet.count)))] })
            do {
                try Folders.make(dataDirectory)
                try AtomicFile.create(Array((made + "\n").utf8), at: path)
                return made
            } catch where error.exists {
                continue  // another process made it a moment ago: read theirs
            } catch {
                break
            }
        }
        return fromMachineID() ?? "box"
    }

    /// Six letters from `/etc/machine-id` (FNV-1a), for a box whose data
    /// directory cannot be written.
    static func fromMachineID() -> String? {
        guard let data = FileManager.default.contents(atPath: "/etc/machine-id"), data.count >= 8 else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        var letters: [Character] = []
        for index in 0..<6 {
            let shift = UInt64(index) * 5
            letters.append(alphabet[Int((hash >> shift) & 31)])
        }
        return String(letters)
    }
}

/// Wall-clock stamps for take records (when a take was made, when its
/// record last changed): bookkeeping for people and for merging copies,
/// never used for timing.
public enum RecordStamp {
    /// Now, as `2026-12-01T09:58:12.345Z` (UTC, milliseconds): stamps of
    /// one form sort as text in time order.
    public static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return stamp(spec)
    }

    /// A time as `2026-12-01T09:58:12.345Z` (`milliseconds` false:
    /// `2026-12-01T09:58:12Z`), UTC, through `gmtime_r`: no time-zone
    /// data loaded (Foundation's ISO 8601 formatter loads 4.7 MB of ICU's
    /// into the box the first time it runs).
    public static func stamp(_ time: timespec, milliseconds: Bool = true) -> String {
        var parts = tm()
        var seconds = time.tv_sec
        gmtime_r(&seconds, &parts)
        let day = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                         Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        return day + (milliseconds ? String(format: ".%03dZ", Int(time.tv_nsec / 1_000_000)) : "Z")
    }

    /// A stamp's shape as checked: 10 to 40 printable ASCII characters (a
    /// day at least; what a record may hold, not only what `now()` writes).
    static func isValid(_ text: String) -> Bool {
        text.utf8.count >= 10 && text.utf8.count <= 40 && text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
}
