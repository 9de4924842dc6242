/// An offline look-ahead peak limiter with a soft knee, for mixdown.
///
/// The gain each sample needs is computed from the stereo peak with a 6 dB
/// soft knee below `ceiling`; a sliding minimum over the look-ahead window
/// makes the gain come down before a peak arrives, a 50 ms release lets it
/// recover, and the result is never above what the sample itself needs, so
/// no sample exceeds the ceiling.
///
/// Streaming: one pass, memory of one look-ahead window (a ring of the
/// needed gains and a monotonic queue for the sliding minimum), so a long
/// mix costs no scratch arrays of its own length.
public enum Limiter {
    /// Writes `input × gain`, limited to `ceiling` (linear, sample peak),
    /// into `output`. Input and output may be the same memory.
    public static func process(
        left: UnsafeBufferPointer<Float>, right: UnsafeBufferPointer<Float>, gain inputGain: Float = 1,
        into outLeft: UnsafeMutableBufferPointer<Float>, _ outRight: UnsafeMutableBufferPointer<Float>, ceiling: Float, sampleRate: Int
    ) {
        let count = min(left.count, right.count, outLeft.count, outRight.count)
        guard count > 0 else { return }
        let knee: Float = 0.5  // the knee starts 6 dB below the ceiling
        let kneeStart = ceiling * knee
        let span = 2 * (ceiling - kneeStart)
        /// Gain sample `index` needs on its own.
        func needed(_ index: Int) -> Float {
            let peak = max(abs(left[index] * inputGain), abs(right[index] * inputGain))
            if peak <= kneeStart { return 1 }
            // Soft knee: output rises from kneeStart to the ceiling as the
            // input goes from kneeStart to 2·ceiling − kneeStart, then flat.
            let over = peak - kneeStart
            let output = over >= span ? ceiling : kneeStart + over - over * over / (2 * span)
            return output / peak
        }
        let lookahead = max(1, sampleRate * 5 / 1000)
        var size = 1
        while size < lookahead + 2 { size *= 2 }
        let mask = size - 1  // a power of two: ring slots by masking, not division
        // needed(i) for the window, by i & mask; the sliding-minimum queue
        // of (index, needed) for the samples that need less than unity
        // (the others cannot be the minimum unless the queue is empty, and
        // then the minimum is 1), ring-buffered, increasing in needed.
        let ring = UnsafeMutablePointer<Float>.allocate(capacity: size)
        let queueIndex = UnsafeMutablePointer<Int>.allocate(capacity: size)
        let queueValue = UnsafeMutablePointer<Float>.allocate(capacity: size)
        defer {
            ring.deallocate()
            queueIndex.deallocate()
            queueValue.deallocate()
        }
        var head = 0  // positions count up; slot = position & mask
        var tail = 0
        var next = 0
        // Attack: glide down over the look-ahead; release: 50 ms.
        let attackCoefficient = Float(1) / Float(lookahead)
        let releaseCoefficient = Float(1) / Float(max(1, sampleRate / 20))
        var gain: Float = 1
        for index in 0..<count {
            let horizon = min(count, index + lookahead + 1)
            while next < horizon {
                let value = needed(next)
                ring[next & mask] = value
                if value < 1 {
                    while tail > head && queueValue[(tail - 1) & mask] >= value { tail -= 1 }
                    queueIndex[tail & mask] = next
                    queueValue[tail & mask] = value
                    tail += 1
                }
                next += 1
            }
            while tail > head && queueIndex[head & mask] < index { head += 1 }
            let goal: Float = tail > head ? queueValue[head & mask] : 1
            if goal == 1 && gain == 1 {
                // Nothing to limit near here: the gain alone.
                outLeft[index] = left[index] * inputGain
                outRight[index] = right[index] * inputGain
                continue
            }
            gain += (goal - gain) * (goal < gain ? attackCoefficient : releaseCoefficient)
            // The release only approaches unity (in floats it stalls just
            // short of it): within 0.0001 dB, it has arrived.
            if goal == 1 && gain > 0.999_988 { gain = 1 }
            let applied = min(gain, ring[index & mask])
            outLeft[index] = left[index] * inputGain * applied
            outRight[index] = right[index] * inputGain * applied
        }
    }
}
