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

/// How to start the box.
public struct BoxOptions: Sendable {
    /// The songs to browse (previous/next song).
    public var songs: [String]
    /// Which of them to start with.
    public var songIndex = 0
    /// The part to record, by index.
    public var partIndex = 0
    /// Where the first part came from, for an error when the first song
    /// has fewer parts ("--part", "/etc/acapella/acapella.json: part").
    public var partSource = "part"
    /// The first song has been checked against the part asked for.
    var partChecked = false
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
    /// Projects kept elsewhere than the data directory, by song path (`--project`).
    public var projectPaths: [String: String] = [:]
    /// The calibration store (nil: the data directory's).
    public var calibrationStore: String?
    /// What the safe-shutdown action runs after everything is on disk
    /// (nil: the box only quits). On the Pi: `systemctl poweroff`.
    public var powerOffCommand: [String]?

    /// Options.
    public init(songs: [String], dataDirectory: String) {
        self.songs = songs
        self.dataDirectory = dataDirectory
    }
}

/// The appliance's main loop: one song and part at a time on a device, the
/// engine on the device's thread, the recorder and the pitch needle on
/// theirs, and this (control) thread reading console keys, MIDI and foot
/// switches, dispatching actions, and drawing the console and LCD readouts
/// at ~20 Hz. Changing song or part starts the next session; calibrating
/// runs between sessions; quitting (Q, the shutdown action, SIGINT/SIGTERM)
/// finishes a take in progress before it returns.
public enum Box {
    /// What happened, for the log (one line each).
    public typealias Log = (String) -> Void

    /// How a session ended.
    enum SessionEnd: Equatable {
        /// Quit (Q, a signal, the time limit, played through).
        case quit
        /// Another song or part, or the device came back after a loss.
        case next
        /// Calibrate the device, then carry on.
        case calibrate
        /// Safe shutdown: quit, then power off when configured.
        case shutdown
    }

    /// Runs until asked to stop. `openDevice` makes a fresh device for each
    /// session.
    public static func run(options: BoxOptions, controls: ControlConfig, openDevice: () throws -> any AudioDevice, log: Log) throws {
        StopSignals.install()
        var options = options
        // One box per data directory: a second one is refused at once, naming the first.
        do { try Folders.make(options.dataDirectory + "/projects") } catch { throw ProjectError(description: error.description) }
        let dataLock = try OwnerLock.acquire(options.dataDirectory, owner: "acapella run")
        defer { dataLock.release() }
        let hub = ControlHub(config: controls)
        for line in hub.news() { log(line) }
        for input in hub.inputs { log("control: \(input)") }
        let console = ConsoleInput()
        let display = console == nil || !options.consoleReadout ? nil : ConsoleDisplay()
        defer { display?.finish() }
        let lcd = options.lcdHost.map { LCDClient(host: $0, port: options.lcdPort) }
        if let lcd, (try? lcd.connect()) == nil { log("LCD: no LCDd at \(lcd.host):\(lcd.port); the box runs on without the display") }
        let started = Date()
        var end = SessionEnd.next
        while !StopSignals.received && end != .quit && end != .shutdown {
            let device = try openDevice()
            if device is SimulatedRoom { log("no sound card: running on the \(device.name), a synthetic singer singing the part") }
            if end == .calibrate {
                calibrate(device: device, options: options, log: log)
                end = .next
                continue
            }
            end = try session(options: &options, device: device, hub: hub, console: console, display: display, lcd: lcd, controls: controls, started: started, log: log)
        }
        if end == .shutdown {
            display?.finish()
            guard let command = options.powerOffCommand, !command.isEmpty else {
                log("safe shutdown: everything is on disk; the box stops (powering off is not configured: set \"powerOff\": true on the Pi)")
                return
            }
            log("safe shutdown: everything is on disk; running \(command.joined(separator: " "))")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command
            do {
                try process.run()
                process.waitUntilExit()
                if process.terminationStatus != 0 { log("safe shutdown: \(command.joined(separator: " ")) failed (status \(process.terminationStatus)); switch off by hand — nothing is being written") }
            } catch {
                log("safe shutdown: cannot run \(command.joined(separator: " ")): \(error); switch off by hand — nothing is being written")
            }
        }
    }

    /// The calibration action: measures the device's round trip (output
    /// connected to input), stores the trim for its route and says so.
    static func calibrate(device: any AudioDevice, options: BoxOptions, log: Log) {
        log("calibrating \(device.name): connect the output to the input (a cable, or headphones held to the microphone)")
        do {
            var store = try calibrationStore(options)
            let (result, stored) = try store.calibrate(device)
            log(String(format: "calibrated %@: round trip %.2f frames (reported %.2f, trim %+.2f), stored in %@", device.route, result.roundTripFrames,
                       stored.reportedFrames, stored.trimFrames, store.path))
        } catch let error as CalibrationError {
            log("calibration refused: \(error.description); the previous calibration stays")
        } catch {
            log("calibration: \(error); the previous calibration stays")
        }
    }

    static func calibrationStore(_ options: BoxOptions) throws(ProjectError) -> CalibrationStore {
        if let path = options.calibrationStore { return try CalibrationStore(path: path) }
        return try CalibrationStore()
    }

    /// One song and part; says what comes next.
    static func session(
        options: inout BoxOptions, device: any AudioDevice, hub: ControlHub, console: ConsoleInput?, display: ConsoleDisplay?, lcd: LCDClient?,
        controls: ControlConfig, started: Date, log: Log
    ) throws -> SessionEnd {
        let songPath = options.songs[options.songIndex]
        guard let data = FileManager.default.contents(atPath: songPath) else { throw ProjectError(description: "\(songPath): cannot read the song") }
        let text = String(decoding: data, as: UTF8.self)
        let stem = ((songPath as NSString).lastPathComponent as NSString).deletingPathExtension
        let projectPath = options.projectPaths[songPath] ?? options.dataDirectory + "/projects/\(stem).acaproj"
        let project: Project
        if FileManager.default.fileExists(atPath: projectPath) {
            // The box writes its projects; when another program holds one (or
            // it is read-only), the box plays it and says why it cannot record.
            do {
                let (opened, report) = try Project.open(projectPath, for: .write(owner: "acapella run"))
                for line in report { log("\(projectPath): \(line)") }
                project = opened
            } catch {
                let (opened, report) = try Project.open(projectPath, for: .read)
                for line in report { log("\(projectPath): \(line)") }
                log("\(error.description): playing only, recording is off")
                project = opened
            }
        } else {
            do { _ = try Acasong.parse(bytes: [UInt8](data), file: songPath) } catch { throw ProjectError(description: error.errors.first.map { "\($0)" } ?? songPath) }
            project = try Project.create(at: projectPath, songText: text, sampleRate: device.sampleRate, owner: "acapella run")
        }
        defer { project.close() }
        let score = project.score
        if options.partIndex >= score.parts.count {
            // Asked for at start: an error naming where it was asked. Later
            // (another song with fewer parts) the last part is the nearest.
            if !options.partChecked {
                throw ProjectError(description: "\(options.partSource): part \(options.partIndex + 1), but \(score.title.map { "'\($0)'" } ?? songPath) has \(score.parts.count) parts")
            }
            options.partIndex = score.parts.count - 1
        }
        options.partChecked = true
        let partIndex = options.partIndex
        let part = score.parts[partIndex]
        let schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: device.sampleRate, countInMeasures: options.countIn))
        var mixes = PartMix.spread(count: score.parts.count)
        mixes[partIndex].muted = true  // the singer's own part: they sing it
        let (takes, leftOut) = project.activeTakes(for: schedule.options)
        for take in leftOut { log(take.description) }
        var core = EngineCore(schedule: schedule, mixes: mixes, takes: takes, clickGain: options.metronome ? 0.3 : 0, maximumFrames: device.periodFrames)
        let calibration = CalibrationStore.applying(try calibrationStore(options), to: device)
        let recorder = Recorder(project: project, part: part.name, options: schedule.options, calibration: calibration)
        core.attachCapture(ring: recorder.ring, latencyFrames: try captureLatency(of: device))
        let tracker = PitchTracker(tones: schedule.tones[partIndex], sampleRate: device.sampleRate)
        core.attachAnalysis(ring: tracker.ring)
        let link = core.link
        let control = EngineControl(link: link, score: score, options: schedule.options)
        for (index, slot) in takes.enumerated() where !slot.layers.isEmpty { control.send(.takes(part: index, slot)) }  // (tracks which parts play takes)
        let singer = device is SimulatedRoom ? SyntheticSinger(tones: schedule.tones[partIndex], sampleRate: device.sampleRate) : nil
        let engine = EngineBox(core)
        recorder.start()
        tracker.start()
        let render = RenderThread(device: DeviceBox(device), engine: engine, singer: singer)
        log("ready: \(score.title ?? stem), recording part \(part.name) (\(partIndex + 1) of \(score.parts.count)); project \(projectPath); \(calibration)")
        if options.autoplay { link.send(.play) }

        var dispatcher = ActionDispatcher(quantize: controls.punchQuantize)
        var end = SessionEnd.quit
        var showHelp = false
        let writtenTempo = Double(score.tempos.first?.tempo.milliBPM ?? 120_000) / 1_000
        let lyrics = LyricLines(part: part, schedule: schedule)
        var hasPlayed = false
        var soloed = false
        var takesSeen = 0
        var reviewing: TakeRecord?
        var message = ""
        func measure(_ sample: Int64) -> Int { schedule.barlines.partitionIndex { $0 > sample } - 1 + schedule.firstMeasureNumber }

        /// The part's takes as the project has them now, into the engine.
        func reloadTakes() {
            let (fresh, _) = recorder.withProject { $0.activeTakes(for: control.options) }
            control.send(.takes(part: partIndex, fresh[partIndex]))
        }
        /// The singer's own guide: muted while they sing, heard while reviewing.
        func setOwnPart(muted: Bool) {
            mixes[partIndex].muted = muted
            control.send(.mix(part: partIndex, mixes[partIndex]))
        }
        func say(_ line: String) {
            log(line)
            message = line
        }

        sessionLoop: while !StopSignals.received {
            if render.hasEnded {
                if let failure = render.failure { log(failure + "; the take so far is kept") }
                end = render.failure != nil ? .next : .quit  // a lost device: reopen and carry on
                break
            }
            var actions = hub.poll(timeoutMilliseconds: console == nil ? 50 : 0)
            for line in hub.news() { log(line) }
            if let console {
                let keys = console.poll(timeoutMilliseconds: 50)
                actions += keys.actions
                if keys.help { showHelp.toggle() }
                if keys.quit {
                    end = .quit
                    break
                }
            }
            if let seconds = options.seconds, Date().timeIntervalSince(started) >= seconds { break }
            let snapshot = link.snapshot()
            while let event = link.nextEvent() {
                // The transport's changes, one line each (journald keeps them).
                switch event {
                case .countIn(_, let music): log("transport: count-in to measure \(measure(music))")
                case .playing(let at): log("transport: playing from measure \(measure(at))")
                case .recordingStarted(let at): log("transport: recording from measure \(measure(at)) (sample \(at))")
                case .recordingStopped(let at): log("transport: recording stopped at measure \(measure(at)) (sample \(at))")
                case .stopped(let at, _, let finishedTake): log("transport: stopped at measure \(measure(at))\(finishedTake ? ", take finished" : "")")
                case .looped(_, let to): log("transport: loop back to measure \(measure(to))")
                case .refused(let why): log("refused: \(why)")
                case .scheduleChanged: break
                }
            }
            if snapshot.state != .stopped { hasPlayed = true }
            if options.quitWhenStopped && hasPlayed && snapshot.state == .stopped { break }
            // A take has been finished and the transport has stopped: it can
            // be heard at once (review). Not before the stop: loop passes
            // finish takes while the singer is still singing the next one.
            let (finishedCount, newest) = recorder.latestFinished()
            if finishedCount > takesSeen && snapshot.state == .stopped {
                takesSeen = finishedCount
                if let newest, newest.state == .kept {
                    reviewing = newest
                    reloadTakes()
                    setOwnPart(muted: false)
                    say(String(format: "take %d recorded (%.1f s): space hears it with the others, k keeps, d discards", newest.id,
                               Double(newest.frames) / Double(device.sampleRate)))
                } else if let newest {
                    say("take \(newest.id) not kept: \(newest.note ?? "nothing was recorded")")
                }
            }
            for action in actions {
                if !project.isWritable && (action == .record || action == .punchIn) {
                    say("recording is off: \(projectPath) is in use by another program or read-only")
                    continue
                }
                if let take = reviewing, action == .record || action == .punchIn {
                    // Recording again keeps the take under review and mutes the part's guide.
                    reviewing = nil
                    setOwnPart(muted: true)
                    log("take \(take.id) kept")
                }
                switch dispatcher.dispatch(action, snapshot: snapshot) {
                case .engine(let commands): for command in commands { control.send(command) }
                case .ignored: break
                case .box(let request):
                    switch request {
                    case .nextSong, .previousSong:
                        options.songIndex = (options.songIndex + (request == .nextSong ? 1 : options.songs.count - 1)) % options.songs.count
                        end = .next
                        break sessionLoop
                    case .nextPart, .previousPart:
                        options.partIndex = (options.partIndex + (request == .nextPart ? 1 : score.parts.count - 1)) % score.parts.count
                        end = .next
                        break sessionLoop
                    case .keepTake:
                        guard let take = reviewing else {
                            say("no take to keep: takes are kept as they are recorded (d or u discards the newest)")
                            break
                        }
                        reviewing = nil
                        setOwnPart(muted: true)
                        say("take \(take.id) kept")
                    case .discardTake, .undoTake:
                        control.send(.stop)
                        do {
                            let undone = try recorder.withProject { try $0.undoLastTake() }
                            say("take \(undone.id) (\(undone.part)) discarded; its file stays in the project")
                            reloadTakes()
                        } catch {
                            say("\(error)")
                        }
                        if reviewing != nil {
                            reviewing = nil
                            setOwnPart(muted: true)
                        }
                    case .mutePart:
                        setOwnPart(muted: !mixes[partIndex].muted)
                        say(mixes[partIndex].muted ? "\(part.name) guide muted (you sing it)" : "\(part.name) guide on")
                    case .soloPart:
                        soloed.toggle()
                        control.send(.solo(part: partIndex, soloed))
                        if soloed && mixes[partIndex].muted { setOwnPart(muted: false) }
                        say(soloed ? "\(part.name) alone" : "all parts")
                    case .giveMeMyNote:
                        let tones = schedule.tones[partIndex]
                        let position = snapshot.state == .stopped ? max(0, snapshot.position) : snapshot.position
                        let next = tones.partitionIndex { $0.endSample > position }
                        guard let tone = next < tones.count ? tones[next] : tones.last else { break }
                        control.send(.reference(frequency: tone.frequency, samples: 3 * device.sampleRate / 2))
                        say("your note: \(NoteName.name(tone.midi))")
                    case .tempoUp, .tempoDown:
                        let percent = Int((Double(control.options.tempoScale.numerator) * 100 / Double(control.options.tempoScale.denominator)).rounded())
                        let wanted = min(150, max(50, percent + (request == .tempoUp ? 5 : -5)))
                        do {
                            try control.setTempo(Rational(Int128(wanted), 100))
                            say("tempo \(wanted) % (\(Int((writtenTempo * Double(wanted) / 100).rounded())) bpm) from the next barline")
                        } catch {
                            say(error.description)
                        }
                    case .countIn:
                        let measures = (control.options.countInMeasures + 1) % 3
                        do {
                            try control.setCountIn(measures)
                            options.countIn = measures  // for the next song or part too
                            say(measures == 0 ? "no count-in" : "count-in: \(measures) measure\(measures == 1 ? "" : "s")")
                        } catch {
                            say(error.description)
                        }
                    case .calibrate:
                        end = .calibrate
                        break sessionLoop
                    case .shutdown:
                        end = .shutdown
                        break sessionLoop
                    default:
                        say("\(request.rawValue): not handled by the box")
                    }
                }
            }
            link.collectRetired()
            let reading = tracker.reading
            let state: String
            switch snapshot.state {
            case .stopped: state = reviewing == nil ? "stopped" : "review"
            case .countIn: state = "count-in"
            case .playing: state = "playing"
            case .recording: state = "recording"
            }
            let takeCount = recorder.withProject { project in project.manifest.takes.filter { $0.part == part.name && $0.state != .discarded }.count }
            let scale = control.options.tempoScale
            let readout = ReadoutState(
                song: score.title ?? stem, part: part.name, state: state, measure: snapshot.measure, beat: snapshot.beat,
                tempo: writtenTempo * Double(scale.numerator) / Double(scale.denominator),
                loop: snapshot.looping ? dispatcher.loopStart.map { "\($0)-\(dispatcher.loopEnd ?? $0)" } ?? "on" : nil,
                takes: takeCount,
                inputDB: reading.map { $0.inputPeak > 0 ? 20 * log10(Double($0.inputPeak)) : -.infinity } ?? -.infinity,
                clipped: (reading?.inputPeak ?? 0) >= 0.999,
                note: reading?.expectedMIDI.map(NoteName.name), cents: reading?.cents,
                lyric: showHelp ? ConsoleKeys.help.split(separator: "\n").prefix(3).joined(separator: " ")
                    : reviewing != nil || snapshot.state == .stopped && !message.isEmpty ? message : lyrics.line(at: snapshot.position))
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
        return StopSignals.received ? .quit : end
    }
}

/// The part's lyrics as lines of four measures (a hymn's phrase), for the
/// readout: syllables joined into words ("A-maz-ing grace …").
struct LyricLines {
    /// Line text and the song sample it starts on, in order.
    let lines: [(start: Int64, text: String)]

    init(part: Part, schedule: Schedule) {
        var lines: [(start: Int64, text: String)] = []
        var currentGroup = Int.min
        var text = ""
        var joinNext = false
        for note in part.notes {
            guard let lyric = note.lyric else { continue }
            let sample = schedule.timeMap.sample(atTick: note.startTick)
            let measure = schedule.barlines.partitionIndex { $0 > sample } - 1
            let group = max(0, measure) / 4
            if group != currentGroup {
                if !text.isEmpty { lines[lines.count - 1].text = text }
                lines.append((sample, ""))
                currentGroup = group
                text = ""
                joinNext = false
            }
            text += (text.isEmpty || joinNext ? "" : " ") + lyric.text + (lyric.continuesWord ? "-" : "")
            joinNext = lyric.continuesWord
        }
        if !text.isEmpty && !lines.isEmpty { lines[lines.count - 1].text = text }
        self.lines = lines
    }

    /// The line being sung at `sample` ("" before the first).
    func line(at sample: Int64) -> String {
        let index = lines.partitionIndex { $0.start > sample } - 1
        return index >= 0 ? lines[index].text : ""
    }
}
