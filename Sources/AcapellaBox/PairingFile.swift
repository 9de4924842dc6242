import AcapellaProject
import AcapellaWeb
import AcapellaWebServer
import Foundation

/// The pairing the box keeps in its data folder (`web-pairing.json`,
/// readable by the box's user only): the code, and each paired phone by
/// its token's hash, so phones stay paired across restarts.
public enum PairingFile {
    static func path(dataDirectory: String) -> String { dataDirectory + "/web-pairing.json" }

    /// The saved pairing; nil when there is none yet. A damaged file is an
    /// error naming it (the box then starts afresh and says so).
    static func load(dataDirectory: String) throws -> Pairing.Saved? {
        let file = path(dataDirectory: dataDirectory)
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        guard let data = FileManager.default.contents(atPath: file), data.count <= 1 << 20 else {
            throw PairingFileError("\(file): cannot be read")
        }
        do { return try JSONDecoder().decode(Pairing.Saved.self, from: data) } catch {
            throw PairingFileError("\(file): not a pairing the box wrote (\(String(describing: error).prefix(80)))")
        }
    }

    /// The pairing kept from the last run (the same code, the phones still
    /// paired), else a new one with `code`; a damaged file is said.
    static func restore(dataDirectory: String, code: String, log: BoxLog) -> Pairing {
        do {
            if let saved = try load(dataDirectory: dataDirectory) {
                return Pairing(saved: saved, hash: sessionTokenHash, newCode: { code })
            }
        } catch {
            log("web: \(error); phones pair again with the code shown", .warning)
        }
        return Pairing(code: code, hash: sessionTokenHash)
    }

    /// Writes `saved`, whole or not at all, readable by the box's user only.
    static func save(_ saved: Pairing.Saved, dataDirectory: String) throws {
        let file = path(dataDirectory: dataDirectory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(saved)
        do { try AtomicFile.write([UInt8](data), to: file) } catch { throw PairingFileError(error.description) }
        chmod(file, 0o600)
    }
}

extension PairingFile {
    /// `acapella web forget`: every phone the box remembers signed out and
    /// a new code for the next start, with the box stopped (it holds the
    /// data folder while it runs; its page signs every phone out then).
    /// Returns how many phones were forgotten and the new code.
    public static func forget(dataDirectory: String, random: UInt64 = UInt64.random(in: 0...UInt64.max)) throws -> (phones: Int, code: String) {
        let lock: OwnerLock
        do { lock = try OwnerLock.acquire(dataDirectory, owner: "acapella web forget") } catch {
            throw PairingFileError("\(error.description): while the box runs, sign every phone out from its page (Settings, 'Sign out every phone…'), or stop it first")
        }
        defer { lock.release() }
        let phones = try load(dataDirectory: dataDirectory)?.sessions.count ?? 0
        let code = Pairing.code(from: random)
        try save(Pairing.Saved(code: code), dataDirectory: dataDirectory)
        return (phones, code)
    }
}

public struct PairingFileError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
