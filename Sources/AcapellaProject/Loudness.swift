internal import CEBUR128
import Foundation

/// Loudness and true peak per EBU R128 / ITU-R BS.1770, measured with
/// libebur128.
public struct LoudnessMeasurement: Hashable, Sendable {
    /// Integrated loudness, LUFS.
    public var integratedLUFS: Double
    /// Highest true peak over all channels, dBTP.
    public var truePeakDBTP: Double
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

    /// Measures two channel arrays, fed to libebur128 in chunks (no full
    /// interleaved copy). True peak costs a 4× oversampling pass; leave it
    /// out when only the loudness is needed.
    public static func measure(left: [Float], right: [Float], sampleRate: Int, truePeak: Bool = true) throws(LoudnessError) -> LoudnessMeasurement {
        let mode = EBUR128_MODE_I.rawValue | (truePeak ? EBUR128_MODE_TRUE_PEAK.rawValue : 0)
        var handle = ebur128_init(2, UInt(sampleRate), Int32(mode))
        guard let state = handle else { throw LoudnessError(description: "libebur128 could not start (2 channels at \(sampleRate) Hz)") }
        defer { ebur128_destroy(&handle) }
        let chunkFrames = 65_536
        var chunk = [Float](repeating: 0, count: chunkFrames * 2)
        var start = 0
        while start < left.count {
            let frames = min(chunkFrames, left.count - start)
            for index in 0..<frames {
                chunk[2 * index] = left[start + index]
                chunk[2 * index + 1] = right[start + index]
            }
            let added = chunk.withUnsafeBufferPointer { ebur128_add_frames_float(state, $0.baseAddress, frames) }
            guard added == 0 else { throw LoudnessError(description: "libebur128 rejected the audio (code \(added))") }
            start += frames
        }
        var loudness = 0.0
        guard ebur128_loudness_global(state, &loudness) == 0 else { throw LoudnessError(description: "no integrated loudness") }
        var peak = 0.0
        if truePeak {
            for channel in 0..<2 {
                var channelPeak = 0.0
                if ebur128_true_peak(state, UInt32(channel), &channelPeak) == 0 { peak = max(peak, channelPeak) }
            }
        }
        return LoudnessMeasurement(integratedLUFS: loudness, truePeakDBTP: truePeak && peak > 0 ? 20 * log10(peak) : -.infinity)
    }
}
