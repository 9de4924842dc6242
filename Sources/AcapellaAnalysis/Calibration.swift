internal import CFFTW
import Foundation

/// Why a calibration was refused, said so the singer can fix it.
public struct CalibrationError: Error, CustomStringConvertible, Equatable {
    /// What went wrong and what to do.
    public var description: String

    /// An error saying `description`.
    public init(description: String) {
        self.description = description
    }
}

/// A measured round trip.
public struct CalibrationResult: Sendable, Equatable {
    /// Output-to-input delay, frames, to a fraction of a frame.
    public var roundTripFrames: Double
    /// The correlation peak over the median correlation magnitude, dB: how
    /// clearly the signal came back.
    public var clarityDB: Double
    /// FFT size used for the cross-correlation.
    public var fftSize: Int
}

/// Latency calibration: play a logarithmic sine sweep, record it through
/// a loopback (a cable, or headphones held to the microphone),
/// cross-correlate with FFTW (single precision), and refine the peak to a
/// fraction of a frame by evaluating the band-limited correlation between
/// samples. Refuses inverted polarity, several peaks of similar height and
/// too little signal, saying why.
public enum Calibration {
    /// The test signal: a 1 s logarithmic sweep from 100 Hz to 8 kHz at
    /// −6 dBFS with 10 ms fades. A sweep's autocorrelation is one narrow
    /// peak, far more robust to noise and echoes than a click.
    public static func testSignal(sampleRate: Int) -> [Float] {
        let count = sampleRate
        let low = 100.0, high = min(8_000.0, 0.4 * Double(sampleRate))
        let duration = Double(count) / Double(sampleRate)
        let rate = log(high / low)
        let fade = Double(sampleRate) * 0.01
        return (0..<count).map { index in
            let t = Double(index) / Double(sampleRate)
            let phase = 2 * Double.pi * low * duration / rate * (exp(t / duration * rate) - 1)
            let envelope = min(1, Double(index) / fade, Double(count - 1 - index) / fade)
            return Float(0.5 * sin(phase) * envelope)
        }
    }

    /// Estimates how many frames after `played` the `recorded` signal
    /// holds it (both from the same frame 0), within `maximumFrames`.
    public static func estimate(played: [Float], recorded: [Float], maximumFrames: Int) throws(CalibrationError) -> CalibrationResult {
        guard !played.isEmpty, recorded.count >= played.count else {
            throw CalibrationError(description: "the recording is shorter than the test signal")
        }
        let recordedRMS = (recorded.reduce(0) { $0 + Double($1) * Double($1) } / Double(recorded.count)).squareRoot()
        guard recordedRMS > 1e-4 else {
            throw CalibrationError(description: "almost nothing came back (\(String(format: "%.0f", 20 * log10(max(recordedRMS, 1e-12)))) dBFS): connect the loopback or raise the volume")
        }
        var size = 1
        while size < played.count + recorded.count { size *= 2 }
        let spectrumCount = size / 2 + 1
        let input = fftwf_alloc_real(size)!
        let spectrumA = fftwf_alloc_complex(spectrumCount)!
        let spectrumB = fftwf_alloc_complex(spectrumCount)!
        let output = fftwf_alloc_real(size)!
        defer {
            fftwf_free(input)
            fftwf_free(spectrumA)
            fftwf_free(spectrumB)
            fftwf_free(output)
        }
        // Plans are made before the data is written (FFTW_ESTIMATE leaves the arrays alone).
        // The whole transform runs under the planner lock: plans are not
        // thread-safe, and calibrations are rare.
        var spectrum = [(Double, Double)](repeating: (0, 0), count: spectrumCount)
        let planned = spectrum.withUnsafeMutableBufferPointer { spectrumCopy in
            fftwPlanner.withLock { _ -> Bool in
                let forwardA = fftwf_plan_dft_r2c_1d(Int32(size), input, spectrumA, UInt32(FFTW_ESTIMATE))
                let forwardB = fftwf_plan_dft_r2c_1d(Int32(size), input, spectrumB, UInt32(FFTW_ESTIMATE))
                let backward = fftwf_plan_dft_c2r_1d(Int32(size), spectrumA, output, UInt32(FFTW_ESTIMATE))
                defer {
                    if let forwardA { fftwf_destroy_plan(forwardA) }
                    if let forwardB { fftwf_destroy_plan(forwardB) }
                    if let backward { fftwf_destroy_plan(backward) }
                }
                guard forwardA != nil, forwardB != nil, backward != nil else { return false }
                input.update(repeating: 0, count: size)
                for index in recorded.indices { input[index] = recorded[index] }
                fftwf_execute(forwardA)
                input.update(repeating: 0, count: size)
                for index in played.indices { input[index] = played[index] }
                fftwf_execute(forwardB)
                // R = A · conj(B): the cross-correlation's spectrum (kept for
                // the band-limited evaluation between samples).
                for bin in 0..<spectrumCount {
                    let (ar, ai) = (spectrumA[bin].0, spectrumA[bin].1)
                    let (br, bi) = (spectrumB[bin].0, spectrumB[bin].1)
                    spectrumA[bin].0 = ar * br + ai * bi
                    spectrumA[bin].1 = ai * br - ar * bi
                    spectrumCopy[bin] = (Double(spectrumA[bin].0), Double(spectrumA[bin].1))
                }
                fftwf_execute(backward)
                return true
            }
        }
        guard planned else { throw CalibrationError(description: "FFTW could not plan a \(size)-point transform") }
        let lags = min(maximumFrames, recorded.count - 1)
        var peak = 0
        var peakValue: Float = 0
        for lag in 0...lags where abs(output[lag]) > abs(peakValue) {
            peak = lag
            peakValue = output[lag]
        }
        guard peakValue > 0 else {
            throw CalibrationError(description: "the signal came back upside down (polarity inverted): check the cable or the interface's phase switch")
        }
        // Clarity and competing peaks, away from the main lobe.
        var magnitudes: [Float] = (0...lags).map { abs(output[$0]) }
        let lobe = 48
        var rival: Float = 0
        for lag in 0...lags where abs(lag - peak) > lobe { rival = max(rival, magnitudes[lag]) }
        magnitudes.sort()
        let median = Double(max(magnitudes[magnitudes.count / 2], 1e-20))
        let clarity = 20 * log10(Double(peakValue) / median)
        guard clarity >= 20 else {
            throw CalibrationError(description: String(format: "the signal is buried in noise (peak %.0f dB over the background, 20 needed): raise the volume or quieten the room", clarity))
        }
        guard rival < 0.5 * peakValue else {
            throw CalibrationError(description: "several echoes of similar strength came back: use a cable, or hold the headphones right at the microphone")
        }
        // Between samples: the correlation is band-limited, so evaluate it
        // exactly from its spectrum on a fine grid, then a parabola.
        func correlation(at lag: Double) -> Double {
            var sum = spectrum[0].0
            for bin in 1..<(spectrumCount - 1) {
                let angle = 2 * Double.pi * Double(bin) * lag / Double(size)
                sum += 2 * (spectrum[bin].0 * cos(angle) - spectrum[bin].1 * sin(angle))
            }
            sum += spectrum[spectrumCount - 1].0 * cos(Double.pi * lag)
            return sum
        }
        var best = (lag: Double(peak), value: correlation(at: Double(peak)))
        var step = 0.25
        while step >= 0.001 {
            for candidate in [best.lag - step, best.lag + step] {
                let value = correlation(at: candidate)
                if value > best.value { best = (candidate, value) }
            }
            step /= 2
        }
        return CalibrationResult(roundTripFrames: best.lag, clarityDB: clarity, fftSize: size)
    }
}
