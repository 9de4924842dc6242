/// The needle's word on each note just sung: its centre as the take's grade
/// reads it — the same code (`TakeAnalyzer`) on the same voice — said as
/// soon as it can be known, a moment after the note ends (the grade cuts a
/// note's interior where the next note's sound begins, which it looks for
/// up to 250 ms after that note's start).
///
/// While a note is held, the needle follows the voice (`PitchCentre`): a
/// singer corrects by it. A live centre cannot be the note's centre — a real
/// singer's pitch drifts 20–80 cents through a held note — so a needle
/// that showed −61 over a note the grade scored 100 was telling the truth of
/// the moment, and the singer was left with two answers. This is the one
/// answer for the note as a whole, shown after it, so what the needle says
/// about a note is what the grade will say.
///
/// A value type fed the captured voice (song-sample contiguous) and asked
/// once a hop for the next verdict: no threads, no clock.
public struct NoteVerdicts {
    /// One note's word: which note (its index in the part), and its centre
    /// against the written pitch, cents (+ sharp).
    public struct Verdict: Hashable, Sendable {
        public var note: Int
        public var cents: Double
    }

    let notes: [TargetNote]
    let analyzer: TakeAnalyzer
    /// Samples kept at most, and what a trim leaves (both whole frames of the analysis).
    let capacity: Int
    let kept: Int
    /// Read before the middle of a note's predecessor (where its onset
    /// search begins) or the note's start (the grade's search begins 200 ms early).
    let lead: Int64
    /// After a note's end before its word is due: the next note's onset
    /// found (searched up to 250 ms late) and its level heard.
    let settle: Int64
    /// The voice heard: `audio[i]` is song sample `start + i`.
    private var audio: [Float] = []
    private var start: Int64 = 0
    /// The next note to give a word on.
    private var next = 0
    /// The own vibrato rates of the long notes heard since the start (the
    /// grade reads a note without one at the singer's rate so far), and
    /// each note's level at its middle (the take's level is their median).
    private var rates: [Int: Double] = [:]
    private var middles: [Int: Double] = [:]

    /// For a part's `notes` (in time order) at `sampleRate`; `seconds` of
    /// the voice kept (a note longer than that is read from its last ones).
    public init(notes: [TargetNote], sampleRate: Int, seconds: Int = 12) {
        self.notes = notes
        analyzer = TakeAnalyzer(sampleRate: sampleRate, cores: 1)
        let frame = analyzer.hop
        capacity = (seconds * sampleRate + frame - 1) / frame * frame
        kept = capacity * 2 / 3 / frame * frame
        lead = Int64(sampleRate * 3 / 10)
        settle = Int64(sampleRate * 3 / 10)
        audio.reserveCapacity(capacity + frame)
    }

    /// The voice at song sample `song`; nil: nothing played (stopped), which
    /// forgets what was heard. A sample that does not follow the last
    /// (a seek, a loop's return) starts afresh there.
    public mutating func add(_ value: Float, at song: Int64?) {
        guard let song else {
            if !audio.isEmpty { audio.removeAll(keepingCapacity: true) }
            return
        }
        if audio.isEmpty || song != start + Int64(audio.count) {
            audio.removeAll(keepingCapacity: true)
            start = song
            // The first note not yet ended here (one sung from its middle
            // has its word as a take from there would).
            next = notes.firstNotEnded(at: song)
            rates.removeAll()
            middles.removeAll()
        }
        if audio.count >= capacity {
            // Trimmed by whole analysis frames, so the frames stay where a take from `start` has them.
            let drop = audio.count - kept
            audio.removeFirst(drop)
            start += Int64(drop)
        }
        audio.append(value)
    }

    /// The next note's word, when it is due (call once a hop).
    public mutating func verdict() -> Verdict? {
        guard next < notes.count, !audio.isEmpty, start + Int64(audio.count) >= notes[next].end + settle else { return nil }
        next += 1
        return word(on: next - 1)
    }

    /// The transport stops: the word on a note that ended but was not yet
    /// due (the song's last), from what was heard; then all is forgotten.
    public mutating func stop() -> Verdict? {
        var said: Verdict?
        if next < notes.count, !audio.isEmpty, start + Int64(audio.count) >= notes[next].end {
            next += 1
            said = word(on: next - 1)
        }
        add(0, at: nil)
        return said
    }

    private mutating func word(on index: Int) -> Verdict? {
        let heard = start + Int64(audio.count)
        // The note with the one before (the onset search begins at its
        // middle) and the one after (where its sound begins ends this
        // note's interior), cut where the voice heard ends.
        var chosen = [index]
        if index > 0, notes[index - 1].end > start { chosen.insert(index - 1, at: 0) }
        if index + 1 < notes.count, notes[index + 1].start < heard { chosen.append(index + 1) }
        let frame = Int64(analyzer.hop)
        let first = notes[chosen[0]]
        let earliest = (chosen[0] < index ? first.start + (first.end - first.start) / 2 : first.start) - lead
        let from = earliest <= start ? start : start + (earliest - start) / frame * frame
        let targets = chosen.map { TargetNote(start: notes[$0].start, end: min(notes[$0].end, heard), frequency: notes[$0].frequency) }
        let samples = Array(audio[Int(from - start)...])
        let levels = TakeAnalyzer.LevelReader(samples, sampleRate: analyzer.sampleRate, origin: from)
        for (note, target) in zip(chosen, targets) where note <= index || middles[note] == nil {
            middles[note] = levels.level(at: (target.start + target.end) / 2)
        }
        let typical = TakeAnalyzer.typicalLevel(Array(middles.values))
        let measured = analyzer.measure(samples, origin: from, notes: targets, typical: typical)
        let position = chosen.firstIndex(of: index)!
        if let own = measured[position].ownRate { rates[index] = own }
        let analysis = analyzer.finish(measured, origin: from, heardBefore: rates.filter { $0.key < chosen[0] }.map(\.value))[position]
        guard analysis.sung, let cents = analysis.cents else { return nil }
        return Verdict(note: index, cents: cents)
    }
}
