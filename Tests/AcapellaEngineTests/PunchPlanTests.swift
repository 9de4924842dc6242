import AcapellaEngine
import Testing

/// The engine's punch as one value, step by step, without threads: every
/// row of `PunchPlan`'s table, the steps that fall on one sample, the
/// record toggle pressed again or in a range's pre-roll, and where the
/// next step is due.
@Suite struct PunchPlanTests {
    /// Steps due at `position`, all of them.
    static func steps(_ plan: inout PunchPlan, at position: Int64) -> [PunchPlan.Step] {
        var steps: [PunchPlan.Step] = []
        while let step = plan.step(at: position) { steps.append(step) }
        return steps
    }

    @Test func aRangePunchGoesInOutAndStops() {
        var plan = PunchPlan()
        #expect(!plan.isArmed && plan.next(after: 0) == nil && Self.steps(&plan, at: 0).isEmpty)
        plan.punch(in: 1_000, out: 5_000, stop: 6_000)
        #expect(plan.isArmed && plan.next(after: 0) == 1_000)
        #expect(Self.steps(&plan, at: 999).isEmpty)
        #expect(Self.steps(&plan, at: 1_000) == [.record])
        #expect(!plan.isArmed && plan.range == .recording(punchOut: 5_000, stop: 6_000) && plan.next(after: 1_000) == 5_000)
        #expect(Self.steps(&plan, at: 5_000) == [.punchOut])
        #expect(plan.next(after: 5_000) == 6_000)
        #expect(Self.steps(&plan, at: 6_000) == [.stop])
        #expect(plan == PunchPlan())
    }

    @Test func withoutPostRollTheOutAndTheStopFallOnOneSample() {
        var plan = PunchPlan()
        plan.punch(in: 10, out: 20, stop: 20)
        #expect(Self.steps(&plan, at: 10) == [.record])
        #expect(Self.steps(&plan, at: 20) == [.punchOut, .stop])
    }

    @Test func theRecordToggleIsQuantizedAndCancelledByASecondPress() {
        var plan = PunchPlan()
        plan.toggleRecord(at: 480)
        #expect(plan.isArmed && plan.toggle == 480 && plan.next(after: 0) == 480)
        plan.toggleRecord(at: 960)
        #expect(plan == PunchPlan(), "pressed again before it happened: cancelled")
        plan.toggleRecord(at: 960)
        #expect(Self.steps(&plan, at: 960) == [.record] && plan == PunchPlan())
    }

    @Test func theToggleInARangesPreRollCancelsItsPunchInNotItsStop() {
        var plan = PunchPlan()
        plan.punch(in: 1_000, out: 5_000, stop: 6_000)
        plan.toggleRecord(at: 500)
        #expect(!plan.isArmed && plan.range == .stopping(stop: 6_000) && plan.toggle == nil)
        #expect(Self.steps(&plan, at: 1_000).isEmpty && Self.steps(&plan, at: 6_000) == [.stop])
    }

    @Test func punchingOutByHandInsideARangeStillStopsAtItsEnd() {
        var plan = PunchPlan()
        plan.punch(in: 1_000, out: 5_000, stop: 6_000)
        _ = Self.steps(&plan, at: 1_000)
        plan.toggleRecord(at: 3_000)
        #expect(plan.next(after: 1_000) == 3_000)
        #expect(Self.steps(&plan, at: 3_000) == [.record])
        #expect(Self.steps(&plan, at: 5_000) == [.punchOut] && Self.steps(&plan, at: 6_000) == [.stop])
    }

    @Test func aTempoChangeCarriesThePunchInOnly() {
        var plan = PunchPlan()
        plan.punch(in: 1_000, out: 5_000, stop: 6_000)
        #expect(plan.punchIn == 1_000)
        plan.movePunchIn(to: 2_000)
        #expect(plan.range == .armed(punchIn: 2_000, punchOut: 5_000, stop: 6_000))
        _ = Self.steps(&plan, at: 2_000)
        #expect(plan.punchIn == nil)
        var toggle = PunchPlan()
        toggle.toggleRecord(at: 300)
        toggle.movePunchIn(to: 307)
        #expect(toggle.toggle == 307 && toggle.punchIn == 307)
    }
}
