internal import CALSA
import Foundation

/// What the box can talk to: sound cards and their PCM devices with what
/// each can do, MIDI ports, GPIO chips.
public struct DeviceInventory: Sendable {
    /// One direction of a PCM device and what it accepts.
    public struct Stream: Sendable {
        /// "playback" or "capture".
        public var direction: String
        /// Lowest and highest rate, Hz.
        public var rates: ClosedRange<Int>
        /// Channel counts.
        public var channels: ClosedRange<Int>
        /// Sample formats acapella can use.
        public var formats: [String]
        /// Period sizes, frames.
        public var periods: ClosedRange<Int>
    }

    /// A PCM device on a card.
    public struct PCM: Sendable {
        /// `hw:CARD=Name,DEV=0`.
        public var name: String
        /// Its description.
        public var description: String
        /// Directions that could be opened (busy ones are listed as such).
        public var streams: [Stream]
        /// Why a direction could not be examined ("busy", …).
        public var notes: [String]
    }

    /// A sound card.
    public struct Card: Sendable {
        /// Index.
        public var index: Int
        /// Short id (`CARD=` name).
        public var id: String
        /// Long name.
        public var name: String
        /// Its PCM devices.
        public var devices: [PCM]
    }

    /// Sound cards found.
    public var cards: [Card]
    /// GPIO chips (`/dev/gpiochip*`) with their lines.
    public var gpioChips: [GPIOChipInfo]
    /// MIDI ports, or why there are none.
    public var midiPorts: Result<[MIDIPort], DeviceError>

    /// Looks around. The corresponding C functions are `snd_card_next`,
    /// `snd_ctl_open`, `snd_ctl_card_info`, `snd_ctl_pcm_next_device`,
    /// `snd_pcm_open` and the `snd_pcm_hw_params_get_*_min/max` family.
    public static func scan() -> DeviceInventory {
        acapella_alsa_silence_errors()
        var cards: [Card] = []
        var index: Int32 = -1
        while snd_card_next(&index) == 0 && index >= 0 {
            var control: OpaquePointer?
            guard snd_ctl_open(&control, "hw:\(index)", 0) == 0, let control else { continue }
            defer { snd_ctl_close(control) }
            var info: OpaquePointer?
            snd_ctl_card_info_malloc(&info)
            defer { snd_ctl_card_info_free(info) }
            guard snd_ctl_card_info(control, info) == 0 else { continue }
            let id = String(cString: snd_ctl_card_info_get_id(info))
            let name = String(cString: snd_ctl_card_info_get_name(info))
            var devices: [PCM] = []
            var device: Int32 = -1
            while snd_ctl_pcm_next_device(control, &device) == 0 && device >= 0 {
                let pcmName = "hw:CARD=\(id),DEV=\(device)"
                var pcm = PCM(name: pcmName, description: "", streams: [], notes: [])
                for (direction, stream) in [("playback", SND_PCM_STREAM_PLAYBACK), ("capture", SND_PCM_STREAM_CAPTURE)] {
                    var pcmInfo: OpaquePointer?
                    snd_pcm_info_malloc(&pcmInfo)
                    defer { snd_pcm_info_free(pcmInfo) }
                    snd_pcm_info_set_device(pcmInfo, UInt32(device))
                    snd_pcm_info_set_subdevice(pcmInfo, 0)
                    snd_pcm_info_set_stream(pcmInfo, stream)
                    guard snd_ctl_pcm_info(control, pcmInfo) == 0 else { continue }
                    pcm.description = String(cString: snd_pcm_info_get_name(pcmInfo))
                    switch capabilities(pcmName, stream: stream) {
                    case .success(var found):
                        found.direction = direction
                        pcm.streams.append(found)
                    case .failure(let reason):
                        pcm.notes.append("\(direction): \(reason.description)")
                    }
                }
                devices.append(pcm)
            }
            cards.append(Card(index: Int(index), id: id, name: name, devices: devices))
        }
        return DeviceInventory(cards: cards, gpioChips: GPIOSwitch.chips(), midiPorts: MIDIInput.listPorts())
    }

    static func capabilities(_ name: String, stream: snd_pcm_stream_t) -> Result<Stream, DeviceError> {
        var pcm: OpaquePointer?
        let opened = snd_pcm_open(&pcm, name, stream, Int32(SND_PCM_NONBLOCK))
        guard opened == 0, let pcm else {
            return .failure(DeviceError(.configuration, opened == -EBUSY ? "busy (in use by another program)" : String(cString: snd_strerror(opened))))
        }
        defer { snd_pcm_close(pcm) }
        var params: OpaquePointer?
        snd_pcm_hw_params_malloc(&params)
        defer { snd_pcm_hw_params_free(params) }
        guard snd_pcm_hw_params_any(pcm, params) >= 0 else { return .failure(DeviceError(.configuration, "cannot read its parameters")) }
        var rateLow: UInt32 = 0, rateHigh: UInt32 = 0, channelsLow: UInt32 = 0, channelsHigh: UInt32 = 0
        var periodLow: snd_pcm_uframes_t = 0, periodHigh: snd_pcm_uframes_t = 0
        var direction: Int32 = 0
        snd_pcm_hw_params_get_rate_min(params, &rateLow, &direction)
        snd_pcm_hw_params_get_rate_max(params, &rateHigh, &direction)
        snd_pcm_hw_params_get_channels_min(params, &channelsLow)
        snd_pcm_hw_params_get_channels_max(params, &channelsHigh)
        snd_pcm_hw_params_get_period_size_min(params, &periodLow, &direction)
        snd_pcm_hw_params_get_period_size_max(params, &periodHigh, &direction)
        let formats = SampleFormat.allCases.filter { snd_pcm_hw_params_test_format(pcm, params, $0.alsa) == 0 }.map(\.rawValue)
        return .success(Stream(
            direction: "", rates: Int(rateLow)...Int(max(rateLow, rateHigh)), channels: Int(channelsLow)...Int(max(channelsLow, channelsHigh)),
            formats: formats, periods: Int(periodLow)...Int(max(periodLow, periodHigh))))
    }

    /// The report `acapella devices` prints.
    public var report: String {
        var lines: [String] = []
        if cards.isEmpty {
            lines.append("sound cards: none (the box uses the simulated room)")
        } else {
            lines.append("sound cards:")
            for card in cards {
                lines.append("  card \(card.index): \(card.id) — \(card.name)")
                for pcm in card.devices {
                    lines.append("    \(pcm.name)  \(pcm.description)")
                    for stream in pcm.streams {
                        lines.append("      \(stream.direction): \(stream.rates.lowerBound)–\(stream.rates.upperBound) Hz, \(stream.channels.lowerBound)–\(stream.channels.upperBound) channels, \(stream.formats.isEmpty ? "no usable format" : stream.formats.joined(separator: " ")), periods \(stream.periods.lowerBound)–\(stream.periods.upperBound) frames")
                    }
                    for note in pcm.notes { lines.append("      \(note)") }
                }
            }
        }
        switch midiPorts {
        case .success(let ports) where ports.isEmpty: lines.append("MIDI ports: none")
        case .success(let ports):
            lines.append("MIDI ports:")
            lines += ports.map { "  \($0.description)" }
        case .failure(let error): lines.append("MIDI ports: none (\(error.description))")
        }
        if gpioChips.isEmpty {
            lines.append("GPIO chips: none")
        } else {
            lines.append("GPIO chips:")
            for chip in gpioChips {
                let named = chip.lines.enumerated().filter { !$0.element.isEmpty }.map { "\($0.offset)=\($0.element)" }
                lines.append("  \(chip.name) [\(chip.label)], \(chip.lines.count) lines\(named.isEmpty ? "" : ": " + named.joined(separator: " "))")
            }
        }
        return lines.joined(separator: "\n")
    }
}
