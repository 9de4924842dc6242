internal import CALSA
import Foundation

/// A MIDI port as the ALSA sequencer lists it (`aconnect -l`).
public struct MIDIPort: Hashable, Sendable {
    /// Client number.
    public var client: Int
    /// Port number.
    public var port: Int
    /// Client name.
    public var clientName: String
    /// Port name.
    public var portName: String
    /// A hardware port (not a software client like a synth).
    public var isHardware: Bool

    /// `20:0  nanoKONTROL2 — nanoKONTROL2 MIDI 1`.
    public var description: String { "\(client):\(port)  \(clientName) — \(portName)\(isHardware ? "" : " (software)")" }
}

/// The box's MIDI input through the ALSA sequencer: a client named
/// "Acapella" with a writable, subscribable input port, connected at start
/// to every hardware source (or those named) and to new ones as they
/// appear (it listens to the System Announce port). Events are turned back
/// into MIDI bytes (`snd_midi_event_decode`) so one decoder handles them
/// all. Optional feedback goes out through an output port.
public final class MIDIInput {
    private let sequencer: OpaquePointer
    private let inputPort: Int32
    private let outputPort: Int32
    private let parser: OpaquePointer
    private let sources: [String]?
    /// Ports connected so far.
    public private(set) var connected: [MIDIPort] = []

    /// Opens the sequencer. Throws a clear message when there is none (no
    /// `/dev/snd/seq`): the box then runs on without MIDI.
    public init(clientName: String = "Acapella", sources: [String]? = nil) throws(DeviceError) {
        acapella_alsa_silence_errors()
        var handle: OpaquePointer?
        let opened = snd_seq_open(&handle, "default", Int32(SND_SEQ_OPEN_DUPLEX), 0)
        guard opened == 0, let handle else {
            throw DeviceError(.configuration, "MIDI: no ALSA sequencer (\(String(cString: snd_strerror(opened)))); is /dev/snd/seq there (modprobe snd-seq)? The box runs on without MIDI")
        }
        sequencer = handle
        snd_seq_set_client_name(handle, clientName)
        let capabilities = UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE)
        let kind = UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION)
        inputPort = snd_seq_create_simple_port(handle, "Acapella in", capabilities, kind)
        outputPort = snd_seq_create_simple_port(handle, "Acapella feedback", UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ), kind)
        var midiParser: OpaquePointer?
        guard inputPort >= 0, outputPort >= 0, snd_midi_event_new(1_024, &midiParser) == 0, let midiParser else {
            snd_seq_close(handle)
            throw DeviceError(.configuration, "MIDI: cannot create the sequencer ports")
        }
        parser = midiParser
        snd_midi_event_no_status(parser, 1)  // full status bytes: the decoder does running status itself
        self.sources = sources
        // New ports announce themselves on System:Announce.
        snd_seq_connect_from(handle, inputPort, Int32(SND_SEQ_CLIENT_SYSTEM), Int32(SND_SEQ_PORT_SYSTEM_ANNOUNCE))
        for port in Self.ports(handle) where wanted(port) { connect(port) }
    }

    deinit {
        snd_midi_event_free(parser)
        snd_seq_close(sequencer)
    }

    private func wanted(_ port: MIDIPort) -> Bool {
        guard port.client != Int(snd_seq_client_id(sequencer)), port.client != Int(SND_SEQ_CLIENT_SYSTEM) else { return false }
        if let sources { return sources.contains { port.clientName.contains($0) || port.portName.contains($0) || "\(port.client):\(port.port)" == $0 } }
        return port.isHardware
    }

    private func connect(_ port: MIDIPort) {
        if snd_seq_connect_from(sequencer, inputPort, Int32(port.client), Int32(port.port)) == 0 { connected.append(port) }
    }

    /// Every readable, subscribable port. The corresponding C functions are
    /// `snd_seq_query_next_client` and `snd_seq_query_next_port`.
    static func ports(_ sequencer: OpaquePointer) -> [MIDIPort] {
        var ports: [MIDIPort] = []
        var client: OpaquePointer?
        var port: OpaquePointer?
        snd_seq_client_info_malloc(&client)
        snd_seq_port_info_malloc(&port)
        defer {
            snd_seq_client_info_free(client)
            snd_seq_port_info_free(port)
        }
        snd_seq_client_info_set_client(client, -1)
        while snd_seq_query_next_client(sequencer, client) >= 0 {
            let number = snd_seq_client_info_get_client(client)
            snd_seq_port_info_set_client(port, number)
            snd_seq_port_info_set_port(port, -1)
            while snd_seq_query_next_port(sequencer, port) >= 0 {
                let capability = snd_seq_port_info_get_capability(port)
                let readable = UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ)
                guard capability & readable == readable else { continue }
                let type = snd_seq_port_info_get_type(port)
                ports.append(MIDIPort(
                    client: Int(number), port: Int(snd_seq_port_info_get_port(port)),
                    clientName: String(cString: snd_seq_client_info_get_name(client)), portName: String(cString: snd_seq_port_info_get_name(port)),
                    isHardware: type & UInt32(SND_SEQ_PORT_TYPE_HARDWARE | SND_SEQ_PORT_TYPE_PORT) != 0))
            }
        }
        return ports
    }

    /// The ports there are now (for `acapella devices`), or the reason there are none.
    public static func listPorts() -> Result<[MIDIPort], DeviceError> {
        acapella_alsa_silence_errors()
        var handle: OpaquePointer?
        let opened = snd_seq_open(&handle, "default", Int32(SND_SEQ_OPEN_DUPLEX), 0)
        guard opened == 0, let handle else {
            return .failure(DeviceError(.configuration, "no ALSA sequencer (\(String(cString: snd_strerror(opened))))"))
        }
        defer { snd_seq_close(handle) }
        return .success(ports(handle))
    }

    /// Waits up to `timeoutMilliseconds` for events; returns their MIDI
    /// bytes (and connects new hardware ports announced meanwhile). The
    /// corresponding C functions are `poll` on the sequencer's descriptors,
    /// `snd_seq_event_input` and `snd_midi_event_decode`.
    public func read(timeoutMilliseconds: Int32) -> [UInt8] {
        guard !Poller.wait(pollDescriptors, timeoutMilliseconds: timeoutMilliseconds).isEmpty else { return [] }
        return readReady()
    }

    /// The sequencer's descriptors, for the caller's own `poll` (one
    /// `poll` over every input). The corresponding C functions are
    /// `snd_seq_poll_descriptors_count` and `snd_seq_poll_descriptors`.
    public var pollDescriptors: [PollDescriptor] {
        var descriptors = [pollfd](repeating: pollfd(), count: Int(snd_seq_poll_descriptors_count(sequencer, Int16(POLLIN))))
        let count = descriptors.withUnsafeMutableBufferPointer { snd_seq_poll_descriptors(sequencer, $0.baseAddress, UInt32($0.count), Int16(POLLIN)) }
        return descriptors.prefix(Int(count)).map { PollDescriptor(fd: $0.fd, events: $0.events) }
    }

    /// The events waiting now, as MIDI bytes, without waiting (connecting
    /// new hardware ports announced meanwhile). The corresponding C
    /// functions are `snd_seq_event_input_pending`, `snd_seq_event_input`
    /// and `snd_midi_event_decode`.
    public func readReady() -> [UInt8] {
        guard snd_seq_event_input_pending(sequencer, 1) > 0 else { return [] }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1_024)
        while true {
            var event: UnsafeMutablePointer<snd_seq_event_t>?
            let result = snd_seq_event_input(sequencer, &event)
            guard result >= 0, let event else { break }
            let type = Int32(event.pointee.type)
            if type == Int32(SND_SEQ_EVENT_PORT_START.rawValue) {
                let address = event.pointee.data.addr
                if let port = Self.ports(sequencer).first(where: { $0.client == Int(address.client) && $0.port == Int(address.port) }), wanted(port) { connect(port) }
            } else {
                let length = buffer.withUnsafeMutableBufferPointer { snd_midi_event_decode(parser, $0.baseAddress, $0.count, event) }
                if length > 0 { bytes += buffer[0..<Int(length)] }
            }
            if snd_seq_event_input_pending(sequencer, 0) == 0 { break }
        }
        return bytes
    }

    /// Sends raw MIDI bytes (feedback: a record LED) to whoever subscribed
    /// to the feedback port. The corresponding C functions are
    /// `snd_midi_event_encode` and `snd_seq_event_output_direct`.
    public func send(_ bytes: [UInt8]) {
        var encoder: OpaquePointer?
        guard snd_midi_event_new(1_024, &encoder) == 0, let encoder else { return }
        defer { snd_midi_event_free(encoder) }
        var event = snd_seq_event_t()
        var remaining = bytes[...]
        while !remaining.isEmpty {
            let used = remaining.withUnsafeBufferPointer { snd_midi_event_encode(encoder, $0.baseAddress, $0.count, &event) }
            guard used > 0 else { return }
            remaining = remaining.dropFirst(Int(used))
            if event.type == UInt8(SND_SEQ_EVENT_NONE.rawValue) { continue }
            event.source.port = UInt8(outputPort)
            event.dest.client = UInt8(SND_SEQ_ADDRESS_SUBSCRIBERS)
            event.dest.port = UInt8(SND_SEQ_ADDRESS_UNKNOWN)
            event.queue = UInt8(SND_SEQ_QUEUE_DIRECT)
            snd_seq_event_output_direct(sequencer, &event)
        }
    }
}
