import AcapellaWeb
import CNettle
import Foundation

/// SHA-256 (Nettle) of a session token, as 64 hex digits: the box keeps
/// only this, so the pairing file signs nobody in.
public func sessionTokenHash(_ token: String) -> String {
    let bytes = Array(token.utf8)
    var digest = [UInt8](repeating: 0, count: 32)
    bytes.withUnsafeBufferPointer { input in
        digest.withUnsafeMutableBufferPointer { output in
            acapella_sha256(input.baseAddress, input.count, output.baseAddress)
        }
    }
    return digest.map { String(format: "%02x", $0) }.joined()
}
