import Foundation
import Testing

/// The pure modules stay pure: each imports only what it is allowed
/// (never a C library of the I/O edge) and does no file, process or
/// socket I/O — the font's bytes, a settings file's bytes, a score's files
/// are read by the edges (`AcapellaEngravePDF`, `AcapellaBox`,
/// `AcapellaWebServer`) and handed in.
@Suite struct PurityTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// Each pure target and the modules it may import.
    static let allowed: [String: Set<String>] = [
        "AcapellaScore": [],
        "AcapellaLock": ["Glibc", "Musl"],
        "AcapellaDSP": ["Glibc", "Musl"],
        "AcapellaStatus": ["AcapellaDSP"],
        "AcapellaEngine": ["AcapellaScore", "AcapellaDSP", "AcapellaLock", "Glibc", "Musl", "Synchronization"],
        "AcapellaJSON": ["Foundation"],
        "AcapellaControl": ["AcapellaEngine", "AcapellaJSON", "Foundation", "Glibc", "Musl"],
        "AcapellaEngrave": ["AcapellaScore", "Foundation"],
        "AcapellaWeb": ["AcapellaScore", "AcapellaLock", "Foundation", "Synchronization"],
    ]

    /// What I/O looks like in Swift here: Foundation's file and process
    /// types, and the C calls that open, write or remove files.
    static var io: Regex<(Substring, Substring)> { #/\b(FileManager|FileHandle|Process\(|Data\(contentsOf|contentsOfFile|contents\(atPath|\.write\(to|fopen|gzopen|sf_open|unlink\(|rename\(|mkdir\(|socket\(|open\(|opendir\()/# }

    static func files(_ target: String) -> [URL] {
        let folder = sources.appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".swift") }.sorted().map { folder.appendingPathComponent($0) }
    }

    @Test(arguments: allowed.keys.sorted())
    func importsOnlyWhatItMay(_ target: String) throws {
        let files = Self.files(target)
        #expect(!files.isEmpty, "\(target) has no sources here")
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
                guard let at = words.firstIndex(of: "import"), at + 1 < words.count,
                      words[..<at].allSatisfy({ ["public", "internal", "private", "@_exported", "@preconcurrency"].contains($0) }) else { continue }
                let module = String(words[at + 1])
                #expect(Self.allowed[target]!.contains(module), "\(file.lastPathComponent): \(target) imports \(module)")
            }
        }
    }

    @Test(arguments: allowed.keys.sorted())
    func doesNoIO(_ target: String) throws {
        for file in Self.files(target) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), let found = code.firstMatch(of: Self.io) else { continue }
                Issue.record("\(target)/\(file.lastPathComponent):\(number + 1): \(found.output.0) — I/O belongs at the edges")
            }
        }
    }

    /// Every lock the threads share is one Thread Sanitizer sees: the
    /// standard library's `Mutex` locks a futex word inside a library not
    /// built for it, so the race check reported the web server's
    /// connection table, guarded by one, as a data race (a failed CI run).
    @Test func everyLockIsOneTheRaceCheckSees() throws {
        let mutex = #/(^|[^A-Za-z_])Mutex\s*[<(]/#
        var found: [String] = []
        let folders = (try FileManager.default.contentsOfDirectory(atPath: Self.sources.path)).sorted()
        for folder in folders {
            for file in Self.files(folder) {
                let text = try String(contentsOf: file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.firstMatch(of: mutex) != nil {
                    found.append("\(folder)/\(file.lastPathComponent):\(number + 1)")
                }
            }
        }
        #expect(found.isEmpty, "Synchronization.Mutex (use VisibleLock): \(found.joined(separator: ", "))")
        #expect("let state = Mutex(State())".firstMatch(of: mutex) != nil)
        #expect("let state = VisibleLock(State())".firstMatch(of: mutex) == nil)
    }

    /// The check finds what it looks for (a check that cannot fail is no check).
    @Test func theChecksSeeIO() {
        #expect("let data = FileManager.default.contents(atPath: p)".firstMatch(of: Self.io) != nil)
        #expect("guard let f = gzopen(path, \"rb\")".firstMatch(of: Self.io) != nil)
        #expect("let x = reopen(y)".firstMatch(of: Self.io) == nil)
        #expect(Self.files("AcapellaBox").contains { (try? String(contentsOf: $0, encoding: .utf8))?.firstMatch(of: Self.io) != nil })
    }

    /// The box's loop stays in pieces a newcomer can read (issue 33: one
    /// function of ~380 lines set up, wired, held state and tore down):
    /// no function or initializer in `Box.swift` or `SessionLoop.swift`
    /// longer than 60 lines.
    @Test(arguments: ["Box.swift", "SessionLoop.swift"])
    func theBoxsFunctionsStayShort(_ name: String) throws {
        let lines = try String(contentsOf: Self.sources.appendingPathComponent("AcapellaBox/" + name), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var found = 0
        for (start, line) in lines.enumerated() {
            let code = line.drop { $0 == " " }
            let indent = line.count - code.count
            let words = code.split(separator: " ")
            guard let keyword = words.first(where: { !["public", "private", "static", "mutating", "@discardableResult", "override"].contains($0) }),
                  keyword == "func" || keyword.hasPrefix("init(") || keyword == "init" else { continue }
            let closing = String(repeating: " ", count: indent) + "}"
            guard let end = lines[(start + 1)...].firstIndex(where: { $0 == closing }) else { continue }
            found += 1
            #expect(end - start + 1 <= 60, "\(name):\(start + 1): \(code.prefix(60))… is \(end - start + 1) lines")
        }
        #expect(found >= 5, "\(name): the check found only \(found) functions")
    }
}
