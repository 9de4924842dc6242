/// A MIDI message, decoded from the byte stream.
public enum MIDIMessage: Hashable, Sendable {
    /// Note on (velocity > 0); channel 1…16.
    case noteOn(channel: Int, note: Int, velocity: Int)
    /// Note off (or note on with velocity 0).
    case noteOff(channel: Int, note: Int)
    /// Control change.
    case controlChange(channel: Int, controller: Int, value: Int)
    /// Program change.
    case programChange(channel: Int, program: Int)
    /// A complete system-exclusive message, F0 … F7 included.
    case systemExclusive([UInt8])
    /// A realtime byte (clock, start, continue, stop, active sensing, reset).
    case realtime(UInt8)
}

/// Decodes a raw MIDI byte stream, one byte at a time: running status,
/// realtime bytes anywhere (even inside a sysex), system common messages
/// cancelling running status, sysex split across reads, stray data bytes
/// ignored. Never traps, whatever the bytes (fuzzed).
public struct MIDIDecoder: Sendable {
    /// Longest sysex kept; longer ones are dropped whole.
    public static let maximumSysexBytes = 512
    var status: UInt8 = 0
    var data: [UInt8] = []
    var sysex: [UInt8] = []
    var inSysex = false
    var sysexOverflow = false

    /// A decoder waiting for a status byte.
    public init() {}

    /// Feeds one byte; returns the message it completes, if any.
    public mutating func feed(_ byte: UInt8) -> MIDIMessage? {
        if byte >= 0xF8 { return .realtime(byte) }  // never disturbs anything
        if inSysex {
            if byte == 0xF7 {
                inSysex = false
                defer { sysex.removeAll(keepingCapacity: true) }
                if sysexOverflow { return nil }
                sysex.append(byte)
                return .systemExclusive(sysex)
            }
            if byte < 0x80 {
                if sysex.count < Self.maximumSysexBytes { sysex.append(byte) } else { sysexOverflow = true }
                return nil
            }
            // Any other status byte ends an unterminated sysex (dropped) and is itself decoded.
            inSysex = false
            sysex.removeAll(keepingCapacity: true)
        }
        if byte == 0xF0 {
            inSysex = true
            sysexOverflow = false
            sysex = [byte]
            status = 0
            return nil
        }
        if byte >= 0x80 {
            // System common (F1–F7) cancels running status; its data is skipped.
            status = byte < 0xF0 ? byte : 0
            data.removeAll(keepingCapacity: true)
            return nil
        }
        guard status != 0 else { return nil }  // a data byte with no status: ignored
        data.append(byte)
        let kind = status & 0xF0
        let needed = kind == 0xC0 || kind == 0xD0 ? 1 : 2
        guard data.count == needed else { return nil }
        defer { data.removeAll(keepingCapacity: true) }  // running status: the status stays
        let channel = Int(status & 0x0F) + 1
        switch kind {
        case 0x90: return data[1] == 0 ? .noteOff(channel: channel, note: Int(data[0])) : .noteOn(channel: channel, note: Int(data[0]), velocity: Int(data[1]))
        case 0x80: return .noteOff(channel: channel, note: Int(data[0]))
        case 0xB0: return .controlChange(channel: channel, controller: Int(data[0]), value: Int(data[1]))
        case 0xC0: return .programChange(channel: channel, program: Int(data[0]))
        default: return nil  // aftertouch, pitch bend: not used for control
        }
    }

    /// Feeds bytes; returns the messages they complete, in order.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [MIDIMessage] where Bytes.Element == UInt8 {
        bytes.compactMap { feed($0) }
    }
}

/// A MIDI Machine Control command (`F0 7F <device> 06 <command> … F7`).
public struct MMCCommand: Hashable, Sendable {
    /// What it asks for.
    public enum Kind: Hashable, Sendable {
        case stop, play, deferredPlay, recordStrobe, recordExit, pause
        /// Locate to a time code (hours, minutes, seconds, frames).
        case locate(hours: Int, minutes: Int, seconds: Int, frames: Int)
    }

    /// Device id it was sent to (0x7F: all).
    public var device: Int
    /// The command.
    public var kind: Kind
    /// A locate's frame rate (the hours byte's bits 5–6: 24, 25, 29.97, 30).
    public var framesPerSecond = 30.0

    /// Where a locate points, milliseconds from the start; nil for other commands.
    public var locateMilliseconds: Int? {
        guard case .locate(let hours, let minutes, let seconds, let frames) = kind else { return nil }
        return ((hours * 60 + minutes) * 60 + seconds) * 1_000 + Int((Double(frames) * 1_000 / framesPerSecond).rounded(.down))
    }

    /// Parses an MMC sysex; nil for any other sysex or an unknown command.
    public static func parse(_ sysex: [UInt8]) -> MMCCommand? {
        guard sysex.count >= 6, sysex[0] == 0xF0, sysex[1] == 0x7F, sysex[3] == 0x06, sysex.last == 0xF7 else { return nil }
        let device = Int(sysex[2])
        switch sysex[4] {
        case 0x01: return MMCCommand(device: device, kind: .stop)
        case 0x02: return MMCCommand(device: device, kind: .play)
        case 0x03: return MMCCommand(device: device, kind: .deferredPlay)
        case 0x06: return MMCCommand(device: device, kind: .recordStrobe)
        case 0x07: return MMCCommand(device: device, kind: .recordExit)
        case 0x09: return MMCCommand(device: device, kind: .pause)
        case 0x44:
            // F0 7F dev 06 44 06 01 hr mn sc fr ff F7: hours carry the rate in bits 5–6.
            guard sysex.count >= 12, sysex[5] == 0x06, sysex[6] == 0x01 else { return nil }
            // A time code that cannot be one (24 h, 60 min, 60 s, 30 frames or more) is refused.
            guard sysex[7] & 0x1F < 24, sysex[8] < 60, sysex[9] < 60, sysex[10] & 0x1F < 30 else { return nil }
            var command = MMCCommand(device: device, kind: .locate(hours: Int(sysex[7] & 0x1F), minutes: Int(sysex[8]), seconds: Int(sysex[9]), frames: Int(sysex[10] & 0x1F)))
            command.framesPerSecond = [24, 25, 29.97, 30][Int(sysex[7] >> 5 & 0x03)]
            return command
        default: return nil
        }
    }

    /// Whether a box with id `id` should obey it.
    public func isFor(device id: Int) -> Bool { device == 0x7F || device == id }
}
