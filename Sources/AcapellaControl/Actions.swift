#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Everything the singer can ask of the box hands-free (SPEC §8). One
/// enum: MIDI, foot switches and console keys all end up here.
public enum ControlAction: String, CaseIterable, Codable, Hashable, Sendable {
    case playPause = "play-pause"
    case stop
    case record
    case punchIn = "punch-in"
    case punchOut = "punch-out"
    case loop
    case loopStartHere = "loop-start-here"
    case loopEndHere = "loop-end-here"
    case previousMeasure = "previous-measure"
    case nextMeasure = "next-measure"
    case previousPart = "previous-part"
    case nextPart = "next-part"
    case previousSong = "previous-song"
    case nextSong = "next-song"
    /// Songs by tag (difficulty, voicing, style…): the next tag, and the
    /// previous and next song step among the songs that have it.
    case previousTag = "previous-tag"
    case nextTag = "next-tag"
    case tempoUp = "tempo-up"
    case tempoDown = "tempo-down"
    /// The guide tones a semitone up or down (not under takes, like tempo).
    case transposeUp = "transpose-up"
    case transposeDown = "transpose-down"
    case metronome
    case countIn = "count-in"
    case mutePart = "mute-part"
    case soloPart = "solo-part"
    case keepTake = "keep-take"
    case discardTake = "discard-take"
    case undoTake = "undo-take"
    case giveMeMyNote = "give-me-my-note"
    /// Every part's note at once (where each part is, or next sings).
    case giveMeMyChord = "give-me-my-chord"
    /// A held tone of the key's tonic under the singer's note, on or off.
    case drone
    /// The project's reference recording heard or muted.
    case reference
    /// Play a new line on the keyboard while the song plays (again, or a
    /// stop: it is written into the song as a new part).
    case recordLine = "record-line"
    /// Step entry (a line armed while stopped): each key then enters a note
    /// this long at the cursor; `step-rest` enters a rest as long.
    case stepWhole = "step-whole"
    case stepHalf = "step-half"
    case stepQuarter = "step-quarter"
    case stepEighth = "step-eighth"
    case stepSixteenth = "step-sixteenth"
    case stepRest = "step-rest"
    /// Set the punch range to the take analysis's first suggestion.
    case punchWorst = "punch-worst"
    case nextVerse = "next-verse"
    case calibrate
    case shutdown

    /// "play-pause, stop, …" for messages.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// What a MIDI event is bound to.
public struct MIDIBinding: Hashable, Sendable {
    /// What kind of event.
    public enum Event: Hashable, Sendable {
        /// A note-on of this note.
        case note(Int)
        /// A control change of this controller crossing the threshold upwards.
        case controlChange(Int)
        /// A program change to this program.
        case program(Int)
    }

    /// The event.
    public var event: Event
    /// Channel 1…16, or nil: any.
    public var channel: Int?
    /// The action.
    public var action: ControlAction

    /// A binding.
    public init(event: Event, channel: Int? = nil, action: ControlAction) {
        self.event = event
        self.channel = channel
        self.action = action
    }
}

/// A controller bound to a part's level or pan: the live mixer. Every
/// value it sends sets the control (no threshold), smoothed by the
/// renderer's glide.
public struct MIDIFader: Hashable, Sendable {
    /// What it moves.
    public enum Control: String, Hashable, Sendable, CaseIterable {
        case level, pan
    }
    /// Whose: a part by its number (1…), or the reference recording.
    public enum Target: Hashable, Sendable, CustomStringConvertible {
        case part(Int)
        case reference

        public var description: String {
            switch self {
            case .part(let number): "part \(number)"
            case .reference: "the reference recording"
            }
        }
    }

    public var controller: Int
    /// Channel 1…16, or nil: any.
    public var channel: Int?
    public var control: Control
    public var target: Target

    public init(controller: Int, channel: Int? = nil, control: Control, target: Target) {
        self.controller = controller
        self.channel = channel
        self.control = control
        self.target = target
    }

    /// A level fader's value 0…127 as dB against the part's default level:
    /// 100 is 0 dB, 127 about +4 dB, each halving of the value −12 dB;
    /// 0 is silence (nil).
    public static func decibels(_ value: Int) -> Double? {
        guard value > 0 else { return nil }
        return max(-60, 40 * log10(Double(min(127, value)) / 100))
    }

    /// A pan knob's value 0…127 as −1 (left) … +1 (right), 64 the centre.
    public static func pan(_ value: Int) -> Double {
        max(-1, min(1, Double(value - 64) / 63))
    }
}

/// Turns decoded MIDI into actions: bound notes and programs, controllers
/// on their rising edge through the threshold (a sustain-pedal foot switch
/// on CC 64 gives one action per press, however many values it sends), and
/// MIDI Machine Control when enabled.
public struct MIDIInterpreter: Hashable, Sendable {
    /// The bindings, first match wins.
    public var bindings: [MIDIBinding]
    /// Controllers bound to parts' levels and pans (before the bindings).
    public var faders: [MIDIFader] = []
    /// A controller value at or above this is "down".
    public var threshold: Int
    /// Obey MMC.
    public var machineControl: Bool
    /// This box's MMC device id (0x7F commands are obeyed too).
    public var machineControlDevice: Int
    var down: Set<Int> = []  // channel × 128 + controller currently at or above the threshold
    /// Which channel's notes sound as a keyboard (notes bound to an action never do).
    public var keyboard: KeyboardChannel = .any
    /// Notes sounding from the keyboard (channel × 128 + note), so a note-off
    /// is passed on only for a note that sounded.
    var sounding: Set<Int> = []

    /// Where a MIDI keyboard's notes come from.
    public enum KeyboardChannel: Hashable, Sendable {
        case off
        case any
        /// One channel, 1…16.
        case channel(Int)

        func includes(_ channel: Int) -> Bool {
            switch self {
            case .off: false
            case .any: true
            case .channel(let only): only == channel
            }
        }
    }

    /// What a message means: an action, a key of the keyboard, or nothing.
    public enum Meaning: Hashable, Sendable {
        case action(ControlAction)
        /// A keyboard's key: pressed at `velocity` 1…127, or released (0).
        case key(note: Int, velocity: Int)
        /// MMC locate: move to this time of the song, milliseconds from its start.
        case locate(milliseconds: Int)
        /// A fader moved to `value` (0…127).
        case fader(MIDIFader, value: Int)
    }

    /// What a message means: a bound event's action; a note no binding
    /// takes, on the keyboard's channel, as a key (pressed or released).
    public mutating func meaning(of message: MIDIMessage) -> Meaning? {
        switch message {
        case .noteOn(let channel, let note, let velocity):
            if let action = match(.note(note), channel: channel) { return .action(action) }
            guard keyboard.includes(channel) else { return nil }
            sounding.insert(channel * 128 + note)
            return .key(note: note, velocity: velocity)
        case .noteOff(let channel, let note):
            guard sounding.remove(channel * 128 + note) != nil else { return nil }
            return .key(note: note, velocity: 0)
        case .controlChange(let channel, let controller, let value):
            if let fader = faders.first(where: { $0.controller == controller && ($0.channel == nil || $0.channel == channel) }) { return .fader(fader, value: value) }
            return action(for: message).map { .action($0) }
        case .systemExclusive(let bytes):
            guard let command = machineCommand(bytes) else { return nil }
            if let milliseconds = command.locateMilliseconds { return .locate(milliseconds: milliseconds) }
            return action(for: command).map { .action($0) }
        default:
            return action(for: message).map { .action($0) }
        }
    }

    /// An interpreter.
    public init(bindings: [MIDIBinding], threshold: Int = 64, machineControl: Bool = true, machineControlDevice: Int = 0x7F) {
        self.bindings = bindings
        self.threshold = threshold
        self.machineControl = machineControl
        self.machineControlDevice = machineControlDevice
    }

    /// The action a message asks for, if any.
    public mutating func action(for message: MIDIMessage) -> ControlAction? {
        switch message {
        case .noteOn(let channel, let note, _):
            return match(.note(note), channel: channel)
        case .controlChange(let channel, let controller, let value):
            let key = channel * 128 + controller
            if value >= threshold {
                if down.contains(key) { return nil }
                down.insert(key)
                return match(.controlChange(controller), channel: channel)
            }
            down.remove(key)
            return nil
        case .programChange(let channel, let program):
            return match(.program(program), channel: channel)
        case .systemExclusive(let bytes):
            return machineCommand(bytes).flatMap { action(for: $0) }
        case .noteOff, .realtime:
            return nil
        }
    }

    /// An MMC command for this box, when MMC is obeyed.
    func machineCommand(_ sysex: [UInt8]) -> MMCCommand? {
        guard machineControl, let command = MMCCommand.parse(sysex), command.isFor(device: machineControlDevice) else { return nil }
        return command
    }

    /// The action an MMC command asks for (a locate is a place, not an action: see `meaning(of:)`).
    func action(for command: MMCCommand) -> ControlAction? {
        switch command.kind {
        case .stop: .stop
        case .play, .deferredPlay, .pause: .playPause
        case .recordStrobe: .punchIn
        case .recordExit: .punchOut
        case .locate: nil
        }
    }

    func match(_ event: MIDIBinding.Event, channel: Int) -> ControlAction? {
        bindings.first { $0.event == event && ($0.channel == nil || $0.channel == channel) }?.action
    }
}
