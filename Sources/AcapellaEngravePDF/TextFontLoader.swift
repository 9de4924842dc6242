internal import CCairo
public import AcapellaEngrave
import Foundation

/// A text font's files, one a style (regular, italic, bold).
public struct TextFontFiles: Sendable {
    /// The family the SVG names in `@font-face`.
    public var family: String
    public var files: [TextStyle: String]

    public init(family: String, files: [TextStyle: String]) {
        self.family = family
        self.files = files
    }
}

extension TextFont {
    /// Every character's advance in each face, read by FreeType from the
    /// font files (unscaled, in the font's units per em). A file FreeType
    /// cannot read is named.
    public static func load(_ fonts: TextFontFiles) throws(EngraveError) -> TextFont {
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else { throw EngraveError("FreeType could not start") }
        defer { FT_Done_FreeType(library) }
        var advances: [TextStyle: [UInt32: Float]] = [:]
        for (style, file) in fonts.files {
            var face: FT_Face?
            guard FT_New_Face(library, file, 0, &face) == 0, let face else { throw EngraveError("\(file): not a font FreeType can read") }
            defer { FT_Done_Face(face) }
            let unitsPerEm = Float(face.pointee.units_per_EM)
            guard unitsPerEm > 0 else { throw EngraveError("\(file): a font without units per em (a bitmap font?)") }
            var table: [UInt32: Float] = [:]
            table.reserveCapacity(Int(face.pointee.num_glyphs))
            var glyph: FT_UInt = 0
            var code = FT_Get_First_Char(face, &glyph)
            while glyph != 0 {
                // FT_LOAD_NO_SCALE: the advance in font units.
                if FT_Load_Glyph(face, glyph, 1) == 0 {
                    table[UInt32(code)] = Float(face.pointee.glyph.pointee.advance.x) / unitsPerEm
                }
                code = FT_Get_Next_Char(face, code, &glyph)
            }
            guard !table.isEmpty else { throw EngraveError("\(file): a font with no characters") }
            advances[style] = table
        }
        return TextFont(family: fonts.family, advances: advances)
    }
}
