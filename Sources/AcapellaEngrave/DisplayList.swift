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

/// Estimated text widths: the writers set text in a serif face the
/// engraver cannot measure, so it spaces lyrics by a generous average
/// (half an em per character, wider for capitals and wide letters).
enum TextMetrics {
    /// `text` in lines no wider than `width` (broken at spaces; a word
    /// longer than the width stands alone). Empty text: no lines.
    static func wrap(_ text: String, size: Double, width: Double) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if !line.isEmpty && Self.width(candidate, size: size) > width {
                lines.append(line)
                line = String(word)
            } else {
                line = candidate
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    static func width(_ text: String, size: Double) -> Double {
        var ems = 0.0
        for character in text {
            switch character {
            case "m", "w", "M", "W": ems += 0.8
            case "i", "l", "j", "t", "f", "I", ".", ",", ";", ":", "'", "!", "‿", " ": ems += 0.3
            case _ where character.isUppercase: ems += 0.68
            default: ems += 0.52
            }
        }
        return ems * size
    }
}
