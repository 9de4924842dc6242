import AcapellaDevices
import AcapellaEngine
import Foundation
import Synchronization
import AcapellaLock

/// The render thread: the device's period loop running the engine, and in
/// the simulated room the singer singing the part at the song sample each
/// output frame played. With `reopen`, a `DeviceSupervisor` carries the
/// loop across a lost device (reopened when it returns; the engine sees one
/// long xrun); without, the loss ends the loop. `@unchecked Sendable`: the
/// engine and device are touched only by that thread until `stop` returns;
/// the rest is atomic or behind a mutex (taken between device runs, never
/// inside a period).
final class RenderThread: @unchecked Sendable {
    private let keepRunning = Atomic<Bool>(true)
    private let failureText = VisibleLock<String?>(nil)
    private let events = VisibleLock<[DeviceSupervisor.Event]>([])
    private let done = DispatchSemaphore(value: 0)
    private let finished = Atomic<Bool>(false)
    /// How long each period's render took (diagnostics; read after `stop`).
    let times = RenderTimes()

    /// Starts `engine` on `device`.
    init(device: DeviceBox, reopen: (@Sendable () throws(DeviceError) -> any AudioDevice)?, engine: EngineBox, singers: [SyntheticSinger?]) {
        let thread = Thread { [self] in
            let times = self.times
            let period: (PeriodBuffers) -> Void = { buffers in
                let start = MonotonicClock.nanoseconds()
                engine.core.process(input: buffers.input, left: buffers.left, right: buffers.right, frames: buffers.frames, deviceFrame: buffers.deviceFrame,
                                    alignment: buffers.alignment, hostNanoseconds: buffers.hostNanoseconds, inputs: buffers.inputs, inputCount: buffers.inputCount)
                times.record(MonotonicClock.nanoseconds() - start, frames: buffers.frames)
                guard let voice = buffers.roomVoice else { return }
                // Singer c at microphone c.
                for (place, singer) in singers.prefix(buffers.roomVoiceCount).enumerated() {
                    guard let singer else { continue }
                    for index in 0..<buffers.frames {
                        guard let mark = engine.core.outputMark(frame: buffers.deviceFrame + Int64(index)) else { continue }
                        if mark.kind == .playing || mark.kind == .armed || mark.kind == .recording {
                            voice[place * buffers.frames + index] = singer.sample(atSong: mark.songSample)
                        }
                    }
                }
            }
            do throws(DeviceError) {
                if let reopen {
                    var first: (any AudioDevice)? = device.device
                    let supervisor = DeviceSupervisor { () throws(DeviceError) -> any AudioDevice in
                        if let given = first {
                            first = nil
                            return given
                        }
                        return try reopen()
                    }
                    try supervisor.run(keepRunning: { keepRunning.load(ordering: .relaxed) }, period: period) { event in
                        events.withLock { $0.append(event) }
                    }
                } else {
                    try device.device.run(keepRunning: { keepRunning.load(ordering: .relaxed) }, period: period)
                }
            } catch {
                failureText.withLock { $0 = error.description }
            }
            finished.store(true, ordering: .releasing)
            done.signal()
        }
        thread.name = "acapella-render"
        thread.start()
    }

    /// Whether the device loop has ended (a lost device, or `stop`).
    var hasEnded: Bool { finished.load(ordering: .acquiring) }

    /// Why it ended early, if it did.
    var failure: String? { failureText.withLock { $0 } }

    /// The supervisor's reports since the last call.
    func takeEvents() -> [DeviceSupervisor.Event] {
        events.withLock { taken in
            defer { taken.removeAll() }
            return taken
        }
    }

    /// Waits up to `milliseconds` for the loop to end; true when it has.
    func wait(milliseconds: Int) -> Bool {
        if hasEnded { return true }
        if done.wait(timeout: .now() + .milliseconds(milliseconds)) == .success {
            done.signal()
            return true
        }
        return false
    }

    /// Ends the loop and waits for it.
    func stop() {
        keepRunning.store(false, ordering: .relaxed)
        done.wait()
        done.signal()
    }
}

/// The render times of a session's periods, in microsecond buckets: written
/// by the render thread only (no allocation, no lock: two clock reads and an
/// increment a period), read once the thread has ended. `@unchecked
/// Sendable` for that hand-over, which `RenderThread.stop` orders.
final class RenderTimes: @unchecked Sendable {
    /// Buckets of 1 µs up to 20 ms; the last holds everything longer.
    static let bucketCount = 20_000
    private let buckets = UnsafeMutablePointer<UInt32>.allocate(capacity: RenderTimes.bucketCount)
    private var periodFrames = 0
    private var periods = 0

    init() { buckets.initialize(repeating: 0, count: Self.bucketCount) }

    deinit { buckets.deallocate() }

    /// One period's render (render thread).
    func record(_ nanoseconds: Int64, frames: Int) {
        buckets[min(Self.bucketCount - 1, max(0, Int(nanoseconds / 1_000)))] &+= 1
        periodFrames = frames
        periods &+= 1
    }

    /// Each figure the upper bound of its 1 µs bucket: "render: 9000
    /// periods, median 41 µs, p99.9 180 µs = 6.8 % of a
    /// period, worst 420 µs; 0 over the period" (after the thread ended).
    func summary(sampleRate: Int) -> String? {
        guard periods > 0, periodFrames > 0 else { return nil }
        let budget = Double(periodFrames) * 1e6 / Double(sampleRate)
        func quantile(_ q: Double) -> Int {
            let wanted = max(1, Int((Double(periods) * q).rounded(.up)))
            var seen = 0
            for bucket in 0..<Self.bucketCount {
                seen += Int(buckets[bucket])
                if seen >= wanted { return bucket + 1 }
            }
            return Self.bucketCount
        }
        // Periods longer than the table (1024 frames at 48 kHz: 21 ms) count
        // from its last bucket.
        var over = 0
        for bucket in min(Int(budget), Self.bucketCount - 1)..<Self.bucketCount { over += Int(buckets[bucket]) }
        let p999 = quantile(0.999)
        return String(format: "render: %d periods, median %d µs, p99.9 %d µs = %.1f %% of a %.0f µs period, worst %d µs; %d over the period",
                      periods, quantile(0.5), p999, Double(p999) / budget * 100, budget, quantile(1), over)
    }
}
