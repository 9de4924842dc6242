/// Keys on the console (a terminal attached, or SSH): one key, one action.
public enum ConsoleKeys {
    /// Key → action.
    public static let bindings: [(key: Character, action: ControlAction)] = [
        (" ", .playPause), ("s", .stop), ("r", .record), ("p", .punchIn), ("o", .punchOut), ("l", .loop), ("[", .loopStartHere), ("]", .loopEndHere),
        (",", .previousMeasure), (".", .nextMeasure), ("<", .previousPart), (">", .nextPart), ("{", .previousSong), ("}", .nextSong),
        ("(", .previousTag), (")", .nextTag),
        ("-", .tempoDown), ("+", .tempoUp), ("t", .transposeDown), ("T", .transposeUp), ("m", .metronome), ("c", .countIn), ("M", .mutePart), ("S", .soloPart), ("k", .keepTake),
        ("d", .discardTake), ("u", .undoTake), ("n", .giveMeMyNote), ("N", .giveMeMyChord), ("D", .drone), ("R", .reference), ("L", .recordLine), ("1", .stepWhole), ("2", .stepHalf), ("4", .stepQuarter), ("8", .stepEighth), ("6", .stepSixteenth), ("0", .stepRest), ("w", .punchWorst), ("v", .nextVerse), ("C", .calibrate), ("Q", .shutdown),
    ]

    /// The action for a key, if any (`?` is help, not an action).
    public static func action(for key: Character) -> ControlAction? {
        bindings.first { $0.key == key }?.action
    }

    /// The list `?` shows, one key a line, `?` and `q` included.
    public static var helpLines: [String] {
        bindings.map { "\(($0.key == " " ? "space" : String($0.key)).padding(toLength: 5))  \($0.action.rawValue)" }
            + ["?      these keys (again: the next page)", "q      quit (a take is finished first)"]
    }

    /// The same as one text.
    public static var help: String { helpLines.map { "  " + $0 }.joined(separator: "\n") }
}

/// What to tell a controller when the transport changes (a record LED):
/// a note or controller per state, on while in it, off when leaving.
public struct MIDIFeedback: Hashable, Sendable {
    /// One state's light.
    public struct Light: Hashable, Sendable {
        /// "playing", "recording", "count-in" or "looping".
        public var state: String
        /// A note (nil: a controller).
        public var note: Int?
        /// A controller (when no note).
        public var controller: Int?
        /// Channel 1…16.
        public var channel: Int

        /// A light.
        public init(state: String, note: Int? = nil, controller: Int? = nil, channel: Int = 1) {
            self.state = state
            self.note = note
            self.controller = controller
            self.channel = channel
        }
    }

    /// The lights.
    public var lights: [Light]

    /// Feedback with these lights.
    public init(lights: [Light]) {
        self.lights = lights
    }

    /// The bytes to send when the set of active states changes.
    public func messages(from old: Set<String>, to new: Set<String>) -> [UInt8] {
        var bytes: [UInt8] = []
        for light in lights where old.contains(light.state) != new.contains(light.state) {
            let on = new.contains(light.state)
            let channel = UInt8(max(1, min(16, light.channel)) - 1)
            if let note = light.note {
                bytes += on ? [0x90 | channel, UInt8(note & 0x7F), 127] : [0x80 | channel, UInt8(note & 0x7F), 0]
            } else if let controller = light.controller {
                bytes += [0xB0 | channel, UInt8(controller & 0x7F), on ? 127 : 0]
            }
        }
        return bytes
    }
}

extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
