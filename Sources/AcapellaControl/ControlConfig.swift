public import Foundation
public import AcapellaEngine
import AcapellaJSON

/// A wrong control configuration: the file and the key, in one line.
public struct ControlConfigError: Error, CustomStringConvertible, Equatable {
    /// `FILE: KEY: what is wrong`.
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

/// One foot switch: where it is wired and what its gestures do.
public struct FootSwitchConfig: Hashable, Sendable {
    /// GPIO chip by name (`gpiochip0`), path or number.
    public var chip: String
    /// Line by number or name (`GPIO17`).
    public var line: String
    /// Pressed pulls the line low (default, with the pull-up).
    public var activeLow = true
    /// `pull-up`, `pull-down` or `none`.
    public var bias = "pull-up"
    /// Timing and actions.
    public var gestures: GestureSettings
}

/// The hands-free configuration (`Config/controls.json` ships the
/// defaults), read with `JSONDecoder`: an unknown key anywhere, a value out
/// of range, or one MIDI event bound to two actions is one line naming the
/// file and the key.
public struct ControlConfig: Hashable, Sendable {
    /// Free text for the reader of the file.
    public var comment: String?
    /// MIDI sources to connect: nil = every hardware source.
    public var midiSources: [String]?
    /// MIDI bindings.
    public var midi: MIDIInterpreter
    /// Foot switches.
    public var footSwitches: [FootSwitchConfig]
    /// Where punch in/out lands.
    public var punchQuantize: Quantize
    /// Lights on a controller (empty: none).
    public var feedback = MIDIFeedback(lights: [])

    /// Parses a configuration; every problem names the file and the key.
    public static func parse(_ data: Data, file: String) throws(ControlConfigError) -> ControlConfig {
        do { return try JSONFile.decode(ControlConfig.self, from: data, file: file).get() } catch { throw ControlConfigError(description: error.description) }
    }

    /// The file's text for this configuration (sorted keys, two-space indent).
    public func serialized() -> Data {
        JSONFile.encode(self)
    }
}

extension ControlConfig: Codable {
    enum Keys: String, CodingKey, CaseIterable {
        case midi, footSwitches, punchQuantize, comment
    }

    enum MIDIKeys: String, CodingKey, CaseIterable {
        case connect, ccThreshold, mmc, mmcDevice, keyboard, bindings, faders, feedback
    }

    /// Reads the file's shape (docs/guide/box.md, "Hands-free control"); defaults for what is absent.
    public init(from decoder: any Decoder) throws {
        guard (try? decoder.container(keyedBy: AnyCodingKey.self)) != nil else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "expected an object"))
        }
        try decoder.rejectUnknownKeys(Keys.self)
        let container = try decoder.container(keyedBy: Keys.self)
        comment = try container.decodeIfPresent(String.self, forKey: .comment)
        punchQuantize = try container.decodeIfPresent(Quantize.self, forKey: .punchQuantize) ?? .bar
        footSwitches = try container.decodeIfPresent([FootSwitchConfig].self, forKey: .footSwitches) ?? []
        // One line, one switch: two on a line would each take its edges (a
        // tap read twice, two actions at once) — libgpiod refuses the second request anyway.
        for (index, foot) in footSwitches.enumerated() {
            if let first = footSwitches[..<index].firstIndex(where: { $0.chip == foot.chip && $0.line == foot.line }) {
                throw DecodingError.dataCorrupted(.init(codingPath: [Keys.footSwitches, AnyCodingKey(intValue: index)],
                                                        debugDescription: "chip \(foot.chip) line \(foot.line) is footSwitches[\(first)]'s too; one switch a line"))
            }
        }
        midiSources = nil
        midi = MIDIInterpreter(bindings: [])
        guard container.contains(.midi) else { return }
        let midiDecoder = try container.superDecoder(forKey: .midi)
        try midiDecoder.rejectUnknownKeys(MIDIKeys.self)
        let section = try midiDecoder.container(keyedBy: MIDIKeys.self)
        if section.contains(.connect) {
            if let all = try? section.decode(String.self, forKey: .connect) {
                guard all == "all" else { throw DecodingError.dataCorruptedError(forKey: .connect, in: section, debugDescription: "expected \"all\" or a list of port names") }
            } else {
                do { midiSources = try section.decode([String].self, forKey: .connect) } catch {
                    throw DecodingError.dataCorruptedError(forKey: .connect, in: section, debugDescription: "expected \"all\" or a list of port names")
                }
            }
        }
        midi.threshold = try section.decodeWholeNumber(.ccThreshold, in: 1...127) ?? 64
        midi.machineControl = try section.decodeIfPresent(Bool.self, forKey: .mmc) ?? true
        midi.machineControlDevice = try section.decodeWholeNumber(.mmcDevice, in: 0...127) ?? 0x7F
        if section.contains(.keyboard) {
            if let word = try? section.decode(String.self, forKey: .keyboard), word == "any" || word == "off" {
                midi.keyboard = word == "any" ? .any : .off
            } else if let channel = try? section.decode(Int.self, forKey: .keyboard), (1...16).contains(channel) {
                midi.keyboard = .channel(channel)
            } else {
                throw DecodingError.dataCorruptedError(forKey: .keyboard, in: section, debugDescription: "expected \"any\", \"off\" or a channel from 1 to 16")
            }
        }
        midi.bindings = try section.decodeIfPresent([MIDIBinding].self, forKey: .bindings) ?? []
        midi.faders = try section.decodeIfPresent([MIDIFader].self, forKey: .faders) ?? []
        // A controller is a fader or a switch, not both.
        for (index, fader) in midi.faders.enumerated() {
            let overlaps = { (channel: Int?) in channel == nil || fader.channel == nil || channel == fader.channel }
            if let binding = midi.bindings.first(where: { $0.event == .controlChange(fader.controller) && overlaps($0.channel) }) {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: midiDecoder.codingPath + [MIDIKeys.faders, AnyCodingKey(intValue: index)],
                    debugDescription: "controller \(fader.controller) is bound to \(binding.action.rawValue) in midi.bindings already; one controller, one use"))
            }
            if let earlier = midi.faders[..<index].firstIndex(where: { $0.controller == fader.controller && overlaps($0.channel) }) {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: midiDecoder.codingPath + [MIDIKeys.faders, AnyCodingKey(intValue: index)],
                    debugDescription: "controller \(fader.controller) moves midi.faders[\(earlier)] already; one controller, one use"))
            }
        }
        feedback = MIDIFeedback(lights: try section.decodeIfPresent([MIDIFeedback.Light].self, forKey: .feedback) ?? [])
        // One event, one action: a second binding of the same event (on an
        // overlapping channel) to another action would never be reached.
        for (index, binding) in midi.bindings.enumerated() {
            if let earlier = midi.bindings[..<index].firstIndex(where: { $0.event == binding.event && $0.action != binding.action && ($0.channel == nil || binding.channel == nil || $0.channel == binding.channel) }) {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: midiDecoder.codingPath + [MIDIKeys.bindings, AnyCodingKey(intValue: index)],
                    debugDescription: "\(binding.event) is bound to \(midi.bindings[earlier].action.rawValue) by midi.bindings[\(earlier)] already; one event, one action"))
            }
        }
    }

    /// Writes the same shape back.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(comment, forKey: .comment)
        try container.encode(punchQuantize, forKey: .punchQuantize)
        try container.encode(footSwitches, forKey: .footSwitches)
        var section = container.nestedContainer(keyedBy: MIDIKeys.self, forKey: .midi)
        if let midiSources { try section.encode(midiSources, forKey: .connect) } else { try section.encode("all", forKey: .connect) }
        try section.encode(midi.threshold, forKey: .ccThreshold)
        try section.encode(midi.machineControl, forKey: .mmc)
        try section.encode(midi.machineControlDevice, forKey: .mmcDevice)
        switch midi.keyboard {
        case .any: try section.encode("any", forKey: .keyboard)
        case .off: try section.encode("off", forKey: .keyboard)
        case .channel(let channel): try section.encode(channel, forKey: .keyboard)
        }
        try section.encode(midi.bindings, forKey: .bindings)
        if !midi.faders.isEmpty { try section.encode(midi.faders, forKey: .faders) }
        try section.encode(feedback.lights, forKey: .feedback)
    }
}

extension KeyedDecodingContainer {
    /// A whole number in `range` (true and false are not numbers), or nil when absent.
    func decodeWholeNumber(_ key: Key, in range: ClosedRange<Int>, hint: String = "") throws -> Int? {
        guard contains(key) else { return nil }
        guard let value = try? decode(Int.self, forKey: key), range.contains(value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "expected a whole number from \(range.lowerBound) to \(range.upperBound)\(hint)")
        }
        return value
    }

    /// An action name, or nil when absent.
    func decodeAction(_ key: Key) throws -> ControlAction? {
        guard contains(key) else { return nil }
        guard let text = try? decode(String.self, forKey: key) else { throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "expected an action name") }
        guard let action = ControlAction(rawValue: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "unknown action '\(text)'; known: \(ControlAction.names)")
        }
        return action
    }

    /// true or false, or nil when absent.
    func decodeFlag(_ key: Key) throws -> Bool? {
        guard contains(key) else { return nil }
        guard let flag = try? decode(Bool.self, forKey: key) else { throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "expected true or false") }
        return flag
    }
}

extension MIDIBinding: Codable {
    enum Keys: String, CodingKey, CaseIterable {
        case event, note, controller, program, channel, action
    }

    /// `{"event": "note", "note": 36, "channel": 10, "action": "play-pause"}`.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Keys.self)
        let container = try decoder.container(keyedBy: Keys.self)
        guard let action = try container.decodeAction(.action) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [Keys.action], debugDescription: "missing"))
        }
        let kind = try? container.decode(String.self, forKey: .event)
        let numberKey: Keys
        switch kind {
        case "note": numberKey = .note
        case "cc": numberKey = .controller
        case "program": numberKey = .program
        default: throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [Keys.event], debugDescription: "expected \"note\", \"cc\" or \"program\""))
        }
        for other in [Keys.note, .controller, .program] where other != numberKey && container.contains(other) {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [other], debugDescription: "not used by a \(kind ?? "") binding (it takes \"\(numberKey.rawValue)\")"))
        }
        guard let number = try container.decodeWholeNumber(numberKey, in: 0...127) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [numberKey], debugDescription: "missing"))
        }
        switch numberKey {
        case .note: event = .note(number)
        case .controller: event = .controlChange(number)
        default: event = .program(number)
        }
        channel = try container.decodeWholeNumber(.channel, in: 1...16)
        self.action = action
    }

    /// The same shape back.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        switch event {
        case .note(let note): try container.encode("note", forKey: .event); try container.encode(note, forKey: .note)
        case .controlChange(let controller): try container.encode("cc", forKey: .event); try container.encode(controller, forKey: .controller)
        case .program(let program): try container.encode("program", forKey: .event); try container.encode(program, forKey: .program)
        }
        try container.encodeIfPresent(channel, forKey: .channel)
        try container.encode(action, forKey: .action)
    }
}

extension MIDIBinding.Event: CustomStringConvertible {
    /// "note 36", "controller 64", "program 9".
    public var description: String {
        switch self {
        case .note(let note): "note \(note)"
        case .controlChange(let controller): "controller \(controller)"
        case .program(let program): "program \(program)"
        }
    }
}

extension MIDIFader: Codable {
    enum Keys: String, CodingKey, CaseIterable {
        case controller, channel, control, part
    }

    /// `{"controller": 7, "channel": 1, "control": "level", "part": 2}`
    /// (`"part": "reference"`: the reference recording).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Keys.self)
        let container = try decoder.container(keyedBy: Keys.self)
        guard let controller = try container.decodeWholeNumber(.controller, in: 0...127) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [Keys.controller], debugDescription: "missing"))
        }
        guard let word = try? container.decode(String.self, forKey: .control), let control = Control(rawValue: word) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [Keys.control], debugDescription: "expected \"level\" or \"pan\""))
        }
        let target: Target
        if let word = try? container.decode(String.self, forKey: .part), word == "reference" {
            target = .reference
        } else if let number = try container.decodeWholeNumber(.part, in: 1...64, hint: ", or \"reference\"") {
            target = .part(number)
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [Keys.part], debugDescription: "missing (a part's number, or \"reference\")"))
        }
        self.init(controller: controller, channel: try container.decodeWholeNumber(.channel, in: 1...16), control: control, target: target)
    }

    /// The same shape back.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(controller, forKey: .controller)
        try container.encodeIfPresent(channel, forKey: .channel)
        try container.encode(control.rawValue, forKey: .control)
        switch target {
        case .part(let number): try container.encode(number, forKey: .part)
        case .reference: try container.encode("reference", forKey: .part)
        }
    }
}

extension MIDIFeedback.Light: Codable {
    enum Keys: String, CodingKey, CaseIterable {
        case state, note, controller, channel
    }

    /// The states a light can follow.
    public static let states = ["playing", "recording", "count-in", "looping"]

    /// `{"state": "recording", "note": 38, "channel": 10}`.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Keys.self)
        let container = try decoder.container(keyedBy: Keys.self)
        guard let state = try? container.decode(String.self, forKey: .state), Self.states.contains(state) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [Keys.state], debugDescription: "expected \"playing\", \"recording\", \"count-in\" or \"looping\""))
        }
        let note = try container.decodeWholeNumber(.note, in: 0...127)
        let controller = try container.decodeWholeNumber(.controller, in: 0...127)
        guard (note == nil) != (controller == nil) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "give a note or a controller (one of them)"))
        }
        self.init(state: state, note: note, controller: controller, channel: try container.decodeWholeNumber(.channel, in: 1...16) ?? 1)
    }

    /// The same shape back.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(state, forKey: .state)
        try container.encodeIfPresent(note, forKey: .note)
        try container.encodeIfPresent(controller, forKey: .controller)
        try container.encode(channel, forKey: .channel)
    }
}

extension FootSwitchConfig: Codable {
    enum Keys: String, CodingKey, CaseIterable {
        case chip, line, activeLow, bias, debounceMs, holdMs, doubleTapMs, tap, hold, doubleTap
    }

    /// `{"chip": "gpiochip0", "line": 17, "tap": "punch-in", …}`.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Keys.self)
        let container = try decoder.container(keyedBy: Keys.self)
        func name(_ key: Keys, example: String) throws -> String {
            guard container.contains(key) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [key], debugDescription: "missing (e.g. \(example))"))
            }
            if let text = try? container.decode(String.self, forKey: key), !text.isEmpty { return text }
            if let number = try? container.decode(Int.self, forKey: key), number >= 0 { return String(number) }
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "expected a name or a number")
        }
        chip = try name(.chip, example: "\"gpiochip0\"")
        line = try name(.line, example: "17 or \"GPIO17\"")
        gestures = GestureSettings(tap: try container.decodeAction(.tap), hold: try container.decodeAction(.hold), doubleTap: try container.decodeAction(.doubleTap))
        gestures.debounceNanoseconds = Int64(try container.decodeWholeNumber(.debounceMs, in: 1...500) ?? 30) * 1_000_000
        gestures.holdNanoseconds = Int64(try container.decodeWholeNumber(.holdMs, in: 100...10_000) ?? 600) * 1_000_000
        gestures.doubleTapNanoseconds = Int64(try container.decodeWholeNumber(.doubleTapMs, in: 50...2_000) ?? 350) * 1_000_000
        activeLow = try container.decodeFlag(.activeLow) ?? true
        if container.contains(.bias) {
            guard let value = try? container.decode(String.self, forKey: .bias), ["pull-up", "pull-down", "none"].contains(value) else {
                throw DecodingError.dataCorruptedError(forKey: .bias, in: container, debugDescription: "expected \"pull-up\", \"pull-down\" or \"none\"")
            }
            bias = value
        }
        if gestures.tap == nil && gestures.hold == nil && gestures.doubleTap == nil {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "binds no action (tap, hold or doubleTap)"))
        }
    }

    /// The same shape back (a numeric line stays a number).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(chip, forKey: .chip)
        if let number = Int(line), String(number) == line { try container.encode(number, forKey: .line) } else { try container.encode(line, forKey: .line) }
        try container.encode(activeLow, forKey: .activeLow)
        try container.encode(bias, forKey: .bias)
        try container.encode(Int(gestures.debounceNanoseconds / 1_000_000), forKey: .debounceMs)
        try container.encode(Int(gestures.holdNanoseconds / 1_000_000), forKey: .holdMs)
        try container.encode(Int(gestures.doubleTapNanoseconds / 1_000_000), forKey: .doubleTapMs)
        try container.encodeIfPresent(gestures.tap, forKey: .tap)
        try container.encodeIfPresent(gestures.hold, forKey: .hold)
        try container.encodeIfPresent(gestures.doubleTap, forKey: .doubleTap)
    }
}

extension ControlConfig {
    /// The configuration text with `binding` learned: it replaces any
    /// binding of the same event and channel (and any other binding of
    /// that event it would contradict); everything else is kept.
    public static func learning(_ binding: MIDIBinding, into data: Data, file: String) throws(ControlConfigError) -> Data {
        var config = try parse(data, file: file)
        config.midi.bindings.removeAll { $0.event == binding.event && ($0.channel == binding.channel || $0.channel == nil || binding.channel == nil) }
        if case .controlChange(let controller) = binding.event {
            config.midi.faders.removeAll { $0.controller == controller && ($0.channel == binding.channel || $0.channel == nil || binding.channel == nil) }
        }
        config.midi.bindings.append(binding)
        let result = config.serialized()
        _ = try parse(result, file: file)
        return result
    }

    /// The configuration text with `fader` learned: it replaces any fader
    /// or binding of the same controller and channel, and any fader of the
    /// same part and control; everything else is kept.
    public static func learning(_ fader: MIDIFader, into data: Data, file: String) throws(ControlConfigError) -> Data {
        var config = try parse(data, file: file)
        let overlaps = { (channel: Int?) in channel == nil || fader.channel == nil || channel == fader.channel }
        config.midi.bindings.removeAll { $0.event == .controlChange(fader.controller) && overlaps($0.channel) }
        config.midi.faders.removeAll { ($0.controller == fader.controller && overlaps($0.channel)) || ($0.target == fader.target && $0.control == fader.control) }
        config.midi.faders.append(fader)
        let result = config.serialized()
        _ = try parse(result, file: file)
        return result
    }
}
