public import AcapellaEngine
public import AcapellaScore

extension Mixdown {
    /// The song (and takes) a verse choice mixes: verse N's words, or the
    /// song once per verse with each pass singing its verse (`allVerses`).
    /// Takes were sung over the song once; with every verse each take plays
    /// again in each pass, cut to the pass so a long tail never runs into
    /// the next verse. A song of one verse is mixed once, as it is.
    public static func verses(_ choice: VerseChoice, of score: Score, takes: [PartTakes]?, options: MixdownOptions) throws(MixdownError)
        -> (score: Score, takes: [PartTakes]?, passes: Int)
    {
        let count = score.verseCount
        switch choice {
        case .verse(let number):
            guard number <= max(count, 1) else {
                throw MixdownError(description: count == 0 ? "the song has no words; --verse has nothing to choose"
                                   : "the song has \(count) verse\(count == 1 ? "" : "s"); --verse expects 1–\(count) or all")
            }
            return (score.singing(verse: number), takes, 1)
        case .all:
            guard count >= 2 else { return (score, takes, 1) }
            guard let all = score.allVerses() else {
                throw MixdownError(description: "the song sung \(count) times would be longer than a song may be (\(Score.maximumWrittenMeasures) measures)")
            }
            guard let takes else { return (all, nil, count) }
            let schedule: Schedule
            do {
                schedule = try Schedule(score: all, options: options.scheduleOptions)
            } catch {
                throw MixdownError(description: error.description)
            }
            let starts = (0...count).map { schedule.timeMap.sample(atTick: $0 * score.endTick) }
            let repeated = takes.map { part in
                PartTakes(part.layers.flatMap { layer in
                    (0..<count).compactMap { pass -> TakePlayback? in
                        var copy = layer
                        let (start, end) = (starts[pass], starts[pass + 1])
                        let covered = layer.coverage
                        let lower = max(covered.lowerBound + start, start)
                        let upper = min(covered.upperBound + start, end)
                        guard lower < upper else { return nil }
                        copy.alignmentOffsetSamples -= start
                        copy.range = lower..<upper
                        return copy
                    }
                })
            }
            return (all, repeated, count)
        }
    }

    /// Timed lyrics (LRC) of the mixed song: the words of `part` (the
    /// first part with words when nil), or nil when it has none.
    public static func lyrics(_ score: Score, options: MixdownOptions, part: Int?) throws(MixdownError) -> String? {
        guard let index = part ?? score.parts.firstIndex(where: { $0.notes.contains(where: \.hasLyric) }) else { return nil }
        let schedule: Schedule
        do {
            schedule = try Schedule(score: score, options: options.scheduleOptions)
        } catch {
            throw MixdownError(description: error.description)
        }
        let lines = LyricLines(part: score.parts[index], schedule: schedule, pickupTicks: score.pickupTicks, writtenMeasure: score.writtenMeasure)
        return lines.lines.isEmpty ? nil : lines.lrc(sampleRate: options.sampleRate, title: score.title)
    }
}
