internal import CFFTW

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a reference recording holds the song, found by comparing it with
/// the song's own guide tones.
public struct ReferenceAlignment: Hashable, Sendable {
    /// The recording's frame that holds song sample 0 (negative: the
    /// recording starts after the song has begun).
    public var songStartFrame: Int64
    /// 0…1: how far the best match stands above the next best one
    /// (1 − next / best).
    public var confidence: Double
    /// The recording's speed against the song measured across it (0.004:
    /// 0.4 % slower), and how far it drifts from the offset over the part
    /// both cover, in seconds.
    public var tempoDifference: Double
    public var driftSeconds: Double

    public init(songStartFrame: Int64, confidence: Double, tempoDifference: Double, driftSeconds: Double) {
        self.songStartFrame = songStartFrame
        self.confidence = confidence
        self.tempoDifference = tempoDifference
        self.driftSeconds = driftSeconds
    }
}

/// Why a recording was not aligned (each says what to do instead).
public enum ReferenceAlignmentRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// Too short to compare (seconds held).
    case tooShort(seconds: Double)
    /// Nothing in it stands out as the song (best / next best).
    case notFound(ratio: Double)
    /// Its tempo is not the song's (positive: slower), in percent.
    case tempo(percent: Double)
    /// Its parts fit the song at offsets that do not lie on a line (cuts,
    /// repeats, a changing tempo); the largest disagreement in seconds.
    case unsteady(seconds: Double)

    public var description: String {
        switch self {
        case .tooShort(let seconds):
            return "the recording holds only \(Self.format(seconds, 1)) s of audio, too little to find the song in; give --offset SECONDS"
        case .notFound(let ratio):
            return "the song cannot be found in the recording (the best match is only \(Self.format(ratio, 2))× the next best); give --offset SECONDS"
        case .tempo(let percent):
            return "the recording's tempo is about \(Self.format(abs(percent), 1)) % \(percent > 0 ? "slower" : "faster") than the song's, so no one offset lines it up all through; give --offset SECONDS to place it anyway"
        case .unsteady(let seconds):
            return "the recording does not follow the song steadily (its parts disagree by \(Self.format(seconds, 2)) s: cuts, repeats or a changing tempo); give --offset SECONDS"
        }
    }

    static func format(_ value: Double, _ places: Int) -> String {
        let scale = pow(10, Double(places))
        let rounded = (value * scale).rounded() / scale
        var text = "\(rounded)"
        if let dot = text.firstIndex(of: "."), text.distance(from: dot, to: text.endIndex) - 1 < places {
            text += String(repeating: "0", count: places - (text.distance(from: dot, to: text.endIndex) - 1))
        }
        return text
    }
}

/// Finds where a recording of the song (another timbre, other voices,
/// noise) holds the song, from onsets: a pitch-aware spectral flux
/// (half-wave rectified rise of log magnitude per bin, 80 Hz – 5 kHz) on a
/// 2.7 ms hop, cross-correlated with the same curve of the guide tones,
/// refined between hops on the peak. Then the recording is cut into
/// windows and each window is matched again near that offset: windows
/// whose offsets drift on a line mean another tempo (refused, not
/// guessed), scattered offsets an unsteady recording (refused too).
public enum ReferenceAligner {
    /// Least `best / next best` to accept.
    public static let leastRatio = 1.12
    /// Largest tempo difference accepted (a fraction: 0.01 = 1 %).
    public static let largestTempoDifference = 0.01

    /// Aligns `reference` against `guide` (the song's tones rendered from
    /// song sample 0), both mono at `sampleRate`.
    public static func align(reference: [Float], guide: [Float], sampleRate: Int) -> Result<ReferenceAlignment, ReferenceAlignmentRefusal> {
        let seconds = Double(reference.count) / Double(sampleRate)
        guard seconds >= 4, guide.count >= 4 * sampleRate else { return .failure(.tooShort(seconds: seconds)) }
        // Coarse: onsets per pitch class (which notes began, not only that
        // some did), on a 10.7 ms hop.
        let coarse = OnsetCurve(sampleRate: sampleRate, window: 4_096, hop: 512, chroma: true)
        let recording = coarse.curves(reference)
        let song = coarse.curves(guide)
        let frames = (recording: recording.first?.count ?? 0, song: song.first?.count ?? 0)
        // Lags where the two overlap by at least half the shorter.
        let least = min(frames.recording, frames.song) / 2
        let lags = (least - frames.song)...(frames.recording - least)
        let correlation = crossCorrelate(recording, song, lags: lags)
        guard let best = correlation.indices.max(by: { correlation[$0] < correlation[$1] }), correlation[best] > 0 else {
            return .failure(.notFound(ratio: 1))
        }
        // The next best peak at least 60 ms away.
        let apart = Int(0.06 * Double(sampleRate) / Double(coarse.hop))
        var next: Float = 0
        for index in correlation.indices where abs(index - best) > apart { next = max(next, correlation[index]) }
        let ratio = next > 0 ? Double(correlation[best] / next) : 100
        guard ratio >= leastRatio else {
            // Not found as it is: at another tempo it may stand out.
            if let other = otherTempo(recording, song, hop: coarse.hop, sampleRate: sampleRate, than: ratio) { return .failure(.tempo(percent: 100 * (other - 1))) }
            return .failure(.notFound(ratio: ratio))
        }
        let lag = lags.lowerBound + best

        // Windows of the part both cover, each matched again nearby: their
        // offsets on a line that slopes mean another tempo.
        let covered = max(0, lag)..<min(frames.recording, frames.song + lag)
        let framesPerSecond = Double(sampleRate) / Double(coarse.hop)
        let windowFrames = Int(8 * framesPerSecond)
        var drift = 0.0
        var tempo = 0.0
        if covered.count >= 2 * windowFrames {
            let count = min(6, covered.count / windowFrames)
            let step = covered.count / count
            let reach = max(Int(0.5 * framesPerSecond), Int(0.06 * Double(covered.count)))
            var points: [(centre: Double, lag: Double)] = []
            for window in 0..<count {
                let start = covered.lowerBound + window * step
                let piece = recording.map { Array($0[start..<(start + step)]) }
                // The piece holds recording frames from `start`: its lag
                // against the song is the global lag less `start`.
                let local = crossCorrelate(piece, song, lags: (lag - reach - start)...(lag + reach - start))
                guard let peak = local.indices.max(by: { local[$0] < local[$1] }), local[peak] > 0 else { continue }
                let found = Double(lag - reach + peak) + refinement(local, at: peak)
                points.append((Double(start + step / 2) - found, found))
            }
            if points.count >= 2 {
                // Least squares: lag = a + b · song frame.
                let n = Double(points.count)
                let meanX = points.map(\.centre).reduce(0, +) / n
                let meanY = points.map(\.lag).reduce(0, +) / n
                let sxx = points.map { ($0.centre - meanX) * ($0.centre - meanX) }.reduce(0, +)
                let sxy = points.map { ($0.centre - meanX) * ($0.lag - meanY) }.reduce(0, +)
                let slope = sxx > 0 ? sxy / sxx : 0
                let worst = points.map { abs($0.lag - (meanY + slope * ($0.centre - meanX))) }.max() ?? 0
                tempo = slope
                drift = abs(slope) * Double(covered.count) / framesPerSecond
                if abs(slope) > largestTempoDifference { return .failure(.tempo(percent: 100 * slope)) }
                if worst / framesPerSecond > 0.25 { return .failure(.unsteady(seconds: worst / framesPerSecond)) }
            }
        }

        // Fine: broadband onsets on a 2.7 ms hop, within 40 ms of the coarse lag.
        let fine = OnsetCurve(sampleRate: sampleRate, window: 1_024, hop: max(1, sampleRate / 375), chroma: false)
        let near = Double(lag * coarse.hop) / Double(fine.hop)
        let reach = Int(0.04 * Double(sampleRate) / Double(fine.hop))
        let fineLags = (Int(near) - reach)...(Int(near) + reach)
        var found = Double(lag * coarse.hop)
        // (Onset curves peak where a note rises fastest: a note that swells
        // over T ms is found about T/2 late; see `acapella-bench align`.)
        let local = crossCorrelate(fine.curves(reference), fine.curves(guide), lags: fineLags)
        if let peak = local.indices.max(by: { local[$0] < local[$1] }), local[peak] > 0 {
            found = (Double(fineLags.lowerBound + peak) + refinement(local, at: peak)) * Double(fine.hop)
        }
        return .success(ReferenceAlignment(songStartFrame: Int64(found.rounded()), confidence: 1 - 1 / ratio,
                                           tempoDifference: tempo, driftSeconds: drift))
    }

    /// The stretch of the song (1.03: the recording 3 % slower) at which
    /// the recording is found clearly, when it is not 1 and stands out
    /// better than `ratio` (the best match against the next at 1).
    static func otherTempo(_ recording: [[Float]], _ song: [[Float]], hop: Int, sampleRate: Int, than ratio: Double) -> Double? {
        var best: (stretch: Double, ratio: Double)?
        let apart = Int(0.06 * Double(sampleRate) / Double(hop))
        for step in -20...20 where abs(step) >= 2 {
            let stretch = 1 + 0.005 * Double(step)
            // The song's curves stretched (linear interpolation between frames).
            let length = Int(Double(song[0].count) * stretch)
            let stretched = song.map { band in
                (0..<length).map { index -> Float in
                    let position = Double(index) / stretch
                    let lower = min(band.count - 1, Int(position))
                    let upper = min(band.count - 1, lower + 1)
                    let fraction = Float(position - Double(lower))
                    return band[lower] + fraction * (band[upper] - band[lower])
                }
            }
            let least = min(recording[0].count, length) / 2
            let lags = (least - length)...(recording[0].count - least)
            let correlation = crossCorrelate(recording, stretched, lags: lags)
            guard let peak = correlation.indices.max(by: { correlation[$0] < correlation[$1] }), correlation[peak] > 0 else { continue }
            var next: Float = 0
            for index in correlation.indices where abs(index - peak) > apart { next = max(next, correlation[index]) }
            let found = next > 0 ? Double(correlation[peak] / next) : 100
            if found > (best?.ratio ?? 0) { best = (stretch, found) }
        }
        guard let best, best.ratio >= leastRatio, best.ratio > ratio * 1.05 else { return nil }
        return best.stretch
    }

    /// Where between hops a peak lies: the vertex of the parabola through
    /// it and its neighbours (−½…½).
    static func refinement<Value: BinaryFloatingPoint>(_ values: [Value], at index: Int) -> Double {
        guard index > 0, index + 1 < values.count else { return 0 }
        let (a, b, c) = (Double(values[index - 1]), Double(values[index]), Double(values[index + 1]))
        let denominator = a - 2 * b + c
        guard denominator < 0 else { return 0 }
        return max(-0.5, min(0.5, 0.5 * (a - c) / denominator))
    }

    /// `Σ x[i + lag] · y[i]` for each lag in `lags` (x: the recording, y: the
    /// song), through FFTW.
    public static func crossCorrelate(_ x: [Float], _ y: [Float], lags: ClosedRange<Int>) -> [Float] {
        crossCorrelate([x], [y], lags: lags)
    }

    /// The same summed over bands (`x[b]` against `y[b]`; every band of a
    /// signal has one length).
    static func crossCorrelate(_ x: [[Float]], _ y: [[Float]], lags: ClosedRange<Int>) -> [Float] {
        let (countX, countY) = (x.first?.count ?? 0, y.first?.count ?? 0)
        guard countX > 0, countY > 0 else { return lags.map { _ in 0 } }
        var size = 1
        while size < countX + countY { size *= 2 }
        let bins = size / 2 + 1
        let realX = fftwf_alloc_real(size)!, realY = fftwf_alloc_real(size)!
        let spectrumX = fftwf_alloc_complex(bins)!, spectrumY = fftwf_alloc_complex(bins)!, sum = fftwf_alloc_complex(bins)!
        defer {
            fftwf_free(realX)
            fftwf_free(realY)
            fftwf_free(spectrumX)
            fftwf_free(spectrumY)
            fftwf_free(sum)
        }
        let plans = fftwPlanner.withLock { _ in
            (UInt(bitPattern: fftwf_plan_dft_r2c_1d(Int32(size), realX, spectrumX, UInt32(FFTW_ESTIMATE))),
             UInt(bitPattern: fftwf_plan_dft_r2c_1d(Int32(size), realY, spectrumY, UInt32(FFTW_ESTIMATE))),
             UInt(bitPattern: fftwf_plan_dft_c2r_1d(Int32(size), sum, realX, UInt32(FFTW_ESTIMATE))))
        }
        defer { fftwPlanner.withLock { _ in for plan in [plans.0, plans.1, plans.2] { fftwf_destroy_plan(OpaquePointer(bitPattern: plan)) } } }
        for bin in 0..<bins { sum[bin] = (0, 0) }
        for band in 0..<min(x.count, y.count) {
            realX.update(repeating: 0, count: size)
            realY.update(repeating: 0, count: size)
            x[band].withUnsafeBufferPointer { realX.update(from: $0.baseAddress!, count: countX) }
            y[band].withUnsafeBufferPointer { realY.update(from: $0.baseAddress!, count: countY) }
            fftwf_execute(OpaquePointer(bitPattern: plans.0))
            fftwf_execute(OpaquePointer(bitPattern: plans.1))
            for bin in 0..<bins {
                // X · conj(Y)
                let (a, b) = (spectrumX[bin].0, spectrumX[bin].1)
                let (c, d) = (spectrumY[bin].0, -spectrumY[bin].1)
                sum[bin].0 += a * c - b * d
                sum[bin].1 += a * d + b * c
            }
        }
        fftwf_execute(OpaquePointer(bitPattern: plans.2))
        let scale = 1 / Float(size)
        return lags.map { lag in
            let index = lag >= 0 ? lag : size + lag
            return lag > -countY && lag < countX ? realX[index] * scale : 0
        }
    }
}

/// Onset curves of a signal: per hop, how much the log magnitude rose
/// (rises only) in each band — the twelve pitch classes (`chroma`), or
/// 80 Hz – 5 kHz as one — less its local mean, rises only, scaled to unit
/// mean square over all bands. Per pitch class, a new note on the same
/// level still shows, where it moved to.
struct OnsetCurve {
    let sampleRate: Int
    let window: Int
    let hop: Int
    let bins: Range<Int>
    /// Each bin's band.
    let bands: [Int]
    let bandCount: Int

    /// `window` and `hop` are for 48 kHz (scaled to `sampleRate`).
    init(sampleRate: Int, window wanted: Int, hop: Int, chroma: Bool) {
        self.sampleRate = sampleRate
        var window = wanted
        let scaled = Double(wanted) * Double(sampleRate) / 48_000
        while Double(window) > scaled * 1.4 { window /= 2 }
        while Double(window) < scaled / 1.4 { window *= 2 }
        self.window = window
        self.hop = max(1, hop * sampleRate / 48_000)
        let binWidth = Double(sampleRate) / Double(window)
        bins = max(1, Int(80 / binWidth))..<min(window / 2, Int(5_000 / binWidth) + 1)
        bandCount = chroma ? 12 : 1
        bands = bins.map { bin in
            guard chroma else { return 0 }
            let note = Int((12 * log2(Double(bin) * binWidth / 440)).rounded()) + 69
            return ((note % 12) + 12) % 12
        }
    }

    func curves(_ samples: [Float]) -> [[Float]] {
        let frames = samples.count >= window ? (samples.count - window) / hop + 1 : 0
        guard frames > 1 else { return Array(repeating: [], count: bandCount) }
        // Levels relative to the signal's own loudness (a quiet recording
        // and a loud one give the same curves).
        var energy = 0.0
        for value in samples { energy += Double(value) * Double(value) }
        let rms = max(1e-9, (energy / Double(samples.count)).squareRoot())
        let compression = Float(100 / rms)
        let input = fftwf_alloc_real(window)!
        let spectrum = fftwf_alloc_complex(window / 2 + 1)!
        defer {
            fftwf_free(input)
            fftwf_free(spectrum)
        }
        let plan = fftwPlanner.withLock { _ in UInt(bitPattern: fftwf_plan_dft_r2c_1d(Int32(window), input, spectrum, UInt32(FFTW_ESTIMATE))) }
        defer { fftwPlanner.withLock { _ in fftwf_destroy_plan(OpaquePointer(bitPattern: plan)) } }
        let hann = (0..<window).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(window))) }
        var previous = [Float](repeating: 0, count: bins.count)
        var current = [Float](repeating: 0, count: bins.count)
        var flux = [[Float]](repeating: [Float](repeating: 0, count: frames), count: bandCount)
        var rise = [Float](repeating: 0, count: bandCount)
        samples.withUnsafeBufferPointer { samples in
            for frame in 0..<frames {
                let start = frame * hop
                for index in 0..<window { input[index] = samples[start + index] * hann[index] }
                fftwf_execute(OpaquePointer(bitPattern: plan))
                for band in 0..<bandCount { rise[band] = 0 }
                for (slot, bin) in bins.enumerated() {
                    let (re, im) = (spectrum[bin].0, spectrum[bin].1)
                    current[slot] = log1pf(compression * (re * re + im * im).squareRoot() / Float(window))
                    if frame > 0 { rise[bands[slot]] += max(0, current[slot] - previous[slot]) }
                }
                for band in 0..<bandCount { flux[band][frame] = rise[band] }
                swap(&previous, &current)
            }
        }
        // Less the mean of the surrounding ½ s, rises only.
        let half = max(1, Int(0.25 * Double(sampleRate) / Double(hop)))
        var squares = 0.0
        var prefix = [Double](repeating: 0, count: frames + 1)
        for band in 0..<bandCount {
            for index in 0..<frames { prefix[index + 1] = prefix[index] + Double(flux[band][index]) }
            for index in 0..<frames {
                let lower = max(0, index - half), upper = min(frames, index + half + 1)
                let mean = (prefix[upper] - prefix[lower]) / Double(upper - lower)
                let value = max(0, flux[band][index] - Float(mean))
                flux[band][index] = value
                squares += Double(value) * Double(value)
            }
        }
        let scale = squares > 0 ? Float(1 / (squares / Double(frames * bandCount)).squareRoot()) : 0
        return flux.map { $0.map { $0 * scale } }
    }
}
