import Foundation

/// A note the singer should sing: where it sounds on the song's timeline
/// (samples, at the take's tempo) and its pitch (after the take's
/// transposition).
extension [TargetNote] {
    /// The index of the first note (in time order) not ended at `sample`:
    /// the one sounding there or the next; `count` when all have ended.
    func firstNotEnded(at sample: Int64) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle].end <= sample { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

public struct TargetNote: Hashable, Sendable {
    public var start: Int64
    public var end: Int64
    public var frequency: Double

    public init(start: Int64, end: Int64, frequency: Double) {
        self.start = start
        self.end = end
        self.frequency = frequency
    }
}

/// How one note was sung.
public struct NoteAnalysis: Sendable {
    /// Whether the note was sung at all (sound with a pitch over most of it).
    public var sung: Bool
    /// The sung pitch's centre against the written one, cents (+ sharp);
    /// with vibrato, the centre of the oscillation.
    public var cents: Double?
    /// How much the centre wanders once vibrato is taken out, cents (SD).
    public var stability: Double?
    /// Vibrato, when there is some: rate (Hz) and extent (cents, ± around the centre).
    public var vibratoRate: Double?
    public var vibratoExtent: Double?
    /// When the sung note really starts against the score, ms (+ late).
    public var onsetMilliseconds: Double?
    /// The sung pitch over the note, as read: song samples and cents
    /// against the written note (for plots).
    public var curve: [(sample: Int64, cents: Double)] = []
    /// 0–100: pitch (100 within 10 cents, 0 at 50) weighed 0.7, timing
    /// (100 within 30 ms, 0 at 150) 0.3; a missed note scores 0.
    public var score: Double

    public init(sung: Bool, cents: Double? = nil, stability: Double? = nil, vibratoRate: Double? = nil, vibratoExtent: Double? = nil,
                onsetMilliseconds: Double? = nil, score: Double = 0) {
        self.sung = sung
        self.cents = cents
        self.stability = stability
        self.vibratoRate = vibratoRate
        self.vibratoExtent = vibratoExtent
        self.onsetMilliseconds = onsetMilliseconds
        self.score = score
    }
}

/// Analysis of a sung take against the notes of its part: per note sung
/// or missed, pitch centre, stability, vibrato and onset. The take is on
/// the song's timeline (sample `i` is song sample `origin + i`), as every
/// take is by construction. Pitch comes from score-informed YIN (the
/// search kept near each written note: no octave errors); onsets from the
/// level at 1 ms resolution, where the note's sound rises out of the dip
/// before it.
public final class TakeAnalyzer {
    public let sampleRate: Int
    /// One per share of the pitch track (a long take is tracked on every
    /// core, a share each).
    private let detectors: [YINDetector]
    /// Pitch frames every `hop` samples.
    public let hop: Int

    /// An analyzer at `sampleRate`, its work shared among `cores` (at most
    /// the machine's cores and four; 1: all on the calling thread).
    public init(sampleRate: Int, cores: Int = 4) {
        self.sampleRate = sampleRate
        detectors = (0..<max(1, min(cores, ProcessInfo.processInfo.activeProcessorCount))).map { _ in YINDetector(sampleRate: sampleRate) }
        hop = max(64, sampleRate / 187)  // 256 at 48 kHz: 5.3 ms
    }

    /// One note as read from the audio, before the singer's vibrato rate
    /// (a property of the whole take) shapes its centre.
    public struct MeasuredNote: Sendable {
        public var sung: Bool
        /// The entry against the score, ms (+ late).
        public var onset: Double?
        /// The pitch frames over the note: seconds from the take's first
        /// sample, and cents against the written note.
        public var times: [Double]
        public var cents: [Double]
        /// The note's own vibrato rate, when it is long enough to show one.
        public var ownRate: Double?
    }

    /// Analyses `notes` (in time order) in `samples`, all in memory.
    public func analyze(_ samples: [Float], origin: Int64, notes: [TargetNote]) -> [NoteAnalysis] {
        guard !notes.isEmpty else { return [] }
        let levels = LevelReader(samples, sampleRate: sampleRate, origin: origin)
        let typical = Self.typicalLevel(notes.map { levels.level(at: ($0.start + $0.end) / 2) })
        return finish(measure(samples, origin: origin, notes: notes, typical: typical), origin: origin)
    }

    /// The take's loudness: the median of the notes' middles (each the RMS
    /// over `levelWindow`), for "sung at all".
    public static func typicalLevel(_ middles: [Double]) -> Double {
        guard !middles.isEmpty else { return 0 }
        let sorted = middles.sorted()
        return sorted[sorted.count / 2]
    }

    /// The samples (song samples, before clipping to the audio) the level
    /// at `sample` is the RMS of: 5 ms around it.
    public func levelWindow(at sample: Int64) -> Range<Int64> {
        let step = max(1, sampleRate / 1_000)
        let span = Int64(max(step, sampleRate / 200))
        return (sample - span / 2)..<(sample + span / 2)
    }

    /// The level at each place: RMS over `levelWindow`, from prefix sums.
    struct LevelReader {
        let squares: [Double]
        let origin: Int64
        let window: (Int64) -> Range<Int64>

        init(_ samples: [Float], sampleRate: Int, origin: Int64) {
            var squares = [Double](repeating: 0, count: samples.count + 1)
            for index in samples.indices { squares[index + 1] = squares[index] + Double(samples[index]) * Double(samples[index]) }
            self.squares = squares
            self.origin = origin
            let step = max(1, sampleRate / 1_000)
            let span = Int64(max(step, sampleRate / 200))
            window = { ($0 - span / 2)..<($0 + span / 2) }
        }

        func level(at sample: Int64) -> Double {
            let span = window(sample)
            let count = squares.count - 1
            let from = max(0, min(count, Int(span.lowerBound - origin)))
            let to = max(0, min(count, Int(span.upperBound - origin)))
            return to > from ? ((squares[to] - squares[from]) / Double(to - from)).squareRoot() : 0
        }
    }

    /// Reads `notes` (in time order) from `samples` (sample `i` is song
    /// sample `origin + i`): entries, pitch frames, each long note's own
    /// vibrato rate. `typical` is the take's level (`typicalLevel`): a note
    /// quieter than a tenth of it is not sung. Frame times count from
    /// `timeOrigin` (a song sample; default `origin`).
    public func measure(_ samples: [Float], origin: Int64, notes: [TargetNote], typical: Double, timeOrigin: Int64? = nil) -> [MeasuredNote] {
        guard !notes.isEmpty else { return [] }
        let rate = Double(sampleRate)
        let sorted = notes
        let timeShift = Double(origin - (timeOrigin ?? origin)) / rate
        // Pitch, score-informed: the note sounding at each frame's centre.
        let expected = { (centre: Int64) -> Double? in
            let song = origin + centre
            let low = sorted.firstNotEnded(at: song)
            return low < sorted.count && sorted[low].start <= song + Int64(rate * 0.05) ? sorted[low].frequency : nil
        }
        // Tracked in shares of at least 30 s, one a core: the frames are
        // independent (each share starts a window early, as a whole take would).
        let frameCount = (samples.count + hop - 1) / hop
        let shares = max(1, min(detectors.count, samples.count / (30 * sampleRate)))
        let bounds = (0...shares).map { $0 * frameCount / shares }
        let estimates = Self.concurrentMap(Array(0..<shares)) { share in
            self.detectors[share].track(samples, hop: self.hop, frames: bounds[share]..<bounds[share + 1], expected: expected)
        }.flatMap { $0 }
        let step = max(1, sampleRate / 1_000)
        let levels = LevelReader(samples, sampleRate: sampleRate, origin: origin)
        func level(at sample: Int64) -> Double { levels.level(at: sample) }
        let quiet = max(0.002, typical * 0.1)
        // First where each note's sound begins and how loud it is held.
        let starts = sorted.enumerated().map { index, note -> (onset: Int64?, sustained: Double) in
            let length = note.end - note.start
            // Where the note's sound begins: the level rising out of the
            // dip before it, searched from 200 ms early to 250 ms late
            // (never into the notes either side).
            let previousStart = index > 0 ? sorted[index - 1].start + (sorted[index - 1].end - sorted[index - 1].start) / 2 : note.start - Int64(rate * 0.2)
            let searchFrom = max(previousStart, note.start - Int64(rate * 0.2))
            let searchTo = min(note.start + Int64(rate * 0.25), note.start + length * 3 / 4)
            let interiorFrom = note.start + min(Int64(rate * 0.06), length / 3)
            let interiorTo = note.end - min(Int64(rate * 0.03), length / 4)
            // Sustained level: the median over the note's interior.
            var levels: [Double] = []
            var sample = interiorFrom
            while sample < interiorTo {
                levels.append(level(at: sample))
                sample += Int64(step) * 4
            }
            levels.sort()
            let sustained = levels.isEmpty ? 0 : levels[levels.count / 2]
            var onset: Int64?
            if sustained > quiet {
                var dip = searchFrom
                var lowest = Double.infinity
                var probe = searchFrom
                while probe <= min(searchTo, note.start + Int64(rate * 0.1)) {
                    let value = level(at: probe)
                    if value < lowest {
                        lowest = value
                        dip = probe
                    }
                    probe += Int64(step)
                }
                if lowest < sustained * 0.5 {
                    probe = dip
                    while probe <= searchTo {
                        if level(at: probe) >= sustained * 0.3 {
                            onset = probe
                            break
                        }
                        probe += Int64(step)
                    }
                }
            }
            return (onset, sustained)
        }
        // Then the pitch over each note's interior: from 40 ms after its
        // onset to 30 ms before the next note's (an early entry cuts it short).
        let measured = sorted.enumerated().map { index, note -> (sung: Bool, onset: Double?, times: [Double], cents: [Double]) in
            let length = note.end - note.start
            let (onset, sustained) = starts[index]
            let interiorFrom = note.start + min(Int64(rate * 0.06), length / 3)
            var interiorTo = note.end - min(Int64(rate * 0.03), length / 4)
            if index + 1 < sorted.count, let next = starts[index + 1].onset { interiorTo = min(interiorTo, next - Int64(rate * 0.03)) }
            let from = max(interiorFrom, (onset ?? note.start) + Int64(rate * 0.04))
            let firstFrame = Int((max(0, from - origin) + Int64(hop) - 1) / Int64(hop))
            let lastFrame = Int(max(0, interiorTo - origin) / Int64(hop))
            var times: [Double] = []
            var cents: [Double] = []
            var frames = 0
            if firstFrame <= lastFrame {
                for frame in firstFrame...min(lastFrame, estimates.count - 1) where frame >= 0 {
                    frames += 1
                    let estimate = estimates[frame]
                    guard estimate.voiced, estimate.frequency > 0, level(at: origin + Int64(frame * hop)) > quiet else { continue }
                    times.append(Double(frame * hop) / rate + timeShift)
                    cents.append(1_200 * log2(estimate.frequency / note.frequency))
                }
            }
            let sung = frames > 0 && Double(cents.count) >= Double(frames) * 0.5 && sustained > quiet
            return (sung, onset.map { Double($0 - note.start) * 1_000 / rate }, times, cents)
        }
        // The singer's vibrato rate: the median of the notes long enough to
        // show two cycles; short notes are then read at that rate.
        // Each long note's own vibrato rate (the costly part: a fit per
        // candidate rate), the notes shared among the cores.
        let ownRate = { (note: (sung: Bool, onset: Double?, times: [Double], cents: [Double])) -> Double? in
            guard note.sung, note.cents.count >= 8, let last = note.times.last, let first = note.times.first, last - first >= 0.45 else { return nil }
            return Self.bestRate(times: note.times, cents: note.cents)
        }
        let ownRates = detectors.count > 1 ? Self.concurrentMap(measured, ownRate) : measured.map(ownRate)
        return zip(measured, ownRates).map { note, own in
            MeasuredNote(sung: note.sung, onset: note.onset, times: note.times, cents: note.cents, ownRate: own)
        }
    }

    /// The notes' analyses from their readings: each centre fitted with
    /// its own vibrato rate, or the singer's on a note without one (a
    /// short note): the median of the long notes' own rates heard up to and
    /// with that note, as a listener knows a singer's vibrato — so a note's
    /// centre never waits on the rest of the take, and the needle's word on
    /// it just after (`NoteVerdicts`) is this one. `heardBefore`: the own
    /// rates of the notes before the first of `measured`. Frame times
    /// count from song sample `origin`.
    public func finish(_ measured: [MeasuredNote], origin: Int64, heardBefore: [Double] = []) -> [NoteAnalysis] {
        let rate = Double(sampleRate)
        var heard = heardBefore.sorted()
        return measured.map { note in
            if let own = note.ownRate { heard.insert(own, at: heard.firstIndex { $0 > own } ?? heard.count) }
            let singerRate = heard.isEmpty ? nil : heard[heard.count / 2]
            guard note.sung else { return NoteAnalysis(sung: false, score: 0) }
            let shape = Self.centre(times: note.times, cents: note.cents, own: note.ownRate, rate: singerRate)
            let pitchScore = max(0, min(100, (50 - abs(shape.centre)) / 40 * 100))
            let timingScore = note.onset.map { max(0, min(100, (150 - abs($0)) / 120 * 100)) } ?? 100
            var analysis = NoteAnalysis(sung: true, cents: shape.centre, stability: shape.stability, vibratoRate: shape.vibrato?.rate,
                                        vibratoExtent: shape.vibrato?.extent, onsetMilliseconds: note.onset, score: 0.7 * pitchScore + 0.3 * timingScore)
            analysis.curve = zip(note.times, note.cents).map { (origin + Int64(($0.0 * rate).rounded()), $0.1) }
            return analysis
        }
    }

    /// Analyses `notes` (in time order) in a take too long to hold: its
    /// `frameCount` samples (sample `i` is song sample `origin + i`) read in
    /// order through `read` (from, count, into: the samples read), a stretch
    /// of notes at a time — at most about `stretchSeconds` of audio, cut
    /// between notes, each read with the notes either side for context —
    /// so memory holds one stretch, whatever the take's length. `typical`
    /// is the take's level (`typicalLevel`, found beforehand).
    public func analyze(frameCount: Int, origin: Int64, notes: [TargetNote], typical: Double, stretchSeconds: Int = 30,
                        read: (Int, Int, UnsafeMutablePointer<Float>) -> Int) -> [NoteAnalysis] {
        guard !notes.isEmpty else { return [] }
        let rate = Int64(sampleRate)
        // Where a note's reading looks: from before its entry search to
        // past its end, with two YIN windows either side.
        let reach = Int64(2 * 2 * 2_048 * sampleRate / 48_000)
        func window(_ note: TargetNote) -> Range<Int64> { (note.start - rate / 4 - reach)..<(note.end + rate / 4 + reach) }
        var groups: [Range<Int>] = []
        var first = 0
        while first < notes.count {
            var last = first
            while last + 1 < notes.count, notes[last + 1].end - notes[first].start <= Int64(stretchSeconds) * rate { last += 1 }
            groups.append(first..<(last + 1))
            first = last + 1
        }
        var measured: [MeasuredNote] = []
        measured.reserveCapacity(notes.count)
        var buffer: [Float] = []
        var bufferStart = 0  // the take frame of buffer[0]
        for group in groups {
            // The notes either side are read too (an entry's search starts at
            // the previous note's middle; a note's pitch stops before the next entry).
            let context = max(0, group.lowerBound - 1)..<min(notes.count, group.upperBound + 1)
            let from = context.map { window(notes[$0]).lowerBound }.min()! - origin
            let to = context.map { window(notes[$0]).upperBound }.max()! - origin
            // On the hop grid of the whole take, inside the audio.
            let start = max(0, Int(from) / hop * hop)
            let end = min(frameCount, max(start, Int(to)))
            // Keep what is already read of this stretch; read the rest in order.
            if start >= bufferStart + buffer.count || start < bufferStart {
                buffer = []
                bufferStart = start
            } else {
                buffer.removeFirst(start - bufferStart)
                bufferStart = start
            }
            var position = bufferStart + buffer.count
            if position < start { position = start }
            if end > position {
                let old = buffer.count
                buffer += [Float](repeating: 0, count: end - position)
                let got = buffer.withUnsafeMutableBufferPointer { read(position, end - position, $0.baseAddress! + old) }
                if got < end - position { buffer.removeLast(end - position - got) }
            }
            let readings = measure(buffer, origin: origin + Int64(bufferStart), notes: Array(notes[context]), typical: typical, timeOrigin: origin)
            measured += readings[(group.lowerBound - context.lowerBound)..<(group.upperBound - context.lowerBound)]
        }
        return finish(measured, origin: origin)
    }

    /// A least-squares fit of centre (+ a line, on long notes) + a sinusoid
    /// at `rate` Hz: the centre at the note's middle, the sinusoid's
    /// amplitude, the residual's mean square.
    static func fit(times: [Double], cents: [Double], rate: Double, line: Bool) -> (centre: Double, amplitude: Double, meanSquare: Double)? {
        fit(times: times, cents: cents, rate: rate, line: line, values: false).map { ($0.centre, $0.amplitude, $0.meanSquare) }
    }

    static func fit(times: [Double], cents: [Double], rate: Double, line: Bool, values: Bool)
        -> (centre: Double, amplitude: Double, meanSquare: Double, values: [Double])? {
        let t0 = times[0]
        let duration = times[times.count - 1] - t0
        let w = 2 * Double.pi * rate
        // sin and cos of w·t by rotation from frame to frame (frames are
        // mostly a hop apart: one sin and cos per distinct step, not per
        // frame — this fit runs ~80 times per long note).
        var sines = [Double](repeating: 0, count: times.count)
        var cosines = [Double](repeating: 1, count: times.count)
        var step = (delta: -1.0, sin: 0.0, cos: 1.0)
        for index in times.indices.dropFirst() {
            let delta = times[index] - times[index - 1]
            if delta != step.delta { step = (delta, sin(w * delta), cos(w * delta)) }
            sines[index] = sines[index - 1] * step.cos + cosines[index - 1] * step.sin
            cosines[index] = cosines[index - 1] * step.cos - sines[index - 1] * step.sin
        }
        // The normal equations' sums, rows (1, sin, cos, t − middle).
        var (n, sS, sC, sL, sSS, sSC, sSL, sCC, sCL, sLL) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        var (v1, vS, vC, vL) = (0.0, 0.0, 0.0, 0.0)
        for index in times.indices {
            let (sine, cosine, l, value) = (sines[index], cosines[index], times[index] - t0 - duration / 2, cents[index])
            n += 1
            sS += sine; sC += cosine; sL += l
            sSS += sine * sine; sSC += sine * cosine; sSL += sine * l
            sCC += cosine * cosine; sCL += cosine * l; sLL += l * l
            v1 += value; vS += sine * value; vC += cosine * value; vL += l * value
        }
        let matrix = line
            ? [[n, sS, sC, sL], [sS, sSS, sSC, sSL], [sC, sSC, sCC, sCL], [sL, sSL, sCL, sLL]]
            : [[n, sS, sC], [sS, sSS, sSC], [sC, sSC, sCC]]
        let vector = line ? [v1, vS, vC, vL] : [v1, vS, vC]
        guard let solution = solve(matrix, vector) else { return nil }
        var residual = 0.0
        var curve: [Double] = []
        if values { curve.reserveCapacity(times.count) }
        for index in times.indices {
            var fitted = solution[0] + solution[1] * sines[index] + solution[2] * cosines[index]
            if line { fitted += solution[3] * (times[index] - t0 - duration / 2) }
            if values { curve.append(fitted) }
            residual += (cents[index] - fitted) * (cents[index] - fitted)
        }
        return (solution[0], (solution[1] * solution[1] + solution[2] * solution[2]).squareRoot(), residual / Double(cents.count), curve)
    }

    /// The fit again over the frames within `limit` cents of the first fit.
    static func refit(times: [Double], cents: [Double], rate: Double, line: Bool, limit: Double) -> (centre: Double, amplitude: Double, meanSquare: Double)? {
        guard let first = fitCurve(times: times, cents: cents, rate: rate, line: line) else { return nil }
        let kept = zip(times, cents).enumerated().filter { abs($0.element.1 - first[$0.offset]) <= limit }.map(\.element)
        guard kept.count >= 8, kept.count < times.count else { return nil }
        return fit(times: kept.map(\.0), cents: kept.map(\.1), rate: rate, line: line)
    }

    /// The first fit's values at each frame.
    static func fitCurve(times: [Double], cents: [Double], rate: Double, line: Bool) -> [Double]? {
        guard let fitted = fit(times: times, cents: cents, rate: rate, line: line, values: true) else { return nil }
        return fitted.values
    }

    /// `transform` of each element, the elements shared among the cores.
    static func concurrentMap<Element, Result>(_ elements: [Element], _ transform: (Element) -> Result) -> [Result] {
        guard elements.count > 1 else { return elements.map(transform) }
        return [Result](unsafeUninitializedCapacity: elements.count) { buffer, count in
            let base = buffer.baseAddress!
            withoutActuallyEscaping(transform) { transform in
                // Each index written once by one thread; the elements only read.
                nonisolated(unsafe) let (transform, base, elements) = (transform, base, elements)
                DispatchQueue.concurrentPerform(iterations: elements.count) { index in
                    (base + index).initialize(to: transform(elements[index]))
                }
            }
            count = elements.count
        }
    }

    /// The vibrato rate of a long note (4–8 Hz, the fit that leaves least),
    /// or nil when no sinusoid of 8 cents or more explains half its variance.
    static func bestRate(times: [Double], cents: [Double]) -> Double? {
        let mean = cents.reduce(0, +) / Double(cents.count)
        let variance = cents.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(cents.count)
        var best: (rate: Double, amplitude: Double, meanSquare: Double)?
        var rate = 4.0
        while rate <= 8.0001 {
            if let fitted = fit(times: times, cents: cents, rate: rate, line: true), best == nil || fitted.meanSquare < best!.meanSquare {
                best = (rate, fitted.amplitude, fitted.meanSquare)
            }
            rate += 0.05
        }
        guard let best, best.amplitude >= 8, best.meanSquare < variance * 0.5 else { return nil }
        return best.rate
    }

    /// The centre of a pitch curve, its wander and its vibrato. With the
    /// singer's vibrato rate known, the fit of centre + sinusoid at that
    /// rate (`own`, its own best rate, on a long note) gives the centre, unbiased
    /// by a partial cycle, when the sinusoid is 8 cents or more; otherwise
    /// the median. Wander: what the fit leaves, as a standard deviation.
    static func centre(times allTimes: [Double], cents allCents: [Double], own: Double?, rate singerRate: Double?) -> (centre: Double, stability: Double, vibrato: (rate: Double, extent: Double)?) {
        // The pitch held: frames over `heldReach` cents from the note's
        // median are the voice still on its way in or already on its way
        // out (real singers slide into and out of notes, the annotation's
        // edges hold the slide): a scoop from a third below pulled a
        // centre sung at -20 to -79.
        let allSorted = allCents.sorted()
        let allMedian = allSorted[allSorted.count / 2]
        let held = allCents.indices.filter { abs(allCents[$0] - allMedian) <= heldReach }
        let (times, cents) = held.count >= 8 && held.count * 2 >= allCents.count ? (held.map { allTimes[$0] }, held.map { allCents[$0] }) : (allTimes, allCents)
        let sorted = cents.sorted()
        let median = sorted[sorted.count / 2]
        let mean = cents.reduce(0, +) / Double(cents.count)
        let spread = (cents.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(cents.count)).squareRoot()
        let duration = (times.last ?? 0) - (times.first ?? 0)
        guard cents.count >= 8, duration >= 0.08 else { return (median, spread, nil) }
        guard let rate = own ?? singerRate,
              var fitted = fit(times: times, cents: cents, rate: rate, line: duration >= 0.6), fitted.amplitude >= 8 else {
            return (median, spread, nil)
        }
        // Once more without the frames the fit leaves far off (a neighbour's
        // sound, a crack): least squares is not robust by itself.
        if let again = refit(times: times, cents: cents, rate: rate, line: duration >= 0.6, limit: 3 * max(2, fitted.meanSquare.squareRoot())) {
            fitted = again
        }
        return (fitted.centre, fitted.meanSquare.squareRoot(), (rate, fitted.amplitude))
    }

    /// How far from a note's median pitch a frame is still the note held,
    /// cents (vibrato reaches ±100).
    static let heldReach = 120.0

    /// Gaussian elimination with partial pivoting; nil when singular.
    static func solve(_ matrix: [[Double]], _ vector: [Double]) -> [Double]? {
        var a = matrix
        var b = vector
        let n = b.count
        for column in 0..<n {
            guard let pivot = (column..<n).max(by: { abs(a[$0][column]) < abs(a[$1][column]) }), abs(a[pivot][column]) > 1e-12 else { return nil }
            a.swapAt(column, pivot)
            b.swapAt(column, pivot)
            for row in (column + 1)..<n {
                let factor = a[row][column] / a[column][column]
                for k in column..<n { a[row][k] -= factor * a[column][k] }
                b[row] -= factor * b[column]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var sum = b[row]
            for k in (row + 1)..<n { sum -= a[row][k] * x[k] }
            x[row] = sum / a[row][row]
        }
        return x
    }
}
