import AcapellaDSP

/// Per-part mix settings for a render: gain and stereo position.
public struct PartMix: Hashable, Sendable {
    /// Linear gain.
    public var gain: Float
    /// −1 (left) … +1 (right).
    public var pan: Float
    /// Whether the part sounds at all.
    public var muted: Bool

    /// Mix settings.
    public init(gain: Float = 0.25, pan: Float = 0, muted: Bool = false) {
        self.gain = gain
        self.pan = pan
        self.muted = muted
    }

    /// Equal-power left and right gains.
    var stereoGains: (left: Float, right: Float) {
        let angle = Double((max(-1, min(1, pan)) + 1) * Float.pi / 4)
        return (gain * Float(angleCos(angle)), gain * Float(angleSin(angle)))
    }
}

/// Renders a schedule into stereo periods on the song's sample timeline:
/// every event is applied at its exact sample inside the period, so the
/// output is bit-identical whatever the period size.
///
/// `init` allocates everything; `render` is render-thread safe — it never
/// allocates, locks, logs or does I/O.
public struct SongRenderer: ~Copyable {
    let schedule: Schedule
    var mixes: [PartMix]
    /// Metronome gain (0 = off).
    public var clickGain: Float
    var voices: [ToneVoice]
    var clickVoice: ClickVoice
    var nextTone: [Int]
    var toneSounding: [Bool]
    var nextClick = 0
    let scratch: UnsafeMutableBufferPointer<Float>
    /// The song sample the next rendered frame belongs to.
    public private(set) var position: Int64

    /// Largest period `render` accepts.
    public let maximumFrames: Int

    /// A renderer positioned at `start` (the count-in's first click, or 0).
    public init(schedule: Schedule, mixes: [PartMix], clickGain: Float = 0, start: Int64? = nil, maximumFrames: Int = 8192) {
        precondition(mixes.count == schedule.tones.count, "one mix per part")
        self.schedule = schedule
        self.mixes = mixes
        self.clickGain = clickGain
        self.maximumFrames = maximumFrames
        voices = schedule.tones.map { _ in ToneVoice(sampleRate: schedule.options.sampleRate) }
        clickVoice = ClickVoice(sampleRate: schedule.options.sampleRate)
        let position = start ?? schedule.startSample
        self.position = position
        nextTone = schedule.tones.map { tones in tones.firstIndex { $0.endSample > position } ?? tones.count }
        toneSounding = Array(repeating: false, count: schedule.tones.count)
        nextClick = schedule.clicks.firstIndex { $0.sample >= position } ?? schedule.clicks.count
        scratch = .allocate(capacity: maximumFrames)
    }

    deinit { scratch.deallocate() }

    /// The next sample at or after `position` where something starts or
    /// stops, or `limit`.
    private func nextEventSample(before limit: Int64) -> Int64 {
        var next = limit
        for part in 0..<nextTone.count where nextTone[part] < schedule.tones[part].count {
            let tone = schedule.tones[part][nextTone[part]]
            let sample = toneSounding[part] ? tone.endSample : tone.startSample
            if sample < next { next = sample }
        }
        if nextClick < schedule.clicks.count, schedule.clicks[nextClick].sample < next { next = schedule.clicks[nextClick].sample }
        return max(next, position)
    }

    /// Applies every event scheduled exactly at `position`.
    private mutating func applyEvents() {
        for part in 0..<nextTone.count {
            // A note may end and the next begin on the same sample.
            while nextTone[part] < schedule.tones[part].count {
                let tone = schedule.tones[part][nextTone[part]]
                if toneSounding[part] {
                    guard tone.endSample == position else { break }
                    toneSounding[part] = false
                    nextTone[part] += 1
                    let following = nextTone[part] < schedule.tones[part].count ? schedule.tones[part][nextTone[part]] : nil
                    if following?.startSample != position { voices[part].noteOff() }
                } else {
                    guard tone.startSample <= position else { break }
                    if tone.endSample <= position {
                        nextTone[part] += 1  // entirely before the start point
                        continue
                    }
                    voices[part].noteOn(frequency: tone.frequency)
                    toneSounding[part] = true
                    break
                }
            }
        }
        while nextClick < schedule.clicks.count && schedule.clicks[nextClick].sample <= position {
            if schedule.clicks[nextClick].sample == position { clickVoice.trigger(accent: schedule.clicks[nextClick].accent) }
            nextClick += 1
        }
    }

    /// Renders `frames` stereo frames into `left` and `right` (overwritten),
    /// splitting the period at every event. Render-thread safe.
    public mutating func render(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        precondition(frames <= maximumFrames, "period larger than the renderer was built for")
        left.update(repeating: 0, count: frames)
        right.update(repeating: 0, count: frames)
        var done = 0
        while done < frames {
            applyEvents()
            let stop = nextEventSample(before: position + Int64(frames - done))
            let count = Int(stop - position)
            if count == 0 { continue }
            for part in 0..<voices.count where !mixes[part].muted && voices[part].isActive {
                scratch.baseAddress!.update(repeating: 0, count: count)
                voices[part].render(into: scratch.baseAddress!, count: count, gain: 1)
                let (gainLeft, gainRight) = mixes[part].stereoGains
                for index in 0..<count {
                    left[done + index] += scratch[index] * gainLeft
                    right[done + index] += scratch[index] * gainRight
                }
            }
            if clickGain > 0 {
                scratch.baseAddress!.update(repeating: 0, count: count)
                clickVoice.render(into: scratch.baseAddress!, count: count, gain: clickGain)
                for index in 0..<count {
                    left[done + index] += scratch[index]
                    right[done + index] += scratch[index]
                }
            }
            done += count
            position += Int64(count)
        }
    }

    /// Whether everything scheduled has been rendered and has died away.
    public var isFinished: Bool {
        position >= schedule.endSample && !voices.contains(where: \.isActive)
    }
}
