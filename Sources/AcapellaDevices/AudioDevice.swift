public import AcapellaEngine

#if canImport(Glibc)
import Glibc
#endif

/// A device problem, said in one line.
public struct DeviceError: Error, CustomStringConvertible, Equatable {
    /// What kind of problem.
    public enum Kind: Sendable, Equatable {
        /// The device went away (USB unplug, injected loss).
        case lost
        /// The device cannot be used as asked.
        case configuration
    }

    /// What kind.
    public var kind: Kind
    /// What happened.
    public var description: String

    /// An error.
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// One period of a duplex device: what was captured, and where to render.
public struct PeriodBuffers {
    /// The microphone, mono, `frames` samples (a card with several inputs:
    /// their average).
    public let input: UnsafePointer<Float>
    /// Playback left, to fill.
    public let left: UnsafeMutablePointer<Float>
    /// Playback right, to fill.
    public let right: UnsafeMutablePointer<Float>
    /// Frames in the period.
    public let frames: Int
    /// The device's frame counter at the period's first frame: capture and
    /// playback share it (linked streams). A jump since the last period is
    /// an xrun.
    public var deviceFrame: Int64
    /// A sound source in the room that the microphone hears with the
    /// playback (the simulated room's singer), zeroed; nil on real devices.
    public let roomVoice: UnsafeMutablePointer<Float>?
    /// `CLOCK_MONOTONIC` when the period's capture was handed over. For
    /// diagnostics only (how long an input took to reach the engine); never
    /// used for timing, which is the device's frame count alone.
    public var hostNanoseconds: Int64 = 0
    /// How capture lines up with playback since the device's last
    /// (re)start: linked streams by construction, unlinked ones as measured
    /// from their trigger timestamps (or unknown).
    public var alignment: StreamAlignment = .linked
    /// Every input on its own, `inputCount × frames` samples, input after
    /// input (input c at `inputs + c × frames`): the parts recorded at
    /// once, a microphone each. Nil: only `input`.
    public var inputs: UnsafePointer<Float>? = nil
    /// How many inputs `inputs` holds.
    public var inputCount = 1
    /// With `roomVoice`: how many singers the room has, voice c at
    /// `roomVoice + c × frames` (singer c stands at microphone c).
    public var roomVoiceCount = 1
}

/// The kernel's monotonic clock, the one GPIO edge timestamps use.
public enum MonotonicClock {
    /// Now, nanoseconds. The corresponding C function is `clock_gettime`.
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}

/// Linked capture and playback on one frame clock, period by period: the
/// ALSA device and the simulated room implement it.
public protocol AudioDevice: AnyObject {
    /// Samples per second.
    var sampleRate: Int { get }
    /// Frames per period.
    var periodFrames: Int { get }
    /// Output-to-input round trip in frames (the device's reported delay
    /// plus the calibration trim): a sound played at device frame `p` is
    /// captured at frame `p + roundTripFrames`.
    var roundTripFrames: Double { get }
    /// A name for messages ("simulated room (317.4-frame round trip)").
    var name: String { get }
    /// What the device itself reports for the round trip, frames.
    var reportedRoundTripFrames: Double { get }
    /// The calibration's correction for this route (0 until calibrated):
    /// `roundTripFrames` is `reportedRoundTripFrames` plus this.
    var calibrationTrimFrames: Double { get set }
    /// The route calibrations are stored under (card, device, rate,
    /// period, buffer).
    var route: String { get }
    /// The inputs the device captures, each its own channel (1: a mono
    /// interface; a quartet's interface has 4 or more).
    var inputCount: Int { get }
    /// The most inputs this device could be opened with (a recording set
    /// chosen later, on the page, may use as many): a card's capture
    /// channels, a room's microphones.
    var mostInputs: Int { get }

    /// Runs the period loop on the calling thread (the render thread) until
    /// `keepRunning` says no. `period` is called once per period and must
    /// be render-thread safe. Throws when the device is lost.
    func run(keepRunning: () -> Bool, period: (PeriodBuffers) -> Void) throws(DeviceError)
}
