/// MIDI learn, pure: the next note-on, program change or controller press
/// (the rising edge through the threshold, as the box hears it) becomes a
/// binding of `action`. Fed decoded messages; no device.
public struct MIDILearner: Sendable {
    /// The action being bound.
    public let action: ControlAction
    private var interpreter: MIDIInterpreter

    /// A learner for `action`, controllers pressed at `threshold`.
    public init(action: ControlAction, threshold: Int = 64) {
        self.action = action
        interpreter = MIDIInterpreter(bindings: [], threshold: threshold, machineControl: false)
    }

    /// The binding `message` makes, or nil (a release, a note-off, clock…).
    public mutating func learn(_ message: MIDIMessage) -> MIDIBinding? {
        switch message {
        case .noteOn(let channel, let note, _):
            return MIDIBinding(event: .note(note), channel: channel, action: action)
        case .programChange(let channel, let program):
            return MIDIBinding(event: .program(program), channel: channel, action: action)
        case .controlChange(let channel, let controller, _):
            interpreter.bindings = [MIDIBinding(event: .controlChange(controller), action: action)]
            guard interpreter.action(for: message) != nil else { return nil }
            return MIDIBinding(event: .controlChange(controller), channel: channel, action: action)
        default:
            return nil
        }
    }

    /// The fader `message` makes of `control` for `target`: the first
    /// controller moved (any value), or nil.
    public static func fader(_ message: MIDIMessage, control: MIDIFader.Control, target: MIDIFader.Target) -> MIDIFader? {
        guard case .controlChange(let channel, let controller, _) = message else { return nil }
        return MIDIFader(controller: controller, channel: channel, control: control, target: target)
    }
}
