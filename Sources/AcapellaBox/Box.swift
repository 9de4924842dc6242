public import AcapellaControl
public import AcapellaDevices
import AcapellaAnalysis
import AcapellaEngrave
import AcapellaWeb
import AcapellaWebServer
import AcapellaEngine
public import AcapellaProject
import AcapellaScore
import AcapellaStatus
import Synchronization
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How to start the box: the settings file, the command line and the
/// defaults resolved into one shape (`BoxOptions.resolve`).
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
    /// Where each song's project lives (created on first use).
    public var dataDirectory: String
    /// Quit after this many seconds (tests, demos); nil: until asked.
    public var seconds: Double?
    /// Start playing at once.
    public var autoplay = false
    /// How takes play: streamed from their files, or decoded into memory.
    public var takeLoading = TakeLoading.streamed()
    /// Play the song once through, then quit (`--once`: demos).
    public var playOnceAndQuit = false
    /// Count-in measures before a take.
    public var countIn = 1
    /// Tempo, percent of written (kept across songs and parts).
    public var tempoPercent = 100
    /// Semitones the guide tones sound up (kept across parts; a project's session sets it).
    public var transpose = 0
    /// The metronome while playing.
    public var metronome = false
    /// Sounds for punch in and out, keep and discard.
    public var confirmations = false
    /// The web page: on a port (nil: off, the default for a box made in
    /// code; the settings turn it on), on an address (nil: every
    /// interface), and what visitors who have not paired may see.
    public var webPort: Int?
    public var webBind: String?
    public var webGuests = "none"
    /// The name announced over mDNS (`NAME.local`); nil: not announced.
    public var webName: String? = "acapella"
    /// The verse the lyric line follows (kept across songs and parts; `v`
    /// steps through a song's verses).
    public var verse = 1
    /// Draw the console readout (when a terminal is attached).
    public var consoleReadout = true
    /// LCDd's address (nil: no LCD).
    public var lcdHost: String? = "127.0.0.1"
    public var lcdPort: UInt16 = 13_666
    /// Where removable drives are mounted (USB sticks with an `acapella/`
    /// folder are noticed there); empty: sticks are not looked for.
    public var usbRoots = ["/media", "/run/media"]
    /// The tag the library is browsed by (nil: every song); kept across songs.
    public var tagFilter: String?
    /// Where takes come from: this box's id (in every take's file name) and
    /// who sings (the `singer` setting). The default names no box.
    public var origin = TakeOrigin()
    /// Projects kept elsewhere than the data directory, by song path (`--project`).
    public var projectPaths: [String: String] = [:]
    /// The calibration store (nil: the data directory's).
    public var calibrationStore: String?
    /// What the safe-shutdown action runs after everything is on disk
    /// (nil: the box only quits). On the Pi: `systemctl poweroff`.
    public var powerOffCommand: [String]?
    /// Whether the box waits for a sound card when there is none (the
    /// service, with no device asked for): it says so on the LCD, the page
    /// and to systemd, and takes the card when it appears. Off, the device
    /// opener decides (the simulated room in a terminal demo).
    public var waitForSoundCard = false

    /// Options.
    public init(songs: [String], dataDirectory: String) {
        self.songs = songs
        self.dataDirectory = dataDirectory
    }
}

/// The appliance: one song and part at a time on a device. For each, a
/// `SessionRig` wires the engine, recorder and needle and a `BoxSession`
/// decides; this control loop waits in one `poll` on every input (console,
/// MIDI, foot switches, a wake descriptor for signals), feeds what happened
/// to the session, carries out its effects, draws the console and LCD
/// readouts, and keeps systemd informed. It runs until asked to stop.
public enum Box {
    /// How often the readouts are redrawn (and the loop wakes without input).
    static let frameMilliseconds: Int32 = 33

    /// Runs until asked to stop. `openDevice` makes a device for each
    /// session (and again when a lost one comes back).
    public static func run(options: BoxOptions, controls: ControlConfig, openDevice: @escaping @Sendable () throws(DeviceError) -> any AudioDevice, log: BoxLog) throws {
        let wake = WakeDescriptor()
        StopSignals.install()
        StopSignals.wake(wake)
        var options = options
        // One box per data directory: a second one is refused at once, naming the first.
        do { try Folders.make(options.dataDirectory + "/projects") } catch { throw ProjectError(description: error.description) }
        let dataLock = try OwnerLock.acquire(options.dataDirectory, owner: "acapella run")
        defer { dataLock.release() }
        let hub = ControlHub(config: controls)
        for line in hub.news() { log(line, .warning) }
        for input in hub.inputs { log("control: \(input)") }
        let console = ConsoleInput()
        let display = console == nil || !options.consoleReadout ? nil : ConsoleDisplay()
        if display != nil && BoxLog.stderrSharesTheReadout {
            log.divert(to: options.dataDirectory + "/box.log")
        }
        defer {
            display?.finish()
            log.divert(to: nil)
        }
        let lcd = options.lcdHost.map { LCDClient(host: $0, port: options.lcdPort) }
        if let lcd, (try? lcd.connect()) == nil { log("LCD: no LCDd at \(lcd.host):\(lcd.port); the box runs on without the display", .warning) }
        let service = ServiceNotifier()
        let web = startWeb(options: options, log: log, wake: wake)
        defer {
            web?.mdns?.stop()
            web?.server.stop()
        }
        let started = MonotonicClock.nanoseconds()
        // The user's songs folder, watched for new files.
        let userSongs = SongLibrary.userFolder(options.dataDirectory)
        var songsWatch: FolderWatch?
        do {
            try Folders.make(userSongs)
            songsWatch = try FolderWatch(userSongs)
        } catch {
            log("\(error); songs dropped there are found at the next start", .warning)
        }
        let sticks = options.usbRoots.isEmpty ? nil : StickMonitor(roots: options.usbRoots, dataDirectory: options.dataDirectory, wake: wake)
        var next = SessionEnd.switchTo(song: options.songIndex, part: options.partIndex)
        var first = true
        /// The last song and part whose session opened.
        var working: (song: Int, part: Int)?
        loop: while !StopSignals.received {
            switch next {
            case .quit, .shutdown:
                break loop
            case .calibrate:
                calibrate(device: try openDevice(), options: options, log: log)
            case .switchTo(let song, let part):
                options.songIndex = song
                options.partIndex = part
            }
            let device: any AudioDevice
            if options.waitForSoundCard {
                guard let found = awaitSoundCard(openDevice, options: options, lcd: lcd, web: web?.hub, service: service, wake: wake, log: log) else { break loop }
                device = found
            } else {
                device = try openDevice()
            }
            if first, device is SimulatedRoom { log("no sound card: running on the \(device.name), a synthetic singer singing the part") }
            // Titles again each time: the page may have added songs.
            let titles = ShortTitle.distinct(options.songs.map { SongHeader.read($0).title }, width: 10)
            var io = SessionIO(hub: hub, console: console, display: display, lcd: lcd, wake: wake, service: service, log: log, feedback: controls.feedback,
                               quantize: controls.punchQuantize, shortTitle: titles[options.songIndex], started: started)
            io.web = web?.hub
            io.songsWatch = songsWatch
            io.sticks = sticks
            // The name as announced (a collision renames it: acapella-2.local).
            io.webBanner = web.map { WebBanner(host: $0.hub.announcedHost ?? $0.banner.host, port: $0.banner.port, code: $0.hub.pairingCode ?? $0.banner.code) }
            let (lastSong, lastPart) = (options.songIndex, options.partIndex)
            do {
                next = try session(options: &options, device: device, reopen: openDevice, io: io, firstSession: first)
                working = (options.songIndex, options.partIndex)
            } catch let error as ProjectError where !first && working != nil && working! != (lastSong, lastPart) {
                // A song chosen later that cannot be opened (a file removed
                // or broken since the library was read): said, it leaves the
                // library until the next start (the next song is then the one
                // after it), and back to the last song that opened.
                log("\(error.description); it leaves the library, back to the last song", .warning)
                options.songs.remove(at: lastSong)
                let back = working!.song > lastSong ? working!.song - 1 : working!.song
                next = .switchTo(song: back, part: working!.part)
            }
            web?.hub.refuseChanges("the box is changing songs; try again")
            first = false
        }
        service.stopping()
        guard case .shutdown = next else { return }
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
            if process.terminationStatus != 0 { log("safe shutdown: \(command.joined(separator: " ")) failed (status \(process.terminationStatus)); switch off by hand — nothing is being written", .error) }
        } catch {
            log("safe shutdown: cannot run \(command.joined(separator: " ")): \(error); switch off by hand — nothing is being written", .error)
        }
    }

    /// The box's words while it waits for a sound card, on the LCD, the page and to systemd.
    static let noCardMessage = "no sound card — plug in your interface"

    /// The device, once it opens: at once when its card is there; else
    /// the box says so — on the LCD, the page and to systemd (ready, with
    /// the status, the watchdog fed) — and tries again twice a second until
    /// the card is plugged in, stopping at once on a stop signal (nil then).
    /// A card that came while the box waited and whose route has no stored
    /// calibration is calibrated first (a cable or the loopback card gives
    /// the round trip; a room with a microphone may refuse, said, and the
    /// box goes on uncalibrated).
    static func awaitSoundCard(_ open: () throws(DeviceError) -> any AudioDevice, options: BoxOptions, lcd: LCDClient?, web: WebHub?,
                               service: ServiceNotifier, wake: WakeDescriptor, log: BoxLog) -> (any AudioDevice)? {
        var waited = false
        var calibrated = false
        while !StopSignals.received {
            do {
                let device = try open()
                guard waited else { return device }
                if !calibrated, let store = try? calibrationStore(options), store.calibration(for: device.route) == nil {
                    calibrated = true
                    log("sound card plugged in: \(device.name); its route \(device.route) has no calibration yet, so it is measured first")
                    calibrate(device: device, options: options, log: log)
                    continue
                }
                log("sound card plugged in: the box takes \(device.name)")
                service.status("sound card: \(device.name)")
                return device
            } catch {
                if !waited {
                    waited = true
                    log("\(noCardMessage) (\(error.description)); the box waits and takes it when it appears", .warning)
                    service.ready(status: noCardMessage)
                    var live = WebLiveState()
                    live.state = "waiting"
                    live.message = noCardMessage
                    web?.publish(live)
                    _ = lcd?.show(["no sound card", "plug interface"])
                }
            }
            service.heartbeat(now: MonotonicClock.nanoseconds())
            web?.refuseChanges(noCardMessage)
            if !Poller.wait([PollDescriptor(fd: wake.fd, events: PollDescriptor.readable)], timeoutMilliseconds: 500).isEmpty { wake.clear() }
        }
        return nil
    }

    /// The calibration action: measures the device's round trip (output
    /// connected to input), stores the trim for its route and says so.
    static func calibrate(device: any AudioDevice, options: BoxOptions, log: BoxLog) {
        log("calibrating \(device.name): connect the output to the input (a cable, or headphones held to the microphone)")
        do {
            var store = try calibrationStore(options)
            let (result, stored) = try store.calibrate(device, retried: { log($0, .warning) })
            log(String(format: "calibrated %@: round trip %.2f frames (reported %.2f, trim %+.2f), stored in %@", device.route, result.roundTripFrames,
                       stored.reportedFrames, stored.trimFrames, store.path))
        } catch let error as CalibrationError {
            log("calibration refused: \(error.description); the previous calibration stays", .warning)
        } catch {
            log("calibration: \(error); the previous calibration stays", .error)
        }
    }

    static func calibrationStore(_ options: BoxOptions) throws(ProjectError) -> CalibrationStore {
        if let path = options.calibrationStore { return try CalibrationStore(path: path) }
        return try CalibrationStore()
    }

    /// The inputs and outputs every session shares.
    struct SessionIO {
        let hub: ControlHub
        let console: ConsoleInput?
        let display: ConsoleDisplay?
        let lcd: LCDClient?
        let wake: WakeDescriptor
        let service: ServiceNotifier
        let log: BoxLog
        let feedback: MIDIFeedback
        let quantize: Quantize
        let shortTitle: String
        let started: Int64
        /// New files in the user's songs folder (nil: not watched).
        var songsWatch: FolderWatch?
        /// USB sticks (nil: not looked for).
        var sticks: StickMonitor?
        /// The web page's hub and the pairing code (nil: no page).
        var web: WebHub?
        var webBanner: WebBanner?
    }

    /// Starts the web page when it is on; a port in use or a missing page
    /// is said once and the box runs on without it.
    static func startWeb(options: BoxOptions, log: BoxLog, wake: WakeDescriptor)
        -> (server: WebServer, hub: WebHub, banner: WebBanner, mdns: MDNSAnnouncer?)? {
        guard let port = options.webPort else { return nil }
        var assets = WebAssets.load()
        if let file = ShippedFiles.musicFontFile, let data = FileManager.default.contents(atPath: file) { assets["/bravura.otf"] = ("font/otf", [UInt8](data)) }
        guard assets["/"] != nil else {
            log("web: the page's files are missing (Web/ beside the program, or share/acapella/web); the box runs on without it", .warning)
            return nil
        }
        let hub = WebHub(wake: wake, dataDirectory: options.dataDirectory)
        var random = SystemRandomNumberGenerator()
        let code = Pairing.code(from: random.next())
        let app = WebApp(assets: assets, guests: GuestAccess(rawValue: options.webGuests) ?? .none, pairingCode: code,
                         box: hub,
                         clock: { MonotonicClock.nanoseconds() / 1_000_000 },
                         random: {
                             var generator = SystemRandomNumberGenerator()
                             return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }.joined(separator: "-")
                         },
                         newPairingCode: {
                             var generator = SystemRandomNumberGenerator()
                             return Pairing.code(from: generator.next())
                         })
        do {
            let server = try WebServer(app: app, port: UInt16(port), bind: options.webBind)
            var host = [CChar](repeating: 0, count: 256)
            gethostname(&host, host.count)
            let name = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // The host's own mDNS name: where the page is without the box's name.
            let hostAddress = name.isEmpty ? "localhost" : name + ".local"
            // Bound to one address: that is where the page is (a name would
            // resolve to others); bound to the loopback, nobody else can reach it.
            let boundLiteral = options.webBind.flatMap { bind -> String? in
                ["0.0.0.0", "::"].contains(bind) ? nil : bind.contains(":") ? "[\(bind)]" : bind
            }
            let loopbackOnly = options.webBind.map { $0.hasPrefix("127.") || $0 == "::1" } ?? false
            let address = boundLiteral ?? options.webName.map { "\($0).local" } ?? hostAddress
            // The names a request may give in Host: any other is a page
            // elsewhere pointing its own name at the box (DNS rebinding).
            hub.serve(app, names: [address, hostAddress] + (name.isEmpty ? [] : [name]))
            log("web: http://\(address):\(port)/ — pairing code \(code)")
            let banner = WebBanner(host: address, port: port, code: code)
            let elsewhere = "the page is also at http://\(hostAddress):\(port)/ and the box's address"
            var mdns: MDNSAnnouncer?
            if loopbackOnly, options.webName != nil {
                log("web: bound to \(options.webBind!), a loopback address: not announced over mDNS (only this machine reaches the page)")
            } else if let announced = options.webName {
                do {
                    mdns = try MDNSAnnouncer(host: announced, service: "Acapella box", port: UInt16(port)) { line, problem, name in
                        if let name { hub.announcedHost = name }
                        log(line + (problem ? "; " + elsewhere : ""), problem ? .warning : .info)
                    }
                } catch {
                    log("\(error.description); \(elsewhere)", .warning)
                }
            }
            return (server, hub, banner, mdns)
        } catch {
            log("web: \(error.description); the box runs on without its page", .warning)
            return nil
        }
    }

    /// Opens the song's project: for writing when it can, else for reading
    /// (and says why nothing can be recorded); created on first use.
    static func openProject(song path: String, options: BoxOptions, sampleRate: Int, log: BoxLog) throws -> (project: Project, refused: String?) {
        let stem = Project.name(forSong: ((path as NSString).lastPathComponent as NSString).deletingPathExtension)
        let projectPath = options.projectPaths[path] ?? options.dataDirectory + "/projects/\(stem).acaproj"
        if !FileManager.default.fileExists(atPath: projectPath) {
            // .acasong as it is; MusicXML imported (run --song Hymn.mxl).
            let text = try SongLibrary.songText(path)
            let created = try Project.create(at: projectPath, songText: text, sampleRate: sampleRate, owner: "acapella run")
            created.origin = options.origin
            return (created, nil)
        }
        do {
            let (opened, report) = try Project.open(projectPath, for: .write(owner: "acapella run"))
            for line in report { log("\(projectPath): \(line)", .warning) }
            opened.origin = options.origin
            return (opened, nil)
        } catch {
            let (opened, report) = try Project.open(projectPath, for: .read)
            for line in report { log("\(projectPath): \(line)", .warning) }
            log("\(error.description): playing only, recording is off", .warning)
            return (opened, error.description)
        }
    }

    /// One song and part; says what comes next.
    static func session(options: inout BoxOptions, device: any AudioDevice, reopen: @escaping @Sendable () throws(DeviceError) -> any AudioDevice, io: SessionIO,
                        firstSession: Bool) throws -> SessionEnd {
        let log = io.log
        let (project, refused) = try openProject(song: options.songs[options.songIndex], options: options, sampleRate: device.sampleRate, log: log)
        defer { project.close() }
        let score = project.score
        if options.partIndex >= score.parts.count {
            // Asked for at start: an error naming where it was asked. Later
            // (another song with fewer parts) the last part is the nearest.
            if firstSession {
                throw ProjectError(description: "\(options.partSource): part \(options.partIndex + 1), but \(score.title.map { "'\($0)'" } ?? project.path) has \(score.parts.count) parts")
            }
            options.partIndex = score.parts.count - 1
        }
        // The project's last session: its tempo, count-in, metronome and verse start this one.
        let (saved, savedProblem) = project.sessionState()
        if let savedProblem { log(savedProblem, .warning) }
        let resuming = FileManager.default.fileExists(atPath: project.path + "/" + SessionState.fileName) && savedProblem == nil
        if resuming {
            options.tempoPercent = saved.tempoPercent
            options.transpose = saved.transpose
            options.countIn = saved.countIn
            options.metronome = saved.metronome
            options.verse = saved.verse
        }
        var rigOptions = RigOptions(partIndex: options.partIndex)
        rigOptions.countIn = options.countIn
        rigOptions.tempoPercent = options.tempoPercent
        rigOptions.transpose = options.transpose
        rigOptions.metronome = options.metronome
        rigOptions.clickGain = 0.4
        rigOptions.calibrationStore = options.calibrationStore
        rigOptions.takeLoading = options.takeLoading
        let rig = try SessionRig(project: project, device: device, reopen: reopen, options: rigOptions)
        for take in rig.leftOut { log(take.description, .warning) }
        var context = BoxSession.Context(score: score, schedule: rig.schedule, partIndex: options.partIndex, songIndex: options.songIndex,
                                         songCount: options.songs.count, shortTitle: io.shortTitle, countIn: options.countIn)
        context.tempoPercent = options.tempoPercent
        context.verse = options.verse
        context.metronome = options.metronome
        context.confirmations = options.confirmations
        context.lineGrid = saved.lineGrid ?? .sixteenth
        context.quantize = io.quantize
        context.recordingRefused = refused.map { _ in "\(project.path) is in use by another program or read-only" }
        context.playOnceAndQuit = options.playOnceAndQuit
        context.web = io.webBanner
        context.songTags = options.songs.map { SongHeader.read($0).tags }
        context.tag = options.tagFilter
        context.ownMix = saved.partMixes(for: score)[options.partIndex]
        context.mixes = saved.partMixes(for: score, tracks: rig.schedule.options.audioTracks)
        if let record = project.referenceRecord, !rig.schedule.options.audioTracks.isEmpty {
            var lyrics: LRC?
            switch project.referenceLyrics() {
            case .success(let parsed): lyrics = parsed
            case .failure(let error): log("the reference's lyrics are not shown: \(error.description)", .warning)
            }
            var mix = saved.partMixes(for: score, tracks: rig.schedule.options.audioTracks)[score.parts.count]
            // A recording cannot follow another tempo or key: silent until both are as written.
            if options.tempoPercent != 100 || options.transpose != 0 {
                mix.muted = true
                log("the reference recording \(record.source) is silent: it plays only at the written tempo and key", .warning)
            }
            context.reference = BoxSession.Context.Reference(name: record.name, part: score.parts.count, songStartFrame: record.songStartFrame,
                                                             sampleRate: project.manifest.sampleRate, lyrics: lyrics, mix: mix)
            log("reference recording: \(record.describe(sampleRate: project.manifest.sampleRate))\(mix.muted ? " (muted; R turns it on)" : "")")
            rig.control.send(.mix(part: score.parts.count, mix))
        }
        var session = BoxSession(context)
        var lastSaved = saved
        let partName = context.partName
        let status = { (mode: String) in "\(context.songTitle) — \(partName): \(mode)" }
        log("ready: \(context.songTitle), recording part \(partName) (\(options.partIndex + 1) of \(score.parts.count)); project \(project.path); \(rig.calibration)")
        io.web?.show(score, part: partName, log: io.log)
        io.web?.publishLibrary(options.songs, current: options.songIndex)
        var takesChanged = true
        // Short enough for a 16×2 LCD's message line.
        if let banner = io.webBanner { log("web code \(banner.code)") }
        if resuming {
            for effect in session.restore(saved, score: score) {
                if case .engine(let commands) = effect { for command in commands { rig.control.send(command) } }
            }
            log("resumed as last left: \(saved.describe(partNames: context.partNames + (context.reference == nil ? [] : [ReferenceRecord.trackName])))")
        }
        if options.autoplay || options.playOnceAndQuit { rig.link.send(.play) }
        rig.start()
        io.service.ready(status: status("stopped"))

        var latency = LatencyLog(what: "input to engine", noun: "inputs")
        var keyLatency = LatencyLog(what: "keyboard to sound", noun: "keys")
        var problemsSeen = 0
        var takesSeen = 0
        var lights: Set<String> = []
        var lastDraw: Int64 = 0
        let descriptors = [PollDescriptor(fd: io.wake.fd)] + (io.console.map { [PollDescriptor(fd: $0.fileDescriptor)] } ?? []) + io.hub.descriptors
            + (io.songsWatch.map { [PollDescriptor(fd: $0.fileDescriptor)] } ?? [])
        var end = SessionEnd.quit
        /// What the session said, for the web page's answers.
        var said: [String] = []

        /// Feeds one input to the session and carries out what it says.
        func feed(_ input: BoxSession.Input, stamp: Int64? = nil) {
            var queue: [BoxSession.Input] = [input]
            defer { saveSession() }
            while !queue.isEmpty {
                let effects = session.handle(queue.removeFirst(), snapshot: rig.link.snapshot())
                for effect in effects {
                    switch effect {
                    case .engine(let commands):
                        for command in commands { rig.control.send(command) }
                        if let stamp {
                            if case .key = input { keyLatency.sent(stamp: stamp, commandsSent: rig.link.commandsSent) } else { latency.sent(stamp: stamp, commandsSent: rig.link.commandsSent) }
                        }
                    case .retime(let retime):
                        queue.append(.retimed(Result { () throws(EngineControlError) in
                            try rig.control.retime(tempoScale: Rational(Int128(retime.tempoPercent), 100), countIn: retime.countIn, transpose: retime.transpose)
                        }))
                    case .reloadTakes:
                        rig.reloadTakes()
                        takesChanged = true
                    case .reloadAllTakes:
                        rig.reloadAllTakes()
                        takesChanged = true
                    case .writeLine(let played, let grid):
                        guard let recorder = rig.recorder else {
                            queue.append(.lineWritten(.failure(ProjectError(description: "\(project.path) is read-only here"))))
                            break
                        }
                        do {
                            queue.append(.lineWritten(.success(try recorder.withProject { try $0.addLine(played, grid: grid) })))
                        } catch let error as ProjectError {
                            queue.append(.lineWritten(.failure(error)))
                        } catch {
                            queue.append(.lineWritten(.failure(ProjectError(description: "\(error)"))))
                        }
                    case .undoLastTake:
                        var result = Result<TakeRecord, ProjectError>.failure(ProjectError(description: "\(project.path) is read-only here: nothing to undo"))
                        if let recorder = rig.recorder {
                            do { result = .success(try recorder.withProject { try $0.undoLastTake() }) } catch let error as ProjectError {
                                result = .failure(error)
                            } catch {
                                result = .failure(ProjectError(description: "\(error)"))
                            }
                        }
                        queue.append(.undone(result))
                        takesChanged = true
                    case .say(let text):
                        log(text)
                        said.append(text)
                    case .log(let text, let priority):
                        log(text, priority)
                    case .lights(let on):
                        io.hub.showState(io.feedback, from: lights, to: on)
                        lights = on
                    case .tag(let tag):
                        options.tagFilter = tag
                    case .end:
                        break
                    }
                }
            }
        }

        /// The session as it stands, saved in the project when it changed
        /// (only where this box may write it).
        func saveSession() {
            guard let recorder = rig.recorder else { return }
            // Whether the engine loops is read once it has applied every command sent (a later tick saves it).
            let snapshot = rig.link.snapshot()
            guard snapshot.commandsApplied >= rig.link.commandsSent else { return }
            let now = session.rehearsal(over: lastSaved, looping: snapshot.looping)
            guard now != lastSaved else { return }
            lastSaved = now
            do { try recorder.withProject { try $0.saveSession(now) } } catch {
                log("\(project.path): the session could not be saved (\(error)); it is kept in memory", .warning)
            }
        }

        /// The project's takes as they are now: under the project's lock
        /// while a recorder's writer thread may be changing the manifest.
        func currentTakes() -> [TakeRecord] {
            rig.recorder?.withProject { $0.manifest.takes } ?? project.manifest.takes
        }

        /// The song's takes for the web page, as the project says now.
        func publishTakes(_ web: WebHub) {
            takesChanged = false
            let records = currentTakes()
            let schedule = session.context.schedule
            let reference = session.context.reference == nil ? nil : project.referenceRecord?.describe(sampleRate: project.manifest.sampleRate)
            web.publishTakes(records, project: project.path, song: context.songTitle, parts: context.partNames, currentPart: options.partIndex,
                             sampleRate: project.manifest.sampleRate, reference: reference) { schedule.measure(at: $0) }
        }
        if let web = io.web { publishTakes(web) }

        /// A change from the web page, carried out; the answer in words.
        func carryOut(_ change: WebChange) -> Result<String, WebFailure> {
            func onProject(_ body: (Project) throws(ProjectError) -> String) -> Result<String, WebFailure> {
                guard let recorder = rig.recorder else { return .failure(WebFailure(409, "recording is off here: \(refused ?? "read-only")")) }
                do {
                    let result = try recorder.withProject { project throws(ProjectError) in try body(project) }
                    rig.reloadAllTakes()
                    takesChanged = true
                    log(result)
                    return .success(result)
                } catch let error as ProjectError {
                    return .failure(WebFailure(409, error.description))
                } catch {
                    return .failure(WebFailure(500, "\(error)"))
                }
            }
            switch change {
            case .activate(let id):
                return onProject { project throws(ProjectError) in
                    try project.activate(id)
                    return "take \(id) plays"
                }
            case .discard(let id):
                return onProject { project throws(ProjectError) in
                    try project.discard(id)
                    return "take \(id) discarded; its file stays in the project"
                }
            case .nudge(let id, let milliseconds):
                return onProject { project throws(ProjectError) in
                    let now = try project.nudge(id, by: Int64(milliseconds) * Int64(project.manifest.sampleRate) / 1_000)
                    return String(format: "take %d nudged to %+.1f ms", id, Double(now) * 1_000 / Double(project.manifest.sampleRate))
                }
            case .undo:
                feed(.action(.undoTake))
            case .removeReference:
                let result = onProject { project throws(ProjectError) in
                    let record = try project.removeReference()
                    return "the reference recording \(record.source) removed"
                }
                if case .success = result { feed(.referenceRemoved) }
                return result
            case .choose(let song, let part):
                // Refused, never clamped: a song the library does not have, a part the song does not have.
                guard song < options.songs.count else { return .failure(WebFailure(404, "no song \(song + 1): the library has \(options.songs.count)")) }
                if let part {
                    let parts: Int
                    do { parts = try Acasong.parse(SongLibrary.songText(options.songs[song])).parts.count } catch {
                        return .failure(WebFailure(422, "song \(song + 1) cannot be loaded: \(error)"))
                    }
                    guard part < parts else { return .failure(WebFailure(404, "no part \(part + 1) in song \(song + 1): it has \(parts)")) }
                }
                feed(.choose(song: song, part: part))
                if session.ended != nil { return .success("switching to \(SongHeader.read(options.songs[song]).title)") }
            case .loop(let measures), .punch(let measures):
                let punch = if case .punch = change { true } else { false }
                // Refused as the session would refuse it, with the status that says why.
                switch session.rangeRefusal(measures, punch: punch) {
                case .notInSong(let text)?: return .failure(WebFailure(422, text))
                case .recordingOff(let text)?: return .failure(WebFailure(409, text))
                case nil: feed(punch ? .punch(measures) : .loop(measures))
                }
            }
            return .success(said.last ?? "done")
        }

        let analyses = TakeAnalyses(wake: io.wake)
        var wrongCodes: (count: Int, groups: Set<String>, loggedAt: Int64) = (0, [], 0)
        var lastTakesCount = 0
        while true {
            let ready = Poller.wait(descriptors, timeoutMilliseconds: Self.frameMilliseconds)
            if ready.contains(io.wake.fd) { io.wake.clear() }
            if StopSignals.received { feed(.stopSignal) }
            if let console = io.console, ready.contains(console.fileDescriptor) {
                let now = MonotonicClock.nanoseconds()
                for key in console.take() {
                    switch key {
                    case .action(let action): feed(.action(action), stamp: now)
                    case .help: feed(.help)
                    case .quit: feed(.quit)
                    case .unknown(let character): feed(.unknownKey(character))
                    }
                }
            }
            for stamped in io.hub.take(ready: ready) { feed(.action(stamped.action), stamp: stamped.nanoseconds) }
            for key in io.hub.takeKeys() { feed(.key(note: key.note, velocity: key.velocity), stamp: key.nanoseconds) }
            for milliseconds in io.hub.takeLocates() { feed(.locateTo(milliseconds: milliseconds)) }
            for (fader, value) in io.hub.takeFaders() { feed(.fader(fader, value: value)) }
            for stamped in io.web?.takeActions() ?? [] { feed(.action(stamped.action), stamp: stamped.nanoseconds) }
            // Songs dropped into songs/: MusicXML imported, each said; new songs join the library.
            if let watch = io.songsWatch, ready.contains(watch.fileDescriptor), watch.drain() {
                for arrival in SongLibrary.importArrivals(in: watch.folder) { feed(.notice(arrival.message)) }
                let added = SongLibrary.songs(in: watch.folder).filter { !options.songs.contains($0) }
                if !added.isEmpty {
                    options.songs += added
                    session.libraryGrew(to: options.songs.count, tags: options.songs.map { SongHeader.read($0).tags })
                    io.web?.publishLibrary(options.songs, current: options.songIndex)
                }
            }
            if let web = io.web {
                if let songs = web.songs(ifMoreThan: options.songs.count) {
                    options.songs = songs
                    session.libraryGrew(to: songs.count, tags: songs.map { SongHeader.read($0).tags })
                    web.publishLibrary(options.songs, current: options.songIndex)
                }
                for (change, reply) in web.takeChanges() {
                    said = []
                    reply.answer(carryOut(change))
                }
            }
            for line in io.hub.news() { log(line, .warning) }
            if let web = io.web {
                // Wrong pairing codes, logged at most every 10 s (a guesser sends thousands); a replaced code at once.
                for event in web.takePairingEvents() {
                    switch event {
                    case .wrongCode(let group, _, _):
                        wrongCodes.count += 1
                        wrongCodes.groups.insert(group)
                    case .codeReplaced(let code, _):
                        feed(.pairingCodeReplaced(code))
                    }
                }
                let now = MonotonicClock.nanoseconds()
                if wrongCodes.count > 0, now - wrongCodes.loggedAt >= 10_000_000_000 {
                    let groups = wrongCodes.groups.sorted()
                    log("web: \(wrongCodes.count) wrong pairing code\(wrongCodes.count == 1 ? "" : "s") from \(groups.prefix(3).joined(separator: ", "))"
                        + (groups.count > 3 ? " and \(groups.count - 3) more" : ""), .warning)
                    wrongCodes = (0, [], now)
                }
            }
            for result in analyses.finished() {
                switch result {
                case .success(let done):
                    feed(.analyzed(done.summary))
                    io.web?.publishAnalysis(done.page)
                case .failure(let problem): log(problem.description, .warning)
                }
            }
            while let event = rig.link.nextEvent() { feed(.engine(event)) }
            if let recorder = rig.recorder {
                // After the stop, a writer that fell behind may still be
                // finishing loop passes: the take put up for review is the
                // last one, once it is written (not each pass as it lands).
                let writing = recorder.hasOpenTake && rig.link.snapshot().state == .stopped
                let (count, newest) = recorder.latestFinished()
                if count > takesSeen, let newest, !writing {
                    takesSeen = count
                    takesChanged = true
                    feed(.takeFinished(newest))
                    // How it was sung, worked out beside the control loop while the singer listens.
                    if newest.state == .kept { analyses.start(newest, project: project.path) }
                }
                let problems = recorder.problemsSoFar()
                for problem in problems.dropFirst(problemsSeen) { feed(.recorderProblem(problem)) }
                problemsSeen = problems.count
            }
            for line in rig.streamMisses() { feed(.playbackProblem(line)) }
            for event in rig.deviceEvents() {
                switch event {
                case .lost(let why): feed(.deviceLost(why))
                case .reopened(let name): feed(.deviceBack(name))
                }
            }
            if rig.deviceEnded {
                log((rig.deviceFailure ?? "the device stopped") + "; the take so far is kept", .error)
                end = .switchTo(song: options.songIndex, part: options.partIndex)
                break
            }
            let now = MonotonicClock.nanoseconds()
            for line in io.sticks?.news(now: now) ?? [] { feed(.notice(line)) }
            feed(.tick(milliseconds: (now - io.started) / 1_000_000))
            if let seconds = options.seconds, Double(now - io.started) / 1e9 >= seconds { feed(.quit) }
            let snapshot = rig.link.snapshot()
            latency.observe(snapshot, commandsSent: rig.link.commandsSent)
            keyLatency.observe(snapshot, commandsSent: rig.link.commandsSent)
            rig.link.collectRetired()
            if let ended = session.ended {
                end = ended
                break
            }
            io.service.heartbeat(now: now)
            // The readouts, about 30 times a second.
            if now - lastDraw >= Int64(Self.frameMilliseconds) * 1_000_000 - 2_000_000 {
                lastDraw = now
                let takes = currentTakes().filter { $0.part == partName && $0.state != .discarded }.count
                defer { lastTakesCount = takes }
                var readout = session.readout(snapshot: snapshot, reading: rig.tracker?.reading, takes: takes)
                if readout.message == nil, let line = log.takeLatest() { readout.message = line }
                io.display?.draw(readout, keys: ConsoleKeys.helpLines)
                if let lcd = io.lcd { lcd.show(Readout.lcd(readout, columns: lcd.columns > 0 ? lcd.columns : 16, rows: lcd.rows > 0 ? lcd.rows : 2)) }
                io.service.status(status(readout.mode.rawValue))
                if let web = io.web {
                    if takesChanged || snapshot.state == .recording && readout.takes != lastTakesCount { publishTakes(web) }
                    var live = WebLiveState(readout, serial: snapshot.serial, sample: snapshot.position)
                    live.verse = session.context.verse
                    live.loop = readout.loop
                    live.punch = session.punchRange.map { "\($0.lowerBound)-\($0.upperBound)" }
                    if let tracker = rig.tracker, let spectrum = tracker.spectrum {
                        live.spectrumLevels = spectrum.levels.map { Int($0.rounded()) }
                        live.spectrumEnvelope = spectrum.envelope.map { $0.map { Int($0.rounded()) } }
                        (live.spectrumFrom, live.spectrumTo) = (Int(tracker.spectrumAnalyser.bandRange.lowerBound), Int(tracker.spectrumAnalyser.bandRange.upperBound))
                        live.formants = spectrum.formants.map { Int($0.rounded()) }
                    }
                    web.publish(live)
                }
            }
        }
        // Finish: the transport stops (a take in progress is finished and kept).
        rig.finish()
        for problem in (rig.recorder?.problemsSoFar() ?? []).dropFirst(problemsSeen) { log(problem, .warning) }
        // What this session recorded, as the project says now (discarded after d or u).
        let recorded = Set((rig.recorder?.finished ?? []).map(\.id))
        for take in currentTakes() where recorded.contains(take.id) {
            let dropouts = take.dropouts.isEmpty ? "" : ", \(take.dropouts.count) dropout\(take.dropouts.count == 1 ? "" : "s") (silence in place)"
            log("take \(take.id) (\(take.part)) \(take.state.rawValue): \(String(format: "%.1f", Double(take.frames) / Double(project.manifest.sampleRate))) s\(dropouts), \(take.file)")
        }
        let gaps = rig.link.board.read().deviceGaps
        if gaps > 0 {
            log("the device dropped frames \(gaps) time\(gaps == 1 ? "" : "s") this session (xruns: the machine was busy, or the box was stopped); a take keeps its place on the song across each", .warning)
        }
        for figures in [latency, keyLatency] {
            if let summary = figures.summary(periodFrames: device.periodFrames, sampleRate: device.sampleRate) { log(summary) }
        }
        if let summary = rig.renderSummary { log(summary) }
        options.tempoPercent = session.context.tempoPercent
        options.transpose = session.context.schedule.options.transpose
        if session.context.verseLines.count > 1 { options.verse = session.context.verse }
        options.countIn = session.context.countIn
        return StopSignals.received ? .quit : end
    }
}

/// Input-to-engine latency, measured as it happens: from an input's
/// timestamp (the kernel's, for a GPIO edge) to the start of the period
/// that applied the commands it became (the device's stamp, echoed by the
/// engine) — for a keyboard's key, the period its tone starts sounding in,
/// from its first sample. Diagnostics only.
struct LatencyLog {
    /// "input to engine", and what it counts ("inputs").
    let what: String
    let noun: String
    private var pending: (stamp: Int64, commands: Int64)?
    private(set) var samples: [Int64] = []

    init(what: String, noun: String) {
        self.what = what
        self.noun = noun
    }

    mutating func sent(stamp: Int64, commandsSent: Int64) {
        pending = (stamp, commandsSent)
    }

    mutating func observe(_ snapshot: EngineSnapshot, commandsSent: Int64) {
        guard let pending, snapshot.commandsApplied >= pending.commands else { return }
        self.pending = nil
        // Only when nothing was sent after it (the stamp is then its period's).
        if snapshot.commandsApplied == commandsSent, snapshot.commandsAppliedAtNanoseconds > 0 {
            samples.append(snapshot.commandsAppliedAtNanoseconds - pending.stamp)
        }
    }

    /// "input to engine: 12 inputs, median 2.1 ms, p99 2.9 ms (a period is 2.7 ms)".
    func summary(periodFrames: Int, sampleRate: Int) -> String? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let median = Double(sorted[sorted.count / 2]) / 1e6
        let p99 = Double(sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]) / 1e6
        return String(format: "%@: %d %@, median %.2f ms, p99 %.2f ms, worst %.2f ms (a period is %.2f ms)", what, sorted.count, noun, median, p99,
                      Double(sorted.last!) / 1e6, Double(periodFrames) * 1_000 / Double(sampleRate))
    }
}

/// Take analyses run on a queue of their own (niced below the control
/// loop, far below the render thread) from the project opened for reading;
/// the control loop collects what is ready and is woken for it.
final class TakeAnalyses: Sendable {
    private let results = Mutex<[Result<(summary: TakeSummary, page: [UInt8]), ProjectError>]>([])
    private let queue = DispatchQueue(label: "acapella-analysis", qos: .utility)
    private let wake: WakeDescriptor
    /// The program that analyses (`acapella analyze --for-box`): this one.
    private let analyzer: String

    init(wake: WakeDescriptor, analyzer: String? = nil) {
        self.wake = wake
        self.analyzer = analyzer ?? ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
    }

    /// Analyses `take` of the project at `path`: in a process of its own
    /// (`BoundedChild`, the box's child limits), never in the box — whose
    /// memory is locked and must stay small whatever the take's length.
    func start(_ take: TakeRecord, project path: String) {
        queue.async { [self] in
            let limits = WebHub.childLimits
            let result: Result<(summary: TakeSummary, page: [UInt8]), ProjectError>
            // The page's notes: about 100 bytes a note, 200,000 notes at most.
            switch BoundedChild.run(analyzer, ["analyze", path, "--take", String(take.id), "--for-box"], limits: limits, outputLimit: 32 << 20) {
            case .failure(let error):
                result = .failure(ProjectError(description: "take \(take.id) not analysed: \(error.description)"))
            case .success(let outcome):
                if let failure = outcome.failure(limits: limits) {
                    let said = failure.replacingOccurrences(of: "acapella analyze: error: \(path): ", with: "")
                    result = .failure(ProjectError(description: "take \(take.id) not analysed: \(said)"))
                } else if let parsed = TakeReport.parseBoxJSON(Array(outcome.output.utf8)) {
                    result = .success(parsed)
                } else {
                    result = .failure(ProjectError(description: "take \(take.id) not analysed: the analysis said something else than expected"))
                }
            }
            results.withLock { $0.append(result) }
            wake.wake()
        }
    }

    /// The analyses finished since the last call.
    func finished() -> [Result<(summary: TakeSummary, page: [UInt8]), ProjectError>] {
        results.withLock { results in
            defer { results = [] }
            return results
        }
    }
}
