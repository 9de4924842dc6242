import Foundation
import Testing

/// The folder of this test target, found from the source path so tests run
/// from any working directory.
let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

/// The package root.
let packageRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()

func fixture(_ name: String) throws -> String {
    try String(contentsOf: testsDirectory.appendingPathComponent("Fixtures/\(name)"), encoding: .utf8)
}

/// Compares `actual` with the golden file `Golden/NAME`. With
/// `ACAPELLA_RECORD_GOLDEN=1` the file is rewritten and the test fails, so a
/// recording run can never pass by accident (swift-argument-parser's
/// `assertSnapshot` habit).
func assertGolden(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let url = testsDirectory.appendingPathComponent("Golden/\(name)")
    if ProcessInfo.processInfo.environment["ACAPELLA_RECORD_GOLDEN"] == "1" {
        try actual.write(to: url, atomically: true, encoding: .utf8)
        Issue.record("recorded golden file \(name); run again without ACAPELLA_RECORD_GOLDEN", sourceLocation: sourceLocation)
        return
    }
    guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
        Issue.record("missing golden file \(name); record it with ACAPELLA_RECORD_GOLDEN=1", sourceLocation: sourceLocation)
        return
    }
    #expect(actual == expected, "differs from golden file \(name)", sourceLocation: sourceLocation)
}
