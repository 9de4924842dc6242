/// What the box is doing, as the readouts name it.
public enum ReadoutMode: String, CaseIterable, Hashable, Sendable {
    case stopped
    case countIn = "count-in"
    case playing
    case recording
    /// A take was just recorded and waits to be kept or discarded.
    case review

    /// The LCD's label (five columns with its space).
    public var shortLabel: String {
        switch self {
        case .stopped: "STOP "
        case .countIn: "CNT  "
        case .playing: "PLAY "
        case .recording: "REC  "
        case .review: "TAKE "
        }
    }

    /// The console's label (six columns with its space).
    public var label: String {
        switch self {
        case .stopped: "STOP"
        case .countIn: "COUNT"
        case .playing: "PLAY"
        case .recording: "REC"
        case .review: "TAKE?"
        }
    }
}

/// Everything the readouts show, gathered by the box from the engine
/// snapshot, the pitch tracker, the project and its own session. Pure data.
public struct ReadoutState: Hashable, Sendable {
    /// The song's title, and the short form the LCD shows.
    public var song: String
    public var shortSong: String
    public var part: String
    public var mode: ReadoutMode
    public var measure: Int
    public var beat: Int
    /// Tempo, BPM (after the multiplier).
    public var tempo: Double
    /// "5-8" or nil.
    public var loop: String?
    public var takes: Int
    /// Input peak, dBFS (−∞ for silence).
    public var inputDB: Double
    /// Clipped since the last frame.
    public var clipped: Bool
    /// The note the part has now ("A4"), nil: none.
    public var note: String?
    /// The sung pitch against it, cents (nil: no pitch).
    public var cents: Double?
    /// The last note sung and its centre against the written pitch, cents,
    /// as the take's grade reads it (said a moment after the note ends).
    public var lastNote: String?
    public var lastCents: Double?
    /// The lyric line around now.
    public var lyric: String
    /// The reference recording ("ref director", "ref off"), when there is one,
    /// and its lyric line now while it is heard with lyrics (also the lyric shown).
    public var reference: String?
    public var referenceLyric: String?
    /// What the last key did, or a line of the log, shown for a while in
    /// the lyric's place.
    public var message: String?
    /// The key help shown instead of the needle (`?`): which page of how many.
    public var helpPage: Int?
    /// Where the web page is and its pairing code, shown for a while when
    /// a song is ready (the LCD gives it the whole display while stopped).
    public var web: WebBanner?
    /// The analysis of the take under review, when it is ready, and which
    /// of its lines a small display shows now (they take turns).
    public var takeSummary: TakeSummary?
    public var summaryTurn = 0

    /// A state.
    public init(song: String, shortSong: String? = nil, part: String, mode: ReadoutMode, measure: Int, beat: Int, tempo: Double, loop: String? = nil,
                takes: Int = 0, inputDB: Double = -.infinity, clipped: Bool = false, note: String? = nil, cents: Double? = nil, lyric: String = "",
                message: String? = nil, helpPage: Int? = nil) {
        self.song = song
        self.shortSong = shortSong ?? ShortTitle.make(song, width: 10)
        self.part = part
        self.mode = mode
        self.measure = measure
        self.beat = beat
        self.tempo = tempo
        self.loop = loop
        self.takes = takes
        self.inputDB = inputDB
        self.clipped = clipped
        self.note = note
        self.cents = cents
        self.lyric = lyric
        self.message = message
        self.helpPage = helpPage
    }
}

/// What the analysis of a take says, short enough for the LCD.
public struct TakeSummary: Hashable, Sendable {
    public var takeID: Int
    /// 0–100.
    public var score: Int
    public var sung: Int
    public var notes: Int
    /// The worst notes (at most two), short: "m7 saved -32c", "m9 late 80ms", "m12 missed".
    public var worst: [String]
    /// The first range to punch, if any.
    public var punch: ClosedRange<Int>?

    public init(takeID: Int, score: Int, sung: Int, notes: Int, worst: [String], punch: ClosedRange<Int>?) {
        self.takeID = takeID
        self.score = score
        self.sung = sung
        self.notes = notes
        self.worst = worst
        self.punch = punch
    }

    /// The lines a small display cycles through at review after its keys.
    public var lines: [String] { worst + (punch.map { ["w punch \($0.lowerBound)-\($0.upperBound)"] } ?? []) }

    /// One line for the console and the log.
    public var text: String {
        "take \(takeID): \(score)/100, \(sung) of \(notes) sung" + (worst.isEmpty ? "" : "; " + worst.joined(separator: "; "))
            + (punch.map { "; w punches mm. \($0.lowerBound)-\($0.upperBound)" } ?? "")
    }
}

/// The web page's address (`acapella.local`, port 8080) and pairing code.
public struct WebBanner: Hashable, Sendable {
    public var host: String
    public var port: Int
    public var code: String

    public init(host: String, port: Int, code: String) {
        self.host = host
        self.port = port
        self.code = code
    }
}

/// Snapshot → text frames, pure functions (golden-tested). The console
/// frame fits any terminal of 40×10 or more; the LCD frames fit 16×2 and
/// 20×4 character displays exactly, in characters every HD44780 has.
public enum Readout {
    /// Pads or cuts to exactly `width` characters.
    public static func fit(_ text: String, _ width: Int) -> String {
        let characters = Array(text)
        if characters.count >= width { return String(characters.prefix(width)) }
        return text + String(repeating: " ", count: width - characters.count)
    }

    /// The needle: `width` cells for −50…+50 cents, `|` at the centre, the
    /// pointer where the voice is (`<` or `>` pinned at the ends); `track`
    /// fills the rest.
    public static func needle(_ cents: Double?, width: Int, track: Character = "-") -> String {
        var cells = Array(repeating: track, count: width)
        let middle = width / 2
        cells[middle] = "|"
        guard let cents else { return String(cells) }
        let clamped = max(-50, min(50, cents))
        let position = middle + Int((clamped / 50 * Double(middle)).rounded())
        cells[max(0, min(width - 1, position))] = cents < -50 ? "<" : cents > 50 ? ">" : "#"
        return String(cells)
    }

    /// The input meter: `width` cells from −60 to 0 dBFS, "CLIP" when clipped.
    public static func meter(_ decibels: Double, clipped: Bool, width: Int) -> String {
        if clipped { return fit(String(repeating: "#", count: max(0, width - 4)) + "CLIP", width) }
        let filled = decibels.isFinite ? Int(((max(-60, min(0, decibels)) + 60) / 60 * Double(width)).rounded()) : 0
        return String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
    }

    /// The keys that matter now, for the console's last line.
    public static func footer(_ mode: ReadoutMode) -> String {
        switch mode {
        case .stopped: "space play  r record  ? keys  q quit"
        case .countIn: "s stop  r record or not  ? keys"
        case .playing: "space pause  p punch in  s stop  ? keys"
        case .recording: "o punch out  s stop  ? keys"
        case .review: "k keep  d discard  space listen"
        }
    }

    /// Cents as the readouts print them: "+18", "-7", never "-0".
    static func centsText(_ cents: Double) -> String {
        let whole = Int(max(-99, min(99, cents)).rounded())
        return whole >= 0 ? "+\(whole)" : "\(whole)"
    }

    /// The console frame: `height` lines of exactly `width` characters.
    /// With `keys` (the help's lines) and a `helpPage`, that page of them
    /// stands where the needle and meter were.
    public static func console(_ readout: ReadoutState, width: Int, height: Int, keys: [String] = []) -> [String] {
        let width = max(40, width)
        let height = max(10, height)
        var lines = [
            fit("\(readout.song) — \(readout.part)", width),
            fit("\(readout.mode.label.padding(toLength: 6))bar \(readout.measure).\(readout.beat)  ♩=\(Int(readout.tempo.rounded()))\(readout.loop.map { "  loop \($0)" } ?? "")  takes \(readout.takes)\(readout.reference.map { "  " + $0 } ?? "")", width),
        ]
        if let page = readout.helpPage, !keys.isEmpty {
            let pages = helpPages(keys, width: width, height: height)
            let index = min(page, pages.count - 1)
            lines.append(fit("keys, page \(index + 1) of \(pages.count) (? next page, any other key closes):", width))
            lines += pages[index].map { fit($0, width) }
        } else {
            let pitch: String
            if let note = readout.note, let cents = readout.cents {
                pitch = "\(note) \(centsText(cents).leftPadded(to: 4)) cents"
            } else if let note = readout.note {
                pitch = "\(note)  (no voice)"
            } else {
                pitch = "(rest)"
            }
            let last = readout.lastNote.flatMap { note in readout.lastCents.map { "   last note \(note) \(centsText($0))" } } ?? ""
            lines += [
                fit("", width),
                fit("  -50 " + needle(readout.cents, width: width - 14) + " +50", width),
                fit("  " + pitch + last, width),
                fit("", width),
                fit("input " + meter(readout.inputDB, clipped: readout.clipped, width: width - 16) + (readout.inputDB.isFinite ? " \(decibelText(readout.inputDB)) dB" : "   -inf dB"), width),
                fit("", width),
                fit("  " + (readout.message ?? readout.takeSummary?.text ?? readout.web.map { "web page: http://\($0.host):\($0.port)/  code \($0.code)" } ?? readout.lyric), width),
            ]
        }
        while lines.count < height - 1 { lines.append(fit("", width)) }
        if lines.count > height - 1 { lines.removeLast(lines.count - (height - 1)) }
        lines.append(fit(footer(readout.mode), width))
        return lines
    }

    /// The help's lines in pages that fit between the readout's top two
    /// lines and its footer; two columns when the terminal is wide enough.
    public static func helpPages(_ keys: [String], width: Int, height: Int) -> [[String]] {
        let rows = max(1, max(10, height) - 4)
        let columnWidth = (keys.map(\.count).max() ?? 0) + 2
        let columns = max(40, width) >= 2 * columnWidth ? 2 : 1
        let perPage = rows * columns
        var pages: [[String]] = []
        var start = 0
        while start < keys.count {
            let chunk = Array(keys[start..<min(keys.count, start + perPage)])
            var page: [String] = []
            for row in 0..<min(rows, chunk.count) {
                var line = chunk[row].padding(toLength: columnWidth)
                if columns == 2, row + rows < chunk.count { line += chunk[row + rows] }
                page.append(line)
            }
            pages.append(page)
            start += perPage
        }
        return pages.isEmpty ? [[]] : pages
    }

    static func decibelText(_ decibels: Double) -> String {
        let tenths = Int((decibels * 10).rounded())
        let text = "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)"
        return text.leftPadded(to: 5)
    }

    /// The LCD frame for a `columns`×`rows` display (16×2 or 20×4): where
    /// you are (song, part, takes) and what is happening (state, measure,
    /// the needle); at TAKE? what to press. The needle's track is `.` so a
    /// flat reading's minus sign stands out beside it.
    public static func lcd(_ readout: ReadoutState, columns: Int, rows: Int) -> [String] {
        let takes = "T\(readout.takes)"
        let cents = readout.cents.map { " " + centsText($0) } ?? ""
        if let web = readout.web, readout.mode == .stopped {
            // The page's address and code: 16×2 "acapella.local" / ":8080 code123456".
            let port = web.port == 80 ? "" : ":\(web.port)"
            if rows <= 2 {
                let second = port + (port.count + 11 <= columns ? " code" : "code") + web.code
                return [fit(web.host.count + port.count <= columns ? web.host + port : web.host, columns),
                        fit(web.host.count + port.count <= columns ? "code " + web.code : second, columns)]
            }
            return [fit(ShortTitle.make(readout.song, width: columns), columns), fit("web page:", columns), fit(web.host + port, columns),
                    fit("code " + web.code, columns)] + Array(repeating: fit("", columns), count: max(0, rows - 4))
        }
        if rows <= 2 {
            if readout.mode == .review {
                // With the analysis: its score, then the keys and the worst notes in turn.
                let score = readout.takeSummary.map { "\($0.score) " } ?? ""
                let turns = ["k keep d discard"] + (readout.takeSummary?.lines ?? [])
                return [fit("TAKE? \(score)\(readout.part)".padding(toLength: columns - takes.count) + takes, columns),
                        fit(turns[readout.summaryTurn % turns.count], columns)]
            }
            // Where: the song as short as the room left by the part and takes allows.
            let room = max(1, columns - readout.part.count - takes.count - 2)
            let title = readout.shortSong.count <= room ? readout.shortSong : ShortTitle.make(readout.song, width: room)
            let place = fit(title, room).trimmedRight + " " + readout.part
            // What: state, measure, the needle, the cents.
            let head = readout.mode.shortLabel + "\(readout.measure)".padding(toLength: 3)
            let gauge = needle(readout.cents, width: max(3, columns - head.count - 4), track: ".")
            return [fit(place.padding(toLength: columns - takes.count) + takes, columns), fit(head + gauge + cents, columns)]
        }
        let head = readout.mode.shortLabel + "\(readout.measure).\(readout.beat)".padding(toLength: 5)
        let summary = readout.takeSummary
        let activity = readout.mode == .review
            ? fit(summary.map { "TAKE? \($0.score)/100 \($0.sung)/\($0.notes)" } ?? "TAKE? space: listen", columns)
            : fit(head + needle(readout.cents, width: max(3, columns - head.count - 4), track: ".") + cents, columns)
        let turns = ["k keep  d discard"] + (summary?.lines ?? [])
        let detail = readout.mode == .review ? turns[readout.summaryTurn % turns.count] : (readout.message ?? readout.lyric)
        return [
            fit(ShortTitle.make(readout.song, width: columns), columns),
            fit("\(readout.part)".padding(toLength: columns - 12) + " \(takes.padding(toLength: 4))\(Int(readout.tempo.rounded()))bpm", columns),
            activity,
            fit(detail, columns),
        ] + Array(repeating: fit("", columns), count: max(0, rows - 4))
    }
}

/// Song titles short enough for a small display, and still telling songs
/// apart: a catalogue number when the title has one ("BWV 26" for "Chorale
/// from Cantata BWV 26: Ach wie flüchtig"), else the words after a colon,
/// else the title; leading articles dropped; cut at a word's end.
public enum ShortTitle {
    /// `title` in at most `width` characters.
    public static func make(_ title: String, width: Int) -> String {
        guard title.count > width else { return title }
        if let catalogue = catalogueNumber(in: title), catalogue.count <= width { return catalogue }
        var text = title
        if let colon = text.firstIndex(of: ":") { text = String(text[text.index(after: colon)...]) }
        text = text.trimmingBlanks
        for article in ["The ", "A ", "An "] where text.hasPrefix(article) && text.count > width { text = String(text.dropFirst(article.count)) }
        guard text.count > width else { return text }
        // Whole words, as many as fit, without trailing punctuation.
        var kept = ""
        for word in text.split(separator: " ") {
            let next = kept.isEmpty ? String(word) : kept + " " + word
            if next.count > width { break }
            kept = next
        }
        while let last = kept.last, ",;:-.".contains(last) { kept.removeLast() }
        return kept.isEmpty ? String(text.prefix(width)) : kept
    }

    /// Short forms of several titles that differ from one another (a
    /// repeated one gets a number: "Ode 2").
    public static func distinct(_ titles: [String], width: Int) -> [String] {
        var result = titles.map { make($0, width: width) }
        for index in result.indices where result[..<index].contains(result[index]) && titles[..<index].contains(where: { make($0, width: width) == result[index] && $0 != titles[index] }) {
            let suffix = " \(result[..<index].filter { $0.hasPrefix(result[index]) }.count + 1)"
            result[index] = String(result[index].prefix(max(1, width - suffix.count))) + suffix
        }
        return result
    }

    /// "BWV 26", "HWV 56", "K. 626", "Op. 27": a catalogue number, if any.
    static func catalogueNumber(in title: String) -> String? {
        let words = title.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ":" }).map(String.init)
        for (index, word) in words.enumerated() where ["BWV", "HWV", "BuxWV", "TWV", "RV", "K.", "KV", "Op.", "D."].contains(word) {
            guard index + 1 < words.count, let first = words[index + 1].first, first.isNumber else { continue }
            return "\(word) \(words[index + 1])"
        }
        return nil
    }
}

extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }

    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: " ", count: length - count) + self
    }

    var trimmedRight: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }

    var trimmingBlanks: String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
