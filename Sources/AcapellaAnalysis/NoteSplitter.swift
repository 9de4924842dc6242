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

/// Splits a recording's pitch track into notes, with no score, as a
/// singer sang them: one note through drift, a scoop, vibrato of any width
/// and a pitch off the grid; a new note where the voice moved to another
/// pitch and held it, or re-attacked it (a consonant, a dip in level); no
/// note in a rest, whatever sounds in the room.
///
/// 1. Pitch without a score (`YINDetector.track`: whole periods), every
///    `hop` samples. A frame is sung when it has a pitch, is above
///    `silence` and within `floor` dB of the recording's sung level (its
///    loud frames: hum, rumble and breath in rests are far below them); a
///    frame an octave, a twelfth or two octaves under the pitch around it
///    (a sub-octave reading) is read at that pitch.
/// 2. The frames are split into notes and gaps at the least total cost,
///    found exactly by dynamic programming over the note pitches sung
///    (every sung frame's pitch to `grid`): each note costs `noteCost`;
///    each frame in a note costs its distance from the note's pitch
///    (semitones, at most `offPitchCap`; weighed by `heldWeight`, and by
///    `movingWeight` where the voice slides faster than `slide`: a
///    portamento is no note of its own; vibrato, drift and a scoop cost
///    less than a note, a pitch held away for longer than `noteCost`
///    costs more), less the frame's periodicity (a sung
///    frame pays for being left out, a breath or a consonant for being
///    in), plus the dB its level lies more than `dipAllowance` (more in a
///    noisy room, where the noise makes the level waver) under the
///    loudest within `dipWindow` either side (a re-attack). Gaps cost
///    nothing; a silent frame is never in a note. Costs are per 16 ms, so
///    they do not depend on the hop.
/// 3. Between notes sung legato the change is put where the voice crosses
///    half-way between their pitches. A note shorter than `shortest` is
///    dropped (a click, a breath with a pitch). A note after a gap starts
///    at its first frame within `onsetLevel` dB of its median level (a
///    frame has a pitch once its window holds a few periods of the voice,
///    before its centre does); its pitch is where the voice holds it (see
///    `note`).
///
/// Measured on real singers (SSVD v2.0's 67 train&valid recordings: notes
/// F against swift-f0's) and on the project's synthetic lines (the tests).
public struct NoteSplitter: Sendable {
    public let sampleRate: Int
    /// Samples between pitch frames (256 at 48 kHz: 5.3 ms).
    public let hop: Int
    /// What a note costs: as much as a frame's distance from its note at
    /// weight 1 over this many seconds, a semitone away (0.18: a pitch held
    /// a semitone away for 180 ms, two for 90, is worth a note of its own;
    /// the least on real singers' notes). Higher gives fewer, longer notes.
    public var noteCost = 0.18
    /// The most a frame's distance from its note counts, semitones.
    public var offPitchCap = 4.0
    /// The weight of a frame's distance from its note where the voice
    /// holds its pitch, and where it moves faster than `slide`.
    public var heldWeight = 1.0
    public var movingWeight = 0.1
    /// How fast the voice moves (semitones a second, over 40 ms) where it
    /// slides rather than holds a pitch (a portamento; vibrato of ±45 cents
    /// at 5.5 Hz peaks at 16, a real singer's drift and scoops stay under).
    public var slide = 30.0
    /// The shortest note, seconds.
    public var shortest = 0.06
    /// A step between two held pitches (`stepSize` semitones apart at
    /// least, each held within `stepSteadiness` for `stepPlateau` seconds:
    /// an unarticulated fast run) and what a note starting there costs, of
    /// `noteCost`. Real singers' pitch inside a held note wavers more.
    public var stepSize = 0.8
    public var stepSteadiness = 0.08
    public var stepPlateau = 0.04
    public var stepPrice = 0.5
    /// What a frame with no pitch costs inside a note (per 16 ms, as a
    /// sung frame's periodicity: 9.2, twice a frame 1 % periodic): a note
    /// sung again on its pitch after a break of 20 ms is two notes; a
    /// frame or two lost in a held note are not.
    public var unsungCost = 9.2
    /// A frame's level against the loudest within this many seconds either
    /// side, and the dB under them that costs nothing.
    public var dipWindow = 0.1
    public var dipAllowance = 2.0
    /// The dip allowance where the sung level is `noisyRoom` dB or less
    /// over the noise floor (the lower quartile of the levels of the
    /// frames with no pitch, at least half a second of them, digital
    /// silence left out): the noise makes a held note's level waver by
    /// more. Between `quietRoom` and `noisyRoom`, in proportion.
    public var noisyDipAllowance = 4.5
    public var quietRoom = 24.0
    public var noisyRoom = 20.0
    /// The level (dBFS, over the frame's own hop) below which a frame is
    /// silence, whatever pitch its window shows.
    public var silence = -60.0
    /// How far (dB) under the recording's sung level (the 95th percentile
    /// of its pitched frames' levels) a frame is no longer sung.
    public var floor = 40.0
    /// A note after a gap starts at its first frame within this many dB of
    /// its median level (a frame has a pitch once its window holds a few
    /// periods of the voice, before the voice is at its level).
    public var onsetLevel = 6.0
    /// The running median (seconds) a note's centre is taken from: about
    /// one vibrato cycle (4.5–7 Hz), so that vibrato as wide as ±100 cents
    /// centres.
    public var steadying = 0.18
    /// The note pitches tried, semitones apart.
    public var grid = 0.05

    public init(sampleRate: Int) {
        self.sampleRate = sampleRate
        hop = max(32, sampleRate / 187)
    }

    /// The notes of `samples`, in time order: read with the room's steady
    /// noise taken out first, where there is a room to take out
    /// (`RoomNoise`).
    public func notes(in samples: [Float]) -> [SplitNote] {
        guard YINDetector.sampleRates.contains(sampleRate) else { return [] }
        let heard = RoomNoise.quieted(samples, sampleRate: sampleRate) ?? samples
        let estimates = YINDetector(sampleRate: sampleRate).track(heard, hop: hop)
        return notes(from: estimates, levels: Self.levels(heard, hop: hop))
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
        let count = estimates.count
        guard count > 0 else { return [] }
        let frame = Double(hop) / Double(sampleRate)
        let level = { (index: Int) in index < levels.count ? levels[index] : -120 }
        let hasPitch = estimates.map { $0.voiced && $0.frequency > 0 && $0.frequency.isFinite }
        let sungLevel = Self.percentile((0..<count).filter { hasPitch[$0] }.map(level), 0.95)
        let unpitched = (0..<count).filter { !hasPitch[$0] }.map(level).filter { $0 > -100 }
        let noiseFloor = Double(unpitched.count) * frame >= 0.5 ? Self.percentile(unpitched, 0.25) : -.infinity
        let noisiness = max(0, min(1, (quietRoom - (sungLevel - noiseFloor)) / (quietRoom - noisyRoom)))
        let allowance = dipAllowance + noisiness * (noisyDipAllowance - dipAllowance)
        let sung = (0..<count).map { index in
            hasPitch[index] && level(index) > silence && level(index) > sungLevel - floor
        }
        let pitches = Self.octavesMended((0..<count).map { sung[$0] ? Tuning.midi(frequency: estimates[$0].frequency) : 0 }, sung: sung,
                                         reach: max(1, Int((0.15 / frame).rounded())))
        let candidates = Array(Set((0..<count).filter { sung[$0] }.map { Int((pitches[$0] / grid).rounded()) })).sorted().map { Double($0) * grid }
        guard !candidates.isEmpty else { return [] }
        // Per-frame costs, in 16 ms frames.
        let scale = frame / 0.016
        let reach = max(1, Int((0.02 / frame).rounded()))
        let dipReach = max(1, Int((dipWindow / frame).rounded()))
        let before = Self.runningMaximum(levels, count: count, back: dipReach)
        let after = Self.runningMaximum(levels, count: count, ahead: dipReach)
        var weight = [Double](repeating: 0, count: count)
        var fixed = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let confidence = sung[index] ? min(0.99, max(0.01, estimates[index].confidence)) : 0.01
            let (low, high) = (max(0, index - reach), min(count - 1, index + reach))
            let moving = high > low && sung[low] && sung[high] && abs(pitches[high] - pitches[low]) / (Double(high - low) * frame) > slide
            weight[index] = sung[index] ? scale * confidence * (moving ? movingWeight : heldWeight) : 0
            let dip = max(0, min(before[index], after[index]) - level(index) - allowance)
            let evidence = sung[index] ? -log(confidence / (1 - confidence)) : unsungCost
            fixed[index] = level(index) <= silence ? .infinity : scale * (evidence + dip)
        }
        // A step: the voice held one pitch, moved at least `stepSize` within
        // 40 ms and held the new one (a legato step of a fast run; not
        // vibrato, a scoop or drift, which move on).
        let plateau = max(2, Int((stepPlateau / frame).rounded()))
        func steady(_ range: Range<Int>) -> Double? {
            guard range.lowerBound >= 0, range.upperBound <= count, range.allSatisfy({ sung[$0] }) else { return nil }
            let values = range.map { pitches[$0] }
            let middle = Self.median(values)
            return values.allSatisfy { abs($0 - middle) <= stepSteadiness } ? middle : nil
        }
        let stepAt = (0..<count).map { index -> Bool in
            guard let before = steady((index - reach - plateau)..<(index - reach)), let after = steady((index + reach)..<(index + reach + plateau)) else { return false }
            return abs(after - before) >= stepSize
        }
        // Notes and gaps at the least total cost: `best` the cheapest split
        // of the frames so far, `open[k]` that of one ending in a note of
        // pitch k open at the current frame, begun at `begun[k]`.
        let price = noteCost / 0.016
        var open = [Double](repeating: .infinity, count: candidates.count)
        var begun = [Int](repeating: 0, count: candidates.count)
        var back = [Int](repeating: 0, count: count + 1)
        var chosen = [Int](repeating: -1, count: count + 1)
        var best = 0.0
        for index in 0..<count {
            let start = best + price * (stepAt[index] ? stepPrice : 1)
            var cheapest = Double.infinity
            var cheapestPitch = -1
            for pitch in candidates.indices {
                if start < open[pitch] {
                    open[pitch] = start
                    begun[pitch] = index
                }
                open[pitch] += fixed[index] + weight[index] * min(offPitchCap, abs(candidates[pitch] - pitches[index]))
                if open[pitch] < cheapest {
                    cheapest = open[pitch]
                    cheapestPitch = pitch
                }
            }
            if cheapest < best {
                best = cheapest
                back[index + 1] = begun[cheapestPitch]
                chosen[index + 1] = cheapestPitch
            } else {
                back[index + 1] = index
            }
        }
        var spans: [(frames: Range<Int>, pitch: Double)] = []
        var end = count
        while end > 0 {
            let first = back[end]
            if chosen[end] >= 0 { spans.append((first..<end, candidates[chosen[end]])) }
            end = first
        }
        spans.reverse()
        // Between notes sung legato (no gap), the change where the voice
        // crosses half-way between their pitches (the least cost puts it
        // anywhere in the slide from one to the other).
        for index in spans.indices.dropFirst() where spans[index - 1].frames.upperBound == spans[index].frames.lowerBound {
            let (before, after) = (spans[index - 1].pitch, spans[index].pitch)
            func nearerAfter(_ frame: Int) -> Bool { abs(pitches[frame] - after) < abs(pitches[frame] - before) }
            var boundary = spans[index].frames.lowerBound
            while boundary - 1 > spans[index - 1].frames.lowerBound && sung[boundary - 1] && nearerAfter(boundary - 1) { boundary -= 1 }
            while boundary + 1 < spans[index].frames.upperBound && sung[boundary] && !nearerAfter(boundary) { boundary += 1 }
            spans[index - 1].frames = spans[index - 1].frames.lowerBound..<boundary
            spans[index].frames = boundary..<spans[index].frames.upperBound
        }
        let shortestFrames = max(1, Int((shortest / frame).rounded()))
        var notes: [SplitNote] = []
        for (index, span) in spans.enumerated() {
            let held = span.frames.filter { sung[$0] }
            guard held.count >= shortestFrames else { continue }
            let legato = index > 0 && spans[index - 1].frames.upperBound == span.frames.lowerBound
            // After a gap, the note starts where the voice reaches its level.
            var first = span.frames.lowerBound
            if !legato {
                let loud = Self.median(span.frames.map(level)) - onsetLevel
                while first < span.frames.upperBound - 1 && level(first) < loud { first += 1 }
            }
            notes.append(note(frames: first..<span.frames.upperBound, pitches: held.map { pitches[$0] }))
        }
        return notes
    }

    /// Each sung frame an octave, a twelfth or two octaves under the median
    /// of the sung frames within `reach` (a sub-octave reading) raised to it;
    /// also a fifth or a sixth of it (27.86 or 31.02 semitones under): the
    /// voice and another sound a third away (the guide from speakers, a
    /// reverberant tail) repeat together every five or six of the voice's
    /// periods.
    static func octavesMended(_ pitches: [Double], sung: [Bool], reach: Int) -> [Double] {
        var mended = pitches
        for index in pitches.indices where sung[index] {
            let around = (max(0, index - reach)...min(pitches.count - 1, index + reach)).filter { sung[$0] }.map { pitches[$0] }
            let middle = median(around)
            guard middle - pitches[index] > 6 else { continue }
            if let interval = [12.0, 19, 24, 27.863, 31.02].first(where: { abs(pitches[index] + $0 - middle) < 1 }) { mended[index] = pitches[index] + interval }
        }
        return mended
    }

    /// The largest of `values[index − back … index]` (or `values[index …
    /// index + ahead]`) for each of the first `count` indices (−120 beyond the values).
    static func runningMaximum(_ values: [Double], count: Int, back: Int = 0, ahead: Int = 0) -> [Double] {
        (0..<count).map { index in
            let range = max(0, index - back)...min(count - 1, index + ahead)
            return range.map { $0 < values.count ? values[$0] : -120 }.max() ?? -120
        }
    }

    /// A note over `frames` whose sung frames have `pitches`, sung at the
    /// median of its pitch held (a running median over `steadying`:
    /// vibrato centres, a slide into or out of the note pulls little).
    func note(frames: Range<Int>, pitches: [Double]) -> SplitNote {
        let held = Self.runningMedian(pitches, half: max(1, Int(steadying / 2 * Double(sampleRate) / Double(hop))))
        let pitch = Self.median(held)
        let midi = Int(pitch.rounded())
        let onset = Int64(frames.lowerBound * hop - hop / 2)
        let offset = Int64(frames.upperBound * hop - hop / 2)
        return SplitNote(onset: max(0, min(onset, offset - 1)), offset: offset, midi: midi, cents: (pitch - Double(midi)) * 100,
                         frequency: Tuning.frequency(midi: 69) * pow(2, (pitch - 69) / 12))
    }

    /// The value at fraction `fraction` of the sorted values (0 when none).
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
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
