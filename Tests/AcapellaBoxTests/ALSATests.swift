@testable import AcapellaDevices
import AcapellaEngine
import AcapellaScore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A libasound configuration with two PCMs and no sound card: playback
/// through the `file` plugin into `path` (raw interleaved samples) on top of
/// `null`, capture from `null` (silence).
func pluginConfiguration(file path: String) -> String {
    """
    pcm.acapella_out {
        type file
        slave.pcm { type null }
        file "\(path)"
        format "raw"
    }
    pcm.acapella_in {
        type null
    }
    """
}

/// Holds the engine for a device callback (closures cannot capture a
/// noncopyable value).
final class CoreBox {
    var core: EngineCore
    init(_ core: consuming EngineCore) { self.core = core }
}

/// Stand-in streams: silence in, frames counted out, and failures on cue.
final class ScriptedStream: PCMStream {
    var reads = 0
    var writes = 0
    var prepares = 0
    /// Read number → the errno to fail it with.
    var failReads: [Int: Int32] = [:]
    func read(_ buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        reads += 1
        if let code = failReads[reads] { return -Int(code) }
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: frames * 4)
        return frames
    }
    func write(_ buffer: UnsafeRawPointer, frames: Int) -> Int {
        writes += 1
        return frames
    }
    func prepare() -> Int32 { prepares += 1; return 0 }
    /// Trigger times (ns) the stream reports after each start, in turn
    /// (nil: it cannot say).
    var triggers: [Int64?] = []
    var starts = 0
    /// Start number → the errno to fail it with.
    var failStarts: [Int: Int32] = [:]
    func start() -> Int32 {
        starts += 1
        return failStarts[starts].map { -$0 } ?? 0
    }
    func drop() -> Int32 { 0 }
    func triggerNanoseconds() -> Int64? { starts > 0 && starts <= triggers.count ? triggers[starts - 1] : nil }
}

@Suite struct ALSATests {
    /// The real libasound path with no sound card: open, negotiate, start,
    /// read and write periods; a song played through ALSA into a file is
    /// the offline render sample for sample (after the buffer of silence
    /// queued at start).
    @Test func songThroughTheFilePluginEqualsTheOfflineRender() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-alsa-\(UUID().uuidString).raw").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = ALSADevice.Options()
        options.playback = "acapella_out"
        options.capture = "acapella_in"
        options.configuration = pluginConfiguration(file: path)
        options.realTime = false  // not in the test runner's process
        let device = try ALSADevice(options)
        #expect(device.formatDescription == "FLOAT_LE × 2 out, FLOAT_LE × 1 in")
        // snd_pcm_delay with the start-up silence queued, plus the capture's:
        // the null plugin swallows what is queued at once (delay 0).
        #expect(device.reportedRoundTripFrames == 0, "\(device.reportedRoundTripFrames)")
        #expect(device.route == "alsa:acapella_out|acapella_in|48000|128|384")
        let score = try Acasong.parse(try songText("simple-harmony.acasong"))
        let schedule = try Schedule(score: score)
        let mixes = score.parts.indices.map { PartMix(gain: 0.3, pan: -0.5 + Float($0)) }
        let engine = CoreBox(EngineCore(schedule: schedule, mixes: mixes, maximumFrames: device.periodFrames))
        engine.core.link.send(.play)
        let periods = 400
        var done = 0
        var frames: [Int64] = []
        try device.run(keepRunning: { done < periods }) { buffers in
            frames.append(buffers.deviceFrame)
            engine.core.process(input: buffers.input, left: buffers.left, right: buffers.right, frames: buffers.frames, deviceFrame: buffers.deviceFrame)
            done += 1
        }
        #expect(frames == (0..<Int64(periods)).map { $0 * 128 }, "one frame clock, no gaps")
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        // Silence first: the buffer (3 periods) less one, queued twice —
        // once when the device measured its delay at open, once at start.
        let lead = 2 * (2 * 128)
        #expect(samples.count == 2 * (lead + periods * 128), "\(samples.count) samples in the file")
        #expect(samples[0..<(2 * lead)].allSatisfy { $0 == 0 })
        let reference = OfflineRender.render(schedule, mixes: mixes, periodFrames: 128)
        var mismatches = 0
        for frame in 0..<(periods * 128) {
            if samples[2 * (lead + frame)] != reference.left[frame] || samples[2 * (lead + frame) + 1] != reference.right[frame] { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(reference.left[0..<(periods * 128)].contains { $0 != 0 })
    }

    @Test func badNamesAndConfigurationsAreClearErrors() throws {
        var options = ALSADevice.Options()
        options.playback = "no_such_pcm"
        options.capture = "no_such_pcm"
        options.configuration = pluginConfiguration(file: "/tmp/unused.raw")
        #expect(throws: DeviceError.self) { try ALSADevice(options) }
        do { _ = try ALSADevice(options) } catch {
            #expect(error.description.hasPrefix("no_such_pcm: snd_pcm_open (playback) failed"), "\(error)")
        }
        options.configuration = "pcm.broken { type"
        do { _ = try ALSADevice(options) } catch {
            #expect(error.description.contains("not valid ALSA configuration"), "\(error)")
        }
        #expect(throws: DeviceError.self) { try ALSADevice.Options(parsing: "alsa:hw:0@period=3") }
        let parsed = try ALSADevice.Options(parsing: "alsa:hw:CARD=USB,DEV=0@period=256,periods=2")
        #expect(parsed.playback == "hw:CARD=USB,DEV=0" && parsed.capture == "hw:CARD=USB,DEV=0" && parsed.periodFrames == 256 && parsed.periods == 2)
        let loopback = try ALSADevice.Options(parsing: "alsa:hw:Loopback,0,0|hw:Loopback,1,0@period=64")
        #expect(loopback.playback == "hw:Loopback,0,0" && loopback.capture == "hw:Loopback,1,0" && loopback.periodFrames == 64)
        #expect(throws: DeviceError.self) { try ALSADevice.Options(parsing: "alsa:hw:0|") }
    }

    /// Through the stand-in layer: an xrun restarts both streams and moves
    /// the frame clock on (the engine sees a gap); a vanished device ends
    /// the loop with a `lost` error.
    @Test func xrunsRecoverAndLossIsReported() throws {
        var options = ALSADevice.Options()
        options.periodFrames = 64
        options.realTime = false
        let capture = ScriptedStream()
        let playback = ScriptedStream()
        capture.failReads = [5: EPIPE, 9: EPIPE, 14: ENODEV]
        let device = ALSADevice(testing: options, playback: playback, capture: capture)
        var frames: [Int64] = []
        do {
            try device.run(keepRunning: { true }) { buffers in frames.append(buffers.deviceFrame) }
            Issue.record("the loop did not stop on a lost device")
        } catch {
            #expect(error.kind == .lost && error.description.contains("capture lost"), "\(error)")
        }
        // Periods 1–4, an xrun, 6–8, an xrun, 10–13, then the loss.
        let jump = Int64(device.bufferFrames + 64)
        #expect(frames == [0, 64, 128, 192, 256 + jump, 320 + jump, 384 + jump, 448 + 2 * jump, 512 + 2 * jump, 576 + 2 * jump, 640 + 2 * jump])
        #expect(playback.prepares == 3, "prepared at start and after each xrun")
    }

    /// A stall can leave a stream in a bad state (EBADFD, EIO) rather than
    /// in an xrun, or land inside the restart itself: each is restarted
    /// like an xrun (the clock jumps, the take marks the gap) and the run
    /// goes on; a stream that stays bad through `faultLimit` restarts in a
    /// row is lost.
    @Test func aStreamLeftInABadStateIsRestartedAFewTimesThenLost() throws {
        var options = ALSADevice.Options()
        options.periodFrames = 64
        options.realTime = false
        let capture = ScriptedStream()
        let playback = ScriptedStream()
        capture.failReads = [3: EBADFD, 6: EIO, 7: EIO, 8: EIO, 9: EIO]
        // The restart after the first fault fails once, and is tried again.
        playback.failStarts = [2: EPIPE]
        let device = ALSADevice(testing: options, playback: playback, capture: capture)
        var frames: [Int64] = []
        do {
            try device.run(keepRunning: { true }) { buffers in frames.append(buffers.deviceFrame) }
            Issue.record("the loop did not stop on a stream that stayed bad")
        } catch {
            #expect(error.kind == .lost && error.description.contains("capture lost"), "\(error)")
        }
        let jump = Int64(device.bufferFrames + 64)
        // Periods 1–2, a fault, 4–5, three faults restarted, the fourth lost.
        #expect(frames == [0, 64, 128 + jump, 192 + jump])
        #expect(playback.starts == 1 + 2 + 3, "started once, twice after the first fault (one failed), once after each of the next three")
    }

    /// Four inputs through the real libasound path (the `file` plugin's
    /// `infile` capturing a known 4-channel signal): the device opens four
    /// capture channels and hands each period's inputs apart, input after
    /// input, sample for sample; their average is the mono input.
    @Test func fourInputsArriveApart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-inputs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let frames = 128 * 40
        // Channel c, frame f: (c + 1) / 8 + f / 2^20 (each exact in a float).
        func value(_ channel: Int, _ frame: Int) -> Float { Float(channel + 1) / 8 + Float(frame) / 1_048_576 }
        var interleaved: [Float] = []
        for frame in 0..<frames { for channel in 0..<4 { interleaved.append(value(channel, frame)) } }
        try interleaved.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: directory + "/in.raw"))
        var options = ALSADevice.Options()
        options.playback = "acapella_out"
        options.capture = "acapella_in4"
        options.inputs = 4
        options.realTime = false
        options.configuration = pluginConfiguration(file: directory + "/out.raw") + """

            pcm.acapella_in4 {
                type file
                slave.pcm { type null }
                file "/dev/null"
                infile "\(directory)/in.raw"
                format "raw"
            }
            """
        let device = try ALSADevice(options)
        #expect(device.inputCount == 4 && device.formatDescription.hasSuffix("FLOAT_LE × 4 in"), "\(device.formatDescription)")
        var periods = 0
        var wrong = 0
        var mono = 0
        try device.run(keepRunning: { periods < 30 }) { buffers in
            defer { periods += 1 }
            guard let inputs = buffers.inputs, buffers.inputCount == 4 else {
                wrong += 1
                return
            }
            let first = periods * buffers.frames
            for index in 0..<buffers.frames {
                var sum: Float = 0
                for channel in 0..<4 {
                    if inputs[channel * buffers.frames + index] != value(channel, first + index) { wrong += 1 }
                    sum += value(channel, first + index)
                }
                if abs(buffers.input[index] - sum / 4) > 1e-6 { mono += 1 }
            }
        }
        #expect(periods == 30 && wrong == 0 && mono == 0, "\(wrong) input samples and \(mono) mono samples wrong in \(periods) periods")
    }

    /// A machine too slow for its period xruns on every one: after dozens
    /// in a row that have lost ten seconds of audio the run ends with a
    /// configuration error that says so — not after a second's stall.
    @Test func xrunsOnEveryPeriodEndTheRunOnlyAfterTenSecondsLost() throws {
        var options = ALSADevice.Options()
        options.periodFrames = 64
        options.realTime = false
        let capture = ScriptedStream()
        let playback = ScriptedStream()
        // A second's stall (750 xruns of 64 + a 192-frame buffer), one period, then xruns for good.
        for read in 2...751 { capture.failReads[read] = EPIPE }
        for read in 753...20_000 { capture.failReads[read] = EPIPE }
        let device = ALSADevice(testing: options, playback: playback, capture: capture)
        var frames: [Int64] = []
        do {
            try device.run(keepRunning: { true }) { buffers in frames.append(buffers.deviceFrame) }
            Issue.record("the loop did not give up")
        } catch {
            #expect(error.kind == .configuration && error.description.contains("xruns in a row (10 s of audio lost)"), "\(error)")
        }
        let jump = Int64(device.bufferFrames + 64)
        #expect(frames == [0, 64 + 750 * jump], "the period after the second's stall was played")
        let lostInARow = (48_000 * 10 + Int(jump) - 1) / Int(jump)
        #expect(capture.reads == 752 + lostInARow, "gave up after \(capture.reads - 752) xruns in a row, expected \(lostInARow)")
    }

    /// Unlinked streams (a plugin refusing `snd_pcm_link`) start one after
    /// the other: each start's skew is read from the two trigger
    /// timestamps and handed to the engine with every period until the
    /// next restart; a stream that cannot say when it started makes the
    /// alignment unknown. Linked streams are aligned by construction.
    @Test func unlinkedStreamsReportTheirSkewAtEveryStart() throws {
        var options = ALSADevice.Options()
        options.periodFrames = 64
        options.realTime = false
        let capture = ScriptedStream()
        let playback = ScriptedStream()
        capture.failReads = [3: EPIPE, 6: EPIPE]
        // Start 1: playback 1 ms after capture (+48 frames); start 2: 0.5 ms
        // before (−24); start 3: the capture cannot say.
        playback.triggers = [1_001_000_000, 2_000_000_000, 3_000_000_000]
        capture.triggers = [1_000_000_000, 2_000_500_000, nil]
        let device = ALSADevice(testing: options, playback: playback, capture: capture, linked: false)
        var seen: [StreamAlignment] = []
        try device.run(keepRunning: { seen.count < 7 }) { seen.append($0.alignment) }
        let first = StreamAlignment(captureSkewFrames: 48, known: true)
        let second = StreamAlignment(captureSkewFrames: -24, known: true)
        #expect(seen == [first, first, second, second, .unknown, .unknown, .unknown], "\(seen)")
        #expect(capture.prepares == 3 && capture.starts == 3, "an unlinked capture is prepared and started by itself")

        let linkedCapture = ScriptedStream()
        linkedCapture.failReads = [2: EPIPE]
        let linked = ALSADevice(testing: options, playback: ScriptedStream(), capture: linkedCapture)
        var linkedSeen: [StreamAlignment] = []
        try linked.run(keepRunning: { linkedSeen.count < 3 }) { linkedSeen.append($0.alignment) }
        #expect(linkedSeen == [.linked, .linked, .linked])
        #expect(StreamAlignment.measured(playbackStart: 0, captureStart: 1_000_000_000, sampleRate: 48_000) == .unknown, "a second apart is no start-up skew")
    }

    /// A device unplugged mid-run: the loss is reported, the device is
    /// reopened when it comes back (two failed tries later), and periods
    /// carry on with the frame clock still counting up — no restart.
    @Test func aLostDeviceIsReopenedWhenItReturns() throws {
        var options = ALSADevice.Options()
        options.periodFrames = 64
        options.realTime = false
        var attempts = 0
        let supervisor = DeviceSupervisor(retryMilliseconds: 5) { () throws(DeviceError) -> any AudioDevice in
            attempts += 1
            switch attempts {
            case 1:
                let capture = ScriptedStream()
                capture.failReads = [4: ENODEV]
                return ALSADevice(testing: options, playback: ScriptedStream(), capture: capture)
            case 2, 3:
                throw DeviceError(.lost, "hw:USB: No such device")
            default:
                return ALSADevice(testing: options, playback: ScriptedStream(), capture: ScriptedStream())
            }
        }
        var frames: [Int64] = []
        var events: [DeviceSupervisor.Event] = []
        try supervisor.run(keepRunning: { frames.count < 8 }, period: { frames.append($0.deviceFrame) }, onEvent: { events.append($0) })
        #expect(attempts == 4)
        #expect(events.count == 2)
        if case .lost(let message) = events.first { #expect(message.contains("capture lost")) } else { Issue.record("no loss reported") }
        #expect(events.last == .reopened("ALSA default"))
        #expect(frames.count == 8 && frames[0..<3] == [0, 64, 128])
        #expect(zip(frames.dropFirst(), frames).allSatisfy { $0 > $1 }, "the clock only counts up: \(frames)")
        #expect(frames[3] >= 192 + 3 * 48_000 * 5 / 1_000, "the time away shows as a gap")
    }

    /// Conversion at the edge: each format stores and loads full scale,
    /// silence and a small value to within its resolution, and clips.
    @Test(arguments: SampleFormat.allCases)
    func sampleFormatsRoundTrip(format: SampleFormat) {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        defer { buffer.deallocate() }
        let resolution: Float = format == .s16 ? 1 / 32_768 : format == .s24 ? 1 / 8_388_608 : 1e-7
        for (index, value) in [Float(0), 0.5, -0.5, 0.000_123, 0.999, -1].enumerated() {
            format.store(value, buffer, index)
            #expect(abs(format.load(buffer, index) - value) <= resolution, "\(format) \(value)")
        }
        if format != .float {
            format.store(1.7, buffer, 0)
            #expect(abs(format.load(buffer, 0) - 1) <= resolution, "clipped")
        }
    }
}
