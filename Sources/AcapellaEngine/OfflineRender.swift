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
        var renderer = SongRenderer(schedule: schedule, mixes: mixes, takes: takes, clickGain: clickGain, maximumFrames: periodFrames)
        let first = renderer.position
        let tail = Int64(schedule.options.sampleRate / 10)  // releases and clicks die within 100 ms
        let total = Int(schedule.endSample + tail - first)
        var left = [Float](repeating: 0, count: total)
        var right = [Float](repeating: 0, count: total)
        var done = 0
        var reported = -1
        left.withUnsafeMutableBufferPointer { leftBuffer in
            right.withUnsafeMutableBufferPointer { rightBuffer in
                while done < total {
                    let frames = min(periodFrames, total - done)
                    renderer.render(left: leftBuffer.baseAddress! + done, right: rightBuffer.baseAddress! + done, frames: frames)
                    done += frames
                    let percent = done * 100 / max(total, 1)
                    if let progress, percent != reported {
                        reported = percent
                        progress(Double(done) / Double(total))
                    }
                }
            }
        }
        return Stereo(left: left, right: right, firstSample: first)
    }
}
