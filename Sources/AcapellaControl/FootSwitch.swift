/// What a foot switch's gestures are bound to, and its timing.
public struct GestureSettings: Hashable, Sendable {
    /// Edges closer than this to the last accepted one are contact bounce.
    public var debounceNanoseconds: Int64 = 30_000_000
    /// Held at least this long: a hold.
    public var holdNanoseconds: Int64 = 600_000_000
    /// A second press within this of the first release: a double tap.
    public var doubleTapNanoseconds: Int64 = 350_000_000
    /// The actions (nil: unbound).
    public var tap: ControlAction?
    public var hold: ControlAction?
    public var doubleTap: ControlAction?

    /// Default timing (30 ms debounce, 600 ms hold, 350 ms double tap), no actions.
    public init(tap: ControlAction? = nil, hold: ControlAction? = nil, doubleTap: ControlAction? = nil) {
        self.tap = tap
        self.hold = hold
        self.doubleTap = doubleTap
    }
}

/// Turns a switch's timestamped edges into gestures: tap, hold, double
/// tap. A value type whose methods return the actions to take (STYLE.md
/// habit 6), driven by kernel event timestamps and by `advance(to:)` for
/// the passing of time (a hold, the end of a double-tap window), so every
/// boundary is testable to the nanosecond without threads or clocks.
///
/// Debounce: an edge is accepted when it comes at least
/// `debounceNanoseconds` after the last accepted one; when the lockout
/// ends on a level other than the accepted one (the bounce settled the
/// other way), that level is accepted then. A tap fires on the press
/// itself when neither a double tap nor a hold is bound (nothing to wait
/// for); otherwise on release, or when the double-tap window closes.
public struct GestureRecognizer: Sendable {
    /// The settings.
    public var settings: GestureSettings
    var rawPressed = false
    var pressed = false
    var lockedUntil: Int64 = .min
    var pressedAt: Int64 = 0
    var holdFired = false
    var pendingTapUntil: Int64?

    /// A recognizer, switch released.
    public init(settings: GestureSettings) {
        self.settings = settings
    }

    /// An edge at `time` (ns, kernel clock): the line is now `pressed`.
    public mutating func edge(pressed level: Bool, at time: Int64) -> [ControlAction] {
        var actions = advance(to: time)
        rawPressed = level
        if time >= lockedUntil && level != pressed { actions += accept(level, at: time) }
        return actions
    }

    /// Time has passed to `time` with no edge: settles a bounce, fires a
    /// hold or a tap whose double-tap window closed.
    public mutating func advance(to time: Int64) -> [ControlAction] {
        var actions: [ControlAction] = []
        if rawPressed != pressed && lockedUntil <= time { actions += accept(rawPressed, at: lockedUntil) }
        if pressed && !holdFired, settings.hold != nil, time - pressedAt >= settings.holdNanoseconds {
            holdFired = true
            pendingTapUntil = nil
            actions.append(settings.hold!)
        }
        if let until = pendingTapUntil, time >= until, !pressed {
            pendingTapUntil = nil
            if let tap = settings.tap { actions.append(tap) }
        }
        return actions
    }

    /// The next time something may happen without an edge (for the
    /// caller's wait timeout), or nil.
    public var nextDeadline: Int64? {
        var deadline: Int64?
        if rawPressed != pressed { deadline = lockedUntil }
        if pressed && !holdFired && settings.hold != nil { deadline = min(deadline ?? .max, pressedAt + settings.holdNanoseconds) }
        if let until = pendingTapUntil { deadline = min(deadline ?? .max, until) }
        return deadline
    }

    private mutating func accept(_ level: Bool, at time: Int64) -> [ControlAction] {
        pressed = level
        lockedUntil = time + settings.debounceNanoseconds
        var actions: [ControlAction] = []
        if level {
            pressedAt = time
            holdFired = false
            if let until = pendingTapUntil, time < until {
                // The second press inside the window.
                pendingTapUntil = nil
                if let double = settings.doubleTap { actions.append(double) }
                holdFired = true  // this press is spent
                return actions
            }
            if settings.doubleTap == nil && settings.hold == nil, let tap = settings.tap {
                actions.append(tap)
                holdFired = true
            }
        } else if !holdFired {
            // Released before a hold: a tap, now or once no second press comes.
            if settings.doubleTap != nil {
                pendingTapUntil = time + settings.doubleTapNanoseconds
            } else if let tap = settings.tap {
                actions.append(tap)
            }
        }
        return actions
    }
}
