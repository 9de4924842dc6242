internal import CEBUR128
import Dispatch
import Foundation
import Synchronization

/// Loudness and true peak per EBU R128 / ITU-R BS.1770, measured with
/// libebur128.
public struct LoudnessMeasurement: Hashable, Sendable {
    /// Integrated loudness, LUFS.
    public var integratedLUFS: Double
    /// Highest true peak over all channels, dBTP (an upper bound when
    /// `truePeakIsExact` is false).
    public var truePeakDBTP: Double
    /// Whether `truePeakDBTP` is the measured value rather than a bound
    /// (the measurement skips audio that provably stays below a floor).
    public var truePeakIsExact = true

    /// "-1.3 dBTP" or "≤ -7.2 dBTP".
    public var truePeakText: String {
        (truePeakIsExact ? "" : "≤ ") + String(format: "%.1f dBTP", truePeakDBTP)
    }
}

/// Why a measurement failed (libebur128 refused the input).
public struct LoudnessError: Error, CustomStringConvertible {
    /// What happened.
    public var description: String
}

public enum Loudness {
    /// Measures interleaved float audio. `channelMap` names each channel for
    /// surround material (libebur128's default assumes an LFE at index 3).
    /// The corresponding C functions are `ebur128_init`,
    /// `ebur128_add_frames_float`, `ebur128_loudness_global` and
    /// `ebur128_true_peak`.
    public static func measure(interleaved samples: [Float], channels: Int, sampleRate: Int, surround5: Bool = false) throws(LoudnessError) -> LoudnessMeasurement {
        var handle = ebur128_init(UInt32(channels), UInt(sampleRate), Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue))
        guard let state = handle else {
            throw LoudnessError(description: "libebur128 could not start (\(channels) channels at \(sampleRate) Hz)")
        }
        defer { ebur128_destroy(&handle) }
        if surround5 && channels == 5 {
            _ = ebur128_set_channel(state, 3, Int32(EBUR128_LEFT_SURROUND.rawValue))
            _ = ebur128_set_channel(state, 4, Int32(EBUR128_RIGHT_SURROUND.rawValue))
        }
        let frames = samples.count / channels
        let added = samples.withUnsafeBufferPointer { ebur128_add_frames_float(state, $0.baseAddress, frames) }
        guard added == 0 else { throw LoudnessError(description: "libebur128 rejected the audio (code \(added))") }
        var loudness = 0.0
        guard ebur128_loudness_global(state, &loudness) == 0 else { throw LoudnessError(description: "no integrated loudness") }
        var peak = 0.0
        for channel in 0..<channels {
            var channelPeak = 0.0
            if ebur128_true_peak(state, UInt32(channel), &channelPeak) == 0 { peak = max(peak, channelPeak) }
        }
        return LoudnessMeasurement(integratedLUFS: loudness, truePeakDBTP: peak > 0 ? 20 * log10(peak) : -.infinity)
    }

    /// Measures two channel arrays: the integrated loudness (fed to
    /// libebur128 in chunks, no full interleaved copy) and, when asked, the
    /// true peak — its 4× oversampling is the costly part, so each
    /// channel's runs on its own thread beside the loudness pass, and only
    /// where it could reach `truePeakFloorDBTP` (below the floor the result
    /// is a bound; see `channelTruePeak`).
    public static func measure(
        left: [Float], right: [Float], sampleRate: Int, truePeak: Bool = true, truePeakFloorDBTP: Double = -.infinity
    ) throws(LoudnessError) -> LoudnessMeasurement {
        let floor = truePeakFloorDBTP.isFinite ? pow(10, truePeakFloorDBTP / 20) : 0
        // Jobs: the loudness of each half (block lists joined afterwards),
        // then the true peak of each channel.
        let halves = integratedHalves(frames: left.count, sampleRate: sampleRate)
        let jobs = halves.count + (truePeak ? 2 : 0)
        let results = Mutex<[Result<(Double, Bool), LoudnessError>?]>(Array(repeating: nil, count: jobs))
        let states = Mutex<[MeterState]>(Array(repeating: MeterState(pointer: nil), count: halves.count))
        DispatchQueue.concurrentPerform(iterations: jobs) { job in
            let result: Result<(Double, Bool), LoudnessError>
            if job < halves.count {
                result = Result { () throws(LoudnessError) in
                    let state = try loudnessState(left: left, right: right, range: halves[job], sampleRate: sampleRate)
                    states.withLock { $0[job] = MeterState(pointer: state) }
                    return (0, true)
                }
            } else {
                let channel = job - halves.count == 0 ? left : right
                result = Result { () throws(LoudnessError) in try channelTruePeak(channel, sampleRate: sampleRate, floor: floor) }
            }
            results.withLock { $0[job] = result }
        }
        var handles = states.withLock { $0 }.map(\.pointer)
        defer { for index in handles.indices where handles[index] != nil { ebur128_destroy(&handles[index]) } }
        let values = results.withLock { $0 }
        for value in values { _ = try value!.get() }
        var loudness = 0.0
        let status = handles.withUnsafeMutableBufferPointer { ebur128_loudness_global_multiple($0.baseAddress, $0.count, &loudness) }
        guard status == 0 else { throw LoudnessError(description: "no integrated loudness") }
        guard truePeak else { return LoudnessMeasurement(integratedLUFS: loudness, truePeakDBTP: -.infinity) }
        let (leftPeak, leftExact) = try values[halves.count]!.get()
        let (rightPeak, rightExact) = try values[halves.count + 1]!.get()
        let exact = leftPeak >= rightPeak ? leftExact : rightExact
        let peak = max(leftPeak, rightPeak)
        return LoudnessMeasurement(integratedLUFS: loudness, truePeakDBTP: peak > 0 ? 20 * log10(peak) : -.infinity, truePeakIsExact: exact)
    }

    /// A libebur128 state handed from a worker thread back to the caller
    /// (through a mutex; only one thread uses it at a time).
    struct MeterState: @unchecked Sendable {
        var pointer: UnsafeMutablePointer<ebur128_state>?
    }

    /// How to split `frames` for two loudness passes whose gating blocks
    /// together are exactly the single pass's: libebur128 starts a 400 ms
    /// block every 100 ms, so the second pass starts 300 ms before a
    /// 100 ms-aligned split and its blocks continue the first's grid (only
    /// its filter starts cold, a transient that dies within a few ms of a
    /// block's 400). Short audio stays in one pass.
    static func integratedHalves(frames: Int, sampleRate: Int) -> [Range<Int>] {
        let step = (sampleRate + 5) / 10
        guard frames > 40 * step else { return [0..<frames] }
        let split = frames / 2 / step * step
        return [0..<split, (split - 3 * step)..<frames]
    }

    /// A libebur128 state (mode I) fed `range` of a stereo pair; the caller destroys it.
    static func loudnessState(left: [Float], right: [Float], range: Range<Int>, sampleRate: Int) throws(LoudnessError) -> UnsafeMutablePointer<ebur128_state> {
        guard let state = ebur128_init(2, UInt(sampleRate), Int32(EBUR128_MODE_I.rawValue)) else {
            throw LoudnessError(description: "libebur128 could not start (2 channels at \(sampleRate) Hz)")
        }
        let chunkFrames = 65_536
        var chunk = [Float](repeating: 0, count: chunkFrames * 2)
        var start = range.lowerBound
        while start < range.upperBound {
            let frames = min(chunkFrames, range.upperBound - start)
            for index in 0..<frames {
                chunk[2 * index] = left[start + index]
                chunk[2 * index + 1] = right[start + index]
            }
            let added = chunk.withUnsafeBufferPointer { ebur128_add_frames_float(state, $0.baseAddress, frames) }
            guard added == 0 else {
                var handle: UnsafeMutablePointer<ebur128_state>? = state
                ebur128_destroy(&handle)
                throw LoudnessError(description: "libebur128 rejected the audio (code \(added))")
            }
            start += frames
        }
        return state
    }

    /// The most libebur128's true-peak interpolator can amplify a signal:
    /// the largest sum of |coefficients| over its polyphase branches. Its
    /// filter (49 taps, Hann-windowed sinc, 4× below 96 kHz, 2× below
    /// 192 kHz, none above) is rebuilt here from the same formula, so an
    /// interpolated sample is at most this times the largest input sample
    /// within the filter's reach.
    static func interpolatorGainBound(sampleRate: Int) -> Double {
        let factor = sampleRate < 96_000 ? 4 : sampleRate < 192_000 ? 2 : 1
        guard factor > 1 else { return 1 }
        let taps = 49
        var branch = [Double](repeating: 0, count: factor)
        for tap in 0..<taps {
            let m = Double(tap) - Double(taps - 1) / 2
            var coefficient = abs(m) > 1e-6 ? sin(m * Double.pi / Double(factor)) / (m * Double.pi / Double(factor)) : 1
            coefficient *= 0.5 * (1 - cos(2 * Double.pi * Double(tap) / Double(taps - 1)))
            branch[tap % factor] += abs(coefficient)
        }
        return max(1, branch.max()!) * 1.001  // and a margin for float rounding
    }

    /// True peak of one channel, linear, and whether it is exact. Blocks
    /// of 4096 samples whose sample peak × `interpolatorGainBound` stays
    /// below `floor` cannot hold a true peak at or above it and are not
    /// oversampled; runs of the other blocks go through libebur128 with 64
    /// samples of context either side (the filter reaches 13). The result
    /// is exact when it is at least `floor` or nothing was skipped, else
    /// an upper bound. `floor` 0 measures everything.
    static func channelTruePeak(_ samples: [Float], sampleRate: Int, floor: Double) throws(LoudnessError) -> (Double, Bool) {
        let gainBound = interpolatorGainBound(sampleRate: sampleRate)
        let block = 4_096
        let context = 64
        var measured = 0.0
        var skippedBound = 0.0
        var skipped = false
        var runStart: Int?
        func measureRun(_ range: Range<Int>) throws(LoudnessError) {
            var handle = ebur128_init(1, UInt(sampleRate), Int32(EBUR128_MODE_TRUE_PEAK.rawValue))
            guard let state = handle else { throw LoudnessError(description: "libebur128 could not start (1 channel at \(sampleRate) Hz)") }
            defer { ebur128_destroy(&handle) }
            let added = samples.withUnsafeBufferPointer { ebur128_add_frames_float(state, $0.baseAddress! + range.lowerBound, range.count) }
            guard added == 0 else { throw LoudnessError(description: "libebur128 rejected the audio (code \(added))") }
            var peak = 0.0
            guard ebur128_true_peak(state, 0, &peak) == 0 else { throw LoudnessError(description: "no true peak") }
            measured = max(measured, peak)
        }
        var start = 0
        while start < samples.count {
            let end = min(samples.count, start + block)
            var peak: Float = 0
            for index in start..<end { peak = max(peak, abs(samples[index])) }
            let bound = Double(peak) * gainBound
            if bound >= floor {
                if runStart == nil { runStart = start }
            } else {
                skipped = true
                skippedBound = max(skippedBound, bound)
                if let first = runStart {
                    try measureRun(max(0, first - context)..<min(samples.count, start + context))
                    runStart = nil
                }
            }
            start = end
        }
        if let first = runStart { try measureRun(max(0, first - context)..<samples.count) }
        let exact = !skipped || (measured >= floor && measured >= skippedBound)
        return (max(measured, skippedBound), exact)
    }
}

/// Loudness and true peak of stereo audio fed a chunk at a time (a
/// mixdown streamed in bounded memory): integrated loudness by libebur128,
/// the true peak of each channel by its 4× oversampling only where a
/// block of 4096 samples could reach `truePeakFloorDBTP` (the same rule as
/// `Loudness.channelTruePeak`). The work is split in `jobs` that may run on
/// threads of their own, each fed every chunk in order: the loudness of
/// each half of the audio (libebur128 at ~18 ns a frame is the costly
/// part; the halves as `Loudness.integratedHalves` splits them, whose
/// gating blocks together are the single pass's) and the true peaks. The
/// corresponding C functions are `ebur128_init`, `ebur128_add_frames_float`,
/// `ebur128_loudness_global_multiple` and `ebur128_true_peak`.
public final class LoudnessMeter {
    private var states: [UnsafeMutablePointer<ebur128_state>?]
    private let halves: [Range<Int>]
    private let peaks: [TruePeakTracker]
    private var interleaved: [[Float]]
    /// Frames fed through `add(left:right:count:)`.
    private var fed = 0

    /// A meter for `frames` frames at `sampleRate`; with a floor, the true
    /// peak is measured too.
    public init(sampleRate: Int, frames: Int, truePeakFloorDBTP: Double?) throws(LoudnessError) {
        halves = Loudness.integratedHalves(frames: frames, sampleRate: sampleRate)
        states = []
        for _ in halves {
            guard let state = ebur128_init(2, UInt(sampleRate), Int32(EBUR128_MODE_I.rawValue)) else {
                for index in states.indices { ebur128_destroy(&states[index]) }
                throw LoudnessError(description: "libebur128 could not start (2 channels at \(sampleRate) Hz)")
            }
            states.append(state)
        }
        interleaved = halves.map { _ in [] }
        peaks = truePeakFloorDBTP.map { floor in
            let linear = floor.isFinite ? pow(10, floor / 20) : 0
            return [TruePeakTracker(sampleRate: sampleRate, floor: linear), TruePeakTracker(sampleRate: sampleRate, floor: linear)]
        } ?? []
    }

    deinit { for index in states.indices { ebur128_destroy(&states[index]) } }

    /// How many jobs a chunk is measured in: the loudness jobs first
    /// (`loudnessJobs` of them), then the true peaks' when measured.
    public var jobs: Int { halves.count + (peaks.isEmpty ? 0 : 1) }
    public var loudnessJobs: Int { halves.count }

    /// The first frame loudness job `job` needs (frames before it may be skipped).
    public func firstFrame(ofJob job: Int) -> Int { job < halves.count ? halves[job].lowerBound : 0 }

    /// Adds `count` frames (every job, on this thread).
    public func add(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(LoudnessError) {
        for job in 0..<jobs { try add(job: job, left: left, right: right, count: count, at: fed) }
        fed += count
    }

    /// Job `job`'s share of the `count` frames starting at frame `position`.
    /// Each job takes the chunks in order; different jobs may run at once.
    public func add(job: Int, left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int, at position: Int) throws(LoudnessError) {
        guard job < halves.count else {
            try peaks[0].add(left, count: count)
            try peaks[1].add(right, count: count)
            return
        }
        let range = halves[job].clamped(to: position..<(position + count))
        guard let state = states[job], !range.isEmpty else { return }
        let offset = range.lowerBound - position
        if interleaved[job].count < 2 * range.count { interleaved[job] = [Float](repeating: 0, count: 2 * range.count) }
        interleaved[job].withUnsafeMutableBufferPointer { buffer in
            for index in 0..<range.count {
                buffer[2 * index] = left[offset + index]
                buffer[2 * index + 1] = right[offset + index]
            }
        }
        let added = interleaved[job].withUnsafeBufferPointer { ebur128_add_frames_float(state, $0.baseAddress, range.count) }
        guard added == 0 else { throw LoudnessError(description: "libebur128 rejected the audio (code \(added))") }
    }

    /// What was fed, measured.
    public func result() throws(LoudnessError) -> LoudnessMeasurement {
        var loudness = 0.0
        let status = states.withUnsafeMutableBufferPointer { ebur128_loudness_global_multiple($0.baseAddress, $0.count, &loudness) }
        guard status == 0 else { throw LoudnessError(description: "no integrated loudness") }
        guard peaks.count == 2 else { return LoudnessMeasurement(integratedLUFS: loudness, truePeakDBTP: -.infinity) }
        let (left, leftExact) = try peaks[0].finish()
        let (right, rightExact) = try peaks[1].finish()
        let peak = max(left, right)
        return LoudnessMeasurement(integratedLUFS: loudness, truePeakDBTP: peak > 0 ? 20 * log10(peak) : -.infinity,
                                   truePeakIsExact: left >= right ? leftExact : rightExact)
    }
}

/// One channel's true peak, fed a chunk at a time: runs of blocks that
/// could reach the floor go through libebur128 with 64 samples of context
/// either side, the rest are bounded by their sample peak.
final class TruePeakTracker {
    static let block = 4_096
    static let context = 64
    let floor: Double
    let gainBound: Double
    let sampleRate: Int
    private var carry: [Float] = []
    private var before: [Float] = []
    private var run: UnsafeMutablePointer<ebur128_state>?
    private var measured = 0.0
    private var skippedBound = 0.0
    private var skipped = false

    init(sampleRate: Int, floor: Double) {
        self.sampleRate = sampleRate
        self.floor = floor
        gainBound = Loudness.interpolatorGainBound(sampleRate: sampleRate)
    }

    deinit { if run != nil { ebur128_destroy(&run) } }

    func add(_ samples: UnsafePointer<Float>, count: Int) throws(LoudnessError) {
        var start = 0
        if !carry.isEmpty {
            let taken = min(count, Self.block - carry.count)
            carry += UnsafeBufferPointer(start: samples, count: taken)
            start = taken
            if carry.count == Self.block {
                let whole = carry
                carry = []
                try whole.withUnsafeBufferPointer { (buffer) throws(LoudnessError) in try self.block(buffer.baseAddress!, count: buffer.count) }
            }
        }
        while count - start >= Self.block {
            try block(samples + start, count: Self.block)
            start += Self.block
        }
        if start < count { carry += UnsafeBufferPointer(start: samples + start, count: count - start) }
    }

    private func feed(_ samples: UnsafePointer<Float>, count: Int) throws(LoudnessError) {
        guard count > 0, let run else { return }
        let added = ebur128_add_frames_float(run, samples, count)
        guard added == 0 else { throw LoudnessError(description: "libebur128 rejected the audio (code \(added))") }
    }

    private func block(_ samples: UnsafePointer<Float>, count: Int) throws(LoudnessError) {
        var peak: Float = 0
        for index in 0..<count { peak = max(peak, abs(samples[index])) }
        let bound = Double(peak) * gainBound
        if bound >= floor {
            if run == nil {
                guard let state = ebur128_init(1, UInt(sampleRate), Int32(EBUR128_MODE_TRUE_PEAK.rawValue)) else {
                    throw LoudnessError(description: "libebur128 could not start (1 channel at \(sampleRate) Hz)")
                }
                run = state
                try before.withUnsafeBufferPointer { (buffer) throws(LoudnessError) in try feed(buffer.baseAddress ?? samples, count: buffer.count) }
            }
            try feed(samples, count: count)
        } else {
            skipped = true
            skippedBound = max(skippedBound, bound)
            if run != nil {
                try feed(samples, count: min(count, Self.context))
                try closeRun()
            }
        }
        before = Array(UnsafeBufferPointer(start: samples + max(0, count - Self.context), count: min(count, Self.context)))
    }

    private func closeRun() throws(LoudnessError) {
        guard let state = run else { return }
        var peak = 0.0
        let status = ebur128_true_peak(state, 0, &peak)
        ebur128_destroy(&run)
        guard status == 0 else { throw LoudnessError(description: "no true peak") }
        measured = max(measured, peak)
    }

    /// The channel's true peak (linear) and whether it is exact.
    func finish() throws(LoudnessError) -> (Double, Bool) {
        if !carry.isEmpty {
            let rest = carry
            carry = []
            try rest.withUnsafeBufferPointer { (buffer) throws(LoudnessError) in try block(buffer.baseAddress!, count: buffer.count) }
        }
        try closeRun()
        let exact = !skipped || (measured >= floor && measured >= skippedBound)
        return (max(measured, skippedBound), exact)
    }
}
