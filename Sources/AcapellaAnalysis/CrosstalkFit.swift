internal import CFFTW
import Foundation

/// How much of each other source — the guide the speakers played, the other
/// singers' microphones — is in one singer's microphone, by least squares
/// over the part of the spectrum where that singer's own voice is not:
/// between their harmonics (and below their top) while they sing, the
/// whole band while they rest.
///
/// Why not over the whole signal: another singer's microphone carries a
/// little of this singer too, so a fit over everything takes that copy for
/// crosstalk and overshoots (two microphones hearing each other at 0.3 are
/// each fitted at ~0.55 and the cleaned take keeps 0.25 of the other voice).
/// Where this singer has no energy, each other microphone holds only its
/// own singer and the rest, and the least squares of this microphone on all
/// of them at once finds the gains that take every other voice out, one
/// gain a source (microphones and speakers of one room, aligned by the
/// capture: instantaneous gains, no filters).
public final class CrosstalkFit {
    /// Samples a frame (Hann window); frames go `hop` apart.
    public static let window = 4_096
    /// Samples between frames.
    public static let hop = 2_048
    /// The band fitted (Hz): below it, hum and handling; above it, the
    /// singers' harmonics crowd and vibrato smears them.
    public static let band = 60.0...3_000.0
    /// How far either side of each of the singer's harmonics is theirs: 6 %
    /// of its frequency (a semitone's reach: detuned, sliding or with
    /// vibrato) and two bins (the window's main lobe).
    static let reach = 0.06
    /// Places of one source this close (frames) are one path.
    static let samePath = 16

    public let sampleRate: Int
    /// The sources fitted.
    public let sourceCount: Int
    private var normal: [Double]
    private var right: [Double]
    private let input: UnsafeMutablePointer<Float>
    private let spectrum: UnsafeMutablePointer<fftwf_complex>
    private let plan: OpaquePointer
    private let hann: [Float]
    /// The current frame's sources' spectra (re, im per bin).
    private var spectra: [[Float]]
    /// Bins fitted so far.
    public private(set) var bins = 0
    /// Per bin of the band, the complex normal equations of the
    /// microphone on every source at once over the frames where the bin is
    /// clear (`sourceCount` × `sourceCount` then `sourceCount` on the right,
    /// re and im): each source's transfer to the microphone, the others
    /// held apart, where its path's delay shows.
    private var perBin: [[Double]]
    private let bandBins: ClosedRange<Int>
    private var wanted: [Float]

    /// Whether `add` keeps what `delays` needs (the per-bin sums).
    public let findsDelays: Bool

    /// A fit of `sourceCount` sources at `sampleRate` (`findsDelays`: for
    /// `delays`; without, for `gains` only, a quarter of the work).
    public init(sampleRate: Int, sourceCount: Int, findsDelays: Bool = true) {
        self.sampleRate = sampleRate
        self.sourceCount = sourceCount
        self.findsDelays = findsDelays
        let length = Self.window
        normal = [Double](repeating: 0, count: sourceCount * sourceCount)
        right = [Double](repeating: 0, count: sourceCount)
        input = fftwf_alloc_real(length)!
        spectrum = fftwf_alloc_complex(length / 2 + 1)!
        let (real, complex) = (input, spectrum)
        plan = OpaquePointer(bitPattern: fftwPlanner.withLock { _ in UInt(bitPattern: fftwf_plan_dft_r2c_1d(Int32(length), real, complex, UInt32(FFTW_ESTIMATE))) })!
        hann = (0..<length).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(length))) }
        spectra = [[Float]](repeating: [Float](repeating: 0, count: 2 * (length / 2 + 1)), count: sourceCount)
        let binWidth = Double(sampleRate) / Double(length)
        bandBins = Int((Self.band.lowerBound / binWidth).rounded(.up))...Int(Self.band.upperBound / binWidth)
        perBin = [[Double]](repeating: [Double](repeating: 0, count: 2 * sourceCount * (sourceCount + 1)), count: bandBins.count)
        wanted = [Float](repeating: 0, count: 2 * (length / 2 + 1))
    }

    deinit {
        let plan = UInt(bitPattern: plan)
        fftwPlanner.withLock { _ in fftwf_destroy_plan(OpaquePointer(bitPattern: plan)) }
        fftwf_free(input)
        fftwf_free(spectrum)
    }

    private func transform(_ frame: UnsafePointer<Float>, into values: inout [Float]) {
        for index in 0..<Self.window { input[index] = frame[index] * hann[index] }
        fftwf_execute(plan)
        for bin in 0...(Self.window / 2) {
            values[2 * bin] = spectrum[bin].0
            values[2 * bin + 1] = spectrum[bin].1
        }
    }

    /// Whether `frequency` is clear of a voice singing `pitches` (Hz; empty:
    /// resting) — inside the band, below the singer's eighth harmonic, and
    /// outside each harmonic's reach.
    func clear(_ frequency: Double, of pitches: [Double]) -> Bool {
        guard Self.band.contains(frequency) else { return false }
        let binWidth = Double(sampleRate) / Double(Self.window)
        for pitch in pitches where pitch > 0 {
            // From the eighth harmonic up, the reaches meet: all theirs.
            if frequency > 7.5 * pitch { return false }
            let harmonic = max(1, (frequency / pitch).rounded())
            if abs(frequency - harmonic * pitch) <= harmonic * pitch * Self.reach + 2 * binWidth { return false }
        }
        return true
    }

    /// One frame (`window` samples each, at the same moment): the singer's
    /// microphone, each source, and the pitches the singer may be singing
    /// there (their written notes near it; empty while they rest).
    public func add(target: UnsafePointer<Float>, sources: [UnsafePointer<Float>], pitches: [Double]) {
        precondition(sources.count == sourceCount, "one frame per source")
        transform(target, into: &wanted)
        for (index, source) in sources.enumerated() { transform(source, into: &spectra[index]) }
        let binWidth = Double(sampleRate) / Double(Self.window)
        for bin in bandBins where clear(Double(bin) * binWidth, of: pitches) {
            bins += 1
            let (re, im) = (Double(wanted[2 * bin]), Double(wanted[2 * bin + 1]))
            for i in 0..<sourceCount {
                let (ri, ii) = (Double(spectra[i][2 * bin]), Double(spectra[i][2 * bin + 1]))
                right[i] += re * ri + im * ii
                for j in i..<sourceCount {
                    normal[i * sourceCount + j] += ri * Double(spectra[j][2 * bin]) + ii * Double(spectra[j][2 * bin + 1])
                }
            }
            guard findsDelays else { continue }
            // conj(R_i)·R_j and conj(R_i)·T.
            let n = sourceCount
            perBin[bin - bandBins.lowerBound].withUnsafeMutableBufferPointer { sums in
                for i in 0..<n {
                    let (ri, ii) = (Double(spectra[i][2 * bin]), Double(spectra[i][2 * bin + 1]))
                    for j in 0..<n {
                        let (rj, ij) = (Double(spectra[j][2 * bin]), Double(spectra[j][2 * bin + 1]))
                        sums[2 * (i * (n + 1) + j)] += ri * rj + ii * ij
                        sums[2 * (i * (n + 1) + j) + 1] += ri * ij - ii * rj
                    }
                    sums[2 * (i * (n + 1) + n)] += ri * re + ii * im
                    sums[2 * (i * (n + 1) + n) + 1] += ri * im - ii * re
                }
            }
        }
    }

    /// Where each source may reach the microphone, later than it was read
    /// (frames, within ±`maximum`): the peaks of its impulse response to
    /// the microphone, from its transfer found bin by bin with the other
    /// sources held apart (the complex least squares of each bin over the
    /// frames where the bin is clear) — once with every bin alike, once
    /// with each bin weighed by the source's energy in it. A strong path
    /// shows in both; a weak one may show in one of them, or in neither
    /// (crosstalk at 0.05 is buried under the singer's breath). The gains
    /// are then fitted at every place found (`gains`), so a wrong one is
    /// given little.
    public func delays(maximum: Int) -> [[Int]] {
        let n = sourceCount
        var alike = [[(Double, Double)]](repeating: [], count: n)
        var weighed = [[(Double, Double)]](repeating: [], count: n)
        for sums in perBin {
            let solved = Self.solveComplex(sums, n) ?? [(Double, Double)](repeating: (0, 0), count: n)
            for j in 0..<n {
                let energy = sums[2 * (j * (n + 1) + j)]
                alike[j].append(solved[j])
                weighed[j].append((solved[j].0 * energy, solved[j].1 * energy))
            }
        }
        func peak(_ response: [(Double, Double)]) -> Int {
            var best = (lag: 0, value: 0.0)
            for lag in -maximum...maximum {
                var value = 0.0
                for (offset, h) in response.enumerated() {
                    let phase = 2 * Double.pi * Double(bandBins.lowerBound + offset) * Double(lag) / Double(Self.window)
                    value += h.0 * cos(phase) - h.1 * sin(phase)
                }
                if value > best.value { best = (lag, value) }
            }
            return best.lag
        }
        // Two places a few frames apart are one path (the two sources would be
        // nearly the same, their gains large and opposite): the first is kept.
        return (0..<n).map { j in
            let first = peak(alike[j])
            let second = peak(weighed[j])
            return abs(first - second) <= Self.samePath ? [first] : [first, second]
        }
    }

    /// The complex system `sums` holds (n × n, then the right side, each
    /// row n + 1 complex numbers as re, im), solved with a little ridge;
    /// nil when singular.
    static func solveComplex(_ sums: [Double], _ n: Int) -> [(Double, Double)]? {
        // Spelled out step by step, with a named complex type: older
        // compilers (Debian's swiftlang 6.2, the aarch64 check) give up
        // type-checking the same arithmetic written on tuples in one line.
        var m = [[Complex]]()
        m.reserveCapacity(n)
        for i in 0..<n {
            var row = [Complex]()
            row.reserveCapacity(n + 1)
            for j in 0...n {
                let at: Int = 2 * (i * (n + 1) + j)
                row.append(Complex(sums[at], sums[at + 1]))
            }
            m.append(row)
        }
        var trace = 0.0
        for i in 0..<n { trace += m[i][i].re }
        guard trace > 0 else { return nil }
        for i in 0..<n { m[i][i].re += trace * 1e-6 }
        for pivot in 0..<n {
            var best = pivot
            for row in pivot..<n where m[row][pivot].magnitude > m[best][pivot].magnitude { best = row }
            m.swapAt(pivot, best)
            let divisor = m[pivot][pivot]
            guard divisor.magnitude > 0 else { return nil }
            for row in 0..<n where row != pivot {
                let factor = m[row][pivot].divided(by: divisor)
                for column in pivot...n {
                    m[row][column] = m[row][column].minus(factor.times(m[pivot][column]))
                }
            }
        }
        return (0..<n).map { i in
            let x = m[i][n].divided(by: m[i][i])
            return (x.re, x.im)
        }
    }

    /// A complex number for `solveComplex`.
    struct Complex {
        var re: Double
        var im: Double
        init(_ re: Double, _ im: Double) { self.re = re; self.im = im }
        var magnitude: Double { hypot(re, im) }
        func times(_ o: Complex) -> Complex {
            let r: Double = re * o.re - im * o.im
            let i: Double = re * o.im + im * o.re
            return Complex(r, i)
        }
        func minus(_ o: Complex) -> Complex { Complex(re - o.re, im - o.im) }
        func divided(by o: Complex) -> Complex {
            let size: Double = o.re * o.re + o.im * o.im
            let r: Double = (re * o.re + im * o.im) / size
            let i: Double = (im * o.re - re * o.im) / size
            return Complex(r, i)
        }
    }

    /// Each source's gain in the microphone (0 for a source that was never
    /// heard where the fit looked), or nil when nothing could be fitted.
    public func gains() -> [Double]? {
        let n = sourceCount
        guard bins > 0 else { return nil }
        let diagonal = (0..<n).map { normal[$0 * n + $0] }
        let largest = diagonal.max() ?? 0
        guard largest > 0 else { return nil }
        // Sources silent where the fit looked (a guide with nothing in it) are left out.
        let used = (0..<n).filter { diagonal[$0] > largest * 1e-8 }
        let matrix = used.map { i in used.map { j in normal[min(i, j) * n + max(i, j)] + (i == j ? diagonal[i] * 1e-9 : 0) } }
        guard let solved = TakeAnalyzer.solve(matrix, used.map { right[$0] }) else { return nil }
        var gains = [Double](repeating: 0, count: n)
        for (a, i) in used.enumerated() { gains[i] = solved[a] }
        return gains.allSatisfy(\.isFinite) ? gains : nil
    }
}
