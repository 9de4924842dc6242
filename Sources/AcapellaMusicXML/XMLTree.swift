import AcapellaScore
import CExpat
import Foundation

/// A parsed XML document, flat: element records in document order, their
/// names interned, text and attribute values in one byte arena. Nothing is
/// allocated per element, which is what makes import fast.
final class XMLDocument {
    struct Record {
        var name: Int32
        /// Where the start tag begins in the parsed bytes (its line is
        /// found from this only when asked: counting lines as expat goes
        /// would scan the document a second time).
        var offset: Int32
        var firstChild: Int32 = -1
        var lastChild: Int32 = -1
        var nextSibling: Int32 = -1
        var attributeStart: Int32
        var attributeEnd: Int32
        var textStart: Int32 = 0
        var textEnd: Int32 = 0
    }

    struct Attribute {
        var name: Int32
        var start: Int32
        var end: Int32
    }

    let records: [Record]
    let attributes: [Attribute]
    let bytes: [UInt8]
    let names: [String]
    /// The importer's name for each interned name (`.other` for the rest).
    let tags: [Tag]
    /// The bytes expat parsed and their encoding, for line numbers.
    let source: [UInt8]
    let encoding: String
    /// Offsets of the line breaks in `source`, found on the first request.
    private lazy var lineBreaks: [Int32] = Self.lineBreaks(in: source, encoding: encoding)

    init(records: [Record], attributes: [Attribute], bytes: [UInt8], names: [String], source: [UInt8], encoding: String) {
        self.records = records
        self.attributes = attributes
        self.bytes = bytes
        self.names = names
        self.source = source
        self.encoding = encoding
        tags = names.map { Tag(rawValue: $0) ?? .other }
    }

    /// The line (from 1) of a byte offset in the parsed bytes.
    func line(atOffset offset: Int32) -> Int {
        1 + lineBreaks.partitionIndex { $0 >= offset }
    }

    static func lineBreaks(in source: [UInt8], encoding: String) -> [Int32] {
        var breaks: [Int32] = []
        switch encoding {
        case "UTF-16LE":
            for index in stride(from: 0, to: source.count - 1, by: 2) where source[index] == 0x0A && source[index + 1] == 0 { breaks.append(Int32(index)) }
        case "UTF-16BE":
            for index in stride(from: 0, to: source.count - 1, by: 2) where source[index] == 0 && source[index + 1] == 0x0A { breaks.append(Int32(index + 1)) }
        default:
            for (index, byte) in source.enumerated() where byte == 0x0A { breaks.append(Int32(index)) }
        }
        return breaks
    }

    /// The root element (the document has at least one element).
    var root: XMLNode { XMLNode(document: self, index: 0) }
}

/// The element names the importer reads; everything else is `.other`.
enum Tag: String {
    case scorePartwise = "score-partwise", scoreTimewise = "score-timewise", partList = "part-list", scorePart = "score-part"
    case partName = "part-name", partAbbreviation = "part-abbreviation", part, measure, attributes, divisions
    case key, fifths, mode, time, beats, beatType = "beat-type", senzaMisura = "senza-misura"
    case clef, sign, line, clefOctaveChange = "clef-octave-change", staves, transpose, diatonic, chromatic, octaveChange = "octave-change"
    case note, grace, cue, chord, pitch, step, alter, octave, unpitched, rest, duration, tie, type, dot
    case timeModification = "time-modification", actualNotes = "actual-notes", normalNotes = "normal-notes"
    case voice, staff, notations, tied, tuplet, slur, articulations, fermata, ornaments, dynamics
    case lyric, syllabic, text, elision
    case backup, forward, direction, directionType = "direction-type", sound, offset
    case metronome, perMinute = "per-minute", beatUnit = "beat-unit", beatUnitDot = "beat-unit-dot"
    case wedge, words, pedal, rehearsal, barline, `repeat`, ending, harmony, figuredBass = "figured-bass"
    case segno, coda, staccato, staccatissimo, tenuto, accent, strongAccent = "strong-accent", breathMark = "breath-mark", caesura
    case detachedLegato = "detached-legato"
    case work, workTitle = "work-title", movementTitle = "movement-title", identification, creator, rights, encoding, software
    case rootfile
    case other = ""
}

/// An element of a parsed document: a view that is only valid while its
/// document is alive (the importer keeps it alive for the whole import).
struct XMLNode {
    unowned(unsafe) let document: XMLDocument
    let index: Int32

    private var record: XMLDocument.Record { document.records[Int(index)] }

    var name: String { document.names[Int(record.name)] }
    var tag: Tag { document.tags[Int(record.name)] }
    var line: Int { document.line(atOffset: record.offset) }

    /// The element's own text (not its children's), as written.
    var text: String {
        let record = record
        return String(decoding: document.bytes[Int(record.textStart)..<Int(record.textEnd)], as: UTF8.self)
    }

    /// The value of an attribute.
    func attribute(_ name: String) -> String? {
        let record = record
        for index in Int(record.attributeStart)..<Int(record.attributeEnd) {
            let attribute = document.attributes[index]
            if document.names[Int(attribute.name)] == name {
                return String(decoding: document.bytes[Int(attribute.start)..<Int(attribute.end)], as: UTF8.self)
            }
        }
        return nil
    }

    /// Child elements in order.
    var elements: Children { Children(document: document, first: record.firstChild) }

    struct Children: Sequence {
        unowned(unsafe) let document: XMLDocument
        let first: Int32

        struct Iterator: IteratorProtocol {
            unowned(unsafe) let document: XMLDocument
            var cursor: Int32
            mutating func next() -> XMLNode? {
                guard cursor >= 0 else { return nil }
                let node = XMLNode(document: document, index: cursor)
                cursor = document.records[Int(cursor)].nextSibling
                return node
            }
        }

        func makeIterator() -> Iterator { Iterator(document: document, cursor: first) }
        var isEmpty: Bool { first < 0 }
    }

    /// The first child of that kind.
    func child(_ tag: Tag) -> XMLNode? {
        for node in elements where node.tag == tag { return node }
        return nil
    }

    /// Whether there is a child of that kind.
    func has(_ tag: Tag) -> Bool { child(tag) != nil }

    /// All children of that kind.
    func children(_ tag: Tag) -> [XMLNode] { elements.filter { $0.tag == tag } }

    /// The element's own text, trimmed of blanks, as bytes.
    var trimmedBytes: ArraySlice<UInt8> {
        let record = record
        var start = Int(record.textStart)
        var end = Int(record.textEnd)
        let bytes = document.bytes
        while start < end && Self.isBlank(bytes[start]) { start += 1 }
        while end > start && Self.isBlank(bytes[end - 1]) { end -= 1 }
        return bytes[start..<end]
    }

    /// The bytes of the first child's text, trimmed of blanks.
    func trimmedText(_ tag: Tag) -> ArraySlice<UInt8>? { child(tag)?.trimmedBytes }

    /// Whether an attribute has exactly this value (no String made).
    func attribute(_ name: String, is value: String) -> Bool {
        let record = record
        for index in Int(record.attributeStart)..<Int(record.attributeEnd) {
            let attribute = document.attributes[index]
            if document.names[Int(attribute.name)] == name {
                return document.bytes[Int(attribute.start)..<Int(attribute.end)].elementsEqual(value.utf8)
            }
        }
        return false
    }

    /// Trimmed text of the first child of that kind.
    func string(_ tag: Tag) -> String? { trimmedText(tag).map { String(decoding: $0, as: UTF8.self) } }

    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    /// Integer text of the first child of that kind.
    func int(_ tag: Tag) -> Int? {
        guard let text = trimmedText(tag), !text.isEmpty, text.count <= 18 else { return nil }
        var value = 0
        var negative = false
        var index = text.startIndex
        if text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            negative = text[index] == UInt8(ascii: "-")
            index += 1
            guard index < text.endIndex else { return nil }
        }
        while index < text.endIndex {
            let digit = Int(text[index]) - 48
            guard (0...9).contains(digit) else { return nil }
            value = value * 10 + digit
            index += 1
        }
        return negative ? -value : value
    }

    /// Decimal text of the first child of that kind.
    func double(_ tag: Tag) -> Double? { string(tag).flatMap { Double($0) }.flatMap { $0.isFinite ? $0 : nil } }
}

/// Turns untrusted bytes into an element tree, or a located error: a
/// streaming expat parse (one pass, no recovery mode: the first error is
/// fatal) building just the elements the importer walks.
enum XMLTree {
    /// Largest XML document accepted (the largest real score seen is < 1 MiB).
    static let maximumBytes = ScoreLimits.maximumFileBytes
    /// Deepest element nesting accepted; MusicXML needs about 8.
    static let maximumDepth = 64

    static func parse(_ input: [UInt8]) throws(ImportError) -> XMLDocument {
        if input.count > maximumBytes {
            throw ImportError("the XML document is \(input.count >> 20) MB; a song file is \(maximumBytes >> 20) MB at most")
        }
        let (bytes, encoding) = try decodable(input)
        // The encoding is fixed (found above), overriding any declaration.
        // Without parameter-entity parsing and without an external entity
        // handler, expat never loads a DTD or anything else; an entity
        // declaration stops the parse (see `entityDeclared`).
        guard let parser = XML_ParserCreate(encoding) else { throw ImportError("out of memory for the XML parser") }
        defer { XML_ParserFree(parser) }
        var builder = TreeBuilder(parser: parser, capacity: bytes.count)
        let status = withUnsafeMutablePointer(to: &builder) { state in
            XML_SetUserData(parser, state)
            XML_SetElementHandler(parser, TreeBuilder.startElement, TreeBuilder.endElement)
            XML_SetCharacterDataHandler(parser, TreeBuilder.characters)
            XML_SetEntityDeclHandler(parser, TreeBuilder.entityDeclared)
            // An empty document still gets a valid pointer (and fails as one).
            return (bytes.isEmpty ? [0] : bytes).withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    XML_Parse(parser, $0, Int32(bytes.count), 1)
                }
            }
        }
        if let failure = builder.failure { throw failure }
        guard status == XML_STATUS_OK else {
            let code = XML_GetErrorCode(parser)
            if encoding == "UTF-8", let clearer = diagnosis(bytes) { throw clearer }
            throw ImportError("malformed XML (\(describe(code)))", line: Int(acapella_xml_line(parser)),
                              column: Int(acapella_xml_column(parser)) + 1)
        }
        guard !builder.records.isEmpty else {
            throw ImportError("malformed XML (the document has no root element)", line: Int(acapella_xml_line(parser)))
        }
        return XMLDocument(records: builder.records, attributes: builder.attributes, bytes: builder.bytes, names: builder.names.names,
                           source: bytes, encoding: encoding)
    }

    /// expat over the document with no handler but the entity guard, for
    /// the benchmark's floor; returns the bytes parsed.
    static func scan(_ input: [UInt8]) throws(ImportError) -> Int {
        let (bytes, encoding) = try decodable(input)
        guard let parser = XML_ParserCreate(encoding) else { throw ImportError("out of memory for the XML parser") }
        defer { XML_ParserFree(parser) }
        var builder = TreeBuilder(parser: parser, capacity: 0)
        let status = withUnsafeMutablePointer(to: &builder) { state in
            XML_SetUserData(parser, state)
            XML_SetEntityDeclHandler(parser, TreeBuilder.entityDeclared)
            return bytes.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.map { $0.withMemoryRebound(to: CChar.self, capacity: buffer.count) { XML_Parse(parser, $0, Int32(bytes.count), 1) } }
                    ?? XML_STATUS_ERROR
            }
        }
        guard status == XML_STATUS_OK, builder.failure == nil else { throw ImportError("malformed XML") }
        return bytes.count
    }

    /// A clearer message than expat's "invalid token" for the usual ways a
    /// file is not XML text: control characters, bytes that are not UTF-8.
    static func diagnosis(_ bytes: [UInt8]) -> ImportError? {
        // XML 1.0 allows no NUL or C0 control characters but tab and line breaks.
        if let control = bytes.firstIndex(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            return ImportError("the document contains the control character 0x\(String(bytes[control], radix: 16, uppercase: true)), which XML does not allow",
                               line: lineNumber(at: control, in: bytes))
        }
        if let offset = firstInvalidUTF8Offset(in: bytes) {
            return ImportError("the document is not valid UTF-8 text", line: lineNumber(at: offset, in: bytes))
        }
        return nil
    }

    /// Words for expat's error codes, for a choir director rather than a
    /// parser writer.
    static func describe(_ code: XML_Error) -> String {
        switch code {
        case XML_ERROR_NO_ELEMENTS: "the document is empty or does not start with an element"
        case XML_ERROR_JUNK_AFTER_DOC_ELEMENT: "there is content after the end of the document"
        case XML_ERROR_INVALID_TOKEN, XML_ERROR_BAD_CHAR_REF: "an invalid character"
        case XML_ERROR_UNDEFINED_ENTITY, XML_ERROR_RECURSIVE_ENTITY_REF: "an undeclared or looping entity reference"
        case XML_ERROR_DUPLICATE_ATTRIBUTE: "an attribute written twice"
        case XML_ERROR_TAG_MISMATCH: "an end tag does not match its start tag"
        case XML_ERROR_UNCLOSED_TOKEN, XML_ERROR_PARTIAL_CHAR: "the document ends inside a tag or character"
        case XML_ERROR_NO_MEMORY: "out of memory"
        default:
            if let text = XML_ErrorString(code) { String(cString: text) } else { "XML error \(code.rawValue)" }
        }
    }

    /// The bytes expat reads and the encoding it reads them in: UTF-8 (a
    /// byte-order mark dropped), UTF-16 as expat decodes it, Latin-1 turned
    /// into UTF-8 here; any other declared encoding is refused, so expat
    /// never converts from anything exotic (libxml2, the parser before
    /// expat, crashed on a declared UTF-7).
    static func decodable(_ input: [UInt8]) throws(ImportError) -> (bytes: [UInt8], encoding: String) {
        if let bigEndian = utf16Encoding(input) { return (input, bigEndian ? "UTF-16BE" : "UTF-16LE") }
        var bytes = input
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        if let declaration = xmlDeclaration(bytes) {
            let encoding = declaration.encoding?.lowercased() ?? "utf-8"
            switch encoding {
            case "utf-8", "utf8", "us-ascii", "ascii":
                break
            case "iso-8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "iso-latin-1":
                bytes = Array(String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) })).utf8)
            default:
                throw ImportError("unsupported text encoding '\(declaration.encoding ?? encoding)'; save the file as UTF-8", line: 1)
            }
        }
        return (bytes, "UTF-8")
    }

    /// The `<?xml … ?>` declaration at the start: where it ends, and the
    /// encoding it names.
    static func xmlDeclaration(_ bytes: [UInt8]) -> (end: Int, encoding: String?)? {
        guard bytes.starts(with: Array("<?xml".utf8)), let close = find(Array("?>".utf8), in: Array(bytes.prefix(512)), from: 0) else {
            return nil
        }
        let text = String(decoding: bytes[0..<close], as: UTF8.self)
        var encoding: String?
        if let range = text.range(of: "encoding") {
            let rest = text[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
            if let quote = rest.first, quote == "\"" || quote == "'" {
                encoding = String(rest.dropFirst().prefix { $0 != quote })
            }
        }
        return (close + 2, encoding)
    }

    static func utf16Encoding(_ bytes: [UInt8]) -> Bool? {
        guard bytes.count >= 2 else { return nil }
        if bytes[0] == 0xFF && bytes[1] == 0xFE { return false }
        if bytes[0] == 0xFE && bytes[1] == 0xFF { return true }
        if bytes[0] == 0x3C && bytes[1] == 0x00 { return false }
        if bytes[0] == 0x00 && bytes[1] == 0x3C { return true }
        return nil
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, start >= 0, needle.count <= haystack.count - start else { return nil }
        return haystack.withUnsafeBufferPointer { hay -> Int? in
            needle.withUnsafeBufferPointer { pattern -> Int? in
                let first = pattern[0]
                var index = start
                let last = hay.count - pattern.count
                while index <= last {
                    if hay[index] == first {
                        var matched = 1
                        while matched < pattern.count && hay[index + matched] == pattern[matched] { matched += 1 }
                        if matched == pattern.count { return index }
                    }
                    index += 1
                }
                return nil
            }
        }
    }

    static func lineNumber(at offset: Int, in bytes: [UInt8]) -> Int {
        1 + bytes[0..<offset].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }
}

/// Builds the document from expat's callbacks (C function pointers: a
/// pointer to the builder travels as expat's user data; a struct behind a
/// pointer needs no exclusivity checks per callback).
private struct TreeBuilder {
    let parser: XML_Parser
    var records: [XMLDocument.Record] = []
    var attributes: [XMLDocument.Attribute] = []
    var bytes: [UInt8] = []
    var stack: [Int32] = []
    var failure: ImportError?
    var names = NameTable()

    init(parser: XML_Parser, capacity: Int) {
        self.parser = parser
        // About one element per 40 bytes of MusicXML; text is a fraction.
        records.reserveCapacity(capacity / 40 + 16)
        bytes.reserveCapacity(capacity / 8 + 16)
        stack.reserveCapacity(XMLTree.maximumDepth)
    }

    static func builder(_ context: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<TreeBuilder> {
        context!.assumingMemoryBound(to: TreeBuilder.self)
    }

    mutating func fail(_ message: String) {
        guard failure == nil else { return }
        failure = ImportError(message, line: Int(acapella_xml_line(parser)))
        XML_StopParser(parser, 0)
    }

    mutating func append(_ text: UnsafePointer<CChar>, count: Int) {
        text.withMemoryRebound(to: UInt8.self, capacity: count) { bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
    }

    mutating func start(_ name: UnsafePointer<CChar>, _ attributeList: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
        guard failure == nil else { return }
        if stack.count >= XMLTree.maximumDepth {
            fail("XML elements nested more than \(XMLTree.maximumDepth) deep; refusing")
            return
        }
        if records.count >= Int32.max / 2 || bytes.count >= Int32.max / 2 {
            fail("the XML document has too many elements")
            return
        }
        let attributeStart = Int32(attributes.count)
        if var pair = attributeList {
            while let key = pair.pointee, let value = pair.successor().pointee {
                let start = Int32(bytes.count)
                append(value, count: strlen(value))
                attributes.append(.init(name: names.id(key), start: start, end: Int32(bytes.count)))
                pair = pair.advanced(by: 2)
            }
        }
        let index = Int32(records.count)
        records.append(.init(name: names.id(name), offset: Int32(truncatingIfNeeded: acapella_xml_byte_index(parser)),
                             attributeStart: attributeStart, attributeEnd: Int32(attributes.count)))
        if let parent = stack.last {
            let previous = records[Int(parent)].lastChild
            if previous >= 0 { records[Int(previous)].nextSibling = index } else { records[Int(parent)].firstChild = index }
            records[Int(parent)].lastChild = index
        }
        stack.append(index)
    }

    mutating func characters(_ text: UnsafePointer<CChar>, count: Int) {
        guard let node = stack.last else { return }
        var record = records[Int(node)]
        if record.textStart == record.textEnd {
            // Layout between elements is blank text; the importer trims it
            // anyway, so an element keeps none until its first real character.
            let blank = text.withMemoryRebound(to: UInt8.self, capacity: count) {
                UnsafeBufferPointer(start: $0, count: count).allSatisfy(XMLNode.isBlank)
            }
            if blank { return }
            record.textStart = Int32(bytes.count)
        } else if Int(record.textEnd) != bytes.count {
            // Text interrupted by a child element: move what there is to
            // the end of the arena so the element's text stays contiguous.
            let earlier = Array(bytes[Int(record.textStart)..<Int(record.textEnd)])
            record.textStart = Int32(bytes.count)
            bytes.append(contentsOf: earlier)
        }
        append(text, count: count)
        record.textEnd = Int32(bytes.count)
        records[Int(node)] = record
    }

    static let startElement: XML_StartElementHandler = { context, name, attributes in
        if let name { builder(context).pointee.start(name, attributes) }
    }

    static let endElement: XML_EndElementHandler = { context, _ in
        let builder = builder(context)
        if !builder.pointee.stack.isEmpty { builder.pointee.stack.removeLast() }
    }

    static let characters: XML_CharacterDataHandler = { context, text, length in
        if let text, length > 0 { builder(context).pointee.characters(text, count: Int(length)) }
    }

    /// Any entity declaration (internal or external, general or parameter)
    /// stops the parse: nothing is expanded or fetched.
    static let entityDeclared: XML_EntityDeclHandler = { context, _, _, _, _, _, _, _, _ in
        builder(context).pointee.fail("the document declares XML entities, which are refused (entity expansion / external entity attacks)")
    }
}

/// Element and attribute names, each decoded once: a score repeats a few
/// dozen names hundreds of thousands of times. Open addressing on an FNV-1a
/// hash of the name's bytes; no allocation on a hit.
struct NameTable {
    private(set) var names: [String] = []
    private var spellings: [[UInt8]] = []
    private var slots = [Int32](repeating: -1, count: 1024)

    mutating func id(_ pointer: UnsafePointer<CChar>) -> Int32 {
        var hash: UInt32 = 2_166_136_261
        var length = 0
        pointer.withMemoryRebound(to: UInt8.self, capacity: 1) { bytes in
            while bytes[length] != 0 {
                hash = (hash ^ UInt32(bytes[length])) &* 16_777_619
                length += 1
            }
        }
        var slot = Int(hash) & (slots.count - 1)
        while slots[slot] >= 0 {
            let id = Int(slots[slot])
            let same = spellings[id].count == length && spellings[id].withUnsafeBytes { memcmp($0.baseAddress!, pointer, length) == 0 }
            if same { return Int32(id) }
            slot = (slot + 1) & (slots.count - 1)
        }
        let id = Int32(names.count)
        let spelling = pointer.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
        names.append(String(decoding: spelling, as: UTF8.self))
        spellings.append(spelling)
        slots[slot] = id
        if names.count * 2 > slots.count { grow() }
        return id
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        for (id, spelling) in spellings.enumerated() {
            var hash: UInt32 = 2_166_136_261
            for byte in spelling { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
            var slot = Int(hash) & (slots.count - 1)
            while slots[slot] >= 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = Int32(id)
        }
    }
}

/// `META-INF/container.xml` → the root file's path.
enum ContainerXML {
    static func rootFilePath(_ bytes: [UInt8]) -> String? {
        guard let document = try? XMLTree.parse(bytes) else { return nil }
        var queue = [document.root]
        while let node = queue.popLast() {
            if node.tag == .rootfile, let path = node.attribute("full-path"), !path.isEmpty {
                // MusicXML 4 may list other rootfiles (PDF, …) after the score.
                let type = node.attribute("media-type") ?? "application/vnd.recordare.musicxml+xml"
                if type.contains("musicxml") || type.contains("xml") { return path }
            }
            queue.append(contentsOf: Array(node.elements).reversed())
        }
        return nil
    }
}
