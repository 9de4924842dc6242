/// Articulations written on a note: how it is attacked and released.
public struct Articulations: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let staccato = Articulations(rawValue: 1)
    public static let tenuto = Articulations(rawValue: 2)
    public static let accent = Articulations(rawValue: 4)
    public static let marcato = Articulations(rawValue: 8)

    /// Each with its `.acasong` word (LilyPond's), in print order.
    public static let named: [(Articulations, String)] = [(.staccato, "staccato"), (.tenuto, "tenuto"), (.accent, "accent"), (.marcato, "marcato")]
}

/// A dynamic written at a note: a level or an accent of loudness.
public enum Dynamic: String, Hashable, Sendable, CaseIterable {
    case ppp, pp, p, mp, mf, f, ff, fff, fp, sf, sfz, sffz, sfp, fz, rfz
}

/// A hairpin's end written at a note: a crescendo or diminuendo starts
/// there (ending any running one), or the running one ends there.
public enum HairpinMark: String, Hashable, Sendable {
    case crescendo, diminuendo, end
}

/// A pause for breath after a note.
public enum BreathMark: String, Hashable, Sendable {
    /// A comma above the staff: a breath.
    case breath
    /// Two slashes through the top line: a full stop of the sound.
    case caesura
}

/// What a singer reads on a note besides its pitch, length and words:
/// fermata, articulations, breath, slur ends, dynamic, hairpin ends. None
/// of it changes when the note sounds; the engine plays the notes as timed
/// (a fermata is not held: takes must line up with the song by the sample).
public struct NoteMarks: Hashable, Sendable {
    public var fermata = false
    public var articulations: Articulations = []
    /// A breath mark or caesura after the note.
    public var breath: BreathMark?
    /// A slur starts on this note.
    public var slurStart = false
    /// A slur ends on this note.
    public var slurEnd = false
    public var dynamic: Dynamic?
    public var hairpin: HairpinMark?

    public init() {}

    /// Whether the note carries no mark.
    public var isEmpty: Bool { self == NoteMarks() }
}

/// Text written over the music at a moment: an expression ("Molto
/// tranquillo", "rit.", "Andante") or a rehearsal mark ("A").
public struct ScoreText: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        case words, rehearsal
    }

    /// Where it applies, ticks from song tick 0.
    public var tick: Int
    public var kind: Kind
    public var text: String

    public init(tick: Int, kind: Kind, text: String) {
        self.tick = tick
        self.kind = kind
        self.text = text
    }
}

/// A repeat sign, an ending or a jump as the score writes it, kept in a
/// song that is not written out (`--no-unfold`) so it can be printed. The
/// box plays such a song once through, as written.
public struct BarMark: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// `|:` at the start of the measure.
        case repeatStart
        /// `:|` at the end of the measure, the passage played `times` times.
        case repeatEnd(times: Int)
        /// A volta bracket over `measures` measures from this one.
        case ending(numbers: [Int], measures: Int)
        /// Signs at the start of the measure.
        case segno, coda
        /// Instructions at the end of the measure.
        case toCoda, fine, daCapo, dalSegno
    }

    public var measure: Int
    public var kind: Kind

    public init(measure: Int, kind: Kind) {
        self.measure = measure
        self.kind = kind
    }

    /// The words the `.acasong` `sign@M:` line uses, and the page prints.
    public static let signWords: [(Kind, String)] = [(.segno, "segno"), (.coda, "coda"), (.toCoda, "To Coda"), (.fine, "Fine"), (.daCapo, "D.C."), (.dalSegno, "D.S.")]

    /// Most repeats of one passage and highest ending number.
    public static let maximumTimes = 16

    /// Where a mark stands among a measure's marks (the order the `.acasong`
    /// lines print them in).
    var rank: Int {
        switch kind {
        case .repeatStart: 0
        case .repeatEnd: 1
        case .ending: 2
        case .segno: 3
        case .coda: 4
        case .toCoda: 5
        case .fine: 6
        case .daCapo: 7
        case .dalSegno: 8
        }
    }
}

extension Array where Element == BarMark {
    /// In measure order, each measure's marks in their canonical order.
    public func canonicallyOrdered() -> [BarMark] { sorted { ($0.measure, $0.rank) < ($1.measure, $1.rank) } }
}

/// How a time signature is drawn.
public enum MeterSymbol: String, Hashable, Sendable {
    /// 4/4 as C.
    case common
    /// 2/2 as ¢.
    case cut
}
