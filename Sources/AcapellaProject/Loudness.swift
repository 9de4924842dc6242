internal import CEBUR128
import Dispatch
import Foundation
import AcapellaLock

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
        // Jobs: the loudness of each half (a meter's jobs, joined by it),
        // then the true peak of each channel.
        let meter = Mixdown.OnOneQueue(try LoudnessMeter(sampleRate: sampleRate, frames: left.count, truePeakFloorDBTP: nil))
        let halves = meter.value.loudnessJobs
        let jobs = halves + (truePeak ? 2 : 0)
        let results = VisibleLock<[Result<(Double, Bool), LoudnessError>?]>(Array(repeating: nil, count: jobs))
        DispatchQueue.concurrentPerform(iterations: jobs) { job in
            let result: Result<(Double, Bool), LoudnessError>
            if job < halves {
                result = Result { () throws(LoudnessError) in
                    try left.withUnsafeBufferPointer { (l) throws(LoudnessError) in
                        try right.withUnsafeBufferPointer { (r) throws(LoudnessError) in
                            try meter.value.add(job: job, left: l.baseAddress!, right: r.baseAddress!, count: l.count, at: 0)
                        }
                    }
                    return (0, true)
                }
            } else {
                let channel = job - halves == 0 ? left : right
                result = Result { () throws(LoudnessError) in try channelTruePeak(channel, sampleRate: sampleRate, floor: floor) }
            }
            results.withLock { $0[job] = result }
        }
        let values = results.withLock { $0 }
        for value in values { _ = try value!.get() }
        let loudness = try meter.value.result().integratedLUFS
        guard truePeak else { return LoudnessMeasurement(integratedLUFS: loudness, truePeakDBTP: -.infinity) }
        let (leftPeak, leftExact) = try values[halves]!.get()
        let (rightPeak, rightExact) = try values[halves + 1]!.get()
        let exact = leftPeak >= rightPeak ? leftExact : rightExact
        let peak = max(leftPeak, rightPeak)
        return LoudnessMeasurement(integratedLUFS: loudness, truePeakDBTP: peak > 0 ? 20 * log10(peak) : -.infinity, truePeakIsExact: exact)
    }

    /// How to split `frames` for two loudness passes whose gating blocks
    /// together are exactly the single pass's: libebur128 starts a 400 ms
    /// block every 100 ms, so the second pass starts 300 ms before a
    /// 100 ms-aligned split and its blocks continue the first's grid (only
    /// its filter starts cold, a transient that dies within a few ms of a
    /// block's 400). Short audio stays in one pass. The first pass takes
    /// `firstShare` of the audio: a half when both start at once, more
    /// when the audio arrives while it is measured (the second pass
    /// starts only once its part arrives).
    static func integratedHalves(frames: Int, sampleRate: Int, firstShare: Double = 0.5) -> [Range<Int>] {
        let step = blockStep(sampleRate: sampleRate)
        guard frames > 40 * step else { return [0..<frames] }
        let split = max(4 * step, min(frames - 4 * step, Int(Double(frames) * firstShare)) / step * step)
        return [0..<split, (split - 3 * step)..<frames]
    }

    /// Frames per 100 ms as libebur128 counts them (its gating blocks are
    /// four of these, one starting every one).
    static func blockStep(sampleRate: Int) -> Int { (sampleRate + 5) / 10 }

    /// The mean square a loudness stands for (BS.1770: L = −0.691 + 10 log10 z).
    static func energy(ofLoudness loudness: Double) -> Double {
        loudness.isFinite ? pow(10, (loudness + 0.691) / 10) : 0
    }

    /// Integrated loudness of gating-block energies in order (BS.1770-4,
    /// as libebur128 gates them): blocks under −70 LUFS left out, then
    /// those more than 10 LU under the mean of the rest; −∞ when none is left.
    public static func gatedLoudness(_ energies: [Double]) -> Double {
        let absolute = energy(ofLoudness: -70)
        var sum = 0.0
        var count = 0
        for energy in energies where energy >= absolute {
            sum += energy
            count += 1
        }
        guard count > 0 else { return -.infinity }
        let relative = sum / Double(count) * pow(10, -10.0 / 10)
        var gated = 0.0
        var kept = 0
        for energy in energies where energy >= absolute && energy >= relative {
            gated += energy
            kept += 1
        }
        guard kept > 0 else { return -.infinity }
        return 10 * log10(gated / Double(kept)) - 0.691
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
/// gating blocks together are the single pass's) and the true peaks. With
/// `blockEnergies`, the energy of every gating block is kept too (see
/// `BlockMeter`). The corresponding C functions are `ebur128_init`,
/// `ebur128_add_frames_float`, `ebur128_loudness_global_multiple` and
/// `ebur128_true_peak`.
public final class LoudnessMeter {
    private let meters: [BlockMeter]
    private let halves: [Range<Int>]
    private let peaks: [TruePeakTracker]
    /// Frames fed through `add(left:right:count:)`.
    private var fed = 0

    /// A meter for `frames` frames at `sampleRate`; with a floor, the true
    /// peak is measured too; without `loudness`, only the true peak. The
    /// first loudness job takes `firstShare` of the audio (see
    /// `Loudness.integratedHalves`).
    public init(sampleRate: Int, frames: Int, truePeakFloorDBTP: Double?, loudness: Bool = true, blockEnergies: Bool = false, firstShare: Double = 0.5) throws(LoudnessError) {
        halves = loudness ? Loudness.integratedHalves(frames: frames, sampleRate: sampleRate, firstShare: firstShare) : []
        var meters: [BlockMeter] = []
        for half in halves {
            meters.append(try BlockMeter(sampleRate: sampleRate, from: half.lowerBound, keepingBlocksFrom: blockEnergies ? 0 : nil))
        }
        self.meters = meters
        peaks = truePeakFloorDBTP.map { floor in
            let linear = floor.isFinite ? pow(10, floor / 20) : 0
            return [TruePeakTracker(sampleRate: sampleRate, floor: linear), TruePeakTracker(sampleRate: sampleRate, floor: linear)]
        } ?? []
    }

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
        guard !range.isEmpty else { return }
        let offset = range.lowerBound - position
        try meters[job].add(left: left + offset, right: right + offset, count: range.count)
    }

    /// The energy of every gating block of what was fed (block `i` spans
    /// frames `i` × 100 ms ..< (`i` + 4) × 100 ms), when kept.
    public func blockEnergies() -> [Double] { meters.flatMap(\.energies) }

    /// What was fed, measured (the loudness −∞ when only peaks were).
    public func result() throws(LoudnessError) -> LoudnessMeasurement {
        var loudness = -Double.infinity
        if !meters.isEmpty {
            var states = meters.map { Optional($0.state) }
            let status = states.withUnsafeMutableBufferPointer { ebur128_loudness_global_multiple($0.baseAddress, $0.count, &loudness) }
            guard status == 0 else { throw LoudnessError(description: "no integrated loudness") }
        }
        guard peaks.count == 2 else { return LoudnessMeasurement(integratedLUFS: loudness, truePeakDBTP: -.infinity) }
        let (left, leftExact) = try peaks[0].finish()
        let (right, rightExact) = try peaks[1].finish()
        let peak = max(left, right)
        return LoudnessMeasurement(integratedLUFS: loudness, truePeakDBTP: peak > 0 ? 20 * log10(peak) : -.infinity,
                                   truePeakIsExact: left >= right ? leftExact : rightExact)
    }
}

/// libebur128 (mode I) fed consecutive stereo frames from a 100 ms
/// boundary on, keeping, when asked, the energy of each gating block it
/// completes: the mean square of the K-weighted signal over 400 ms, one
/// block every 100 ms, read from its momentary loudness at each 100 ms
/// boundary (the same computation libebur128 stores the block with).
/// Block `i` spans frames `i`·step ..< (`i` + 4)·step, step = 100 ms. With
/// such energies a measurement can be updated where the audio changed
/// (`Loudness.gatedLoudness` gates them as libebur128 does). The
/// corresponding C functions are `ebur128_add_frames_float` and
/// `ebur128_loudness_momentary`.
final class BlockMeter {
    let state: UnsafeMutablePointer<ebur128_state>
    /// Frames per 100 ms (libebur128's rounding).
    let step: Int
    /// The first block kept, or nil to keep none.
    private let keepFrom: Int?
    private let start: Int
    private var position: Int
    private var interleaved: [Float] = []
    /// The energies of the blocks kept, in order: from block
    /// `keepingBlocksFrom` on, or from the first the meter completes.
    private(set) var energies: [Double] = []

    /// A meter whose first frame is frame `first` of the audio (a multiple
    /// of 100 ms), keeping the energies of blocks `keepingBlocksFrom` on.
    init(sampleRate: Int, from first: Int, keepingBlocksFrom keepFrom: Int?) throws(LoudnessError) {
        guard let state = ebur128_init(2, UInt(sampleRate), Int32(EBUR128_MODE_I.rawValue)) else {
            throw LoudnessError(description: "libebur128 could not start (2 channels at \(sampleRate) Hz)")
        }
        self.state = state
        step = Loudness.blockStep(sampleRate: sampleRate)
        precondition(first % step == 0, "a block meter starts on a 100 ms boundary")
        start = first
        position = first
        self.keepFrom = keepFrom
    }

    deinit {
        var handle: UnsafeMutablePointer<ebur128_state>? = state
        ebur128_destroy(&handle)
    }

    /// The next `count` frames.
    func add(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(LoudnessError) {
        var done = 0
        while done < count {
            // Kept blocks are read at each 100 ms boundary: fed up to it
            // (otherwise in pieces of 65,536 frames, interleaved here).
            let piece = min(count - done, keepFrom == nil ? 65_536 : step - position % step)
            if interleaved.count < 2 * piece { interleaved = [Float](repeating: 0, count: 2 * piece) }
            interleaved.withUnsafeMutableBufferPointer { buffer in
                for index in 0..<piece {
                    buffer[2 * index] = left[done + index]
                    buffer[2 * index + 1] = right[done + index]
                }
            }
            let added = interleaved.withUnsafeBufferPointer { ebur128_add_frames_float(state, $0.baseAddress, piece) }
            guard added == 0 else { throw LoudnessError(description: "libebur128 rejected the audio (code \(added))") }
            done += piece
            position += piece
            if let keepFrom, position % step == 0, position - start >= 4 * step, position / step - 4 >= keepFrom {
                var momentary = 0.0
                guard ebur128_loudness_momentary(state, &momentary) == 0 else { throw LoudnessError(description: "no momentary loudness") }
                energies.append(Loudness.energy(ofLoudness: momentary))
            }
        }
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
