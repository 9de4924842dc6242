/// Ticks per quarter note. All musical time in Acapella box is an integer
/// number of ticks at this resolution.
public let ticksPerQuarter = 960

/// Ticks in a whole note (four quarters).
public let ticksPerWhole = 4 * ticksPerQuarter

/// A note letter.
public enum Step: Int, CaseIterable, Hashable, Sendable {
    case c = 0, d, e, f, g, a, b

    /// Semitones above C of the natural note.
    public var semitonesAboveC: Int { [0, 2, 4, 5, 7, 9, 11][rawValue] }

    /// The upper-case letter, e.g. `"F"`.
    public var letter: String { ["C", "D", "E", "F", "G", "A", "B"][rawValue] }

    /// Parses an upper-case letter `A`…`G`.
    public init?(letter: UInt8) {
        switch letter {
        case UInt8(ascii: "C"): self = .c
        case UInt8(ascii: "D"): self = .d
        case UInt8(ascii: "E"): self = .e
        case UInt8(ascii: "F"): self = .f
        case UInt8(ascii: "G"): self = .g
        case UInt8(ascii: "A"): self = .a
        case UInt8(ascii: "B"): self = .b
        default: return nil
        }
    }
}

/// A spelled pitch: step, alteration and octave (scientific pitch notation,
/// C4 = middle C = MIDI 60). Spelling is kept because singers read it.
public struct Pitch: Hashable, Sendable, CustomStringConvertible {
    /// The letter.
    public var step: Step
    /// Semitones of alteration: −2 (𝄫) … +2 (𝄪).
    public var alter: Int
    /// Scientific octave number.
    public var octave: Int

    /// A pitch from its parts; range is checked by validation, not here.
    public init(step: Step, alter: Int = 0, octave: Int) {
        self.step = step
        self.alter = alter
        self.octave = octave
    }

    /// The MIDI note number (may fall outside 0…127 for invalid pitches).
    public var midi: Int { (octave + 1) * 12 + step.semitonesAboveC + alter }

    /// Accidental text as written in `.acasong`: `#`, `##`, `b`, `bb` or empty.
    public var accidentalText: String {
        switch alter {
        case 2: "##"
        case 1: "#"
        case -1: "b"
        case -2: "bb"
        default: ""
        }
    }

    /// The spelled name, e.g. `"F#3"`.
    public var description: String { "\(step.letter)\(accidentalText)\(octave)" }
}

/// A written note value: a power-of-two fraction of a whole note plus dots.
public struct NoteValue: Hashable, Sendable, CustomStringConvertible {
    /// The note-value denominators `.acasong` accepts: whole to thirty-second.
    public static let allowedDenominators = [1, 2, 4, 8, 16, 32]
    /// Most dots accepted; a triple-dotted 32nd is still a whole tick count.
    public static let maximumDots = 3

    /// 1 = whole, 2 = half, 4 = quarter … 32 = thirty-second.
    public var denominator: Int
    /// Augmentation dots, 0…3.
    public var dots: Int

    /// A note value; validity is checked by `isValid`.
    public init(_ denominator: Int, dots: Int = 0) {
        self.denominator = denominator
        self.dots = dots
    }

    /// Whether the value is one the format can write.
    public var isValid: Bool {
        NoteValue.allowedDenominators.contains(denominator) && (0...NoteValue.maximumDots).contains(dots)
    }

    /// Duration in ticks before any tuplet ratio is applied.
    /// Plain and dotted values (up to two dots), longest first.
    static let common: [NoteValue] = [1, 2, 4, 8, 16, 32].flatMap { d in (0...2).map { NoteValue(d, dots: $0) } }
        .filter(\.isValid).sorted { $0.writtenTicks > $1.writtenTicks }

    /// Values that fill `ticks` (a multiple of a 32nd note), longest first;
    /// `preferred` alone when it fits exactly. Short of `ticks` when they
    /// are not a multiple of a 32nd.
    public static func filling(ticks: Int, preferring preferred: NoteValue? = nil) -> [NoteValue] {
        if let preferred, preferred.writtenTicks == ticks { return [preferred] }
        var remaining = ticks
        var pieces: [NoteValue] = []
        while remaining > 0, let value = common.first(where: { $0.writtenTicks <= remaining && (remaining - $0.writtenTicks) % 120 == 0 }) {
            pieces.append(value)
            remaining -= value.writtenTicks
        }
        return pieces
    }

    public var writtenTicks: Int {
        let base = ticksPerWhole / denominator
        // base · (2 − 2^−dots) = base · (2^(dots+1) − 1) / 2^dots, exact for
        // every valid value (the smallest, 120 ticks, is divisible by 8).
        return base * ((1 << (dots + 1)) - 1) / (1 << dots)
    }

    /// The `.acasong` spelling, e.g. `"4."`.
    public var description: String { "\(denominator)" + String(repeating: ".", count: dots) }
}

/// A clef; it tells the display where the part sits, and the engraver how to
/// draw it.
public enum Clef: String, CaseIterable, Hashable, Sendable {
    case treble
    case treble8vb
    case alto
    case bass

    /// The clef a part's range suggests when the score does not name one:
    /// mean MIDI pitch ≥ 60 → treble, ≥ 52 → treble8vb (tenor), else bass.
    public static func inferred(fromMIDIPitches pitches: [Int]) -> Clef {
        guard !pitches.isEmpty else { return .treble }
        let mean = pitches.reduce(0, +) / pitches.count
        if mean >= 60 { return .treble }
        if mean >= 52 { return .treble8vb }
        return .bass
    }
}

/// A time signature such as 3/4 or 6/8.
public struct Meter: Hashable, Sendable, CustomStringConvertible {
    /// Denominators the model accepts (the tick grid divides all of them).
    public static let allowedDenominators = [1, 2, 4, 8, 16, 32, 64]
    /// Upper bound on the numerator.
    public static let maximumNumerator = 64

    /// Beats per measure.
    public var numerator: Int
    /// The beat's note value.
    public var denominator: Int

    /// A meter; validity is checked by `isValid`.
    public init(_ numerator: Int, _ denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Whether numerator and denominator are in range.
    public var isValid: Bool {
        (1...Meter.maximumNumerator).contains(numerator) && Meter.allowedDenominators.contains(denominator)
    }

    /// Ticks in one measure.
    public var measureTicks: Int { numerator * ticksPerWhole / denominator }

    /// A meter whose measure is `ticks` long: in the preferred beat unit
    /// when it can be, else the nearest common one (nil when none can).
    public static func fitting(ticks: Int, preferring denominator: Int) -> Meter? {
        for unit in [denominator, 4, 8, 16, 32, 64, 2, 1] where (ticks * unit) % ticksPerWhole == 0 {
            let meter = Meter(ticks * unit / ticksPerWhole, unit)
            if meter.isValid { return meter }
        }
        return nil
    }

    /// Ticks in one beat (the denominator's note value).
    public var beatTicks: Int { ticksPerWhole / denominator }

    /// A compound meter (6/8, 9/8, 12/8, 6/4…): the numerator a multiple
    /// of 3 above 3, the beat felt as a dotted note of three written beats.
    public var isCompound: Bool { numerator > 3 && numerator % 3 == 0 && denominator >= 4 }

    /// Ticks between metronome clicks: the felt beat, so 6/8 clicks twice
    /// a measure on dotted quarters and 3/4 three times on quarters.
    public var pulseTicks: Int { isCompound ? 3 * beatTicks : beatTicks }

    /// `"3/4"`.
    public var description: String { "\(numerator)/\(denominator)" }
}

/// Major or minor mode of a key signature.
public enum Mode: String, CaseIterable, Hashable, Sendable {
    case major
    case minor
}

/// A key signature: its number of sharps (positive) or flats (negative) and
/// the mode.
public struct Key: Hashable, Sendable, CustomStringConvertible {
    /// −7 (seven flats) … +7 (seven sharps).
    public var fifths: Int
    /// Major or minor.
    public var mode: Mode

    /// A key signature; validity is checked by `isValid`.
    public init(fifths: Int, mode: Mode) {
        self.fifths = fifths
        self.mode = mode
    }

    /// Whether `fifths` is within −7…+7.
    public var isValid: Bool { (-7...7).contains(fifths) }

    static let majorTonics = ["Cb", "Gb", "Db", "Ab", "Eb", "Bb", "F", "C", "G", "D", "A", "E", "B", "F#", "C#"]
    static let minorTonics = ["Ab", "Eb", "Bb", "F", "C", "G", "D", "A", "E", "B", "F#", "C#", "G#", "D#", "A#"]

    /// The tonic's pitch class, 0 (C) … 11 (B).
    public var tonicPitchClass: Int { ((fifths * 7 % 12 + 12) % 12 + (mode == .minor ? 9 : 0)) % 12 }

    /// The tonic's name, e.g. `"Bb"`.
    public var tonicName: String {
        (mode == .major ? Key.majorTonics : Key.minorTonics)[fifths + 7]
    }

    /// Parses `"G major"`, `"F# minor"`, `"Bb"` (major implied).
    public init?(text: String) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count == 1 || words.count == 2 else { return nil }
        let mode: Mode
        if words.count == 2 {
            guard let parsed = Mode(rawValue: String(words[1])) else { return nil }
            mode = parsed
        } else {
            mode = .major
        }
        let table = mode == .major ? Key.majorTonics : Key.minorTonics
        guard let index = table.firstIndex(of: String(words[0])) else { return nil }
        self.init(fifths: index - 7, mode: mode)
    }

    /// `"G major"`.
    public var description: String { "\(tonicName) \(mode.rawValue)" }
}

/// A tempo in quarter notes per minute, held exactly in thousandths.
public struct Tempo: Hashable, Sendable, CustomStringConvertible {
    /// The accepted range, in thousandths of a beat per minute.
    public static let allowedMilliBPM = 1_000...999_999

    /// Quarter notes per minute × 1000.
    public var milliBPM: Int

    /// A tempo from thousandths of a BPM.
    public init(milliBPM: Int) { self.milliBPM = milliBPM }

    /// A whole-number tempo.
    public init(bpm: Int) { self.milliBPM = bpm * 1000 }

    /// Parses a decimal with at most three decimals into thousandths:
    /// `"72.5"` → 72500, `"0.9"` → 900. Whole part up to 999,999.
    public static func thousandths(_ text: String) -> Int? {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count <= 2, !pieces[0].isEmpty, pieces[0].count <= 6, pieces[0].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let whole = Int(pieces[0])
        else { return nil }
        var fraction = 0
        if pieces.count == 2 {
            let digits = pieces[1]
            guard (1...3).contains(digits.count), digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let value = Int(digits) else { return nil }
            fraction = value * [1, 100, 10, 1][digits.count]
        }
        return whole * 1000 + fraction
    }

    /// Whether the tempo is within 1…999.999 BPM.
    public var isValid: Bool { Tempo.allowedMilliBPM.contains(milliBPM) }

    /// Shortest exact decimal: `"80"`, `"72.5"`, `"66.667"`.
    public var description: String {
        let whole = milliBPM / 1000
        var fraction = milliBPM % 1000
        guard fraction != 0 else { return "\(whole)" }
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let text = String(fraction)
        return "\(whole)." + String(repeating: "0", count: digits - text.count) + text
    }
}
