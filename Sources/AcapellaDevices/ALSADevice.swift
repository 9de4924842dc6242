internal import CALSA
import AcapellaEngine
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a libasound call said, in Swift terms (STYLE.md habit 1: one
/// helper for every C call). Negative codes become values or errors.
enum ALSAOutcome: Equatable {
    /// Success, with the call's non-negative result.
    case ok(Int)
    /// Try again (−EAGAIN).
    case wouldBlock
    /// An xrun (−EPIPE) or a suspend (−ESTRPIPE): recover and go on.
    case xrun
    /// The device is gone (−ENODEV, −EBADFD, −ENXIO, −EIO).
    case lost(Int32)
    /// Any other failure.
    case failed(Int32)
}

/// Classifies a libasound return value; EINTR is the caller's to retry.
func alsaOutcome(_ code: Int) -> ALSAOutcome {
    if code >= 0 { return .ok(code) }
    switch Int32(-code) {
    case EAGAIN: return .wouldBlock
    case EPIPE, ESTRPIPE: return .xrun
    case ENODEV, EBADFD, ENXIO, EIO: return .lost(Int32(-code))
    default: return .failed(Int32(-code))
    }
}

/// Runs a libasound call that returns a status: EINTR retried, a negative
/// code thrown as a `DeviceError` naming the call and the device.
@discardableResult
func alsaCall(_ name: String, device: String, _ call: () -> Int32) throws(DeviceError) -> Int32 {
    while true {
        let code = call()
        if code >= 0 { return code }
        if -code == EINTR { continue }
        let kind: DeviceError.Kind = [ENODEV, EBADFD, ENXIO, EIO].contains(-code) ? .lost : .configuration
        throw DeviceError(kind, "\(device): \(name) failed: \(String(cString: snd_strerror(code)))")
    }
}

/// The PCM operations the period loop needs: the real libasound stream, or
/// a stand-in that forces xruns and device loss (STYLE.md habit 3).
protocol PCMStream: AnyObject {
    /// Reads up to `frames` interleaved frames (capture). Returns frames or a negative errno.
    func read(_ buffer: UnsafeMutableRawPointer, frames: Int) -> Int
    /// Writes `frames` interleaved frames (playback). Returns frames or a negative errno.
    func write(_ buffer: UnsafeRawPointer, frames: Int) -> Int
    /// `snd_pcm_prepare`.
    func prepare() -> Int32
    /// `snd_pcm_start`.
    func start() -> Int32
    /// `snd_pcm_drop`.
    func drop() -> Int32
    /// When the stream was last started, on the kernel's clock (ns), or nil
    /// when it cannot say. The corresponding C functions are
    /// `snd_pcm_status` and `snd_pcm_status_get_trigger_htstamp`.
    func triggerNanoseconds() -> Int64?
}

/// A libasound PCM handle.
final class ALSAStream: PCMStream {
    let handle: OpaquePointer
    /// Made once, so reading the status at a restart allocates nothing.
    private var status: OpaquePointer?
    init(_ handle: OpaquePointer) {
        self.handle = handle
        snd_pcm_status_malloc(&status)
    }
    deinit {
        if let status { snd_pcm_status_free(status) }
        snd_pcm_close(handle)
    }
    func triggerNanoseconds() -> Int64? {
        guard let status, snd_pcm_status(handle, status) == 0 else { return nil }
        var stamp = snd_htimestamp_t()
        snd_pcm_status_get_trigger_htstamp(status, &stamp)
        guard stamp.tv_sec != 0 || stamp.tv_nsec != 0 else { return nil }
        return Int64(stamp.tv_sec) * 1_000_000_000 + Int64(stamp.tv_nsec)
    }
    func read(_ buffer: UnsafeMutableRawPointer, frames: Int) -> Int { Int(snd_pcm_readi(handle, buffer, snd_pcm_uframes_t(frames))) }
    func write(_ buffer: UnsafeRawPointer, frames: Int) -> Int { Int(snd_pcm_writei(handle, buffer, snd_pcm_uframes_t(frames))) }
    func prepare() -> Int32 { snd_pcm_prepare(handle) }
    func start() -> Int32 { snd_pcm_start(handle) }
    func drop() -> Int32 { snd_pcm_drop(handle) }
}

/// Sample formats the device negotiates, best first; converted at the edge.
enum SampleFormat: String, CaseIterable, Sendable {
    case float = "FLOAT_LE"
    case s32 = "S32_LE"
    case s24 = "S24_LE"
    case s16 = "S16_LE"

    var alsa: snd_pcm_format_t {
        switch self {
        case .float: SND_PCM_FORMAT_FLOAT_LE
        case .s32: SND_PCM_FORMAT_S32_LE
        case .s24: SND_PCM_FORMAT_S24_LE
        case .s16: SND_PCM_FORMAT_S16_LE
        }
    }

    var bytes: Int { self == .s16 ? 2 : 4 }

    /// Sample `index` of `buffer` as a float in −1…1.
    @inline(__always)
    func load(_ buffer: UnsafeRawPointer, _ index: Int) -> Float {
        switch self {
        case .float: return buffer.load(fromByteOffset: 4 * index, as: Float.self)
        case .s32: return Float(buffer.load(fromByteOffset: 4 * index, as: Int32.self)) / 2_147_483_648
        case .s24: return Float((buffer.load(fromByteOffset: 4 * index, as: Int32.self) << 8) >> 8) / 8_388_608
        case .s16: return Float(buffer.load(fromByteOffset: 2 * index, as: Int16.self)) / 32_768
        }
    }

    /// Stores a float, clipped, as sample `index` of `buffer`; a NaN (from
    /// anywhere) is silence, never full scale (min and max would make it +1).
    @inline(__always)
    func store(_ value: Float, _ buffer: UnsafeMutableRawPointer, _ index: Int) {
        let value = value.isNaN ? 0 : value
        let clipped = max(-1, min(1, value))
        switch self {
        case .float: buffer.storeBytes(of: value, toByteOffset: 4 * index, as: Float.self)
        // One scale both ways (2^(bits−1)); +1.0 clamps to the largest code.
        case .s32: buffer.storeBytes(of: Int32(clamping: Int64((Double(clipped) * 2_147_483_648).rounded())), toByteOffset: 4 * index, as: Int32.self)
        case .s24: buffer.storeBytes(of: min(8_388_607, Int32((clipped * 8_388_608).rounded())), toByteOffset: 4 * index, as: Int32.self)
        case .s16: buffer.storeBytes(of: Int16(clamping: Int32((clipped * 32_768).rounded())), toByteOffset: 2 * index, as: Int16.self)
        }
    }
}

/// A sound card through ALSA: capture and playback opened on the same card,
/// linked so they start together on one frame clock.
public final class ALSADevice: AudioDevice {
    /// What to open.
    public struct Options: Sendable, Hashable {
        /// PCM name for playback (`hw:CARD=Device,DEV=0`, `plughw:1`, `default`).
        public var playback = "default"
        /// PCM name for capture.
        public var capture = "default"
        /// Samples per second.
        public var sampleRate = 48_000
        /// Frames per period.
        public var periodFrames = 128
        /// Periods in the buffer.
        public var periods = 3
        /// A libasound configuration (text) to open the names in, instead of
        /// the system's (tests use the `file` and `null` plugins this way).
        public var configuration: String?
        /// Ask for SCHED_FIFO and locked memory on the device's thread.
        public var realTime = true
        /// The inputs to capture, each on its own (`@inputs=4`: a part a
        /// microphone); 1 takes a mono or stereo capture averaged.
        public var inputs = 1

        /// The defaults: `default` both ways, 48 kHz, 3 × 128 frames.
        public init() {}

        /// Parses `alsa`, `alsa:NAME`, `alsa:PLAYBACK|CAPTURE` or `alsa:NAME@period=256,periods=3,rate=44100`.
        public init(parsing text: String) throws(DeviceError) {
            guard text == "alsa" || text.hasPrefix("alsa:") else { throw DeviceError(.configuration, "unknown device '\(text)'") }
            var rest = text.dropFirst(5)
            if let at = rest.firstIndex(of: "@") {
                for item in rest[rest.index(after: at)...].split(separator: ",") {
                    let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
                    guard pair.count == 2, let value = Int(pair[1]) else { throw DeviceError(.configuration, "device option '\(item)' is not NAME=NUMBER") }
                    switch pair[0] {
                    case "period": periodFrames = value
                    case "periods": periods = value
                    case "rate": sampleRate = value
                    case "inputs": inputs = value
                    default: throw DeviceError(.configuration, "unknown device option '\(pair[0])'; known: period, periods, rate, inputs")
                    }
                }
                rest = rest[..<at]
            }
            if !rest.isEmpty {
                // PLAYBACK|CAPTURE names the two directions apart (a loopback
                // card plays on one device and captures on another).
                let names = rest.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                guard names.allSatisfy({ !$0.isEmpty }) else { throw DeviceError(.configuration, "expected alsa:NAME or alsa:PLAYBACK|CAPTURE, found an empty name") }
                playback = names[0]
                capture = names.count == 2 ? names[1] : names[0]
            }
            guard (16...8_192).contains(periodFrames), (2...16).contains(periods), (8_000...192_000).contains(sampleRate), (1...ALSADevice.maximumInputs).contains(inputs) else {
                throw DeviceError(.configuration, "period 16…8192 frames, periods 2…16, rate 8000…192000 Hz, inputs 1…\(ALSADevice.maximumInputs)")
            }
        }
    }

    public let sampleRate: Int
    public let periodFrames: Int
    /// Inputs captured apart: every channel the capture opened with when
    /// several were asked for, else one (a mono or stereo capture averaged).
    public var inputCount: Int { options.inputs == 1 ? 1 : captureChannels }
    /// The capture's channels at most (a plugin that converts, as
    /// `default` and `plughw` do, offers more than the card has: up to
    /// `maximumInputs`).
    public let mostInputs: Int
    // MARK: AudioDevice
    public var roundTripFrames: Double { reportedRoundTripFrames + calibrationTrimFrames }
    /// What the device itself says the round trip is (`snd_pcm_delay` of
    /// both streams once started, measured at open).
    public private(set) var reportedRoundTripFrames: Double
    /// The calibration's correction for this route (0 until calibrated).
    public var calibrationTrimFrames = 0.0
    public var name: String { "ALSA \(options.playback == options.capture ? options.playback : options.playback + " / " + options.capture)" }
    /// The route calibrations are stored under.
    public var route: String { "alsa:\(options.playback)|\(options.capture)|\(sampleRate)|\(periodFrames)|\(bufferFrames)" }
    /// Negotiated formats and channel counts, for messages.
    public var formatDescription: String { "\(playbackFormat.rawValue) × \(playbackChannels) out, \(captureFormat.rawValue) × \(captureChannels) in" }
    /// Warnings from starting the real-time thread (empty when it got SCHED_FIFO and locked memory).
    public private(set) var realTimeWarnings: [String] = []

    let options: Options
    let playbackStream: any PCMStream
    let captureStream: any PCMStream
    let playbackFormat: SampleFormat
    let captureFormat: SampleFormat
    let playbackChannels: Int
    let captureChannels: Int
    let bufferFrames: Int
    /// Whether `snd_pcm_link` tied the streams (plugins may refuse; they are then started together by hand).
    public let linked: Bool
    /// How capture lines up with playback since the latest start (render
    /// thread only): set by `startStreams`.
    private var alignment = StreamAlignment.linked

    /// Opens and configures both streams.
    public init(_ options: Options) throws(DeviceError) {
        acapella_alsa_silence_errors()
        var config: OpaquePointer?
        if let text = options.configuration {
            config = try Self.loadConfiguration(text)
        }
        defer { if let config { snd_config_delete(config) } }
        let playback = try Self.open(options.playback, stream: SND_PCM_STREAM_PLAYBACK, config: config)
        let capture = try Self.open(options.capture, stream: SND_PCM_STREAM_CAPTURE, config: config)
        let playbackSetup = try Self.configure(playback, name: options.playback, options: options, channels: [2, 1])
        // Several inputs: that many channels, or the fewest more the card offers.
        let captureSetup = try Self.configure(capture, name: options.capture, options: options,
                                              channels: options.inputs == 1 ? [1, 2] : Array(options.inputs...max(options.inputs, Self.maximumInputs)))
        self.options = options
        sampleRate = options.sampleRate
        periodFrames = options.periodFrames
        playbackStream = ALSAStream(playback)
        captureStream = ALSAStream(capture)
        playbackFormat = playbackSetup.format
        captureFormat = captureSetup.format
        playbackChannels = playbackSetup.channels
        captureChannels = captureSetup.channels
        mostInputs = min(max(captureSetup.most, captureSetup.channels), Self.maximumInputs)
        bufferFrames = playbackSetup.bufferFrames
        linked = snd_pcm_link(capture, playback) == 0
        reportedRoundTripFrames = Self.reportedDelay(playback: playback, capture: capture, setup: playbackSetup, options: options)
    }

    /// A device over stand-in streams (tests of the period loop's recovery).
    init(testing options: Options, playback: any PCMStream, capture: any PCMStream, linked linkedStreams: Bool = true) {
        self.options = options
        sampleRate = options.sampleRate
        periodFrames = options.periodFrames
        playbackStream = playback
        captureStream = capture
        playbackFormat = .float
        captureFormat = .float
        playbackChannels = 2
        captureChannels = 1
        mostInputs = 1
        bufferFrames = options.periodFrames * options.periods
        linked = linkedStreams
        reportedRoundTripFrames = Double(bufferFrames - options.periodFrames)
    }

    /// The device's own round-trip figure: `snd_pcm_delay` of the playback
    /// stream with the start-up silence queued (what a sample waits before
    /// it is heard: the queue and the converter), plus the capture stream's
    /// delay. A captured frame is numbered by when it was captured, not when
    /// it is read, so the period the capture side is read in adds nothing:
    /// on a sample-exact loopback this is buffer − period, what calibration
    /// measures there. The corresponding C functions are `snd_pcm_prepare`,
    /// `snd_pcm_writei`, `snd_pcm_delay`, `snd_pcm_drop`.
    static func reportedDelay(playback: OpaquePointer, capture: OpaquePointer, setup: (format: SampleFormat, channels: Int, bufferFrames: Int, most: Int), options: Options) -> Double {
        let queued = setup.bufferFrames - options.periodFrames
        var fallback = Double(queued)
        guard snd_pcm_prepare(playback) == 0 else { return fallback }
        let silence = [UInt8](repeating: 0, count: max(1, queued * setup.channels * setup.format.bytes))
        _ = silence.withUnsafeBufferPointer { snd_pcm_writei(playback, $0.baseAddress, snd_pcm_uframes_t(queued)) }
        var playbackDelay: snd_pcm_sframes_t = 0
        var captureDelay: snd_pcm_sframes_t = 0
        if snd_pcm_delay(playback, &playbackDelay) == 0, playbackDelay >= 0 {
            if snd_pcm_delay(capture, &captureDelay) != 0 || captureDelay < 0 { captureDelay = 0 }
            fallback = Double(Int(playbackDelay) + Int(captureDelay))
        }
        snd_pcm_drop(playback)
        return fallback
    }

    static func loadConfiguration(_ text: String) throws(DeviceError) -> OpaquePointer {
        var config: OpaquePointer?
        var input: OpaquePointer?
        try alsaCall("snd_config_top", device: "configuration") { snd_config_top(&config) }
        let bytes = Array(text.utf8)
        let opened = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { snd_input_buffer_open(&input, $0.baseAddress, $0.count) }
        }
        guard opened == 0, let input else {
            snd_config_delete(config)
            throw DeviceError(.configuration, "configuration: snd_input_buffer_open failed")
        }
        let loaded = snd_config_load(config, input)
        snd_input_close(input)
        guard loaded == 0 else {
            snd_config_delete(config)
            throw DeviceError(.configuration, "configuration: not valid ALSA configuration: \(String(cString: snd_strerror(loaded)))")
        }
        return config!
    }

    static func open(_ name: String, stream: snd_pcm_stream_t, config: OpaquePointer?) throws(DeviceError) -> OpaquePointer {
        var handle: OpaquePointer?
        let direction = stream == SND_PCM_STREAM_PLAYBACK ? "playback" : "capture"
        try alsaCall("snd_pcm_open (\(direction))", device: name) {
            if let config { return snd_pcm_open_lconf(&handle, name, stream, 0, config) }
            return snd_pcm_open(&handle, name, stream, 0)
        }
        return handle!
    }

    /// Negotiates access, format (best first), channels, rate, period and
    /// buffer; installs the parameters and the software parameters.
    static func configure(_ pcm: OpaquePointer, name: String, options: Options, channels: [Int]) throws(DeviceError) -> (format: SampleFormat, channels: Int, bufferFrames: Int, most: Int) {
        var params: OpaquePointer?
        try alsaCall("snd_pcm_hw_params_malloc", device: name) { snd_pcm_hw_params_malloc(&params) }
        defer { snd_pcm_hw_params_free(params) }
        try alsaCall("snd_pcm_hw_params_any", device: name) { snd_pcm_hw_params_any(pcm, params) }
        try alsaCall("snd_pcm_hw_params_set_access", device: name) { snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED) }
        guard let format = SampleFormat.allCases.first(where: { snd_pcm_hw_params_test_format(pcm, params, $0.alsa) == 0 }) else {
            throw DeviceError(.configuration, "\(name): none of the sample formats FLOAT, S32, S24, S16 is supported")
        }
        try alsaCall("snd_pcm_hw_params_set_format", device: name) { snd_pcm_hw_params_set_format(pcm, params, format.alsa) }
        var most: UInt32 = 0
        snd_pcm_hw_params_get_channels_max(params, &most)
        guard let count = channels.first(where: { snd_pcm_hw_params_test_channels(pcm, params, UInt32($0)) == 0 }) else {
            if channels.count > 2 {
                throw DeviceError(.configuration, "\(name): has \(most) input\(most == 1 ? "" : "s"), \(channels[0]) asked for (a part an input)")
            }
            throw DeviceError(.configuration, "\(name): takes neither \(channels.map(String.init).joined(separator: " nor ")) channels")
        }
        try alsaCall("snd_pcm_hw_params_set_channels", device: name) { snd_pcm_hw_params_set_channels(pcm, params, UInt32(count)) }
        try alsaCall("snd_pcm_hw_params_set_rate (\(options.sampleRate) Hz)", device: name) { snd_pcm_hw_params_set_rate(pcm, params, UInt32(options.sampleRate), 0) }
        var period = snd_pcm_uframes_t(options.periodFrames)
        var direction: Int32 = 0
        try alsaCall("snd_pcm_hw_params_set_period_size_near", device: name) { snd_pcm_hw_params_set_period_size_near(pcm, params, &period, &direction) }
        guard Int(period) == options.periodFrames else {
            throw DeviceError(.configuration, "\(name): a \(options.periodFrames)-frame period is not possible (nearest \(period))")
        }
        var buffer = snd_pcm_uframes_t(options.periodFrames * options.periods)
        try alsaCall("snd_pcm_hw_params_set_buffer_size_near", device: name) { snd_pcm_hw_params_set_buffer_size_near(pcm, params, &buffer) }
        try alsaCall("snd_pcm_hw_params", device: name) { snd_pcm_hw_params(pcm, params) }
        var software: OpaquePointer?
        try alsaCall("snd_pcm_sw_params_malloc", device: name) { snd_pcm_sw_params_malloc(&software) }
        defer { snd_pcm_sw_params_free(software) }
        try alsaCall("snd_pcm_sw_params_current", device: name) { snd_pcm_sw_params_current(pcm, software) }
        // Started explicitly (and together, when linked), never by a threshold.
        try alsaCall("snd_pcm_sw_params_set_start_threshold", device: name) { snd_pcm_sw_params_set_start_threshold(pcm, software, snd_pcm_uframes_t(Int32.max)) }
        try alsaCall("snd_pcm_sw_params_set_avail_min", device: name) { snd_pcm_sw_params_set_avail_min(pcm, software, period) }
        try alsaCall("snd_pcm_sw_params", device: name) { snd_pcm_sw_params(pcm, software) }
        return (format, count, Int(buffer), Int(most))
    }

    /// Asks for SCHED_FIFO and locked memory; says what to change when refused.
    func becomeRealTime() -> [String] {
        var warnings = [scheduleAudioThread()].compactMap { $0 }
        if !lockMemory() {
            warnings.append("memory is not locked (mlockall: \(String(cString: strerror(errno)))); allow it with 'memlock unlimited' or LimitMEMLOCK=infinity")
        }
        return warnings
    }

    public func run(keepRunning: () -> Bool, period: (PeriodBuffers) -> Void) throws(DeviceError) {
        realTimeWarnings = options.realTime ? becomeRealTime() : []
        let frames = periodFrames
        let captureRaw = UnsafeMutableRawPointer.allocate(byteCount: frames * captureChannels * captureFormat.bytes, alignment: 16)
        let playbackRaw = UnsafeMutableRawPointer.allocate(byteCount: frames * playbackChannels * playbackFormat.bytes, alignment: 16)
        let silence = UnsafeMutableRawPointer.allocate(byteCount: bufferFrames * playbackChannels * playbackFormat.bytes, alignment: 16)
        let input = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let inputs = UnsafeMutablePointer<Float>.allocate(capacity: frames * captureChannels)
        let apart = inputCount > 1
        defer {
            inputs.deallocate()
            captureRaw.deallocate()
            playbackRaw.deallocate()
            silence.deallocate()
            input.deallocate()
            left.deallocate()
            right.deallocate()
        }
        silence.initializeMemory(as: UInt8.self, repeating: 0, count: bufferFrames * playbackChannels * playbackFormat.bytes)
        var deviceFrame: Int64 = 0
        var xrunsInARow = 0
        var faultsInARow = 0
        // The device frame after the last period played without an xrun.
        var lastGoodFrame: Int64 = 0
        try startStreams(silence: silence)
        while keepRunning() {
            // A machine too slow for the period xruns on every one: say so
            // rather than recover forever.
            if xrunsInARow >= Self.xrunLimit, deviceFrame - lastGoodFrame >= Int64(sampleRate * Self.xrunLimitSeconds) {
                throw DeviceError(.configuration, "\(name): \(xrunsInARow) xruns in a row (\(Self.xrunLimitSeconds) s of audio lost): \(frames)-frame periods are too short for this machine; try a larger period or more periods")
            }
            // Capture one period (blocking: the device's clock paces the loop).
            var got = 0
            var xrun = false
            while got < frames {
                let result = captureStream.read(captureRaw + got * captureChannels * captureFormat.bytes, frames: frames - got)
                switch alsaOutcome(result) {
                case .ok(let count): got += count
                case .wouldBlock: continue
                case .xrun: xrun = true
                case .lost(let code):
                    // A stream left in a bad state (EBADFD, EIO) by a stall is
                    // restarted like an xrun, a few times at most; a device
                    // that is gone (ENODEV, ENXIO) ends the run.
                    guard Self.recoverable(code), faultsInARow < Self.faultLimit else {
                        throw DeviceError(.lost, "\(name): capture lost (\(String(cString: snd_strerror(-code))))")
                    }
                    faultsInARow += 1
                    xrun = true
                case .failed(let code):
                    if code == EINTR { continue }
                    throw DeviceError(.configuration, "\(name): snd_pcm_readi failed: \(String(cString: snd_strerror(-code)))")
                }
                if xrun { break }
            }
            if xrun {
                // Frames were lost both ways: restart and move the clock on
                // by what the buffer held, so the engine marks the gap.
                try recover(silence: silence)
                deviceFrame += Int64(bufferFrames + frames)
                xrunsInARow += 1
                continue
            }
            for index in 0..<frames {
                var sum: Float = 0
                for channel in 0..<captureChannels {
                    let value = captureFormat.load(captureRaw, index * captureChannels + channel)
                    inputs[channel * frames + index] = value
                    sum += value
                }
                input[index] = sum / Float(captureChannels)
            }
            left.update(repeating: 0, count: frames)
            right.update(repeating: 0, count: frames)
            period(PeriodBuffers(input: input, left: left, right: right, frames: frames, deviceFrame: deviceFrame, roomVoice: nil,
                                 hostNanoseconds: MonotonicClock.nanoseconds(), alignment: alignment,
                                 inputs: apart ? UnsafePointer(inputs) : nil, inputCount: apart ? captureChannels : 1))
            for index in 0..<frames {
                if playbackChannels == 1 {
                    playbackFormat.store((left[index] + right[index]) / 2, playbackRaw, index)
                } else {
                    playbackFormat.store(left[index], playbackRaw, index * playbackChannels)
                    playbackFormat.store(right[index], playbackRaw, index * playbackChannels + 1)
                }
            }
            var written = 0
            var playbackXrun = false
            while written < frames {
                let result = playbackStream.write(playbackRaw + written * playbackChannels * playbackFormat.bytes, frames: frames - written)
                switch alsaOutcome(result) {
                case .ok(let count): written += count
                case .wouldBlock: continue
                case .xrun:
                    try recover(silence: silence)
                    deviceFrame += Int64(bufferFrames)
                    written = frames
                    xrunsInARow += 1
                    playbackXrun = true
                case .lost(let code):
                    guard Self.recoverable(code), faultsInARow < Self.faultLimit else {
                        throw DeviceError(.lost, "\(name): playback lost (\(String(cString: snd_strerror(-code))))")
                    }
                    faultsInARow += 1
                    try recover(silence: silence)
                    deviceFrame += Int64(bufferFrames)
                    written = frames
                    xrunsInARow += 1
                    playbackXrun = true
                case .failed(let code):
                    if code == EINTR { continue }
                    throw DeviceError(.configuration, "\(name): snd_pcm_writei failed: \(String(cString: snd_strerror(-code)))")
                }
            }
            deviceFrame += Int64(frames)
            if !playbackXrun {
                xrunsInARow = 0
                faultsInARow = 0
                lastGoodFrame = deviceFrame
            }
        }
        _ = playbackStream.drop()
        _ = captureStream.drop()
    }

    /// Consecutive xruns (without a period played in between) after which
    /// `run` gives up with a configuration error — once they have also
    /// lost `xrunLimitSeconds` of audio: a loaded machine whose CPU is taken
    /// away for a second (a VM's host, a burst of I/O) xruns dozens of
    /// times in a row at short periods, and the take goes on after it.
    static let xrunLimit = 64
    /// The most inputs captured apart (an 8-input interface, a double quartet… up to 32).
    public static let maximumInputs = 32
    static let xrunLimitSeconds = 10

    /// Streams found in a bad state (EBADFD, EIO) restarted in a row, without a
    /// period in between, before the device is called lost.
    static let faultLimit = 3

    /// Whether a stream failing with `code` may be restarted (its state is
    /// bad, the device is still there) rather than called gone.
    static func recoverable(_ code: Int32) -> Bool { code == EBADFD || code == EIO }

    /// Tries a restart that fails (a stream still settling after a stall)
    /// this many times before the failure ends the run.
    static let restartAttempts = 3

    /// Prepares both streams, queues a buffer of silence for playback and
    /// starts them: linked, by one trigger, so capture and playback are on
    /// the same sample again after every restart; unlinked, one after the
    /// other, and the two trigger timestamps say by how many frames they
    /// started apart (the capture tagging follows it; without timestamps
    /// the alignment is unknown and the take says so).
    private func startStreams(silence: UnsafeMutableRawPointer) throws(DeviceError) {
        try alsaCall("snd_pcm_prepare (playback)", device: options.playback) { playbackStream.prepare() }
        if !linked { try alsaCall("snd_pcm_prepare (capture)", device: options.capture) { captureStream.prepare() } }
        let queued = playbackStream.write(silence, frames: bufferFrames - periodFrames)
        if case .lost = alsaOutcome(queued) { throw DeviceError(.lost, "\(name): playback lost while starting") }
        try alsaCall("snd_pcm_start", device: options.playback) { playbackStream.start() }
        if !linked { try alsaCall("snd_pcm_start (capture)", device: options.capture) { captureStream.start() } }
        alignment = Self.alignment(linked: linked, playbackStart: playbackStream.triggerNanoseconds(),
                                   captureStart: captureStream.triggerNanoseconds(), sampleRate: sampleRate)
    }

    /// How two streams started: one trigger when linked, else from their
    /// trigger times (unknown without both).
    static func alignment(linked: Bool, playbackStart: Int64?, captureStart: Int64?, sampleRate: Int) -> StreamAlignment {
        if linked { return .linked }
        guard let playbackStart, let captureStart else { return .unknown }
        return .measured(playbackStart: playbackStart, captureStart: captureStart, sampleRate: sampleRate)
    }

    /// After an xrun: both streams dropped and started again (the engine
    /// sees the frame clock jump and marks the gap).
    /// A restart that fails is tried again, `restartAttempts` times in all:
    /// on a loaded machine a stall can land inside the restart itself.
    private func recover(silence: UnsafeMutableRawPointer) throws(DeviceError) {
        var attempt = 1
        while true {
            _ = playbackStream.drop()
            _ = captureStream.drop()
            do {
                try startStreams(silence: silence)
                return
            } catch {
                guard attempt < Self.restartAttempts else { throw error }
                attempt += 1
            }
        }
    }
}

/// Puts the calling thread on SCHED_FIFO at the audio priority (70); the
/// warning to show when refused, else nil. The ALSA device's thread and
/// the simulated room's at real time, so the room measures what a card would.
/// Locks the process's pages in memory as they are first touched
/// (`MCL_ONFAULT`): once the render path has run, none of its pages can be
/// paged out and faulted back in while a period is due. Pages never touched
/// stay unbacked — locking them all up front (`MCL_CURRENT | MCL_FUTURE`
/// alone) made every thread's 8 MB stack and every malloc arena resident:
/// the box's 71 MB became 175 MB. False when refused.
func lockMemory() -> Bool {
    mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0
}

func scheduleAudioThread() -> String? {
    var parameter = sched_param()
    parameter.sched_priority = 70
    let scheduled = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameter)
    guard scheduled != 0 else { return nil }
    return "the audio thread runs at normal priority (SCHED_FIFO refused: \(String(cString: strerror(scheduled)))); allow it with 'rtprio 95' for the user in /etc/security/limits.d/ or LimitRTPRIO= in the service"
}
