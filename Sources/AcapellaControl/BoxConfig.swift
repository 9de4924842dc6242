public import Foundation

/// The appliance's settings (`Config/acapella.json` ships the defaults;
/// `/etc/acapella/acapella.json` overrides them on the box). Every key is
/// optional; an unknown key or a wrong value is a one-line error naming
/// the file and the key.
public struct BoxConfig: Hashable, Sendable {
    /// `alsa[:NAME][@period=…]`, `sim[:…]`, or nil: the first card, else the room.
    public var device: String?
    /// Where projects, calibrations and learned controls live (nil: the data directory).
    public var dataDirectory: String?
    /// Count-in measures before a take (0–4).
    public var countIn = 1
    /// The metronome while playing.
    public var metronome = false
    /// Where punches land: immediate, beat or bar (overrides the controls file).
    public var quantize: String?
    /// The part to record first (1-based).
    public var part = 2
    /// The song to start with (a path, or the start of a file name).
    public var song: String?
    /// Draw the console readout when a terminal is attached.
    public var consoleReadout = true
    /// LCDd's address (nil host: no LCD).
    public var lcdHost: String? = "127.0.0.1"
    public var lcdPort = 13_666

    /// The defaults.
    public init() {}

    /// What the safe-shutdown action runs once everything is on disk (nil:
    /// only quit). `"powerOff": true` is `systemctl poweroff`; a list of
    /// strings is a command of your own.
    public var powerOffCommand: [String]?

    static let keys = ["device", "dataDirectory", "countIn", "metronome", "quantize", "part", "song", "readouts", "powerOff", "comment"]

    /// Parses a settings file.
    public static func parse(_ data: Data, file: String) throws(ControlConfigError) -> BoxConfig {
        func fail(_ key: String, _ message: String) -> ControlConfigError { ControlConfigError(description: "\(file): \(key): \(message)") }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ControlConfigError(description: "\(file): not a JSON object (truncated or damaged?)")
        }
        if let stray = root.keys.sorted().first(where: { !keys.contains($0) }) { throw fail(stray, "unknown key; known: \(keys.joined(separator: ", "))") }
        var config = BoxConfig()
        func text(_ key: String) throws(ControlConfigError) -> String? {
            guard let value = root[key] else { return nil }
            guard let string = value as? String, !string.isEmpty else { throw fail(key, "expected a non-empty string") }
            return string
        }
        func number(_ key: String, _ range: ClosedRange<Int>) throws(ControlConfigError) -> Int? {
            guard let value = root[key] else { return nil }
            guard !isJSONBoolean(value), let number = value as? NSNumber, let int = Int(exactly: number.doubleValue), range.contains(int) else {
                throw fail(key, "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return int
        }
        config.device = try text("device")
        if let device = config.device, !(device == "sim" || device.hasPrefix("sim:") || device == "alsa" || device.hasPrefix("alsa:")) {
            throw fail("device", "expected \"alsa\", \"alsa:NAME\", \"sim\" or \"sim:…\", not '\(device)'")
        }
        config.dataDirectory = try text("dataDirectory")
        config.countIn = try number("countIn", 0...4) ?? 1
        if let value = root["metronome"] {
            guard isJSONBoolean(value), let flag = value as? Bool else { throw fail("metronome", "expected true or false") }
            config.metronome = flag
        }
        if let quantize = try text("quantize") {
            guard ["immediate", "beat", "bar"].contains(quantize) else { throw fail("quantize", "expected \"immediate\", \"beat\" or \"bar\"") }
            config.quantize = quantize
        }
        config.part = try number("part", 1...64) ?? 2
        if let value = root["powerOff"] {
            if isJSONBoolean(value), let flag = value as? Bool {
                config.powerOffCommand = flag ? ["systemctl", "poweroff"] : nil
            } else if let command = value as? [String], !command.isEmpty, !command[0].isEmpty {
                config.powerOffCommand = command
            } else {
                throw fail("powerOff", "expected true, false or a command as a list of strings")
            }
        }
        config.song = try text("song")
        if let value = root["readouts"] {
            guard let readouts = value as? [String: Any] else { throw fail("readouts", "expected an object with console and lcd") }
            if let stray = readouts.keys.sorted().first(where: { !["console", "lcd"].contains($0) }) { throw fail("readouts.\(stray)", "unknown key; known: console, lcd") }
            if let console = readouts["console"] {
                guard isJSONBoolean(console), let flag = console as? Bool else { throw fail("readouts.console", "expected true or false") }
                config.consoleReadout = flag
            }
            if let lcd = readouts["lcd"] {
                if isJSONBoolean(lcd), let flag = lcd as? Bool, !flag {
                    config.lcdHost = nil
                } else if let address = lcd as? String {
                    let parts = address.split(separator: ":")
                    guard parts.count == 2, let port = UInt16(parts[1]), port > 0 else { throw fail("readouts.lcd", "expected \"HOST:PORT\" or false") }
                    config.lcdHost = String(parts[0])
                    config.lcdPort = Int(port)
                } else {
                    throw fail("readouts.lcd", "expected \"HOST:PORT\" or false")
                }
            }
        }
        return config
    }
}
