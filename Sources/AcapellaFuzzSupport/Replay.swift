// The replay driver the libFuzzer targets share when built without
// FUZZING: each file named on the command line goes through the target's
// check, to reproduce a crash. No Foundation (the parser's target stays
// dependency-free).
#if canImport(Glibc)
import Glibc
#endif

/// Runs `check` on the bytes of each file named on the command line.
public func replayFiles(_ check: ([UInt8]) -> Void) {
    for path in CommandLine.arguments.dropFirst() {
        guard let bytes = readFileBytes(path) else {
            print("\(path): cannot read")
            continue
        }
        check(bytes)
        print("\(path): ok")
    }
}

/// A whole file, or nil when it cannot be read.
public func readFileBytes(_ path: String) -> [UInt8]? {
    guard let handle = fopen(path, "rb") else { return nil }
    defer { fclose(handle) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = fread(&buffer, 1, buffer.count, handle)
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return bytes
}
