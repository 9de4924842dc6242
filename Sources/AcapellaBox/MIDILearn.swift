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
        public var binding: MIDIBinding
        public var file: String
    }

    /// A problem, one line: a wrong file, no sequencer, nothing heard.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Listens up to `seconds` for a control to bind `action` to, in the
    /// controls file at `path`; `listening` is told which ports it hears.
    public static func learn(_ action: ControlAction, into path: String, seconds: Int, listening: (String) -> Void) throws(Failure) -> Learned {
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
        var learner = MIDILearner(action: action, threshold: config.midi.threshold)
        let deadline = MonotonicClock.nanoseconds() + Int64(seconds) * 1_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            for message in decoder.feed(input.read(timeoutMilliseconds: 200)) {
                guard let binding = learner.learn(message) else { continue }
                do {
                    let updated = try ControlConfig.learning(binding, into: existing, file: path)
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
                return Learned(binding: binding, file: path)
            }
        }
        throw Failure(description: "no MIDI event in \(seconds) s; nothing changed")
    }
}
