/// The offline driver: the same renderer as the live box, run as fast as
/// possible, period by period, into memory (mixdown and tests).
public enum OfflineRender {
    /// Stereo audio in two channel arrays.
    public struct Stereo: Sendable {
        /// Left channel.
        public var left: [Float]
        /// Right channel.
        public var right: [Float]
        /// The song sample of frame 0.
        public var firstSample: Int64
    }

    /// Renders from the schedule's start (count-in included) to the end of
    /// the last release tail, in periods of `periodFrames`.
    public static func render(
        _ schedule: Schedule, mixes: [PartMix], takes: [PartTakes]? = nil, clickGain: Float = 0, periodFrames: Int = 1024,
        progress: ((Double) -> Void)? = nil
    ) -> Stereo {
        let total = frameCount(schedule)
        var left = [Float](unsafeUninitializedCapacity: total) { $1 = $0.count }  // every frame is rendered
        var right = [Float](unsafeUninitializedCapacity: total) { $1 = $0.count }
        var first: Int64 = 0
        var done = 0
        left.withUnsafeMutableBufferPointer { leftBuffer in
            right.withUnsafeMutableBufferPointer { rightBuffer in
                first = stream(schedule, mixes: mixes, takes: takes, clickGain: clickGain, periodFrames: periodFrames, progress: progress) { l, r, frames in
                    (leftBuffer.baseAddress! + done).update(from: l, count: frames)
                    (rightBuffer.baseAddress! + done).update(from: r, count: frames)
                    done += frames
                }
            }
        }
        return Stereo(left: left, right: right, firstSample: first)
    }

    /// Frames `render` produces: count-in, music, and 100 ms for the
    /// release tails and the last click to die away.
    public static func frameCount(_ schedule: Schedule) -> Int {
        Int(schedule.endSample + Int64(schedule.options.sampleRate / 10) - schedule.startSample)
    }

    /// The same render handed to `sink` period by period (no full-length
    /// buffers: tones straight to a file). Returns the song sample of the
    /// first frame. Streamed takes are read by `butler`, serviced before
    /// each period.
    @discardableResult
    public static func stream<Failure: Error>(
        _ schedule: Schedule, mixes: [PartMix], takes: [PartTakes]? = nil, clickGain: Float = 0, periodFrames: Int = 1024,
        butler: TakeStreamButler? = nil, progress: ((Double) -> Void)? = nil, sink: (UnsafePointer<Float>, UnsafePointer<Float>, Int) throws(Failure) -> Void
    ) throws(Failure) -> Int64 {
        var renderer = SongRenderer(schedule: schedule, mixes: mixes, takes: takes, clickGain: clickGain, maximumFrames: periodFrames)
        if let butler, let takes {
            renderer.cue = butler.cue
            butler.watch(takes, fade: Int64(renderer.rampSamples))
        }
        let first = renderer.position
        let total = frameCount(schedule)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: periodFrames)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: periodFrames)
        defer {
            left.deallocate()
            right.deallocate()
        }
        var done = 0
        var reported = -1
        while done < total {
            let frames = min(periodFrames, total - done)
            if let butler {
                butler.cue.publish(position: renderer.position, loop: renderer.loop, next: nil)
                butler.service()
            }
            renderer.render(left: left, right: right, frames: frames)
            try sink(left, right, frames)
            done += frames
            let percent = done * 100 / max(total, 1)
            if let progress, percent != reported {
                reported = percent
                progress(Double(done) / Double(total))
            }
        }
        return first
    }
}
