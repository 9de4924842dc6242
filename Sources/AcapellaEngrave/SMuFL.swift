public import Foundation

/// A point in staff spaces: x to the right, y down (the page's direction;
/// SMuFL's y up is flipped when glyph metrics are read).
public struct Point: Hashable, Sendable {
    public var x: Double
    public var y: Double

    public init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }
}

/// A box in staff spaces, y down.
public struct Box: Hashable, Sendable {
    public var minX: Double
    public var minY: Double
    public var maxX: Double
    public var maxY: Double

    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    public var width: Double { maxX - minX }
    public var height: Double { maxY - minY }

    /// The box moved by `x`, `y`.
    public func offset(_ x: Double, _ y: Double) -> Box { Box(minX: minX + x, minY: minY + y, maxX: maxX + x, maxY: maxY + y) }

    /// Whether the two boxes share area (touching edges do not count).
    public func overlaps(_ other: Box, by tolerance: Double = 0.01) -> Bool {
        minX + tolerance < other.maxX && other.minX + tolerance < maxX && minY + tolerance < other.maxY && other.minY + tolerance < maxY
    }
}

/// A SMuFL font's metadata (Standard Music Font Layout): each glyph's code
/// point, bounding box and anchors, and the font's engraving defaults (line
/// thicknesses), all in staff spaces. Read from the font's
/// `<font>_metadata.json` and SMuFL's `glyphnames.json`.
public struct SMuFLFont: Sendable {
    /// One glyph's metrics.
    public struct Glyph: Hashable, Sendable {
        public var name: String
        /// The code point (SMuFL's Private Use Area).
        public var codepoint: Unicode.Scalar
        /// Bounding box relative to the glyph's origin, y down.
        public var box: Box
        /// Named anchors (`stemUpSE`, `stemDownNW`…), y down.
        public var anchors: [String: Point]
        /// Advance width, when the font gives one.
        public var advance: Double
    }

    /// The font's name, e.g. "Bravura".
    public let name: String
    /// Line thicknesses and spacings from `engravingDefaults`.
    public let defaults: [String: Double]
    private let glyphs: [String: Glyph]

    /// The font from its metadata and glyph names, as bytes (read by the
    /// caller: the engraver does no I/O); `metadataName` and
    /// `glyphNamesName` name them in an error. Throws `EngraveError` naming
    /// the file when either is malformed.
    public init(metadata: Data, metadataName: String, glyphNames: Data, glyphNamesName: String) throws(EngraveError) {
        struct Metadata: Decodable {
            struct Metrics: Decodable {
                var bBoxNE: [Double]
                var bBoxSW: [Double]
            }
            var fontName: String
            var engravingDefaults: [String: JSONNumberOrOther]
            var glyphBBoxes: [String: Metrics]
            var glyphsWithAnchors: [String: [String: [Double]]]
            var glyphAdvanceWidths: [String: Double]
        }
        struct Name: Decodable { var codepoint: String }
        let meta: Metadata
        let names: [String: Name]
        do {
            meta = try JSONDecoder().decode(Metadata.self, from: metadata)
        } catch {
            throw EngraveError("\(metadataName): not a SMuFL font metadata file (\(error.localizedDescription))")
        }
        do {
            names = try JSONDecoder().decode([String: Name].self, from: glyphNames)
        } catch {
            throw EngraveError("\(glyphNamesName): not SMuFL's glyphnames.json (\(error.localizedDescription))")
        }
        name = meta.fontName
        defaults = meta.engravingDefaults.compactMapValues(\.number)
        var glyphs: [String: Glyph] = [:]
        for (glyphName, metrics) in meta.glyphBBoxes {
            guard let code = names[glyphName]?.codepoint, code.hasPrefix("U+"), let value = UInt32(code.dropFirst(2), radix: 16),
                  let scalar = Unicode.Scalar(value), metrics.bBoxNE.count == 2, metrics.bBoxSW.count == 2 else { continue }
            let box = Box(minX: metrics.bBoxSW[0], minY: -metrics.bBoxNE[1], maxX: metrics.bBoxNE[0], maxY: -metrics.bBoxSW[1])
            var anchors: [String: Point] = [:]
            for (anchor, point) in meta.glyphsWithAnchors[glyphName] ?? [:] where point.count == 2 { anchors[anchor] = Point(point[0], -point[1]) }
            glyphs[glyphName] = Glyph(name: glyphName, codepoint: scalar, box: box, anchors: anchors,
                                      advance: meta.glyphAdvanceWidths[glyphName] ?? box.maxX)
        }
        self.glyphs = glyphs
    }

    /// A glyph by its SMuFL name. The engraver asks only for glyphs every
    /// SMuFL font has; a font without one is a broken font.
    public func glyph(_ name: String) -> Glyph {
        guard let glyph = glyphs[name] else { preconditionFailure("the SMuFL font has no glyph '\(name)'") }
        return glyph
    }

    /// Whether the font has a glyph.
    public func has(_ name: String) -> Bool { glyphs[name] != nil }

    /// An engraving default (staff spaces), or `fallback`.
    public func value(_ key: String, _ fallback: Double) -> Double { defaults[key] ?? fallback }
}

/// `engravingDefaults` mixes numbers and a list of font names.
struct JSONNumberOrOther: Decodable {
    var number: Double?

    init(from decoder: any Decoder) throws {
        number = try? decoder.singleValueContainer().decode(Double.self)
    }
}

/// An engraving problem, said in one line.
public struct EngraveError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) { self.description = description }
}
