/// What a page is drawn from: glyphs, lines, filled shapes and text at
/// positions in staff spaces (y down). The SVG and PDF writers render the
/// same list, so the two outputs cannot disagree.
public enum DisplayItem: Hashable, Sendable {
    /// A SMuFL glyph with its origin at `at` (font size: one staff height).
    case glyph(name: String, codepoint: Unicode.Scalar, at: Point)
    /// A straight line with square ends.
    case line(from: Point, to: Point, thickness: Double)
    /// A filled polygon (beams, ties, brackets).
    case polygon([Point])
    /// Text on a baseline.
    case text(String, at: Point, size: Double, anchor: TextAnchor, style: TextStyle)
    /// The start of a group (a note, a part's staff): an id and data
    /// attributes, closed by `endGroup`.
    case beginGroup(id: String?, className: String?, data: [DataAttribute])
    case endGroup

    /// The item moved by `dx`, `dy`.
    public func offset(_ dx: Double, _ dy: Double) -> DisplayItem {
        func move(_ point: Point) -> Point { Point(point.x + dx, point.y + dy) }
        switch self {
        case .glyph(let name, let codepoint, let at): return .glyph(name: name, codepoint: codepoint, at: move(at))
        case .line(let from, let to, let thickness): return .line(from: move(from), to: move(to), thickness: thickness)
        case .polygon(let points): return .polygon(points.map(move))
        case .text(let text, let at, let size, let anchor, let style): return .text(text, at: move(at), size: size, anchor: anchor, style: style)
        case .beginGroup, .endGroup: return self
        }
    }
}

/// Where text sits on its x.
public enum TextAnchor: String, Hashable, Sendable {
    case start, middle, end
}

/// How text is set.
public enum TextStyle: String, Hashable, Sendable {
    case normal, italic, bold
}

/// A `data-NAME="VALUE"` attribute of a group.
public struct DataAttribute: Hashable, Sendable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One page (or, for the screen, one long scroll): its size in staff
/// spaces and what is drawn on it.
public struct EngravedPage: Hashable, Sendable {
    public var width: Double
    public var height: Double
    public var items: [DisplayItem]

    public init(width: Double, height: Double, items: [DisplayItem]) {
        self.width = width
        self.height = height
        self.items = items
    }
}

/// A text font as the engraver measures it: each character's advance, in
/// ems, for the regular, italic and bold faces, read with FreeType from the
/// shipped font files (`TextFont.load` in AcapellaEngravePDF); the SVG and
/// the PDF set text in the same files, so what is measured is what is
/// drawn. Advances add up without kerning (the font's pairs only narrow a
/// word), so a measured word is never narrower than the printed one.
public struct TextFont: Sendable {
    /// The family name the SVG asks for (`@font-face`).
    public let family: String
    /// Advances by style and scalar, in ems.
    let advances: [TextStyle: [UInt32: Float]]
    /// For a character the font lacks: its average advance.
    let fallback: [TextStyle: Double]

    public init(family: String, advances: [TextStyle: [UInt32: Float]]) {
        self.family = family
        self.advances = advances
        var fallback: [TextStyle: Double] = [:]
        for (style, table) in advances {
            let letters = table.filter { $0.key >= 0x61 && $0.key <= 0x7A }.map { Double($0.value) }
            fallback[style] = letters.isEmpty ? 0.55 : letters.reduce(0, +) / Double(letters.count)
        }
        self.fallback = fallback
    }

    /// No font file: widths estimated per character class (a generous
    /// average of serif faces). For tests of layout only; the commands and
    /// the box measure the shipped font.
    public static let estimated = TextFont(family: "serif", advances: [:])

    /// Whether widths are measured from a font file.
    public var isMeasured: Bool { !advances.isEmpty }

    /// The advance of `text` set at `size` (staff spaces).
    public func width(_ text: String, size: Double, style: TextStyle = .normal) -> Double {
        guard let table = advances[style] ?? advances[.normal] else { return Self.estimate(text) * size }
        let missing = fallback[style] ?? 0.55
        var ems = 0.0
        for scalar in text.unicodeScalars { ems += table[scalar.value].map(Double.init) ?? missing }
        return ems * size
    }

    static func estimate(_ text: String) -> Double {
        var ems = 0.0
        for character in text {
            switch character {
            case "m", "w", "M", "W": ems += 0.8
            case "i", "l", "j", "t", "f", "I", ".", ",", ";", ":", "'", "!", "‿", " ": ems += 0.3
            case _ where character.isUppercase: ems += 0.68
            default: ems += 0.52
            }
        }
        return ems
    }

    /// `text` in lines no wider than `width` (broken at spaces; a word
    /// longer than the width stands alone). Empty text: no lines.
    public func wrap(_ text: String, size: Double, width: Double, style: TextStyle = .normal) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if !line.isEmpty && self.width(candidate, size: size, style: style) > width {
                lines.append(line)
                line = String(word)
            } else {
                line = candidate
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
