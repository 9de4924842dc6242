public import AcapellaDevices
public import AcapellaEngine
public import AcapellaProject
public import AcapellaScore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How to rig a session.
public struct RigOptions: Sendable {
    /// The part rehearsed or recorded, by index.
    public var partIndex: Int
    /// The tempo, key, count-in and metronome it starts with (the verse is the session's).
    public var rehearsal = Rehearsal()
    /// Metronome gain when on.
    public var clickGain: Float = 0.3
    /// Keep the part's own guide tone audible (normally muted: the singer sings it).
    public var ownGuide = false
    /// Record every take as a punch-in (a measure range was asked for).
    public var punchesOnly = false
    /// Run the pitch needle.
    public var trackPitch = true
    /// The simulated room's singer (used only in the room).
    public var singer: SingerSettings? = SingerSettings()
    /// Singers of the ensemble who sing otherwise (by part index).
    public var partSingers: [Int: SingerSettings] = [:]
    /// Where calibrations are looked up (nil: the data directory's store).
    public var calibrationStore: String?
    /// Fault injection: a full disk after this many frames of a take.
    public var diskFullAfterFrames: Int64?
    /// How takes are played: streamed from their files (the box's way) or
    /// decoded into memory.
    public var takeLoading = TakeLoading.streamed()
    /// The parts that sing their guide tones, their takes left out.
    public var tones: Set<Int> = []
    /// Wakes the thread that owns the project when the recorder's writer
    /// asks it something (it serves the writer in `Recorder.serve`).
    public var wakeOwner: @Sendable () -> Void = {}

    /// Several parts recorded at once, each from its own input (a quartet
    /// on a 4-input interface): a take per part, one capture and one clock
    /// for all. Empty: `partIndex` alone, from the device's (mono) input.
    public var ensemble: [PartInput] = []

    /// Options for part `partIndex`.
    public init(partIndex: Int) {
        self.partIndex = partIndex
    }
}

/// A part recorded from an input of the device (0-based).
public struct PartInput: Hashable, Sendable {
    public var partIndex: Int
    public var input: Int
    public init(partIndex: Int, input: Int) {
        self.partIndex = partIndex
        self.input = input
    }
}

/// Starts and stops everything one session needs, for `acapella run` and
/// `acapella record` alike: the schedule, the engine on the device's thread
/// (through a supervisor that reopens a lost device when asked to), the
/// recorder on its thread (when the project can be written), the pitch
/// needle on its own, the stored calibration applied. It wires; it decides
/// nothing (`BoxSession` and `RecordingSession` do).
public final class SessionRig {
    public let project: Project
    public let partIndex: Int
    /// The schedule the engine started with.
    public let schedule: Schedule
    /// The engine's links, and the control thread's half.
    public let link: EngineLink
    public let control: EngineControl
    /// Nil when the project is read-only here (nothing is recorded); the
    /// first part's when several are recorded at once.
    public var recorder: Recorder? { recorders.first }
    /// A recorder per part recorded (several: the ensemble, input by input).
    public let recorders: [Recorder]
    /// The parts recorded at once and their inputs (empty: one part, the mono input).
    public let ensemble: [PartInput]
    public let tracker: PitchTracker?
    /// The calibration line each take records.
    public let calibration: String
    /// Takes that could not be loaded, and why.
    public let leftOut: [LeftOutTake]
    /// The part's mix (muted unless its guide was asked for).
    public let mixes: [PartMix]
    /// Reads the streamed takes ahead of the render thread.
    public let butler: TakeStreamButler
    private let butlerThread: ButlerThread
    private let takeLoading: TakeLoading
    private var missesSeen: [ObjectIdentifier: Int64] = [:]
    /// The renderer's fade at a take's edges (where a streamed take is heard from).
    private let streamFade: Int64
    /// The takes the engine was last sent, per part.
    private(set) var sentTakes: [PartTakes]
    private var render: RenderThread?
    private var pending: (device: DeviceBox, reopen: (@Sendable () throws(DeviceError) -> any AudioDevice)?, engine: EngineBox, singers: [SyntheticSinger?])?
    let roundTripFrames: Double
    let sampleRate: Int
    let periodFrames: Int
    private var finished = false

    /// Rigs `project` on `device`; with `reopen`, a lost device is reopened
    /// through it and the session carries on (the box), else the loss ends
    /// the session (a recording).
    public init(project: Project, device: any AudioDevice, reopen: (@Sendable () throws(DeviceError) -> any AudioDevice)? = nil, options: RigOptions) throws(ProjectError) {
        let score = project.score
        guard score.parts.indices.contains(options.partIndex) else { throw ProjectError(description: "no part number \(options.partIndex + 1)") }
        for part in options.ensemble {
            guard score.parts.indices.contains(part.partIndex) else { throw ProjectError(description: "no part number \(part.partIndex + 1)") }
            guard part.input >= 0, part.input < device.inputCount else {
                throw ProjectError(description: "\(score.parts[part.partIndex].name) on input \(part.input + 1): \(device.name) has \(device.inputCount) input\(device.inputCount == 1 ? "" : "s")")
            }
        }
        guard device.sampleRate == project.manifest.sampleRate else {
            throw ProjectError(description: "the device runs at \(device.sampleRate) Hz, the project at \(project.manifest.sampleRate) Hz")
        }
        self.project = project
        partIndex = options.partIndex
        ensemble = options.ensemble
        // The reference recording, when the project has one, plays after the parts.
        let scheduleOptions = ScheduleOptions(sampleRate: device.sampleRate, tempoScale: Rational(Int128(options.rehearsal.tempoPercent), 100), transpose: options.rehearsal.transpose,
                                              countInMeasures: options.rehearsal.countIn, audioTracks: project.audioTracks)
        do { schedule = try Schedule(score: score, options: scheduleOptions) } catch { throw ProjectError(description: error.description) }
        var mixes = PartMix.defaults(parts: score.parts.count, tracks: scheduleOptions.audioTracks.count)
        mixes[options.partIndex].muted = !options.ownGuide
        for part in options.ensemble { mixes[part.partIndex].muted = !options.ownGuide }
        self.mixes = mixes
        tones = options.tones
        let (takes, leftOut) = project.activeTakes(for: scheduleOptions, loading: options.takeLoading, tones: options.tones)
        self.leftOut = leftOut
        takeLoading = options.takeLoading
        sentTakes = takes
        var core = EngineCore(schedule: schedule, mixes: mixes, takes: takes, clickGain: options.rehearsal.metronome ? options.clickGain : 0, maximumFrames: device.periodFrames)
        // The butler reads the streamed takes' first blocks now, and ahead of the song once started.
        let butler = TakeStreamButler(cue: StreamCue())
        core.attachStreams(cue: butler.cue)
        streamFade = Int64(core.renderer.rampSamples)
        butler.watch(takes, fade: streamFade)
        butler.service()
        self.butler = butler
        butlerThread = ButlerThread(butler: butler)
        let store: CalibrationStore
        if let path = options.calibrationStore { store = try CalibrationStore(path: path) } else { store = try CalibrationStore() }
        calibration = CalibrationStore.applying(store, to: device)
        if project.isWritable {
            let line = calibration
            func makeRecorder(_ part: Int) -> Recorder {
                Recorder(project: project, part: score.parts[part].name, options: scheduleOptions, calibration: line,
                         punchesOnly: options.punchesOnly, failAfterFrames: options.diskFullAfterFrames, wakeOwner: options.wakeOwner)
            }
            let made: [Recorder]
            if options.ensemble.isEmpty {
                made = [makeRecorder(options.partIndex)]
                core.attachCapture(ring: made[0].ring, latencyFrames: try captureLatency(of: device))
            } else {
                // One tagging of the capture, a ring per input: the takes share every mark.
                made = options.ensemble.map { makeRecorder($0.partIndex) }
                // A mark the takes sung together share (this box, this moment).
                let mark = (try? BoxIdentity.current()) ?? "box"
                let stamp = String(UInt64(MonotonicClock.nanoseconds()), radix: 36)
                for recorder in made { recorder.ensemble = "\(mark)-\(stamp)" }
                core.attachCapture(ring: BulkRing(capacity: 1), latencyFrames: try captureLatency(of: device))
                core.attachInputs(zip(made, options.ensemble).map { (ring: $0.ring, input: $1.input) })
            }
            if let room = device as? SimulatedRoom {
                let rings = made.map(\.ring)
                room.backpressure = { rings.allSatisfy { $0.waitingCount < $0.capacityCount / 2 } && butler.isAhead(margin: Int64(2 * TakeStream.blockFrames)) }
            }
            recorders = made
        } else {
            // Nothing is recorded, but the needle still hears the singer.
            core.attachCapture(ring: BulkRing(capacity: 1), latencyFrames: try captureLatency(of: device))
            recorders = []
            if let room = device as? SimulatedRoom { room.backpressure = { butler.isAhead(margin: Int64(2 * TakeStream.blockFrames)) } }
        }
        tracker = options.trackPitch ? PitchTracker(tones: schedule.tones[options.partIndex], sampleRate: device.sampleRate) : nil
        // In a set recorded at once, the needle hears the part it follows on its own input.
        if let tracker { core.attachAnalysis(ring: tracker.ring, input: options.ensemble.first { $0.partIndex == options.partIndex }?.input) }
        link = core.link
        control = EngineControl(link: link, score: score, options: scheduleOptions)
        control.cue = butler.cue
        control.initialSchedule = schedule
        // The room's singers: the part at microphone 1, or each part of the ensemble at its own.
        var singers: [SyntheticSinger?] = Array(repeating: nil, count: device.inputCount)
        if let common = options.singer, device is SimulatedRoom {
            let placed = options.ensemble.isEmpty ? [PartInput(partIndex: options.partIndex, input: 0)] : options.ensemble
            for part in placed where singers.indices.contains(part.input) {
                let settings = options.partSingers[part.partIndex] ?? common
                var voice = SyntheticSinger(tones: schedule.tones[part.partIndex], sampleRate: device.sampleRate)
                voice.detuneCents = settings.detuneCents
                voice.vibratoCents = settings.vibratoCents
                voice.timingErrorSamples = settings.timingErrorSamples
                voice.noise = settings.noise
                voice.breathSeed = UInt64(part.partIndex)
                voice.driftCentsPerMinute = settings.driftCentsPerMinute
                voice.level = settings.level
                singers[part.input] = voice
            }
        }
        roundTripFrames = device.roundTripFrames
        sampleRate = device.sampleRate
        periodFrames = device.periodFrames
        pending = (DeviceBox(device), reopen, EngineBox(core), singers)
        room = device as? SimulatedRoom
    }

    /// Starts the recorder, the needle and the device loop. Commands sent
    /// before apply in the very first period (a take then starts on device
    /// frame 0: the same take every time in the simulated room).
    public func start() {
        guard let (device, reopen, engine, singers) = pending else { return }
        pending = nil
        for recorder in recorders { recorder.start() }
        tracker?.start()
        butler.service()  // the places announced since the rig was made (a punch's pre-roll)
        butlerThread.start()
        render = RenderThread(device: device, reopen: reopen, engine: engine, singers: singers)
    }

    /// Tempo, count-in and key from the next barline (the control's
    /// `retime`; refused while a take is sung: it is sung to one tempo).
    /// The caller sends the takes stretched for it (`reloadAllTakes`): the
    /// engine holds them with the schedule and swaps both in at the
    /// barline, where the butler is told to read their first blocks.
    public func retime(tempoScale: Rational, countIn: Int, transpose: Int) throws(EngineControlError) -> Schedule {
        let snapshot = link.snapshot()
        guard snapshot.state != .recording && snapshot.state != .countIn else {
            throw EngineControlError(description: "not while recording (or counting in): stop first")
        }
        let before = control.schedule ?? schedule
        let new = try control.retime(tempoScale: tempoScale, countIn: countIn, transpose: transpose)
        if playingUntilSwitch == nil { playingUntilSwitch = sentTakes }
        if snapshot.state != .stopped {
            let index = before.barlines.partitionIndex { $0 >= snapshot.position }
            if index < new.barlines.count { butler.cue.announce(new.barlines[index]) }
        }
        return new
    }

    /// The takes the engine plays until a schedule waiting for its barline
    /// takes over: read ahead by the butler until then.
    private var playingUntilSwitch: [PartTakes]?

    /// The engine switched to the schedule last sent (`scheduleChanged`):
    /// takes begun from now on are stamped with its tempo and key, and the
    /// takes it replaced are no longer read.
    public func scheduleSwitched() {
        for recorder in recorders { recorder.follow(control.options) }
        guard playingUntilSwitch != nil else { return }
        playingUntilSwitch = nil
        butler.watch(uses: sentTakes.flatMap { $0.layers.compactMap { $0.streamUse(fade: streamFade) } })
    }

    /// What each part's takes are called in the engine now ("take 3
    /// (Alto) at 80 % of the tempo sung"): the streamed ones.
    public var heardTakes: [[String]] { sentTakes.map { $0.layers.compactMap { $0.stream?.name } } }

    /// The part's active takes as the project has them now, into the engine.
    public func reloadTakes() {
        send(takes: loadTakes(), parts: [partIndex])
    }

    /// Loads every part's active takes into the engine again (a take of
    /// another part changed from the web page).
    public func reloadAllTakes() {
        let takes = loadTakes()
        send(takes: takes, parts: Array(takes.indices))
    }

    /// The parts that sing their guide tones, their takes left out (the
    /// next reload sends them).
    public var tones: Set<Int>

    private func loadTakes() -> [PartTakes] {
        project.activeTakes(for: control.options, loading: takeLoading, tones: tones).takes
    }

    /// Sends `parts` of `takes` to the engine. Their streams get their
    /// first blocks read here, before the render thread has them; the
    /// butler then reads for them, and for the ones they replace until the
    /// next reload (those play until the engine swaps them).
    private func send(takes: [PartTakes], parts: [Int]) {
        let fade = streamFade
        let primer = TakeStreamButler(cue: butler.cue)
        primer.watch(parts.map { takes[$0] }, fade: fade)
        primer.service()
        let replaced = parts.map { sentTakes[$0] }
        for part in parts { sentTakes[part] = takes[part] }
        butler.watch(uses: (sentTakes + replaced + (playingUntilSwitch ?? [])).flatMap { $0.layers.compactMap { $0.streamUse(fade: fade) } })
        for part in parts { control.send(.takes(part: part, takes[part])) }
    }

    /// What the streamed takes missed since the last call (a slow card):
    /// one line each, for the log and the readout.
    public func streamMisses() -> [String] {
        let schedule = control.schedule ?? self.schedule
        let (lines, seen) = butler.misses(since: missesSeen) { "in measure \(max(schedule.firstMeasureNumber, schedule.measure(at: $0)))" }
        missesSeen = seen
        return lines
    }

    /// Whether the device loop has ended (a lost device the rig does not
    /// reopen, or `finish`), and why when it failed.
    public var deviceEnded: Bool { render?.hasEnded ?? false }
    public var deviceFailure: String? { render?.failure }

    /// What happened to the device since the last call (lost, reopened).
    public func deviceEvents() -> [DeviceSupervisor.Event] { render?.takeEvents() ?? [] }

    /// Waits up to `milliseconds` for the device loop to end; true when it has.
    public func waitForDevice(milliseconds: Int) -> Bool {
        guard let render else {
            usleep(useconds_t(milliseconds) * 1_000)
            return false
        }
        return render.wait(milliseconds: milliseconds)
    }

    /// Stops the transport (a take in progress is finished), lets the round
    /// trip's last frames arrive, stops the device, the recorder and the
    /// needle. Returns once every take is on disk. Idempotent.
    public func finish(stopTransport: Bool = true) {
        guard !finished else { return }
        finished = true
        guard let render else { return }  // never started
        if stopTransport && !render.hasEnded {
            link.send(.stop)
            let tail = Int(roundTripFrames) + 2 * periodFrames
            _ = render.wait(milliseconds: max(50, tail * 3_000 / sampleRate))
        }
        render.stop()
        butlerThread.stop()
        for recorder in recorders { recorder.finish() }
        tracker?.stop()
        link.collectRetired()
    }

    /// How long the periods took to render (once `finish` has run); in the
    /// simulated room at real time, also the periods it finished late.
    public var renderSummary: String? {
        guard finished, let summary = render?.times.summary(sampleRate: sampleRate) else { return nil }
        guard let room, case .realTime(let speed) = room.options.pacing, speed <= 1 else { return summary }
        return summary + "; \(room.latePeriods) periods late in the simulated room (an xrun on a card), \(room.realTimeScheduled ? "SCHED_FIFO" : "normal priority"), memory \(room.memoryLocked ? "locked" : "not locked")"
    }
    private let room: SimulatedRoom?

    deinit { finish(stopTransport: false) }
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
