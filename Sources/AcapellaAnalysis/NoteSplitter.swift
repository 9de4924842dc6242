import AcapellaDSP
import Foundation

/// A note found in a recording with no score: where it starts and ends and
/// the pitch it was sung at.
public struct SplitNote: Hashable, Sendable {
    /// First sample of the note.
    public var onset: Int64
    /// One past its last sample.
    public var offset: Int64
    /// The nearest equal-tempered note (A4 = 440 Hz) to the sung pitch.
    public var midi: Int
    /// The sung pitch against `midi`, cents (+ sharp): the median of the
    /// pitch held over the note (a slide into it left out), so vibrato
    /// centres.
    public var cents: Double
    /// The sung pitch, Hz.
    public var frequency: Double

    public init(onset: Int64, offset: Int64, midi: Int, cents: Double, frequency: Double) {
        self.onset = onset
        self.offset = offset
        self.midi = midi
        self.cents = cents
        self.frequency = frequency
    }
}

/// Splits a recording's pitch track into notes, with no score — the note
/// splitting of the original design's sound-analysis app, for any
/// recording:
///
/// 1. Pitch without a score (`YINDetector.track`: whole periods, no octave
///    slips), every `hop` samples; a note never spans an unvoiced frame (a
///    breath, a consonant, a re-articulated note) nor a silent one (its own
///    hop below `silence`: the 43 ms window still finds a clean period
///    when a tone fills only its edge, so without this a 20 ms blip would
///    read as 60 ms of pitch and a note would start before it is sung).
/// 2. Within each voiced run, the pitch held: where the run has wide
///    vibrato, a running median over about one vibrato cycle (`steadying`),
///    which keeps steps and slides where they are sung and takes out
///    vibrato as wide as ±100 cents; elsewhere the pitch as tracked.
/// 3. The semitone held at each frame by Viterbi over the semitones the
///    run visits: a frame costs its squared distance from the semitone in
///    half-semitones, a change of semitone costs `changeCost`. A note sung
///    a quarter-tone off stays one note (an excursion pays less than a
///    change); a real step of a semitone or more changes within two frames.
/// 4. Pieces shorter than `shortest` (a scoop) go to the neighbour nearer
///    in pitch, and so do pieces between their neighbours' pitches where
///    the voice moves faster than `slide` when the slide is at most half
///    as long as the notes either side (a portamento, a legato step): the
///    voice passing, not a note; a fast run's notes stay. Runs shorter than `shortest` are
///    dropped (a click, a breath with a pitch). Each change of note is put
///    where the held pitch crosses half-way between the two.
/// 5. A note sung again on the same pitch without a break: split where the
///    level dips by `reattack` dB and comes back.
/// 6. Each note's pitch is the median of its held pitch where the voice
///    holds it (within 35 cents of its middle): a slide into or out of
///    it does not pull it; vibrato centres.
public struct NoteSplitter: Sendable {
    public let sampleRate: Int
    /// Samples between pitch frames (256 at 48 kHz: 5.3 ms).
    public let hop: Int
    /// The cost of changing semitone, in squared half-semitones.
    public var changeCost = 8.0
    /// The shortest note, seconds.
    public var shortest = 0.06
    /// A dip in level (dB, against the louder side within 150 ms) that
    /// splits a held pitch into two notes.
    public var reattack = 15.0
    /// The level (dBFS, over the frame's own hop) below which a frame is
    /// silence, whatever pitch its window shows.
    public var silence = -60.0
    /// The running median (seconds) the notes are found on where a run has
    /// wide vibrato, and the notes' centres: about one vibrato cycle
    /// (4.5–7 Hz), so that vibrato as wide as ±100 cents
    /// keeps to its note while a step of pitch stays where it was sung (a
    /// median keeps steps and slides, and drops what is shorter than half
    /// of it).
    public var steadying = 0.18
    /// How fast the voice moves (semitones a second, after the running
    /// median) where it slides between notes rather than holds one.
    public var slide = 6.0

    public init(sampleRate: Int) {
        self.sampleRate = sampleRate
        hop = max(32, sampleRate / 187)
    }

    /// The notes of `samples`, in time order.
    public func notes(in samples: [Float]) -> [SplitNote] {
        guard YINDetector.sampleRates.contains(sampleRate) else { return [] }
        let estimates = YINDetector(sampleRate: sampleRate).track(samples, hop: hop)
        return notes(from: estimates, levels: Self.levels(samples, hop: hop))
    }

    /// Level in dB of each frame (RMS over the hop around its centre).
    static func levels(_ samples: [Float], hop: Int) -> [Double] {
        let frames = (samples.count + hop - 1) / hop
        return (0..<frames).map { frame in
            let low = max(0, frame * hop - hop / 2)
            let high = min(samples.count, frame * hop + hop / 2)
            guard high > low else { return -120 }
            var energy = 0.0
            for index in low..<high { energy += Double(samples[index]) * Double(samples[index]) }
            return 10 * log10(max(1e-12, energy / Double(high - low)))
        }
    }

    /// The notes of a pitch track (frame k centred on sample k·hop) with the
    /// level of each frame.
    public func notes(from estimates: [PitchEstimate], levels: [Double]) -> [SplitNote] {
        let shortestFrames = max(1, Int((shortest * Double(sampleRate) / Double(hop)).rounded()))
        let estimates = Self.bridged(estimates, levels: levels, silence: silence)
        let sung = { (frame: Int) in
            estimates[frame].voiced && estimates[frame].frequency > 0 && (frame >= levels.count || levels[frame] > silence)
        }
        var notes: [SplitNote] = []
        var index = 0
        while index < estimates.count {
            guard sung(index) else { index += 1; continue }
            var end = index
            while end < estimates.count && sung(end) { end += 1 }
            if end - index >= shortestFrames {
                let pitches = estimates[index..<end].map { Tuning.midi(frequency: $0.frequency) }
                let (held, median) = self.held(pitches)
                for piece in pieces(held, shortestFrames: shortestFrames) {
                    for part in reattacked(piece, levels: levels, offset: index, shortestFrames: shortestFrames) {
                        notes.append(note(frames: (part.lowerBound + index)..<(part.upperBound + index), pitches: Array(pitches[part]), held: Array(median[part])))
                    }
                }
            }
            index = end
        }
        return notes
    }

    /// The pitch a run holds: its running median over `steadying` where the
    /// run has wide vibrato (its frames half their time more than 25 cents
    /// from it), else the pitch as tracked — a median also drops a note
    /// shorter than half of it (a fast run's turning note).
    /// Also returns the running median itself (the notes' centres).
    func held(_ pitches: [Double]) -> (held: [Double], median: [Double]) {
        let median = Self.runningMedian(pitches, half: max(1, Int(steadying / 2 * Double(sampleRate) / Double(hop))))
        let wide = Self.median(zip(pitches, median).map { abs($0 - $1) }) > 0.25
        return (wide ? median : pitches, median)
    }

    /// The track with each gap of one or two unvoiced frames inside a held
    /// pitch (the same within half a semitone either side, the gap not
    /// silent) given the pitch before it: the tracker loses a frame where
    /// the voice only wavers, which is no new note; a real re-attack is
    /// found by its dip in level (`reattack`), a breath by its silence.
    static func bridged(_ estimates: [PitchEstimate], levels: [Double], silence: Double) -> [PitchEstimate] {
        var bridged = estimates
        var index = 1
        while index < estimates.count {
            guard !estimates[index].voiced, estimates[index - 1].voiced, estimates[index - 1].frequency > 0 else { index += 1; continue }
            var end = index
            while end < estimates.count && !estimates[end].voiced && end - index < 3 { end += 1 }
            let audible = (index..<end).allSatisfy { $0 < levels.count && levels[$0] > silence }
            if end - index <= 2, end < estimates.count, estimates[end].voiced, estimates[end].frequency > 0, audible,
               abs(Tuning.midi(frequency: estimates[end].frequency) - Tuning.midi(frequency: estimates[index - 1].frequency)) < 0.5 {
                for frame in index..<end {
                    bridged[frame].voiced = true
                    bridged[frame].frequency = estimates[index - 1].frequency
                }
            }
            index = end + 1
        }
        return bridged
    }

    /// The semitone pieces of one voiced run (frame ranges within it).
    func pieces(_ pitches: [Double], shortestFrames: Int) -> [Range<Int>] {
        guard let low = pitches.min(), let high = pitches.max() else { return [] }
        let states = Array(Int(low.rounded())...Int(high.rounded()))
        let count = pitches.count
        // Viterbi: cost so far per state, and the state each came from.
        var cost = [Double](repeating: 0, count: states.count)
        var from = [[Int32]](repeating: [Int32](repeating: 0, count: states.count), count: count)
        func frameCost(_ pitch: Double, _ state: Int) -> Double {
            let distance = (pitch - Double(states[state])) * 2  // half-semitones
            return min(16, distance * distance)
        }
        for state in states.indices { cost[state] = frameCost(pitches[0], state) }
        for frame in 1..<max(1, count) {
            let (bestState, bestCost) = cost.enumerated().min { $0.element < $1.element }.map { ($0.offset, $0.element) }!
            var next = cost
            for state in states.indices {
                let switched = bestCost + changeCost
                if switched < cost[state] {
                    next[state] = switched
                    from[frame][state] = Int32(bestState)
                } else {
                    from[frame][state] = Int32(state)
                }
                next[state] += frameCost(pitches[frame], state)
            }
            cost = next
        }
        var path = [Int](repeating: 0, count: count)
        path[count - 1] = cost.indices.min { cost[$0] < cost[$1] }!
        for frame in stride(from: count - 1, to: 0, by: -1) { path[frame - 1] = Int(from[frame][path[frame]]) }
        // Pieces of one semitone, then the short ones given to a neighbour.
        var pieces: [(range: Range<Int>, state: Int)] = []
        var start = 0
        for frame in 1...count where frame == count || path[frame] != path[start] {
            pieces.append((start..<frame, path[start]))
            start = frame
        }
        // A piece whose semitone lies between its neighbours' and where the
        // voice is mostly moving is the voice passing from one to the other
        // (a portamento, a legato step under wide vibrato): it goes too. A
        // note, however short, holds its pitch for most of its length.
        let reach = max(1, Int((0.02 * Double(sampleRate) / Double(hop)).rounded()))
        let moving = pitches.indices.map { frame in
            let (low, high) = (max(0, frame - reach), min(count - 1, frame + reach))
            return high > low && abs(pitches[high] - pitches[low]) / (Double((high - low) * hop) / Double(sampleRate)) > slide
        }
        func sliding(_ index: Int) -> Bool {
            guard index > 0, index + 1 < pieces.count else { return false }
            let (before, here, after) = (states[pieces[index - 1].state], states[pieces[index].state], states[pieces[index + 1].state])
            guard min(before, after) < here && here < max(before, after) else { return false }
            // Judged where the voice is on the piece's semitone (Viterbi may
            // hold it on into the slow end of a slide); a note, however
            // short, holds its pitch between its edges.
            let own = pieces[index].range.filter { abs(pitches[$0] - Double(here)) < 0.5 }
            return !own.isEmpty && own.filter { moving[$0] }.count * 10 >= own.count * 6
        }
        // A piece under twice the shortest note, beside a note held at least
        // twice as long and within 70 cents of it (medians as sung), is that
        // note's inflection — a rise at its end, a lean before it — not a
        // note a semitone away (those sit 100 cents off as sung).
        func inflection(_ index: Int) -> Bool {
            let piece = pieces[index]
            guard piece.range.count < 2 * shortestFrames else { return false }
            let own = Self.median(Array(pitches[piece.range]))
            return [index - 1, index + 1].contains { side in
                guard side >= 0, side < pieces.count, pieces[side].range.count >= 2 * piece.range.count else { return false }
                return abs(Self.median(Array(pitches[pieces[side].range])) - own) < 0.7
            }
        }
        func passing(_ index: Int) -> Bool {
            guard pieces[index].range.count >= shortestFrames else { return true }
            if inflection(index) { return true }
            guard sliding(index) else { return false }
            // The slide (this piece and the sliding ones beside it) goes
            // between notes held at least twice as long: a fast run's notes
            // are as short as the notes around them.
            var (first, last) = (index, index)
            while first > 0 && sliding(first - 1) { first -= 1 }
            while last + 1 < pieces.count && sliding(last + 1) { last += 1 }
            guard first > 0, last + 1 < pieces.count else { return false }
            let slide = pieces[first...last].map(\.range.count).reduce(0, +)
            return 2 * slide <= min(pieces[first - 1].range.count, pieces[last + 1].range.count)
        }
        while pieces.count > 1, let shortest = pieces.indices.filter(passing).min(by: { pieces[$0].range.count < pieces[$1].range.count }) {
            let piece = pieces[shortest]
            let median = Self.median(Array(pitches[piece.range]))
            let before = shortest > 0 ? abs(Double(states[pieces[shortest - 1].state]) - median) : .infinity
            let after = shortest + 1 < pieces.count ? abs(Double(states[pieces[shortest + 1].state]) - median) : .infinity
            if before <= after {
                pieces[shortest - 1].range = pieces[shortest - 1].range.lowerBound..<piece.range.upperBound
            } else {
                pieces[shortest + 1].range = piece.range.lowerBound..<pieces[shortest + 1].range.upperBound
            }
            pieces.remove(at: shortest)
            // Neighbours now of one semitone become one piece.
            var merged: [(range: Range<Int>, state: Int)] = []
            for piece in pieces {
                if let last = merged.last, last.state == piece.state {
                    merged[merged.count - 1].range = last.range.lowerBound..<piece.range.upperBound
                } else {
                    merged.append(piece)
                }
            }
            pieces = merged
        }
        // Each change where the voice crosses half-way between the two
        // notes (Viterbi pays the change cost a frame or two late or early).
        for index in pieces.indices.dropFirst() {
            let (before, after) = (Double(states[pieces[index - 1].state]), Double(states[pieces[index].state]))
            func nearerAfter(_ frame: Int) -> Bool { abs(pitches[frame] - after) < abs(pitches[frame] - before) }
            var boundary = pieces[index].range.lowerBound
            while boundary - 1 > pieces[index - 1].range.lowerBound && nearerAfter(boundary - 1) { boundary -= 1 }
            while boundary + 1 < pieces[index].range.upperBound && !nearerAfter(boundary) { boundary += 1 }
            pieces[index - 1].range = pieces[index - 1].range.lowerBound..<boundary
            pieces[index].range = boundary..<pieces[index].range.upperBound
        }
        return pieces.map(\.range)
    }

    /// A piece split where the level dips by `reattack` dB against the
    /// louder of the two sides (within 150 ms) and the parts either side
    /// are long enough to be notes.
    func reattacked(_ piece: Range<Int>, levels: [Double], offset: Int, shortestFrames: Int) -> [Range<Int>] {
        let reach = max(2, Int(0.15 * Double(sampleRate) / Double(hop)))
        var parts: [Range<Int>] = []
        var start = piece.lowerBound
        var frame = piece.lowerBound + shortestFrames
        while frame < piece.upperBound - shortestFrames {
            let level = { (index: Int) in index + offset < levels.count ? levels[index + offset] : -120 }
            let here = level(frame)
            let before = (max(start, frame - reach)..<frame).map(level).max() ?? here
            let after = ((frame + 1)..<min(piece.upperBound, frame + reach + 1)).map(level).max() ?? here
            let isDip = here <= level(frame - 1) && here <= level(frame + 1)
            if isDip && min(before, after) - here >= reattack {
                parts.append(start..<frame)
                start = frame
                frame += shortestFrames
            } else {
                frame += 1
            }
        }
        parts.append(start..<piece.upperBound)
        return parts
    }

    /// A note over `frames`: its pitch the median of the frames where the
    /// voice holds it (`held` within 35 cents of its middle: a slide into
    /// or out of the note does not pull its centre; vibrato centres).
    /// A note shorter than half the median's span is not held in it (the
    /// median shows its neighbours): its frames as tracked then.
    func note(frames: Range<Int>, pitches: [Double], held: [Double]) -> SplitNote {
        let middle = Self.median(held)
        let steady = held.filter { abs($0 - middle) <= 0.35 }
        let tracked = Self.median(pitches)
        let pitch = steady.isEmpty || abs(middle - tracked) > 0.5 ? tracked : Self.median(steady)
        let midi = Int(pitch.rounded())
        let onset = Int64(frames.lowerBound * hop - hop / 2)
        let offset = Int64(frames.upperBound * hop - hop / 2)
        return SplitNote(onset: max(0, onset), offset: offset, midi: midi, cents: (pitch - Double(midi)) * 100,
                         frequency: Tuning.frequency(midi: 69) * pow(2, (pitch - 69) / 12))
    }

    /// The median of each value and the `half` either side (fewer at the ends).
    static func runningMedian(_ values: [Double], half: Int) -> [Double] {
        values.indices.map { index in median(Array(values[max(0, index - half)...min(values.count - 1, index + half)])) }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
