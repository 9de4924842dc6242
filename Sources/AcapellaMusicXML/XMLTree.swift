import AcapellaScore
import Foundation
import FoundationXML

/// An element of a parsed XML document: just what the importer walks.
final class XMLNode {
    let name: String
    let attributes: [String: String]
    let line: Int
    var text = ""
    var children: [XMLNode] = []

    init(name: String, attributes: [String: String], line: Int) {
        self.name = name
        self.attributes = attributes
        self.line = line
    }

    /// The first child of that name.
    func child(_ name: String) -> XMLNode? { children.first { $0.name == name } }

    /// All children of that name.
    func children(_ name: String) -> [XMLNode] { children.filter { $0.name == name } }

    /// Trimmed text of the first child of that name.
    func string(_ name: String) -> String? {
        guard let text = child(name)?.text else { return nil }
        // Element text in MusicXML is short; trim ASCII blanks without
        // going through Foundation.
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { !Self.isBlank($0) }) else { return "" }
        let last = utf8.lastIndex(where: { !Self.isBlank($0) })!
        return String(text[first...last])
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    /// Integer text of the first child of that name.
    func int(_ name: String) -> Int? { string(name).flatMap { Int($0) } }

    /// Decimal text of the first child of that name.
    func double(_ name: String) -> Double? { string(name).flatMap { Double($0) }.flatMap { $0.isFinite ? $0 : nil } }
}

/// Turns untrusted bytes into an element tree, or a located error.
enum XMLTree {
    /// Largest XML document accepted (the largest real score seen is < 1 MiB).
    static let maximumBytes = 32 << 20
    /// Deepest element nesting accepted; MusicXML needs about 8.
    static let maximumDepth = 64

    static func parse(_ input: [UInt8]) throws(ImportError) -> XMLNode {
        // Our own declaration first: libxml2 then reads plain UTF-8 and never
        // detects or converts an encoding itself.
        let bytes = declaration + (try sanitized(input))
        let builder = TreeBuilder()
        let parser = XMLParser(data: Data(bytes))
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.delegate = builder
        let succeeded = parser.parse()
        if var failure = builder.failure {
            // Columns on line 1 count from the document's own first byte.
            if failure.line == 1, let column = failure.column { failure.column = max(1, column - declaration.count) }
            throw failure
        }
        guard succeeded, let root = builder.root else {
            throw ImportError("malformed XML (the document has no root element)", line: parser.lineNumber)
        }
        return root
    }

    static let declaration = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>".utf8)

    /// Size limit, UTF-16 → UTF-8, and the document type declaration blanked
    /// out so nothing external is ever loaded; entity declarations refused.
    static func sanitized(_ input: [UInt8]) throws(ImportError) -> [UInt8] {
        if input.count > maximumBytes {
            throw ImportError("the XML document is \(input.count >> 20) MiB; refusing more than \(maximumBytes >> 20) MiB")
        }
        var bytes = try utf8Text(input)
        if let entity = find(Array("<!ENTITY".utf8), in: bytes, from: 0) {
            throw ImportError("the document declares XML entities, which are refused (entity expansion / external entity attacks)",
                              line: lineNumber(at: entity, in: bytes))
        }
        if let doctype = find(Array("<!DOCTYPE".utf8), in: bytes, from: 0) {
            var index = doctype
            var quote: UInt8?
            var depth = 0
            while index < bytes.count {
                let byte = bytes[index]
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: "[") {
                    depth += 1
                } else if byte == UInt8(ascii: "]") {
                    depth -= 1
                } else if byte == UInt8(ascii: ">") && depth <= 0 {
                    break
                }
                index += 1
            }
            for position in doctype..<min(index + 1, bytes.count) where bytes[position] != 0x0A {
                bytes[position] = 0x20
            }
        }
        blankProcessingInstructions(&bytes)
        return bytes
    }

    /// Processing instructions (`<?target data?>`) carry nothing MusicXML
    /// needs, and Foundation's callback for them reads a NULL pointer when
    /// the data is empty (found by fuzzing): they are blanked out, keeping
    /// line numbers. In well-formed XML `<?` can only start one (text must
    /// escape `<`).
    static func blankProcessingInstructions(_ bytes: inout [UInt8]) {
        var index = 0
        while let start = find(Array("<?".utf8), in: bytes, from: index) {
            let end = find(Array("?>".utf8), in: bytes, from: start + 2).map { $0 + 2 } ?? bytes.count
            for position in start..<end where bytes[position] != 0x0A { bytes[position] = 0x20 }
            index = end
        }
    }

    /// The document as UTF-8 with its XML declaration blanked out, so that
    /// libxml2 never converts encodings itself (its converters have crashed
    /// on hostile declarations such as UTF-7). UTF-8, UTF-16 and Latin-1 are
    /// decoded here; other encodings are refused.
    static func utf8Text(_ input: [UInt8]) throws(ImportError) -> [UInt8] {
        var bytes = input
        var declared: String?
        if let utf16 = utf16Encoding(bytes) {
            bytes = transcodeUTF16(bytes, bigEndian: utf16)
            declared = "utf-8"
        } else if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            bytes.removeFirst(3)
        }
        if let declaration = xmlDeclaration(bytes) {
            let encoding = declared ?? declaration.encoding?.lowercased() ?? "utf-8"
            switch encoding {
            case "utf-8", "utf8", "us-ascii", "ascii":
                break
            case "iso-8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "iso-latin-1":
                bytes = Array(String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) })).utf8)
            default:
                throw ImportError("unsupported text encoding '\(declaration.encoding ?? encoding)'; save the file as UTF-8", line: 1)
            }
            for position in 0..<declaration.end where bytes[position] != 0x0A { bytes[position] = 0x20 }
        }
        // XML 1.0 allows no NUL or C0 control characters but tab and line
        // breaks; refusing them here also keeps libxml2 from guessing UCS-4
        // or EBCDIC from leading zero bytes (another crash found by fuzzing).
        if let control = bytes.firstIndex(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            throw ImportError("the document contains the control character 0x\(String(bytes[control], radix: 16, uppercase: true)), which XML does not allow",
                              line: lineNumber(at: control, in: bytes))
        }
        if let offset = firstInvalidUTF8Offset(in: bytes) {
            throw ImportError("the document is not valid UTF-8 text", line: lineNumber(at: offset, in: bytes))
        }
        return bytes
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

    static func transcodeUTF16(_ bytes: [UInt8], bigEndian: Bool) -> [UInt8] {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = 0
        while index + 1 < bytes.count {
            let unit = bigEndian ? UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]) : UInt16(bytes[index + 1]) << 8 | UInt16(bytes[index])
            units.append(unit)
            index += 2
        }
        if units.first == 0xFEFF { units.removeFirst() }
        return Array(String(decoding: units, as: UTF16.self).utf8)
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

/// Builds the tree from parser callbacks.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    var root: XMLNode?
    var stack: [XMLNode] = []
    var failure: ImportError?

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:])
    {
        guard failure == nil else { return }
        if stack.count >= XMLTree.maximumDepth {
            failure = ImportError("XML elements nested more than \(XMLTree.maximumDepth) deep; refusing", line: parser.lineNumber)
            parser.abortParsing()
            return
        }
        let node = XMLNode(name: elementName, attributes: attributes, line: parser.lineNumber)
        if let parent = stack.last { parent.children.append(node) } else { root = node }
        stack.append(node)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        if !stack.isEmpty { stack.removeLast() }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        stack.last?.text += string
    }

    /// libxml2 runs in recovery mode under Foundation's parser, so a broken
    /// document would otherwise come back as a partial tree: the first
    /// error is fatal here.
    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard failure == nil else { return }
        failure = ImportError("malformed XML (\(Self.describe((parseError as NSError).code)))", line: parser.lineNumber, column: parser.columnNumber)
        parser.abortParsing()
    }

    /// Words for the libxml2 error codes (`xmlParserErrors` in
    /// libxml/xmlerror.h) that Foundation passes through unchanged.
    static func describe(_ code: Int) -> String {
        switch code {
        case 3, 4: "the document is empty or does not start with an element"
        case 5, 86: "there is content after the end of the document"
        case 8, 9: "an invalid character"
        case 26, 89: "an undeclared or looping entity reference"
        case 32, 81: "an unsupported or invalid text encoding"
        case 39, 41: "a malformed attribute"
        case 68: "a name is missing"
        case 72, 73, 74: "a '<' or '>' is missing"
        case 76: "an end tag does not match its start tag"
        case 77: "an element is never closed"
        case 85: "elements are not properly nested"
        default: "XML error \(code)"
        }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        stack.last?.text += String(decoding: CDATABlock, as: UTF8.self)
    }
}

/// `META-INF/container.xml` → the root file's path.
enum ContainerXML {
    static func rootFilePath(_ bytes: [UInt8]) -> String? {
        guard let root = try? XMLTree.parse(bytes) else { return nil }
        var queue = [root]
        while let node = queue.popLast() {
            if node.name == "rootfile", let path = node.attributes["full-path"], !path.isEmpty {
                // MusicXML 4 may list other rootfiles (PDF, …) after the score.
                let type = node.attributes["media-type"] ?? "application/vnd.recordare.musicxml+xml"
                if type.contains("musicxml") || type.contains("xml") { return path }
            }
            queue.append(contentsOf: node.children.reversed())
        }
        return nil
    }
}
