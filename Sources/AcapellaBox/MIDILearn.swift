public import AcapellaControl
import AcapellaDevices
import AcapellaProject
import Foundation

/// `acapella midi-learn ACTION`: listens on the sequencer for the next
/// control and writes its binding into the controls file atomically
/// (the user's, else started from the shipped defaults).
public enum MIDILearn {
    /// What was learned and where it was written.
    public struct Learned: Sendable {
        /// "controller 7 on channel 1".
        public var event: String
        public var file: String
    }

    /// What to learn: an action, or a fader of a part's level or pan.
    public enum Target: Sendable {
        case action(ControlAction)
        case fader(MIDIFader.Control, MIDIFader.Target)
    }

    /// A problem, one line: a wrong file, no sequencer, nothing heard.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Listens up to `seconds` for a control to bind `action` to, in the
    /// controls file at `path`; `listening` is told which ports it hears.
    public static func learn(_ target: Target, into path: String, seconds: Int, listening: (String) -> Void) throws(Failure) -> Learned {
        let existing: Data
        if let data = FileManager.default.contents(atPath: path) {
            existing = data
        } else if let shipped = ShippedFiles.controls, let data = FileManager.default.contents(atPath: shipped) {
            existing = data
        } else {
            existing = Data("{}".utf8)
        }
        let config: ControlConfig
        do { config = try ControlConfig.parse(existing, file: path) } catch { throw Failure(description: error.description) }
        let input: MIDIInput
        do { input = try MIDIInput(sources: config.midiSources) } catch { throw Failure(description: error.description) }
        listening(input.connected.isEmpty ? "no port yet; connect one" : input.connected.map(\.description).joined(separator: ", "))
        var decoder = MIDIDecoder()
        var learner: MIDILearner? = if case .action(let action) = target { MIDILearner(action: action, threshold: config.midi.threshold) } else { nil }
        let deadline = MonotonicClock.nanoseconds() + Int64(seconds) * 1_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            for message in decoder.feed(input.read(timeoutMilliseconds: 200)) {
                let event: String
                let learned: (Data) throws(ControlConfigError) -> Data
                switch target {
                case .action:
                    guard let binding = learner?.learn(message) else { continue }
                    event = "\(binding.event) on channel \(binding.channel ?? 0)"
                    learned = { data throws(ControlConfigError) in try ControlConfig.learning(binding, into: data, file: path) }
                case .fader(let control, let whose):
                    guard let fader = MIDILearner.fader(message, control: control, target: whose) else { continue }
                    event = "controller \(fader.controller) on channel \(fader.channel ?? 0)"
                    learned = { data throws(ControlConfigError) in try ControlConfig.learning(fader, into: data, file: path) }
                }
                do {
                    let updated = try learned(existing)
                    let folder = (path as NSString).deletingLastPathComponent
                    if !folder.isEmpty { try Folders.make(folder) }
                    try AtomicFile.write(Array(updated), to: path)
                } catch let error as ControlConfigError {
                    throw Failure(description: error.description)
                } catch let error as FileError {
                    throw Failure(description: error.description)
                } catch {
                    throw Failure(description: "\(path): \(error)")
                }
                return Learned(event: event, file: path)
            }
        }
        throw Failure(description: "no MIDI event in \(seconds) s; nothing changed")
    }
}
