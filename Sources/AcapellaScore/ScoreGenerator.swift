/// A small, fast, seedable generator (SplitMix64, Steele et al. 2014), so
/// property tests and benchmarks are reproducible from a printed seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator for a seed.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random valid scores exercising every feature of the model: meter, key and
/// tempo changes (also mid-measure tempos), pickups, rests, dots, ties across
/// barlines, tuplets, lyrics with hyphenation and melismas, spaced part names,
/// optional clefs and short names, non-ASCII text.
public enum ScoreGenerator {
    /// What to generate.
    public struct Options: Sendable {
        /// Number of parts.
        public var parts: Int
        /// Number of full measures (a pickup comes on top).
        public var measures: Int

        /// Options.
        public init(parts: Int = 4, measures: Int = 16) {
            self.parts = parts
            self.measures = measures
        }
    }

    static let meters = [Meter(4, 4), Meter(3, 4), Meter(6, 8), Meter(2, 2), Meter(5, 4), Meter(7, 8), Meter(2, 4), Meter(12, 16)]
    // Tempos whose sample lengths share small denominators, as real maps do.
    static let tempos = [Tempo(bpm: 60), Tempo(milliBPM: 72_500), Tempo(bpm: 80), Tempo(bpm: 92), Tempo(bpm: 100),
                         Tempo(milliBPM: 108_250), Tempo(bpm: 120), Tempo(bpm: 66)]
    static let partNames = ["Soprano", "Alto", "Tenor", "Bass", "Tenor 2", "Baritone", "Mezzo Soprano", "Bass 2"]
    static let ranges = [60...81, 55...74, 48...69, 40...62]
    static let syllables = ["A", "ma", "zing", "grace,", "how", "sweet", "the", "sound", "Glo", "ri", "a!", "Ky", "ri", "e",
                            "é", "lei", "son.", "Hal", "le", "lu", "jah", "don't", "ev'ry", "Ö", "ß"]
    // Note values whose tick lengths are multiples of a 32nd (120), so a
    // measure can always be filled exactly.
    static let values: [NoteValue] = [1, 2, 4, 8, 16, 32].flatMap { denominator in
        (0...2).map { NoteValue(denominator, dots: $0) }
    }.filter { $0.writtenTicks % 120 == 0 }

    /// A random valid score.
    public static func random<G: RandomNumberGenerator>(using rng: inout G, options: Options = Options()) -> Score {
        var score = Score(meters: [], keys: [], tempos: [])
        score.title = "Study \(Int.random(in: 1...999, using: &rng))" + (Bool.random(using: &rng) ? " — Été à Köln" : "")
        if Bool.random(using: &rng) { score.composer = "Traditional" }
        if Bool.random(using: &rng) { score.arranger = "A. N. Other" }
        if Bool.random(using: &rng) { score.source = "https://example.invalid/score.xml" }
        if Bool.random(using: &rng) { score.license = "public domain" }
        if Bool.random(using: &rng) { score.tags = ["easy", "\(options.parts) voices", "hymn"] }

        // Meter map: changes every few measures.
        var measure = 1
        while measure <= options.measures {
            score.meters.append(MeterChange(measure: measure, meter: meters.randomElement(using: &rng)!))
            measure += Int.random(in: 3...24, using: &rng)
        }
        measure = 1
        while measure <= options.measures {
            let fifths = Int.random(in: -7...7, using: &rng)
            score.keys.append(KeyChange(measure: measure, key: Key(fifths: fifths, mode: Bool.random(using: &rng) ? .major : .minor)))
            measure += Int.random(in: 4...40, using: &rng)
        }
        let firstMeasureTicks = score.meters[0].meter.measureTicks
        if Bool.random(using: &rng) {
            score.pickupTicks = 120 * Int.random(in: 1...(firstMeasureTicks / 120 - 1), using: &rng)
        }
        let meterMap = score.meterMap
        let endTick = meterMap.startTick(ofMeasure: options.measures + 1)

        // Tempo map: at tick 0, then at measure starts or inside measures.
        score.tempos = [TempoChange(tick: 0, tempo: tempos.randomElement(using: &rng)!)]
        measure = Int.random(in: 1...8, using: &rng)
        while measure <= options.measures {
            var tick = meterMap.startTick(ofMeasure: measure)
            if Bool.random(using: &rng) { tick += 120 * Int.random(in: 0..<(meterMap.meter(atMeasure: measure).measureTicks / 120), using: &rng) }
            if tick > score.tempos.last!.tick && tick < endTick {
                score.tempos.append(TempoChange(tick: tick, tempo: tempos.randomElement(using: &rng)!))
            }
            measure += Int.random(in: 1...16, using: &rng)
        }

        for index in 0..<options.parts {
            let baseName = partNames[index % partNames.count]
            var part = Part(name: index < partNames.count ? baseName : "\(baseName) \(index)")
            if Bool.random(using: &rng) { part.clef = Clef.allCases.randomElement(using: &rng) }
            if Int.random(in: 0..<4, using: &rng) == 0 { part.shortName = "P\(index + 1)" }
            part.notes = randomNotes(range: ranges[index % ranges.count], meterMap: meterMap, endTick: endTick, using: &rng)
            score.parts.append(part)
        }

        // Later verses and unfolded measure numbers, drawn from their own
        // generator so the notes above stay what they were for a seed.
        var extra = SplitMix64(seed: rng.next())
        let verses = Int.random(in: 1...3, using: &extra)
        if verses > 1 {
            for part in score.parts.indices {
                for index in score.parts[part].notes.indices where score.parts[part].notes[index].lyric != nil {
                    for verse in 2...verses where Int.random(in: 0..<3, using: &extra) != 0 {
                        score.parts[part].notes[index].setLyric(
                            Lyric(syllables.randomElement(using: &extra)!, continuesWord: Int.random(in: 0..<3, using: &extra) == 0), verse: verse)
                    }
                }
            }
        }
        if Int.random(in: 0..<3, using: &extra) == 0 {
            let count = options.measures + (score.pickupTicks > 0 ? 1 : 0)
            var written: [Int] = []
            while written.count < count {
                let start = Int.random(in: (score.pickupTicks > 0 ? 0 : 1)...max(1, options.measures), using: &extra)
                let length = Int.random(in: 1...8, using: &extra)
                written.append(contentsOf: (start..<(start + length)).prefix(count - written.count))
            }
            score.writtenMeasures = written
        }
        addMarks(to: &score, using: SplitMix64(seed: extra.next()))
        return score
    }

    /// Marks on notes (every kind), texts, symbols, unprinted maps and,
    /// in a song not written out, repeats, endings and signs: from their
    /// own generator, so a seed's notes stay what they were.
    static func addMarks(to score: inout Score, using generator: SplitMix64) {
        var rng = generator
        for part in score.parts.indices {
            for index in score.parts[part].notes.indices where Int.random(in: 0..<4, using: &rng) == 0 {
                var marks = NoteMarks()
                marks.fermata = Bool.random(using: &rng)
                for (articulation, _) in Articulations.named where Int.random(in: 0..<4, using: &rng) == 0 { marks.articulations.insert(articulation) }
                marks.breath = [nil, .breath, .caesura].randomElement(using: &rng)!
                marks.slurStart = Int.random(in: 0..<4, using: &rng) == 0
                marks.slurEnd = Int.random(in: 0..<4, using: &rng) == 0
                marks.dynamic = Int.random(in: 0..<3, using: &rng) == 0 ? Dynamic.allCases.randomElement(using: &rng) : nil
                marks.hairpin = [nil, .crescendo, .diminuendo, .end].randomElement(using: &rng)!
                score.parts[part].notes[index].marks = marks
            }
        }
        for index in score.meters.indices where Int.random(in: 0..<3, using: &rng) == 0 {
            if score.meters[index].meter == Meter(4, 4) { score.meters[index].symbol = .common }
            if score.meters[index].meter == Meter(2, 2) { score.meters[index].symbol = .cut }
            if index > 0 { score.meters[index].printed = Bool.random(using: &rng) }
        }
        for index in score.tempos.indices where Int.random(in: 0..<3, using: &rng) == 0 { score.tempos[index].printed = false }
        if Bool.random(using: &rng) { score.subtitle = "Ein' feste Burg — no. \(Int.random(in: 1...9, using: &rng))" }
        let end = score.endTick
        guard end > 0 else { return }
        var ticks = Set<Int>()
        for _ in 0..<Int.random(in: 0...4, using: &rng) { ticks.insert(Int.random(in: 0..<end, using: &rng) / 120 * 120) }
        score.texts = ticks.sorted().map { tick in
            Bool.random(using: &rng) ? ScoreText(tick: tick, kind: .words, text: ["rit.", "a tempo", "Molto tranquillo", "dolce"].randomElement(using: &rng)!)
                : ScoreText(tick: tick, kind: .rehearsal, text: ["A", "B", "12"].randomElement(using: &rng)!)
        }
        guard score.writtenMeasures.isEmpty, let measures = score.measureNumbers, measures.count > 1 else { return }
        var marks: [BarMark] = []
        for measure in measures where Int.random(in: 0..<4, using: &rng) == 0 {
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: marks.append(BarMark(measure: measure, kind: .repeatStart))
            case 1: marks.append(BarMark(measure: measure, kind: .repeatEnd(times: Int.random(in: 2...4, using: &rng))))
            case 2 where measure < measures.upperBound:
                marks.append(BarMark(measure: measure, kind: .ending(numbers: [1, 2].shuffled(using: &rng).prefix(Int.random(in: 1...2, using: &rng)).sorted(),
                                                                     measures: Int.random(in: 1...(measures.upperBound - measure + 1), using: &rng))))
            default: marks.append(BarMark(measure: measure, kind: BarMark.signWords.randomElement(using: &rng)!.0))
            }
        }
        score.barMarks = marks.canonicallyOrdered()
    }

    static func randomPitch<G: RandomNumberGenerator>(in range: ClosedRange<Int>, using rng: inout G) -> Pitch {
        while true {
            let pitch = Pitch(step: Step.allCases.randomElement(using: &rng)!,
                              alter: [0, 0, 0, 1, -1, 2, -2].randomElement(using: &rng)!,
                              octave: Int.random(in: 2...6, using: &rng))
            if range.contains(pitch.midi) { return pitch }
        }
    }

    static func randomNotes<G: RandomNumberGenerator>(
        range: ClosedRange<Int>, meterMap: MeterMap, endTick: Int, using rng: inout G
    ) -> [NoteEvent] {
        var notes: [NoteEvent] = []
        var tick = 0
        var tupletID = 1
        func add(_ value: NoteValue, duration: Int, tuplet: Tuplet?, rng: inout G) {
            let tiedFromPrevious = notes.last?.tieToNext ?? false
            let pitch: Pitch? = tiedFromPrevious
                ? notes.last!.pitch
                : (Int.random(in: 0..<7, using: &rng) == 0 ? nil : randomPitch(in: range, using: &rng))
            var note = NoteEvent(startTick: tick, durationTicks: duration, value: value, pitch: pitch, tuplet: tuplet)
            if pitch != nil && !tiedFromPrevious && Int.random(in: 0..<4, using: &rng) != 0 {
                note.lyric = Lyric(syllables.randomElement(using: &rng)!, continuesWord: Int.random(in: 0..<3, using: &rng) == 0)
            }
            note.tieToNext = pitch != nil && Int.random(in: 0..<6, using: &rng) == 0
            notes.append(note)
            tick += duration
        }
        while tick < endTick {
            let barline = meterMap.startTick(ofMeasure: meterMap.measure(containing: tick) + 1)
            let room = min(barline, endTick) - tick
            // Sometimes a tuplet group that fits.
            if room >= 960 && Int.random(in: 0..<8, using: &rng) == 0 {
                let (actual, normal, value) = [(3, 2, NoteValue(8)), (5, 4, NoteValue(16)), (7, 4, NoteValue(16)), (3, 2, NoteValue(4))]
                    .randomElement(using: &rng)!
                let written = Array(repeating: value.writtenTicks, count: actual)
                if let durations = TupletLayout.durations(writtenTicks: written, actual: actual, normal: normal),
                   durations.reduce(0, +) <= room
                {
                    for duration in durations {
                        add(value, duration: duration, tuplet: Tuplet(id: tupletID, actual: actual, normal: normal), rng: &rng)
                    }
                    tupletID += 1
                    continue
                }
            }
            let fitting = values.filter { $0.writtenTicks <= room }
            let value = fitting.randomElement(using: &rng)!
            add(value, duration: value.writtenTicks, tuplet: nil, rng: &rng)
        }
        if notes.last?.tieToNext == true { notes[notes.count - 1].tieToNext = false }
        return notes
    }
}
