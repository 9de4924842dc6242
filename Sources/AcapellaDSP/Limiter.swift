/// An offline look-ahead peak limiter with a soft knee, for mixdown.
///
/// The gain each sample needs is computed from the stereo peak with a 6 dB
/// soft knee below `ceiling`; a sliding minimum over the look-ahead window
/// makes the gain come down before a peak arrives, a 50 ms release lets it
/// recover, and the result is never above what the sample itself needs, so
/// no sample exceeds the ceiling.
public enum Limiter {
    /// Limits `left` and `right` in place to `ceiling` (linear, sample peak).
    public static func process(left: inout [Float], right: inout [Float], ceiling: Float, sampleRate: Int) {
        let count = min(left.count, right.count)
        guard count > 0 else { return }
        let knee: Float = 0.5  // the knee starts 6 dB below the ceiling
        let kneeStart = ceiling * knee
        // Gain each sample needs on its own.
        var needed = [Float](repeating: 1, count: count)
        for index in 0..<count {
            let peak = max(abs(left[index]), abs(right[index]))
            if peak <= kneeStart { continue }
            // Soft knee: output rises from kneeStart to the ceiling as the
            // input goes from kneeStart to 2·ceiling − kneeStart, then flat.
            let over = peak - kneeStart
            let span = 2 * (ceiling - kneeStart)
            let output = over >= span ? ceiling : kneeStart + over - over * over / (2 * span)
            needed[index] = output / peak
        }
        // Sliding minimum over the look-ahead (monotonic queue, O(n)).
        let lookahead = max(1, sampleRate * 5 / 1000)
        var target = [Float](repeating: 1, count: count)
        var queue = [Int](repeating: 0, count: count + lookahead)
        var head = 0
        var tail = 0
        var next = 0
        for index in 0..<count {
            while next < min(count, index + lookahead + 1) {
                while tail > head && needed[queue[tail - 1]] >= needed[next] { tail -= 1 }
                queue[tail] = next
                tail += 1
                next += 1
            }
            while queue[head] < index { head += 1 }
            target[index] = needed[queue[head]]
        }
        // Attack: glide down over the look-ahead; release: 50 ms.
        let attackCoefficient = Float(1) / Float(lookahead)
        let releaseCoefficient = Float(1) / Float(max(1, sampleRate / 20))
        var gain: Float = 1
        for index in 0..<count {
            let goal = target[index]
            gain += (goal - gain) * (goal < gain ? attackCoefficient : releaseCoefficient)
            let applied = min(gain, needed[index])
            left[index] *= applied
            right[index] *= applied
        }
    }
}
