/// Lyrics in time: an LRC file, the timed-lyrics form music players show
/// beside a recording. Read with the tolerance real files need — every
/// stamp form (`[mm:ss]`, `[mm:ss.x]`, `[mm:ss.xx]`, `[mm:ss.xxx]`,
/// `[mm:ss:xx]`), several stamps before one line, `[offset:±ms]`, the
/// metadata tags, word-level `<mm:ss.xx>` stamps (enhanced LRC), a byte
/// order mark, CRLF or CR line ends, blank lines, lines out of order — and
/// a located note for each line that cannot be read (the rest is kept).
/// Times are milliseconds from the start of the recording, the offset
/// applied (a positive offset makes the lyrics come sooner).
public struct LRC: Equatable, Sendable {
    /// A word or syllable of a line with word stamps, and when it starts.
    public struct Word: Equatable, Sendable {
        public var milliseconds: Int
        /// As written: a syllable that ends a word carries the space after it.
        public var text: String

        public init(milliseconds: Int, text: String) {
            self.milliseconds = milliseconds
            self.text = text
        }
    }

    /// A line and when it starts; its words when it has word stamps.
    public struct Line: Equatable, Sendable {
        public var milliseconds: Int
        public var text: String
        public var words: [Word]

        public init(milliseconds: Int, text: String, words: [Word] = []) {
            self.milliseconds = milliseconds
            self.text = text
            self.words = words
        }
    }

    /// `[ti:]`, `[ar:]`, `[al:]`, `[by:]` (who made the file).
    public var title: String?
    public var artist: String?
    public var album: String?
    public var author: String?
    /// `[length:]`: how long the recording is, ms.
    public var lengthMilliseconds: Int?
    /// The lines in order of time (lines of one time in the file's order).
    public var lines: [Line]
    /// What could not be read, a line each ("line 7: …"); those lines are left out.
    public var skipped: [String] = []

    public init(title: String? = nil, artist: String? = nil, album: String? = nil, author: String? = nil, lengthMilliseconds: Int? = nil, lines: [Line]) {
        self.title = title
        self.artist = artist
        self.album = album
        self.author = author
        self.lengthMilliseconds = lengthMilliseconds
        self.lines = lines
    }

    /// The line being sung at `milliseconds` (nil before the first).
    public func line(at milliseconds: Int) -> Line? {
        var low = 0
        var high = lines.count
        while low < high {
            let middle = (low + high) / 2
            if lines[middle].milliseconds <= milliseconds { low = middle + 1 } else { high = middle }
        }
        return low > 0 ? lines[low - 1] : nil
    }
}

/// An LRC file that cannot be read at all, said in one line with where.
public struct LRCError: Error, CustomStringConvertible, Equatable {
    public var description: String
}

extension LRC {
    /// Reads an LRC file's bytes (UTF-8, with or without a byte order mark,
    /// or UTF-16 with one). Throws when the bytes are not text or no line
    /// has a time; lines that cannot be read are left out and noted in
    /// `skipped`.
    public static func parse(_ bytes: [UInt8], file: String = "lyrics") throws(LRCError) -> LRC {
        let text: String
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            let little = bytes[0] == 0xFF
            let units = stride(from: 2, to: bytes.count - 1, by: 2).map { (index: Int) -> UInt16 in
                let first = UInt16(bytes[index])
                let second = UInt16(bytes[index + 1])
                return little ? first | second << 8 : first << 8 | second
            }
            guard bytes.count % 2 == 0, let decoded = String(validating: units, as: UTF16.self) else {
                throw LRCError(description: "\(file): not readable as UTF-16 text (it starts with a UTF-16 byte order mark)")
            }
            text = decoded
        } else {
            let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
            if let invalid = firstInvalidUTF8Offset(in: body) {
                let line = body[..<invalid].reduce(1) { $0 + ($1 == 10 ? 1 : 0) }
                throw LRCError(description: "\(file): line \(line): not UTF-8 text (byte \(invalid + 1) of the file); save it as UTF-8")
            }
            text = String(decoding: body, as: UTF8.self)
        }
        return try parse(text: text, file: file)
    }

    /// Reads an LRC file's text (see `parse(_:file:)`).
    public static func parse(text: String, file: String = "lyrics") throws(LRCError) -> LRC {
        var result = LRC(lines: [])
        var offset = 0
        var timed: [(order: Int, line: Line)] = []
        // Read as Unicode scalars, not characters: a combining mark after a
        // ']' or '>' would otherwise hide the bracket inside one character.
        let scalars = Array(text.unicodeScalars)
        var number = 0
        var start = 0
        while start <= scalars.count {
            var end = start
            while end < scalars.count && scalars[end] != "\n" && scalars[end] != "\r" { end += 1 }
            let line = trimmed(scalars[start..<end])
            start = end + (end + 1 < scalars.count && scalars[end] == "\r" && scalars[end + 1] == "\n" ? 2 : 1)
            number += 1
            guard !line.isEmpty else { continue }
            switch readLine(line) {
            case .timed(let stamps, let text, let words):
                // Word stamps are times of the line stamp they were written
                // for: the latest at or before the first of them.
                let base = words.first { $0.milliseconds >= 0 }.flatMap { first in stamps.filter { $0 <= first.milliseconds }.max() } ?? stamps[0]
                for stamp in stamps {
                    let shift = stamp - base
                    let moved = words.map { Word(milliseconds: ($0.milliseconds >= 0 ? $0.milliseconds : base) + shift, text: $0.text) }
                    timed.append((timed.count, Line(milliseconds: stamp, text: text, words: moved)))
                }
            case .tags(let tags):
                for (key, value) in tags {
                    switch key {
                    case "ti": result.title = value
                    case "ar": result.artist = value
                    case "al": result.album = value
                    case "by": result.author = value
                    case "offset":
                        guard let milliseconds = signedMilliseconds(value) else {
                            result.skipped.append("line \(number): the offset '\(value.prefix(40))' is not a number of milliseconds")
                            continue
                        }
                        offset = milliseconds
                    case "length":
                        guard let milliseconds = stampMilliseconds(Array(value.unicodeScalars)[...]) else {
                            result.skipped.append("line \(number): the length '\(value.prefix(40))' is not mm:ss")
                            continue
                        }
                        result.lengthMilliseconds = milliseconds
                    default: break  // other tags (re, ve, au, #…) say nothing about timing
                    }
                }
            case .problem(let column, let why):
                result.skipped.append("line \(number), column \(column): \(why)")
            }
        }
        guard !timed.isEmpty else {
            throw LRCError(description: "\(file): no timed lyrics" + (result.skipped.first.map { " (\($0))" } ?? " (no line starts with a time such as [00:12.50])"))
        }
        timed.sort { $0.line.milliseconds != $1.line.milliseconds ? $0.line.milliseconds < $1.line.milliseconds : $0.order < $1.order }
        result.lines = timed.map { entry in
            var line = entry.line
            line.milliseconds = max(0, line.milliseconds - offset)
            for index in line.words.indices { line.words[index].milliseconds = max(0, line.words[index].milliseconds - offset) }
            return line
        }
        return result
    }

    /// The file's text: the metadata, then every line with its stamp to the
    /// millisecond (`[mm:ss.xxx]`) and its word stamps (`<mm:ss.xxx>`).
    public func text() -> String {
        var text = ""
        for (key, value) in [("ti", title), ("ar", artist), ("al", album), ("by", author)] {
            if let value { text += "[\(key):\(value)]\n" }
        }
        if let lengthMilliseconds { text += "[length:\(Self.stamp(lengthMilliseconds))]\n" }
        for line in lines {
            text += "[" + Self.stamp(line.milliseconds) + "]"
            if line.words.isEmpty {
                text += line.text
            } else {
                for word in line.words { text += "<" + Self.stamp(word.milliseconds) + ">" + word.text }
            }
            text += "\n"
        }
        return text
    }

    /// `mm:ss.xxx` (minutes past 99 as they are).
    public static func stamp(_ milliseconds: Int) -> String {
        let value = max(0, milliseconds)
        let minutes = value / 60_000
        let seconds = value / 1_000 % 60
        let thousandths = value % 1_000
        func padded(_ number: Int, _ width: Int) -> String {
            let digits = String(number)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return padded(minutes, 2) + ":" + padded(seconds, 2) + "." + padded(thousandths, 3)
    }

    // MARK: reading

    private enum LineReading {
        case timed(stamps: [Int], text: String, words: [Word])
        case tags([(String, String)])
        case problem(column: Int, String)
    }

    /// One non-blank line: its leading time stamps and text, or its tags.
    private static func readLine(_ line: ArraySlice<Unicode.Scalar>) -> LineReading {
        var rest = line
        var stamps: [Int] = []
        var tags: [(String, String)] = []
        while rest.first == "[" {
            let column = rest.startIndex - line.startIndex + 1
            guard let close = rest.firstIndex(of: "]") else {
                if !stamps.isEmpty { break }  // text that starts with a bracket
                return .problem(column: column, "'[' without its ']'")
            }
            let inside = rest[(rest.startIndex + 1)..<close]
            if let milliseconds = stampMilliseconds(inside) {
                guard tags.isEmpty else { return .problem(column: column, "a time stamp after a tag") }
                stamps.append(milliseconds)
            } else if !stamps.isEmpty {
                break  // the text starts with a bracket: "[00:12.00][chorus] …"
            } else if let colon = inside.firstIndex(of: ":"), colon > inside.startIndex,
                      inside[..<colon].allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || $0 == "#" }) {
                tags.append((string(inside[..<colon]).lowercased(), string(trimmed(inside[(colon + 1)...]))))
            } else {
                return .problem(column: column, "'[\(string(inside.prefix(40)))]' is neither a time stamp ([mm:ss.xx]) nor a tag ([ar:…])")
            }
            rest = trimmed(rest[(close + 1)...])
        }
        if !stamps.isEmpty {
            let (text, words) = readWords(rest)
            return .timed(stamps: stamps, text: text, words: words)
        }
        if !tags.isEmpty { return .tags(tags) }
        return .problem(column: 1, "no time stamp before '\(string(line.prefix(40)))'")
    }

    /// A line's text and its words when it has word stamps (`<mm:ss.xx>`);
    /// text before the first word stamp has the time −1 (it starts with
    /// the line); a `<` that does not open a stamp is text.
    private static func readWords(_ text: ArraySlice<Unicode.Scalar>) -> (String, [Word]) {
        var words: [Word] = []
        var current = String.UnicodeScalarView()
        var time = -1
        var stamped = false
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == "<", let close = text[index...].firstIndex(of: ">"), let milliseconds = stampMilliseconds(text[(index + 1)..<close]) {
                if !current.isEmpty { words.append(Word(milliseconds: time, text: String(current))) }
                current = String.UnicodeScalarView()
                time = milliseconds
                stamped = true
                index = close + 1
            } else {
                current.append(text[index])
                index += 1
            }
        }
        guard stamped else { return (string(trimmed(Array(current)[...])), []) }
        if !current.isEmpty { words.append(Word(milliseconds: time, text: String(current))) }
        // The line ends where its last word's text does (its spaces go as the line's do).
        while let last = words.indices.last {
            while let end = words[last].text.unicodeScalars.last, end == " " || end == "\t" { words[last].text.unicodeScalars.removeLast() }
            guard words[last].text.isEmpty else { break }
            words.removeLast()
        }
        return (string(trimmed(Array(words.map(\.text).joined().unicodeScalars)[...])), words)
    }

    /// `mm:ss`, `mm:ss.x…` (one to three digits), `mm:ss:xx`; minutes one
    /// to five digits, seconds below 60; spaces around allowed.
    static func stampMilliseconds(_ text: ArraySlice<Unicode.Scalar>) -> Int? {
        let parts = trimmed(text).split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else { return nil }
        guard let minutes = digits(parts[0], 1...5) else { return nil }
        var secondsText = parts[1]
        var fraction: ArraySlice<Unicode.Scalar> = []
        if parts.count == 3 {
            fraction = parts[2]
            guard fraction.count == 2 else { return nil }
        } else if let dot = secondsText.firstIndex(of: ".") {
            fraction = secondsText[(dot + 1)...]
            secondsText = secondsText[..<dot]
            guard (1...3).contains(fraction.count) else { return nil }
        }
        guard let seconds = digits(secondsText, 1...2), seconds < 60 else { return nil }
        var milliseconds = 0
        if !fraction.isEmpty {
            guard let value = digits(fraction, 1...3) else { return nil }
            milliseconds = value * [100, 10, 1][fraction.count - 1]
        }
        return (minutes * 60 + seconds) * 1_000 + milliseconds
    }

    /// Without spaces, tabs (and a stray byte order mark) at the start, spaces and tabs at the end.
    private static func trimmed(_ text: ArraySlice<Unicode.Scalar>) -> ArraySlice<Unicode.Scalar> {
        var result = text.drop { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }

    private static func string(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    /// `+500`, `-250`, `100`: milliseconds (up to a day either way).
    static func signedMilliseconds(_ text: String) -> Int? {
        var body = Array(text.unicodeScalars)[...]
        var sign = 1
        if body.first == "+" || body.first == "-" {
            sign = body.first == "-" ? -1 : 1
            body = body.dropFirst()
        }
        guard let value = digits(body, 1...8) else { return nil }
        return sign * value
    }

    private static func digits(_ text: ArraySlice<Unicode.Scalar>, _ count: ClosedRange<Int>) -> Int? {
        guard count.contains(text.count), text.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        return text.reduce(0) { $0 * 10 + Int($1.value - 48) }
    }
}
