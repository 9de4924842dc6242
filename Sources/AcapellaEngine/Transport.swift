/// The transport: what the box is doing, as a value type whose methods
/// return the action the render loop must take (STYLE.md habit 6: state
/// machines return actions). No threads, no clocks: positions are song
/// samples handed in by the caller, so every transition is testable alone.
public struct Transport: Hashable, Sendable {
    /// What the box is doing.
    public enum State: Hashable, Sendable {
        /// Silent; the position waits at `returnPoint`.
        case stopped
        /// Clicking the count-in before the music starts (then plays, or
        /// records when `recordAfterCountIn`).
        case countIn
        /// Playing.
        case playing
        /// Playing and capturing the singer.
        case recording
    }

    /// What the render loop does in response.
    public enum Action: Hashable, Sendable {
        /// Nothing to do (the command does not apply in this state).
        case none
        /// Seek to `from` (count-in start) and render; the music begins at `music`.
        case beginCountIn(from: Int64, music: Int64)
        /// Render from `at`.
        case beginPlayback(at: Int64)
        /// Start writing captured audio at `at` (the capture itself never stops).
        case beginRecording(at: Int64)
        /// Stop writing captured audio at `at`; keep rendering.
        case endRecording(at: Int64)
        /// Stop rendering and seek to `returnTo`; `finishTake` when a take
        /// was being written.
        case stop(returnTo: Int64, finishTake: Bool)
        /// Loop on or off.
        case setLoop(Range<Int64>?)
    }

    /// The current state.
    public private(set) var state = State.stopped
    /// Where play starts and stop returns to (song start, loop start, or
    /// where the singer located to while stopped).
    public var returnPoint: Int64 = 0
    /// The loop, when looping.
    public private(set) var loop: Range<Int64>?
    /// Whether the count-in leads into recording rather than playing.
    public private(set) var recordAfterCountIn = false
    /// Length of the count-in in samples (0: none).
    public var countInSamples: Int64

    /// A stopped transport.
    public init(countInSamples: Int64 = 0) {
        self.countInSamples = countInSamples
    }

    /// Play (or resume) from the return point, through the count-in when
    /// there is one.
    public mutating func play() -> Action {
        guard state == .stopped else { return .none }
        return start(recording: false)
    }

    /// The record button: from stopped, count in and record; while playing,
    /// punch in; while recording, punch out.
    public mutating func record(at position: Int64) -> Action {
        switch state {
        case .stopped:
            return start(recording: true)
        case .countIn:
            recordAfterCountIn.toggle()
            return .none
        case .playing:
            state = .recording
            return .beginRecording(at: position)
        case .recording:
            state = .playing
            return .endRecording(at: position)
        }
    }

    private mutating func start(recording: Bool) -> Action {
        recordAfterCountIn = recording
        if countInSamples > 0 {
            state = .countIn
            return .beginCountIn(from: returnPoint - countInSamples, music: returnPoint)
        }
        state = recording ? .recording : .playing
        return recording ? .beginRecording(at: returnPoint) : .beginPlayback(at: returnPoint)
    }

    /// The render loop reached the end of the count-in.
    public mutating func countInFinished(at position: Int64) -> Action {
        guard state == .countIn else { return .none }
        state = recordAfterCountIn ? .recording : .playing
        return recordAfterCountIn ? .beginRecording(at: position) : .none
    }

    /// Stop: back to the start (or the loop's start); a take in progress is
    /// finished, never dropped.
    public mutating func stop() -> Action {
        guard state != .stopped else { return .none }
        let finishTake = state == .recording || (state == .countIn && recordAfterCountIn)
        state = .stopped
        recordAfterCountIn = false
        return .stop(returnTo: returnPoint, finishTake: finishTake)
    }

    /// The render loop reached the end of the song (a loop wraps before).
    public mutating func reachedEnd() -> Action {
        loop == nil ? stop() : .none
    }

    /// Loop over `range` (nil: loop off). Play and stop then start from the
    /// loop's start.
    public mutating func setLoop(_ range: Range<Int64>?, songStart: Int64 = 0) -> Action {
        loop = range
        returnPoint = range?.lowerBound ?? songStart
        return .setLoop(range)
    }
}
