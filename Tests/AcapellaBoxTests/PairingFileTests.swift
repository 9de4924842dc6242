@testable import AcapellaBox
import AcapellaProject
import AcapellaWeb
import Foundation
import Testing

/// `acapella web forget`: the phones the box remembers signed out, a new
/// code kept for the next start, never under a running box.
@Suite struct PairingFileTests {
    @Test func forgetSignsEveryPhoneOutWithANewCode() throws {
        let folder = NSTemporaryDirectory() + "pairing-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Nothing saved yet: nothing to sign out, a code kept all the same.
        var forgot = try PairingFile.forget(dataDirectory: folder, random: 123_456)
        #expect(forgot.phones == 0 && forgot.code == Pairing.code(from: 123_456))
        let kept = [Pairing.Saved.Kept(tokenHash: String(repeating: "a", count: 64), csrf: "c1", group: "10.0.0.2"),
                    Pairing.Saved.Kept(tokenHash: String(repeating: "b", count: 64), csrf: "c2", group: "10.0.0.3")]
        try PairingFile.save(Pairing.Saved(code: "111111", sessions: kept), dataDirectory: folder)
        forgot = try PairingFile.forget(dataDirectory: folder, random: 987_654_321)
        #expect(forgot.phones == 2 && forgot.code != "111111")
        let saved = try #require(try PairingFile.load(dataDirectory: folder))
        #expect(saved.sessions.isEmpty && saved.code == forgot.code)
        // The box restores exactly that: the new code, no phone paired.
        let restored = PairingFile.restore(dataDirectory: folder, code: "222222", log: BoxLog(prefix: "test: "))
        #expect(restored.code == forgot.code && restored.saved.sessions.isEmpty)
        // While a box holds the folder: refused, the file untouched.
        let box = try OwnerLock.acquire(folder, owner: "acapella run")
        #expect(throws: PairingFileError.self) { try PairingFile.forget(dataDirectory: folder) }
        do { _ = try PairingFile.forget(dataDirectory: folder) } catch {
            #expect(String(describing: error).contains("in use by acapella run, pid \(getpid()): while the box runs, sign every phone out from its page"))
        }
        box.release()
        #expect(try PairingFile.load(dataDirectory: folder)?.code == forgot.code)
    }
}
