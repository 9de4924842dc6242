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

    /// A piano (as a real file had it) whose chord has one note of a
    /// rounded length that disagrees with its chord: the chord's length
    /// wins and the report says so — the song imports, with or without the
    /// piano — instead of the whole file refused with the song's ticks.
    @Test func aChordNoteOfAnotherLengthTakesTheChords() throws {
        let text = """
            <score-partwise><part-list><score-part id="P1"><part-name>Voice</part-name></score-part>
            <score-part id="P2"><part-name>Piano</part-name></score-part></part-list>
            <part id="P1"><measure number="1"><attributes><divisions>256</divisions><time><beats>2</beats><beat-type>4</beat-type></time></attributes>
            <note><pitch><step>C</step><octave>5</octave></pitch><duration>512</duration><type>half</type></note></measure></part>
            <part id="P2"><measure number="1"><attributes><divisions>256</divisions><time><beats>2</beats><beat-type>4</beat-type></time></attributes>
            <note><pitch><step>C</step><octave>4</octave></pitch><duration>85</duration><type>eighth</type><time-modification><actual-notes>3</actual-notes><normal-notes>2</normal-notes></time-modification></note>
            <note><chord/><pitch><step>E</step><octave>4</octave></pitch><duration>126</duration><type>eighth</type><time-modification><actual-notes>3</actual-notes><normal-notes>2</normal-notes></time-modification></note>
            <note><pitch><step>D</step><octave>4</octave></pitch><duration>85</duration><type>eighth</type><time-modification><actual-notes>3</actual-notes><normal-notes>2</normal-notes></time-modification></note>
            <note><pitch><step>E</step><octave>4</octave></pitch><duration>86</duration><type>eighth</type><time-modification><actual-notes>3</actual-notes><normal-notes>2</normal-notes></time-modification></note>
            <note><pitch><step>F</step><octave>4</octave></pitch><duration>256</duration><type>quarter</type></note></measure></part></score-partwise>
            """
        let result = try MusicXML.importScore(bytes: Array(text.utf8), fileName: "piano.musicxml")
        #expect(result.score.parts.map(\.name) == ["Voice", "Piano"])
        #expect(result.report.lines.contains { $0.hasPrefix("chord notes of another length than their chord given the chord's") }, "\(result.report.lines)")
        let voice = try MusicXML.importScore(bytes: Array(text.utf8), fileName: "piano.musicxml", options: ImportOptions(partNames: ["Voice"]))
        #expect(voice.score.parts.map(\.name) == ["Voice"])
    }

    /// A refusal says where in the file's own terms: the part's name, the
    /// measure's printed number, the note's place in it.
    @Test func refusalsAreLocatedInTheFilesTerms() throws {
        var score = try Acasong.parse("acasong 1\ntime: 2/4\npart Voice\nC5 2 | D5 2\npart Piano\nC4 4 D4 4 | E4 4 F4 4\n")
        score.parts[1].notes[3].startTick += 120  // the measure's second note starts late: a gap before it
        let refusal = try #require(ScoreBuilder.refusal(score))
        #expect(refusal.message.hasPrefix("could not convert this score (part 'Piano', measure 2, its note 2): note starts at tick"), "\(refusal.message)")
    }

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
        #expect(error?.description == "evil.xml:3:9: error: malformed XML (an end tag does not match its start tag)")
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

    /// A score with one whole note, its pieces replaceable.
    static func oneNote(divisions: String = "1", fifths: String = "0", step: String = "C", octave: String = "4", alter: String = "",
                        duration: String = "4", beats: String = "4", extra: String = "") -> String {
        """
        <score-partwise><part-list><score-part id="P1"><part-name>Tenor</part-name></score-part></part-list>
        <part id="P1"><measure number="1"><attributes><divisions>\(divisions)</divisions><key><fifths>\(fifths)</fifths></key>
        <time><beats>\(beats)</beats><beat-type>4</beat-type></time>\(extra)</attributes>
        <note><pitch><step>\(step)</step>\(alter)<octave>\(octave)</octave></pitch><duration>\(duration)</duration><type>whole</type></note>
        </measure></part></score-partwise>
        """
    }

    /// A number the importer cannot read is a located error — never a note
    /// turned into a rest, shortened to nothing, or silently clamped.
    @Test(arguments: [
        (oneNote(duration: "four"), "evil.xml:4: error: <duration> 'four' is not a number"),
        (oneNote(duration: ""), "evil.xml:4: error: <duration> '' is not a number"),
        (oneNote(duration: "-4"), "evil.xml:4: error: note <duration> -4 is out of range"),
        (oneNote(duration: "99999999999"), "evil.xml:4: error: note <duration> 99999999999 is out of range"),
        (oneNote(divisions: "x"), "evil.xml:2: error: <divisions> 'x' is not a number"),
        (oneNote(divisions: "0"), "evil.xml:2: error: <divisions> must be a positive number, not 0"),
        (oneNote(step: "H"), "evil.xml:4: error: <step> 'H' is not a note name (A to G)"),
        (oneNote(step: "CC"), "evil.xml:4: error: <step> 'CC' is not a note name (A to G)"),
        (oneNote(octave: "12"), "evil.xml:4: error: <octave> 12 is outside 0…9"),
        (oneNote(octave: "four"), "evil.xml:4: error: <octave> 'four' is not a number"),
        (oneNote(alter: "<alter>sharp</alter>"), "evil.xml:4: error: <alter> 'sharp' is not a number"),
        (oneNote(fifths: "9"), "evil.xml:2: error: <fifths> 9 is outside -7…7"),
        (oneNote(fifths: "two"), "evil.xml:2: error: <fifths> 'two' is not a number"),
        (oneNote(beats: "four"), "evil.xml:3: error: <beats> 'four' is not a number of beats (like 3 or 3+2)"),
        (oneNote().replacingOccurrences(of: "<duration>4</duration>", with: ""), "evil.xml:4: error: a note without <duration> (only grace notes may leave it out)"),
        (oneNote().replacingOccurrences(of: "<octave>4</octave>", with: ""), "evil.xml:4: error: a <pitch> without <octave>"),
    ])
    func unreadableNumbersAreLocated(text: String, expected: String) {
        #expect(importError(text)?.description == expected)
    }

    /// Decimal durations and divisions (the schema allows them) are read exactly.
    @Test func decimalDurationsAreExact() throws {
        let score = try MusicXML.importScore(bytes: Array(Self.oneNote(divisions: "2.5", duration: "10.0").utf8)).score
        #expect(score.parts[0].notes.map(\.durationTicks) == [3_840])
    }

    /// A transposing instrument's part imports at sounding pitch, spelled on
    /// the moved letter, and the report says so.
    @Test(arguments: [
        ("<transpose><diatonic>-1</diatonic><chromatic>-2</chromatic></transpose>", "C", "4", Pitch(step: .b, alter: -1, octave: 3), "down 2 semitones"),
        ("<transpose><octave-change>-1</octave-change></transpose>", "C", "5", Pitch(step: .c, octave: 4), "down an octave"),
        ("<transpose><diatonic>-5</diatonic><chromatic>-9</chromatic></transpose>", "F", "4", Pitch(step: .a, alter: -1, octave: 3), "down 9 semitones"),
        ("<transpose><chromatic>3</chromatic></transpose>", "E", "4", Pitch(step: .g, octave: 4), "up 3 semitones"),
    ])
    func transposingInstrumentsSoundWhereTheyShould(transpose: String, step: String, octave: String, sounding: Pitch, words: String) throws {
        let result = try MusicXML.importScore(bytes: Array(Self.oneNote(step: step, octave: octave, extra: transpose).utf8))
        #expect(result.score.parts[0].notes[0].pitch == sounding)
        #expect(result.report.lines.contains { $0.contains("part 'Tenor' is written for a transposing instrument (\(words)): imported at sounding pitch") }, "\(result.report.lines)")
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

    /// Errors found after the parse name the element's line, whatever the
    /// encoding (lines are counted from byte offsets only when asked).
    @Test func linesAreCountedInEveryEncoding() {
        let body = "\n\n" + Self.minimal.replacingOccurrences(of: "<duration>4</duration>", with: "<duration>four</duration>")
        // The note is on the body's third line, after two blank lines.
        let utf8 = importError(body)
        #expect(utf8?.line == 5)
        #expect(utf8?.message.contains("four") ?? false, "\(String(describing: utf8))")
        var utf16LE: [UInt8] = [0xFF, 0xFE]
        for unit in body.utf16 { utf16LE += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(importError(utf16LE)?.line == 5)
        var utf16BE: [UInt8] = [0xFE, 0xFF]
        for unit in body.utf16 { utf16BE += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        #expect(importError(utf16BE)?.line == 5)
    }

    @Test func hugeDocumentIsRefused() {
        let big = [UInt8](repeating: UInt8(ascii: " "), count: XMLTree.maximumBytes + 1)
        #expect(importError(big)?.message == "the XML document is 16 MB; a song file is 16 MB at most")
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
            #expect(error.description == "bomb.mxl: error: 'score.xml' in the .mxl archive unpacks to more than 16 MiB; refusing (zip bomb?)")
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
