/// The needle's reading: the centre of the pitch a singer holds, the way a
/// tuner and the take analysis hear it, from the raw readings the live
/// detector makes every hop (about 94 a second).
///
/// A singer's vibrato swings the raw reading ±30–100 cents five to seven
/// times a second around a centre that stays put. The centre here is the
/// mean over the latest whole vibrato cycle — from one peak (or trough) of
/// the swing to the next, found with a few cents' hysteresis — which
/// cancels the swing whatever its rate and depth; before a whole cycle has
/// been heard, the midpoint of the last peak and trough; without any swing
/// (a straight tone), the mean of the last ~300 ms. It changes only when a
/// new extremum is found, so it holds still between them. A new note — a
/// jump between two readings, or a reading further from the centre than
/// the swing reaches — starts afresh; so does silence (a reading without
/// pitch), after a few hops' grace for a single dropout.
///
/// A value type fed one reading at a time (fractional MIDI, nil: no
/// pitch): no threads, no clock; the tests feed it directly.
public struct PitchCentre: Sendable {
    /// A step between consecutive readings that means a new note, cents.
    public static let jumpCents = 50.0
    /// How far the reading must turn back before a peak or trough counts, cents.
    public static let turnCents = 6.0
    /// How far beyond the swing's reach a reading means a new note, cents.
    public static let departureCents = 50.0
    /// The plain mean's span without a swing, readings (~300 ms).
    public static let plainReadings = 28
    /// Readings without pitch forgiven inside a note.
    public static let graceReadings = 3
    /// Readings kept (the longest cycle it can average: ~1 s, a 1 Hz swing).
    static let capacity = 96

    /// The segment's readings, cents, oldest first (at most `capacity`).
    private var values: [Double] = []
    /// The count of readings in the segment (values holds the last ones).
    private var count = 0
    /// The last three extrema: (reading number in the segment, +1 peak / −1 trough).
    private var extrema: [(index: Int, kind: Int)] = []
    private var last: Double?
    private var silent = 0
    /// The reading number where a swing last stopped: turns are looked for
    /// after it (the stopped swing's own are not turns again).
    private var swingStopped = 0
    /// The centre shown, cents, and how far the swing reaches from it.
    private var centre: Double?
    private var reach = 0.0

    public init() {
        values.reserveCapacity(Self.capacity)
        extrema.reserveCapacity(4)
    }

    /// The centre now (fractional MIDI), nil: nobody sings.
    public var current: Double? { centre.map { $0 / 100 } }

    /// Adds a reading (fractional MIDI, nil: no pitch); returns the centre.
    @discardableResult
    public mutating func add(_ midi: Double?) -> Double? {
        guard let midi, midi.isFinite else {
            silent += 1
            if silent > Self.graceReadings { restart(); centre = nil }
            return current
        }
        silent = 0
        let cents = midi * 100
        if let last, abs(cents - last) > Self.jumpCents { restart() }
        else if let centre, abs(cents - centre) > reach + Self.departureCents { restart() }
        last = cents
        if values.count == Self.capacity { values.removeFirst() }
        values.append(cents)
        count += 1
        findTurn()
        estimate()
        return current
    }

    private mutating func restart() {
        values.removeAll(keepingCapacity: true)
        extrema.removeAll(keepingCapacity: true)
        count = 0
        swingStopped = 0
        last = nil
        centre = nil
        reach = 0
    }

    /// The value of reading number `index` of the segment, nil when no longer kept.
    private func value(_ index: Int) -> Double? {
        let position = index - (count - values.count)
        return position >= 0 && position < values.count ? values[position] : nil
    }

    /// A new peak or trough since the last: the extreme reading since then,
    /// once the newest has turned back from it by `turnCents`.
    private mutating func findTurn() {
        let lastKind = extrema.last?.kind ?? 0
        let from = max(extrema.last?.index ?? swingStopped, count - values.count)
        let newest = count - 1
        func extreme(_ kind: Int) -> Int? {
            var best = from
            for index in from...newest where Double(kind) * (value(index)! - value(best)!) > 0 { best = index }
            guard best < newest, Double(kind) * (value(best)! - value(newest)!) > Self.turnCents else { return nil }
            // The first extremum of a segment must not be its first reading (an entry, not a turn).
            return lastKind != 0 || best > from ? best : nil
        }
        if lastKind >= 0, let trough = extreme(-1) { remember((trough, -1)) }
        else if lastKind <= 0, let peak = extreme(1) { remember((peak, 1)) }
    }

    private mutating func remember(_ turn: (index: Int, kind: Int)) {
        if extrema.count == 3 { extrema.removeFirst() }
        extrema.append(turn)
    }

    /// Where the extremum at reading `index` lies between readings: the
    /// vertex of the parabola through it and its two neighbours.
    private func place(_ index: Int) -> Double {
        guard let before = value(index - 1), let at = value(index), let after = value(index + 1) else { return Double(index) }
        let curve = before - 2 * at + after
        guard curve != 0 else { return Double(index) }
        return Double(index) + max(-0.5, min(0.5, 0.5 * (before - after) / curve))
    }

    /// The area under the readings joined by straight lines from `from` to `to` (reading numbers).
    private func area(_ from: Double, _ to: Double) -> Double {
        var total = 0.0
        var index = Int(from.rounded(.down))
        while Double(index) < to {
            let low = max(from, Double(index)), high = min(to, Double(index + 1))
            if high > low, let a = value(index) {
                let b = value(index + 1) ?? a
                func at(_ x: Double) -> Double { a + (b - a) * (x - Double(index)) }
                total += (at(low) + at(high)) / 2 * (high - low)
            }
            index += 1
        }
        return total
    }

    private mutating func estimate() {
        // A swing that has stopped (no turn for half as long again as its
        // last half cycle, or a plain span when only one turn was heard):
        // the voice drifts or holds now; a centre kept from the swing
        // would stand still while the singer moves (a real singer's drift
        // of 80 cents left the needle 40 cents off the note's centre).
        if let turn = extrema.last {
            let halfCycle = extrema.count >= 2 ? turn.index - extrema[extrema.count - 2].index : Self.plainReadings / 2
            if count - 1 - turn.index > halfCycle * 3 / 2 {
                extrema.removeAll(keepingCapacity: true)
                swingStopped = count - 1
            }
        }
        if extrema.count == 3, value(extrema[0].index) != nil {
            // A whole cycle: from the extremum before last of this kind to
            // the last, each placed between readings (a parabola through it
            // and its neighbours), the readings joined by straight lines —
            // so a cycle that is not a whole number of readings long still
            // averages out.
            let from = place(extrema[0].index), to = place(extrema[2].index)
            centre = area(from, to) / (to - from)
            var low = Double.infinity, high = -Double.infinity
            for index in extrema[0].index...extrema[2].index {
                low = min(low, value(index)!)
                high = max(high, value(index)!)
            }
            reach = (high - low) / 2
        } else if extrema.count >= 2, let a = value(extrema[extrema.count - 2].index), let b = value(extrema[extrema.count - 1].index) {
            centre = (a + b) / 2
            reach = abs(a - b) / 2
        } else {
            let recent = values.suffix(Self.plainReadings)
            centre = recent.reduce(0, +) / Double(recent.count)
            reach = max(10, ((recent.max() ?? 0) - (recent.min() ?? 0)) / 2)
        }
    }
}
