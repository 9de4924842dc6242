internal import CFFTW

#if canImport(Glibc)
import Glibc
#endif

/// What the spectrum panel shows: the voice's spectrum in bands, its
/// smooth envelope and the formants found on it.
public struct SpectrumReading: Hashable, Sendable {
    /// Level of each band (`VoiceSpectrum.bandCentres`), dB below the
    /// loudest band (0 = the loudest; −90 at most below).
    public var levels: [Float]
    /// The vocal tract's envelope (linear prediction) at the same bands,
    /// dB on the same scale; bands above `VoiceSpectrum.envelopeTop` have
    /// none (nil: JSON null).
    public var envelope: [Float?]
    /// The first formants (Hz, rising): up to three peaks of the envelope.
    public var formants: [Double]

    public init(levels: [Float], envelope: [Float?], formants: [Double]) {
        self.levels = levels
        self.envelope = envelope
        self.formants = formants
    }
}

/// A voice's spectrum for voice work: a Hann-windowed FFT (FFTW) averaged
/// into `bands` bands spaced evenly in log frequency from 80 Hz to 8 kHz,
/// and a smooth envelope with the formants marked — linear prediction
/// (order 12) on the spectrum below 5.5 kHz: the autocorrelation of the
/// band-limited, pre-emphasized voice is the inverse cosine transform of
/// its power spectrum (so no resampling in time), Levinson–Durbin gives
/// the predictor, and the formants are the envelope's first three peaks
/// above 200 Hz.
///
/// Linear prediction reads formants well on speech and low voices; on a
/// high sung note the harmonics lie so far apart that the envelope can
/// only follow them (a soprano's F1 on a high note is where her harmonics
/// are) — the panel shows what it finds.
///
/// Create, process, destroy (STYLE.md habit 12): `init` allocates and plans;
/// `reading` reuses its buffers (the arrays it returns are its only
/// allocations).
public final class VoiceSpectrum {
    public let sampleRate: Int
    /// Samples analysed (2048 at 48 kHz, scaled).
    public let window: Int
    /// Bands of the reading.
    public static let bands = 64
    /// The band centres, Hz.
    public let bandCentres: [Double]
    /// From the lowest band's lower edge to the highest's upper edge, Hz.
    public let bandRange: ClosedRange<Double>
    /// The envelope covers up to here (Hz).
    public static let envelopeTop = 5_500.0
    /// Linear prediction order.
    static let order = 12

    private let input: UnsafeMutablePointer<Float>
    private let spectrum: UnsafeMutablePointer<fftwf_complex>
    private let plan: OpaquePointer
    private let hann: [Float]
    private var power: [Double]
    /// Each band's bins (at least one).
    private let bandBins: [Range<Int>]

    public init(sampleRate: Int) {
        self.sampleRate = sampleRate
        var length = 2_048
        let wanted = 2_048.0 * Double(sampleRate) / 48_000
        while Double(length) > wanted * 1.4 { length /= 2 }
        while Double(length) < wanted / 1.4 { length *= 2 }
        window = length
        input = fftwf_alloc_real(length)!
        spectrum = fftwf_alloc_complex(length / 2 + 1)!
        let (real, complex) = (input, spectrum)
        plan = OpaquePointer(bitPattern: fftwPlanner.withLock { _ in UInt(bitPattern: fftwf_plan_dft_r2c_1d(Int32(length), real, complex, UInt32(FFTW_ESTIMATE))) })!
        hann = (0..<length).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(length))) }
        power = [Double](repeating: 0, count: length / 2 + 1)
        let (low, high) = (80.0, min(8_000.0, Double(sampleRate) / 2 * 0.95))
        let ratio = pow(high / low, 1 / Double(Self.bands))
        bandRange = low...high
        bandCentres = (0..<Self.bands).map { low * pow(ratio, Double($0) + 0.5) }
        let binWidth = Double(sampleRate) / Double(length)
        bandBins = (0..<Self.bands).map { band in
            let from = Int((low * pow(ratio, Double(band)) / binWidth).rounded())
            let to = Int((low * pow(ratio, Double(band + 1)) / binWidth).rounded())
            return from..<max(from + 1, to)
        }
    }

    deinit {
        let plan = UInt(bitPattern: plan)
        fftwPlanner.withLock { _ in fftwf_destroy_plan(OpaquePointer(bitPattern: plan)) }
        fftwf_free(input)
        fftwf_free(spectrum)
    }

    /// The reading of `frame` (`window` samples), nil when it is silence.
    public func reading(_ frame: UnsafePointer<Float>) -> SpectrumReading? {
        var mean: Float = 0
        for index in 0..<window { mean += frame[index] }
        mean /= Float(window)
        for index in 0..<window { input[index] = (frame[index] - mean) * hann[index] }
        fftwf_execute(plan)
        var loudest = 0.0
        for bin in 0...(window / 2) {
            let (re, im) = (Double(spectrum[bin].0), Double(spectrum[bin].1))
            power[bin] = re * re + im * im
            loudest = max(loudest, power[bin])
        }
        guard loudest > 1e-10 else { return nil }
        // Bands: the mean power of their bins.
        var levels = bandBins.map { bins -> Double in
            var sum = 0.0
            for bin in bins where bin < power.count { sum += power[bin] }
            return sum / Double(bins.count)
        }.map { 10 * log10(max($0, 1e-30)) }
        let top = levels.max() ?? 0
        levels = levels.map { max(-90, $0 - top) }
        // Linear prediction on the spectrum below envelopeTop.
        let binWidth = Double(sampleRate) / Double(window)
        let limit = min(window / 2, Int(Self.envelopeTop / binWidth))
        var envelope = [Float?](repeating: nil, count: Self.bands)
        var formants: [Double] = []
        if let (predictor, gain) = Self.predictor(power: power, limit: limit) {
            // |G / A(e^jω)|² at ω = π f / envelopeTop, with the pre-emphasis taken back out.
            func level(_ frequency: Double) -> Double {
                let omega = Double.pi * frequency / (Double(limit) * binWidth)
                // A(e^jω) = 1 + Σ a_k e^{−jkω}, the powers of e^{−jω} by rotation.
                let (c, s) = (cos(omega), -sin(omega))
                var (re, im) = (1.0, 0.0)
                var (zr, zi) = (1.0, 0.0)
                for a in predictor {
                    (zr, zi) = (zr * c - zi * s, zr * s + zi * c)
                    re += a * zr
                    im += a * zi
                }
                let emphasis = 1 + 0.97 * 0.97 - 2 * 0.97 * cos(omega)
                return 10 * log10(max(1e-30, gain / ((re * re + im * im) * emphasis)))
            }
            // Scaled so the envelope meets the band levels where they are loudest.
            let inside = bandCentres.indices.filter { bandCentres[$0] < Double(limit) * binWidth }
            let raw = inside.map { level(bandCentres[$0]) }
            if let peakBand = inside.max(by: { levels[$0] < levels[$1] }) {
                let shift = levels[peakBand] - level(bandCentres[peakBand])
                for (index, band) in inside.enumerated() { envelope[band] = Float(max(-90, min(6, raw[index] + shift))) }
            }
            // Formants: the envelope's peaks above 200 Hz, on a 10 Hz grid.
            var previous = level(190)
            var current = level(200)
            var frequency = 200.0
            while frequency < Double(limit) * binWidth - 10 && formants.count < 3 {
                let next = level(frequency + 10)
                if current > previous && current >= next {
                    // Parabolic refinement between the grid points.
                    let curvature = previous - 2 * current + next
                    let shift = curvature < 0 ? 0.5 * (previous - next) / curvature : 0
                    formants.append(frequency + 10 * shift)
                }
                (previous, current) = (current, next)
                frequency += 10
            }
        }
        return SpectrumReading(levels: levels.map(Float.init), envelope: envelope, formants: formants)
    }

    /// The predictor a[1…order] (x[n] ≈ −Σ a_k x[n−k]) and its error power,
    /// from the autocorrelation of the pre-emphasized voice band-limited to
    /// bins 0..<limit: r(k) = Σ_b P(b)·|1 − 0.97e^{−jω_b}|²·cos(k ω_b),
    /// ω_b = π b / limit. Nil when the predictor is not stable.
    static func predictor(power: [Double], limit: Int) -> ([Double], Double)? {
        guard limit > order else { return nil }
        var r = [Double](repeating: 0, count: order + 1)
        for bin in 0..<limit {
            let omega = Double.pi * Double(bin) / Double(limit)
            let weighted = power[bin] * (1 + 0.97 * 0.97 - 2 * 0.97 * cos(omega))
            for k in 0...order { r[k] += weighted * cos(Double(k) * omega) }
        }
        guard r[0] > 0 else { return nil }
        r[0] *= 1.000_1  // a little white noise: keeps the recursion stable
        // Levinson–Durbin.
        var a = [Double](repeating: 0, count: order + 1)
        a[0] = 1
        var error = r[0]
        for i in 1...order {
            var acc = r[i]
            for j in 1..<i { acc += a[j] * r[i - j] }
            let k = -acc / error
            guard abs(k) < 1 else { return nil }
            let previous = a
            for j in 1..<i { a[j] = previous[j] + k * previous[i - j] }
            a[i] = k
            error *= 1 - k * k
        }
        return (Array(a[1...]), error)
    }
}
