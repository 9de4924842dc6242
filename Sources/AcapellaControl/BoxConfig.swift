public import AcapellaEngine
public import Foundation
import AcapellaJSON

/// The appliance's settings (`Config/acapella.json` ships the defaults;
/// `/etc/acapella/acapella.json` overrides them on the box), read with
/// `JSONDecoder`. Every key is optional; an unknown key or a wrong value
/// is a one-line error naming the file and the key.
public struct BoxConfig: Hashable, Sendable {
    /// Free text for the reader of the file.
    public var comment: String?
    /// `alsa[:NAME][@period=…]`, `sim[:…]`, or nil: the first card, else the room.
    public var device: String?
    /// Where projects, calibrations and learned controls live (nil: the data directory).
    public var dataDirectory: String?
    /// Count-in measures before a take (0–4).
    public var countIn = 1
    /// The metronome while playing.
    public var metronome = false
    /// Short sounds through the output when a punch goes in or out and a
    /// take is kept or discarded (the shipped settings turn them on).
    public var confirmations = false
    /// Where punches land (overrides the controls file).
    public var quantize: Quantize?
    /// The part to record first (1-based).
    public var part = 2
    /// The recording set: parts recorded at once, each from its own input
    /// (a quartet on a 4-input interface), by part name or number →
    /// input (1-based). Empty: one part, from the (mono) input.
    public var together: [String: Int] = [:]
    /// The song to start with (a path, or the start of a file name).
    public var song: String?
    /// Who sings on this box, kept with each take (nil: not said).
    public var singer: String?
    /// Where removable drives are mounted (USB sticks are looked for
    /// there); empty (`"usb": false`): not looked for.
    public var usbRoots = ["/media", "/run/media"]
    /// Draw the console readout when a terminal is attached.
    public var consoleReadout = true
    /// LCDd's address (nil host: no LCD).
    public var lcdHost: String? = "127.0.0.1"
    public var lcdPort = 13_666
    /// What the safe-shutdown action runs once everything is on disk (nil:
    /// only quit). `"powerOff": true` is `systemctl poweroff`; a list of
    /// strings is a command of your own.
    public var powerOffCommand: [String]?
    /// The web page: on (the default) or off (`"web": false`), its port,
    /// the address to listen on (nil: every interface) and what visitors
    /// who have not paired may see.
    public var webEnabled = true
    public var webPort = 8080
    public var webBind: String?
    public var webGuests = Guests.none
    /// What visitors who have not paired may do: watch (`view`) or nothing.
    public enum Guests: String, Codable, Hashable, Sendable {
        case view, none
    }
    /// The name announced over mDNS (`NAME.local`); nil: not announced.
    public var webName: String? = "acapella"

    /// The defaults.
    public init() {}

    /// Parses a settings file.
    public static func parse(_ data: Data, file: String) throws(ControlConfigError) -> BoxConfig {
        do { return try JSONFile.decode(BoxConfig.self, from: data, file: file).get() } catch { throw ControlConfigError(description: error.description) }
    }

    /// The file's text for these settings.
    public func serialized() -> Data {
        JSONFile.encode(self)
    }
}

extension BoxConfig: Codable {
    enum Keys: String, CodingKey, CaseIterable {
        case device, dataDirectory, countIn, metronome, confirmations, quantize, part, together, song, singer, usb, readouts, powerOff, web, comment
    }

    enum WebKeys: String, CodingKey, CaseIterable {
        case port, bind, guests, name
    }

    enum ReadoutKeys: String, CodingKey, CaseIterable {
        case console, lcd
    }

    /// Reads the settings file's shape (docs/reference/settings.md).
    public init(from decoder: any Decoder) throws {
        guard (try? decoder.container(keyedBy: AnyCodingKey.self)) != nil else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a JSON object (truncated or damaged?)"))
        }
        try decoder.rejectUnknownKeys(Keys.self)
        let container = try decoder.container(keyedBy: Keys.self)
        func text(_ key: Keys) throws -> String? {
            guard container.contains(key) else { return nil }
            guard let value = try? container.decode(String.self, forKey: key), !value.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "expected a non-empty string")
            }
            return value
        }
        comment = try container.decodeIfPresent(String.self, forKey: .comment)
        device = try text(.device)
        if let device, !(device == "sim" || device.hasPrefix("sim:") || device == "alsa" || device.hasPrefix("alsa:")) {
            throw DecodingError.dataCorruptedError(forKey: .device, in: container, debugDescription: "expected \"alsa\", \"alsa:NAME\", \"sim\" or \"sim:…\", not '\(device)'")
        }
        dataDirectory = try text(.dataDirectory)
        countIn = try container.decodeWholeNumber(.countIn, in: 0...4) ?? 1
        metronome = try container.decodeFlag(.metronome) ?? false
        confirmations = try container.decodeFlag(.confirmations) ?? false
        quantize = try container.decodeIfPresent(Quantize.self, forKey: .quantize)
        part = try container.decodeWholeNumber(.part, in: 1...64) ?? 2
        if container.contains(.together) {
            let expected = "expected an object of parts (names or numbers) and their inputs from 1 to 32, a microphone each, like {\"Soprano\": 1, \"Alto\": 2}"
            guard let set = try? container.decode([String: Int].self, forKey: .together), !set.isEmpty, set.count <= 32,
                  set.keys.allSatisfy({ !$0.trimmingCharacters(in: .whitespaces).isEmpty && $0.count <= 64 }),
                  set.values.allSatisfy({ (1...32).contains($0) }), Set(set.values).count == set.count,
                  Set(set.keys.map { $0.lowercased() }).count == set.count
            else { throw DecodingError.dataCorruptedError(forKey: .together, in: container, debugDescription: expected) }
            together = set
        }
        song = try text(.song)
        singer = try text(.singer)
        if let singer, singer.count > 64 || singer.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw DecodingError.dataCorruptedError(forKey: .singer, in: container, debugDescription: "expected a name of one line, up to 64 characters")
        }
        if container.contains(.usb) {
            if let flag = try? container.decode(Bool.self, forKey: .usb) {
                usbRoots = flag ? usbRoots : []
            } else if let roots = try? container.decode([String].self, forKey: .usb), roots.allSatisfy({ $0.hasPrefix("/") && $0.count > 1 }) {
                usbRoots = roots
            } else {
                throw DecodingError.dataCorruptedError(forKey: .usb, in: container, debugDescription: "expected true, false or a list of folders where drives are mounted, like [\"/media\"]")
            }
        }
        if container.contains(.powerOff) {
            if let flag = try? container.decode(Bool.self, forKey: .powerOff) {
                powerOffCommand = flag ? ["systemctl", "poweroff"] : nil
            } else if let command = try? container.decode([String].self, forKey: .powerOff), !command.isEmpty, !command[0].isEmpty {
                powerOffCommand = command
            } else {
                throw DecodingError.dataCorruptedError(forKey: .powerOff, in: container, debugDescription: "expected true, false or a command as a list of strings")
            }
        }
        if container.contains(.web) {
            if let flag = try? container.decode(Bool.self, forKey: .web) {
                webEnabled = flag
            } else {
                let webDecoder = try container.superDecoder(forKey: .web)
                guard (try? webDecoder.container(keyedBy: AnyCodingKey.self)) != nil else {
                    throw DecodingError.dataCorruptedError(forKey: .web, in: container, debugDescription: "expected false or an object with port, bind, guests and name")
                }
                try webDecoder.rejectUnknownKeys(WebKeys.self)
                let web = try webDecoder.container(keyedBy: WebKeys.self)
                webPort = try web.decodeWholeNumber(.port, in: 1...65_535) ?? 8080
                if web.contains(.bind) {
                    guard let bind = try? web.decode(String.self, forKey: .bind), !bind.isEmpty else {
                        throw DecodingError.dataCorruptedError(forKey: .bind, in: web, debugDescription: "expected an IP address such as \"0.0.0.0\" or \"192.168.1.20\"")
                    }
                    webBind = bind
                }
                if web.contains(.guests) {
                    guard let guests = try? web.decode(Guests.self, forKey: .guests) else {
                        throw DecodingError.dataCorruptedError(forKey: .guests, in: web, debugDescription: "expected \"view\" or \"none\"")
                    }
                    webGuests = guests
                }
                if web.contains(.name) {
                    if let off = try? web.decode(Bool.self, forKey: .name), !off {
                        webName = nil
                    } else {
                        guard let name = try? web.decode(String.self, forKey: .name), (1...63).contains(name.utf8.count),
                              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }), !name.hasPrefix("-"), !name.hasSuffix("-") else {
                            throw DecodingError.dataCorruptedError(forKey: .name, in: web,
                                                                   debugDescription: "expected a host name of letters, digits and inner hyphens (up to 63), or false")
                        }
                        webName = name.lowercased()
                    }
                }
            }
        }
        if container.contains(.readouts) {
            let readoutsDecoder = try container.superDecoder(forKey: .readouts)
            guard (try? readoutsDecoder.container(keyedBy: AnyCodingKey.self)) != nil else {
                throw DecodingError.dataCorruptedError(forKey: .readouts, in: container, debugDescription: "expected an object with console and lcd")
            }
            try readoutsDecoder.rejectUnknownKeys(ReadoutKeys.self)
            let readouts = try readoutsDecoder.container(keyedBy: ReadoutKeys.self)
            consoleReadout = try readouts.decodeFlag(.console) ?? true
            if readouts.contains(.lcd) {
                if let flag = try? readouts.decode(Bool.self, forKey: .lcd), !flag {
                    lcdHost = nil
                } else if let address = try? readouts.decode(String.self, forKey: .lcd), let colon = address.lastIndex(of: ":"),
                          !address[..<colon].isEmpty, let port = UInt16(address[address.index(after: colon)...]), port > 0 {
                    lcdHost = String(address[..<colon])
                    lcdPort = Int(port)
                } else {
                    throw DecodingError.dataCorruptedError(forKey: .lcd, in: readouts, debugDescription: "expected \"HOST:PORT\" or false")
                }
            }
        }
    }

    /// The same shape back.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(comment, forKey: .comment)
        try container.encodeIfPresent(device, forKey: .device)
        try container.encodeIfPresent(dataDirectory, forKey: .dataDirectory)
        try container.encode(countIn, forKey: .countIn)
        try container.encode(metronome, forKey: .metronome)
        try container.encode(confirmations, forKey: .confirmations)
        try container.encodeIfPresent(quantize, forKey: .quantize)
        try container.encode(part, forKey: .part)
        if !together.isEmpty { try container.encode(together, forKey: .together) }
        try container.encodeIfPresent(song, forKey: .song)
        try container.encodeIfPresent(singer, forKey: .singer)
        try container.encode(usbRoots, forKey: .usb)
        if powerOffCommand == ["systemctl", "poweroff"] {
            try container.encode(true, forKey: .powerOff)
        } else if let powerOffCommand {
            try container.encode(powerOffCommand, forKey: .powerOff)
        }
        if webEnabled {
            var web = container.nestedContainer(keyedBy: WebKeys.self, forKey: .web)
            try web.encode(webPort, forKey: .port)
            try web.encodeIfPresent(webBind, forKey: .bind)
            try web.encode(webGuests, forKey: .guests)
            if let webName { try web.encode(webName, forKey: .name) } else { try web.encode(false, forKey: .name) }
        } else {
            try container.encode(false, forKey: .web)
        }
        var readouts = container.nestedContainer(keyedBy: ReadoutKeys.self, forKey: .readouts)
        try readouts.encode(consoleReadout, forKey: .console)
        if let lcdHost { try readouts.encode("\(lcdHost):\(lcdPort)", forKey: .lcd) } else { try readouts.encode(false, forKey: .lcd) }
    }
}
