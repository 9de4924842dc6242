import AcapellaScore
import Foundation

/// The display list as SVG: one user unit is one staff space; glyphs are
/// text in the SMuFL code points set in the music font (`@font-face` from
/// a URL, or the font embedded for a standalone file); every note is a
/// group with an id and data attributes (part, measure, tick, song sample,
/// MIDI note, lyric).
public enum SVGWriter {
    /// Where the font comes from.
    public enum FontSource: Sendable {
        /// A URL the page serves the font at (the box's web page).
        case url(String)
        /// The font file's bytes, embedded as a data URL.
        case embedded([UInt8])

        /// The CSS `src` value.
        var css: String {
            switch self {
            case .url(let url): return "url(\(escape(url)))"
            case .embedded(let bytes):
                let type = bytes.starts(with: Array("OTTO".utf8)) ? "font/otf" : "font/ttf"
                return "url(data:\(type);base64,\(Data(bytes).base64EncodedString()))"
            }
        }
    }

    /// The text font's faces (the ones the engraver measured).
    public struct TextFontSource: Sendable {
        public var family: String
        public var faces: [(style: TextStyle, source: FontSource)]

        public init(family: String, faces: [(style: TextStyle, source: FontSource)]) {
            self.family = family
            self.faces = faces
        }
    }

    public static func svg(_ page: EngravedPage, staffSpaceMM: Double, fontName: String, font: FontSource, text: TextFontSource? = nil) -> String {
        var whole = ""
        whole.reserveCapacity(page.items.count * 64)
        write(page, staffSpaceMM: staffSpaceMM, fontName: fontName, font: font, text: text) { whole += $0 }
        return whole
    }

    /// The same SVG handed to `emit` a piece at a time (about 64 KB), so a
    /// long score can be compressed or written as it is made instead of
    /// held whole.
    public static func write(_ page: EngravedPage, staffSpaceMM: Double, fontName: String, font: FontSource, text: TextFontSource? = nil,
                             emit: (String) -> Void) {
        var out = ""
        out.reserveCapacity(66_000)
        func flush() {
            emit(out)
            out.removeAll(keepingCapacity: true)
        }
        let width = format(page.width * staffSpaceMM)
        let height = format(page.height * staffSpaceMM)
        out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)mm\" height=\"\(height)mm\" viewBox=\"0 0 \(format(page.width)) \(format(page.height))\">\n"
        out += "<style>@font-face{font-family:'\(fontName)';src:\(font.css);}"
        for face in text?.faces ?? [] {
            out += "@font-face{font-family:'\(escape(text!.family))';src:\(face.source.css);"
                + (face.style == .italic ? "font-style:italic;" : face.style == .bold ? "font-weight:bold;" : "") + "}"
        }
        out += ".m{font-family:'\(fontName)';font-size:4px;}"
        out += "text.t{font-family:" + (text.map { "'\(escape($0.family))'," } ?? "'Century Schoolbook','TeX Gyre Schola','DejaVu Serif',") + "serif;}"
        out += "g.highlight text,g.highlight polygon{fill:#1a5fb4;}"
        out += "line{stroke:#000;stroke-linecap:butt;}g.highlight line{stroke:#1a5fb4;}</style>\n"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
        for item in page.items {
            switch item {
            case .glyph(_, let codepoint, let at):
                out += "<text class=\"m\" x=\"\(format(at.x))\" y=\"\(format(at.y))\">&#x\(String(codepoint.value, radix: 16, uppercase: true));</text>\n"
            case .line(let from, let to, let thickness):
                out += "<line x1=\"\(format(from.x))\" y1=\"\(format(from.y))\" x2=\"\(format(to.x))\" y2=\"\(format(to.y))\" stroke-width=\"\(format(thickness))\"/>\n"
            case .polygon(let points):
                out += "<polygon points=\"" + points.map { "\(format($0.x)),\(format($0.y))" }.joined(separator: " ") + "\"/>\n"
            case .text(let text, let at, let size, let anchor, let style):
                var attributes = "class=\"t\" x=\"\(format(at.x))\" y=\"\(format(at.y))\" font-size=\"\(format(size))\""
                if anchor != .start { attributes += " text-anchor=\"\(anchor.rawValue)\"" }
                if style == .italic { attributes += " font-style=\"italic\"" }
                if style == .bold { attributes += " font-weight=\"bold\"" }
                out += "<text \(attributes)>\(escape(text))</text>\n"
            case .beginGroup(let id, let className, let data):
                out += "<g"
                if let id { out += " id=\"\(escape(id))\"" }
                if let className { out += " class=\"\(escape(className))\"" }
                for attribute in data { out += " data-\(attribute.name)=\"\(escape(attribute.value))\"" }
                out += ">\n"
            case .endGroup:
                out += "</g>\n"
            }
            if out.utf8.count >= 65_536 { flush() }
        }
        out += "</svg>\n"
        flush()
    }

    /// Three decimals, no trailing zeros: small files, sub-micrometre places.
    static func format(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        if rounded == rounded.rounded() { return String(Int(rounded)) }
        var text = String(format: "%.3f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    /// Text as SVG (XML 1.0) holds it: markup characters as entities, and
    /// what XML cannot hold at all (control characters, U+FFFE/U+FFFF) and
    /// what would reorder the page (direction overrides) left out, so any
    /// title or syllable keeps the document well-formed.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default:
                if SafeText.isControl(scalar) || scalar.value == 0xFFFE || scalar.value == 0xFFFF { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
