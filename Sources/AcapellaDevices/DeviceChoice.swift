/// Which audio device to open, from its words (`--device`, or `device` in
/// the settings): checked when it is read, opened when it is needed.
public enum DeviceChoice: Hashable, Sendable {
    /// The first sound card, else the simulated room (and the caller says so).
    case automatic
    /// The simulated room (`sim[:latency=…,period=…,speed=…]`).
    case simulated(SimulatedRoom.Options)
    /// An ALSA device (`alsa[:NAME|PLAYBACK|CAPTURE][@period=…]`).
    case alsa(ALSADevice.Options)

    /// The words' meaning; nil words are `automatic`.
    public init(parsing text: String?) throws(DeviceError) {
        guard let text else {
            self = .automatic
            return
        }
        if text == "sim" || text.hasPrefix("sim:") {
            self = .simulated(try SimulatedRoom.Options(parsing: text))
        } else if text == "alsa" || text.hasPrefix("alsa:") {
            self = .alsa(try ALSADevice.Options(parsing: text))
        } else {
            throw DeviceError(.configuration, "unknown device '\(text)'; use sim[:latency=FRAMES,…] or alsa[:NAME][@period=N,periods=N,rate=HZ]")
        }
    }

    /// The first sound card, else the room: what `automatic` opens.
    public var resolved: DeviceChoice {
        guard case .automatic = self else { return self }
        return DeviceInventory.scan().cards.isEmpty ? .simulated(SimulatedRoom.Options()) : .alsa(ALSADevice.Options())
    }

    /// The same device capturing at least `inputs` inputs apart (the parts
    /// recorded at once): the room gets that many microphones (unless it
    /// was given its number), a card is
    /// opened with that many capture channels (refused there when it has fewer).
    public func capturing(inputs: Int) -> DeviceChoice {
        switch resolved {
        case .simulated(var options):
            // A room given its microphones (`sim:inputs=2`) keeps them;
            // one not given them gets as many as a set asks for, now and later.
            if !options.inputsGiven && (options.inputs == 1 || options.growable) {
                options.inputs = inputs
                options.growable = true
            }
            return .simulated(options)
        case .alsa(var options):
            options.inputs = max(options.inputs, inputs)
            return .alsa(options)
        case .automatic: return self
        }
    }

    /// Opens the device (`automatic` resolved first).
    public func open() throws(DeviceError) -> any AudioDevice {
        switch resolved {
        case .simulated(let options): return try SimulatedRoom(options)
        case .alsa(let options): return try ALSADevice(options)
        case .automatic: return try SimulatedRoom()
        }
    }
}
