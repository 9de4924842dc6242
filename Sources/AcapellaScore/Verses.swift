/// Which words a rehearsal sings: one verse, or every verse in turn.
public enum VerseChoice: Hashable, Sendable, CustomStringConvertible {
    /// Verse N (1-based).
    case verse(Int)
    /// The song once per verse, in order.
    case all

    /// "2" → verse 2, "all" → all; nil for anything else.
    public init?(_ text: String) {
        if text == "all" {
            self = .all
        } else if let number = Int(text), (1...Score.maximumVerses).contains(number) {
            self = .verse(number)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .verse(let number): "verse \(number)"
        case .all: "all verses"
        }
    }
}

extension Score {
    /// The song with verse `verse`'s words as its only words (verse 1 of
    /// the result); notes, timing and everything else unchanged. A measure
    /// where a part has words in the first verse only (a refrain, printed
    /// once) sings them in every verse.
    public func singing(verse: Int) -> Score {
        var score = self
        let map = meterMap
        for part in score.parts.indices {
            // Measures where this part has words beyond the first verse.
            let versed = Set(parts[part].notes.filter { $0.verseCount > 1 }.map { map.measure(containing: $0.startTick) })
            for index in score.parts[part].notes.indices {
                let note = parts[part].notes[index]
                guard note.hasLyric else { continue }
                for later in stride(from: note.verseCount, through: 2, by: -1) { score.parts[part].notes[index].setLyric(nil, verse: later) }
                let refrain = !versed.contains(map.measure(containing: note.startTick))
                score.parts[part].notes[index].lyric = note.lyric(verse: verse) ?? (refrain ? note.lyric : nil)
            }
        }
        return score
    }

    /// The song sung once per verse, in order (a strophic hymn as a choir
    /// sings it): pass k sings verse k, from the song's first measure to the
    /// barline after its last. A pickup is sung again before each later
    /// verse, as a measure of its own length; meter, key and tempo are
    /// restated where a pass begins. `writtenMeasures` says which written
    /// measure each one was, so "measure 12" still finds the music.
    /// Nil when the song has fewer than two verses or would grow past the
    /// limits (`Score.maximumWrittenMeasures` measures, a million notes
    /// a part).
    public func allVerses() -> Score? {
        let verses = verseCount
        guard verses >= 2, let numbers = measureNumbers else { return nil }
        let map = meterMap
        let passMeasures = numbers.count
        let passTicks = map.startTick(ofMeasure: numbers.upperBound + 1)
        guard passMeasures * verses <= Score.maximumWrittenMeasures,
              parts.allSatisfy({ $0.notes.count * verses <= 1_000_000 }) else { return nil }

        var score = singing(verse: 1)
        score.writtenMeasures = []
        for pass in 0..<verses {
            score.writtenMeasures += numbers.map { writtenMeasure($0) }
            guard pass > 0 else { continue }
            // Measure m of the song is measure m + pass × passMeasures of
            // pass `pass` (the pickup, 0, becomes a measure of its own).
            let shift = pass * passMeasures
            let ticks = pass * passTicks
            if pickupTicks > 0, let pickup = Meter.fitting(ticks: pickupTicks, preferring: meters[0].meter.denominator) {
                score.meters.append(MeterChange(measure: shift, meter: pickup))
            }
            score.meters.append(MeterChange(measure: 1 + shift, meter: meters[0].meter))
            score.meters += meters.dropFirst().map { MeterChange(measure: $0.measure + shift, meter: $0.meter) }
            score.keys.append(KeyChange(measure: numbers.lowerBound + shift, key: keys[0].key))
            score.keys += keys.dropFirst().map { KeyChange(measure: $0.measure + shift, key: $0.key) }
            score.tempos.append(TempoChange(tick: ticks, tempo: tempos[0].tempo))
            score.tempos += tempos.dropFirst().map { TempoChange(tick: $0.tick + ticks, tempo: $0.tempo) }
            let sung = singing(verse: pass + 1)
            // Every part fills its measures to the same last barline
            // (validation), so each pass follows the last without a gap.
            for part in parts.indices {
                let groups = score.parts[part].notes.last(where: { $0.tuplet != nil })?.tuplet?.id ?? 0
                score.parts[part].notes += sung.parts[part].notes.map { note in
                    var note = note
                    note.startTick += ticks
                    if let tuplet = note.tuplet { note.tuplet?.id = tuplet.id + groups }
                    return note
                }
            }
        }
        score.meters = Self.withoutRestatements(score.meters, \.meter)
        score.keys = Self.withoutRestatements(score.keys, \.key)
        score.tempos = Self.withoutRestatements(score.tempos, \.tempo)
        return score
    }

    /// A change list without entries that repeat what is already in force.
    static func withoutRestatements<Change, Value: Equatable>(_ changes: [Change], _ value: KeyPath<Change, Value>) -> [Change] {
        var kept: [Change] = []
        for change in changes where kept.last.map({ $0[keyPath: value] != change[keyPath: value] }) ?? true { kept.append(change) }
        return kept
    }
}
