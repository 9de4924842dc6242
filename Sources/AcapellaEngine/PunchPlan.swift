/// What the engine's transport waits for besides the song itself, as one
/// value, so that no impossible combination can be held (a punch-out with
/// nothing punched in, "armed" with nothing to punch): the record toggle
/// quantized to a coming sample, or a measure-range punch through its
/// steps — armed in its pre-roll, recording, then playing its post-roll
/// until it stops. Part of the engine's `Motion`. Render-thread safe (no
/// allocation); tested without threads (`PunchPlanTests`).
///
/// The steps, written down (state, at this sample → step, next state):
///
/// | state | at | step | next |
/// |---|---|---|---|
/// | `toggle` at `t` | `t` | `.record` (in, or out) | no toggle |
/// | `range` `.armed(in, out, stop)` | `in` | `.record` (in) | `.recording(out, stop)` |
/// | `range` `.recording(out, stop)` | `out` | `.punchOut` (out, when recording) | `.stopping(stop)` |
/// | `range` `.stopping(stop)` | `stop` | `.stop` | `.none` |
///
/// The record toggle pressed again before its sample cancels it; pressed
/// in a range's pre-roll it cancels the punch-in (the range still stops at
/// its end). A stop clears the plan.
public struct PunchPlan: Hashable, Sendable {
    /// The record toggle, quantized: it happens at this sample (nil: none).
    public private(set) var toggle: Int64?
    /// A measure-range punch, step by step.
    public private(set) var range = RangePunch.none

    /// A measure-range punch's progress.
    public enum RangePunch: Hashable, Sendable {
        case none
        /// In its pre-roll: in at `punchIn`, out at `punchOut`, the
        /// transport stopped at `stop` (after the post-roll).
        case armed(punchIn: Int64, punchOut: Int64, stop: Int64)
        /// Punched in.
        case recording(punchOut: Int64, stop: Int64)
        /// Punched out (or its punch-in cancelled): stopping at `stop`.
        case stopping(stop: Int64)
    }

    /// What the transport does at a step.
    public enum Step: Hashable, Sendable {
        /// The record toggle (a punch in, or out).
        case record
        /// A range's punch-out: the record toggle if still recording.
        case punchOut
        /// A range's end: the transport stops.
        case stop
    }

    public init() {}

    /// A measure-range punch from its pre-roll.
    public mutating func punch(in punchIn: Int64, out punchOut: Int64, stop: Int64) {
        range = .armed(punchIn: punchIn, punchOut: punchOut, stop: stop)
    }

    /// The step due at `position`, if any; the plan moves on. Call until
    /// nil: several steps may fall on one sample (a punch-out and the stop
    /// with no post-roll).
    public mutating func step(at position: Int64) -> Step? {
        if let at = toggle, at == position {
            toggle = nil
            return .record
        }
        switch range {
        case .none: return nil
        case .armed(let punchIn, let punchOut, let stop):
            guard punchIn == position else { return nil }
            range = .recording(punchOut: punchOut, stop: stop)
            return .record
        case .recording(let punchOut, let stop):
            guard punchOut == position else { return nil }
            range = .stopping(stop: stop)
            return .punchOut
        case .stopping(let stop):
            guard stop == position else { return nil }
            range = .none
            return .stop
        }
    }

    /// The next sample after `position` where a step is due (nil: none).
    public func next(after position: Int64) -> Int64? {
        let toggled = Self.after(position, toggle)
        switch range {
        case .none:
            return toggled
        case .armed(let punchIn, let punchOut, let stop):
            return Self.earliest(Self.earliest(toggled, Self.after(position, punchIn)), Self.earliest(Self.after(position, punchOut), Self.after(position, stop)))
        case .recording(let punchOut, let stop):
            return Self.earliest(toggled, Self.earliest(Self.after(position, punchOut), Self.after(position, stop)))
        case .stopping(let stop):
            return Self.earliest(toggled, Self.after(position, stop))
        }
    }

    /// `sample` when it is after `position`.
    static func after(_ position: Int64, _ sample: Int64?) -> Int64? {
        guard let sample, sample > position else { return nil }
        return sample
    }

    /// The earlier of two samples (either may be missing).
    static func earliest(_ a: Int64?, _ b: Int64?) -> Int64? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    /// Waiting to punch in (the take's frames until then are armed).
    public var isArmed: Bool {
        if toggle != nil { return true }
        if case .armed = range { return true }
        return false
    }

    /// The record toggle pressed while playing or recording: cancels a
    /// toggle or a range's punch-in not yet made, else quantized to `at`.
    public mutating func toggleRecord(at sample: Int64) {
        if toggle != nil {
            toggle = nil  // pressed again before it happened: cancelled
        } else if case .armed(_, _, let stop) = range {
            range = .stopping(stop: stop)
        } else {
            toggle = sample
        }
    }

    /// The sample the punch-in waits for (the toggle's, or an armed range's), if any.
    public var punchIn: Int64? {
        if let toggle { return toggle }
        if case .armed(let punchIn, _, _) = range { return punchIn }
        return nil
    }

    /// The punch-in moved to `sample` (a tempo change at a barline carries
    /// it to another schedule: the punch keeps its place in the music).
    public mutating func movePunchIn(to sample: Int64) {
        if toggle != nil {
            toggle = sample
        } else if case .armed(_, let punchOut, let stop) = range {
            range = .armed(punchIn: sample, punchOut: punchOut, stop: stop)
        }
    }
}
