/// An offline look-ahead peak limiter with a soft knee, for mixdown.
///
/// The gain each sample needs is computed from the stereo peak with a 6 dB
/// soft knee below `ceiling`; a sliding minimum over the look-ahead window
/// makes the gain come down before a peak arrives, a 50 ms release lets it
/// recover, and the result is never above what the sample itself needs, so
/// no sample exceeds the ceiling.
///
/// Streaming: fed a chunk at a time, it hands each sample back once the
/// look-ahead window after it has arrived (5 ms late; `finish` hands back
/// the rest). Memory of one look-ahead window: rings of the input and the
/// needed gains, and a monotonic queue for the sliding minimum.
public struct StreamingLimiter: ~Copyable {
    let inputGain: Float
    let ceiling: Float
    let kneeStart: Float
    let span: Float
    let lookahead: Int
    let mask: Int
    let attackCoefficient: Float
    let releaseCoefficient: Float
    // Rings by absolute index & mask: the input (gain not applied) and the gain each needs.
    let ringLeft: UnsafeMutablePointer<Float>
    let ringRight: UnsafeMutablePointer<Float>
    let ring: UnsafeMutablePointer<Float>
    // The sliding-minimum queue of (index, needed) for samples needing less than unity, increasing in needed.
    let queueIndex: UnsafeMutablePointer<Int>
    let queueValue: UnsafeMutablePointer<Float>
    var head = 0
    var tail = 0
    /// Samples received, and handed back.
    var received = 0
    var emitted = 0
    var gain: Float = 1
    /// The samples the limiter lowered (runs of indices, in order); every
    /// other sample came out as `input × gain`, exactly.
    public private(set) var lowered: [Range<Int>] = []

    /// A limiter of `input × gain` to `ceiling` (linear, sample peak).
    public init(gain: Float = 1, ceiling: Float, sampleRate: Int) {
        inputGain = gain
        self.ceiling = ceiling
        kneeStart = ceiling * 0.5  // the knee starts 6 dB below the ceiling
        span = 2 * (ceiling - ceiling * 0.5)
        lookahead = max(1, sampleRate * 5 / 1000)
        var size = 1
        while size < lookahead + 2 { size *= 2 }
        mask = size - 1  // a power of two: ring slots by masking, not division
        // Attack: glide down over the look-ahead; release: 50 ms.
        attackCoefficient = Float(1) / Float(lookahead)
        releaseCoefficient = Float(1) / Float(max(1, sampleRate / 20))
        ringLeft = .allocate(capacity: size)
        ringRight = .allocate(capacity: size)
        ring = .allocate(capacity: size)
        queueIndex = .allocate(capacity: size)
        queueValue = .allocate(capacity: size)
    }

    deinit {
        ringLeft.deallocate()
        ringRight.deallocate()
        ring.deallocate()
        queueIndex.deallocate()
        queueValue.deallocate()
    }

    /// How late the output is, in samples.
    public var latency: Int { lookahead }

    /// Gain sample `index` needs on its own (it must be in the rings).
    private func needed(_ index: Int) -> Float {
        let peak = max(abs(ringLeft[index & mask] * inputGain), abs(ringRight[index & mask] * inputGain))
        if peak <= kneeStart { return 1 }
        // Soft knee: output rises from kneeStart to the ceiling as the
        // input goes from kneeStart to 2·ceiling − kneeStart, then flat.
        let over = peak - kneeStart
        let output = over >= span ? ceiling : kneeStart + over - over * over / (2 * span)
        return output / peak
    }

    /// Takes `count` samples; writes the samples now complete (the first
    /// `latency` of the stream come later) to `outLeft`/`outRight` and
    /// returns how many. Input and output may be the same memory.
    public mutating func process(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int,
                                 into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>) -> Int {
        var written = 0
        for offset in 0..<count {
            let next = received
            ringLeft[next & mask] = left[offset]
            ringRight[next & mask] = right[offset]
            let value = needed(next)
            ring[next & mask] = value
            if value < 1 {
                while tail > head && queueValue[(tail - 1) & mask] >= value { tail -= 1 }
                queueIndex[tail & mask] = next
                queueValue[tail & mask] = value
                tail += 1
            }
            received += 1
            // The sample a look-ahead back now has its whole window.
            if next >= lookahead {
                emit(into: outLeft + written, outRight + written)
                written += 1
            }
        }
        return written
    }

    /// Hands back the last `latency` samples (fewer for a shorter stream);
    /// returns how many.
    public mutating func finish(into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>) -> Int {
        var written = 0
        while emitted < received {
            emit(into: outLeft + written, outRight + written)
            written += 1
        }
        return written
    }

    private mutating func emit(into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>) {
        let index = emitted
        emitted += 1
        while tail > head && queueIndex[head & mask] < index { head += 1 }
        let goal: Float = tail > head ? queueValue[head & mask] : 1
        let left = ringLeft[index & mask]
        let right = ringRight[index & mask]
        if goal == 1 && gain == 1 {
            // Nothing to limit near here: the gain alone.
            outLeft.pointee = left * inputGain
            outRight.pointee = right * inputGain
            return
        }
        gain += (goal - gain) * (goal < gain ? attackCoefficient : releaseCoefficient)
        // The release only approaches unity (in floats it stalls just
        // short of it): within 0.0001 dB, it has arrived.
        if goal == 1 && gain > 0.999_988 { gain = 1 }
        let applied = min(gain, ring[index & mask])
        outLeft.pointee = left * inputGain * applied
        outRight.pointee = right * inputGain * applied
        if applied < 1 {
            if let last = lowered.last, last.upperBound == index {
                lowered[lowered.count - 1] = last.lowerBound..<(index + 1)
            } else {
                lowered.append(index..<(index + 1))
            }
        }
    }
}

public enum Limiter {
    /// Writes `input × gain`, limited to `ceiling` (linear, sample peak),
    /// into `output`: the streaming limiter fed everything at once.
    /// Input and output may be the same memory.
    public static func process(
        left: UnsafeBufferPointer<Float>, right: UnsafeBufferPointer<Float>, gain inputGain: Float = 1,
        into outLeft: UnsafeMutableBufferPointer<Float>, _ outRight: UnsafeMutableBufferPointer<Float>, ceiling: Float, sampleRate: Int
    ) {
        let count = min(left.count, right.count, outLeft.count, outRight.count)
        guard count > 0 else { return }
        var limiter = StreamingLimiter(gain: inputGain, ceiling: ceiling, sampleRate: sampleRate)
        let done = limiter.process(left: left.baseAddress!, right: right.baseAddress!, count: count, into: outLeft.baseAddress!, outRight.baseAddress!)
        _ = limiter.finish(into: outLeft.baseAddress! + done, outRight.baseAddress! + done)
    }
}
