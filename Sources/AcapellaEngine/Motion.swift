/// The engine's motion as one state machine: the transport (`Transport`:
/// stopped, counting in, playing, recording), the punch it waits for
/// (`PunchPlan`), the post-roll a punch-out keeps writing, where a
/// count-in hands over to the music, the loop passes left before a loop
/// recording stops, and a move held until the streamed takes where it
/// lands are read. One value, changed only through the transitions below,
/// so no impossible combination can be held (a post-roll or a punch
/// surviving a stop, a count-in's hand-over while stopped). It decides;
/// `EngineCore` carries out what it returns on the renderer. No threads,
/// no clocks, no allocation: positions are song samples handed in, and
/// every transition is tested alone (`MotionTests`).
///
/// Its phase is always exactly one of (`phase(at:)`):
///
/// | phase | holds |
/// |---|---|
/// | `stopped` | silent at the return point |
/// | `waitingForLocate(target)` | stopped; play, record or a punch's pre-roll held until the takes at `target` are read |
/// | `countingIn(music, thenRecording)` | clicking the count-in; the music (or the take) starts at `music` |
/// | `rolling` | playing |
/// | `waitingForBlocks(target)` | playing on; a locate held until the takes at `target` are read |
/// | `punching(.armed(punchIn))` | playing; a punch-in (the record toggle on its quantized sample, or a range's) waits; the take's frames are armed |
/// | `recording` | the take is being written |
/// | `punching(.postRoll(until))` | punched out; the take keeps being written until `until` (its crossfade) |
///
/// The transitions, written down as Ardour's `transport_fsm` does
/// (phase, event → action, next phase):
///
/// | from | event | action | to |
/// |---|---|---|---|
/// | stopped | play (streams not ready) | hold the move | waitingForLocate |
/// | waitingForLocate | takes read (or 1 s) | the move applied | as the move says |
/// | stopped | play / record, count-in set | `beginCountIn` | countingIn |
/// | stopped | play / record, no count-in | `beginPlayback` / `beginRecording` | rolling / recording |
/// | stopped | punch(range) | `beginPlayback` at its pre-roll | punching(.armed) |
/// | countingIn | record | the take after it toggled | countingIn |
/// | countingIn | music starts | `beginRecording` or none | recording / rolling |
/// | rolling | record | the toggle quantized | punching(.armed) |
/// | punching(.armed) | its sample | `beginRecording` | recording |
/// | punching(.armed) | record again | cancelled (a range still stops at its end) | rolling |
/// | recording | record, or a range's punch-out | `endRecording` | punching(.postRoll) |
/// | punching(.postRoll) | its end | — | rolling |
/// | rolling / recording | a range's end | `stop` | stopped |
/// | rolling | locate (streams not ready) | hold the move | waitingForBlocks |
/// | waitingForBlocks | takes read (or 1 s) | the locate applied | rolling |
/// | any moving | loop end, passes left ≤ 1 | `stop` | stopped |
/// | any moving | loop end | the wrap (a pass counted) | as before |
/// | rolling / recording | song end, no loop | `stop` | stopped |
/// | any | stop | `stop` (a take is finished, never dropped); punch, post-roll and count-in cleared | stopped |
public struct Motion: Sendable {
    /// What the engine is doing (see the table above).
    public enum Phase: Hashable, Sendable {
        case stopped
        case waitingForLocate(target: Int64)
        case countingIn(music: Int64, thenRecording: Bool)
        case rolling
        case waitingForBlocks(target: Int64)
        case punching(Punching)
        case recording
    }

    /// A punch in progress while playing.
    public enum Punching: Hashable, Sendable {
        /// Waiting to punch in at `punchIn` (the take's frames are armed).
        case armed(punchIn: Int64)
        /// Punched out; the take is written until `until`.
        case postRoll(until: Int64)
    }

    /// What happens at a loop's end.
    public enum LoopEnd: Hashable, Sendable {
        /// The last pass asked for: stop there.
        case stop(Transport.Action)
        /// Back to the loop's start.
        case wrap
    }

    /// The transport.
    public private(set) var transport = Transport()
    /// The punch waited for (the record toggle, a measure range).
    public private(set) var punch = PunchPlan()
    /// After a punch-out the take keeps being written until this song sample.
    public private(set) var postRollEnd: Int64?
    /// The sample where the count-in hands over to the music.
    public private(set) var musicStart: Int64?
    /// Passes left before the loop's end stops the transport.
    public private(set) var passesLeft: Int?
    /// A move waiting until the streamed takes where it lands are read.
    private(set) var held: HeldMove?
    /// How long a punch-out's post-roll is.
    let postRollSamples: Int64

    /// Stopped at song start.
    public init(postRollSamples: Int64) {
        self.postRollSamples = postRollSamples
    }

    /// The phase at `position` (a post-roll ends at its sample).
    public func phase(at position: Int64) -> Phase {
        if let held { return transport.state == .stopped ? .waitingForLocate(target: held.target) : .waitingForBlocks(target: held.target) }
        switch transport.state {
        case .stopped: return .stopped
        case .countIn: return .countingIn(music: musicStart ?? transport.returnPoint, thenRecording: transport.recordAfterCountIn)
        case .recording: return .recording
        case .playing:
            if let punchIn = punch.punchIn { return .punching(.armed(punchIn: punchIn)) }
            if let end = postRollEnd, position < end { return .punching(.postRoll(until: end)) }
            return .rolling
        }
    }

    /// What a captured frame at `position` counts as for a take.
    func markKind(at position: Int64) -> FrameMark.Kind {
        switch transport.state {
        case .stopped: return .none
        case .recording: return .recording
        case .countIn: return transport.recordAfterCountIn ? .armed : .playing
        case .playing:
            if punch.isArmed { return .armed }
            if let end = postRollEnd, position < end { return .armed }
            return .playing
        }
    }

    /// Whether a take is being written or will be after the count-in (the
    /// song may not move under it).
    var isTakingATake: Bool {
        transport.state == .recording || (transport.state == .countIn && transport.recordAfterCountIn)
    }

    /// The next sample after `position` where the motion itself has
    /// something due (a punch step, a post-roll's end, the music after the
    /// count-in), if any.
    func nextEvent(after position: Int64) -> Int64? {
        var next = punch.next(after: position)
        if let end = postRollEnd, end > position { next = PunchPlan.earliest(next, end) }
        if let music = musicStart, music > position { next = PunchPlan.earliest(next, music) }
        return next
    }

    /// Where the streamed takes are wanted next: the held move's target,
    /// else where the count-in hands over.
    var nextStreamPlace: Int64? { held?.target ?? musicStart }

    // MARK: Commands

    /// Play from the return point, counting in `countIn` samples.
    mutating func play(countIn: Int64) -> Transport.Action {
        guard transport.state == .stopped else { return .none }
        transport.countInSamples = countIn
        return absorb(transport.play())
    }

    /// Stop; a take in progress is finished.
    mutating func stop() -> Transport.Action {
        absorb(transport.stop())
    }

    /// The record button: from stopped (or in the count-in) at once,
    /// counting in `countIn` samples; while rolling, the punch toggled on
    /// `quantizedAt`.
    mutating func record(at position: Int64, countIn: Int64, quantizedAt: Int64) -> Transport.Action {
        guard transport.state == .stopped || transport.state == .countIn else {
            punch.toggleRecord(at: quantizedAt)
            return .none
        }
        transport.countInSamples = countIn
        return absorb(transport.record(at: position))
    }

    /// A measure-range punch from `start` (its pre-roll): in at `punchIn`,
    /// out at `punchOut`, stopping after the post-roll. Only while stopped.
    mutating func punch(from start: Int64, in punchIn: Int64, out punchOut: Int64) -> Transport.Action {
        guard transport.state == .stopped else { return .none }
        transport.returnPoint = start
        transport.countInSamples = 0
        punch.punch(in: punchIn, out: punchOut, stop: punchOut + postRollSamples)
        return absorb(transport.play())
    }

    /// Stop at the loop's end after `passes` more passes (nil: never).
    mutating func stopAfterPasses(_ passes: Int?) {
        passesLeft = passes.map { max(1, $0) }
    }

    /// Where play starts while stopped (a locate).
    mutating func setReturnPoint(_ sample: Int64) {
        transport.returnPoint = sample
    }

    /// The loop (nil: off); play and stop then start from its start.
    mutating func setLoop(_ range: Range<Int64>?) -> Transport.Action {
        absorb(transport.setLoop(range))
    }

    // MARK: What is due at a sample

    /// The loop's end reached while moving.
    mutating func loopEnd() -> LoopEnd {
        if let left = passesLeft, left <= 1 {
            passesLeft = nil
            return .stop(stop())
        }
        if let left = passesLeft { passesLeft = left - 1 }
        return .wrap
    }

    /// The count-in hands over at `position`, when it is its sample: what
    /// the transport does then.
    mutating func musicStarts(at position: Int64) -> Transport.Action? {
        guard let music = musicStart, music == position else { return nil }
        musicStart = nil
        return absorb(transport.countInFinished(at: position))
    }

    /// The punch's next step due at `position` (call until nil).
    mutating func punchStep(at position: Int64) -> Transport.Action? {
        while let step = punch.step(at: position) {
            switch step {
            case .record: return absorb(transport.record(at: position))
            case .punchOut: if transport.state == .recording { return absorb(transport.record(at: position)) }
            case .stop: return absorb(transport.stop())
            }
        }
        return nil
    }

    /// The song's end reached with no loop.
    mutating func reachedEnd() -> Transport.Action {
        guard transport.state == .playing || transport.state == .recording else { return .none }
        return absorb(transport.reachedEnd())
    }

    /// A new schedule: what waits on the music keeps its place in it.
    mutating func carry(_ map: (Int64) -> Int64) {
        if let music = musicStart { musicStart = map(music) }
        if let punchIn = punch.punchIn { punch.movePunchIn(to: map(punchIn)) }
    }

    // MARK: Moves held for streamed takes

    /// Where `command` would start reading takes, from where the motion
    /// is: a locate while playing, a punch's pre-roll, play or record from
    /// the return point. Nil for everything else.
    func streamTarget(of command: EngineCommand, in schedule: Schedule) -> Int64? {
        switch command {
        case .locate(let measure):
            return transport.state == .playing ? schedule.barline(ofMeasure: measure) : nil
        case .punch(let measures, let preroll):
            return transport.state == .stopped ? schedule.punchStart(measures: measures, prerollMeasures: preroll) : nil
        case .play, .record:
            return transport.state == .stopped ? transport.returnPoint : nil
        default:
            return nil
        }
    }

    /// Holds `command` until the takes at `target` are read.
    mutating func hold(_ command: EngineCommand, target: Int64) {
        held = HeldMove(command: command, target: target)
    }

    /// The held move, let go once `ready()` (its takes are read) or after
    /// `limit` frames of waiting; else it waits `frames` more.
    mutating func releaseHeld(limit: Int64, frames: Int64, ready: (Int64) -> Bool) -> HeldMove? {
        guard let move = held else { return nil }
        if move.waited >= limit || ready(move.target) {
            held = nil
            return move
        }
        held?.waited += frames
        return nil
    }

    /// Whether a move is held.
    var isHolding: Bool { held != nil }

    /// What a transport action changes besides the transport.
    private mutating func absorb(_ action: Transport.Action) -> Transport.Action {
        switch action {
        case .beginCountIn(_, let music):
            musicStart = music
        case .endRecording(let at):
            postRollEnd = at + postRollSamples
        case .stop:
            musicStart = nil
            punch = PunchPlan()
            postRollEnd = nil
        case .none, .beginPlayback, .beginRecording, .setLoop:
            break
        }
        return action
    }
}
