@testable import AcapellaMusicXML
import AcapellaScore
internal import CZip
import Foundation
import Testing

/// Untrusted MusicXML: refused with a clear, located error — never a crash,
/// never a file or network access, never unbounded memory.
@Suite struct HostileMusicXMLTests {
    func importError(_ text: String) -> ImportError? { importError(Array(text.utf8)) }

    func importError(_ bytes: [UInt8]) -> ImportError? {
        do {
            _ = try MusicXML.importScore(bytes: bytes, fileName: "evil.xml")
            return nil
        } catch {
            return error
        }
    }

    static let minimal = """
        <score-partwise><part-list><score-part id="P1"><part-name>S</part-name></score-part></part-list>
        <part id="P1"><measure number="1"><attributes><divisions>1</divisions></attributes>
        <note><pitch><step>C</step><octave>4</octave></pitch><duration>4</duration><type>whole</type></note></measure></part></score-partwise>
        """

    @Test func minimalScoreImports() throws {
        let score = try MusicXML.importScore(bytes: Array(Self.minimal.utf8)).score
        #expect(score.parts.first?.notes.first?.pitch == Pitch(step: .c, octave: 4))
    }

    @Test func entityExpansionIsRefused() {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
            <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
            <score-partwise><work><work-title>&lol3;</work-title></work></score-partwise>
            """
        let error = importError(laughs)
        #expect(error?.description == "evil.xml:2: error: the document declares XML entities, which are refused (entity expansion / external entity attacks)")
    }

    @Test func externalEntityIsRefused() {
        let xxe = """
            <?xml version="1.0"?>
            <!DOCTYPE score-partwise [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
            <score-partwise><work><work-title>&secret;</work-title></work></score-partwise>
            """
        #expect(importError(xxe)?.message.contains("entities") == true)
    }

    @Test func externalDTDIsNeverLoaded() throws {
        // A normal MusicXML DOCTYPE pointing at a DTD that does not exist:
        // nothing is fetched, the score imports.
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE score-partwise PUBLIC "-//Recordare//DTD MusicXML 4.0 Partwise//EN" "file:///nonexistent/partwise.dtd">
            """ + Self.minimal
        #expect(try MusicXML.importScore(bytes: Array(text.utf8)).score.parts.count == 1)
    }

    @Test func malformedXMLIsLocated() {
        let error = importError("<score-partwise>\n<part-list>\n<oops></part-list>\n</score-partwise>")
        #expect(error?.description == "evil.xml:3:19: error: malformed XML (an end tag does not match its start tag)")
    }

    @Test(arguments: [
        ("<score-timewise/>", "evil.xml:1: error: timewise MusicXML is not supported; save the score as partwise MusicXML"),
        ("<html><body/></html>", "evil.xml:1: error: not a MusicXML score (the document is <html>)"),
        ("<score-partwise><part-list/></score-partwise>", "evil.xml:1: error: the score has no <part> elements"),
        ("<score-partwise><part id=\"P1\"/></score-partwise>", "evil.xml:1: error: the score has no measures"),
    ])
    func notAScore(text: String, expected: String) {
        #expect(importError(text)?.description == expected)
    }

    @Test func garbageAndEmptyInput() {
        #expect(importError([])?.message.hasPrefix("malformed XML") == true)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let bytes = (0..<Int.random(in: 1...2000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(importError(bytes) != nil)
        }
    }

    /// Inputs that once crashed something (found by the fuzzer), kept so
    /// they never do again. They must end in an error or a valid score.
    @Test func fuzzerRegressions() throws {
        let folder = testsDirectory.appendingPathComponent("Regressions")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(!names.isEmpty)
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
            if let score = try? MusicXML.importScore(bytes: bytes).score {
                #expect(score.isValid, "\(name)")
                #expect(try Acasong.parse(Acasong.serialize(score)) == score, "\(name) does not round-trip through .acasong")
            }
        }
        // The first of them: libxml2 crashed converting from a declared UTF-7.
        let utf7 = [UInt8](try Data(contentsOf: folder.appendingPathComponent("utf7-declaration-libxml2-segv.xml")))
        #expect(importError(utf7)?.description == "evil.xml:1: error: unsupported text encoding 'UTF-7'; save the file as UTF-8")
    }

    @Test func latin1AndUTF16AreDecodedHere() throws {
        let body = Self.minimal.replacingOccurrences(of: "<part-name>S</part-name>", with: "<part-name>Ténor</part-name>")
        var latin1 = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n".utf8)
        latin1 += body.unicodeScalars.map { UInt8($0.value) }
        #expect(try MusicXML.importScore(bytes: latin1).score.parts[0].name == "Ténor")
        var utf16BE: [UInt8] = [0xFE, 0xFF]
        for unit in ("<?xml version=\"1.0\" encoding=\"UTF-16\"?>" + body).utf16 { utf16BE += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        #expect(try MusicXML.importScore(bytes: utf16BE).score.parts[0].name == "Ténor")
        let badUTF8 = Array(Self.minimal.utf8.prefix(40)) + [0xC3, 0x28] + Array(Self.minimal.utf8.dropFirst(40))
        #expect(importError(badUTF8)?.message == "the document is not valid UTF-8 text")
    }

    @Test func hugeDocumentIsRefused() {
        let big = [UInt8](repeating: UInt8(ascii: " "), count: XMLTree.maximumBytes + 1)
        #expect(importError(big)?.message == "the XML document is 32 MiB; refusing more than 32 MiB")
    }

    @Test func deepNestingIsRefused() {
        let deep = "<score-partwise>" + String(repeating: "<a>", count: 5000) + String(repeating: "</a>", count: 5000) + "</score-partwise>"
        #expect(importError(deep) != nil)
    }

    @Test func hostileNumbersAreErrorsOrReports() throws {
        for duration in ["-5", "99999999999999", "abc"] {
            let text = Self.minimal.replacingOccurrences(of: "<duration>4</duration>", with: "<duration>\(duration)</duration>")
            _ = importError(text)  // must return, either way
        }
        let zeroDivisions = Self.minimal.replacingOccurrences(of: "<divisions>1</divisions>", with: "<divisions>0</divisions>")
        #expect(importError(zeroDivisions)?.message == "<divisions> must be a positive number, not 0")
    }

    // MARK: .mxl

    /// Builds a zip in a temporary file with libzip and returns its bytes.
    func makeZip(_ members: [(String, [UInt8])]) throws -> [UInt8] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-\(UUID().uuidString).mxl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var error: Int32 = 0
        let zip = try #require(zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &error))
        let buffers = members.map { member in
            let pointer = UnsafeMutableRawPointer.allocate(byteCount: max(member.1.count, 1), alignment: 1)
            member.1.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress!, byteCount: member.1.count) }
            return (member.0, pointer, member.1.count)
        }
        defer { for buffer in buffers { buffer.1.deallocate() } }
        for (name, pointer, count) in buffers {
            let source = try #require(zip_source_buffer(zip, pointer, zip_uint64_t(count), 0))
            #expect(zip_file_add(zip, name, source, zip_flags_t(ZIP_FL_OVERWRITE)) >= 0)
        }
        #expect(zip_close(zip) == 0)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static let container = Array("""
        <?xml version="1.0"?><container><rootfiles><rootfile full-path="score.xml" media-type="application/vnd.recordare.musicxml+xml"/></rootfiles></container>
        """.utf8)

    @Test func mxlArchiveImports() throws {
        let archive = try makeZip([("META-INF/container.xml", Self.container), ("score.xml", Array(Self.minimal.utf8))])
        #expect(try MusicXML.importScore(bytes: archive, fileName: "ok.mxl").score.parts.count == 1)
    }

    @Test func zipBombIsRefused() throws {
        // 40 MiB of zeros compresses to ~40 KiB; reading stops at the cap.
        let bomb = try makeZip([("META-INF/container.xml", Self.container), ("score.xml", [UInt8](repeating: 0x20, count: 40 << 20))])
        #expect(bomb.count < 1 << 20)
        do {
            _ = try MusicXML.importScore(bytes: bomb, fileName: "bomb.mxl")
            Issue.record("zip bomb accepted")
        } catch {
            #expect(error.description == "bomb.mxl: error: 'score.xml' in the .mxl archive unpacks to more than 32 MiB; refusing (zip bomb?)")
        }
    }

    @Test func brokenArchives() throws {
        let noContainer = try makeZip([("score.xml", Array(Self.minimal.utf8))])
        #expect(importError(noContainer)?.message == "the .mxl archive has no 'META-INF/container.xml'")
        let dangling = try makeZip([("META-INF/container.xml", Self.container)])
        #expect(importError(dangling)?.message == "the .mxl archive has no 'score.xml'")
        let emptyContainer = try makeZip([("META-INF/container.xml", Array("<container/>".utf8))])
        #expect(importError(emptyContainer)?.message == "META-INF/container.xml names no rootfile")
        var truncated = noContainer
        truncated.removeLast(truncated.count / 2)
        #expect(importError(truncated) != nil)
    }
}
