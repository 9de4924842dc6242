public import AcapellaControl
import AcapellaDevices
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

    /// The kernel's monotonic clock, the one GPIO edge timestamps use.
    static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Waits up to `timeoutMilliseconds` for input; returns the actions it meant.
    public func poll(timeoutMilliseconds: Int32) -> [ControlAction] {
        var actions: [ControlAction] = []
        if let midi {
            for message in decoder.feed(midi.read(timeoutMilliseconds: switches.isEmpty ? timeoutMilliseconds : 0)) {
                if let action = interpreter.action(for: message) { actions.append(action) }
            }
        } else if switches.isEmpty {
            usleep(useconds_t(max(0, timeoutMilliseconds)) * 1_000)
        }
        for index in switches.indices {
            let wait = index == 0 && midi == nil ? Int64(timeoutMilliseconds) * 1_000_000 : 0
            do {
                for edge in try switches[index].device.read(timeoutNanoseconds: wait) {
                    actions += switches[index].gestures.edge(pressed: edge.pressed, at: edge.nanoseconds)
                }
            } catch {
                warnings.append(error.description)
            }
            actions += switches[index].gestures.advance(to: Self.monotonicNanoseconds())
        }
        return actions
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
