public import AcapellaAnalysis
import AcapellaEngine

extension Calibration {
    /// How many times a measurement the device dropped frames in (an xrun
    /// on a loaded machine) is made again before calibration is refused.
    public static let attempts = 5

    /// Plays the test signal through `device` and records it: the
    /// measured round trip, as it is when capture and playback start
    /// together (an unlinked pair's start-up skew, which the device reports,
    /// taken out). A run the device dropped frames in is made again, up to
    /// `attempts` times; `retried` hears about each.
    public static func measure(device: any AudioDevice, maximumFrames: Int? = nil,
                               retried: (String) -> Void = { _ in }) throws(CalibrationError) -> CalibrationResult {
        var attempt = 1
        while true {
            do {
                return try measureOnce(device: device, maximumFrames: maximumFrames)
            } catch let error as DroppedFrames {
                guard attempt < attempts else {
                    throw CalibrationError(description: "the device dropped frames (an xrun) in each of \(attempts) tries, \(error.description): the machine is too busy for \(device.periodFrames)-frame periods; try a larger period or buffer")
                }
                retried("calibration: try \(attempt) of \(attempts): the device dropped frames (\(error.description)); measuring again")
                attempt += 1
            } catch let error as CalibrationError {
                throw error
            } catch {
                throw CalibrationError(description: "\(error)")
            }
        }
    }

    /// A run the device dropped frames in: where.
    struct DroppedFrames: Error, CustomStringConvertible {
        var description: String
    }

    private static func measureOnce(device: any AudioDevice, maximumFrames: Int?) throws -> CalibrationResult {
        let signal = testSignal(sampleRate: device.sampleRate)
        let lead = device.sampleRate / 4
        let longest = maximumFrames ?? device.sampleRate / 2
        let total = lead + signal.count + longest + 2 * device.periodFrames
        var played = [Float](repeating: 0, count: total)
        for index in signal.indices { played[lead + index] = signal[index] }
        let recorded = UnsafeMutableBufferPointer<Float>.allocate(capacity: total)
        recorded.initialize(repeating: 0)
        defer { recorded.deallocate() }
        var done = 0
        var expectedFrame: Int64 = 0
        var dropped: Int?
        var alignment: StreamAlignment?
        do {
            try played.withUnsafeBufferPointer { (source) throws(DeviceError) in
                try device.run(keepRunning: { done < total && dropped == nil }) { buffers in
                    if buffers.deviceFrame != expectedFrame {
                        dropped = done
                        return
                    }
                    alignment = alignment ?? buffers.alignment
                    let count = min(buffers.frames, total - done)
                    for index in 0..<count {
                        buffers.left[index] = source[done + index]
                        buffers.right[index] = source[done + index]
                        recorded[done + index] = buffers.input[index]
                    }
                    done += buffers.frames
                    expectedFrame = buffers.deviceFrame + Int64(buffers.frames)
                }
            }
        } catch {
            throw CalibrationError(description: "the device failed during calibration: \(error.description)")
        }
        if let dropped {
            throw DroppedFrames(description: String(format: "%.2f s in", Double(dropped) / Double(device.sampleRate)))
        }
        var result = try estimate(played: played, recorded: Array(recorded), maximumFrames: longest)
        result.roundTripFrames -= Double(alignment?.captureSkewFrames ?? 0)
        return result
    }
}
