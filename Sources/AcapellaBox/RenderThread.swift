import AcapellaDevices
import AcapellaEngine
import Foundation
import Synchronization

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
    private let failureText = Mutex<String?>(nil)
    private let events = Mutex<[DeviceSupervisor.Event]>([])
    private let done = DispatchSemaphore(value: 0)
    private let finished = Atomic<Bool>(false)

    /// Starts `engine` on `device`.
    init(device: DeviceBox, reopen: (@Sendable () throws(DeviceError) -> any AudioDevice)?, engine: EngineBox, singer: SyntheticSinger?) {
        let thread = Thread { [self] in
            let period: (PeriodBuffers) -> Void = { buffers in
                engine.core.process(input: buffers.input, left: buffers.left, right: buffers.right, frames: buffers.frames, deviceFrame: buffers.deviceFrame,
                                    hostNanoseconds: buffers.hostNanoseconds)
                guard let singer, let voice = buffers.roomVoice else { return }
                for index in 0..<buffers.frames {
                    guard let mark = engine.core.outputMark(frame: buffers.deviceFrame + Int64(index)) else { continue }
                    if mark.kind == .playing || mark.kind == .armed || mark.kind == .recording {
                        voice[index] = singer.sample(atSong: mark.songSample)
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
