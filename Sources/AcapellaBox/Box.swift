public import AcapellaControl
public import AcapellaDevices
import AcapellaAnalysis
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Set by SIGINT/SIGTERM: the box finishes what it is doing and stops.
nonisolated(unsafe) var boxStopSignal: sig_atomic_t = 0

/// The signal handler: only sets the flag (async-signal-safe).
func boxSignalHandler(_ signal: Int32) {
    boxStopSignal = 1
}

/// How to start the box.
public struct BoxOptions: Sendable {
    /// The songs to browse (previous/next song).
    public var songs: [String]
    /// Which of them to start with.
    public var songIndex = 0
    /// The part to record, by index.
    public var partIndex = 0
    /// Where each song's project lives (created on first use).
    public var dataDirectory: String
    /// Quit after this many seconds (tests, demos); nil: until asked.
    public var seconds: Double?
    /// Start playing at once (demos without a keyboard).
    public var autoplay = false
    /// Quit when the transport stops after playing (no keyboard attached).
    public var quitWhenStopped = false
    /// Count-in measures before a take.
    public var countIn = 1
    /// The metronome while playing.
    public var metronome = false
    /// Draw the console readout (when a terminal is attached).
    public var consoleReadout = true
    /// LCDd's address (nil: no LCD).
    public var lcdHost: String? = "127.0.0.1"
    public var lcdPort: UInt16 = 13_666

    /// Options.
    public init(songs: [String], dataDirectory: String) {
        self.songs = songs
        self.dataDirectory = dataDirectory
    }
}

/// The appliance's main loop, in its first form: one song and part at a
/// time on a device, the engine on the device's thread, the recorder and
/// the pitch needle on theirs, and this (control) thread reading console
/// keys, MIDI and foot switches, dispatching actions, and drawing the
/// console and LCD readouts at ~20 Hz. Changing song or part starts the
/// next session; quitting (Q, the shutdown action, SIGINT/SIGTERM)
/// finishes a take in progress before it returns.
public enum Box {
    /// What happened, for the log (one line each).
    public typealias Log = (String) -> Void

    /// Runs until asked to stop. `openDevice` makes a fresh device for each
    /// session.
    public static func run(options: BoxOptions, controls: ControlConfig, openDevice: () throws -> any AudioDevice, log: Log) throws {
        signal(SIGINT, boxSignalHandler)
        signal(SIGTERM, boxSignalHandler)
        var options = options
        let hub = ControlHub(config: controls)
        for warning in hub.warnings { log(warning) }
        for input in hub.inputs { log("control: \(input)") }
        let console = ConsoleInput()
        let display = console == nil || !options.consoleReadout ? nil : ConsoleDisplay()
        defer { display?.finish() }
        let lcd = options.lcdHost.map { LCDClient(host: $0, port: options.lcdPort) }
        if let lcd, (try? lcd.connect()) == nil { log("LCD: no LCDd at \(lcd.host):\(lcd.port); the box runs on without the display") }
        let started = Date()
        while boxStopSignal == 0 {
            let device = try openDevice()
            if device is SimulatedRoom { log("no sound card: running on the \(device.name), a synthetic singer singing the part") }
            let next = try session(options: &options, device: device, hub: hub, console: console, display: display, lcd: lcd, controls: controls, started: started, log: log)
            if !next { break }
        }
    }

    /// One song and part; returns whether another session should follow.
    static func session(
        options: inout BoxOptions, device: any AudioDevice, hub: ControlHub, console: ConsoleInput?, display: ConsoleDisplay?, lcd: LCDClient?,
        controls: ControlConfig, started: Date, log: Log
    ) throws -> Bool {
        let songPath = options.songs[options.songIndex]
        let text = try String(contentsOfFile: songPath, encoding: .utf8)
        let score = try Acasong.parse(text)
        let stem = ((songPath as NSString).lastPathComponent as NSString).deletingPathExtension
        let projectPath = options.dataDirectory + "/projects/\(stem).acaproj"
        let project: Project
        if FileManager.default.fileExists(atPath: projectPath) {
            let (opened, report) = try Project.open(projectPath)
            for line in report { log("\(projectPath): \(line)") }
            project = opened
        } else {
            try FileManager.default.createDirectory(atPath: options.dataDirectory + "/projects", withIntermediateDirectories: true)
            project = try Project.create(at: projectPath, songText: text, sampleRate: device.sampleRate)
        }
        options.partIndex = min(options.partIndex, score.parts.count - 1)
        let part = score.parts[options.partIndex]
        let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: device.sampleRate, countInMeasures: options.countIn))
        var mixes = PartMix.spread(count: score.parts.count)
        mixes[options.partIndex].muted = true  // the singer's own part: they sing it
        let (takes, _) = try project.activeTakes(for: schedule.options)
        var core = EngineCore(schedule: schedule, mixes: mixes, takes: takes, clickGain: options.metronome ? 0.3 : 0, maximumFrames: device.periodFrames)
        let recorder = Recorder(project: project, part: part.name, options: schedule.options, calibration: "\(device.route): \(device.roundTripFrames) frames")
        core.attachCapture(ring: recorder.ring, latencyFrames: Int(device.roundTripFrames.rounded()))
        let tracker = PitchTracker(tones: schedule.tones[options.partIndex], sampleRate: device.sampleRate)
        core.attachAnalysis(ring: tracker.ring)
        let link = core.link
        let singer = device is SimulatedRoom ? SyntheticSinger(tones: schedule.tones[options.partIndex], sampleRate: device.sampleRate) : nil
        let engine = EngineBox(core)
        recorder.start()
        tracker.start()
        let render = RenderThread(device: DeviceBox(device), engine: engine, singer: singer)
        log("ready: \(score.title ?? stem), recording part \(part.name) (\(options.partIndex + 1) of \(score.parts.count)); project \(projectPath)")
        if options.autoplay { link.send(.play) }

        var dispatcher = ActionDispatcher(quantize: Quantize(rawValue: controls.punchQuantize) ?? .bar)
        var continueAfter = false
        var showHelp = false
        let tempo = Double(score.tempos.first?.tempo.milliBPM ?? 120_000) / 1_000
        var hasPlayed = false
        sessionLoop: while boxStopSignal == 0 {
            if render.hasEnded {
                if let message = render.failure { log(message + "; the take so far is kept") }
                continueAfter = render.failure != nil  // a lost device: reopen and carry on
                break
            }
            var actions = hub.poll(timeoutMilliseconds: console == nil ? 50 : 0)
            if let console {
                let keys = console.poll(timeoutMilliseconds: 50)
                actions += keys.actions
                if keys.help { showHelp.toggle() }
            }
            if let seconds = options.seconds, Date().timeIntervalSince(started) >= seconds { break }
            let snapshot = link.snapshot()
            if snapshot.state != .stopped { hasPlayed = true }
            if options.quitWhenStopped && hasPlayed && snapshot.state == .stopped { break }
            for action in actions {
                switch dispatcher.dispatch(action, snapshot: snapshot) {
                case .engine(let commands): for command in commands { link.send(command) }
                case .ignored: break
                case .box(let request):
                    switch request {
                    case .nextSong, .previousSong:
                        options.songIndex = (options.songIndex + (request == .nextSong ? 1 : options.songs.count - 1)) % options.songs.count
                        continueAfter = true
                        break sessionLoop
                    case .nextPart, .previousPart:
                        options.partIndex = (options.partIndex + (request == .nextPart ? 1 : score.parts.count - 1)) % score.parts.count
                        continueAfter = true
                        break sessionLoop
                    case .discardTake, .undoTake:
                        link.send(.stop)
                        if let undone = try? project.undoLastTake() { log("take \(undone.id) (\(undone.part)) discarded") }
                    case .keepTake:
                        log("the last take is kept (takes are kept unless discarded)")
                    case .shutdown:
                        break sessionLoop
                    default:
                        log("\(request.rawValue): not available in this version of the box yet")
                    }
                }
            }
            link.collectRetired()
            while link.nextEvent() != nil {}
            let reading = tracker.reading
            let state: String
            switch snapshot.state {
            case .stopped: state = "stopped"
            case .countIn: state = "count-in"
            case .playing: state = "playing"
            case .recording: state = "recording"
            }
            let readout = ReadoutState(
                song: score.title ?? stem, part: part.name, state: state, measure: snapshot.measure, beat: snapshot.beat, tempo: tempo,
                takes: project.manifest.takes.filter { $0.part == part.name && $0.state != "discarded" }.count,
                inputDB: reading.map { $0.inputPeak > 0 ? 20 * log10(Double($0.inputPeak)) : -.infinity } ?? -.infinity,
                clipped: (reading?.inputPeak ?? 0) >= 0.999,
                note: reading?.expectedMIDI.map(NoteName.name), cents: reading?.cents,
                lyric: showHelp ? ConsoleKeys.help.split(separator: "\n").prefix(3).joined(separator: " ") : "")
            display?.draw(readout)
            if let lcd { lcd.show(Readout.lcd(readout, columns: lcd.columns > 0 ? lcd.columns : 16, rows: lcd.rows > 0 ? lcd.rows : 2)) }
        }
        // Finish: stop the transport (a take in progress is finished), let
        // the round trip's last frames arrive, stop the device, the recorder
        // and the needle.
        link.send(.stop)
        usleep(useconds_t(max(50_000, Int(device.roundTripFrames) * 3 * 1_000_000 / device.sampleRate)))
        render.stop()
        recorder.finish()
        tracker.stop()
        for take in recorder.finished { log("take \(take.id) (\(take.part)) \(take.state): \(String(format: "%.1f", Double(take.frames) / Double(project.manifest.sampleRate))) s, \(take.file)") }
        for problem in recorder.problems { log(problem) }
        return continueAfter && boxStopSignal == 0
    }
}
