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

    /// Measures two channel arrays.
    public static func measure(left: [Float], right: [Float], sampleRate: Int) throws(LoudnessError) -> LoudnessMeasurement {
        var interleaved = [Float](repeating: 0, count: left.count * 2)
        for index in 0..<left.count {
            interleaved[2 * index] = left[index]
            interleaved[2 * index + 1] = right[index]
        }
        return try measure(interleaved: interleaved, channels: 2, sampleRate: sampleRate)
    }
}
