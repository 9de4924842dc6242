#if canImport(Glibc)
import Glibc
#endif

/// Keeps the box's audio running across a lost device (a USB interface
/// unplugged): when the device goes away the loop reports it, tries to
/// open it again every `retryInterval`, and carries on with the new one —
/// without restarting the program. Device frames keep counting up across
/// the gap (by the time spent away), so the engine sees one long xrun.
public final class DeviceSupervisor {
    /// What happened to the device.
    public enum Event: Equatable, Sendable {
        /// The device went away (the message says how).
        case lost(String)
        /// It is back, reopened.
        case reopened(String)
    }

    let open: () throws(DeviceError) -> any AudioDevice
    let retryFrames: Int

    /// A supervisor opening devices with `open`, retrying every
    /// `retryMilliseconds`.
    public init(retryMilliseconds: Int = 1_000, open: @escaping () throws(DeviceError) -> any AudioDevice) {
        self.open = open
        retryFrames = retryMilliseconds
    }

    /// Runs periods until `keepRunning` says no. The first open must
    /// succeed (a wrong device name is an error); later losses are reported
    /// through `onEvent` and survived.
    public func run(keepRunning: () -> Bool, period: (PeriodBuffers) -> Void, onEvent: (Event) -> Void) throws(DeviceError) {
        var device = try open()
        var offset: Int64 = 0
        while keepRunning() {
            var last: Int64 = 0
            var rate = device.sampleRate
            do {
                try device.run(keepRunning: keepRunning) { buffers in
                    last = buffers.deviceFrame + Int64(buffers.frames)
                    rate = device.sampleRate
                    var moved = buffers
                    moved.deviceFrame += offset
                    period(moved)
                }
                return
            } catch where error.kind == .lost {
                onEvent(.lost(error.description))
            }
            offset += last
            // Wait for it to come back.
            while keepRunning() {
                var pause = timespec(tv_sec: retryFrames / 1_000, tv_nsec: (retryFrames % 1_000) * 1_000_000)
                nanosleep(&pause, nil)
                offset += Int64(rate) * Int64(retryFrames) / 1_000
                do {
                    device = try open()
                    onEvent(.reopened(device.name))
                    break
                } catch {
                    continue
                }
            }
        }
    }
}
