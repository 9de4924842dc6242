public import AcapellaEngine
public import AcapellaScore
import AcapellaDSP
import Foundation

/// How to mix a song down.
public struct MixdownOptions: Sendable {
    /// Integrated loudness target, LUFS (EBU R128).
    public var targetLUFS = -16.0
    /// True-peak ceiling, dBTP.
    public var truePeakCeiling = -1.0
    /// Include the guide tones of parts (a song alone has nothing else).
    public var includeTones = true
    /// The part brought forward in a practice track.
    public var practicePart: String?
    /// How much quieter the other parts are in a practice track, dB.
    public var practiceOthersDB: Float = -9
    /// Tempo multiplier.
    public var tempoScale = Rational(1)
    /// Transposition, semitones.
    public var transpose = 0
    /// Samples per second.
    public var sampleRate = 48_000
    /// The parts' levels, places and mutes to start from (a project's
    /// session); nil: spread evenly at the default level.
    public var baseMixes: [PartMix]?

    /// Defaults: −16 LUFS, −1 dBTP, tones, written tempo and pitch, 48 kHz.
    public init() {}

    /// The song compiled as these mix it: rate, tempo and key.
    public var scheduleOptions: ScheduleOptions { ScheduleOptions(sampleRate: sampleRate, tempoScale: tempoScale, transpose: transpose) }

    /// As a project was last rehearsed: the session's part levels, places,
    /// mutes and solos, its tempo and its key.
    public mutating func rehearse(_ session: SessionState, score: Score) {
        baseMixes = session.partMixes(for: score)
        tempoScale = session.tempoScale
        transpose = session.transpose
    }
}

/// A mixdown problem, said in one line.
public struct MixdownError: Error, CustomStringConvertible {
    /// What is wrong.
    public var description: String
}

/// Offline mixdown: the live renderer run as fast as possible, then a
/// soft-knee limiter and loudness normalization to the target with the
/// true-peak ceiling.
public enum Mixdown {
    /// Part mixes: spread across the stereo field; in a practice track the
    /// chosen part centred and the others quieter.
    public static func partMixes(for score: Score, options: MixdownOptions) throws(MixdownError) -> [PartMix] {
        let count = score.parts.count
        var mixes = options.baseMixes.flatMap { $0.count == count ? $0 : nil } ?? PartMix.spread(count: count)
        if let practice = options.practicePart {
            guard let chosen = score.parts.firstIndex(where: { $0.name.lowercased() == practice.lowercased() }) else {
                throw MixdownError(description: "no part named '\(practice)'; the parts are: " + score.parts.map(\.name).joined(separator: ", "))
            }
            let quieter = powf(10, options.practiceOthersDB / 20)
            for index in mixes.indices where index != chosen { mixes[index].gain *= quieter }
            mixes[chosen].pan = 0
        }
        if !options.includeTones { for index in mixes.indices { mixes[index].muted = true } }
        return mixes
    }

    /// Renders and normalizes. `progress` receives 0…1 while rendering.
    /// Parts with a take play it; the others play their tones (unless tones
    /// are omitted).
    public static func mix(_ score: Score, options: MixdownOptions, takes: [PartTakes]? = nil, progress: ((Double) -> Void)? = nil) throws(MixdownError) -> (audio: OfflineRender.Stereo, loudness: LoudnessMeasurement) {
        let schedule: Schedule
        do {
            schedule = try Schedule(score: score, options: options.scheduleOptions)
        } catch {
            throw MixdownError(description: error.description)
        }
        var mixes = try partMixes(for: score, options: options)
        // Parts with takes sound even with the tones omitted (unless the session mutes them).
        for (index, take) in (takes ?? []).enumerated() where !take.layers.isEmpty && index < mixes.count && options.baseMixes?[index].muted != true { mixes[index].muted = false }
        if mixes.allSatisfy(\.muted) {
            throw MixdownError(description: "nothing to mix: the song has no takes and tones are omitted")
        }
        var stereo = OfflineRender.render(schedule, mixes: mixes, takes: takes, progress: progress)
        let loudness = try normalize(&stereo, sampleRate: options.sampleRate, targetLUFS: options.targetLUFS, ceilingDBTP: options.truePeakCeiling)
        return (stereo, loudness)
    }

    /// Gain to the loudness target, then the limiter to the true-peak
    /// ceiling; repeated until both hold (the limiter lowers loudness a
    /// little, the gain then makes it up). The limiter reads the raw mix and
    /// writes one output pair, reused on every attempt.
    /// Returns the measurement of the result.
    @discardableResult
    public static func normalize(_ stereo: inout OfflineRender.Stereo, sampleRate: Int, targetLUFS: Double, ceilingDBTP: Double) throws(MixdownError) -> LoudnessMeasurement {
        // True peaks below the ceiling need not be exact: the measurement
        // skips audio that provably stays under it.
        func measure(_ left: [Float], _ right: [Float], truePeak: Bool = true) throws(MixdownError) -> LoudnessMeasurement {
            do { return try Loudness.measure(left: left, right: right, sampleRate: sampleRate, truePeak: truePeak, truePeakFloorDBTP: ceilingDBTP) } catch {
                throw MixdownError(description: error.description)
            }
        }
        let raw = try measure(stereo.left, stereo.right, truePeak: false)
        guard raw.integratedLUFS.isFinite else { throw MixdownError(description: "the mix is silent") }
        var gainDB = targetLUFS - raw.integratedLUFS
        var ceilingDB = ceilingDBTP - 0.5  // sample-peak ceiling, below the true-peak one
        // The limiter writes every sample: no need to zero them first.
        var left = [Float](unsafeUninitializedCapacity: stereo.left.count) { $1 = $0.count }
        var right = [Float](unsafeUninitializedCapacity: stereo.right.count) { $1 = $0.count }
        for _ in 0..<8 {
            let gain = Float(pow(10, gainDB / 20))
            let ceiling = Float(pow(10, ceilingDB / 20))
            stereo.left.withUnsafeBufferPointer { inLeft in stereo.right.withUnsafeBufferPointer { inRight in
                left.withUnsafeMutableBufferPointer { outLeft in right.withUnsafeMutableBufferPointer { outRight in
                    Limiter.process(left: inLeft, right: inRight, gain: gain, into: outLeft, outRight, ceiling: ceiling, sampleRate: sampleRate)
                } }
            } }
            let result = try measure(left, right)
            let loudnessOK = abs(result.integratedLUFS - targetLUFS) <= 0.05
            let peakOK = result.truePeakDBTP <= ceilingDBTP
            if loudnessOK && peakOK {
                stereo.left = left
                stereo.right = right
                return result
            }
            gainDB += targetLUFS - result.integratedLUFS
            if !peakOK { ceilingDB -= result.truePeakDBTP - ceilingDBTP + 0.05 }
        }
        throw MixdownError(description: "could not reach \(targetLUFS) LUFS under \(ceilingDBTP) dBTP; the material is too dense for that target")
    }
}
