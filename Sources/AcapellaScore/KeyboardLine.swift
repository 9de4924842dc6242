/// A line played on a keyboard, written into the song as a new part: the
/// keypad sequencer of the original design. The notes as played (in
/// ticks, from the tempo map) are put on a grid chosen for the song —
/// straight eighths or sixteenths, or triplets of either — made one voice
/// (a chord keeps its top note, an overlap is cut where the next note
/// starts), split at barlines (and, for triplets, at beats, each beat's
/// pieces one 3:2 group) with ties, rests between, and said in an
/// import-style report of what was changed to get there.
public enum KeyboardLine {
    /// A note as played: its key, and where it began and ended in ticks
    /// (fractions kept: the grid decides).
    public struct Played: Hashable, Sendable {
        public var midi: Int
        public var start: Double
        public var end: Double

        public init(midi: Int, start: Double, end: Double) {
            self.midi = midi
            self.start = start
            self.end = end
        }
    }

    /// The grid notes land on.
    public enum Grid: String, CaseIterable, Hashable, Sendable, Codable {
        case eighth = "8"
        case sixteenth = "16"
        case eighthTriplet = "8t"
        case sixteenthTriplet = "16t"

        /// One step, ticks.
        public var ticks: Int {
            switch self {
            case .eighth: ticksPerWhole / 8
            case .sixteenth: ticksPerWhole / 16
            case .eighthTriplet: ticksPerWhole / 12
            case .sixteenthTriplet: ticksPerWhole / 24
            }
        }

        public var isTriplet: Bool { self == .eighthTriplet || self == .sixteenthTriplet }

        /// "16th notes", "8th-note triplets".
        public var words: String {
            switch self {
            case .eighth: "8th notes"
            case .sixteenth: "16th notes"
            case .eighthTriplet: "8th-note triplets"
            case .sixteenthTriplet: "16th-note triplets"
            }
        }
    }

    /// A line written into a song: the new part's name, and the report.
    public struct Written: Hashable, Sendable {
        public var part: String
        public var report: [String]

        public init(part: String, report: [String]) {
            self.part = part
            self.report = report
        }
    }

    /// Why a line cannot be written.
    public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// `score` with the line as a new part named `name` (after the others),
    /// and the report. Refused when nothing was played inside the song, or
    /// a triplet grid meets a meter not counted in quarters.
    public static func written(_ played: [Played], grid: Grid, name: String, into score: Score) throws(Refusal) -> (score: Score, report: [String]) {
        let end = score.endTick
        let step = grid.ticks
        let meterMap = score.meterMap
        if grid.isTriplet, let change = score.meters.first(where: { $0.meter.pulseTicks != ticksPerWhole / 4 }) {
            throw Refusal(description: "a triplet grid needs beats of a quarter note; measure \(change.measure) is in \(change.meter.numerator)/\(change.meter.denominator)")
        }
        var report: [String] = []
        var moved = 0
        var furthest = 0.0
        var lengthened = 0
        var outside = 0
        // On the grid: onsets and ends to the nearest step.
        var snapped: [(midi: Int, start: Int, end: Int)] = []
        for note in played.sorted(by: { ($0.start, -$0.midi) < ($1.start, -$1.midi) }) {
            guard note.start < Double(end), note.end > 0, note.end > note.start else {
                outside += 1
                continue
            }
            let start = max(0, Int((note.start / Double(step)).rounded()) * step)
            var stop = min(end, Int((note.end / Double(step)).rounded()) * step)
            let shift = max(abs(Double(start) - note.start), abs(Double(stop) - note.end))
            if shift > 0.5 { moved += 1 }
            furthest = max(furthest, shift)
            if stop <= start {
                stop = min(end, start + step)
                lengthened += 1
            }
            guard stop > start else {
                outside += 1
                continue
            }
            snapped.append((note.midi, start, stop))
        }
        guard !snapped.isEmpty else {
            throw Refusal(description: played.isEmpty ? "nothing was played" : "nothing was played inside the song")
        }
        // One voice: of notes starting together the top one; a note still
        // held when the next starts is cut there.
        var line: [(midi: Int, start: Int, end: Int)] = []
        var chords = 0
        var cut = 0
        for note in snapped {
            if let last = line.last, last.start == note.start {
                chords += 1
                if note.midi > last.midi { line[line.count - 1] = note }
                continue
            }
            if let last = line.last, last.end > note.start {
                line[line.count - 1].end = note.start
                cut += 1
            }
            line.append(note)
        }
        // Events: rests between, pieces split at barlines (and beats for triplets).
        var boundaries = Set<Int>()
        var measure = meterMap.measure(containing: 0)
        while meterMap.startTick(ofMeasure: measure) < end {
            let start = max(0, meterMap.startTick(ofMeasure: measure))
            boundaries.insert(start)
            if grid.isTriplet {
                let pulse = meterMap.meter(atMeasure: measure).pulseTicks
                var beat = meterMap.startTick(ofMeasure: measure)
                while beat < meterMap.startTick(ofMeasure: measure + 1) {
                    if beat >= 0 { boundaries.insert(beat) }
                    beat += pulse
                }
            }
            measure += 1
        }
        boundaries.insert(end)
        let cuts = boundaries.sorted()
        var events: [NoteEvent] = []
        func add(_ midi: Int?, from start: Int, to stop: Int) {
            var at = start
            for boundary in cuts where boundary > start {
                let piece = min(boundary, stop) - at
                if piece > 0 {
                    for value in pieces(piece, triplet: grid.isTriplet) {
                        events.append(NoteEvent(startTick: at, durationTicks: value.ticks, value: value.value, pitch: midi.map(spelled), tieToNext: midi != nil))
                        at += value.ticks
                    }
                }
                if boundary >= stop { break }
            }
            if midi != nil, let last = events.indices.last { events[last].tieToNext = false }
        }
        var at = 0
        for note in line {
            if note.start > at { add(nil, from: at, to: note.start) }
            add(note.midi, from: note.start, to: note.end)
            at = note.end
        }
        if at < end { add(nil, from: at, to: end) }
        // Triplet pieces of one beat are one 3:2 group.
        if grid.isTriplet {
            var group = 0
            var index = 0
            while index < events.count {
                let beatStart = cuts.last { $0 <= events[index].startTick } ?? 0
                var members: [Int] = []
                while index < events.count && events[index].startTick < beatStart + ticksPerWhole / 4 && events[index].value.writtenTicks != events[index].durationTicks {
                    members.append(index)
                    index += 1
                }
                if members.isEmpty {
                    index += 1
                    continue
                }
                group += 1
                for member in members { events[member].tuplet = Tuplet(id: group, actual: 3, normal: 2) }
            }
        }
        var part = Part(name: name, notes: events)
        part.clef = Clef.inferred(fromMIDIPitches: line.map(\.midi))
        var result = score
        result.parts.append(part)

        let notes = line.count
        report.append("\(name): \(notes) note\(notes == 1 ? "" : "s") on a grid of \(grid.words)")
        if moved > 0 { report.append("\(moved) note\(moved == 1 ? "" : "s") moved onto the grid, the furthest by \(tickWords(furthest))") }
        if chords > 0 { report.append("\(chords) note\(chords == 1 ? "" : "s") played with another: the top note kept (a part sings one note at a time)") }
        if cut > 0 { report.append("\(cut) note\(cut == 1 ? "" : "s") held into the next: cut where it starts") }
        if lengthened > 0 { report.append("\(lengthened) note\(lengthened == 1 ? "" : "s") shorter than a grid step: made one step long") }
        if outside > 0 { report.append("\(outside) note\(outside == 1 ? "" : "s") outside the song left out") }
        return (result, report)
    }

    /// Written values for `ticks` of a part (tuplet members for triplets:
    /// sounding ticks times 3/2 written).
    static func pieces(_ ticks: Int, triplet: Bool) -> [(value: NoteValue, ticks: Int)] {
        if triplet && ticks % (ticksPerWhole / 4) != 0 {
            return NoteValue.filling(ticks: ticks * 3 / 2).map { ($0, $0.writtenTicks * 2 / 3) }
        }
        return NoteValue.filling(ticks: ticks).map { ($0, $0.writtenTicks) }
    }

    /// A MIDI note spelled with sharps (the line is written as played).
    static func spelled(_ midi: Int) -> Pitch {
        let steps: [(Step, Int)] = [(.c, 0), (.c, 1), (.d, 0), (.d, 1), (.e, 0), (.f, 0), (.f, 1), (.g, 0), (.g, 1), (.a, 0), (.a, 1), (.b, 0)]
        let (step, alter) = steps[((midi % 12) + 12) % 12]
        return Pitch(step: step, alter: alter, octave: midi / 12 - 1)
    }

    /// "a 32nd note", "17 ticks".
    static func tickWords(_ ticks: Double) -> String {
        let whole = Double(ticksPerWhole)
        for (fraction, words) in [(whole / 4, "a quarter note"), (whole / 8, "an 8th note"), (whole / 16, "a 16th note"), (whole / 32, "a 32nd note")] where ticks >= fraction * 0.95 {
            return "about \(words)"
        }
        return "\(Int(ticks.rounded())) ticks (less than a 32nd note)"
    }
}
