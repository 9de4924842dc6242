@testable import AcapellaScore
import Foundation
import Testing

/// LRC files as real ones come: every stamp form, several stamps on a
/// line, the offset, tags, word stamps, byte order marks, CRLF, disorder,
/// and located notes for what cannot be read.
@Suite struct LRCTests {
    func parse(_ text: String) throws -> LRC { try LRC.parse(Array(text.utf8), file: "song.lrc") }

    @Test func everyStampForm() throws {
        let lrc = try parse("[01:02]a\n[01:02.5]b\n[01:02.50]c\n[01:02.500]d\n[01:02:50]e\n[1:02.25]f\n[100:00.00]g\n[ 00:03.10 ]h\n")
        #expect(lrc.lines.map(\.milliseconds) == [3_100, 62_000, 62_250, 62_500, 62_500, 62_500, 62_500, 6_000_000])
        #expect(lrc.lines.map(\.text) == ["h", "a", "f", "b", "c", "d", "e", "g"])
        #expect(lrc.skipped.isEmpty)
    }

    @Test func severalStampsOnALineAndTheOffset() throws {
        let lrc = try parse("[offset:+500]\n[00:30.00][00:10.00]Chorus <00:10.50>here\n[00:20.00]Verse\n")
        #expect(lrc.lines.map(\.milliseconds) == [9_500, 19_500, 29_500])
        #expect(lrc.lines.map(\.text) == ["Chorus here", "Verse", "Chorus here"])
        // Word stamps belong to the line stamp they were written after (10.00), and move with the others.
        #expect(lrc.lines[0].words == [LRC.Word(milliseconds: 9_500, text: "Chorus "), LRC.Word(milliseconds: 10_000, text: "here")])
        #expect(lrc.lines[2].words == [LRC.Word(milliseconds: 29_500, text: "Chorus "), LRC.Word(milliseconds: 30_000, text: "here")])
        let later = try parse("[offset:-250]\n[00:01.00]a\n")
        #expect(later.lines[0].milliseconds == 1_250)
        let early = try parse("[offset:2000]\n[00:01.00]a\n")
        #expect(early.lines[0].milliseconds == 0, "never before the start")
    }

    @Test func tagsAndWords() throws {
        let lrc = try parse("""
            [ti:Amazing Grace]
            [AR: John Newton ]
            [al:Hymns]
            [by:acapella]
            [length: 03:45.20]
            [re:some player]
            [00:12.00]<00:12.00>A<00:12.50>maz<00:13.00>ing <00:13.50>grace
            """)
        #expect(lrc.title == "Amazing Grace" && lrc.artist == "John Newton" && lrc.album == "Hymns" && lrc.author == "acapella")
        #expect(lrc.lengthMilliseconds == 225_200)
        #expect(lrc.lines.count == 1 && lrc.lines[0].text == "Amazing grace")
        #expect(lrc.lines[0].words.map(\.text) == ["A", "maz", "ing ", "grace"])
        #expect(lrc.lines[0].words.map(\.milliseconds) == [12_000, 12_500, 13_000, 13_500])
    }

    @Test func theMessOfRealFiles() throws {
        // A byte order mark, CRLF and lone CR line ends, blank lines, lines out of order, brackets and '<' in the text.
        let text = "\u{FEFF}[ti:Mess]\r\n\r\n[00:20.00]second\r[00:10.00] first \r\n\n[00:30.00][chorus] la <3 la\n[00:40.00]\n"
        let lrc = try parse(text)
        #expect(lrc.title == "Mess")
        #expect(lrc.lines.map(\.text) == ["first", "second", "[chorus] la <3 la", ""])
        #expect(lrc.lines.map(\.milliseconds) == [10_000, 20_000, 30_000, 40_000])
        #expect(lrc.lines.allSatisfy { $0.words.isEmpty })
        // UTF-16 with its byte order mark.
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "[00:01.00]é".utf16 { utf16.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)]) }
        #expect(try LRC.parse(utf16).lines == [LRC.Line(milliseconds: 1_000, text: "é")])
    }

    @Test func whatCannotBeReadIsLocatedAndTheRestKept() throws {
        let lrc = try parse("[00:01.00]one\n[00:7x.00]bad stamp\njust words\n[00:61.00]seconds past 59\n[offset:soon]\n[ar:x][00:02.00]late stamp\n[00:03.00]three\n[length:long]\n")
        #expect(lrc.lines.map(\.text) == ["one", "three"])
        #expect(lrc.skipped == [
            "line 2, column 1: '[00:7x.00]' is neither a time stamp ([mm:ss.xx]) nor a tag ([ar:…])",
            "line 3, column 1: no time stamp before 'just words'",
            "line 4, column 1: '[00:61.00]' is neither a time stamp ([mm:ss.xx]) nor a tag ([ar:…])",
            "line 5: the offset 'soon' is not a number of milliseconds",
            "line 6, column 7: a time stamp after a tag",
            "line 8: the length 'long' is not mm:ss",
        ])
    }

    @Test(arguments: [
        ("", "song.lrc: no timed lyrics (no line starts with a time such as [00:12.50])"),
        ("[ti:Only tags]\n\n", "song.lrc: no timed lyrics (no line starts with a time such as [00:12.50])"),
        ("words\n", "song.lrc: no timed lyrics (line 1, column 1: no time stamp before 'words')"),
        ("[00:01.00", "song.lrc: no timed lyrics (line 1, column 1: '[' without its ']')"),
    ])
    func filesWithoutTimedLyricsAreRefusedInOneLine(text: String, expected: String) {
        #expect(throws: LRCError(description: expected)) { try parse(text) }
    }

    @Test func bytesThatAreNotTextAreRefusedWithWhere() {
        var bytes = Array("[00:01.00]fine\n[00:02.00]caf".utf8)
        bytes.append(0xE9)  // Latin-1 é
        #expect(throws: LRCError(description: "song.lrc: line 2: not UTF-8 text (byte 29 of the file); save it as UTF-8")) {
            try LRC.parse(bytes, file: "song.lrc")
        }
    }

    @Test func writtenAndReadBackEqual() throws {
        let original = try parse("[ti:T]\n[ar:A]\n[length:01:00.5]\n[00:01.234]<00:01.234>Sing <00:01.9>out\n[00:02.00][note] plain\n[00:03.00]\n")
        let text = original.text()
        #expect(text.contains("[00:01.234]<00:01.234>Sing <00:01.900>out\n") && text.contains("[length:01:00.500]\n"))
        #expect(try parse(text) == original)
        #expect(LRC.stamp(6_000_000) == "100:00.000" && LRC.stamp(-5) == "00:00.000")
    }

    /// A line's last word ends where the line does; a word's leading space stays.
    @Test func theLastWordEndsWithTheLine() throws {
        let lrc = try parse("[00:01.00]<00:01.00>Amazing<00:02.00> grace <00:03.00>\n[00:04.00]<00:04.00>a<00:05.00>   \n")
        #expect(lrc.lines[0].words.map(\.text) == ["Amazing", " grace"] && lrc.lines[0].text == "Amazing grace")
        #expect(lrc.lines[1].words.map(\.text) == ["a"])
        #expect(try parse(lrc.text()) == lrc)
    }

    /// A combining mark right after a ']' or '>' does not hide the bracket
    /// (the file is read by Unicode scalar, not by character).
    @Test func aCombiningMarkAfterAStamp() throws {
        let lrc = try parse("[00:01.00]\u{330}a\n[00:02.00]<00:02.00>\u{301}b<00:03.00>c\n")
        #expect(lrc.lines.map(\.text) == ["\u{330}a", "\u{301}bc"] && lrc.skipped.isEmpty)
        #expect(lrc.lines[1].words == [LRC.Word(milliseconds: 2_000, text: "\u{301}b"), LRC.Word(milliseconds: 3_000, text: "c")])
        #expect(try parse(lrc.text()) == lrc)
    }

    @Test func theLineAtATime() throws {
        let lrc = try parse("[00:02.00]b\n[00:01.00]a\n")
        #expect(lrc.line(at: 999) == nil && lrc.line(at: 1_000)?.text == "a" && lrc.line(at: 1_999)?.text == "a" && lrc.line(at: 60_000)?.text == "b")
    }
}
