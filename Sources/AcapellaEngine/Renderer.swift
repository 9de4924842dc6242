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

/// A recorded take ready to play: mono samples at the engine's rate, and
/// where the song starts in them. Frame `f` of the take holds song sample
/// `f − alignmentOffsetSamples`, so playback reads
/// `samples[songSample + alignmentOffsetSamples + nudgeSamples]`.
public struct TakePlayback: Sendable {
    /// Mono samples, decoded and resampled off the render thread.
    public var samples: [Float]
    /// The take frame that holds song sample 0 (count-in included before it).
    public var alignmentOffsetSamples: Int64
    /// A manual correction, in samples.
    public var nudgeSamples: Int64

    /// A take.
    public init(samples: [Float], alignmentOffsetSamples: Int64, nudgeSamples: Int64 = 0) {
        self.samples = samples
        self.alignmentOffsetSamples = alignmentOffsetSamples
        self.nudgeSamples = nudgeSamples
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
    let mixes: [PartMix]
    /// Metronome gain (0 = off).
    public var clickGain: Float
    var voices: [ToneVoice]
    let takes: [TakePlayback?]
    /// Left and right gain of each part, from its fixed mix (computed once).
    let partGains: [(left: Float, right: Float)]
    var clickVoice: ClickVoice
    var nextTone: [Int]
    var toneSounding: [Bool]
    var nextClick: Int
    let scratch: UnsafeMutableBufferPointer<Float>
    /// The song sample the next rendered frame belongs to.
    public private(set) var position: Int64
    /// A loop: on reaching `end` the song jumps back to `start`, on that
    /// exact sample. `nil` plays through.
    public private(set) var loop: Range<Int64>?

    /// Largest period `render` accepts.
    public let maximumFrames: Int

    /// A renderer positioned at `start` (the count-in's first click, or 0).
    /// A part with a take plays the take instead of its tones.
    public init(schedule: Schedule, mixes: [PartMix], takes: [TakePlayback?]? = nil, clickGain: Float = 0, start: Int64? = nil, maximumFrames: Int = 8192) {
        // Everything is computed into locals first and assigned once: no
        // stored property is read before all are initialized.
        let partCount = schedule.tones.count
        let takeSlots: [TakePlayback?] = takes ?? Array(repeating: nil, count: partCount)
        precondition(mixes.count == partCount && takeSlots.count == partCount, "one mix and one take slot per part")
        let startPosition = start ?? schedule.startSample
        let rate = schedule.options.sampleRate
        let firstTones = schedule.tones.map { tones in tones.firstIndex { $0.endSample > startPosition } ?? tones.count }
        let firstClick = schedule.clicks.firstIndex { $0.sample >= startPosition } ?? schedule.clicks.count
        self.schedule = schedule
        self.mixes = mixes
        self.partGains = mixes.map(\.stereoGains)
        self.takes = takeSlots
        self.clickGain = clickGain
        self.maximumFrames = maximumFrames
        self.voices = Array(repeating: ToneVoice(sampleRate: rate), count: partCount)
        self.clickVoice = ClickVoice(sampleRate: rate)
        self.position = startPosition
        self.nextTone = firstTones
        self.toneSounding = Array(repeating: false, count: partCount)
        self.nextClick = firstClick
        self.loop = nil
        self.scratch = .allocate(capacity: maximumFrames)
    }

    /// Sets or clears the loop. Render-thread safe.
    public mutating func setLoop(_ range: Range<Int64>?) {
        loop = range.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Moves to `sample`: sounding notes are released (their tails fade
    /// over the release time), the notes and clicks from there on are
    /// found by binary search. Render-thread safe: no allocation.
    public mutating func seek(to sample: Int64) {
        position = sample
        for part in 0..<voices.count {
            voices[part].noteOff()
            toneSounding[part] = false
            let tones = schedule.tones[part]
            var low = 0
            var high = tones.count
            while low < high {
                let mid = (low + high) / 2
                if tones[mid].endSample <= sample { low = mid + 1 } else { high = mid }
            }
            nextTone[part] = low
        }
        var low = 0
        var high = schedule.clicks.count
        while low < high {
            let mid = (low + high) / 2
            if schedule.clicks[mid].sample < sample { low = mid + 1 } else { high = mid }
        }
        nextClick = low
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
            if let loop, position == loop.upperBound { seek(to: loop.lowerBound) }
            applyEvents()
            var limit = position + Int64(frames - done)
            if let loop, position < loop.upperBound { limit = min(limit, loop.upperBound) }
            let stop = nextEventSample(before: limit)
            let count = Int(stop - position)
            if count == 0 { continue }
            for part in 0..<voices.count where !mixes[part].muted && (takes[part] != nil || voices[part].isActive) {
                scratch.baseAddress!.update(repeating: 0, count: count)
                if let take = takes[part] {
                    let first = position + take.alignmentOffsetSamples + take.nudgeSamples
                    take.samples.withUnsafeBufferPointer { samples in
                        for index in 0..<count {
                            let frame = first + Int64(index)
                            if frame >= 0 && frame < Int64(samples.count) { scratch[index] = samples[Int(frame)] }
                        }
                    }
                } else {
                    voices[part].render(into: scratch.baseAddress!, count: count, gain: 1)
                }
                let (gainLeft, gainRight) = partGains[part]
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
