/// The `.acasong` text format: parse and canonical print.
///
/// ```
/// acasong 1
/// title: Simple Harmony Test
/// time: 4/4
/// tempo: 80
/// part Soprano [treble]
/// G4 4  A4 4  B4 4  A4 4 | 3(D5 8 C5 8 B4 8) A4 4 G4 2
/// lyrics Soprano: A- ma- zing grace …
/// ```
public enum Acasong {
    /// The magic first line.
    public static let magic = "acasong 1"

    /// Song files (`.acasong` or MusicXML) larger than this are refused
    /// before parsing: no song is that big, and a runaway file should not
    /// exhaust the box's memory (`ScoreLimits`).
    public static let maximumFileBytes = ScoreLimits.maximumFileBytes

    /// Errors beyond this many stop the parse; the rest would be noise.
    public static let maximumErrors = 50

    /// Parses and validates `.acasong` text. Every problem is reported with
    /// line, column and measure; nothing is silently dropped or truncated.
    public static func parse(_ text: String, file: String? = nil) throws(ScoreErrors) -> Score {
        try parse(bytes: Array(text.utf8), file: file)
    }

    /// Parses and validates `.acasong` bytes (any bytes: invalid UTF-8 is an
    /// error, not a crash).
    public static func parse(bytes: [UInt8], file: String? = nil) throws(ScoreErrors) -> Score {
        try parseWithLocations(bytes: bytes, file: file).score
    }

    /// Parses, also returning where each note came from (tests use this to
    /// check error locations).
    static func parseWithLocations(bytes: [UInt8], file: String?) throws(ScoreErrors) -> (score: Score, noteLocations: [[TextLocation]]) {
        // A UTF-8 byte-order mark (some Windows editors write one) is not part of the text.
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        var parser = AcasongParser(bytes: text, file: file)
        parser.run()
        if !parser.errors.isEmpty { throw ScoreErrors(parser.errors) }
        return (parser.score, parser.parts.map(\.locations))
    }
}

/// A position in the source: line and the byte offsets needed to compute the
/// character column only when an error needs it.
struct TextLocation: Hashable, Sendable {
    var line: Int
    var lineStart: Int
    var offset: Int

    /// The same line, another byte offset.
    func at(_ offset: Int) -> TextLocation {
        TextLocation(line: line, lineStart: lineStart, offset: offset)
    }
}

/// The parser's state; one instance per parse.
struct AcasongParser {
    struct PartState {
        var part: Part
        var declaration: TextLocation
        var locations: [TextLocation] = []
        var tick = 0
        var nextTupletID = 1
        var openTuplet: (actual: Int, normal: Int, firstNote: Int, location: TextLocation)?
        /// Groups opened inside the open one (refused, said once), not yet closed.
        var nestedTuplets = 0
        /// Where the last `|` check (or the part) began.
        var lastCheckTick = 0
        var checkStyle = CheckStyle.unknown
    }

    /// Whether a part's `|` checks have so far closed one measure each.
    enum CheckStyle { case unknown, everyMeasure, sparse }

    struct PendingTempo {
        var measure: Int
        var offset: Int
        var tempo: Tempo
        var location: TextLocation
        /// Written with `@MEASURE` (not the song's opening `tempo:`).
        var atMeasure = false
        var printed = true
    }

    struct LyricToken {
        var text: String
        var location: TextLocation
    }

    let bytes: [UInt8]
    let file: String?
    var errors: [ScoreError] = []
    var score = Score(meters: [], keys: [], tempos: [])
    var parts: [PartState] = []
    var current: PartState?
    var lyricLines: [(partName: String, verse: Int, location: TextLocation, tokens: [LyricToken])] = []
    var headerLocations: [Subject: TextLocation] = [:]
    var seenHeaders: Set<String> = []
    var pendingTempos: [PendingTempo] = []
    var pendingTexts: [(measure: Int, offset: Int, text: ScoreText, location: TextLocation)] = []
    var meterMap = MeterMap(meters: [MeterChange(measure: 1, meter: Meter(4, 4))], pickupTicks: 0)
    var headerClosed = false
    var stopped = false
    /// Notes and rests read so far, every part; lyric syllables so far.
    var noteCount = 0
    var lyricTokenCount = 0

    init(bytes: [UInt8], file: String?) {
        self.bytes = bytes
        self.file = file
    }

    // MARK: Errors

    func column(of location: TextLocation) -> Int {
        // Characters, not bytes: count UTF-8 lead bytes before the offset.
        var count = 1
        var index = location.lineStart
        let end = min(location.offset, bytes.count)
        while index < end {
            if bytes[index] & 0xC0 != 0x80 { count += 1 }
            index += 1
        }
        return count
    }

    mutating func error(_ message: String, at location: TextLocation, measure: Int? = nil) {
        guard !stopped else { return }
        if errors.count == Acasong.maximumErrors {
            errors.append(ScoreError("too many errors; stopping here", file: file, line: location.line, column: column(of: location)))
            stopped = true
            return
        }
        errors.append(ScoreError(message, file: file, line: location.line, column: column(of: location), measure: measure))
    }

    func text(_ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// A token for an error message, cut short if long.
    func quoted(_ range: Range<Int>) -> String {
        let shown = range.count > 24 ? range.lowerBound..<(range.lowerBound + 24) : range
        return "'" + text(shown) + (shown.count < range.count ? "…'" : "'")
    }

    // MARK: Driver

    mutating func run() {
        if let problem = ScoreLimits.fileProblem(bytes: bytes.count) {
            error("the file is \(problem)", at: TextLocation(line: 1, lineStart: 0, offset: 0))
            return
        }
        if let bad = firstInvalidUTF8Offset(in: bytes) {
            var line = 1
            var lineStart = 0
            for index in 0..<bad where bytes[index] == 0x0A {
                line += 1
                lineStart = index + 1
            }
            error("the file is not UTF-8 text (invalid byte 0x\(String(bytes[bad], radix: 16, uppercase: true)))",
                  at: TextLocation(line: line, lineStart: lineStart, offset: bad))
            return
        }
        if bytes.allSatisfy({ isBlankByte($0) || $0 == 0x0A }) {
            error("empty file; expected '\(Acasong.magic)' on the first line", at: TextLocation(line: 1, lineStart: 0, offset: 0))
            return
        }
        var lineNumber = 0
        var lineStart = 0
        while lineStart <= bytes.count && !stopped {
            lineNumber += 1
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != 0x0A { lineEnd += 1 }
            let content = trimmedContent(lineStart..<lineEnd)
            let location = TextLocation(line: lineNumber, lineStart: lineStart, offset: content.lowerBound)
            if lineNumber == 1 {
                if text(content) != Acasong.magic {
                    if content.count >= 8 && text(content).hasPrefix("acasong ") {
                        error("unsupported format version \(quoted(content)); this build reads '\(Acasong.magic)'", at: location)
                    } else {
                        error("expected '\(Acasong.magic)' on the first line", at: location)
                    }
                    return
                }
            } else if !content.isEmpty {
                parseLine(content, location: location)
            }
            if lineEnd >= bytes.count { break }
            lineStart = lineEnd + 1
        }
        guard !stopped else { return }
        closeHeader(at: TextLocation(line: lineNumber, lineStart: lineStart, offset: lineStart))
        finishCurrentPart()
        assignLyrics()
        score.parts = parts.map(\.part)
        if errors.isEmpty { reportValidation() }
    }

    /// The line without its comment and surrounding blanks. A comment starts
    /// at `//` at the start of the line or after a blank, so `http://` in a
    /// source line is text.
    func trimmedContent(_ line: Range<Int>) -> Range<Int> {
        var end = line.upperBound
        var index = line.lowerBound
        while index + 1 < line.upperBound {
            if bytes[index] == UInt8(ascii: "/") && bytes[index + 1] == UInt8(ascii: "/")
                && (index == line.lowerBound || isBlankByte(bytes[index - 1]))
            {
                end = index
                break
            }
            index += 1
        }
        var start = line.lowerBound
        while start < end && isBlankByte(bytes[start]) { start += 1 }
        while end > start && isBlankByte(bytes[end - 1]) { end -= 1 }
        return start..<end
    }

    func startsWithWord(_ range: Range<Int>, _ word: String) -> Bool {
        let wordBytes = Array(word.utf8)
        guard range.count >= wordBytes.count, Array(bytes[range.lowerBound..<(range.lowerBound + wordBytes.count)]) == wordBytes
        else { return false }
        return range.count == wordBytes.count || isBlankByte(bytes[range.lowerBound + wordBytes.count])
    }

    func startsWith(_ range: Range<Int>, _ prefix: String) -> Bool {
        let prefixBytes = Array(prefix.utf8)
        return range.count >= prefixBytes.count && bytes[range.lowerBound..<(range.lowerBound + prefixBytes.count)].elementsEqual(prefixBytes)
    }

    mutating func parseLine(_ content: Range<Int>, location: TextLocation) {
        if startsWithWord(content, "part") {
            closeHeader(at: location)
            parsePartDeclaration(content, location: location)
        } else if startsWithWord(content, "lyrics") || startsWith(content, "lyrics[") {
            parseLyricsLine(content, location: location)
        } else if let nameEnd = headerKeyEnd(content) {
            if headerClosed {
                error("header line \(quoted(content.lowerBound..<nameEnd)) must come before the first 'part' line", at: location)
            } else {
                parseHeader(content, keyEnd: nameEnd, location: location)
            }
        } else if current == nil {
            error("expected a header line ('title: …') or 'part NAME'; notes must follow a 'part' line", at: location)
        } else {
            parseNotes(content, location: location)
        }
    }

    /// If the line is `key:` or `key@…:` with a lower-case key, the index of
    /// the colon.
    func headerKeyEnd(_ content: Range<Int>) -> Int? {
        var index = content.lowerBound
        guard index < content.upperBound, bytes[index] >= UInt8(ascii: "a"), bytes[index] <= UInt8(ascii: "z") else { return nil }
        while index < content.upperBound {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") { return index }
            let allowed = (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || isDigitByte(byte)
                || byte == UInt8(ascii: "@") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "_")
            if !allowed { return nil }
            index += 1
        }
        return nil
    }

    // MARK: Header

    mutating func parseHeader(_ content: Range<Int>, keyEnd: Int, location: TextLocation) {
        let rawKey = text(content.lowerBound..<keyEnd)
        let value = trimmedContent((keyEnd + 1)..<content.upperBound)
        let valueText = text(value)
        let valueLocation = TextLocation(line: location.line, lineStart: location.lineStart, offset: value.lowerBound)
        var key = rawKey
        var measure: Int?
        var offset = 0
        if let at = rawKey.firstIndex(of: "@") {
            key = String(rawKey[..<at])
            let position = rawKey[rawKey.index(after: at)...]
            let pieces = position.split(separator: "+", omittingEmptySubsequences: false)
            guard pieces.count <= 2, let parsedMeasure = boundedInt(pieces[0]),
                  pieces.count == 1 || boundedInt(pieces[1]) != nil
            else {
                error("expected '\(key)@MEASURE:' or '\(key)@MEASURE+TICKS:', found '\(rawKey)'", at: location)
                return
            }
            measure = parsedMeasure
            offset = pieces.count == 2 ? boundedInt(pieces[1])! : 0
            guard Self.positionedKeys.contains(key) else {
                error("only \(Self.positionedKeys.joined(separator: ", ")) take a position; '\(rawKey)' is not a header", at: location)
                return
            }
            if !Self.offsetKeys.contains(key) && pieces.count == 2 {
                error("\(key) \(key == "time" || key == "key" ? "changes" : "stands") at the start of a measure; remove '+\(pieces[1])'", at: location)
                return
            }
            if (key == "time" || key == "key") && parsedMeasure < 1 {
                error("\(key) changes start at measure 1 or later", at: location)
                return
            }
        }
        let identity = measure.map { "\(key)@\($0)+\(offset)" } ?? key
        let normalizedIdentity = (measure == 1 && (key == "time" || key == "key")) ? key : identity
        if !seenHeaders.insert(normalizedIdentity).inserted {
            error("'\(rawKey)' is given twice", at: location)
            return
        }
        if value.isEmpty && key != "tags" {
            error("'\(rawKey):' needs a value", at: location)
            return
        }
        if Self.markKeys.contains(key) {
            guard let measure else {
                error("'\(key)' needs a measure: '\(key)@MEASURE: …'", at: location)
                return
            }
            parseMarkHeader(key, measure: measure, offset: offset, value: valueText, location: location, valueLocation: valueLocation)
            return
        }
        switch key {
        case "title", "subtitle", "composer", "arranger", "source", "license":
            headerLocations[.header(key)] = location
            switch key {
            case "title": score.title = valueText
            case "subtitle": score.subtitle = valueText
            case "composer": score.composer = valueText
            case "arranger": score.arranger = valueText
            case "source": score.source = valueText
            default: score.license = valueText
            }
        case "tags":
            headerLocations[.header(key)] = location
            score.tags = valueText.split(separator: ",").map { String($0).trimmingBlanks() }.filter { !$0.isEmpty }
        case "time":
            let words = valueText.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let (numerator, denominator) = fraction(String(words[0])), Meter(numerator, denominator).isValid else {
                error("expected a time signature like 4/4, 3/4 or 6/8, found \(quoted(value))", at: valueLocation)
                return
            }
            var change = MeterChange(measure: measure ?? 1, meter: Meter(numerator, denominator))
            for word in words.dropFirst() {
                switch word {
                case "common" where change.meter == Meter(4, 4) && change.symbol == nil: change.symbol = .common
                case "cut" where change.meter == Meter(2, 2) && change.symbol == nil: change.symbol = .cut
                case "unprinted" where change.printed && (measure ?? 1) > 1: change.printed = false
                default:
                    error("after the time signature: 'common' (4/4 as C), 'cut' (2/2 as ¢) or 'unprinted' (not the first: it is always printed); found '\(word)'", at: valueLocation)
                    return
                }
            }
            headerLocations[.meter(score.meters.count)] = location
            score.meters.append(change)
        case "key":
            guard let parsed = Key(text: valueText) else {
                error("expected a key like 'G major', 'F# minor' or 'Bb major', found \(quoted(value))", at: valueLocation)
                return
            }
            headerLocations[.key(score.keys.count)] = location
            score.keys.append(KeyChange(measure: measure ?? 1, key: parsed))
        case "tempo":
            let words = valueText.split(whereSeparator: { $0 == " " || $0 == "\t" })
            let unprinted = words.count == 2 && words[1] == "unprinted"
            let number = unprinted ? String(words[0]) : valueText
            guard let milliBPM = Tempo.thousandths(number), Tempo(milliBPM: milliBPM).isValid else {
                error("expected a tempo in quarter notes per minute between 1 and 999.999 (and 'unprinted' if the score does not print it), found \(quoted(value))", at: valueLocation)
                return
            }
            pendingTempos.append(PendingTempo(measure: measure ?? 0, offset: offset, tempo: Tempo(milliBPM: milliBPM), location: location,
                                              atMeasure: measure != nil, printed: !unprinted))
        case "pickup":
            guard let (numerator, denominator) = fraction(valueText), denominator > 0,
                  (numerator * ticksPerWhole) % denominator == 0, numerator > 0
            else {
                error("expected a pickup length as a fraction of a whole note, like 1/4 or 3/8, found \(quoted(value))", at: valueLocation)
                return
            }
            headerLocations[.pickup] = location
            score.pickupTicks = numerator * ticksPerWhole / denominator
        case "written":
            guard let measures = writtenMeasures(valueText) else {
                error("expected the written measure of each measure as numbers and runs, like '0 1-8 1-7 9-16', found \(quoted(value))", at: valueLocation)
                return
            }
            headerLocations[.header("written")] = location
            score.writtenMeasures = measures
        default:
            error("unknown header '\(key)'; expected title, subtitle, composer, arranger, source, license, tags, time, key, tempo, pickup, written, text, rehearsal, repeat, ending or sign", at: location)
        }
    }

    /// "0 1-8 1-7 9-16" → [0, 1, …, 8, 1, …]; nil when malformed or longer
    /// than any song (a bound on what a hostile file can make us allocate).
    func writtenMeasures(_ text: String) -> [Int]? {
        var measures: [Int] = []
        for run in text.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            let ends = run.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count <= 2, let first = boundedInt(ends[0]), let last = ends.count == 2 ? boundedInt(ends[1]) : first,
                  last >= first, measures.count + (last - first) < Score.maximumWrittenMeasures
            else { return nil }
            measures.append(contentsOf: first...last)
        }
        return measures.isEmpty ? nil : measures
    }

    func boundedInt(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy(isDigitByte), text.count <= 9 else { return nil }
        return Int(text)
    }

    func fraction(_ text: String) -> (Int, Int)? {
        let pieces = text.split(separator: "/", omittingEmptySubsequences: false)
        guard pieces.count == 2, let a = boundedInt(pieces[0].trimmingBlanks()[...]),
              let b = boundedInt(pieces[1].trimmingBlanks()[...]), b > 0
        else { return nil }
        return (a, b)
    }

    /// Ends the header: defaults filled in, maps checked so note layout can
    /// rely on them.
    mutating func closeHeader(at location: TextLocation) {
        guard !headerClosed else { return }
        headerClosed = true
        sortMap(\.meters, subject: Subject.meter, by: \.measure, default: MeterChange(measure: 1, meter: Meter(4, 4)))
        sortMap(\.keys, subject: Subject.key, by: \.measure, default: KeyChange(measure: 1, key: Key(fifths: 0, mode: .major)))
        if let pickupLocation = headerLocations[.pickup], score.pickupTicks >= score.meters[0].meter.measureTicks {
            error("a pickup must be shorter than the first measure (\(score.meters[0].meter))", at: pickupLocation)
            score.pickupTicks = 0
        }
        meterMap = MeterMap(meters: score.meters, pickupTicks: score.pickupTicks)

        if !pendingTempos.contains(where: { $0.measure == 0 && $0.offset == 0 }) {
            pendingTempos.insert(PendingTempo(measure: 0, offset: 0, tempo: Tempo(bpm: 120), location: location), at: 0)
        }
        var placed: [(tick: Int, tempo: Tempo, location: TextLocation, printed: Bool)] = []
        for pending in pendingTempos {
            if pending.atMeasure && pending.measure == 0 && pending.offset == 0 && score.pickupTicks == 0 {
                // As for time@0: measure 0 is a pickup, and there is none.
                error("tempo@0 needs a pickup; measure 0 is the pickup (the opening tempo is 'tempo:')", at: pending.location)
                continue
            }
            if pending.measure == 0 && pending.offset > 0 && pending.offset >= score.pickupTicks {
                error(score.pickupTicks == 0
                    ? "tempo@0+… needs a pickup; measure 0 is the pickup"
                    : "tempo@0+\(pending.offset) is past the end of the pickup (\(score.pickupTicks) ticks)",
                    at: pending.location)
                continue
            }
            let measureStart = pending.measure == 0 ? 0 : meterMap.startTick(ofMeasure: pending.measure)
            if pending.measure > 0 && pending.offset >= meterMap.meter(atMeasure: pending.measure).measureTicks {
                error("tempo@\(pending.measure)+\(pending.offset) is past the end of measure \(pending.measure)", at: pending.location)
                continue
            }
            let tick = measureStart + pending.offset
            if let clash = placed.first(where: { $0.tick == tick }) {
                error("two tempos at the same point (the other is on line \(clash.location.line))", at: pending.location)
                continue
            }
            placed.append((tick, pending.tempo, pending.location, pending.printed))
        }
        placed.sort { $0.tick < $1.tick }
        score.tempos = placed.map { TempoChange(tick: $0.tick, tempo: $0.tempo, printed: $0.printed) }
        for (index, entry) in placed.enumerated() { headerLocations[.tempo(index)] = entry.location }
        placeTexts()
    }

    /// Puts map entries in measure order (the file may list them in any
    /// order), carrying their source locations along, and supplies the
    /// default at measure 1 when only later changes were given.
    mutating func sortMap<Entry>(
        _ keyPath: WritableKeyPath<Score, [Entry]>, subject: (Int) -> Subject, by measure: KeyPath<Entry, Int>,
        default initial: Entry
    ) {
        var entries = score[keyPath: keyPath].enumerated().map { (entry: $0.element, location: headerLocations[subject($0.offset)]) }
        if !entries.contains(where: { $0.entry[keyPath: measure] == 1 }) { entries.append((initial, nil)) }
        entries.sort { $0.entry[keyPath: measure] < $1.entry[keyPath: measure] }
        score[keyPath: keyPath] = entries.map(\.entry)
        for (index, entry) in entries.enumerated() { headerLocations[subject(index)] = entry.location }
    }
}

extension StringProtocol {
    func trimmingBlanks() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
