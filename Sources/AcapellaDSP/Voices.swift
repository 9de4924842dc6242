#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One guide-tone voice: a sine with gentle 2nd and 3rd harmonics (each
/// left out when it would reach 45 % of the sample rate, so nothing aliases),
/// a linear 5 ms attack and 25 ms release. A new note starts while the
/// previous one's release tail is still sounding: two slots.
///
/// Every sample is a function of the voice's state alone, so rendering in
/// periods of any size gives the same bits. `render` never allocates.
public struct ToneVoice: Sendable {
    struct Slot: Sendable {
        // A rotating phasor (cos, sin of the phase) advanced by one complex
        // multiply per sample: no libm call in the loop.
        var cosine = 1.0
        var sine = 0.0
        var rotationCosine = 1.0
        var rotationSine = 0.0
        var samplesSinceRenormalization = 0
        var weight2 = 0.0
        var weight3 = 0.0
        var normalization = 1.0  // 1 / (1 + weight2 + weight3): a multiply per sample, not a divide
        var level = 0.0
        var step = 0.0  // level change per sample
        var target = 0.0
        var active = false
    }

    /// Samples per second.
    public let sampleRate: Double
    /// Attack length in samples (5 ms).
    public let attackSamples: Int
    /// Release length in samples (25 ms).
    public let releaseSamples: Int
    var sounding = Slot()
    var releasing = Slot()

    /// A silent voice.
    public init(sampleRate: Int) {
        self.sampleRate = Double(sampleRate)
        attackSamples = max(1, sampleRate * 5 / 1000)
        releaseSamples = max(1, sampleRate * 25 / 1000)
    }

    /// Relative amplitudes of the harmonics.
    public static let harmonicWeights = (second: 0.25, third: 0.1)

    /// Starts a note at the next rendered sample; a note already sounding
    /// fades out over the release time meanwhile. Render-thread safe.
    public mutating func noteOn(frequency: Double) {
        if sounding.active {
            beginRelease(&sounding)
            releasing = sounding
        }
        var slot = Slot()
        let step = 2 * Double.pi * frequency / sampleRate
        slot.rotationCosine = cos(step)
        slot.rotationSine = sin(step)
        let nyquistGuard = 0.45 * sampleRate
        slot.weight2 = 2 * frequency < nyquistGuard ? Self.harmonicWeights.second : 0
        slot.weight3 = 3 * frequency < nyquistGuard ? Self.harmonicWeights.third : 0
        slot.normalization = 1 / (1 + slot.weight2 + slot.weight3)
        slot.target = 1
        slot.step = 1 / Double(attackSamples)
        slot.active = true
        sounding = slot
    }

    /// Releases the sounding note from the next rendered sample.
    /// Render-thread safe.
    public mutating func noteOff() {
        guard sounding.active else { return }
        beginRelease(&sounding)
        releasing = sounding
        sounding = Slot()
    }

    private func beginRelease(_ slot: inout Slot) {
        slot.target = 0
        slot.step = -1 / Double(releaseSamples)
    }

    /// Whether anything is still audible.
    public var isActive: Bool { sounding.active || releasing.active }

    /// Adds `count` samples × `gain` into `output` from `offset`.
    /// Render-thread safe: no allocation, no locks.
    public mutating func render(into output: UnsafeMutablePointer<Float>, count: Int, gain: Float) {
        guard isActive else { return }
        let g = Double(gain)
        // The slots live in locals (registers) for the loop.
        var first = sounding
        var second = releasing
        if !second.active {
            for index in 0..<count where first.active {
                output[index] += Float(Self.next(&first) * g)
            }
        } else {
            for index in 0..<count {
                var value = 0.0
                if first.active { value += Self.next(&first) }
                if second.active { value += Self.next(&second) }
                output[index] += Float(value * g)
            }
        }
        sounding = first
        releasing = second
    }

    /// One sample of a slot: the phase advances first, so a note's first
    /// sample is already non-zero (its onset is visible in the audio). The
    /// 2nd and 3rd harmonics come from the double- and triple-angle
    /// identities; the phasor is renormalized every 4096 samples of the
    /// note, counted from its start, so rounding never builds up and the
    /// result does not depend on period boundaries.
    @inline(__always)
    static func next(_ slot: inout Slot) -> Double {
        let cosine = slot.cosine * slot.rotationCosine - slot.sine * slot.rotationSine
        let sine = slot.sine * slot.rotationCosine + slot.cosine * slot.rotationSine
        slot.cosine = cosine
        slot.sine = sine
        slot.samplesSinceRenormalization += 1
        if slot.samplesSinceRenormalization == 4096 {
            slot.samplesSinceRenormalization = 0
            let scale = 1 / (cosine * cosine + sine * sine).squareRoot()
            slot.cosine *= scale
            slot.sine *= scale
        }
        if slot.step > 0 {
            slot.level = min(slot.target, slot.level + slot.step)
            if slot.level >= slot.target { slot.step = 0 }
        } else if slot.step < 0 {
            slot.level = max(0, slot.level + slot.step)
            if slot.level <= 0 {
                slot.active = false
                return 0
            }
        }
        let wave = sine + slot.weight2 * (2 * sine * cosine) + slot.weight3 * sine * (3 - 4 * sine * sine)
        return wave * slot.level * slot.normalization
    }
}

/// The metronome's click: a short decaying sine burst, higher and louder on
/// downbeats. Starts non-zero on its first sample, so it is exact to find.
public struct ClickVoice: Sendable {
    /// Samples per second.
    public let sampleRate: Double
    var remaining = 0
    var position = 0
    var frequency = 0.0
    var amplitude = 0.0
    let lengthSamples: Int
    let decay: Double

    /// A silent click voice.
    public init(sampleRate: Int) {
        self.sampleRate = Double(sampleRate)
        lengthSamples = sampleRate * 30 / 1000
        decay = exp(-1 / (0.008 * Double(sampleRate)))
    }

    /// Starts a click at the next rendered sample. Render-thread safe.
    public mutating func trigger(accent: Bool) {
        remaining = lengthSamples
        position = 0
        frequency = accent ? 1760 : 1320
        amplitude = accent ? 1 : 0.6
    }

    /// Adds `count` samples × `gain`. Render-thread safe.
    public mutating func render(into output: UnsafeMutablePointer<Float>, count: Int, gain: Float) {
        var index = 0
        while index < count && remaining > 0 {
            position += 1
            let value = amplitude * sin(2 * Double.pi * frequency * Double(position) / sampleRate)
            output[index] += Float(value) * gain
            amplitude *= decay
            remaining -= 1
            index += 1
        }
    }
}
