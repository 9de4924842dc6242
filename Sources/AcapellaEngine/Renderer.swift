import AcapellaScore
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

    /// An audio track's default gain (a reference recording: a whole
    /// choir, louder than one guide tone).
    public static let trackGain: Float = 0.5

    /// The default mixes of `parts` parts (spread) and then `tracks` audio
    /// tracks (centred at `trackGain`): where every mix starts from.
    public static func defaults(parts: Int, tracks: Int) -> [PartMix] {
        spread(count: parts) + (0..<tracks).map { _ in PartMix(gain: trackGain) }
    }

    /// `count` parts at `gain`, spread evenly from −0.6 (left) to +0.6
    /// (right) in score order; a single part in the centre.
    public static func spread(count: Int, gain: Float = 0.3) -> [PartMix] {
        (0..<count).map { PartMix(gain: gain, pan: count == 1 ? 0 : -0.6 + 1.2 * Float($0) / Float(count - 1)) }
    }

    /// Equal-power left and right gains (both 0 when muted).
    var stereoGains: (left: Float, right: Float) {
        if muted { return (0, 0) }
        let angle = Double((max(-1, min(1, pan)) + 1) * Float.pi / 4)
        return (gain * Float(angleCos(angle)), gain * Float(angleSin(angle)))
    }
}

/// A recorded take ready to play: mono samples at the engine's rate, and
/// where the song starts in them. Frame `f` of the take holds song sample
/// `f − alignmentOffsetSamples`, so playback reads
/// `samples[songSample + alignmentOffsetSamples + nudgeSamples]`.
public struct TakePlayback: Sendable {
    /// Mono samples, decoded and resampled off the render thread (empty
    /// when the take is streamed).
    public var samples: [Float]
    /// The take read from its file a block at a time (nil: `samples`).
    public var stream: TakeStream?
    /// The take frame that holds song sample 0 (count-in included before it).
    public var alignmentOffsetSamples: Int64
    /// A manual correction, in samples.
    public var nudgeSamples: Int64
    /// The song samples the take sounds over: a punch-in's range, or `nil`
    /// for everything it recorded.
    public var range: Range<Int64>?

    /// A take.
    public init(samples: [Float], alignmentOffsetSamples: Int64, nudgeSamples: Int64 = 0, range: Range<Int64>? = nil) {
        self.samples = samples
        self.alignmentOffsetSamples = alignmentOffsetSamples
        self.nudgeSamples = nudgeSamples
        self.range = range
    }

    /// A take streamed from its file.
    public init(stream: TakeStream, alignmentOffsetSamples: Int64, nudgeSamples: Int64 = 0, range: Range<Int64>? = nil) {
        self.init(samples: [], alignmentOffsetSamples: alignmentOffsetSamples, nudgeSamples: nudgeSamples, range: range)
        self.stream = stream
    }

    /// Frames the take holds.
    public var frameCount: Int64 { stream?.frameCount ?? Int64(samples.count) }

    /// Take frame minus song sample.
    var songToFile: Int64 { alignmentOffsetSamples + nudgeSamples }

    /// The butler's view of a streamed take (nil when in memory): where
    /// it maps and where it can sound, fades of `fade` samples included.
    public func streamUse(fade: Int64) -> StreamUse? {
        guard let stream else { return nil }
        let (fadeIn, fadeOut) = fades(fade)
        return StreamUse(stream: stream, songToFile: songToFile, heard: fadeIn..<max(fadeIn, fadeOut))
    }

    /// Take frames for song samples `song ..< song + count` into
    /// `destination` (0 outside the take; a streamed block not resident:
    /// 0, counted by the stream). Render-thread safe.
    @inline(__always)
    func read(into destination: UnsafeMutablePointer<Float>, song: Int64, count: Int) {
        let first = song + songToFile
        if let stream {
            stream.read(into: destination, from: first, count: count, song: song)
            return
        }
        samples.withUnsafeBufferPointer { samples in
            let from = max(first, 0)
            let to = min(first + Int64(count), Int64(samples.count))
            if from > first { destination.update(repeating: 0, count: Int(min(from - first, Int64(count)))) }
            if to > from { (destination + Int(from - first)).update(from: samples.baseAddress! + Int(from), count: Int(to - from)) }
            if first + Int64(count) > max(to, from) {
                let tail = Int(max(to, from) - first)
                (destination + tail).update(repeating: 0, count: count - tail)
            }
        }
    }

    /// The song samples this take covers: its range, cut to what it holds.
    public var coverage: Range<Int64> { coverage(unranged: false) }

    /// What it covers; `unranged`: everything it holds, ignoring `range`.
    func coverage(unranged: Bool) -> Range<Int64> {
        let first = -songToFile
        let held = first..<(first + frameCount)
        guard let range, !unranged else { return held }
        let lower = max(range.lowerBound, held.lowerBound)
        return lower..<max(lower, min(range.upperBound, held.upperBound))
    }

    /// Where the take fades in and out, for fades of `fade` samples:
    /// centred on the range's edges where the take holds the audio, else
    /// inside what it holds. Fully audible in `fadeIn + fade ..< fadeOut − fade`.
    func fades(_ fade: Int64) -> (fadeIn: Int64, fadeOut: Int64) {
        let covered = coverage
        let held = coverage(unranged: true)
        return (max(held.lowerBound, covered.lowerBound - fade / 2), min(held.upperBound, covered.upperBound + fade / 2))
    }
}

/// What a part plays besides its tones: takes layered oldest first. Each
/// sounds over its coverage and fades in and out over ~10 ms centred on its
/// edges; a later layer covers the earlier ones and the tones beneath.
/// A full take covering the song hides the tones; punch-ins layer over it.
public struct PartTakes: Sendable {
    /// Oldest first; the last is on top.
    public var layers: [TakePlayback]

    /// Layers, oldest first.
    public init(_ layers: [TakePlayback] = []) {
        self.layers = layers
    }

    /// No takes: the part plays its tones.
    public static let none = PartTakes()
}

/// Renders a schedule into stereo periods on the song's sample timeline:
/// every event is applied at its exact sample inside the period, so the
/// output is bit-identical whatever the period size.
///
/// `init` allocates everything; every other method is render-thread safe —
/// it never allocates, locks, logs or does I/O. Replacing the schedule or a
/// part's takes hands the old value back to the caller, so the render
/// thread never frees it either.
public struct SongRenderer: ~Copyable {
    /// What is being rendered.
    public private(set) var schedule: Schedule
    /// Metronome gain (0 = off).
    public var clickGain: Float
    /// When set, only clicks sound (a count-in over earlier measures).
    public var partsSilent = false
    var voices: [ToneVoice]
    var takes: [PartTakes]
    // Per-part left/right gains: current (smoothed) and target, with a
    // linear ramp of `rampSamples` towards the target after each change.
    var gainLeft: [Float]
    var gainRight: [Float]
    var targetLeft: [Float]
    var targetRight: [Float]
    var stepLeft: [Float]
    var stepRight: [Float]
    var rampRemaining: [Int]
    /// Length of mix-control ramps and take crossfades (10 ms).
    public let rampSamples: Int
    /// Peak level of each part since `resetPeaks` (after gain).
    public private(set) var peaks: [Float]
    var clickVoice: ClickVoice
    /// Tones outside the song (a keyboard's notes, references, the
    /// drone), centred.
    public internal(set) var pool: VoicePool
    /// The reference tone's gain (and a keyboard note's at full velocity).
    public var referenceGain: Float = 0.5
    var nextTone: [Int]
    var toneSounding: [Bool]
    var nextClick: Int
    let scratch: UnsafeMutableBufferPointer<Float>
    /// A take's samples for a chunk being faded.
    let takeScratch: UnsafeMutableBufferPointer<Float>
    /// Where the song is, for the butler reading streamed takes (nil: none).
    public var cue: StreamCue?
    /// The song sample the next rendered frame belongs to.
    public private(set) var position: Int64
    /// A loop: on reaching `end` the song jumps back to `start`, on that
    /// exact sample. `nil` plays through.
    public private(set) var loop: Range<Int64>?

    /// Largest period `render` accepts.
    public let maximumFrames: Int

    /// A renderer positioned at `start` (the count-in's first click, or 0).
    /// A part's takes layer over its tones (a full take hides them).
    public init(schedule: Schedule, mixes: [PartMix], takes: [PartTakes]? = nil, clickGain: Float = 0, start: Int64? = nil, maximumFrames: Int = 8192) {
        // Everything is computed into locals first and assigned once: no
        // stored property is read before all are initialized.
        let partCount = schedule.tones.count
        let takeSlots = takes ?? Array(repeating: PartTakes.none, count: partCount)
        precondition(mixes.count == partCount && takeSlots.count == partCount, "one mix and one take slot per part")
        let startPosition = start ?? schedule.startSample
        let rate = schedule.options.sampleRate
        let firstTones = schedule.tones.map { tones in tones.firstIndex { $0.endSample > startPosition } ?? tones.count }
        let firstClick = schedule.clicks.firstIndex { $0.sample >= startPosition } ?? schedule.clicks.count
        let gains = mixes.map(\.stereoGains)
        self.schedule = schedule
        self.takes = takeSlots.map { $0 }  // its own buffer: replacing a part's takes must not copy it on the render thread
        self.clickGain = clickGain
        self.maximumFrames = maximumFrames
        self.voices = Array(repeating: ToneVoice(sampleRate: rate), count: partCount)
        self.clickVoice = ClickVoice(sampleRate: rate)
        self.pool = VoicePool(sampleRate: rate)
        self.position = startPosition
        self.nextTone = firstTones
        self.toneSounding = Array(repeating: false, count: partCount)
        self.nextClick = firstClick
        self.loop = nil
        self.gainLeft = gains.map(\.left)
        self.gainRight = gains.map(\.right)
        self.targetLeft = gains.map(\.left)
        self.targetRight = gains.map(\.right)
        self.stepLeft = Array(repeating: 0, count: partCount)
        self.stepRight = Array(repeating: 0, count: partCount)
        self.rampRemaining = Array(repeating: 0, count: partCount)
        self.rampSamples = max(1, rate / 100)
        self.peaks = Array(repeating: 0, count: partCount)
        self.scratch = .allocate(capacity: maximumFrames)
        self.takeScratch = .allocate(capacity: maximumFrames)
        self.cue = nil
    }

    deinit {
        scratch.deallocate()
        takeScratch.deallocate()
    }

    /// Number of parts.
    public var partCount: Int { voices.count }

    /// Whether any take plays from its file.
    public var hasStreams: Bool {
        for part in takes.indices { for layer in takes[part].layers where layer.stream != nil { return true } }
        return false
    }

    /// Whether every streamed take heard within two blocks of song sample
    /// `song` has those blocks read. Render-thread safe.
    public func streamsReady(at song: Int64) -> Bool {
        let blockFrames = Int64(TakeStream.blockFrames)
        let window = song..<(song + 2 * blockFrames)
        for part in takes.indices {
            for layer in takes[part].layers {
                guard let stream = layer.stream else { continue }
                let (fadeIn, fadeOut) = layer.fades(Int64(rampSamples))
                let lower = max(window.lowerBound, fadeIn)
                let upper = min(window.upperBound, fadeOut)
                guard lower < upper else { continue }
                if !stream.isResident(lower + layer.songToFile) || !stream.isResident(min(upper - 1, lower + blockFrames) + layer.songToFile) { return false }
            }
        }
        return true
    }

    /// Sets or clears the loop. Render-thread safe.
    public mutating func setLoop(_ range: Range<Int64>?) {
        loop = range.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Changes a part's mix; the gains glide there over `rampSamples`, so a
    /// live change never clicks. Render-thread safe.
    public mutating func setMix(part: Int, _ mix: PartMix) {
        let (left, right) = mix.stereoGains
        targetLeft[part] = left
        targetRight[part] = right
        stepLeft[part] = (left - gainLeft[part]) / Float(rampSamples)
        stepRight[part] = (right - gainRight[part]) / Float(rampSamples)
        rampRemaining[part] = rampSamples
    }

    /// Puts a new schedule in place (same parts; a tempo or transposition
    /// change) and returns the old one for the caller to free off the
    /// render thread. Follow with `seek`. Render-thread safe.
    public mutating func replaceSchedule(_ new: consuming Schedule) -> Schedule {
        precondition(new.tones.count == voices.count, "a replacement schedule has the same parts")
        swap(&schedule, &new)
        return new
    }

    /// Puts new takes in place for a part and returns the old ones for the
    /// caller to free off the render thread. Render-thread safe.
    public mutating func replaceTakes(part: Int, _ new: consuming PartTakes) -> PartTakes {
        swap(&takes[part], &new)
        return new
    }

    /// The MIDI pitch part `part` is sounding now, or nil.
    public func currentMIDI(part: Int) -> Int? {
        toneSounding[part] ? schedule.tones[part][nextTone[part]].midi : nil
    }

    /// Clears the peak meters. Render-thread safe.
    public mutating func resetPeaks() {
        for part in 0..<peaks.count { peaks[part] = 0 }
    }

    /// Moves to `sample`: sounding notes are released (their tails fade
    /// over the release time), the notes and clicks from there on are
    /// found by binary search. Render-thread safe: no allocation.
    public mutating func seek(to sample: Int64) {
        position = sample
        for part in 0..<voices.count {
            voices[part].noteOff()
            toneSounding[part] = false
            nextTone[part] = schedule.tones[part].indexOfTone(notEndedAt: sample)
        }
        nextClick = schedule.clicks.partitionIndex { $0.sample >= sample }
    }

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
        // Where a take becomes or stops being fully audible (the voice
        // beneath stops or resumes there).
        let fade = Int64(rampSamples)
        for part in 0..<takes.count {
            for layer in takes[part].layers where layer.range == nil {
                let (fadeIn, fadeOut) = layer.fades(fade)
                if fadeIn + fade > position && fadeIn + fade < next { next = fadeIn + fade }
                if fadeOut - fade > position && fadeOut - fade < next { next = fadeOut - fade }
            }
        }
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
            for part in 0..<voices.count where !partsSilent {
                renderPart(part, count: count)
                mixPart(part, into: left + done, right + done, count: count)
            }
            mixClicks(into: left + done, right + done, count: count)
            mixPool(into: left + done, right + done, count: count)
            done += count
            position += Int64(count)
        }
    }

    /// Renders what is still sounding without moving through the song:
    /// release tails and the last click die away after a stop.
    /// Render-thread safe.
    public mutating func renderTails(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        precondition(frames <= maximumFrames, "period larger than the renderer was built for")
        left.update(repeating: 0, count: frames)
        right.update(repeating: 0, count: frames)
        for part in 0..<voices.count where voices[part].isActive {
            scratch.baseAddress!.update(repeating: 0, count: frames)
            voices[part].render(into: scratch.baseAddress!, count: frames, gain: 1)
            mixPart(part, into: left, right, count: frames)
        }
        mixClicks(into: left, right, count: frames)
        mixPool(into: left, right, count: frames)
    }

    /// Sounds a reference tone at `frequency` for `samples`, whatever the
    /// transport does (it is not part of the song). Render-thread safe.
    public mutating func playReference(frequency: Double, samples: Int) {
        pool.noteOn(key: VoicePool.referenceKey, frequency: frequency, level: referenceGain, samples: max(1, samples))
    }

    /// Starts a tone outside the song (see `VoicePool`). Render-thread safe.
    public mutating func playTone(key: Int, frequency: Double, level: Float, samples: Int) {
        pool.noteOn(key: key, frequency: frequency, level: referenceGain * level, samples: samples)
    }

    /// Releases tones outside the song. Render-thread safe.
    public mutating func releaseTones(keys: Range<Int>) {
        pool.noteOff(keys: keys)
    }

    private mutating func mixPool(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int) {
        guard pool.audible > 0 else { return }
        let buffer = scratch.baseAddress!
        buffer.update(repeating: 0, count: count)
        pool.render(into: buffer, count: count)
        let centre: Float = 0.707_106_77  // equal power, centred
        for index in 0..<count {
            left[index] += buffer[index] * centre
            right[index] += buffer[index] * centre
        }
    }

    /// One part's sound for the next `count` samples into `scratch`: its
    /// tones, with its takes layered over them. Beneath a full take that
    /// is fully audible over the whole chunk nothing is rendered: the voice
    /// waits (its notes still start and stop on their samples), which is
    /// period-size independent because such spans begin and end on events.
    private mutating func renderPart(_ part: Int, count: Int) {
        let output = scratch.baseAddress!
        let fade = Int64(rampSamples)
        let chunk = position..<(position + Int64(count))
        let layers = takes[part].layers
        var first = 0  // the lowest layer that shows
        var voiceShows = true
        // Only a full take hides the voice: under a punch-in the tones go
        // on, so they carry on exactly as written after it.
        for index in layers.indices.reversed() where layers[index].range == nil {
            let (fadeIn, fadeOut) = layers[index].fades(fade)
            if fadeIn + fade <= chunk.lowerBound && chunk.upperBound <= fadeOut - fade {
                first = index
                voiceShows = false
                break
            }
        }
        if voiceShows || layers[first].coverage.count < Int64(count) {
            output.update(repeating: 0, count: count)
        }
        if voiceShows { voices[part].render(into: output, count: count, gain: 1) }
        for layer in layers[first...] {
            guard !layer.coverage.isEmpty else { continue }
            let (fadeInStart, fadeOutEnd) = layer.fades(fade)
            guard fadeInStart < chunk.upperBound && fadeOutEnd > chunk.lowerBound else { continue }
            if chunk.lowerBound >= fadeInStart + fade && chunk.upperBound <= fadeOutEnd - fade {
                // Fully audible: a straight copy of what the take holds here.
                layer.read(into: output, song: position, count: count)
                continue
            }
            let take = takeScratch.baseAddress!
            layer.read(into: take, song: position, count: count)
            for index in 0..<count {
                let song = position + Int64(index)
                let rising = min(1, max(0, Float(song - fadeInStart) / Float(fade)))
                let falling = min(1, max(0, Float(fadeOutEnd - song) / Float(fade)))
                let weight = rising * falling
                // Exact at both ends (weight 0 keeps what is beneath, 1
                // gives the take) and where the take equals what is beneath.
                output[index] = weight == 1 ? take[index] : output[index] + weight * (take[index] - output[index])
            }
        }
    }

    /// Adds `scratch` into the outputs at the part's (gliding) gains and
    /// updates its peak.
    private mutating func mixPart(_ part: Int, into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int) {
        var peak: Float = 0
        var index = 0
        while rampRemaining[part] > 0 && index < count {
            rampRemaining[part] -= 1
            if rampRemaining[part] == 0 {
                gainLeft[part] = targetLeft[part]
                gainRight[part] = targetRight[part]
            } else {
                gainLeft[part] += stepLeft[part]
                gainRight[part] += stepRight[part]
            }
            let value = scratch[index]
            left[index] += value * gainLeft[part]
            right[index] += value * gainRight[part]
            peak = max(peak, abs(value) * max(gainLeft[part], gainRight[part]))
            index += 1
        }
        let (gainLeft, gainRight) = (self.gainLeft[part], self.gainRight[part])
        var loudest: Float = 0
        if gainLeft == 0 && gainRight == 0 { index = count }
        // Four peak trackers, so no one running maximum chains the loop.
        var loudest1: Float = 0, loudest2: Float = 0, loudest3: Float = 0
        while index + 4 <= count {
            let a = scratch[index], b = scratch[index + 1], c = scratch[index + 2], d = scratch[index + 3]
            left[index] += a * gainLeft
            right[index] += a * gainRight
            left[index + 1] += b * gainLeft
            right[index + 1] += b * gainRight
            left[index + 2] += c * gainLeft
            right[index + 2] += c * gainRight
            left[index + 3] += d * gainLeft
            right[index + 3] += d * gainRight
            loudest = max(loudest, abs(a))
            loudest1 = max(loudest1, abs(b))
            loudest2 = max(loudest2, abs(c))
            loudest3 = max(loudest3, abs(d))
            index += 4
        }
        while index < count {
            let value = scratch[index]
            left[index] += value * gainLeft
            right[index] += value * gainRight
            loudest = max(loudest, abs(value))
            index += 1
        }
        loudest = max(loudest, loudest1, loudest2, loudest3)
        peaks[part] = max(peaks[part], peak, loudest * max(gainLeft, gainRight))
    }

    private mutating func mixClicks(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int) {
        guard clickGain > 0 else { return }
        scratch.baseAddress!.update(repeating: 0, count: count)
        clickVoice.render(into: scratch.baseAddress!, count: count, gain: clickGain)
        for index in 0..<count {
            left[index] += scratch[index]
            right[index] += scratch[index]
        }
    }

    /// Whether everything scheduled has been rendered and has died away.
    public var isFinished: Bool {
        position >= schedule.endSample && !voices.contains(where: \.isActive)
    }
}
