/// A tuplet group membership: notes sharing an `id` within a part form one
/// group in which `actual` written notes take the time of `normal`.
public struct Tuplet: Hashable, Sendable {
    /// Group number, 1-based and increasing through the part.
    public var id: Int
    /// Notes written (the 3 in a triplet).
    public var actual: Int
    /// Notes of time they take (the 2 in a triplet).
    public var normal: Int

    /// A tuplet membership.
    public init(id: Int, actual: Int, normal: Int) {
        self.id = id
        self.actual = actual
        self.normal = normal
    }

    /// Most notes on either side of a ratio the format accepts.
    public static let maximumRatioTerm = 32
}

/// One syllable of lyric text attached to a sung note.
public struct Lyric: Hashable, Sendable {
    /// The syllable as sung, without a hyphen; punctuation kept.
    public var text: String
    /// True when the word goes on in the next syllable (written `A-`).
    public var continuesWord: Bool

    /// A syllable.
    public init(_ text: String, continuesWord: Bool = false) {
        self.text = text
        self.continuesWord = continuesWord
    }
}

/// Where a syllable sits in its word, as MusicXML's `<syllabic>` names it.
public enum Syllabic: String, Hashable, Sendable {
    case single, begin, middle, end

    /// The syllabic of a syllable given whether the previous syllable in the
    /// part continued its word.
    public init(lyric: Lyric, previousContinues: Bool) {
        switch (previousContinues, lyric.continuesWord) {
        case (false, false): self = .single
        case (false, true): self = .begin
        case (true, true): self = .middle
        case (true, false): self = .end
        }
    }
}

/// A note or rest in a part, positioned in ticks.
///
/// Notes of a part are contiguous: each starts where the previous ends, the
/// first at tick 0 (rests are explicit events).
public struct NoteEvent: Hashable, Sendable {
    /// Onset, ticks from song tick 0 (the start of the pickup, if any).
    public var startTick: Int
    /// Sounding length in ticks (after any tuplet ratio).
    public var durationTicks: Int
    /// The written value (before any tuplet ratio).
    public var value: NoteValue
    /// The pitch, or `nil` for a rest.
    public var pitch: Pitch?
    /// The note is held into the next note, which must have the same pitch.
    public var tieToNext: Bool
    /// Tuplet group membership, if any.
    public var tuplet: Tuplet?
    /// The syllable of the first verse sung on this note, if any.
    public var lyric: Lyric?
    /// Syllables of verses 2, 3…, in order; no trailing `nil`s, so a song
    /// with one verse keeps this empty (see `lyric(verse:)`).
    public private(set) var laterVerses: [Lyric?]
    /// Fermata, articulations, breath, slurs, dynamics written on the note.
    public var marks = NoteMarks()

    /// A note event.
    public init(
        startTick: Int, durationTicks: Int, value: NoteValue, pitch: Pitch?,
        tieToNext: Bool = false, tuplet: Tuplet? = nil, lyric: Lyric? = nil
    ) {
        self.startTick = startTick
        self.durationTicks = durationTicks
        self.value = value
        self.pitch = pitch
        self.tieToNext = tieToNext
        self.tuplet = tuplet
        self.lyric = lyric
        self.laterVerses = []
    }

    /// The syllable of verse `verse` (1-based), if any.
    public func lyric(verse: Int) -> Lyric? {
        if verse == 1 { return lyric }
        let index = verse - 2
        return index >= 0 && index < laterVerses.count ? laterVerses[index] : nil
    }

    /// Sets (or clears) the syllable of verse `verse` (1-based, at most
    /// `Score.maximumVerses`).
    public mutating func setLyric(_ syllable: Lyric?, verse: Int) {
        precondition(verse >= 1 && verse <= Score.maximumVerses, "verse \(verse) out of range")
        if verse == 1 {
            lyric = syllable
            return
        }
        let index = verse - 2
        if let syllable {
            while laterVerses.count <= index { laterVerses.append(nil) }
            laterVerses[index] = syllable
        } else if index < laterVerses.count {
            laterVerses[index] = nil
            while laterVerses.last == .some(nil) { laterVerses.removeLast() }
        }
    }

    /// Verses this note has a place for: 1 plus its later verses.
    public var verseCount: Int { 1 + laterVerses.count }

    /// Whether the note carries a syllable in any verse.
    public var hasLyric: Bool { lyric != nil || laterVerses.contains { $0 != nil } }

    /// Whether this is a rest.
    public var isRest: Bool { pitch == nil }

    /// End tick (exclusive).
    public var endTick: Int { startTick + durationTicks }
}

/// One voice part: Soprano, Alto, "Tenor 2"…
public struct Part: Hashable, Sendable {
    /// The name; may contain spaces. Unique within a score.
    public var name: String
    /// A short name for narrow displays, when the score gives one.
    public var shortName: String?
    /// The clef the score names, if any; see `effectiveClef`.
    public var clef: Clef?
    /// Notes and rests in order.
    public var notes: [NoteEvent]

    /// A part.
    public init(name: String, shortName: String? = nil, clef: Clef? = nil, notes: [NoteEvent] = []) {
        self.name = name
        self.shortName = shortName
        self.clef = clef
        self.notes = notes
    }

    /// Whether note `index` is an attack: a sounding note that does not
    /// continue a tie from the same pitch. Attacks are what take syllables,
    /// re-trigger a guide tone and count as onsets.
    public func isAttack(at index: Int) -> Bool {
        guard let pitch = notes[index].pitch else { return false }
        guard index > 0, notes[index - 1].tieToNext else { return true }
        return notes[index - 1].pitch?.midi != pitch.midi
    }

    /// Each note's syllabic (begin/middle/end/single) in a verse, or `nil`
    /// where the note has no syllable; a word runs on across melismas.
    public func syllabics(verse: Int = 1) -> [Syllabic?] {
        var previousContinues = false
        return notes.map { note in
            guard let lyric = note.lyric(verse: verse) else { return nil }
            defer { previousContinues = lyric.continuesWord }
            return Syllabic(lyric: lyric, previousContinues: previousContinues)
        }
    }

    /// Verses with at least one syllable in this part: 0 when it has no words.
    public var verseCount: Int {
        var count = 0
        for note in notes {
            if note.lyric != nil { count = max(count, 1) }
            if let last = note.laterVerses.lastIndex(where: { $0 != nil }) { count = max(count, last + 2) }
        }
        return count
    }

    /// The named clef, or the one the part's range suggests.
    public var effectiveClef: Clef {
        clef ?? Clef.inferred(fromMIDIPitches: notes.compactMap { $0.pitch?.midi })
    }

    /// The short name, or the initials of the name (`"Tenor 2"` → `"T2"`).
    public var displayShortName: String {
        if let shortName { return shortName }
        return String(name.split(separator: " ").compactMap(\.first))
    }
}

/// A meter that takes effect at the start of a measure.
public struct MeterChange: Hashable, Sendable {
    /// First measure (1-based) the meter applies to.
    public var measure: Int
    /// The meter.
    public var meter: Meter
    /// Drawn as C or ¢ rather than figures.
    public var symbol: MeterSymbol?
    /// Whether the score prints it: a measure the score leaves short (a
    /// repeat's half measure, the last measure after a pickup) changes the
    /// meter without a written time signature.
    public var printed: Bool

    /// A meter change.
    public init(measure: Int, meter: Meter, symbol: MeterSymbol? = nil, printed: Bool = true) {
        self.measure = measure
        self.meter = meter
        self.symbol = symbol
        self.printed = printed
    }
}

/// A key signature that takes effect at the start of a measure.
public struct KeyChange: Hashable, Sendable {
    /// First measure (1-based) the key applies to.
    public var measure: Int
    /// The key.
    public var key: Key

    /// A key change.
    public init(measure: Int, key: Key) {
        self.measure = measure
        self.key = key
    }
}

/// A tempo that takes effect at a tick.
public struct TempoChange: Hashable, Sendable {
    /// Tick where the tempo starts.
    public var tick: Int
    /// The tempo.
    public var tempo: Tempo
    /// Whether the score prints it as a metronome mark: a tempo the score
    /// only plays (MusicXML's `<sound tempo>`) or one assumed for a score
    /// that gives none is not printed.
    public var printed: Bool

    /// A tempo change.
    public init(tick: Int, tempo: Tempo, printed: Bool = true) {
        self.tick = tick
        self.tempo = tempo
        self.printed = printed
    }
}

/// A whole arrangement: metadata, the maps of meter, key and tempo, and the
/// parts. Song tick 0 is the first written note (the pickup's start).
public struct Score: Hashable, Sendable {
    /// A note's id wherever a note is named across programs (the engraved
    /// score's groups, the take analysis, the blend): `n<part>-<note>`,
    /// the part's and the note's indexes from 0.
    public static func noteID(part: Int, note: Int) -> String { "n\(part)-\(note)" }

    /// Title.
    public var title: String?
    /// A movement's or work's second title, printed under the title.
    public var subtitle: String?
    /// Composer.
    public var composer: String?
    /// Arranger.
    public var arranger: String?
    /// Where the music came from (edition, file, URL).
    public var source: String?
    /// License or copyright status.
    public var license: String?
    /// Free tags: difficulty, number of voices, style.
    public var tags: [String]
    /// Meter map, by measure; the first entry is at measure 1.
    public var meters: [MeterChange]
    /// Key map, by measure; the first entry is at measure 1.
    public var keys: [KeyChange]
    /// Tempo map, by tick; the first entry is at tick 0.
    public var tempos: [TempoChange]
    /// Length of the pickup (measure 0) in ticks; 0 when there is none.
    public var pickupTicks: Int
    /// The parts, in score order.
    public var parts: [Part]
    /// For a song whose repeats were written out (unfolded), the written
    /// measure each measure was, from the song's first measure (the
    /// pickup, 0, when there is one); empty when the song is as written.
    public var writtenMeasures: [Int]
    /// Expression text and rehearsal marks, in tick order.
    public var texts: [ScoreText] = []
    /// Repeat signs, endings and jumps as written, in measure order (a
    /// song as written; an unfolded song has sung them out).
    public var barMarks: [BarMark] = []

    /// Most verses a song may have.
    public static let maximumVerses = 99
    /// Most measures an unfolded song may list in `writtenMeasures`.
    public static let maximumWrittenMeasures = 100_000

    /// A score; defaults are 4/4, C major, 120 BPM, no pickup.
    public init(
        title: String? = nil, composer: String? = nil, arranger: String? = nil,
        source: String? = nil, license: String? = nil, tags: [String] = [],
        meters: [MeterChange] = [MeterChange(measure: 1, meter: Meter(4, 4))],
        keys: [KeyChange] = [KeyChange(measure: 1, key: Key(fifths: 0, mode: .major))],
        tempos: [TempoChange] = [TempoChange(tick: 0, tempo: Tempo(bpm: 120))],
        pickupTicks: Int = 0, parts: [Part] = [], writtenMeasures: [Int] = []
    ) {
        self.title = title
        self.composer = composer
        self.arranger = arranger
        self.source = source
        self.license = license
        self.tags = tags
        self.meters = meters
        self.keys = keys
        self.tempos = tempos
        self.pickupTicks = pickupTicks
        self.parts = parts
        self.writtenMeasures = writtenMeasures
    }

    /// Verses of the song: the most any part has (0 without words).
    public var verseCount: Int { parts.map(\.verseCount).max() ?? 0 }

    /// The measures of the song, from the first (0 with a pickup) to the last.
    public var measureNumbers: ClosedRange<Int>? {
        guard endTick > 0 else { return nil }
        let map = meterMap
        return map.measure(containing: 0)...map.measure(containing: endTick - 1)
    }

    /// The written measure a measure of the song was (itself unless the song
    /// is unfolded).
    public func writtenMeasure(_ measure: Int) -> Int {
        guard !writtenMeasures.isEmpty, let first = measureNumbers?.lowerBound else { return measure }
        let index = measure - first
        return index >= 0 && index < writtenMeasures.count ? writtenMeasures[index] : measure
    }

    /// The meter map as a lookup structure.
    public var meterMap: MeterMap { MeterMap(meters: meters, pickupTicks: pickupTicks) }

    /// End of the longest part, in ticks.
    public var endTick: Int { parts.map { $0.notes.last?.endTick ?? 0 }.max() ?? 0 }

    /// The key in force in a measure.
    public func key(atMeasure measure: Int) -> Key { keys.key(atMeasure: measure) }
}

extension Array where Element == KeyChange {
    /// The key in force in a measure (C major before the first change).
    public func key(atMeasure measure: Int) -> Key {
        last(where: { $0.measure <= Swift.max(measure, 1) })?.key ?? Key(fifths: 0, mode: .major)
    }
}
