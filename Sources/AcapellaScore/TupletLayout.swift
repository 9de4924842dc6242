/// How a tuplet group's written values become ticks.
///
/// A group of `actual` notes in the time of `normal` scales every written
/// length by normal/actual. Individual notes need not come out whole (7:4
/// sixteenths are 137 1/7 ticks), so each note *boundary* is placed at the
/// floor of its exact position: the group's total is exact, no note is off by
/// more than one tick, and every consumer computes the same ticks.
public enum TupletLayout {
    /// Durations in ticks of the notes of one group, or `nil` when the group
    /// as a whole does not last a whole number of ticks.
    public static func durations(writtenTicks: [Int], actual: Int, normal: Int) -> [Int]? {
        precondition(actual > 0 && normal > 0, "tuplet ratio terms must be positive")
        let total = writtenTicks.reduce(0, +)
        guard (total * normal) % actual == 0 else { return nil }
        var durations: [Int] = []
        durations.reserveCapacity(writtenTicks.count)
        var writtenSoFar = 0
        var previousBoundary = 0
        for written in writtenTicks {
            writtenSoFar += written
            let boundary = writtenSoFar * normal / actual
            durations.append(boundary - previousBoundary)
            previousBoundary = boundary
        }
        return durations
    }
}
