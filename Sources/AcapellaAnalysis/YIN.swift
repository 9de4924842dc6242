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
/// the autocorrelation r from one forward transform of the frame, one of
/// its first `integration` samples and one inverse, and the energies e from
/// running sums. The transform is the smallest planned size (the window,
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

    private let input: UnsafeMutablePointer<Float>
    private let spectrumFull: UnsafeMutablePointer<fftwf_complex>
    private let spectrumHalf: UnsafeMutablePointer<fftwf_complex>
    private let correlation: UnsafeMutablePointer<Float>
    private let difference: UnsafeMutablePointer<Double>
    private let rawDifference: UnsafeMutablePointer<Double>
    private let prefix: UnsafeMutablePointer<Double>
    /// Transform sizes, largest (the window) first, with their three plans.
    private let sizes: [Int]
    private let plans: [(forwardFull: OpaquePointer, forwardHalf: OpaquePointer, backward: OpaquePointer)]

    /// The sample rates the detector works at: below, the window cannot
    /// hold the lowest voice's period; above, it would be too large to plan.
    public static let sampleRates = 8_000...384_000

    /// A detector for `sampleRate`; the window defaults to 2048 at 48 kHz,
    /// scaled (to a power of two) for other rates. `measured` plans the
    /// transforms by timing candidates (FFTW_MEASURE: fastest to run, but
    /// planning takes most of a second in a fresh process); otherwise FFTW
    /// estimates (instant, a little slower to run) — the live needle's
    /// choice, where start-up matters and ~94 frames a second cost nothing.
    public init(sampleRate: Int, window: Int? = nil, measured: Bool = true) {
        precondition(Self.sampleRates.contains(sampleRate), "YIN at \(sampleRate) Hz: check YINDetector.sampleRates first")
        var length = 2_048
        if window == nil {
            let wanted = 2_048.0 * Double(sampleRate) / 48_000
            while Double(length) > wanted * 1.4 { length /= 2 }
            while Double(length) < wanted / 1.4 { length *= 2 }
        }
        self.sampleRate = sampleRate
        self.window = window ?? length
        maximumLag = self.window / 2
        let size = self.window
        input = fftwf_alloc_real(size)!
        spectrumFull = fftwf_alloc_complex(size / 2 + 1)!
        spectrumHalf = fftwf_alloc_complex(size / 2 + 1)!
        correlation = fftwf_alloc_real(size)!
        difference = .allocate(capacity: maximumLag + 1)
        rawDifference = .allocate(capacity: maximumLag + 1)
        prefix = .allocate(capacity: self.window + 1)
        let sizes = [size, size / 2, size / 4].filter { $0 >= 64 }
        self.sizes = sizes
        let (full, half, output, real) = (spectrumFull, spectrumHalf, correlation, input)
        let flags = UInt32(measured ? FFTW_MEASURE : FFTW_ESTIMATE)
        let made = fftwPlanner.withLock { _ in
            sizes.map { size in
                let count = Int32(size)
                return [fftwf_plan_dft_r2c_1d(count, real, full, flags),
                        fftwf_plan_dft_r2c_1d(count, real, half, flags),
                        fftwf_plan_dft_c2r_1d(count, full, output, flags)].map { UInt(bitPattern: $0) }
            }
        }
        plans = made.map { (OpaquePointer(bitPattern: $0[0])!, OpaquePointer(bitPattern: $0[1])!, OpaquePointer(bitPattern: $0[2])!) }
    }

    deinit {
        let all = plans.flatMap { [$0.forwardFull, $0.forwardHalf, $0.backward] }.map { UInt(bitPattern: $0) }
        fftwPlanner.withLock { _ in
            for plan in all { fftwf_destroy_plan(OpaquePointer(bitPattern: plan)) }
        }
        fftwf_free(input)
        fftwf_free(spectrumFull)
        fftwf_free(spectrumHalf)
        fftwf_free(correlation)
        difference.deallocate()
        rawDifference.deallocate()
        prefix.deallocate()
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
        // The mean goes first: a DC offset is not a pitch.
        var mean: Float = 0
        for index in 0..<n { mean += frame[index] }
        mean /= Float(n)
        for index in 0..<n { input[index] = frame[index] - mean }
        var energy = 0.0
        prefix[0] = 0
        for index in 0..<n {
            let value = Double(input[index])
            energy += value * value
            prefix[index + 1] = energy
        }
        guard Float((energy / Double(n)).squareRoot()) >= silenceRMS else { return unvoiced }
        // r(τ) = Σ_{j<half} x[j]·x[j+τ]: correlate the integration span with the frame.
        fftwf_execute(plan.forwardFull)
        (input + half).update(repeating: 0, count: size - half)
        fftwf_execute(plan.forwardHalf)
        let full = spectrumFull
        let halfSpectrum = spectrumHalf
        for bin in 0...(size / 2) {
            // conj(H) · F
            let (hr, hi) = (halfSpectrum[bin].0, halfSpectrum[bin].1)
            let (fr, fi) = (full[bin].0, full[bin].1)
            full[bin].0 = hr * fr + hi * fi
            full[bin].1 = hr * fi - hi * fr
        }
        fftwf_execute(plan.backward)
        let scale = 1 / Double(size)
        let e0 = prefix[half] - prefix[0]
        // Cumulative mean normalized difference, d'(τ).
        var running = 0.0
        difference[0] = 1
        for lag in 1...lastLag {
            let energyLag = prefix[lag + half] - prefix[lag]
            let d = max(0, e0 + energyLag - 2 * Double(correlation[lag]) * scale)
            rawDifference[lag] = d
            running += d
            difference[lag] = running > 0 ? d * Double(lag) / running : 1
        }
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

    /// Estimates over a whole signal, one per `hop` samples, estimate k
    /// stamped at sample k·hop — and that is the centre of the data it
    /// used: for a lag τ, YIN compares samples [s, s + half) with
    /// [s + τ, s + τ + half), so the window is placed at
    /// s = k·hop − (half + τ)/2, with τ from the previous frame and, when
    /// the pitch moved, placed again with the new one (a fixed placement
    /// would stamp low notes up to half a window late). Zeros beyond the
    /// ends. `expected(sample)` gives the note the score has there, if any.
    public func track(_ samples: [Float], hop: Int, expected: ((Int64) -> Double?)? = nil) -> [PitchEstimate] {
        let frame = UnsafeMutablePointer<Float>.allocate(capacity: window)
        defer { frame.deallocate() }
        let half = window - maximumLag
        var results: [PitchEstimate] = []
        var lag = Double(maximumLag) / 2
        var centre = 0
        func analyse(lag: Double, integration: Int, expected: Double?, spread: Double) -> PitchEstimate {
            let start = centre - (integration + Int(lag.rounded())) / 2
            for index in 0..<window {
                let source = start + index
                frame[index] = source >= 0 && source < samples.count ? samples[source] : 0
            }
            return estimate(frame, centre: Int64(centre), expected: expected, integration: integration, spread: spread)
        }
        let firstIntegration = half
        while centre < samples.count {
            let score = expected?(Int64(centre))
            var result = analyse(lag: lag, integration: firstIntegration, expected: score, spread: 1.414)
            if result.voiced {
                // Again over a few periods only, centred on the frame, the
                // search kept near what the long window found: a moving
                // pitch (vibrato, a slide) is read where it is, not averaged.
                // Unless the short reading is ragged (a burst of jitter or
                // breath at an onset) and the long one steadier: then the
                // long one is nearer the sung pitch.
                let found = Double(sampleRate) / result.frequency
                let short = min(half, max(256, Int(3 * found)))
                let again = analyse(lag: found, integration: short, expected: result.frequency, spread: 1.414)
                if again.voiced && (again.aperiodicity <= 0.05 || again.aperiodicity < result.aperiodicity) { result = again }
                lag = Double(sampleRate) / result.frequency
            }
            results.append(result)
            centre += hop
        }
        return Self.removingOutliers(results)
    }

    /// A lone estimate far (over half a semitone) from both neighbours, which
    /// agree with each other, and less periodic than both, takes their pitch: single-frame slips of the
    /// lag search at a consonant or a breath. Whole notes, however short,
    /// span several frames and are left alone.
    static func removingOutliers(_ estimates: [PitchEstimate]) -> [PitchEstimate] {
        guard estimates.count >= 3 else { return estimates }
        var cleaned = estimates
        func cents(_ a: Double, _ b: Double) -> Double { abs(1_200 * log2(a / b)) }
        for index in 1..<(estimates.count - 1) {
            let (before, here, after) = (estimates[index - 1], estimates[index], estimates[index + 1])
            guard before.voiced, after.voiced, cents(before.frequency, after.frequency) < 50 else { continue }
            let neighbours = (before.frequency * after.frequency).squareRoot()
            let doubtful = !here.voiced || here.aperiodicity > max(before.aperiodicity, after.aperiodicity)
            if doubtful && (!here.voiced || cents(here.frequency, neighbours) > 50) {
                cleaned[index].frequency = neighbours
                cleaned[index].voiced = true
                cleaned[index].aperiodicity = max(before.aperiodicity, after.aperiodicity)
            }
        }
        return cleaned
    }
}
