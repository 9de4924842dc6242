public import AcapellaScore
import Synchronization

/// When a command takes effect.
public enum Quantize: String, CaseIterable, Hashable, Sendable, Codable {
    /// At the next period.
    case immediate
    /// On the next beat (metronome click) of the song.
    case beat
    /// On the next barline.
    case bar
}

extension Quantize {
    /// Reads `"immediate"`, `"beat"` or `"bar"`; anything else says so.
    public init(from decoder: any Decoder) throws {
        let word = try? decoder.singleValueContainer().decode(String.self)
        guard let word, let value = Quantize(rawValue: word) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "expected \"immediate\", \"beat\" or \"bar\""))
        }
        self = value
    }
}

/// What a control thread asks the render loop to do. Sent through the
/// engine's command ring; applied at the start of the next period, or at
/// its quantized sample inside a period.
public enum EngineCommand: Sendable {
    /// Play from the return point (through the count-in when set).
    case play
    /// Stop and return to the start (or the loop's start).
    case stop
    /// The record button: from stopped, count in and record; while
    /// playing, punch in; while recording, punch out — on the quantized sample.
    case record(Quantize)
    /// Record a measure range: play from `prerollMeasures` before it
    /// (armed: the pre-roll is written to the take too), record the range,
    /// keep writing a short post-roll, then stop by itself.
    case punch(measures: ClosedRange<Int>, prerollMeasures: Int)
    /// Loop over a measure range (nil: off).
    case loop(ClosedRange<Int>?)
    /// Stop at the loop's end after this many more wraps (loop recording:
    /// one take per pass); nil: loop until stopped.
    case stopAfterPasses(Int?)
    /// Move to a measure's barline (while stopped: the new return point).
    case locate(measure: Int)
    /// A part's volume, pan and mute; glides there over ~10 ms.
    case mix(part: Int, PartMix)
    /// Solo a part (several may be soloed; none: all sound).
    case solo(part: Int, Bool)
    /// Metronome gain (0: off; the count-in always clicks).
    case metronome(Float)
    /// A recompiled schedule (tempo or transposition): takes over at the
    /// next barline, the position carried over musically.
    case schedule(Schedule)
    /// New takes for a part.
    case takes(part: Int, PartTakes)
    /// "Give me my note": a reference tone at `frequency` Hz for `samples`,
    /// at once, whatever the transport is doing (nothing else changes).
    case reference(frequency: Double, samples: Int)
    /// A tone outside the song at once (a keyboard's note, a part of "give
    /// me my chord", the drone): `key` names it (see `VoicePool`), `level`
    /// 0…1 of the reference's, for `samples` (0: until released).
    case tone(key: Int, frequency: Double, level: Float, samples: Int)
    /// Releases the tones whose keys are in the range.
    case releaseTones(Range<Int>)
}

/// What the render loop reports back, each with its exact song sample.
public enum EngineEvent: Hashable, Sendable {
    /// A count-in began at `from`; the music starts at `music`.
    case countIn(from: Int64, music: Int64)
    /// Playback began (or the count-in ended into playback).
    case playing(at: Int64)
    /// Captured audio from `at` on belongs to a take.
    case recordingStarted(at: Int64)
    /// Captured audio from `at` on no longer does.
    case recordingStopped(at: Int64)
    /// Stopped at `at`; the position returned to `returnTo`.
    case stopped(at: Int64, returnTo: Int64, finishedTake: Bool)
    /// The loop wrapped from its end to its start.
    case looped(from: Int64, to: Int64)
    /// A new schedule took over: sample `old` of the old one became `new`.
    case scheduleChanged(old: Int64, new: Int64)
    /// A command could not be carried out and was ignored.
    case refused(EngineRefusal)
}

/// Why the render loop ignored a command (said without allocating; the
/// words are made on the control side).
public enum EngineRefusal: Hashable, Sendable, CustomStringConvertible {
    /// No such part.
    case noSuchPart(Int)
    /// No such measure.
    case noSuchMeasure(Int)
    /// A loop outside the song.
    case loopOutsideSong(ClosedRange<Int>)
    /// A replacement schedule for a different set of parts.
    case scheduleForOtherParts
    /// Moving while recording or counting in would tear the take.
    case notWhileRecording

    /// One line.
    public var description: String {
        switch self {
        case .noSuchPart(let part): "no part number \(part + 1)"
        case .noSuchMeasure(let measure): "no measure \(measure) in this song"
        case .loopOutsideSong(let range): "no measures \(range.lowerBound)–\(range.upperBound) in this song to loop"
        case .scheduleForOtherParts: "a recompiled schedule has other parts than the song"
        case .notWhileRecording: "not while recording (or counting in): stop first"
        }
    }
}

/// The render thread's half of the engine: the renderer, the transport
/// and the mix state, driven one period at a time by `process`. Owned by
/// the audio thread (live) or the offline driver; its only links to other
/// threads are the rings and the snapshot board in `link`.
public struct EngineCore: ~Copyable {
    /// The renderer (position, schedule, loop).
    public private(set) var renderer: SongRenderer
    /// The motion: transport, punch, post-roll, count-in hand-over, loop
    /// passes, a held move — one state machine (`Motion`).
    public private(set) var motion: Motion
    /// The transport state machine (the motion's).
    public var transport: Transport { motion.transport }
    /// The rings and the board shared with control threads.
    public let link: EngineLink
    var mixes: [PartMix]
    var solos: [Bool]
    var loopMeasures: ClosedRange<Int>?
    /// Capture tagging, when a recorder listens.
    var tagger: CaptureTagger?
    /// The device frame of the next period (counted here when the caller
    /// does not give one) and of the first.
    var nextDeviceFrame: Int64 = 0
    var firstDeviceFrame: Int64?
    /// Jumps of the device's frame counter (xruns, a device lost and back), ever.
    var deviceGaps: Int64 = 0
    /// A schedule waiting for the barline `index` (old schedule's numbering).
    var pendingSchedule: Schedule?
    var pendingScheduleBarline = 0
    /// Takes sent while a schedule waits (made for it: a take heard at the
    /// new tempo or key), swapped in with it. One slot per part, made at init.
    var pendingTakes: [PartTakes?]
    var refusedCommands: Int64 = 0
    var outputPeak: Float = 0
    /// Commands applied, ever, and the host time of the period that
    /// applied the latest (echoed in the snapshot; never used for timing).
    var commandsApplied: Int64 = 0
    var commandsAppliedAt: Int64 = 0
    /// The metronome's gain outside the count-in.
    var metronomeGain: Float
    /// Click gain during a count-in when the metronome is off.
    public static let countInClickGain: Float = 0.5
    /// Most commands applied per period (the rest wait for the next).
    static let commandsPerPeriod = 32
    /// The longest a move waits for the streamed takes where it lands, in
    /// seconds: after a locate on a slow card every stream's first blocks
    /// are read at once (with the kernel's read-ahead for each), and a
    /// move made a little late is better than takes missing after it.
    public static let moveHoldSeconds = 1

    /// An engine over `schedule`, stopped at song start.
    public init(schedule: Schedule, mixes: [PartMix], takes: [PartTakes]? = nil, clickGain: Float = 0, maximumFrames: Int = 4096, commandCapacity: Int = 256) {
        // Built whole first, then warmed up (a mutating call in the
        // initializer that builds it trips Swift 6.2's noncopyable checker).
        self.init(unwarmed: schedule, mixes: mixes, takes: takes, clickGain: clickGain, maximumFrames: maximumFrames, commandCapacity: commandCapacity)
        warmUp(schedule: schedule, takes: takes?.first ?? .none)
    }

    private init(unwarmed schedule: Schedule, mixes: [PartMix], takes: [PartTakes]?, clickGain: Float, maximumFrames: Int, commandCapacity: Int) {
        let partCount = schedule.tones.count
        renderer = SongRenderer(schedule: schedule, mixes: mixes, takes: takes, clickGain: clickGain, start: 0, maximumFrames: maximumFrames)
        motion = Motion(postRollSamples: Int64(2 * renderer.rampSamples))
        link = EngineLink(partCount: partCount, capacity: commandCapacity)
        self.mixes = mixes.map { $0 }  // its own buffer: a live change must not copy it on the render thread
        solos = Array(repeating: false, count: partCount)
        pendingTakes = Array(repeating: nil, count: partCount)
        loopMeasures = nil
        metronomeGain = clickGain
    }

    /// Runs the command paths once with values that change nothing, so the
    /// Swift runtime instantiates their generic metadata (a malloc, once)
    /// here rather than on the render thread at the first live command.
    private mutating func warmUp(schedule: Schedule, takes: PartTakes) {
        apply(.schedule(schedule))
        if !mixes.isEmpty {
            apply(.takes(part: 0, takes))
            apply(.mix(part: 0, mixes[0]))
        }
        apply(.metronome(metronomeGain))
        // A held move, made and let go (its optional's metadata).
        motion.hold(.stop, target: 0)
        _ = motion.releaseHeld(limit: 0, frames: 0) { _ in true }
        while link.events.pop() != nil {}
        link.collectRetired()
    }

    /// Length of the post-roll written after a punch-out (20 ms: the
    /// take's crossfade needs 5 ms past the range).
    public var postRollSamples: Int64 { motion.postRollSamples }

    /// Publishes the song's places to `cue` each period, for the butler
    /// reading streamed takes. Call it before the first period.
    public mutating func attachStreams(cue: StreamCue) {
        renderer.cue = cue
        // The paths the render thread takes with streams, once here (first uses allocate type metadata).
        cue.publish(position: renderer.position, loop: renderer.loop, next: motion.musicStart)
        if let target = streamTarget(of: .play), renderer.streamsReady(at: target) { cue.arrived(at: target) }
    }

    /// Starts tagging captured frames for a recorder: each captured frame
    /// goes into `ring` with the song sample the output played
    /// `latencyFrames` earlier. Allocates; call it before the first period.
    public mutating func attachCapture(ring: BulkRing<CapturedFrame>, latencyFrames: Int) {
        tagger = CaptureTagger(ring: ring, latencyFrames: latencyFrames, maximumFrames: renderer.maximumFrames)
    }

    /// Also hands every tagged captured frame to `ring` (the pitch
    /// tracker's): the capture as the recorder has it, or input `input`
    /// (from 0) on its own. Call after `attachCapture`, before the first period.
    public mutating func attachAnalysis(ring: BulkRing<CapturedFrame>, input: Int? = nil) {
        // Taken out, changed, put back (a store through the optional
        // chain of a noncopyable value crashes Swift 6.2's SIL verifier).
        guard var attached = tagger.take() else { return }
        attached.analysisRing = ring
        attached.analysisInput = input
        tagger = consume attached
    }

    /// Also hands every tagged captured frame of input `input` to its ring
    /// (a part recorded on its own microphone, many at once). Call after
    /// `attachCapture`, before the first period.
    public mutating func attachInputs(_ rings: [(ring: BulkRing<CapturedFrame>, input: Int)]) {
        guard var attached = tagger.take() else { return }
        attached.inputRings = rings
        tagger = consume attached
    }

    /// What output device frame `frame` played, while it is still in the
    /// capture history (nil without a recorder attached or when too old).
    public func outputMark(frame: Int64) -> FrameMark? {
        tagger?.mark(frame: frame) ?? nil
    }

    /// Renders one period into `left` and `right` (overwritten): applies
    /// queued commands, renders with every transport event on its exact
    /// sample, publishes a snapshot. Render-thread safe: no allocation, no
    /// lock, no log, no I/O.
    public mutating func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        process(input: nil, left: left, right: right, frames: frames, deviceFrame: nextDeviceFrame)
    }

    /// One period of a duplex device: as above, and the captured `input`
    /// (when a recorder is attached) tagged and handed to the capture ring.
    /// `deviceFrame` is the device's frame counter at the period's first
    /// frame; a jump since the last period is an xrun. `alignment` is how
    /// the device's capture lines up with its playback since its last
    /// (re)start. Render-thread safe. `hostNanoseconds` is the device's
    /// stamp of the period (diagnostics only).
    /// `inputs` holds the device's inputs apart (`inputCount` of them,
    /// input after input) for the rings attached with `attachInputs`.
    public mutating func process(input: UnsafePointer<Float>?, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int, deviceFrame: Int64,
                                 alignment: StreamAlignment = .linked, hostNanoseconds: Int64 = 0, inputs: UnsafePointer<Float>? = nil, inputCount: Int = 1) {
        if firstDeviceFrame == nil { firstDeviceFrame = deviceFrame }
        if deviceFrame != nextDeviceFrame, firstDeviceFrame != deviceFrame { deviceGaps += 1 }
        var applied = 0
        // A move waiting for its streamed takes: made once they are read, or after `moveHoldSeconds` regardless.
        let limit = Int64(renderer.schedule.options.sampleRate * Self.moveHoldSeconds)
        if let move = motion.releaseHeld(limit: limit, frames: Int64(frames), ready: { renderer.streamsReady(at: $0) }) {
            renderer.cue?.arrived(at: move.target)
            apply(move.command)
            applied += 1
        }
        while !motion.isHolding, applied < Self.commandsPerPeriod, let command = link.commands.pop() {
            if let target = streamTarget(of: command) {
                guard renderer.streamsReady(at: target) else {
                    motion.hold(command, target: target)
                    break
                }
                renderer.cue?.arrived(at: target)
            }
            apply(command)
            applied += 1
        }
        if applied > 0 {
            commandsApplied += Int64(applied)
            commandsAppliedAt = hostNanoseconds
        }
        renderer.resetPeaks()
        var done = 0
        while done < frames {
            handleEventsAtPosition()
            let remaining = frames - done
            if transport.state == .stopped {
                renderer.renderTails(left: left + done, right: right + done, frames: remaining)
                tagger?.record(frame: deviceFrame + Int64(done), count: remaining, mark: .none)
                break
            }
            let count = Int(nextTransportEvent(before: renderer.position + Int64(remaining)) - renderer.position)
            if count == 0 { continue }
            let mark = FrameMark(songSample: renderer.position, kind: motion.markKind(at: renderer.position))
            tagger?.record(frame: deviceFrame + Int64(done), count: count, mark: mark)
            renderer.render(left: left + done, right: right + done, frames: count)
            done += count
        }
        if let input {
            tagger?.capture(input, frame: deviceFrame, count: frames, firstFrame: firstDeviceFrame ?? deviceFrame, alignment: alignment, inputs: inputs, inputCount: inputCount)
        }
        nextDeviceFrame = deviceFrame + Int64(frames)
        var peak: Float = 0
        for index in 0..<frames { peak = max(peak, abs(left[index]), abs(right[index])) }
        outputPeak = peak
        renderer.cue?.publish(position: renderer.position, loop: renderer.loop, next: motion.nextStreamPlace)
        publish()
    }

    /// Where a move would start reading takes, when streamed takes are
    /// playing: a locate while playing, a punch's pre-roll, play or record
    /// from the return point. Nil for everything else.
    private func streamTarget(of command: EngineCommand) -> Int64? {
        guard renderer.hasStreams else { return nil }
        return motion.streamTarget(of: command, in: renderer.schedule)
    }

    /// The first transport event after the position, or `limit`.
    private func nextTransportEvent(before limit: Int64) -> Int64 {
        let position = renderer.position
        var next = limit
        if let due = motion.nextEvent(after: position) { next = min(next, due) }
        if pendingSchedule != nil, scheduleSwitchSample > position { next = min(next, scheduleSwitchSample) }
        if let loop = renderer.loop, position < loop.upperBound {
            next = min(next, loop.upperBound)
        } else if renderer.loop == nil, position < renderer.schedule.endSample {
            next = min(next, renderer.schedule.endSample)
        }
        return next
    }

    private var scheduleSwitchSample: Int64 {
        let barlines = renderer.schedule.barlines
        return pendingScheduleBarline < barlines.count ? barlines[pendingScheduleBarline] : renderer.schedule.endSample
    }

    /// Everything due exactly at the current position, in a fixed order:
    /// the loop wrap, the end of the count-in, a punch, a new schedule, the
    /// end of the song.
    private mutating func handleEventsAtPosition() {
        // Stopped (a take ended, or the song), a schedule waiting for its barline takes over now.
        if pendingSchedule != nil, transport.state == .stopped { switchSchedule() }
        var position = renderer.position
        if let loop = renderer.loop, position == loop.upperBound, transport.state != .stopped {
            switch motion.loopEnd() {
            case .stop(let action):
                // The last pass asked for: stop on the loop's end instead of wrapping.
                perform(action)
                return
            case .wrap:
                // The renderer wraps on its next sample; say so now.
                renderer.seek(to: loop.lowerBound)
                emit(.looped(from: position, to: loop.lowerBound))
                position = loop.lowerBound
                // A new schedule waiting for a barline the loop never reaches again: the loop's start is the next one.
                if pendingSchedule != nil, scheduleSwitchSample >= loop.upperBound || scheduleSwitchSample < loop.lowerBound {
                    pendingScheduleBarline = renderer.schedule.barlines.partitionIndex { $0 >= position }
                }
            }
        }
        if let action = motion.musicStarts(at: position) {
            renderer.partsSilent = false
            renderer.clickGain = metronomeGain
            renderer.seek(to: position)  // picks up a note sounding across the start
            perform(action)
            if transport.state == .playing { emit(.playing(at: position)) }
        }
        while let action = motion.punchStep(at: position) { perform(action) }
        if pendingSchedule != nil, position == scheduleSwitchSample {
            if motion.isTakingATake {
                // A take is sung to one tempo and key: the new ones wait for the first barline after it.
                pendingScheduleBarline += 1
            } else {
                switchSchedule()
                position = renderer.position
            }
        }
        if renderer.loop == nil, position >= renderer.schedule.endSample {
            perform(motion.reachedEnd())
        }
    }

    private mutating func switchSchedule() {
        guard let new = pendingSchedule else { return }
        pendingSchedule = nil
        let old = renderer.position
        let index = pendingScheduleBarline
        let mapped = index < new.barlines.count ? new.barlines[index] : new.endSample
        // Events still ahead sit on barlines or beats: they keep their place in the music.
        let playing = renderer.schedule
        motion.carry { Self.carry($0, from: playing, to: new) }
        retire(.schedule(renderer.replaceSchedule(new)))
        for part in pendingTakes.indices {
            if let takes = pendingTakes[part].take() { retire(.takes(renderer.replaceTakes(part: part, takes))) }
        }
        renderer.seek(to: transport.state == .stopped ? 0 : mapped)
        applyLoop()
        if transport.state == .stopped { renderer.seek(to: transport.returnPoint) }
        emit(.scheduleChanged(old: old, new: renderer.position))
    }

    /// A sample on a barline or a click of `old`, on the same barline or
    /// click of `new` (the song's end to the song's end).
    static func carry(_ sample: Int64, from old: Schedule, to new: Schedule) -> Int64 {
        let bar = old.barlines.partitionIndex { $0 >= sample }
        if bar < old.barlines.count, old.barlines[bar] == sample, bar < new.barlines.count { return new.barlines[bar] }
        let click = old.clicks.partitionIndex { $0.sample >= sample }
        if click < old.clicks.count, old.clicks[click].sample == sample, click < new.clicks.count { return new.clicks[click].sample }
        return sample == old.endSample ? new.endSample : sample
    }

    /// Carries out a transport action on the renderer.
    private mutating func perform(_ action: Transport.Action) {
        switch action {
        case .none:
            break
        case .beginCountIn(let from, let music):
            renderer.seek(to: from)
            renderer.partsSilent = true
            renderer.clickGain = max(metronomeGain, Self.countInClickGain)
            emit(.countIn(from: from, music: music))
        case .beginPlayback(let at):
            renderer.seek(to: at)
            emit(.playing(at: at))
        case .beginRecording(let at):
            if renderer.position != at { renderer.seek(to: at) }
            emit(.recordingStarted(at: at))
        case .endRecording(let at):
            emit(.recordingStopped(at: at))
        case .stop(let returnTo, let finishTake):
            let at = renderer.position
            if finishTake { emit(.recordingStopped(at: at)) }
            renderer.seek(to: returnTo)  // releases the sounding notes; their tails ring out
            renderer.partsSilent = false
            renderer.clickGain = metronomeGain
            emit(.stopped(at: at, returnTo: returnTo, finishedTake: finishTake))
        case .setLoop(let range):
            renderer.setLoop(range)
        }
    }

    private mutating func apply(_ command: consuming EngineCommand) {
        switch command {
        case .play:
            perform(motion.play(countIn: countInSamples()))
        case .stop:
            perform(motion.stop())
        case .record(let quantize):
            perform(motion.record(at: renderer.position, countIn: countInSamples(), quantizedAt: quantizedSample(quantize)))
        case .punch(let measures, let preroll):
            let schedule = renderer.schedule
            guard transport.state == .stopped else { return refuse(.notWhileRecording) }
            guard let range = schedule.loopRange(measures: measures), let start = schedule.punchStart(measures: measures, prerollMeasures: preroll) else {
                return refuse(.loopOutsideSong(measures))
            }
            perform(motion.punch(from: start, in: range.lowerBound, out: range.upperBound))
            if transport.returnPoint == range.lowerBound { handleEventsAtPosition() }
        case .stopAfterPasses(let passes):
            motion.stopAfterPasses(passes)
        case .loop(let measures):
            if let measures, renderer.schedule.loopRange(measures: measures) == nil {
                return refuse(.loopOutsideSong(measures))
            }
            loopMeasures = measures
            applyLoop()
        case .locate(let measure):
            guard let barline = renderer.schedule.barline(ofMeasure: measure) else {
                return refuse(.noSuchMeasure(measure))
            }
            switch transport.state {
            case .recording, .countIn:
                return refuse(.notWhileRecording)
            case .stopped:
                // The new return point, until play.
                renderer.seek(to: barline)
                motion.setReturnPoint(renderer.position)
            case .playing:
                renderer.seek(to: barline)
            }
        case .mix(let part, let mix):
            guard part >= 0 && part < mixes.count else { return refuse(.noSuchPart(part)) }
            mixes[part] = mix
            applyMixes()
        case .solo(let part, let on):
            guard part >= 0 && part < solos.count else { return refuse(.noSuchPart(part)) }
            solos[part] = on
            applyMixes()
        case .reference(let frequency, let samples):
            renderer.playReference(frequency: frequency, samples: samples)
        case .tone(let key, let frequency, let level, let samples):
            renderer.playTone(key: key, frequency: frequency, level: level, samples: samples)
        case .releaseTones(let keys):
            renderer.releaseTones(keys: keys)
        case .metronome(let gain):
            metronomeGain = max(0, gain)
            if motion.musicStart == nil { renderer.clickGain = metronomeGain }
        case .schedule(let schedule):
            guard schedule.tones.count == mixes.count else {
                retire(.schedule(schedule))
                return refuse(.scheduleForOtherParts)
            }
            if motion.isTakingATake {
                retire(.schedule(schedule))
                return refuse(.notWhileRecording)
            }
            if let waiting = pendingSchedule { retire(.schedule(waiting)) }
            let position = renderer.position
            pendingScheduleBarline = renderer.schedule.barlines.partitionIndex { $0 >= position }
            pendingSchedule = schedule
            if transport.state == .stopped { switchSchedule() }
        case .takes(let part, let takes):
            guard part >= 0 && part < mixes.count else {
                retire(.takes(takes))
                return refuse(.noSuchPart(part))
            }
            if pendingSchedule != nil {
                // Made for the schedule waiting for its barline: heard from there.
                if let waiting = pendingTakes[part].take() { retire(.takes(waiting)) }
                pendingTakes[part] = takes
                return
            }
            retire(.takes(renderer.replaceTakes(part: part, takes)))
        }
    }

    /// The loop's samples from its measures in the current schedule; the
    /// transport's return point follows.
    private mutating func applyLoop() {
        let range = loopMeasures.flatMap { renderer.schedule.loopRange(measures: $0) }
        perform(motion.setLoop(range))
        if transport.state == .stopped { renderer.seek(to: transport.returnPoint) }
    }

    /// The count-in's length for a start at the transport's return
    /// point: the measures before it at the song's own tempo, or the
    /// schedule's count-in before the song when there are too few.
    private func countInSamples() -> Int64 {
        let schedule = renderer.schedule
        let measures = schedule.options.countInMeasures
        guard measures > 0 else { return 0 }
        let start = transport.returnPoint
        let index = schedule.barlines.partitionIndex { $0 >= start }
        let from = index >= measures ? schedule.barlines[index - measures] : schedule.startSample
        return start - from
    }

    /// The sample a command quantized to `quantize` takes effect on: the
    /// current position, or the next click or barline at or after it.
    private func quantizedSample(_ quantize: Quantize) -> Int64 {
        let position = renderer.position
        let schedule = renderer.schedule
        switch quantize {
        case .immediate:
            return position
        case .beat:
            let index = schedule.clicks.partitionIndex { $0.sample >= position }
            return index < schedule.clicks.count ? schedule.clicks[index].sample : schedule.endSample
        case .bar:
            let index = schedule.barlines.partitionIndex { $0 >= position }
            return index < schedule.barlines.count ? schedule.barlines[index] : schedule.endSample
        }
    }

    /// Effective gains from volume, mute and solo.
    private mutating func applyMixes() {
        let anySolo = solos.contains(true)
        for part in 0..<mixes.count {
            var mix = mixes[part]
            if anySolo && !solos[part] { mix.muted = true }
            if mix.muted { mix.gain = 0 }
            renderer.setMix(part: part, mix)
        }
    }

    private mutating func refuse(_ reason: EngineRefusal) {
        refusedCommands += 1
        emit(.refused(reason))
    }

    private func emit(_ event: EngineEvent) {
        _ = link.events.push(event)
    }

    private mutating func retire(_ value: consuming EngineLink.Retired) {
        if !link.retired.push(value) { refusedCommands += 1 }
    }

    private func publish() {
        let schedule = renderer.schedule
        let position = renderer.position
        let barIndex = schedule.barlines.partitionIndex { $0 > position } - 1
        let measure = schedule.firstMeasureNumber + barIndex
        let barStart = barIndex >= 0 ? schedule.barlines[barIndex] : Int64.min
        let clicksSoFar = schedule.clicks.partitionIndex { $0.sample > position }
        let clicksBefore = schedule.clicks.partitionIndex { $0.sample >= barStart }
        link.board.publish(
            position: position, state: transport.state, measure: measure, beat: max(1, clicksSoFar - clicksBefore), looping: renderer.loop != nil,
            outputPeak: outputPeak, refusedCommands: refusedCommands + link.commandsRefused, commandsApplied: commandsApplied, commandsAppliedAt: commandsAppliedAt,
            deviceGaps: deviceGaps
        ) { part in (renderer.currentMIDI(part: part), renderer.peaks[part]) }
    }
}

/// The lock-free links between the render loop and the rest of the box:
/// commands in, events and retired values out, snapshots published.
///
/// Each ring has one producer and one consumer: commands are sent by one
/// control thread (the controller that merges MIDI, foot switch and
/// console), events and retired values are taken by one thread too.
public final class EngineLink: Sendable {
    /// Values the render loop has replaced, handed back so that it never
    /// frees memory itself; `collectRetired` frees them.
    public enum Retired: Sendable {
        /// A replaced schedule.
        case schedule(Schedule)
        /// Replaced takes.
        case takes(PartTakes)
    }

    let commands: CommandRing<EngineCommand>
    let events: CommandRing<EngineEvent>
    let retired: CommandRing<Retired>
    /// The snapshot board.
    public let board: SnapshotBoard
    private let refused = Atomic<Int64>(0)
    private let sent = Atomic<Int64>(0)

    init(partCount: Int, capacity: Int) {
        commands = CommandRing(capacity: capacity)
        events = CommandRing(capacity: 4 * capacity)
        retired = CommandRing(capacity: capacity)
        board = SnapshotBoard(partCount: partCount)
        // Swift instantiates generic type metadata lazily, with a malloc, on
        // first use: use every ring once here so the render thread never does.
        _ = commands.push(.stop)
        _ = commands.pop()
        _ = events.push(.looped(from: 0, to: 0))
        _ = events.pop()
        _ = retired.push(.takes(.none))
        _ = retired.pop()
    }

    /// Queues a command for the next period; false (and counted) when the
    /// queue is full. The one control thread only.
    @discardableResult
    public func send(_ command: EngineCommand) -> Bool {
        if commands.push(command) {
            sent.add(1, ordering: .relaxed)
            return true
        }
        refused.add(1, ordering: .relaxed)
        return false
    }

    /// Commands queued so far (compare with the snapshot's `commandsApplied`).
    public var commandsSent: Int64 { sent.load(ordering: .relaxed) }

    /// The oldest event not yet taken, or nil.
    public func nextEvent() -> EngineEvent? { events.pop() }

    /// Frees what the render loop replaced. Call it from a control thread now and then.
    public func collectRetired() {
        while retired.pop() != nil {}
    }

    /// The latest snapshot.
    public func snapshot() -> EngineSnapshot { board.read() }

    var commandsRefused: Int64 { refused.load(ordering: .relaxed) }
}

/// Why the control side refused a change.
public struct EngineControlError: Error, CustomStringConvertible, Equatable {
    /// One line.
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

/// The control thread's half of the engine: turns the singer's requests
/// into commands, compiling new schedules here (off the render thread) and
/// refusing what cannot be done. A tempo or key change under takes is the
/// caller's to follow with the takes made for it (`Project.activeTakes`
/// stretches them): sent after the schedule, they are heard from the
/// barline where it starts.
public final class EngineControl {
    /// The links to the render loop.
    public let link: EngineLink
    /// The song.
    public let score: Score
    /// The options the current schedule was compiled with.
    public private(set) var options: ScheduleOptions
    /// The last schedule compiled here (nil before the first change).
    public private(set) var schedule: Schedule?

    /// Control for an engine built from `score` with `options`.
    public init(link: EngineLink, score: Score, options: ScheduleOptions) {
        self.link = link
        self.score = score
        self.options = options
    }

    /// Sends a command; false when the render loop's queue is full. A
    /// move (a locate, a punch's pre-roll, a loop's start) is announced to
    /// the streamed takes' cue first, so their blocks there are read before
    /// the render thread makes it.
    @discardableResult
    public func send(_ command: EngineCommand) -> Bool {
        if let cue, let schedule = schedule ?? initialSchedule {
            switch command {
            case .locate(let measure):
                if let barline = schedule.barline(ofMeasure: measure) { cue.announce(barline) }
            case .punch(let measures, let preroll):
                if let start = schedule.punchStart(measures: measures, prerollMeasures: preroll) { cue.announce(start) }
            case .loop(let measures?):
                // While stopped the loop's start becomes where play and record begin.
                if let range = schedule.loopRange(measures: measures) { cue.announce(range.lowerBound) }
            default:
                break
            }
        }
        return link.send(command)
    }

    /// The cue of the engine's streamed takes, and the schedule it started
    /// with (for announcing moves; see `send`).
    public var cue: StreamCue?
    public var initialSchedule: Schedule?

    /// Plays at `scale` × the written tempo from the next barline (the
    /// takes sent after it, stretched for it, from the same barline).
    public func setTempo(_ scale: Rational) throws(EngineControlError) {
        guard scale.numerator > 0 else { throw EngineControlError(description: "tempo: the multiplier must be above 0") }
        try recompile { $0.tempoScale = scale }
    }

    /// Transposes the guide tones from the next barline (and the takes sent after it).
    public func setTranspose(_ semitones: Int) throws(EngineControlError) {
        guard (-24...24).contains(semitones) else { throw EngineControlError(description: "transpose: \(semitones) semitones is outside −24…+24") }
        try recompile { $0.transpose = semitones }
    }

    /// Count-in measures before play and record (0: none); takes effect
    /// at the next start.
    public func setCountIn(_ measures: Int) throws(EngineControlError) {
        guard (0...4).contains(measures) else { throw EngineControlError(description: "count-in: \(measures) measures is outside 0…4") }
        try recompile { $0.countInMeasures = measures }
    }

    private func recompile(_ change: (inout ScheduleOptions) -> Void) throws(EngineControlError) {
        var new = options
        change(&new)
        let schedule: Schedule
        do { schedule = try Schedule(score: score, options: new) } catch {
            throw EngineControlError(description: error.description)
        }
        guard link.send(.schedule(schedule)) else { throw EngineControlError(description: "the engine is busy; try again") }
        options = new
        self.schedule = schedule
    }

    /// Sets the tempo, count-in and transposition together (any may be
    /// unchanged; nil: the transposition as it is); returns the schedule now in force.
    public func retime(tempoScale: Rational, countIn: Int, transpose: Int? = nil) throws(EngineControlError) -> Schedule {
        // One schedule for all three (a second send refused would leave the first in force, half done).
        guard tempoScale.numerator > 0 else { throw EngineControlError(description: "tempo: the multiplier must be above 0") }
        guard (0...4).contains(countIn) else { throw EngineControlError(description: "count-in: \(countIn) measures is outside 0…4") }
        if let transpose, !(-24...24).contains(transpose) { throw EngineControlError(description: "transpose: \(transpose) semitones is outside −24…+24") }
        if tempoScale != options.tempoScale || countIn != options.countInMeasures || (transpose.map { $0 != options.transpose } ?? false) {
            try recompile { new in
                new.tempoScale = tempoScale
                new.countInMeasures = countIn
                if let transpose { new.transpose = transpose }
            }
        }
        if let schedule { return schedule }
        do { return try Schedule(score: score, options: options) } catch { throw EngineControlError(description: error.description) }
    }
}

extension EngineCommand: Equatable {
    /// Commands compare by what they ask; a schedule or takes payload never
    /// compares equal (nothing needs to compare them).
    public static func == (lhs: EngineCommand, rhs: EngineCommand) -> Bool {
        switch (lhs, rhs) {
        case (.play, .play), (.stop, .stop): return true
        case (.record(let a), .record(let b)): return a == b
        case (.loop(let a), .loop(let b)): return a == b
        case (.locate(let a), .locate(let b)): return a == b
        case (.metronome(let a), .metronome(let b)): return a == b
        case (.solo(let a, let b), .solo(let c, let d)): return a == c && b == d
        case (.mix(let a, let b), .mix(let c, let d)): return a == c && b == d
        case (.punch(let a, let b), .punch(let c, let d)): return a == c && b == d
        case (.stopAfterPasses(let a), .stopAfterPasses(let b)): return a == b
        case (.reference(let a, let b), .reference(let c, let d)): return a == c && b == d
        case (.tone(let a, let b, let c, let d), .tone(let e, let f, let g, let h)): return a == e && b == f && c == g && d == h
        case (.releaseTones(let a), .releaseTones(let b)): return a == b
        default: return false
        }
    }
}

/// A move (a locate, play, a punch's pre-roll) waiting until the streamed
/// takes where it lands are read: the command, its song sample, and how
/// long it has waited (frames).
struct HeldMove {
    var command: EngineCommand
    let target: Int64
    var waited: Int64 = 0
}
