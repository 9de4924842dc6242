import AcapellaDSP
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Pitch accuracy against a truth track (MIREX-style): over the frames the
/// truth calls voiced, how often the estimate is voiced and within 50 cents,
/// and how far off it is.
public struct PitchMetrics: Sendable, CustomStringConvertible {
    /// Voiced truth frames compared.
    public var frames: Int
    /// Raw pitch accuracy: voiced and within 50 cents.
    public var rawPitchAccuracy: Double
    /// Median absolute error, cents (voiced estimates).
    public var medianCents: Double
    /// 95th percentile absolute error, cents.
    public var p95Cents: Double
    /// Share of frames more than 50 cents off or unvoiced.
    public var grossErrorShare: Double
    /// Voicing false alarms: the share of the frames the truth calls
    /// unvoiced that the estimate voices (0 when the truth has none).
    public var falseAlarms: Double

    /// A truth track's frequencies from its CSV text (`time,f0` per hop,
    /// `#` comment lines, 0 = unvoiced).
    /// A line that is not `time,f0` with finite numbers (a header line of
    /// words first is fine), or a track without a voiced frame — nothing to
    /// measure against, so no accuracy — is refused, saying which line.
    public static func truth(csv text: String, file: String = "truth") throws(TruthError) -> [Double] {
        var frequencies: [Double] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count >= 2, let time = Double(fields[0]), let frequency = Double(fields[fields.count - 1]),
                  time.isFinite, frequency.isFinite, frequency >= 0 else {
                // A header of words (time,f0) before any number.
                if frequencies.isEmpty, fields.allSatisfy({ Double($0) == nil }) { continue }
                throw TruthError(description: "\(file):\(index + 1): expected 'time,f0' with numbers (f0 0 when unvoiced), found '\(line.prefix(40))'")
            }
            frequencies.append(frequency)
        }
        guard frequencies.contains(where: { $0 > 0 }) else {
            throw TruthError(description: "\(file): no voiced frame in the truth track (\(frequencies.count) frames); nothing to measure against")
        }
        return frequencies
    }

    /// A truth track that cannot be read.
    public struct TruthError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Compares estimates with truth frequencies (0 = unvoiced), frame by frame.
    public init(estimates: [PitchEstimate], truth: [Double]) {
        var errors: [Double] = []
        var good = 0
        var voicedTruth = 0
        for (index, reference) in truth.enumerated() where reference > 0 {
            voicedTruth += 1
            guard index < estimates.count, estimates[index].voiced, estimates[index].frequency > 0 else { continue }
            let cents = abs(1_200 * log2(estimates[index].frequency / reference))
            errors.append(cents)
            if cents <= 50 { good += 1 }
        }
        let unvoicedTruth = truth.indices.filter { truth[$0] <= 0 }
        let alarms = unvoicedTruth.filter { $0 < estimates.count && estimates[$0].voiced }.count
        falseAlarms = unvoicedTruth.isEmpty ? 0 : Double(alarms) / Double(unvoicedTruth.count)
        errors.sort()
        frames = voicedTruth
        rawPitchAccuracy = voicedTruth == 0 ? 1 : Double(good) / Double(voicedTruth)
        medianCents = errors.isEmpty ? 0 : errors[errors.count / 2]
        p95Cents = errors.isEmpty ? 0 : errors[min(errors.count - 1, Int(Double(errors.count) * 0.95))]
        grossErrorShare = voicedTruth == 0 ? 0 : Double(voicedTruth - good) / Double(voicedTruth)
    }

    public var description: String {
        String(format: "%d voiced frames: raw pitch accuracy %.4f, median %.2f cents, p95 %.2f cents, %.2f %% more than 50 cents off, voicing false alarms %.2f %%",
               frames, rawPitchAccuracy, medianCents, p95Cents, grossErrorShare * 100, falseAlarms * 100)
    }
}
