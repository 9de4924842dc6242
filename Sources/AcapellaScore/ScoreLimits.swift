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

    /// Why `name` is not a name people can read and tell apart (nil: it
    /// is), as the end of a sentence ("a take's name " + it): empty, or
    /// spaces around it; longer than `most` characters; a character that
    /// does not show (a control, a direction override, a zero-width space,
    /// a byte-order mark, a soft hyphen) — the joiners, variation selectors
    /// and tags that belong to the letter or emoji before them are part of
    /// it (ZWNJ in Persian and Hindi, ZWJ in emoji and Indic conjuncts, a
    /// keycap's or flag's selectors), but never begin or end a name; more
    /// than eight marks on one letter (Hindi and Vietnamese stack two or
    /// three; a letter under 39 of them is one character on screen and 78
    /// bytes on disk). Spacing vowel signs (Devanagari's ि, ी) are letters'
    /// parts, not marks over them. Titles, project, take and singer names all keep it.
    public static func nameProblem(_ name: String, most: Int) -> String? {
        guard let first = name.first, let last = name.last else { return "is empty" }
        if first.isWhitespace || last.isWhitespace { return "has spaces around it" }
        if name.count > most { return "is \(most) characters at most" }
        if let end = name.unicodeScalars.last, end.value == 0x200C || end.value == 0x200D {
            return "holds a character that does not show (U+\(String(end.value, radix: 16, uppercase: true)))"
        }
        for character in name {
            let scalars = Array(character.unicodeScalars)
            if let hidden = scalars.indices.first(where: { isControl(scalars[$0]) || (isHidden(scalars[$0]) && !($0 > 0 && shapes(scalars[$0], scalars[0]))) }) {
                return "holds a character that does not show (U+\(String(scalars[hidden].value, radix: 16, uppercase: true)))"
            }
            if scalars.filter({ [.nonspacingMark, .enclosingMark].contains($0.properties.generalCategory) }).count > mostMarks {
                return "puts more than \(mostMarks) marks on one letter"
            }
            if scalars.count > mostInOne { return "joins more than \(mostInOne) characters into one" }
        }
        return nil
    }

    /// Marks one letter may carry (Tibetan and Thai stack four at most).
    public static let mostMarks = 8
    /// Code points one character on screen may be made of (a family emoji
    /// with skin tones is 11, a subdivision flag 7, a Hindi conjunct 6).
    public static let mostInOne = 16

    /// Whether the invisible `scalar` may shape a character begun by
    /// `base`: joiners and ideographic variation selectors in the scripts
    /// that use them (never after a Latin letter, where they only hide a
    /// difference), emoji presentation selectors after what has an emoji
    /// form (a keycap's digit too), tag letters after an emoji flag.
    static func shapes(_ scalar: Unicode.Scalar, _ base: Unicode.Scalar) -> Bool {
        let value = scalar.value
        let beyondLatin = base.value > 0x24F
        switch value {
        case 0x200C, 0x200D, 0xFE00...0xFE0D, 0xE0100...0xE01EF: return beyondLatin
        case 0xFE0E, 0xFE0F: return base.properties.isEmoji
        case 0xE0020...0xE007F: return beyondLatin && base.properties.isEmoji
        default: return false
        }
    }

    /// A character that shows nothing itself but shapes the one before it:
    /// the zero-width non-joiner and joiner, variation selectors, and tag
    /// characters (a subdivision flag's letters).
    public static func isJoiner(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value == 0x200C || value == 0x200D || (0xFE00...0xFE0F).contains(value) || (0xE0100...0xE01EF).contains(value) || (0xE0020...0xE007F).contains(value)
    }

    /// A character that takes no room on a screen: a format character
    /// (U+200B–U+200F, U+2060, U+FEFF, U+00AD…), a default-ignorable one,
    /// a private-use or unassigned code point.
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        let category = scalar.properties.generalCategory
        return category == .format || category == .unassigned || category == .privateUse || scalar.properties.isDefaultIgnorableCodePoint
    }

    /// A take's name: `nameProblem` within 60 characters, as a sentence.
    public static let longestTakeName = 60
    public static func takeNameProblem(_ name: String) -> String? {
        nameProblem(name, most: longestTakeName).map { "a take's name \($0)" }
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
