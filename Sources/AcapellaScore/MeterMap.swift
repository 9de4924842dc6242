/// Measure numbers ↔ ticks through the meter map.
///
/// Measure 1 is the first full measure; a pickup is measure 0 and occupies
/// ticks `0..<pickupTicks`. Built from a validated meter list (first entry at
/// measure 1, increasing measures, valid meters).
public struct MeterMap: Hashable, Sendable {
    struct Segment: Hashable, Sendable {
        var firstMeasure: Int
        var startTick: Int
        var meter: Meter
    }

    let segments: [Segment]
    /// Length of measure 0, or 0 when there is no pickup.
    public let pickupTicks: Int

    /// Builds the map. Precondition: `meters` passed validation.
    public init(meters: [MeterChange], pickupTicks: Int) {
        precondition(!meters.isEmpty && meters.allSatisfy(\.meter.isValid), "meter map must be validated first")
        self.pickupTicks = pickupTicks
        var segments: [Segment] = []
        var tick = pickupTicks
        var measure = 1
        for change in meters {
            if let last = segments.last {
                tick += (change.measure - measure) * last.meter.measureTicks
            }
            measure = change.measure
            segments.append(Segment(firstMeasure: change.measure, startTick: tick, meter: change.meter))
        }
        self.segments = segments
    }

    private func segmentIndex(forMeasure measure: Int) -> Int {
        segments.lastIndex(keyAtMost: measure) { $0.firstMeasure }
    }

    private func segmentIndex(forTick tick: Int) -> Int {
        segments.lastIndex(keyAtMost: tick) { $0.startTick }
    }

    /// The meter in force in a measure (measure 0 and earlier use the first).
    public func meter(atMeasure measure: Int) -> Meter {
        segments[segmentIndex(forMeasure: measure)].meter
    }

    /// The tick where a measure begins. Measure 0 is the pickup (tick 0);
    /// earlier measures extend the first meter backwards (count-in).
    public func startTick(ofMeasure measure: Int) -> Int {
        if measure == 0 && pickupTicks > 0 { return 0 }
        let segment = segments[segmentIndex(forMeasure: measure)]
        return segment.startTick + (measure - segment.firstMeasure) * segment.meter.measureTicks
    }

    /// The measure containing a tick, and the tick's offset inside it.
    public func position(ofTick tick: Int) -> (measure: Int, offset: Int) {
        if pickupTicks > 0 && (0..<pickupTicks).contains(tick) { return (0, tick) }
        let segment = segments[segmentIndex(forTick: tick)]
        let measureTicks = segment.meter.measureTicks
        let delta = tick - segment.startTick
        // Floor division so ticks before measure 1 fall in measures ≤ 0.
        let measures = delta >= 0 ? delta / measureTicks : -((-delta + measureTicks - 1) / measureTicks)
        return (segment.firstMeasure + measures, delta - measures * measureTicks)
    }

    /// The measure containing a tick.
    public func measure(containing tick: Int) -> Int { position(ofTick: tick).measure }

    /// Whether a tick falls exactly on a barline (the start of a measure).
    public func isBarline(_ tick: Int) -> Bool {
        (pickupTicks > 0 && tick == 0) || position(ofTick: tick).offset == 0
    }
}
