public import AcapellaAnalysis
public import AcapellaDevices
import AcapellaEngine
public import AcapellaProject
public import AcapellaScore
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
    /// The tempo (percent of the written one) and key (semitones) it is
    /// sung at: the take is stored with them, the other parts' takes
    /// stretched to them.
    public var tempoPercent = 100
    public var transpose = 0
    /// Loop recording: loop over `measures` for this many passes, one take
    /// each (the last one plays).
    public var loopPasses: Int?
    /// The room's singer (simulated room only): sings `part`.
    public var singer: SingerSettings? = SingerSettings()
    /// Singers of the ensemble who sing otherwise, by part name (simulated room only).
    public var partSingers: [String: SingerSettings] = [:]
    /// Fault injection: a full disk after this many frames of a take.
    public var diskFullAfterFrames: Int64?
    /// How the other parts' takes play (streamed from their files unless told).
    public var takeLoading = TakeLoading.streamed()
    /// Where calibrations are looked up (nil: the data directory's store).
    public var calibrationStore: String?
    /// Run the pitch needle meanwhile and keep its readings (every ~50 ms).
    public var trackPitch = false
    /// Keep the part's own guide tone audible (normally muted: the singer
    /// sings it). A loopback test records the box's own guide this way.
    public var ownGuide = false
    /// Several parts at once, each from its input (1-based, as the
    /// interface labels them): `part` is ignored, a take per part.
    public var ensemble: [PartOnInput] = []

    /// A request to record `part`.
    public init(part: String) {
        self.part = part
    }
}

/// A part and the input (1-based) it is sung into.
public struct PartOnInput: Hashable, Sendable {
    public var part: String
    public var input: Int
    public init(part: String, input: Int) {
        self.part = part
        self.input = input
    }

    /// Parses `Soprano=1,Alto=2,…` (`record --parts`).
    public static func list(parsing text: String) throws(ProjectError) -> [PartOnInput] {
        var list: [PartOnInput] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, !pair[0].isEmpty, let input = Int(pair[1]), (1...32).contains(input) else {
                throw ProjectError(description: "--parts: '\(item)' is not PART=INPUT (an input from 1 to 32), as in Soprano=1,Alto=2")
            }
            guard !list.contains(where: { $0.part.lowercased() == pair[0].lowercased() }) else { throw ProjectError(description: "--parts: \(pair[0]) is named twice") }
            guard !list.contains(where: { $0.input == input }) else { throw ProjectError(description: "--parts: input \(input) is given twice (a microphone a part)") }
            list.append(PartOnInput(part: pair[0], input: input))
        }
        return list
    }

    /// A set as `score` reads it: each part by its name (any case) or its
    /// number from 1, in order; the names that are no part of it; and
    /// those that name a part already in the set ("1" beside "Soprano"),
    /// each with the name it shares it with.
    public static func resolve(_ set: [PartOnInput], in score: Score) -> (set: [PartInput], missing: [String], twice: [(name: String, as: String)]) {
        var resolved: [PartInput] = [], names: [String] = [], missing: [String] = [], twice: [(name: String, as: String)] = []
        for part in set {
            guard let index = partIndex(named: part.part, in: score) else {
                missing.append(part.part)
                continue
            }
            if let earlier = resolved.firstIndex(where: { $0.partIndex == index }) {
                twice.append((part.part, names[earlier]))
                continue
            }
            resolved.append(PartInput(partIndex: index, input: part.input - 1))
            names.append(part.part)
        }
        return (resolved, missing, twice)
    }

    /// "Soprano is named twice (as Soprano and 1)".
    public static func namedTwice(_ twice: (name: String, as: String), in score: Score) -> String {
        let part = partIndex(named: twice.name, in: score).map { score.parts[$0].name } ?? twice.name
        return "\(part) is named twice (as \(twice.as) and \(twice.name))"
    }

    /// The song's part a name stands for: its name in any case, or its
    /// number from 1 (`record --parts`, the box's recording set, `--part`).
    public static func partIndex(named name: String, in score: Score) -> Int? {
        if let named = score.parts.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) { return named }
        guard let number = Int(name), number >= 1, number <= score.parts.count else { return nil }
        return number - 1
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
    /// Cents a minute the pitch drifts (− sinking).
    public var driftCentsPerMinute = 0.0
    /// Loudness (the room's default singer: 0.5).
    public var level: Float = 0.5

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
    /// Times the device's frame clock jumped (xruns; a device lost and
    /// back): each a dropout in the take, in place, never a shift.
    public var deviceGaps: Int64 = 0
}

/// Records one part of a project through a device (`acapella record`):
/// the rig wires the engine, recorder and needle; this (control) thread
/// sends the commands, watches the events and ends the take.
public enum RecordingSession {
    /// Records and returns when the take is on disk. `announce` is called
    /// once everything is checked, just before the take starts (what is
    /// refused is refused before anything says "recording"); `progress` on
    /// the calling thread about every 50 ms with the frames received.
    public static func record(
        project: Project, request: RecordingRequest, device: any AudioDevice, announce: (() -> Void)? = nil, progress: ((Int64) -> Void)? = nil
    ) throws(ProjectError) -> RecordingResult {
        let score = project.score
        func index(of part: String) throws(ProjectError) -> Int {
            guard let index = PartOnInput.partIndex(named: part, in: score) else {
                throw ProjectError(description: "no part named '\(part)'; the parts are: " + score.parts.map(\.name).joined(separator: ", "))
            }
            return index
        }
        let resolved = PartOnInput.resolve(request.ensemble, in: score)
        if let missing = resolved.missing.first { _ = try index(of: missing) }
        if let twice = resolved.twice.first { throw ProjectError(description: "--parts: " + PartOnInput.namedTwice(twice, in: score)) }
        let ensemble = resolved.set
        let partIndex: Int
        if let first = ensemble.first { partIndex = first.partIndex } else { partIndex = try index(of: request.part) }
        guard device.sampleRate == project.manifest.sampleRate else {
            throw ProjectError(description: "the device runs at \(device.sampleRate) Hz, the project at \(project.manifest.sampleRate) Hz")
        }
        guard project.isWritable else { throw ProjectError(description: "\(project.path): opened read-only; nothing can be recorded") }
        let looping = request.loopPasses != nil && request.measures != nil
        var options = RigOptions(partIndex: partIndex)
        options.ensemble = ensemble
        options.rehearsal.countIn = request.measures == nil || looping ? request.countInMeasures : 0
        options.rehearsal.tempoPercent = request.tempoPercent
        options.rehearsal.transpose = request.transpose
        options.ownGuide = request.ownGuide
        options.punchesOnly = request.measures != nil
        options.trackPitch = request.trackPitch
        options.singer = request.singer
        for (name, settings) in request.partSingers { options.partSingers[try index(of: name)] = settings }
        options.calibrationStore = request.calibrationStore
        options.diskFullAfterFrames = request.diskFullAfterFrames
        options.takeLoading = request.takeLoading
        options.rehearsal.metronome = true
        options.clickGain = 0.2
        let check: Schedule
        do { check = try Schedule(score: score, options: ScheduleOptions(sampleRate: device.sampleRate)) } catch { throw ProjectError(description: error.description) }
        if let measures = request.measures, check.loopRange(measures: measures) == nil {
            throw ProjectError(description: "measures \(measures.lowerBound)-\(measures.upperBound) are not all in the song (measures \(check.firstMeasureNumber)–\(check.firstMeasureNumber + check.barlines.count - 1))")
        }
        // Refused before the singer sings a note, rather than stopped mid-take.
        let bytesPerSecond = Int64(device.sampleRate) * 4
        let minimum = bytesPerSecond * TakeSpace.minimumSeconds * Int64(max(1, ensemble.count)) + TakeSpace.margin
        let free = project.freeBytes
        guard free >= minimum else {
            throw ProjectError(description: "\(project.path): the disk is full (\(free / 1_000_000) MB free; a take needs \(minimum / 1_000_000) MB at least): free some space first")
        }
        let rig = try SessionRig(project: project, device: device, options: options)
        let link = rig.link
        // Through the control: a punch's pre-roll is announced to the butler, which reads there first.
        if let measures = request.measures, let passes = request.loopPasses {
            rig.control.send(.loop(measures))
            rig.control.send(.stopAfterPasses(passes))
            rig.control.send(.record(.immediate))
        } else if let measures = request.measures {
            rig.control.send(.punch(measures: measures, prerollMeasures: 1))
        } else {
            rig.control.send(.record(.immediate))
        }
        announce?()
        rig.start()
        // Wait for the transport to stop by itself (song end or the punch's
        // auto stop), for a stop signal (the take is finished, as with the
        // stop button), or for the device to fail.
        var readings: [PitchReading] = []
        var stopped = false
        var stopSent = false
        while !stopped {
            if rig.waitForDevice(milliseconds: 50) { break }
            if StopSignals.received && !stopSent {
                link.send(.stop)
                stopSent = true
            }
            while let event = link.nextEvent() {
                if case .stopped = event { stopped = true }
            }
            link.collectRetired()
            for recorder in rig.recorders { recorder.serve() }
            progress?(rig.recorder?.receivedFrames ?? 0)
            if let reading = rig.tracker?.reading, reading.songSample != readings.last?.songSample { readings.append(reading) }
        }
        rig.finish(stopTransport: true)
        var problems = rig.recorders.flatMap(\.problems)
        problems += rig.streamMisses()
        if let alsa = device as? ALSADevice { problems += alsa.realTimeWarnings.map { "warning: " + $0 } }
        if let failure = rig.deviceFailure { problems.append(failure + "; the take is kept up to that moment") }
        return RecordingResult(takes: rig.recorders.flatMap(\.finished), problems: problems, overrunFrames: rig.recorders.map(\.ring.droppedCount).reduce(0, +), pitchReadings: readings,
                               deviceGaps: link.board.read().deviceGaps)
    }
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
    /// reports (a run the device dropped frames in is made again, and
    /// `retried` told). Throws `CalibrationError` when the measurement is refused,
    /// `ProjectError` when the store cannot be written.
    public mutating func calibrate(_ device: any AudioDevice, retried: (String) -> Void = { _ in }) throws -> (result: CalibrationResult, stored: RouteCalibration) {
        let result = try Calibration.measure(device: device, retried: retried)
        let stored = RouteCalibration(measuredFrames: result.roundTripFrames, reportedFrames: device.reportedRoundTripFrames,
                                      trimFrames: result.roundTripFrames - device.reportedRoundTripFrames, date: ISO8601DateFormatter().string(from: Date()))
        try store(stored, for: device.route)
        return (result, stored)
    }
}
