public import AcapellaControl
public import AcapellaDevices
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The control thread's inputs in one place: MIDI through the sequencer,
/// foot switches on GPIO lines, each through its decoder or gesture
/// recognizer, giving actions. A missing sequencer or GPIO chip is a
/// warning, never a failure: the box runs on without them.
public final class ControlHub {
    /// Why an input is missing (one line each).
    public private(set) var warnings: [String] = []
    /// What is connected, for the console.
    public private(set) var inputs: [String] = []
    let midi: MIDIInput?
    var decoder = MIDIDecoder()
    var interpreter: MIDIInterpreter
    var switches: [(device: GPIOSwitch, gestures: GestureRecognizer)] = []
    private var reportedConnections = 0
    private var keys: [StampedKey] = []
    private var locates: [Int] = []
    private var faders: [(fader: MIDIFader, value: Int)] = []
    private var reportedWarnings = 0

    /// Opens what the configuration names.
    public init(config: ControlConfig) {
        interpreter = config.midi
        do {
            let input = try MIDIInput(sources: config.midiSources)
            midi = input
            inputs += input.connected.map { "MIDI \($0.description)" }
            reportedConnections = input.connected.count
        } catch {
            midi = nil
            warnings.append(error.description)
        }
        for footSwitch in config.footSwitches {
            do {
                let device = try GPIOSwitch(chip: footSwitch.chip, line: footSwitch.line, activeLow: footSwitch.activeLow, bias: footSwitch.bias)
                switches.append((device, GestureRecognizer(settings: footSwitch.gestures)))
                inputs.append("foot switch on \(device.description)")
            } catch {
                warnings.append(error.description)
            }
        }
    }

    /// Everything to wait on: the sequencer's descriptors and each foot
    /// switch's line (one `poll` with the console and the wake descriptor).
    public var descriptors: [PollDescriptor] {
        (midi?.pollDescriptors ?? []) + switches.map { PollDescriptor(fd: $0.device.fileDescriptor) }
    }

    /// An action and when its input happened (the kernel's timestamp of a
    /// GPIO edge, or when a MIDI event was read), monotonic nanoseconds.
    public struct StampedAction: Hashable, Sendable {
        public var action: ControlAction
        public var nanoseconds: Int64
        /// Its place among everything the hub read (actions and keys alike).
        public var order = 0
    }

    /// A keyboard's key pressed (`velocity` 1…127) or released (0), and
    /// when it was read, monotonic nanoseconds.
    public struct StampedKey: Hashable, Sendable {
        public var note: Int
        public var velocity: Int
        public var nanoseconds: Int64
        /// Its place among everything the hub read (actions and keys alike).
        public var order = 0
    }

    /// What was read, in the order it arrived: actions and keys read in
    /// one go (a loop that fell behind) keep their order — a line's last
    /// key released before the stop that writes the line.
    public enum Arrival: Hashable, Sendable {
        case action(StampedAction)
        case key(StampedKey)
    }

    /// `actions` and `keys` (each in order) merged in the order they arrived.
    public static func inArrivalOrder(actions: [StampedAction], keys: [StampedKey]) -> [Arrival] {
        var merged: [Arrival] = []
        merged.reserveCapacity(actions.count + keys.count)
        var (a, k) = (actions.startIndex, keys.startIndex)
        while a < actions.endIndex || k < keys.endIndex {
            if k < keys.endIndex && (a == actions.endIndex || keys[k].order < actions[a].order) {
                merged.append(.key(keys[k]))
                k += 1
            } else {
                merged.append(.action(actions[a]))
                a += 1
            }
        }
        return merged
    }

    /// The next place in arrival order.
    private var arrivals = 0
    private func arrival() -> Int {
        arrivals += 1
        return arrivals
    }

    /// MMC locates read by `take(ready:)` since the last call (milliseconds from the song's start).
    public func takeLocates() -> [Int] {
        defer { locates = [] }
        return locates
    }

    /// The faders moved since the last call: each one's latest value only
    /// (a fader sends dozens a second; only where it stopped matters).
    public func takeFaders() -> [(fader: MIDIFader, value: Int)] {
        defer { faders = [] }
        return faders
    }

    /// The keyboard's keys read by `take(ready:)` since the last call.
    public func takeKeys() -> [StampedKey] {
        defer { keys = [] }
        return keys
    }

    /// The actions of whatever input is ready (`ready`: the descriptors
    /// `poll` found readable), without waiting; and any foot-switch hold
    /// whose time has come.
    public func take(ready: Set<Int32>) -> [StampedAction] {
        var actions: [StampedAction] = []
        let now = MonotonicClock.nanoseconds()
        if let midi, midi.pollDescriptors.contains(where: { ready.contains($0.fd) }) {
            for message in decoder.feed(midi.readReady()) {
                switch interpreter.meaning(of: message) {
                case .action(let action): actions.append(StampedAction(action: action, nanoseconds: now, order: arrival()))
                case .key(let note, let velocity): keys.append(StampedKey(note: note, velocity: velocity, nanoseconds: now, order: arrival()))
                case .locate(let milliseconds): locates.append(milliseconds)
                case .fader(let fader, let value):
                    faders.removeAll { $0.fader == fader }
                    faders.append((fader, value))
                case nil: break
                }
            }
        }
        for index in switches.indices {
            if ready.contains(switches[index].device.fileDescriptor) {
                do {
                    for edge in try switches[index].device.read(timeoutNanoseconds: 0) {
                        actions += switches[index].gestures.edge(pressed: edge.pressed, at: edge.nanoseconds).map { StampedAction(action: $0, nanoseconds: edge.nanoseconds, order: arrival()) }
                    }
                } catch {
                    warnings.append(error.description)
                }
            }
            actions += switches[index].gestures.advance(to: now).map { StampedAction(action: $0, nanoseconds: now, order: arrival()) }
        }
        return actions
    }

    /// Waits up to `timeoutMilliseconds` for input; returns the actions it
    /// meant (for callers without a `poll` of their own).
    public func poll(timeoutMilliseconds: Int32) -> [ControlAction] {
        let ready = descriptors.isEmpty ? [] : Poller.wait(descriptors, timeoutMilliseconds: timeoutMilliseconds)
        if descriptors.isEmpty { usleep(useconds_t(max(0, timeoutMilliseconds)) * 1_000) }
        return take(ready: ready).map(\.action)
    }

    /// What changed since the last call, one line each for the log: MIDI
    /// ports connected as they appeared, problems met while polling.
    public func news() -> [String] {
        var lines: [String] = []
        if let midi, midi.connected.count > reportedConnections {
            lines += midi.connected[reportedConnections...].map { "MIDI: connected \($0.description)" }
            reportedConnections = midi.connected.count
        }
        if warnings.count > reportedWarnings {
            lines += warnings[reportedWarnings...]
            reportedWarnings = warnings.count
        }
        return lines
    }

    /// Tells the controller's lights what changed (record LED…).
    public func showState(_ feedback: MIDIFeedback, from old: Set<String>, to new: Set<String>) {
        let bytes = feedback.messages(from: old, to: new)
        if !bytes.isEmpty { midi?.send(bytes) }
    }
}
