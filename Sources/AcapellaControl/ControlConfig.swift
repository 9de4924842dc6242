public import Foundation

/// Whether a JSON value is true/false (Foundation hands both booleans and
/// numbers over as NSNumber; booleans carry the C type "c").
func isJSONBoolean(_ value: Any) -> Bool {
    (value as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
}

/// A wrong control configuration: the file and the key, in one line.
public struct ControlConfigError: Error, CustomStringConvertible, Equatable {
    /// `FILE: KEY: what is wrong`.
    public var description: String
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

/// The hands-free configuration (`Config/controls.json` ships the defaults).
public struct ControlConfig: Sendable {
    /// MIDI sources to connect: nil = every hardware source.
    public var midiSources: [String]?
    /// MIDI bindings.
    public var midi: MIDIInterpreter
    /// Foot switches.
    public var footSwitches: [FootSwitchConfig]
    /// Where punch in/out lands: immediate, beat or bar.
    public var punchQuantize: String
    /// Lights on a controller (empty: none).
    public var feedback = MIDIFeedback(lights: [])

    /// Parses a configuration; every problem names the file and the key.
    public static func parse(_ data: Data, file: String) throws(ControlConfigError) -> ControlConfig {
        func fail(_ key: String, _ message: String) -> ControlConfigError { ControlConfigError(description: "\(file): \(key): \(message)") }
        let root: [String: Any]
        do {
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw fail("(top)", "expected an object") }
            root = object
        } catch let error as ControlConfigError {
            throw error
        } catch {
            throw ControlConfigError(description: "\(file): not valid JSON (\((error as NSError).userInfo["NSDebugDescription"] as? String ?? "\(error)"))")
        }
        let known = ["midi", "footSwitches", "punchQuantize", "comment"]
        if let stray = root.keys.sorted().first(where: { !known.contains($0) }) { throw fail(stray, "unknown key; known: \(known.joined(separator: ", "))") }

        func action(_ value: Any?, _ key: String) throws(ControlConfigError) -> ControlAction? {
            guard let value else { return nil }
            guard let text = value as? String else { throw fail(key, "expected an action name") }
            guard let action = ControlAction(rawValue: text) else { throw fail(key, "unknown action '\(text)'; known: \(ControlAction.names)") }
            return action
        }
        func integer(_ value: Any?, _ key: String, _ range: ClosedRange<Int>) throws(ControlConfigError) -> Int? {
            guard let value else { return nil }
            guard let number = value as? NSNumber, !isJSONBoolean(value), let int = Int(exactly: number.doubleValue), range.contains(int) else {
                throw fail(key, "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return int
        }

        var bindings: [MIDIBinding] = []
        var threshold = 64
        var machineControl = true
        var machineControlDevice = 0x7F
        var sources: [String]?
        var lights: [MIDIFeedback.Light] = []
        if let midiValue = root["midi"] {
            guard let midi = midiValue as? [String: Any] else { throw fail("midi", "expected an object") }
            let knownMIDI = ["connect", "ccThreshold", "mmc", "mmcDevice", "bindings", "feedback"]
            if let stray = midi.keys.sorted().first(where: { !knownMIDI.contains($0) }) { throw fail("midi.\(stray)", "unknown key; known: \(knownMIDI.joined(separator: ", "))") }
            if let connect = midi["connect"] {
                if let all = connect as? String, all == "all" { sources = nil } else if let names = connect as? [String] { sources = names } else {
                    throw fail("midi.connect", "expected \"all\" or a list of port names")
                }
            }
            threshold = try integer(midi["ccThreshold"], "midi.ccThreshold", 1...127) ?? 64
            if let mmc = midi["mmc"] {
                guard isJSONBoolean(mmc), let flag = mmc as? Bool else { throw fail("midi.mmc", "expected true or false") }
                machineControl = flag
            }
            machineControlDevice = try integer(midi["mmcDevice"], "midi.mmcDevice", 0...127) ?? 0x7F
            if let list = midi["feedback"] {
                guard let items = list as? [Any] else { throw fail("midi.feedback", "expected a list") }
                for (index, item) in items.enumerated() {
                    let key = "midi.feedback[\(index)]"
                    guard let entry = item as? [String: Any] else { throw fail(key, "expected an object") }
                    guard let state = entry["state"] as? String, ["playing", "recording", "count-in", "looping"].contains(state) else {
                        throw fail(key + ".state", "expected \"playing\", \"recording\", \"count-in\" or \"looping\"")
                    }
                    let note = try integer(entry["note"], key + ".note", 0...127)
                    let controller = try integer(entry["controller"], key + ".controller", 0...127)
                    guard (note == nil) != (controller == nil) else { throw fail(key, "give a note or a controller (one of them)") }
                    lights.append(MIDIFeedback.Light(state: state, note: note, controller: controller, channel: try integer(entry["channel"], key + ".channel", 1...16) ?? 1))
                }
            }
            if let list = midi["bindings"] {
                guard let items = list as? [Any] else { throw fail("midi.bindings", "expected a list") }
                for (index, item) in items.enumerated() {
                    let key = "midi.bindings[\(index)]"
                    guard let binding = item as? [String: Any] else { throw fail(key, "expected an object") }
                    guard let bound = try action(binding["action"], key + ".action") else { throw fail(key + ".action", "missing") }
                    let channel = try integer(binding["channel"], key + ".channel", 1...16)
                    func required(_ name: String) throws(ControlConfigError) -> Int {
                        guard let value = try integer(binding[name], "\(key).\(name)", 0...127) else { throw fail("\(key).\(name)", "missing") }
                        return value
                    }
                    let event: MIDIBinding.Event
                    switch binding["event"] as? String {
                    case "note": event = .note(try required("note"))
                    case "cc": event = .controlChange(try required("controller"))
                    case "program": event = .program(try required("program"))
                    default: throw fail(key + ".event", "expected \"note\", \"cc\" or \"program\"")
                    }
                    bindings.append(MIDIBinding(event: event, channel: channel, action: bound))
                }
            }
        }

        var switches: [FootSwitchConfig] = []
        if let list = root["footSwitches"] {
            guard let items = list as? [Any] else { throw fail("footSwitches", "expected a list") }
            for (index, item) in items.enumerated() {
                let key = "footSwitches[\(index)]"
                guard let entry = item as? [String: Any] else { throw fail(key, "expected an object") }
                let knownSwitch = ["chip", "line", "activeLow", "bias", "debounceMs", "holdMs", "doubleTapMs", "tap", "hold", "doubleTap"]
                if let stray = entry.keys.sorted().first(where: { !knownSwitch.contains($0) }) { throw fail("\(key).\(stray)", "unknown key; known: \(knownSwitch.joined(separator: ", "))") }
                func text(_ name: String) throws(ControlConfigError) -> String? {
                    guard let value = entry[name] else { return nil }
                    if let string = value as? String, !string.isEmpty { return string }
                    if let number = value as? NSNumber, !isJSONBoolean(value) { return number.stringValue }
                    throw fail("\(key).\(name)", "expected a name or a number")
                }
                guard let chip = try text("chip") else { throw fail("\(key).chip", "missing (e.g. \"gpiochip0\")") }
                guard let line = try text("line") else { throw fail("\(key).line", "missing (e.g. 17 or \"GPIO17\")") }
                var gestures = GestureSettings(tap: try action(entry["tap"], "\(key).tap"), hold: try action(entry["hold"], "\(key).hold"), doubleTap: try action(entry["doubleTap"], "\(key).doubleTap"))
                gestures.debounceNanoseconds = Int64(try integer(entry["debounceMs"], "\(key).debounceMs", 1...500) ?? 30) * 1_000_000
                gestures.holdNanoseconds = Int64(try integer(entry["holdMs"], "\(key).holdMs", 100...10_000) ?? 600) * 1_000_000
                gestures.doubleTapNanoseconds = Int64(try integer(entry["doubleTapMs"], "\(key).doubleTapMs", 50...2_000) ?? 350) * 1_000_000
                var config = FootSwitchConfig(chip: chip, line: line, gestures: gestures)
                if let low = entry["activeLow"] {
                    guard isJSONBoolean(low), let flag = low as? Bool else { throw fail("\(key).activeLow", "expected true or false") }
                    config.activeLow = flag
                }
                if let bias = entry["bias"] {
                    guard let name = bias as? String, ["pull-up", "pull-down", "none"].contains(name) else { throw fail("\(key).bias", "expected \"pull-up\", \"pull-down\" or \"none\"") }
                    config.bias = name
                }
                if gestures.tap == nil && gestures.hold == nil && gestures.doubleTap == nil { throw fail(key, "binds no action (tap, hold or doubleTap)") }
                switches.append(config)
            }
        }
        var quantize = "bar"
        if let value = root["punchQuantize"] {
            guard let name = value as? String, ["immediate", "beat", "bar"].contains(name) else { throw fail("punchQuantize", "expected \"immediate\", \"beat\" or \"bar\"") }
            quantize = name
        }
        return ControlConfig(
            midiSources: sources,
            midi: MIDIInterpreter(bindings: bindings, threshold: threshold, machineControl: machineControl, machineControlDevice: machineControlDevice),
            footSwitches: switches, punchQuantize: quantize, feedback: MIDIFeedback(lights: lights))
    }

    /// Reads and parses a file.
    public static func load(_ path: String) throws(ControlConfigError) -> ControlConfig {
        guard let data = FileManager.default.contents(atPath: path) else { throw ControlConfigError(description: "\(path): cannot read the file") }
        return try parse(data, file: path)
    }
}

extension ControlConfig {
    /// The configuration text with `binding` learned: it replaces any
    /// binding of the same event (and channel), everything else is kept as
    /// it was. Checked by parsing the result.
    public static func learning(_ binding: MIDIBinding, into data: Data, file: String) throws(ControlConfigError) -> Data {
        _ = try parse(data, file: file)
        guard var root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { throw ControlConfigError(description: "\(file): not valid JSON") }
        var midi = root["midi"] as? [String: Any] ?? [:]
        var bindings = midi["bindings"] as? [[String: Any]] ?? []
        var entry: [String: Any] = ["action": binding.action.rawValue]
        switch binding.event {
        case .note(let note): entry["event"] = "note"; entry["note"] = note
        case .controlChange(let controller): entry["event"] = "cc"; entry["controller"] = controller
        case .program(let program): entry["event"] = "program"; entry["program"] = program
        }
        if let channel = binding.channel { entry["channel"] = channel }
        bindings.removeAll { existing in
            existing["event"] as? String == entry["event"] as? String && existing["note"] as? Int == entry["note"] as? Int
                && existing["controller"] as? Int == entry["controller"] as? Int && existing["program"] as? Int == entry["program"] as? Int
                && existing["channel"] as? Int == entry["channel"] as? Int
        }
        bindings.append(entry)
        midi["bindings"] = bindings
        root["midi"] = midi
        guard let result = try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys]) else {
            throw ControlConfigError(description: "\(file): cannot write the configuration")
        }
        _ = try parse(result, file: file)
        return result + Data([10])
    }
}
