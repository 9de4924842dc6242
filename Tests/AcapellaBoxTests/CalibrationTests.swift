import AcapellaAnalysis
@testable import AcapellaDevices
import Foundation
import Testing

/// A room that is only a loopback: the playback comes back after `latency`
/// frames, scaled by `gain`, with uniform noise of amplitude `noise`.
func loopbackRoom(latency: Double, gain: Float = 1, noise: Float = 0, period: Int = 64) throws -> SimulatedRoom {
    var options = SimulatedRoom.Options()
    options.latencyFrames = latency
    options.periodFrames = period
    options.bleed = gain
    options.noise = noise
    return try SimulatedRoom(options)
}

@Suite struct CalibrationTests {
    /// Whole and fractional round trips, clean and with noise 30 dB below
    /// the signal: estimated within ±0.1 frame.
    @Test(arguments: [(17.0, 8), (240.5, 64), (1031.27, 128), (317.4, 128)])
    func roundTripsAreMeasuredToATenthOfAFrame(latency: Double, period: Int) throws {
        for noise: Float in [0, 0.0194] {  // 0.0194 uniform ≈ −30 dB under the sweep's RMS
            let result = try Calibration.measure(device: try loopbackRoom(latency: latency, noise: noise, period: period))
            #expect(abs(result.roundTripFrames - latency) <= 0.1, "latency \(latency), noise \(noise): measured \(result.roundTripFrames)")
            print(String(format: "calibration: %.2f frames measured as %.3f (noise %.4f, clarity %.0f dB, FFT %d)", latency, result.roundTripFrames, noise, result.clarityDB, result.fftSize))
        }
    }

    /// Noise 30 dB above the signal: either still within ±0.1, or refused
    /// with a reason — never a wrong number.
    @Test func drowningNoiseIsMeasuredOrRefused() throws {
        do {
            let result = try Calibration.measure(device: try loopbackRoom(latency: 240.5, gain: 0.02, noise: 0.35))
            #expect(abs(result.roundTripFrames - 240.5) <= 0.1, "measured \(result.roundTripFrames)")
            print(String(format: "calibration under noise 30 dB above the signal: %.3f frames (clarity %.0f dB)", result.roundTripFrames, result.clarityDB))
        } catch let error as CalibrationError {
            print("calibration under noise 30 dB above the signal: refused: \(error)")
            #expect(error.description.contains("noise") || error.description.contains("nothing came back"), "\(error)")
        }
    }

    /// A loaded machine: the first try xruns and is made again (said), the
    /// second measures; an unlinked pair's start-up skew, reported by the
    /// device, is taken out of the figure. A device that xruns in every try
    /// is refused after five, saying why.
    @Test func anXrunMeasuresAgainAndUnlinkedSkewIsTakenOut() throws {
        var options = SimulatedRoom.Options()
        options.latencyFrames = 240.5
        options.periodFrames = 64
        options.noise = 0
        options.bleed = 1
        options.unlinked = true
        options.xruns = [20: 100]
        var said: [String] = []
        let result = try Calibration.measure(device: try SimulatedRoom(options)) { said.append($0) }
        #expect(abs(result.roundTripFrames - 240.5) <= 0.1, "measured \(result.roundTripFrames)")
        #expect(said.count == 1 && said[0].hasPrefix("calibration: try 1 of 5: the device dropped frames (0.03 s in)"), "\(said)")

        options.xruns = Dictionary(uniqueKeysWithValues: stride(from: 10, to: 20_000, by: 200).map { ($0, 64) })
        said = []
        do {
            _ = try Calibration.measure(device: try SimulatedRoom(options)) { said.append($0) }
            Issue.record("a device that xruns every time was calibrated")
        } catch let error as CalibrationError {
            #expect(error.description.hasPrefix("the device dropped frames (an xrun) in each of 5 tries"), "\(error)")
            #expect(said.count == 4)
        }
    }

    @Test func invertedPolarityIsRefused() throws {
        #expect(throws: CalibrationError.self) { try Calibration.measure(device: try loopbackRoom(latency: 240.5, gain: -1)) }
        do { _ = try Calibration.measure(device: try loopbackRoom(latency: 240.5, gain: -1)) } catch let error as CalibrationError {
            #expect(error.description.contains("polarity inverted"))
        }
    }

    @Test func aQuietSignalIsRefused() throws {
        do {
            _ = try Calibration.measure(device: try loopbackRoom(latency: 240.5, gain: 0.000_01))
            Issue.record("a signal at −100 dB was accepted")
        } catch let error as CalibrationError {
            #expect(error.description.contains("nothing came back"), "\(error)")
        }
    }

    @Test func twoEqualEchoesAreRefused() throws {
        let signal = Calibration.testSignal(sampleRate: 48_000)
        var recorded = [Float](repeating: 0, count: signal.count + 4_000)
        for (index, value) in signal.enumerated() {
            recorded[index + 300] += value
            recorded[index + 2_300] += 0.9 * value
        }
        #expect(throws: CalibrationError(description: "several echoes of similar strength came back: use a cable, or hold the headphones right at the microphone")) {
            try Calibration.estimate(played: signal, recorded: recorded, maximumFrames: 3_000)
        }
    }
}
