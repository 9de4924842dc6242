public import AcapellaAnalysis

extension Calibration {
    /// Plays the test signal through `device` and records it: the
    /// measured round trip. Refuses when the device drops frames meanwhile.
    public static func measure(device: any AudioDevice, maximumFrames: Int? = nil) throws(CalibrationError) -> CalibrationResult {
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
        var dropped = false
        do {
            try played.withUnsafeBufferPointer { (source) throws(DeviceError) in
                try device.run(keepRunning: { done < total }) { buffers in
                    if buffers.deviceFrame != expectedFrame { dropped = true }
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
        guard !dropped else { throw CalibrationError(description: "the device dropped frames during calibration (an xrun): try a larger period or buffer") }
        return try estimate(played: played, recorded: Array(recorded), maximumFrames: longest)
    }
}
