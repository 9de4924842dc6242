import AcapellaDSP

/// Tones outside the song, sounding at once whatever the transport does: a
/// MIDI keyboard's notes, "give me my note", "give me my chord", the drone.
/// A fixed pool of voices made up front, each a `ToneVoice` and the key
/// that holds it. A key already sounding starts again on its own voice; a
/// new key takes a silent voice, or when none is left the oldest (stolen:
/// its note fades out over the release while the new one starts, so it
/// never clicks). A note may end by itself after a number of samples (a
/// reference) or be held until its key is released. Render-thread safe:
/// nothing is allocated once the pool is made.
public struct VoicePool: Sendable {
    /// Voices in the pool.
    public static let size = 16
    /// Keys of tones that are not a keyboard's (0…127 are MIDI notes).
    public static let referenceKey = 1_000
    /// "Give me my chord": this plus the part's index.
    public static let chordKey = 2_000
    /// The drone.
    public static let droneKey = 3_000
    /// The keys of the confirmation sounds (punch in and out, keep, discard).
    public static let confirmationKey = 4_000
    /// No key: a silent voice, free for the next note.
    static let free = -1

    var voices: [ToneVoice]
    var keys: [Int]
    var levels: [Float]
    /// When each voice's note started (a count of notes), for stealing the oldest.
    var started: [Int]
    /// Samples until each voice releases by itself; 0: held until its key is released.
    var remaining: [Int]
    var notes = 0

    /// A silent pool at `sampleRate`.
    public init(sampleRate: Int) {
        voices = Array(repeating: ToneVoice(sampleRate: sampleRate), count: Self.size)
        keys = Array(repeating: Self.free, count: Self.size)
        levels = Array(repeating: 0, count: Self.size)
        started = Array(repeating: 0, count: Self.size)
        remaining = Array(repeating: 0, count: Self.size)
    }

    /// Starts `key`'s note at `frequency` and `level` from the next rendered
    /// sample, for `samples` (0: until `noteOff(key:)`).
    public mutating func noteOn(key: Int, frequency: Double, level: Float, samples: Int = 0) {
        var chosen = keys.firstIndex(of: key)
        if chosen == nil { chosen = voices.indices.first { !voices[$0].isActive } }
        if chosen == nil {
            var oldest = 0
            for index in voices.indices where started[index] < started[oldest] { oldest = index }
            chosen = oldest
        }
        let index = chosen!
        voices[index].noteOn(frequency: frequency)
        keys[index] = key
        levels[index] = level
        notes += 1
        started[index] = notes
        remaining[index] = max(0, samples)
    }

    /// Releases `key`'s note (nothing when it is not sounding).
    public mutating func noteOff(key: Int) {
        guard let index = keys.firstIndex(of: key) else { return }
        voices[index].noteOff()
        keys[index] = Self.free
    }

    /// Releases every note whose key is in `keys`.
    public mutating func noteOff(keys range: Range<Int>) {
        for index in keys.indices where range.contains(keys[index]) {
            voices[index].noteOff()
            keys[index] = Self.free
        }
    }

    /// Whether `key` holds a voice.
    public func isSounding(key: Int) -> Bool { keys.contains(key) }

    /// Voices still audible (notes and their releases).
    public var audible: Int { voices.reduce(0) { $0 + ($1.isActive ? 1 : 0) } }

    /// Adds `count` samples of every audible voice into `output` (mono).
    public mutating func render(into output: UnsafeMutablePointer<Float>, count: Int) {
        for index in voices.indices where voices[index].isActive {
            var done = 0
            if remaining[index] > 0 {
                done = min(remaining[index], count)
                voices[index].render(into: output, count: done, gain: levels[index])
                remaining[index] -= done
                if remaining[index] == 0 {
                    voices[index].noteOff()
                    keys[index] = Self.free
                }
            }
            if done < count { voices[index].render(into: output + done, count: count - done, gain: levels[index]) }
        }
    }
}
