internal import CRubberBand
public import AcapellaEngine
public import AcapellaScore
import Foundation

/// How a take recorded at one tempo and key is heard at another: its
/// frames stretched by `ratio` (output frames per recorded frame: 5/4 plays
/// a take recorded at 100 % at 80 %) and shifted by `semitones`, formants
/// kept (a voice a tone lower still sounds like that voice).
public struct TakeStretch: Hashable, Sendable, CustomStringConvertible {
    /// Output frames per recorded frame: the recorded tempo scale over the playing one.
    public var ratio: Rational
    /// Semitones up (the playing transposition less the recorded one).
    public var semitones: Int
    /// Cents up besides (a note put in tune).
    public var cents: Double

    public init(ratio: Rational = Rational(1), semitones: Int = 0, cents: Double = 0) {
        self.ratio = ratio
        self.semitones = semitones
        self.cents = cents
    }

    /// What a take recorded at `recorded` needs to be heard at `playing`
    /// (tempo scales: 4/5 is 80 %).
    public init(recordedTempo: Rational, recordedTranspose: Int, playingTempo: Rational, playingTranspose: Int) {
        // Samples of a tick scale as 1 / tempo: played/recorded = recorded scale / playing scale.
        let ratio = (try? recordedTempo.multiplied(by: Rational(playingTempo.denominator, playingTempo.numerator))) ?? Rational(1)
        self.init(ratio: ratio, semitones: playingTranspose - recordedTranspose)
    }

    /// Nothing to do.
    public var isIdentity: Bool { ratio == Rational(1) && semitones == 0 && cents == 0 }
    /// The ratio as Rubber Band takes it.
    public var timeRatio: Double { Double(ratio.numerator) / Double(ratio.denominator) }
    /// The frequency factor.
    public var pitchScale: Double { pow(2, (Double(semitones) * 100 + cents) / 1_200) }

    /// "95 % of the tempo sung, 2 semitones down".
    public var description: String {
        var words: [String] = []
        if ratio != Rational(1) {
            let percent = 100 / timeRatio
            let rounded = (percent * 10).rounded() / 10
            words.append("\(rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)) % of the tempo sung")
        }
        if semitones != 0 { words.append("\(abs(semitones)) semitone\(abs(semitones) == 1 ? "" : "s") \(semitones > 0 ? "up" : "down")") }
        if cents != 0 { words.append(String(format: "%+.1f cents", cents)) }
        return words.isEmpty ? "as sung" : words.joined(separator: ", ")
    }

    /// The output frame of input frame `input`, for a stretch that puts
    /// input `anchor.input` on output `anchor.output` (rounded to the frame).
    public func output(of input: Int64, from anchor: StretchAnchor) -> Int64 {
        anchor.output + Self.scaled(input - anchor.input, ratio)
    }

    /// The input frame heard at output frame `output` (rounded down).
    public func input(at output: Int64, from anchor: StretchAnchor) -> Int64 {
        anchor.input + Self.scaled(output - anchor.output, Rational(ratio.denominator, ratio.numerator), down: true)
    }

    static func scaled(_ frames: Int64, _ ratio: Rational, down: Bool = false) -> Int64 {
        let product = Int128(frames) * ratio.numerator
        let (quotient, remainder) = product.quotientAndRemainder(dividingBy: ratio.denominator)
        if down { return Int64(remainder < 0 ? quotient - 1 : quotient) }
        // Nearest, halves away from zero.
        let twice = 2 * remainder.magnitude
        return Int64(twice >= ratio.denominator.magnitude ? quotient + (product < 0 ? -1 : 1) : quotient)
    }
}

/// A recorded frame and the output frame it must land on: a note's entry
/// (the recorded note onset on the same note's sample at the playing
/// tempo), or the song's first sample.
public struct StretchAnchor: Hashable, Sendable {
    public var input: Int64
    public var output: Int64

    public init(input: Int64, output: Int64) {
        self.input = input
        self.output = output
    }
}

/// Rubber Band's errors are a missing library or nonsense arguments, both
/// ruled out before the calls; this names what the stretcher was asked.
public struct StretchError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// Stretching a whole signal: Rubber Band's offline mode with its finer
/// engine (R3), formants preserved, every anchor put exactly on its output
/// frame by Rubber Band's key-frame map. For the mixdown, the page's
/// downloads, the USB export and `acapella correct`. The signal is read a
/// chunk at a time, twice (Rubber Band studies it, then stretches it), and
/// the output handed on as it comes: nothing holds the whole of either
/// (`run`); `process` is the same over arrays.
public enum OfflineStretcher {
    /// Frames read and handed to Rubber Band at a time.
    static let chunk = 16_384

    /// `samples` stretched by `stretch`: `round(count × ratio)` frames;
    /// each anchor's input frame lands on its output frame.
    public static func process(_ samples: [Float], sampleRate: Int, stretch: TakeStretch, anchors: [StretchAnchor] = []) throws(StretchError) -> [Float] {
        guard !samples.isEmpty else { return [] }
        if stretch.isIdentity { return samples }
        var output: [Float] = []
        output.reserveCapacity(Int(TakeStretch.scaled(Int64(samples.count), stretch.ratio)))
        try samples.withUnsafeBufferPointer { input throws(StretchError) in
            try run(count: samples.count, sampleRate: sampleRate, stretch: stretch, anchors: anchors,
                    read: { at, count, into in into.update(from: input.baseAddress! + at, count: count) },
                    write: { piece in output.append(contentsOf: piece) })
        }
        return output
    }

    /// The signal of `count` frames that `read(at, n, into)` gives (each
    /// chunk in order, twice) stretched by `stretch`, handed to `write` in
    /// order: exactly `round(count × ratio)` frames in all (zeros after
    /// Rubber Band's last, as an array of that length would hold).
    public static func run(count: Int, sampleRate: Int, stretch: TakeStretch, anchors: [StretchAnchor],
                           read: (Int, Int, UnsafeMutablePointer<Float>) -> Void,
                           write: (UnsafeBufferPointer<Float>) throws(StretchError) -> Void) throws(StretchError) {
        guard count > 0 else { return }
        let options = Int32(RubberBandOptionProcessOffline.rawValue | RubberBandOptionEngineFiner.rawValue | RubberBandOptionFormantPreserved.rawValue
            | RubberBandOptionPitchHighQuality.rawValue | RubberBandOptionThreadingNever.rawValue)
        guard let state = rubberband_new(UInt32(sampleRate), 1, options, stretch.timeRatio, stretch.pitchScale) else {
            throw StretchError(description: "Rubber Band would not make a stretcher for \(stretch)")
        }
        defer { rubberband_delete(state) }
        let wanted = Int(TakeStretch.scaled(Int64(count), stretch.ratio))
        rubberband_set_expected_input_duration(state, UInt32(count))
        rubberband_set_max_process_size(state, UInt32(chunk))
        let input = UnsafeMutablePointer<Float>.allocate(capacity: chunk)
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: chunk)
        defer {
            input.deallocate()
            scratch.deallocate()
        }
        // The signal a chunk at a time: its length, whether it is the last.
        func inChunks(_ body: (Int, Int32) throws(StretchError) -> Void) throws(StretchError) {
            var at = 0
            while at < count {
                let n = min(chunk, count - at)
                read(at, n, input)
                try body(n, at + n >= count ? 1 : 0)
                at += n
            }
        }
        try inChunks { (n, final) throws(StretchError) in
            var pointer: UnsafePointer<Float>? = UnsafePointer(input)
            rubberband_study(state, &pointer, UInt32(n), final)
        }
        // The key frames: strictly increasing on both sides, inside the signal.
        var from: [UInt32] = []
        var to: [UInt32] = []
        for anchor in anchors.sorted(by: { $0.input < $1.input }) where anchor.input > 0 && anchor.input < Int64(count) && anchor.output > 0 {
            if let last = from.last, UInt32(anchor.input) <= last || UInt32(anchor.output) <= to.last! { continue }
            from.append(UInt32(anchor.input))
            to.append(UInt32(anchor.output))
        }
        if !from.isEmpty { rubberband_set_key_frame_map(state, UInt32(from.count), &from, &to) }
        var written = 0
        // Everything Rubber Band has ready, after each chunk (left waiting,
        // it would change when the key frames' ratios are taken up).
        func drain() throws(StretchError) {
            while true {
                let available = Int(rubberband_available(state))
                guard available > 0 else { return }
                var pointer: UnsafeMutablePointer<Float>? = scratch
                let got = Int(rubberband_retrieve(state, &pointer, UInt32(min(available, chunk))))
                let keep = min(got, wanted - written)
                if keep > 0 { try write(UnsafeBufferPointer(start: scratch, count: keep)) }
                written += max(0, keep)
                if got == 0 { return }
            }
        }
        try inChunks { (n, final) throws(StretchError) in
            var pointer: UnsafePointer<Float>? = UnsafePointer(input)
            rubberband_process(state, &pointer, UInt32(n), final)
            try drain()
        }
        try drain()
        // What Rubber Band gave less than the stretched length: silence.
        scratch.initialize(repeating: 0, count: chunk)
        while written < wanted {
            let n = min(chunk, wanted - written)
            try write(UnsafeBufferPointer(start: scratch, count: n))
            written += n
        }
    }
}

/// A take heard at another tempo or key while the box plays: Rubber Band's
/// real-time mode (its finer engine with the short window: as fast as the
/// faster engine and half its timing error; formants preserved) run by the
/// butler ahead of the render thread, which only copies the blocks it
/// finds (`TakeStream`). Anchored on the time map: a start or a move (a
/// locate, a loop's start) restarts the stretcher on the exact output
/// frame of that place, counted from the last written note's entry before
/// it, the stretcher's start delay read off before the first frame kept;
/// between moves it keeps the ratio without drifting (over 60 s of tone
/// bursts at 80 % and 125 %: entries within 2 ms, no growth). Restarting
/// at every entry was measured worse: two phase-vocoder runs crossfaded
/// partly cancel, and the analysis then misses the entry. Two runs are
/// kept, each going on from where it stopped: the butler reads ahead at
/// the playing position and at a loop's start by turns, and each place
/// stays one continuous run (no seam where a loop's second block follows
/// its first); a read at a third place restarts the run used longest ago.
public final class StretchedBlockSource: TakeBlockSource, @unchecked Sendable {
    // @unchecked: read by one reader at a time (the butler, or whoever
    // primes the stream), like the source it wraps.

    let inner: any TakeBlockSource
    public var damage: SampleDamage { inner.damage }
    public let stretch: TakeStretch
    /// Sorted by output; the first is where the song starts.
    let anchors: [StretchAnchor]
    public let frameCount: Int64
    /// The runs, the output frame each gives next (Int64.min: none yet)
    /// and when it was last read.
    private var runs: [(run: StretchRun, next: Int64, used: Int)]
    private var reads = 0
    /// Restarts made, ever (the first read at each place and every move).
    public private(set) var restarts = 0

    /// `inner` (recorded frames) heard through `stretch`; `anchors` put
    /// recorded frames on output frames (the first: the song's start).
    public init(_ inner: any TakeBlockSource, sampleRate: Int, stretch: TakeStretch, anchors: [StretchAnchor]) throws(StretchError) {
        self.inner = inner
        self.stretch = stretch
        let sorted = anchors.sorted { $0.output < $1.output }
        self.anchors = sorted.isEmpty ? [StretchAnchor(input: 0, output: 0)] : sorted
        frameCount = max(0, TakeStretch.scaled(inner.frameCount, stretch.ratio))
        runs = [(try StretchRun(sampleRate: sampleRate, stretch: stretch), Int64.min, 0), (try StretchRun(sampleRate: sampleRate, stretch: stretch), Int64.min, 0)]
    }

    public func read(from first: Int64, count: Int, into destination: UnsafeMutablePointer<Float>) -> Int {
        reads += 1
        var chosen = runs.firstIndex { $0.next == first } ?? -1
        if chosen < 0 {
            // A new place: the run read longest ago starts there, from the last entry at or before it.
            chosen = runs.indices.min { runs[$0].used < runs[$1].used } ?? 0
            let index = anchors.partitionIndex { $0.output > first }
            start(runs[chosen].run, anchor: anchors[max(0, index - 1)], firstOutput: first)
            restarts += 1
        }
        runs[chosen].run.produce(count, into: destination, from: inner)
        runs[chosen].next = first + Int64(count)
        runs[chosen].used = reads
        return count
    }

    /// Starts the run so that its first frame given is output
    /// `firstOutput`, on the map through `anchor`; fed from a little
    /// before, so the stretcher has its window of history there.
    private func start(_ run: StretchRun, anchor: StretchAnchor, firstOutput: Int64) {
        let preroll = Int64(2_048)
        // Input frames a whole number of the ratio's denominators from the
        // anchor, so their output frame is exact.
        let step = Int64(max(1, min(Int128(4_096), stretch.ratio.denominator)))
        var input = stretch.input(at: firstOutput, from: anchor) - preroll
        let distance = anchor.input - input
        input = anchor.input - (distance >= 0 ? (distance + step - 1) / step : distance / step) * step
        run.restart(input: input, output: stretch.output(of: input, from: anchor), firstKept: firstOutput)
    }
}

/// One Rubber Band real-time stretcher and where it is: the next input
/// frame it is fed and the output frame it gives next.
final class StretchRun {
    private let state: OpaquePointer
    private let startPad: Int
    private let startDelay: Int
    private var nextInput: Int64 = 0
    /// Output samples still to drop before the first one kept.
    private var toDrop = 0
    private var input: [Float]
    private var scratch: [Float]

    init(sampleRate: Int, stretch: TakeStretch) throws(StretchError) {
        let options = Int32(RubberBandOptionProcessRealTime.rawValue | RubberBandOptionEngineFiner.rawValue | RubberBandOptionWindowShort.rawValue | RubberBandOptionFormantPreserved.rawValue
            | RubberBandOptionPitchHighConsistency.rawValue | RubberBandOptionThreadingNever.rawValue)
        guard let state = rubberband_new(UInt32(sampleRate), 1, options, stretch.timeRatio, stretch.pitchScale) else {
            throw StretchError(description: "Rubber Band would not make a stretcher for \(stretch)")
        }
        self.state = state
        rubberband_set_max_process_size(state, 4_096)
        startPad = Int(rubberband_get_preferred_start_pad(state))
        startDelay = Int(rubberband_get_start_delay(state))
        input = [Float](repeating: 0, count: max(4_096, startPad))
        scratch = [Float](repeating: 0, count: 4_096)
    }

    deinit { rubberband_delete(state) }

    /// From input frame `input` (heard at output frame `output`), the
    /// first frame given being output `firstKept` (≥ `output`).
    func restart(input: Int64, output: Int64, firstKept: Int64) {
        rubberband_reset(state)
        self.input.withUnsafeMutableBufferPointer { buffer in
            buffer.update(repeating: 0)
            var pointer: UnsafePointer<Float>? = UnsafePointer(buffer.baseAddress!)
            rubberband_process(state, &pointer, UInt32(startPad), 0)
        }
        nextInput = input
        toDrop = startDelay + Int(max(0, firstKept - output))
    }

    /// The next `count` output frames into `destination`, fed from `source`.
    func produce(_ count: Int, into destination: UnsafeMutablePointer<Float>, from source: any TakeBlockSource) {
        var done = 0
        while done < count {
            let available = Int(rubberband_available(state))
            if available > 0 {
                if toDrop > 0 {
                    let n = min(available, toDrop, scratch.count)
                    scratch.withUnsafeMutableBufferPointer { buffer in
                        var pointer: UnsafeMutablePointer<Float>? = buffer.baseAddress!
                        toDrop -= Int(rubberband_retrieve(state, &pointer, UInt32(n)))
                    }
                    continue
                }
                var pointer: UnsafeMutablePointer<Float>? = destination + done
                done += Int(rubberband_retrieve(state, &pointer, UInt32(min(available, count - done))))
                continue
            }
            feed(from: source)
        }
    }

    private func feed(from source: any TakeBlockSource) {
        let wanted = min(input.count, max(512, Int(rubberband_get_samples_required(state))))
        let frames = source.frameCount
        input.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            base.update(repeating: 0, count: wanted)
            // Frames outside the take are silence.
            let from = max(nextInput, 0)
            let to = min(nextInput + Int64(wanted), frames)
            if to > from { _ = source.read(from: from, count: Int(to - from), into: base + Int(from - nextInput)) }
            var pointer: UnsafePointer<Float>? = UnsafePointer(base)
            rubberband_process(state, &pointer, UInt32(wanted), 0)
        }
        nextInput += Int64(wanted)
    }
}
