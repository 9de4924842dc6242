internal import CFFTW

#if canImport(Glibc)
import Glibc
#endif

/// One pitch estimate.
public struct PitchEstimate: Hashable, Sendable {
    /// The sample at the centre of the window whose data gave it.
    public var centreSample: Int64
    /// Fundamental frequency, Hz (0 when unvoiced).
    public var frequency: Double
    /// YIN's aperiodicity at the chosen lag (0: perfectly periodic).
    public var aperiodicity: Double
    /// Voiced: periodic enough and loud enough.
    public var voiced: Bool
    /// An estimate.
    public init(centreSample: Int64, frequency: Double, aperiodicity: Double, voiced: Bool) {
        self.centreSample = centreSample
        self.frequency = frequency
        self.aperiodicity = aperiodicity
        self.voiced = voiced
    }

    /// 1 − aperiodicity, clamped (0 when unvoiced).
    public var confidence: Double { voiced ? max(0, min(1, 1 - aperiodicity)) : 0 }
}

/// The YIN fundamental-frequency estimator (A. de Cheveigné and H.
/// Kawahara, "YIN, a fundamental frequency estimator for speech and music",
/// JASA 111(4), 2002): difference function, cumulative mean normalized
/// difference, absolute threshold, parabolic refinement; voicing from the
/// aperiodicity and the level.
///
/// The difference function comes from FFTs (FFTW single precision,
/// O(N log N)) instead of the O(N²) loop: d(τ) = e(0) + e(τ) − 2·r(τ), with
/// the autocorrelation r from one complex forward transform holding both the
/// frame and its first `integration` samples, and one inverse, and the
/// energies e from running sums. The transform is the smallest planned size (the window,
/// or a half or quarter of it) that holds the integration plus the largest
/// lag searched: a circular correlation of that size wraps nothing those
/// lags read.
///
/// Create, process, destroy (STYLE.md habit 12): `init` allocates and plans;
/// `estimate` neither allocates nor fails.
public final class YINDetector {
    /// Samples per second.
    public let sampleRate: Int
    /// Window length (2048 at 48 kHz, scaled with the rate).
    public let window: Int
    /// Largest lag searched (half the window).
    public let maximumLag: Int
    /// Absolute threshold on the normalized difference.
    public var threshold = 0.10
    /// Above this aperiodicity a frame is unvoiced.
    public var voicingLimit = 0.30
    /// Below this RMS a frame is silence.
    public var silenceRMS: Float = 0.000_5
    /// The highest pitch a voice is read at (C7, past a soprano's whistle
    /// notes): a frame read higher after the octave checks (which start
    /// from a strong upper harmonic's short lag) is no voice — a fading
    /// tone's last frames read as 2–7 kHz, "perfectly periodic", and made
    /// false alarms (and, beside a legato change, a side to read it by).
    public static let highestFrequency = 2_100.0
    /// The lowest pitch a voice sings, Hz (a semitone under C2, a low
    /// bass's lowest note). Without a score, a frame read lower is mains
    /// hum (50 or 60 Hz), rumble or a voice read many periods at once
    /// (a voice at a multiple of the hum's frequency repeats with it): it is
    /// read at the shortest part of that period the signal repeats at, or
    /// not at all.
    public static let lowestVoice = 61.7

    private let input: UnsafeMutablePointer<Float>
    /// The frame and its first `integration` samples as one complex
    /// signal (real and imaginary parts), and its transform.
    private let packed: UnsafeMutablePointer<fftwf_complex>
    private let spectrumPacked: UnsafeMutablePointer<fftwf_complex>
    /// conj(H)·F, the inverse transform's input.
    private let spectrumProduct: UnsafeMutablePointer<fftwf_complex>
    private let correlation: UnsafeMutablePointer<Float>
    private let difference: UnsafeMutablePointer<Double>
    private let rawDifference: UnsafeMutablePointer<Double>
    private let squares: UnsafeMutablePointer<Double>
    /// `track`'s long look, at half the rate (made on first use).
    private lazy var halfRate: YINDetector? = {
        guard sampleRate >= 32_000, window >= 512 else { return nil }
        let detector = YINDetector(sampleRate: sampleRate / 2, window: window / 2)
        return detector
    }()
    /// Transform sizes, largest (the window) first, with their two plans.
    private let sizes: [Int]
    private let plans: [Plans]
    private typealias Plans = (forward: OpaquePointer, backward: OpaquePointer)

    /// The sample rates the detector works at: below, the window cannot
    /// hold the lowest voice's period; above, it would be too large to plan.
    public static let sampleRates = 8_000...384_000

    /// A detector for `sampleRate`; the window defaults to 2048 at 48 kHz,
    /// scaled (to a power of two) for other rates. FFTW estimates its plans
    /// (instant): timing candidates (FFTW_MEASURE) took 0.85 s in a fresh
    /// process and ran no faster over a 10-minute file (2.10 s against
    /// 1.27 s end to end), so `pitch` on a short file was all start-up.
    public init(sampleRate: Int, window: Int? = nil) {
        precondition(Self.sampleRates.contains(sampleRate), "YIN at \(sampleRate) Hz: check YINDetector.sampleRates first")
        var length = 2_048
        if window == nil {
            let wanted = 2_048.0 * Double(sampleRate) / 48_000
            while Double(length) > wanted * 1.4 { length /= 2 }
            while Double(length) < wanted / 1.4 { length *= 2 }
        }
        // (The transforms take the spectrum apart by symmetry with a mask: a power of two.)
        precondition((window ?? length) >= 64 && (window ?? length).nonzeroBitCount == 1, "YIN's window is a power of two from 64, not \(window ?? length)")
        self.sampleRate = sampleRate
        self.window = window ?? length
        maximumLag = self.window / 2
        let size = self.window
        input = fftwf_alloc_real(size)!
        packed = fftwf_alloc_complex(size)!
        spectrumPacked = fftwf_alloc_complex(size)!
        spectrumProduct = fftwf_alloc_complex(size / 2 + 1)!
        correlation = fftwf_alloc_real(size)!
        difference = .allocate(capacity: maximumLag + 1)
        rawDifference = .allocate(capacity: maximumLag + 1)
        squares = .allocate(capacity: self.window)
        let sizes = [size, size / 2, size / 4].filter { $0 >= 64 }
        self.sizes = sizes
        let (both, spectrum, product, output) = (packed, spectrumPacked, spectrumProduct, correlation)
        let flags = UInt32(FFTW_ESTIMATE)
        let made = fftwPlanner.withLock { _ in
            sizes.map { size in
                let count = Int32(size)
                return [fftwf_plan_dft_1d(count, both, spectrum, FFTW_FORWARD, flags),
                        fftwf_plan_dft_c2r_1d(count, product, output, flags)].map { UInt(bitPattern: $0) }
            }
        }
        plans = made.map { (OpaquePointer(bitPattern: $0[0])!, OpaquePointer(bitPattern: $0[1])!) }
    }

    deinit {
        let all = plans.flatMap { [$0.forward, $0.backward] }.map { UInt(bitPattern: $0) }
        fftwPlanner.withLock { _ in
            for plan in all { fftwf_destroy_plan(OpaquePointer(bitPattern: plan)) }
        }
        fftwf_free(input)
        fftwf_free(packed)
        fftwf_free(spectrumPacked)
        fftwf_free(spectrumProduct)
        fftwf_free(correlation)
        difference.deallocate()
        rawDifference.deallocate()
        squares.deallocate()
    }

    /// The pitch of `frame` (`window` samples). `expected` (Hz), when the
    /// score says which note should sound, limits the search to half an
    /// octave either side: no octave errors. `centre` is stamped on the
    /// result (the caller knows where the frame came from).
    public func estimate(_ frame: UnsafePointer<Float>, centre: Int64, expected: Double? = nil) -> PitchEstimate {
        estimate(frame, centre: centre, expected: expected, integration: window - maximumLag, spread: 1.414)
    }

    /// The estimate with an integration length of `integration` samples and
    /// the search limited to `expected` ÷ `spread` … × `spread`.
    func estimate(_ frame: UnsafePointer<Float>, centre: Int64, expected: Double?, integration: Int, spread: Double) -> PitchEstimate {
        let half = integration  // the integration length
        var lowLag = 2
        var highLag = maximumLag - 1
        if let expected, expected > 0 {
            lowLag = max(2, Int((Double(sampleRate) / (expected * spread)).rounded(.down)))
            highLag = min(maximumLag - 1, Int((Double(sampleRate) / (expected / spread)).rounded(.up)))
        }
        let unvoiced = PitchEstimate(centreSample: centre, frequency: 0, aperiodicity: 1, voiced: false)
        guard lowLag < highLag else { return unvoiced }
        // d(τ) up to one past the search (for the parabola), from the
        // smallest transform that holds the data those lags read.
        let lastLag = min(maximumLag - 1, highLag + 1)
        let level = sizes.lastIndex { $0 >= half + lastLag } ?? 0
        let size = sizes[level]
        let plan = plans[level]
        let n = size
        // The mean goes first: a DC offset is not a pitch. Then each
        // sample's square, for the energies (eight lanes at a time: these
        // loops, not the transforms, were most of a frame's time).
        let mean = Float(Self.sum(frame, n) / Double(n))
        let lanes = SIMD8<Float>(repeating: mean)
        for block in stride(from: 0, to: n, by: 8) {
            let value = UnsafeRawPointer(frame + block).loadUnaligned(as: SIMD8<Float>.self) - lanes
            UnsafeMutableRawPointer(input + block).storeBytes(of: value, as: SIMD8<Float>.self)
            let wide = SIMD8<Double>(value)
            UnsafeMutableRawPointer(squares + block).storeBytes(of: wide * wide, as: SIMD8<Double>.self)
        }
        let e0 = Self.sum(squares, half)
        let energy = e0 + Self.sum(squares + half, n - half)
        guard Float((energy / Double(n)).squareRoot()) >= silenceRMS else { return unvoiced }
        cumulativeDifference(plan, size: size, last: lastLag, integration: half, e0: e0)
        // The first dip under the threshold, followed to its minimum; else the lowest point.
        var chosen = -1
        var lag = lowLag
        while lag <= highLag {
            if difference[lag] < threshold {
                while lag + 1 <= highLag && difference[lag + 1] < difference[lag] { lag += 1 }
                chosen = lag
                break
            }
            lag += 1
        }
        if chosen < 0 {
            chosen = lowLag
            for candidate in lowLag...highLag where difference[candidate] < difference[chosen] { chosen = candidate }
        }
        let aperiodicity = difference[chosen]
        // Parabolic refinement through the neighbours, on the raw
        // difference (the normalization's running mean would bias it).
        var refined = Double(chosen)
        if chosen > 1 && chosen < lastLag {
            let (a, b, c) = (rawDifference[chosen - 1], rawDifference[chosen], rawDifference[chosen + 1])
            let denominator = a - 2 * b + c
            if denominator > 0 { refined += 0.5 * (a - c) / denominator }
        }
        return PitchEstimate(centreSample: centre, frequency: Double(sampleRate) / refined, aperiodicity: aperiodicity, voiced: aperiodicity <= voicingLimit)
    }

    /// d(τ) = e(0) + e(τ) − 2·r(τ) and d′(τ) for τ in 1…`last`, r from the
    /// transforms (the frame's and its first `integration` samples').
    private func cumulativeDifference(_ plan: Plans, size: Int, last: Int, integration half: Int, e0: Double) {
        // r(τ) = Σ_{j<half} x[j]·x[j+τ]: correlate the integration span with the frame.
        // Both real signals in one complex transform (f + i·h: the
        // frame, and its first `half` samples), taken apart by symmetry:
        // F(k) = (Z(k) + Z̄(n−k))/2, H(k) = (Z(k) − Z̄(n−k))/2i. FFTW's
        // estimated complex plan took a third of the time of the two real
        // ones it replaces (a radix-2 pass over the whole spectrum each).
        for j in 0..<half { packed[j] = (input[j], input[j]) }
        for j in half..<size { packed[j] = (input[j], 0) }
        fftwf_execute(plan.forward)
        let z = spectrumPacked
        for bin in 0...(size / 2) {
            let (ar, ai) = (z[bin].0, z[bin].1)
            let (br, bi) = (z[(size - bin) & (size - 1)].0, z[(size - bin) & (size - 1)].1)
            let (fr, fi) = (0.5 * (ar + br), 0.5 * (ai - bi))
            let (hr, hi) = (0.5 * (ai + bi), 0.5 * (br - ar))
            // conj(H) · F
            spectrumProduct[bin] = (hr * fr + hi * fi, hr * fi - hi * fr)
        }
        fftwf_execute(plan.backward)
        let scale = 1 / Double(size)
        // Cumulative mean normalized difference, d'(τ); the energy of the
        // lagged span slides along with τ.
        var running = 0.0
        var energyLag = e0
        difference[0] = 1
        for lag in 1...last {
            energyLag += squares[lag + half - 1] - squares[lag - 1]
            let d = max(0, e0 + energyLag - 2 * Double(correlation[lag]) * scale)
            rawDifference[lag] = d
            running += d
            difference[lag] = running > 0 ? d * Double(lag) / running : 1
        }
    }

    /// Estimates over a whole signal, one per `hop` samples, estimate k
    /// stamped at sample k·hop — and that is the centre of the data it
    /// used: for a lag τ, YIN compares samples [s, s + half) with
    /// [s + τ, s + τ + half), so the window is placed at
    /// s = k·hop − (half + τ)/2, with τ from the previous frame and, when
    /// the pitch moved, placed again with the new one (a fixed placement
    /// would stamp low notes up to half a window late). Zeros beyond the
    /// ends. `expected(sample)` gives the note the score has there, if any.
    /// With `frames`, only those (estimate j is frame frames.lowerBound + j):
    /// a long track can be shared among threads, a detector each.
    public func track(_ samples: [Float], hop: Int, frames: Range<Int>? = nil, expected: ((Int64) -> Double?)? = nil) -> [PitchEstimate] {
        let frame = UnsafeMutablePointer<Float>.allocate(capacity: window)
        defer { frame.deallocate() }
        let half = window - maximumLag
        var results: [PitchEstimate] = []
        var lag = Double(maximumLag) / 2
        // Frames `frames` only, when given (a share of a long track).
        let firstFrame = frames?.lowerBound ?? 0
        let end = min(samples.count, frames.map { $0.upperBound * hop } ?? samples.count)
        var centre = firstFrame * hop
        func analyse(lag: Double, integration: Int, expected: Double?, spread: Double) -> PitchEstimate {
            Self.copy(samples, from: centre - (integration + Int(lag.rounded())) / 2, into: frame, count: window)
            return estimate(frame, centre: Int64(centre), expected: expected, integration: integration, spread: spread)
        }
        // The long look only finds the period roughly (and whether there
        // is one): the short look below reads it exactly. So it looks at
        // the signal at half the rate — the same span and lags in half the
        // samples, transforms half the size: most of a frame's time was
        // those transforms. Pairs averaged: voices have little above 12 kHz
        // to fold down.
        let coarse = halfRate
        if let coarse {
            coarse.threshold = threshold
            coarse.voicingLimit = voicingLimit
            coarse.silenceRMS = silenceRMS
        }
        // The stretch these frames read (a window beyond each end), halved.
        let halvedFrom = max(0, centre - 2 * window) / 2
        let halvedTo = min(samples.count, end + 2 * window) / 2
        let halved: [Float] = coarse == nil ? [] : (halvedFrom..<max(halvedFrom, halvedTo)).map { 0.5 * (samples[2 * $0] + samples[2 * $0 + 1]) }
        let coarseFrame = UnsafeMutablePointer<Float>.allocate(capacity: coarse?.window ?? 1)
        defer { coarseFrame.deallocate() }
        func look(lag: Double, expected: Double?) -> PitchEstimate {
            guard let coarse else { return analyse(lag: lag, integration: half, expected: expected, spread: 1.414) }
            let integration = coarse.window - coarse.maximumLag
            let start = centre / 2 - (integration + Int((lag / 2).rounded())) / 2
            Self.copy(halved, from: start - halvedFrom, into: coarseFrame, count: coarse.window)
            var result = coarse.estimate(coarseFrame, centre: Int64(centre), expected: expected, integration: integration, spread: 1.414)
            result.centreSample = Int64(centre)
            return result
        }
        var scored = false
        while centre < end {
            let score = expected?(Int64(centre))
            if score != nil { scored = true }
            var result = look(lag: lag, expected: score)
            if result.voiced && score == nil && result.frequency < Self.lowestVoice {
                let found = Double(sampleRate) / result.frequency
                let longest = Double(sampleRate) / Self.lowestVoice, shortest = Double(sampleRate) / Self.highestFrequency
                if let part = samples.withUnsafeBufferPointer({ Self.voicePart($0, centre: centre, lag: found, within: shortest...longest) }) {
                    result.frequency = Double(sampleRate) / part
                } else {
                    result = PitchEstimate(centreSample: Int64(centre), frequency: 0, aperiodicity: 1, voiced: false)
                }
            }
            if result.voiced && score == nil {
                let found = Double(sampleRate) / result.frequency
                let whole = samples.withUnsafeBufferPointer { Self.wholePeriod($0, centre: centre, lag: found, limit: Double(maximumLag - 1)) }
                if whole != found { result.frequency = Double(sampleRate) / whole }
            }
            if result.voiced {
                // Again over a few periods only, centred on the frame, the
                // search kept within two semitones of what the long window
                // found: a moving pitch (vibrato, a slide) is read where it
                // is, not averaged — and a strong upper harmonic cannot
                // offer three quarters of the period instead.
                // Unless the short reading is ragged (a burst of jitter or
                // breath at an onset) and the long one steadier: then the
                // long one is nearer the sung pitch.
                let found = Double(sampleRate) / result.frequency
                let short = min(half, max(256, Int(3 * found)))
                let again = analyse(lag: found, integration: short, expected: result.frequency, spread: 1.12)
                if again.voiced && (again.aperiodicity <= 0.05 || again.aperiodicity < result.aperiodicity) { result = again }
                lag = Double(sampleRate) / result.frequency
            }
            results.append(result)
            centre += hop
        }
        // Above a voice's highest pitch (read by the refinements, which
        // search wider than the first look): no voice.
        for index in results.indices where results[index].voiced && results[index].frequency > Self.highestFrequency {
            results[index] = PitchEstimate(centreSample: results[index].centreSample, frequency: 0, aperiodicity: 1, voiced: false)
        }
        // Each frame's level over its hop or 10 ms, whichever is longer
        // (from two frames before the first to one after the last), and
        // the frames 100 ms make.
        let span = max(hop, sampleRate / 100)
        let near = max(3, Int((0.1 * Double(sampleRate) / Double(hop)).rounded()))
        let levels = scored ? [] : Self.levels(samples, hop: hop, span: span, firstFrame: firstFrame - 2, count: results.count + 3)
        func level(_ index: Int) -> Float { levels[index + 2] }
        func loudest(from index: Int) -> Float { (index..<min(results.count, index + near)).map(level).max() ?? 0 }
        // A frame's own 10 ms is silence 20 dB under the whole window's
        // silence (-86 dBFS): a rest's digital silence or a 16-bit file's
        // dither, not a quiet singer's release.
        let frameLevels = Array(levels.dropFirst(2).dropLast()), silent = silenceRMS / 10
        if !scored {
            // No edge is read again from a frame where no voice sounds.
            results = Self.trimmingEdges(results, levels: frameLevels, silence: silent, near: near)
            // Voicing edges, read again over a few periods: the long window
            // straddles the edge of a sung run (half of it breath or the
            // next note) and calls frames unvoiced that a short window
            // centred on them finds periodic, at the pitch beside them.
            // Outward from each run, a frame at a time, up to 3 frames. A
            // frame between two runs (a legato change: the long window
            // holds both notes) is read at each side's pitch, the clearer
            // reading kept.
            for _ in 0..<3 {
                var changed = false
                for index in results.indices where !results[index].voiced {
                    let clear = { (frame: Int) in frame >= 0 && frame < results.count && results[frame].voiced && results[frame].aperiodicity <= 0.25 }
                    let neighbours = [index - 1, index + 1].filter(clear)
                    guard !neighbours.isEmpty else { continue }
                    // Between notes (voiced within 3 frames on both sides): over less of the change.
                    let between = (1...3).contains { clear(index - $0) } && (1...3).contains { clear(index + $0) }
                    centre = (firstFrame + index) * hop
                    var readings = neighbours.map { neighbour in
                        let period = Double(sampleRate) / results[neighbour].frequency
                        let periods = between ? 2.0 : 3.0
                        return analyse(lag: period, integration: min(half, max(256, Int(periods * period))), expected: results[neighbour].frequency, spread: 1.12)
                    }
                    if !between, neighbours == [index + 1], !readings.contains(where: \.voiced),
                       case let ahead = loudest(from: index + 1), min(level(index - 1), level(index - 2)) < 0.1 * ahead, level(index) >= 0.031_6 * ahead {
                        // A run's first frame after a rest (one of the two frames
                        // before it 20 dB under the run's first 100 ms, the frame
                        // itself within 30 dB of them): the window centred on it
                        // begins before the voice does. Read from half a period
                        // before its centre on; how periodic it is, is how alike
                        // each period is to the next whatever their levels (the
                        // correlation: YIN's difference grows with an attack's own
                        // rise over a low voice's few long periods).
                        let frameCentre = centre
                        let period = Double(sampleRate) / results[index + 1].frequency
                        let integration = min(half, max(256, Int(3 * period)))
                        let start = frameCentre - Int(period / 2)
                        centre = start + (integration + Int(period.rounded())) / 2
                        var forward = analyse(lag: period, integration: integration, expected: results[index + 1].frequency, spread: 1.12)
                        centre = frameCentre
                        forward.centreSample = Int64(frameCentre)
                        if forward.frequency > 0 {
                            // The period where each period is likest the next (within a
                            // semitone of YIN's), between lags by a parabola.
                            let found = Double(sampleRate) / forward.frequency
                            let lags = Int(found / 1.06)...Int(found * 1.06 + 1)
                            let alike = lags.map { Self.correlation(samples, from: start, count: integration, lag: $0) }
                            let best = alike.indices.max { alike[$0] < alike[$1] }!
                            let lag = Double(lags.lowerBound + best) + ReferenceAligner.refinement(alike, at: best)
                            forward.frequency = Double(sampleRate) / lag
                            forward.voiced = alike[best] >= 0.9
                            if forward.voiced { forward.aperiodicity = 1 - alike[best] }
                        }
                        readings.append(forward)
                    }
                    if between, !readings.contains(where: \.voiced),
                       let before = (1...3).lazy.map({ index - $0 }).first(where: clear), let after = (1...3).lazy.map({ index + $0 }).first(where: clear) {
                        // A legato change: the voice does not stop between two
                        // runs a few frames apart, though a window over a fast
                        // glide (a bass's weak fundamental) reads it ragged.
                        // Read over two periods between the two sides'
                        // pitches; the clearest reading within them is voiced
                        // up to twice the voicing limit.
                        let low = min(results[before].frequency, results[after].frequency) / 1.03
                        let high = max(results[before].frequency, results[after].frequency) * 1.03
                        let middle = (low * high).squareRoot()
                        readings.append(analyse(lag: Double(sampleRate) / middle, integration: min(half, max(256, Int(2 * Double(sampleRate) / middle))),
                                                expected: middle, spread: (high / low).squareRoot() * 1.01))
                        if var held = readings.filter({ (low...high).contains($0.frequency) && $0.aperiodicity <= 2 * voicingLimit })
                            .min(by: { $0.aperiodicity < $1.aperiodicity }) {
                            held.voiced = true
                            readings = [held]
                        }
                    }
                    if let again = readings.filter(\.voiced).min(by: { $0.aperiodicity < $1.aperiodicity }) {
                        results[index] = again
                        changed = true
                    }
                }
                if !changed { break }
            }
        }
        if !scored { results = Self.trimmingEdges(results, levels: frameLevels, silence: silent, near: near) }
        let cleaned = Self.removingOutliers(results)
        return scored ? cleaned : Self.foldingSlips(cleaned, slipFrames: max(2, Int((0.064 * Double(sampleRate) / Double(hop)).rounded())))
    }

    /// Without a score, a few frames can still slip to a multiple or a
    /// part of the sung pitch where a note starts, ends or moves (the
    /// short windows straddle two pitches). A voice moves continuously:
    /// within a run of voiced frames, a piece of at most `slipFrames`
    /// frames whose pitch is a whole ratio (2, 3, 4 or their inverses,
    /// within a semitone) away from the longer piece beside it is that
    /// piece's pitch, read on the wrong harmonic; it is folded onto it.
    static func foldingSlips(_ estimates: [PitchEstimate], slipFrames: Int) -> [PitchEstimate] {
        var folded = estimates
        func ratio(_ a: Double, _ b: Double) -> Double? {
            for whole in [2.0, 3, 4, 0.5, 1.0 / 3, 0.25] where abs(1_200 * log2(a / b / whole)) < 100 { return whole }
            return nil
        }
        // Pieces: voiced frames whose neighbours are within 60 cents of each other.
        var pieces: [Range<Int>] = []
        var index = 0
        while index < folded.count {
            guard folded[index].voiced else { index += 1; continue }
            var end = index + 1
            while end < folded.count && folded[end].voiced && abs(1_200 * log2(folded[end].frequency / folded[end - 1].frequency)) < 60 { end += 1 }
            pieces.append(index..<end)
            index = end
        }
        for (number, piece) in pieces.enumerated() where piece.count <= slipFrames {
            // The longer of the adjoining pieces (touching this one) it is a whole ratio away from.
            var best: (length: Int, whole: Double)?
            for other in [number - 1, number + 1] where other >= 0 && other < pieces.count {
                let neighbour = pieces[other]
                guard neighbour.count > piece.count, neighbour.upperBound == piece.lowerBound || neighbour.lowerBound == piece.upperBound else { continue }
                let (mine, theirs) = neighbour.upperBound == piece.lowerBound
                    ? (folded[piece.lowerBound].frequency, folded[neighbour.upperBound - 1].frequency)
                    : (folded[piece.upperBound - 1].frequency, folded[neighbour.lowerBound].frequency)
                if let whole = ratio(mine, theirs), neighbour.count > (best?.length ?? 0) { best = (neighbour.count, whole) }
            }
            guard let best else { continue }
            for frame in piece { folded[frame].frequency /= best.whole }
        }
        return folded
    }

    /// samples[start..<start + count] into `frame`, zeros beyond the ends.
    static func copy(_ samples: [Float], from start: Int, into frame: UnsafeMutablePointer<Float>, count: Int) {
        let first = min(count, max(0, -start))
        let last = max(first, min(count, samples.count - start))
        frame.update(repeating: 0, count: first)
        if last > first { samples.withUnsafeBufferPointer { (frame + first).update(from: $0.baseAddress! + start + first, count: last - first) } }
        (frame + last).update(repeating: 0, count: count - last)
    }

    /// Σ values[0..<count], eight lanes at a time,
    /// added up in double precision (the energies are differenced later).
    static func sum(_ values: UnsafePointer<Float>, _ count: Int) -> Double {
        var lanes = SIMD8<Double>()
        let whole = count / 8 * 8
        for block in stride(from: 0, to: whole, by: 8) {
            lanes += SIMD8<Double>(UnsafeRawPointer(values + block).loadUnaligned(as: SIMD8<Float>.self))
        }
        var total = lanes.sum()
        for index in whole..<count { total += Double(values[index]) }
        return total
    }

    /// Σ values[0..<count], eight lanes at a time.
    static func sum(_ values: UnsafePointer<Double>, _ count: Int) -> Double {
        var lanes = SIMD8<Double>()
        let whole = count / 8 * 8
        for block in stride(from: 0, to: whole, by: 8) {
            lanes += UnsafeRawPointer(values + block).loadUnaligned(as: SIMD8<Double>.self)
        }
        var total = lanes.sum()
        for index in whole..<count { total += values[index] }
        return total
    }

    /// The whole period when `lag` may be only a part of it. A voice whose
    /// second (or third) harmonic is much stronger than its fundamental —
    /// most sung vowels on high notes, where the first formant sits on the
    /// second harmonic — is nearly periodic at half (a third of) its
    /// period, and the long window's first dip can be there. Over a few
    /// periods only (where vibrato cannot blur the comparison), the signal
    /// repeats at its whole period many times better than at a part of it
    /// (the odd harmonics are left over), while at a multiple of a true
    /// period it repeats no better than at the period itself. So: the
    /// shortest multiple (1 to 4) of `lag` that repeats nearly as well as
    /// the best of them.
    /// Without a score only (a score's note already fixes the octave).
    static func wholePeriod(_ samples: UnsafeBufferPointer<Float>, centre: Int, lag: Double, limit: Double) -> Double {
        var largest = 0
        for multiple in 2...4 where Double(multiple) * lag + Double(multiple) <= limit { largest = multiple }
        guard largest > 0 else { return lag }
        // Two periods of the longest candidate (at most 1024 samples):
        // long enough that a wrong candidate cannot fit by chance, short
        // enough for vibrato. The whole period and its multiples repeat
        // about equally well (down to the noise); a part of it, a fourth of
        // it or three fourths, clearly worse.
        let span = min(1_024, Int(2 * Double(largest) * lag))
        return shortestRepeat(samples, centre: centre, span: span, lags: (1...largest).map { Double($0) * lag })?.lag ?? lag
    }

    /// A period inside `range` that `lag` — a frame read below a voice's
    /// lowest pitch — is a whole number of (2 to 16): the shortest that
    /// repeats nearly as well as `lag` itself and the other parts do. A
    /// voice at 400 Hz over mains hum at 50 repeats every 20 ms (eight of
    /// its periods, one of the hum's) about as well as every 2.5 ms, the
    /// hum 27 dB under it hardly counting; hum alone repeats only every
    /// 20 ms. Nil when no part in `range` does.
    static func voicePart(_ samples: UnsafeBufferPointer<Float>, centre: Int, lag: Double, within range: ClosedRange<Double>) -> Double? {
        let parts = Array((2...16).map { lag / Double($0) }.filter { range.contains($0) }.reversed())
        guard !parts.isEmpty else { return nil }
        let span = min(1_024, Int(2 * lag))
        // The lag itself chosen (last of the candidates): no part repeats.
        guard let chosen = shortestRepeat(samples, centre: centre, span: span, lags: parts + [lag]), chosen.index < parts.count else { return nil }
        return chosen.lag
    }

    /// Of `lags` (shortest first), the shortest whose normalised difference
    /// over `span` samples around `centre` is within three times the best
    /// of them (and a rounding's width: a perfectly periodic tone repeats
    /// everywhere at ~0): its place in `lags` and the lag refined to its
    /// dip; nil when none can be measured.
    static func shortestRepeat(_ samples: UnsafeBufferPointer<Float>, centre: Int, span wanted: Int, lags: [Double]) -> (index: Int, lag: Double)? {
        guard let base = samples.baseAddress else { return nil }
        // Rounded to whole SIMD blocks.
        let span = (wanted + 7) / 8 * 8
        // Σ(a − b)² / Σ(a² + b²) for a = x[start…], b = x[start + lag…].
        func difference(_ lag: Int) -> Double {
            let start = centre - (span + lag) / 2
            guard lag >= 2, start >= 0, start + span + lag <= samples.count else { return .infinity }
            var squares = SIMD8<Float>(), energy = SIMD8<Float>()
            let (a, b) = (UnsafeRawPointer(base + start), UnsafeRawPointer(base + start + lag))
            var offset = 0
            while offset < span * 4 {
                let (x, y) = (a.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self), b.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self))
                let d = x - y
                squares += d * d
                energy += x * x + y * y
                offset += 32
            }
            let total = energy.sum()
            return total > 0 ? Double(squares.sum() / total) : .infinity
        }
        // The lowest point near `target`: a parabola through the nearest
        // whole lag and its neighbours (a high voice's period is no whole
        // number of samples: the nearest whole lag can miss its strong
        // upper harmonics by a large fraction of their period).
        func dip(_ target: Double) -> (lag: Double, value: Double) {
            let middle = Int(target.rounded())
            let (a, b, c) = (difference(middle - 1), difference(middle), difference(middle + 1))
            let curvature = a - 2 * b + c
            guard a.isFinite, c.isFinite, curvature > 0 else { return (Double(middle), min(a, b, c)) }
            let shift = max(-1, min(1, 0.5 * (a - c) / curvature))
            return (Double(middle) + shift, max(0, b - 0.25 * (a - c) * shift))
        }
        let dips = lags.map(dip)
        guard let best = dips.map(\.value).min(), best.isFinite, let index = dips.firstIndex(where: { $0.value <= 3 * best + 0.000_5 }) else { return nil }
        return (index, dips[index].lag)
    }

    /// The correlation of samples[start..<start + count] with the same
    /// span `lag` samples on, each without its mean (zeros beyond the
    /// ends): 1 where each period repeats the last in shape, whatever its
    /// level or a DC offset.
    static func correlation(_ samples: [Float], from start: Int, count: Int, lag: Int) -> Double {
        let range = max(0, start)..<max(max(0, start), min(samples.count - lag, start + count))
        guard range.count > 1 else { return 0 }
        var (sumA, sumB) = (0.0, 0.0)
        for index in range {
            sumA += Double(samples[index])
            sumB += Double(samples[index + lag])
        }
        let (meanA, meanB) = (sumA / Double(range.count), sumB / Double(range.count))
        var (both, first, second) = (0.0, 0.0, 0.0)
        for index in range {
            let (a, b) = (Double(samples[index]) - meanA, Double(samples[index + lag]) - meanB)
            both += a * b
            first += a * a
            second += b * b
        }
        return first > 0 && second > 0 ? both / (first * second).squareRoot() : 0
    }

    /// Each frame's level: the RMS, without its mean (a DC offset is no
    /// voice), of the `span` samples centred on it (frame j is centred on
    /// sample (firstFrame + j)·hop; zeros beyond the ends).
    static func levels(_ samples: [Float], hop: Int, span: Int, firstFrame: Int, count: Int) -> [Float] {
        (0..<count).map { frame in
            let centre = (firstFrame + frame) * hop
            let from = max(0, centre - span / 2), to = min(samples.count, centre - span / 2 + span)
            guard from < to else { return 0 }
            var (sum, squares) = (0.0, 0.0)
            for index in from..<to {
                sum += Double(samples[index])
                squares += Double(samples[index]) * Double(samples[index])
            }
            let mean = sum / Double(span)
            return Float(max(0, squares / Double(span) - mean * mean).squareRoot())
        }
    }

    /// A frame is voiced only where a voice sounds around its centre. The
    /// long window reads a note's pitch from frames around it that hold
    /// none of it: in silence a frame or two before a phrase (the shared
    /// chorale: 1.4–1.8 kHz read in digital silence, reaching into the
    /// next note), and the last whispers of a tone as it fades. So a
    /// voiced frame whose own level (`levels`) is under `silence` is
    /// unvoiced, and a run's frames are unvoiced from either end, up to
    /// `near` frames (100 ms), while they are still rising or fading (6 dB
    /// or more under the frame inward) and over 30 dB under the loudest
    /// of the `near` frames from them inward: a note's attack and release
    /// are counted from where it passes a tenth of its level (20 dB
    /// under), so a voice 30 dB under the note beside it has not begun or
    /// has ended. A soft note, however soft against the rest of its
    /// phrase and however short, holds its level and stays; so do frames
    /// inside a run, unless silent.
    static func trimmingEdges(_ estimates: [PitchEstimate], levels: [Float], silence: Float, near: Int) -> [PitchEstimate] {
        var trimmed = estimates
        let unvoiced = { (index: Int) in
            trimmed[index] = PitchEstimate(centreSample: estimates[index].centreSample, frequency: 0, aperiodicity: 1, voiced: false)
        }
        for index in trimmed.indices where trimmed[index].voiced && levels[index] < silence { unvoiced(index) }
        var start = 0
        while start < trimmed.count {
            guard trimmed[start].voiced else { start += 1; continue }
            var end = start
            while end < trimmed.count && trimmed[end].voiced { end += 1 }
            var first = start, last = end - 1
            // Fading: 6 dB or more under the frame inward from it.
            while first < last && first < start + near && levels[first] < 0.5 * levels[first + 1]
                    && levels[first] < 0.031_6 * levels[first..<min(end, first + near)].max()! {
                unvoiced(first)
                first += 1
            }
            while last > first && last > end - 1 - near && levels[last] < 0.5 * levels[last - 1]
                    && levels[last] < 0.031_6 * levels[max(first, last - near + 1)...last].max()! {
                unvoiced(last)
                last -= 1
            }
            start = end
        }
        return trimmed
    }

    /// A lone estimate less periodic than both neighbours and off the
    /// path they trace takes the pitch between them: single-frame slips of
    /// the lag search at a consonant, a breath or a fast slide (a voice
    /// moves continuously; a frame 10 ms wide cannot leave a slide and come
    /// back). Off the path: outside the neighbours' span and over 40 cents
    /// from their middle, the neighbours within two semitones of each other
    /// (the peak of a ±100-cent vibrato is 7 cents off its neighbours'
    /// middle). An unvoiced frame between neighbours that agree (within
    /// half a semitone) takes their pitch too. Whole notes, however short,
    /// span several frames and are left alone.
    static func removingOutliers(_ estimates: [PitchEstimate]) -> [PitchEstimate] {
        guard estimates.count >= 3 else { return estimates }
        var cleaned = estimates
        func cents(_ a: Double, _ b: Double) -> Double { abs(1_200 * log2(a / b)) }
        for index in 1..<(estimates.count - 1) {
            let (before, here, after) = (estimates[index - 1], estimates[index], estimates[index + 1])
            guard before.voiced, after.voiced else { continue }
            let apart = cents(before.frequency, after.frequency)
            let neighbours = (before.frequency * after.frequency).squareRoot()
            let doubtful = !here.voiced || here.aperiodicity > max(before.aperiodicity, after.aperiodicity)
            let span = min(before.frequency, after.frequency)...max(before.frequency, after.frequency)
            let offPath = here.voiced && apart < 200 && !span.contains(here.frequency) && cents(here.frequency, neighbours) > 40
            if doubtful && (!here.voiced && apart < 50 || offPath) {
                cleaned[index].frequency = neighbours
                cleaned[index].voiced = true
                cleaned[index].aperiodicity = max(before.aperiodicity, after.aperiodicity)
            }
        }
        return cleaned
    }
}
