public import AcapellaDevices
import AcapellaEngine
public import AcapellaProject
import AcapellaScore
import Foundation
import Synchronization

/// Disk space a take needs before it starts.
public enum TakeSpace {
    /// Seconds of audio there must be room for.
    public static let minimumSeconds: Int64 = 10
    /// Room kept beyond that for the manifest and sidecars.
    public static let margin: Int64 = 2 << 20
}

/// What `RecordingSession.record` should do.
public struct RecordingRequest: Sendable {
    /// The part to record.
    public var part: String
    /// A measure range to punch in (with a measure of pre-roll), or nil:
    /// the whole song after a count-in.
    public var measures: ClosedRange<Int>?
    /// Count-in measures for a whole-song take or a loop.
    public var countInMeasures = 1
    /// Loop recording: loop over `measures` for this many passes, one take
    /// each (the last one plays).
    public var loopPasses: Int?
    /// The room's singer (simulated room only): sings `part`.
    public var singer: SingerSettings? = SingerSettings()
    /// Fault injection: a full disk after this many frames of a take.
    public var diskFullAfterFrames: Int64?
    /// Where calibrations are looked up (nil: the data directory's store).
    public var calibrationStore: String?
    /// Run the pitch needle meanwhile and keep its readings (every ~50 ms).
    public var trackPitch = false
    /// Keep the part's own guide tone audible (normally muted: the singer
    /// sings it). A loopback test records the box's own guide this way.
    public var ownGuide = false

    /// A request to record `part`.
    public init(part: String) {
        self.part = part
    }
}

/// How the simulated room's singer sings.
public struct SingerSettings: Sendable {
    /// Cents sharp (+) or flat (−).
    public var detuneCents = 0.0
    /// Vibrato depth, cents.
    public var vibratoCents = 30.0
    /// Samples late (negative: early).
    public var timingErrorSamples: Int64 = 0
    /// Breath noise amplitude.
    public var noise: Float = 0.005

    /// Defaults: in tune, 30 cents of vibrato, on time.
    public init() {}
}

/// The outcome of a recording.
public struct RecordingResult: Sendable {
    /// Takes written, oldest first.
    public var takes: [TakeRecord]
    /// Problems (disk full, device lost…), one line each.
    public var problems: [String]
    /// Capture frames dropped because the writer fell behind.
    public var overrunFrames: Int
    /// The needle's readings, when asked for.
    public var pitchReadings: [PitchReading] = []
}

/// Holds the engine for the render thread. `@unchecked Sendable`: the
/// core is touched only by the thread running the device loop, after the
/// caller has handed it over and until that thread ends.
final class EngineBox: @unchecked Sendable {
    var core: EngineCore
    init(_ core: consuming EngineCore) { self.core = core }
}

/// Holds a device for its thread (same hand-over rule as `EngineBox`).
final class DeviceBox: @unchecked Sendable {
    let device: any AudioDevice
    init(_ device: any AudioDevice) { self.device = device }
}

/// Records one part of a project through a device: the engine on the
/// device's thread, the recorder on its own, this (control) thread sending
/// the commands and watching the events.
public enum RecordingSession {
    /// Records and returns when the take is on disk. `progress` is called
    /// on the calling thread about every 50 ms with the frames received.
    public static func record(
        project: Project, request: RecordingRequest, device: any AudioDevice, progress: ((Int64) -> Void)? = nil
    ) throws(ProjectError) -> RecordingResult {
        let score = project.score
        guard let partIndex = score.parts.firstIndex(where: { $0.name.lowercased() == request.part.lowercased() }) else {
            throw ProjectError(description: "no part named '\(request.part)'; the parts are: " + score.parts.map(\.name).joined(separator: ", "))
        }
        let partName = score.parts[partIndex].name
        guard device.sampleRate == project.manifest.sampleRate else {
            throw ProjectError(description: "the device runs at \(device.sampleRate) Hz, the project at \(project.manifest.sampleRate) Hz")
        }
        guard project.isWritable else { throw ProjectError(description: "\(project.path): opened read-only; nothing can be recorded") }
        let looping = request.loopPasses != nil && request.measures != nil
        let options = ScheduleOptions(sampleRate: device.sampleRate, countInMeasures: request.measures == nil || looping ? request.countInMeasures : 0)
        let schedule: Schedule
        do { schedule = try Schedule(score: score, options: options) } catch { throw ProjectError(description: error.description) }
        if let measures = request.measures, schedule.loopRange(measures: measures) == nil {
            throw ProjectError(description: "measures \(measures.lowerBound)-\(measures.upperBound) are not all in the song (measures \(schedule.firstMeasureNumber)–\(schedule.firstMeasureNumber + schedule.barlines.count - 1))")
        }
        // Refused before the singer sings a note, rather than stopped mid-take.
        let bytesPerSecond = Int64(device.sampleRate) * 4
        let minimum = bytesPerSecond * TakeSpace.minimumSeconds + TakeSpace.margin
        let free = project.freeBytes
        guard free >= minimum else {
            throw ProjectError(description: "\(project.path): the disk is full (\(free / 1_000_000) MB free; a take needs \(minimum / 1_000_000) MB at least): free some space first")
        }
        // The singer hears the other parts; the part's own guide is muted unless asked for.
        var mixes = PartMix.spread(count: score.parts.count)
        mixes[partIndex].muted = !request.ownGuide
        let (takes, _) = project.activeTakes(for: options)
        var core = EngineCore(schedule: schedule, mixes: mixes, takes: takes, clickGain: 0.2, maximumFrames: device.periodFrames)
        // The stored calibration for this route, else the device's own figure.
        let store: CalibrationStore
        if let path = request.calibrationStore { store = try CalibrationStore(path: path) } else { store = try CalibrationStore() }
        let calibrationText = CalibrationStore.applying(store, to: device)
        let recorder = Recorder(project: project, part: partName, options: options, calibration: calibrationText, punchesOnly: request.measures != nil,
                                failAfterFrames: request.diskFullAfterFrames)
        core.attachCapture(ring: recorder.ring, latencyFrames: try captureLatency(of: device))
        let tracker = request.trackPitch ? PitchTracker(tones: schedule.tones[partIndex], sampleRate: device.sampleRate) : nil
        if let tracker { core.attachAnalysis(ring: tracker.ring) }
        var readings: [PitchReading] = []
        let link = core.link
        var singer: SyntheticSinger?
        if let settings = request.singer {
            var voice = SyntheticSinger(tones: schedule.tones[partIndex], sampleRate: device.sampleRate)
            voice.detuneCents = settings.detuneCents
            voice.vibratoCents = settings.vibratoCents
            voice.timingErrorSamples = settings.timingErrorSamples
            voice.noise = settings.noise
            singer = voice
        }
        if let room = device as? SimulatedRoom {
            let ring = recorder.ring
            room.backpressure = { ring.waitingCount < ring.capacityCount / 2 }
        }
        let engine = EngineBox(core)
        let roomSinger = singer
        recorder.start()
        tracker?.start()
        if let measures = request.measures, let passes = request.loopPasses {
            link.send(.loop(measures))
            link.send(.stopAfterPasses(passes))
            link.send(.record(.immediate))
        } else if let measures = request.measures {
            link.send(.punch(measures: measures, prerollMeasures: 1))
        } else {
            link.send(.record(.immediate))
        }
        let render = RenderThread(device: DeviceBox(device), engine: engine, singer: roomSinger)
        // The control loop: wait for the transport to stop by itself (song
        // end or the punch's auto stop), for a stop signal (the take is
        // finished, as with the stop button), or for the device to fail.
        var stopped = false
        var stopSent = false
        while !stopped {
            if render.wait(milliseconds: 50) { break }
            if StopSignals.received && !stopSent {
                link.send(.stop)
                stopSent = true
            }
            while let event = link.nextEvent() {
                if case .stopped = event { stopped = true }
            }
            link.collectRetired()
            progress?(recorder.receivedFrames)
            if let reading = tracker?.reading, reading.songSample != readings.last?.songSample { readings.append(reading) }
        }
        // Let the round trip's last frames reach the microphone, then stop.
        if stopped {
            let tail = Int(device.roundTripFrames) + 2 * device.periodFrames
            _ = render.wait(milliseconds: max(20, tail * 1000 / device.sampleRate * 2))
        }
        render.stop()
        recorder.finish()
        tracker?.stop()
        var problems = recorder.problems
        if let alsa = device as? ALSADevice { problems += alsa.realTimeWarnings.map { "warning: " + $0 } }
        if let failure = render.failure { problems.append(failure + "; the take is kept up to that moment") }
        return RecordingResult(takes: recorder.finished, problems: problems, overrunFrames: recorder.ring.droppedCount, pitchReadings: readings)
    }
}

/// The round trip captured frames are tagged with, in whole frames;
/// refused when it is not a round trip a device can have (a damaged
/// calibration, a device reporting nonsense): a negative one would tag
/// frames with moments not yet played.
func captureLatency(of device: any AudioDevice) throws(ProjectError) -> Int {
    let frames = device.roundTripFrames
    guard frames.isFinite, frames >= 0, frames <= 192_000 else {
        throw ProjectError(description: "\(device.route): a round trip of \(frames) frames is impossible (reported \(device.reportedRoundTripFrames), calibrated trim \(device.calibrationTrimFrames)); calibrate again")
    }
    return Int(frames.rounded())
}

extension CalibrationStore {
    /// Sets the device's trim from `store` for its route (0 when the route
    /// was never calibrated); returns the line recorded with each take.
    static func applying(_ store: CalibrationStore, to device: any AudioDevice) -> String {
        if let calibration = store.calibration(for: device.route) {
            device.calibrationTrimFrames = calibration.trimFrames
            return String(format: "%@: %.2f frames reported + %.2f calibrated trim (%@)", device.route, device.reportedRoundTripFrames, calibration.trimFrames, calibration.date)
        }
        device.calibrationTrimFrames = 0
        return String(format: "%@: %.2f frames as reported, not calibrated", device.route, device.reportedRoundTripFrames)
    }

    /// Measures `device`'s round trip (`Calibration.measure`) and stores it
    /// for the device's route, with the trim against what the device
    /// reports. Throws `CalibrationError` when the measurement is refused,
    /// `ProjectError` when the store cannot be written.
    public mutating func calibrate(_ device: any AudioDevice) throws -> (result: CalibrationResult, stored: RouteCalibration) {
        let result = try Calibration.measure(device: device)
        let stored = RouteCalibration(measuredFrames: result.roundTripFrames, reportedFrames: device.reportedRoundTripFrames,
                                      trimFrames: result.roundTripFrames - device.reportedRoundTripFrames, date: ISO8601DateFormatter().string(from: Date()))
        try store(stored, for: device.route)
        return (result, stored)
    }
}
