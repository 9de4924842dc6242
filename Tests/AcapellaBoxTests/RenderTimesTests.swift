@testable import AcapellaBox
import Testing

/// The render thread's timing table and its summary line.
@Suite struct RenderTimesTests {
    @Test func quantilesAndPeriodsOverTheirTime() {
        let times = RenderTimes()
        #expect(times.summary(sampleRate: 48_000) == nil)
        for index in 0..<1_000 { times.record(Int64(10_000 + index % 10 * 1_000), frames: 128) }  // 10–19 µs (each reported as its bucket's upper bound)
        times.record(3_000_000, frames: 128)  // one 3 ms period: over a 2667 µs period
        #expect(times.summary(sampleRate: 48_000)
            == "render: 1001 periods, median 16 µs, p99.9 20 µs = 0.8 % of a 2667 µs period, worst 3001 µs; 1 over the period")
    }

    /// A period longer than the table (the VM's 1024 frames: 21.3 ms) is
    /// summarized, not trapped on.
    @Test func longPeriods() {
        let times = RenderTimes()
        times.record(25_000_000, frames: 1_024)
        times.record(40_000, frames: 1_024)
        #expect(times.summary(sampleRate: 48_000)
            == "render: 2 periods, median 41 µs, p99.9 20000 µs = 93.8 % of a 21333 µs period, worst 20000 µs; 1 over the period")
    }
}
