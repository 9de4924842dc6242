/// The largest song the box takes: limits no real arrangement meets (Tallis'
/// *Spem in alium* has 40 parts; a long choral movement a few hundred
/// measures, a few thousand notes a part), set so that a hostile or broken
/// file is refused in one line before it costs the box its memory or its
/// audio thread its period. Every reader checks them as it goes (a file too
/// large before it is read at all; parts, measures and notes as they are
/// met), and the engine never sees a song beyond them.
public enum ScoreLimits {
    /// Parts (voices, staves) in one song.
    public static let maximumParts = 64
    /// Measures in one song (repeats written out included).
    public static let maximumMeasures = 10_000
    /// Notes and rests in one song, every part together.
    public static let maximumNotes = 200_000
    /// Bytes of a song file (`.acasong`, uncompressed MusicXML, or what a
    /// `.mxl` inflates to).
    public static let maximumFileBytes = 16 << 20
    /// Bytes of a compressed `.mxl`.
    public static let maximumCompressedBytes = 4 << 20
    /// Characters of a title, a name, a tag, a syllable.
    public static let maximumTextScalars = 1_000

    /// Why `score` is beyond the limits, if it is.
    public static func problem(parts: Int, measures: Int, notes: Int) -> String? {
        if parts > maximumParts { return "\(parts) parts; the box takes \(maximumParts) at most" }
        if measures > maximumMeasures { return "\(measures) measures; the box takes \(maximumMeasures) at most" }
        if notes > maximumNotes { return "\(notes) notes; the box takes \(maximumNotes) at most" }
        return nil
    }

    /// Says a file of `bytes` is too large, if it is.
    public static func fileProblem(bytes: Int) -> String? {
        bytes > maximumFileBytes ? "\(bytes >> 20) MB; a song file is \(maximumFileBytes >> 20) MB at most" : nil
    }
}

/// Text from outside (a file name, a title, a client's words) on its way
/// to a terminal, a log or a page: control characters made visible.
public enum SafeText {
    /// C0 and C1 controls, DEL, and the bidirectional controls that reorder
    /// text on a screen (U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C):
    /// never part of a title, a name or a syllable.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
            || value == 0x200E || value == 0x200F || value == 0x061C
    }

    /// `text` with each control character shown as a `\u{…}` escape, so an
    /// escape sequence or a direction override prints as what it is.
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
