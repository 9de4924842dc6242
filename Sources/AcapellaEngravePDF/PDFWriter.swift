internal import CCairo
public import AcapellaEngrave
import Foundation

/// The engraving's pages as a PDF through cairo, ready to print: the music
/// font loaded with FreeType from its file (so the shipped Bravura is the
/// one used, whatever fonts the system has), text in the shipped text
/// font the engraver measured it in.
public enum PDFWriter {
    /// Writes `pages` to `path`. Throws `EngraveError` naming the file.
    public static func write(_ pages: [EngravedPage], staffSpaceMM: Double, fontFile: String, textFonts: TextFontFiles? = nil,
                             to path: String) throws(EngraveError) {
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else { throw EngraveError("FreeType could not start") }
        defer { FT_Done_FreeType(library) }
        var faces: [FT_Face] = []
        defer { for face in faces { FT_Done_Face(face) } }
        var cairoFaces: [OpaquePointer] = []
        defer { for face in cairoFaces { cairo_font_face_destroy(face) } }
        func open(_ file: String) throws(EngraveError) -> (FT_Face, OpaquePointer) {
            var face: FT_Face?
            guard FT_New_Face(library, file, 0, &face) == 0, let face else { throw EngraveError("\(file): not a font FreeType can read") }
            faces.append(face)
            guard let cairoFace = cairo_ft_font_face_create_for_ft_face(face, 0) else { throw EngraveError("cairo could not use \(file)") }
            cairoFaces.append(cairoFace)
            return (face, cairoFace)
        }
        let (face, musicFont) = try open(fontFile)
        // Text in the faces it was measured in (the system's serif without them).
        var textFaces: [TextStyle: OpaquePointer] = [:]
        for (style, file) in textFonts?.files ?? [:] { textFaces[style] = try open(file).1 }

        // Points per staff space.
        let scale = staffSpaceMM * 72 / 25.4
        let first = pages.first ?? EngravedPage(width: 120, height: 170, items: [])
        guard let surface = cairo_pdf_surface_create(path, first.width * scale, first.height * scale) else { throw EngraveError("\(path): cannot create a PDF") }
        defer { cairo_surface_destroy(surface) }
        guard let context = cairo_create(surface) else { throw EngraveError("\(path): cannot draw") }
        defer { cairo_destroy(context) }
        for page in pages {
            cairo_pdf_surface_set_size(surface, page.width * scale, page.height * scale)
            cairo_save(context)
            cairo_scale(context, scale, scale)
            draw(page.items, on: context, musicFont: musicFont, face: face, textFaces: textFaces)
            cairo_restore(context)
            cairo_show_page(context)
        }
        cairo_surface_finish(surface)
        let status = cairo_surface_status(surface)
        if status != CAIRO_STATUS_SUCCESS {
            throw EngraveError("\(path): \(String(cString: cairo_status_to_string(status)))")
        }
    }

    static func draw(_ items: [DisplayItem], on context: OpaquePointer, musicFont: OpaquePointer, face: FT_Face, textFaces: [TextStyle: OpaquePointer]) {
        var highlight = [false]
        func colour() {
            if highlight.last == true { cairo_set_source_rgb(context, 0.10, 0.37, 0.71) } else { cairo_set_source_rgb(context, 0, 0, 0) }
        }
        for item in items {
            switch item {
            case .glyph(_, let codepoint, let at):
                colour()
                cairo_set_font_face(context, musicFont)
                // SMuFL: one em is one staff height (four staff spaces).
                cairo_set_font_size(context, 4)
                var glyph = cairo_glyph_t(index: UInt(FT_Get_Char_Index(face, FT_ULong(codepoint.value))), x: at.x, y: at.y)
                cairo_show_glyphs(context, &glyph, 1)
            case .line(let from, let to, let thickness):
                colour()
                cairo_set_line_width(context, thickness)
                cairo_set_line_cap(context, CAIRO_LINE_CAP_BUTT)
                cairo_move_to(context, from.x, from.y)
                cairo_line_to(context, to.x, to.y)
                cairo_stroke(context)
            case .polygon(let points):
                guard let first = points.first else { continue }
                colour()
                cairo_move_to(context, first.x, first.y)
                for point in points.dropFirst() { cairo_line_to(context, point.x, point.y) }
                cairo_close_path(context)
                cairo_fill(context)
            case .text(let text, let at, let size, let anchor, let style):
                colour()
                if let textFace = textFaces[style] ?? textFaces[.normal] {
                    cairo_set_font_face(context, textFace)
                } else {
                    cairo_select_font_face(context, "serif", style == .italic ? CAIRO_FONT_SLANT_ITALIC : CAIRO_FONT_SLANT_NORMAL,
                                           style == .bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
                }
                cairo_set_font_size(context, size)
                var extents = cairo_text_extents_t()
                cairo_text_extents(context, text, &extents)
                let x = anchor == .start ? at.x : anchor == .middle ? at.x - extents.x_advance / 2 : at.x - extents.x_advance
                cairo_move_to(context, x, at.y)
                cairo_show_text(context, text)
            case .beginGroup(_, let className, _):
                highlight.append(className == "highlight" || (className != "staff" && highlight.last == true))
            case .endGroup:
                if highlight.count > 1 { highlight.removeLast() }
            }
        }
    }
}

extension SMuFLFont {
    /// The font's metadata and glyph names read from their files (the
    /// engraver itself does no I/O); a file that cannot be read is named.
    public static func load(metadata: String, glyphNames: String) throws(EngraveError) -> SMuFLFont {
        func read(_ path: String) throws(EngraveError) -> Data {
            guard let data = FileManager.default.contents(atPath: path) else { throw EngraveError("\(path): cannot read the file") }
            return data
        }
        return try SMuFLFont(metadata: read(metadata), metadataName: metadata, glyphNames: read(glyphNames), glyphNamesName: glyphNames)
    }
}
