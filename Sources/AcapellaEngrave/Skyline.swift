/// The outline of what is drawn, one column a staff space wide: the
/// highest ink (least y) and the lowest (greatest y) in each. Staves are
/// stacked by their outlines, as engravers do, rather than by their
/// extremes: a high note with a fermata over one measure pushes the staff
/// down only if it would meet the words above it there.
struct Skyline {
    var top: [Int: Double] = [:]
    var bottom: [Int: Double] = [:]

    mutating func add(minX: Double, maxX: Double, minY: Double, maxY: Double) {
        guard minX.isFinite, maxX.isFinite, minY.isFinite, maxY.isFinite, maxX >= minX, maxX - minX < 100_000 else { return }
        for column in Int(minX.rounded(.down))...Int(maxX.rounded(.down)) {
            top[column] = Swift.min(top[column] ?? .infinity, minY)
            bottom[column] = Swift.max(bottom[column] ?? -.infinity, maxY)
        }
    }

    /// The same outline moved down by `dy`.
    func offset(_ dy: Double) -> Skyline {
        Skyline(top: top.mapValues { $0 + dy }, bottom: bottom.mapValues { $0 + dy })
    }

    mutating func merge(_ other: Skyline) {
        for (column, y) in other.top { top[column] = Swift.min(top[column] ?? .infinity, y) }
        for (column, y) in other.bottom { bottom[column] = Swift.max(bottom[column] ?? -.infinity, y) }
    }

    /// How far down from 0 a staff whose outline is `lower` (its own y,
    /// its staff's top line at 0) must start so its ink keeps `clearance`
    /// below this outline's bottom in every column both have.
    func distance(above lower: Skyline, clearance: Double) -> Double {
        var needed = -Double.infinity
        for (column, bottomY) in bottom {
            guard let topY = lower.top[column] else { continue }
            needed = Swift.max(needed, bottomY + clearance - topY)
        }
        return needed
    }
}
