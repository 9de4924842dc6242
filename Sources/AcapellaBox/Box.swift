public import AcapellaControl
public import AcapellaDevices
import AcapellaAnalysis
import AcapellaEngrave
public import AcapellaWeb
import AcapellaWebServer
import AcapellaEngine
public import AcapellaProject
import AcapellaScore
import AcapellaStatus
import Synchronization
import Foundation

#if canImport(Glibc)
import Glibc
import AcapellaLock
internal import CChild
#endif

/// Where LCDproc's `LCDd` listens.
public struct LCDAddress: Hashable, Sendable {
    public var host: String
    public var port: UInt16
}

/// How to start the box: the settings file, the command line and the
/// defaults resolved into one shape (`BoxOptions.resolve`).
public struct BoxOptions: Sendable {
    /// The songs to browse (previous/next song).
    public var songs: [String]
    /// How the simulated room's singer sings (no sound card).
    public var singer = SingerSettings()
    /// Which of them to start with.
    public var songIndex = 0
    /// The part to record, by index.
    public var partIndex = 0
    /// The part to record by name (`--part Tenor`), found in the first
    /// song (in any case); `partIndex` is then set from it.
    public var partName: String?
    /// Where the first part came from, for an error when the first song
    /// has fewer parts ("--part", "/etc/acapella/acapella.json: part").
    public var partSource = "part"
    /// The recording set: parts recorded at once, each from its input
    /// (1-based), by part name or number; a take each. Empty: `partIndex`
    /// alone. Parts a song lacks are left out of its sessions, and said.
    public var together: [PartOnInput] = []
    /// Where the set came from, for its errors ("--parts", "…: together",
    /// "the page").
    public var togetherSource = "together"
    /// The inputs a device is opened with for the set: the highest it names (1: none).
    public var capturedInputs: Int { max(1, together.map(\.input).max() ?? 1) }
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
    /// The tempo, key, count-in, metronome and verse (kept across songs
    /// and parts; a project's saved session resumes its own).
    public var rehearsal = Rehearsal()
    /// Sounds for punch in and out, keep and discard.
    public var confirmations = false
    /// The web page: on a port (nil: off, the default for a box made in
    /// code; the settings turn it on), on an address (nil: every
    /// interface), and what visitors who have not paired may see.
    public var webPort: Int?
    public var webBind: String?
    public var webGuests = GuestAccess.none
    /// The name announced over mDNS (`NAME.local`); nil: not announced.
    public var webName: String? = "acapella"
    /// Draw the console readout (when a terminal is attached).
    public var consoleReadout = true
    /// LCDd's address (nil: no LCD).
    public var lcd: LCDAddress? = LCDAddress(host: "127.0.0.1", port: 13_666)
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
/// `SessionLoop` runs: a `SessionRig` wires the engine, recorder and
/// needle, a `BoxSession` decides, and the loop waits in one `poll` on
/// every input, feeds what happened to the session, carries out its
/// effects and publishes one frame to every readout. `Box` goes from one
/// session to the next (waiting for a sound card when there is none),
/// starts the page and its mDNS name, and shuts down safely. It runs until
/// asked to stop.
public enum Box {
    /// How often the readouts are redrawn (and the loop wakes without input).
    static let frameMilliseconds: Int32 = 33

    /// Runs until asked to stop. `openDevice` makes a device for each
    /// session (and again when a lost one comes back) with the inputs its
    /// recording set needs.
    public static func run(options: BoxOptions, controls: ControlConfig, openDevice: @escaping @Sendable (_ inputs: Int) throws(DeviceError) -> any AudioDevice, log: BoxLog) throws {
        // Two malloc arenas, not eight a core: the page serves each connection on a thread of its
        // own, and each arena keeps what its thread freed (16 uploads at once kept 20 MB more).
        _ = acapella_limit_malloc_arenas(2)
        let wake = WakeDescriptor()
        StopSignals.install()
        StopSignals.wake(wake)
        var options = options
        // One box per data directory: a second one is refused at once, naming the first.
        do { try Folders.make(options.dataDirectory + "/projects") } catch { throw ProjectError(description: error.description) }
        let dataLock = try OwnerLock.acquire(options.dataDirectory, owner: "acapella run")
        defer { dataLock.release() }
        for emptied in Trash.purge(dataDirectory: options.dataDirectory) { log("trash: \(emptied) emptied (kept \(Trash.keptDays) days)") }
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
        let lcd = options.lcd.map { LCDClient(host: $0.host, port: $0.port) }
        if let lcd, (try? lcd.connect()) == nil { log("LCD: no LCDd at \(lcd.host):\(lcd.port); the box runs on without the display", .warning) }
        let service = ServiceNotifier()
        let web = startWeb(options: options, log: log, wake: wake)
        defer {
            web?.mdns?.stop()
            web?.server.stop()
            // A pairing or sign-out in the box's last turn is kept too.
            if let problem = web?.hub.savePairingIfChanged() { log(problem, .warning) }
        }
        var shared = SessionIO(hub: hub, console: console, display: display, lcd: lcd, wake: wake, service: service, log: log, feedback: controls.feedback,
                               quantize: controls.punchQuantize, shortTitle: "", started: MonotonicClock.nanoseconds())
        shared.web = web?.hub
        shared.songsWatch = watchSongs(options, log: log)
        shared.sticks = options.usbRoots.isEmpty ? nil : StickMonitor(roots: options.usbRoots, dataDirectory: options.dataDirectory, wake: wake)
        let next = try sessions(&options, shared: shared, web: web.map { ($0.hub, $0.banner) }, openDevice: openDevice)
        service.stopping()
        guard case .shutdown = next else { return }
        display?.finish()
        powerOff(options.powerOffCommand, log: log)
    }

    /// Song after song, part after part, until the box is asked to stop:
    /// a device for each session (waited for when there is none), a song
    /// that cannot be opened any more left out of the library. Returns how
    /// the last one ended.
    static func sessions(_ options: inout BoxOptions, shared: SessionIO, web: (hub: WebHub, banner: WebBanner)?,
                         openDevice opener: @escaping @Sendable (_ inputs: Int) throws(DeviceError) -> any AudioDevice) throws -> SessionEnd {
        let log = shared.log
        var next = SessionEnd.switchTo(song: options.songIndex, part: options.partIndex)
        var first = true
        /// The last song and part whose session opened.
        var working: (song: Int, part: Int)?
        /// The projects chosen when it did, and its recording set.
        var workingProjects = options.projectPaths
        var workingSet = (options.together, options.togetherSource)
        loop: while !StopSignals.received {
            switch next {
            case .quit, .shutdown:
                break loop
            case .calibrate:
                calibrate(device: try opener(options.capturedInputs), options: options, log: log)
            case .switchTo(let song, let part):
                options.songIndex = song
                options.partIndex = part
            }
            // As many inputs as the recording set names (it may have changed on the page).
            let openDevice: @Sendable () throws(DeviceError) -> any AudioDevice = { [inputs = options.capturedInputs] () throws(DeviceError) in try opener(inputs) }
            let lastSet = (options.together, options.togetherSource)
            let device: any AudioDevice
            if !first && lastSet.0 != workingSet.0 {
                // A set chosen on the page: the device opened once with its
                // inputs (a card may offer more than it opens at this rate).
                do { device = try openDevice() } catch {
                    next = backToWorkingSet(error.description, options: &options, set: workingSet, working: working, log: log)
                    continue
                }
            } else if options.waitForSoundCard {
                guard let found = awaitSoundCard(openDevice, options: options, lcd: shared.lcd, web: web?.hub, service: shared.service, wake: shared.wake, log: log) else { break loop }
                device = found
            } else {
                device = try openDevice()
            }
            if first, device is SimulatedRoom { log("no sound card: running on the \(device.name), a synthetic singer singing the part") }
            let io = sessionIO(shared, options: options, web: web)
            let (lastSong, lastPart, lastProjects) = (options.songIndex, options.partIndex, options.projectPaths)
            do {
                next = try session(options: &options, device: device, reopen: openDevice, io: io, firstSession: first)
                working = (options.songIndex, options.partIndex)
                workingProjects = lastProjects
                workingSet = lastSet
            } catch let error as ProjectError where !first && lastSet.0 != workingSet.0 {
                next = backToWorkingSet(error.description, options: &options, set: workingSet, working: working, log: log)
            } catch let error as ProjectError where !first && working != nil && working! != (lastSong, lastPart) {
                next = leaveOut(lastSong, error, options: &options, backTo: working!, log: log)
            } catch let error as ProjectError where !first && working != nil && lastProjects != workingProjects {
                // Another project of the song that would not open (damaged since it was chosen): back to the last one.
                log("\(error.description); back to the project that was open", .warning)
                options.projectPaths = workingProjects
                next = .switchTo(song: working!.song, part: working!.part)
            }
            web?.hub.refuseChanges("the box is changing songs; try again")
            first = false
        }
        return next
    }

    /// Back to the recording set the last session opened with (one chosen
    /// on the page that the device or the rig refused), said; the song and
    /// part that worked open again.
    static func backToWorkingSet(_ why: String, options: inout BoxOptions, set: (together: [PartOnInput], source: String),
                                 working: (song: Int, part: Int)?, log: BoxLog) -> SessionEnd {
        log("\(options.togetherSource): \(why); back to the recording set that worked", .warning)
        (options.together, options.togetherSource) = set
        return .switchTo(song: working?.song ?? options.songIndex, part: working?.part ?? options.partIndex)
    }

    /// What one session is given: the box's sources and sinks, the song's
    /// short title (made again each time: the page may have added songs)
    /// and the page's name as announced (a collision renames it: acapella-2.local).
    static func sessionIO(_ shared: SessionIO, options: BoxOptions, web: (hub: WebHub, banner: WebBanner)?) -> SessionIO {
        var io = shared
        io.shortTitle = ShortTitle.distinct(options.songs.map { SongHeader.read($0).title }, width: 10)[options.songIndex]
        io.webBanner = web.map { WebBanner(host: $0.hub.announcedHost ?? $0.banner.host, port: $0.banner.port, code: $0.hub.pairingCode ?? $0.banner.code) }
        return io
    }

    /// A song chosen later that cannot be opened (a file removed or broken
    /// since the library was read): said, it leaves the library until the
    /// next start (the next song is then the one after it), and back to
    /// the last song that opened.
    static func leaveOut(_ song: Int, _ error: ProjectError, options: inout BoxOptions, backTo working: (song: Int, part: Int), log: BoxLog) -> SessionEnd {
        log("\(error.description); it leaves the library, back to the last song", .warning)
        options.songs.remove(at: song)
        return .switchTo(song: working.song > song ? working.song - 1 : working.song, part: working.part)
    }

    /// Safe shutdown, once everything is on disk: the power-off command
    /// run when one is configured, else said.
    static func powerOff(_ command: [String]?, log: BoxLog) {
        guard let command, !command.isEmpty else {
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

    /// The user's songs folder, watched for new files (nil: it cannot be, said).
    static func watchSongs(_ options: BoxOptions, log: BoxLog) -> FolderWatch? {
        let userSongs = SongLibrary.userFolder(options.dataDirectory)
        do {
            try Folders.make(userSongs)
            return try FolderWatch(userSongs)
        } catch {
            log("\(error); songs dropped there are found at the next start", .warning)
            return nil
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
        var shortTitle: String
        let started: Int64
        /// New files in the user's songs folder (nil: not watched).
        var songsWatch: FolderWatch?
        /// USB sticks (nil: not looked for).
        var sticks: StickMonitor?
        /// The web page's hub and the pairing code (nil: no page).
        var web: WebHub?
        var webBanner: WebBanner?
        /// The program the box's children run (analyses): nil, this one.
        var program: String?
    }

    /// Starts the web page when it is on; a port in use or a missing page
    /// is said once and the box runs on without it.
    static func startWeb(options: BoxOptions, log: BoxLog, wake: WakeDescriptor)
        -> (server: WebServer, hub: WebHub, banner: WebBanner, mdns: MDNSAnnouncer?)? {
        guard let port = options.webPort else { return nil }
        let assets = WebAssets.load()
        guard assets["/"] != nil else {
            log("web: the page's files are missing (Web/ beside the program, or share/acapella/web); the box runs on without it", .warning)
            return nil
        }
        let hub = WebHub(wake: wake, dataDirectory: options.dataDirectory)
        var random = SystemRandomNumberGenerator()
        let pairing = PairingFile.restore(dataDirectory: options.dataDirectory, code: Pairing.code(from: random.next()), log: log)
        let code = pairing.code
        let app = WebApp(assets: assets, files: ShippedFiles.webFonts(), guests: options.webGuests, pairingCode: code,
                         box: hub,
                         clock: { MonotonicClock.nanoseconds() / 1_000_000 },
                         random: {
                             var generator = SystemRandomNumberGenerator()
                             return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }.joined(separator: "-")
                         },
                         newPairingCode: {
                             var generator = SystemRandomNumberGenerator()
                             return Pairing.code(from: generator.next())
                         }, pairing: pairing)
        do {
            try? Folders.make(options.dataDirectory + "/cache")
            let server = try WebServer(app: app, port: UInt16(port), bind: options.webBind, spoolFolder: options.dataDirectory + "/cache")
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
            // A name mDNS has yet to grant is not printed as the page's
            // address (a second box gets acapella-2): said once announced.
            let announcing = boundLiteral == nil && options.webName != nil && !loopbackOnly
            log(announcing ? "web: pairing code \(code) — the page at http://\(hostAddress):\(port)/ now, at its mDNS name once announced"
                           : "web: http://\(address):\(port)/ — pairing code \(code)")
            let banner = WebBanner(host: address, port: port, code: code)
            let elsewhere = "the page is also at http://\(hostAddress):\(port)/ and the box's address"
            if loopbackOnly, options.webName != nil {
                log("web: bound to \(options.webBind!), a loopback address: not announced over mDNS (only this machine reaches the page)")
                return (server, hub, banner, nil)
            }
            return (server, hub, banner, options.webName.flatMap { announce($0, port: port, hub: hub, elsewhere: elsewhere, log: log) })
        } catch {
            log("web: \(error.description); the box runs on without its page", .warning)
            return nil
        }
    }

    /// The page announced over mDNS as `name.local` (a collision renames
    /// it, and the hub learns the name); a problem said with where else the page is.
    static func announce(_ name: String, port: Int, hub: WebHub, elsewhere: String, log: BoxLog) -> MDNSAnnouncer? {
        do {
            return try MDNSAnnouncer(host: name, service: "Acapella box", port: UInt16(port)) { line, problem, name in
                if let name { hub.announcedHost = name }
                log(line + (problem ? "; " + elsewhere : ""), problem ? .warning : .info)
                if let name { log("web: http://\(name):\(port)/ — pairing code \(hub.pairingCode ?? "")") }
            }
        } catch {
            log("\(error.description); \(elsewhere)", .warning)
            return nil
        }
    }

    /// Opens the song's project: for writing when it can, else for reading
    /// (and says why nothing can be recorded); created on first use.
    static func openProject(song path: String, options: BoxOptions, sampleRate: Int, log: BoxLog) throws -> (project: Project, refused: String?) {
        let projectPath = options.projectPaths[path] ?? SongProjects.chosen(song: path, dataDirectory: options.dataDirectory, library: options.songs)
            ?? SongProjects.path(song: path, name: nil, dataDirectory: options.dataDirectory)
        // A project given whole (--project) is its own song; any other is
        // the song's only when its mark names the song (or it is the song's
        // first from before the marks): never another song's takes.
        let ownSong = path == projectPath + "/score.acasong"
        if !ownSong, let elsewhere = SongProjects.belongsElsewhere(projectPath, song: path) { throw ProjectError(description: elsewhere) }
        // An unmarked folder is the song's first project from before the
        // marks, unless its name is also another library song's project
        // ("Hymn (Yak)" beside Hymn: a bundle from an older box, imported)
        // and it keeps other parts than this song's.
        if !ownSong, SongProjects.madeFrom(projectPath) == nil,
           options.songs.contains(where: { $0 != path && SongProjects.name(of: projectPath, song: $0, dataDirectory: options.dataDirectory) != nil }),
           let other = SongProjects.otherMusic(projectPath, song: path) {
            throw ProjectError(description: other)
        }
        if !FileManager.default.fileExists(atPath: projectPath) {
            // .acasong as it is; MusicXML imported (run --song Hymn.mxl).
            let text = try SongLibrary.songText(path)
            let created = try Project.create(at: projectPath, songText: text, sampleRate: sampleRate, owner: "acapella run")
            created.origin = options.origin
            if !ownSong {
                do { try SongProjects.mark(projectPath, song: path) } catch {
                    // Unmarked it would be the first project of whichever song's name fits: made a moment ago, it goes again.
                    created.close()
                    try? FileManager.default.removeItem(atPath: projectPath)
                    throw ProjectError(description: "\(projectPath): \(error)")
                }
            }
            return (created, nil)
        }
        do {
            let (opened, report) = try Project.open(projectPath, for: .write(owner: "acapella run"), origin: options.origin)
            for line in report { log("\(projectPath): \(line)", .warning) }
            // A first project from before the marks is marked as its song's now (its writer holds it).
            if !ownSong, SongProjects.madeFrom(projectPath) == nil {
                do { try SongProjects.mark(projectPath, song: path) } catch { log("\(projectPath): cannot mark it as \(path)'s: \(error)", .warning) }
            }
            return (opened, nil)
        } catch {
            let (opened, report) = try Project.open(projectPath, for: .read, origin: options.origin)
            for line in report { log("\(projectPath): \(line)", .warning) }
            log("\(error.description): playing only, recording is off", .warning)
            return (opened, error.description)
        }
    }

    /// One song and part (a `SessionLoop`); says what comes next. The
    /// settings that carry on (tempo, key, verse, count-in) come back in `options`.
    static func session(options: inout BoxOptions, device: any AudioDevice, reopen: @escaping @Sendable () throws(DeviceError) -> any AudioDevice, io: SessionIO,
                        firstSession: Bool) throws -> SessionEnd {
        let loop = try SessionLoop(options: options, device: device, reopen: reopen, io: io, firstSession: firstSession)
        defer { loop.close() }
        loop.start()
        let end = loop.run()
        loop.finish()
        options = loop.options
        return end
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
    /// One finished: which take, whether it was for the takes list only
    /// (`quiet`: a take from before, scored on first need), and its result.
    struct Finished {
        var take: TakeRecord
        var quiet: Bool
        var result: Result<(summary: TakeSummary, page: [UInt8]), ProjectError>
    }

    private let results = VisibleLock<[Finished]>([])
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
    func start(_ take: TakeRecord, project path: String, quiet: Bool = false) {
        queue.async { [self] in
            let limits = WebHub.childLimits
            let result: Result<(summary: TakeSummary, page: [UInt8]), ProjectError>
            // The page's notes: about 100 bytes a note, 200,000 notes at most.
            switch BoundedChild.run(analyzer, ["analyze", path, "--take", String(take.id), "--for-box"], limits: limits, outputLimit: 32 << 20) {
            case .failure(let error):
                result = .failure(ProjectError(description: "take \(take.id) not analysed: \(error.description)"))
            case .success(let outcome):
                if let failure = outcome.failure(limits: limits) {
                    result = .failure(ProjectError(description: "take \(take.id) not analysed: " + Self.said(failure, by: "analyze", of: path)))
                } else if let parsed = TakeReport.parseBoxJSON(Array(outcome.output.utf8)) {
                    result = .success(parsed)
                } else {
                    result = .failure(ProjectError(description: "take \(take.id) not analysed: the analysis said something else than expected"))
                }
            }
            results.withLock { $0.append(Finished(take: take, quiet: quiet, result: result)) }
            wake.wake()
        }
    }

    /// A correction finished: the take it started from, and the corrected
    /// audio's file (written by the child) with the notes moved, or why not.
    struct Corrected {
        var take: TakeRecord
        /// The file the child was to write (removed once read, or on failure).
        var file: String
        var result: Result<(file: String, moved: [String]), ProjectError>
    }
    private let corrected = VisibleLock<[Corrected]>([])

    /// Puts `take`'s notes (`notes`: flagged or m.7-9) in tune in a process
    /// of its own (`acapella correct --for-box FILE`: it only reads the
    /// project, the box adopts the file as a new take).
    func correct(_ take: TakeRecord, notes: String, project path: String, into file: String) {
        queue.async { [self] in
            let limits = WebHub.childLimits
            let result: Result<(file: String, moved: [String]), ProjectError>
            switch BoundedChild.run(analyzer, ["correct", path, "--take", String(take.id), "--notes", notes, "--for-box", file], limits: limits, outputLimit: 1 << 20) {
            case .failure(let error):
                result = .failure(ProjectError(description: "take \(take.id) not put in tune: \(error.description)"))
            case .success(let outcome):
                if let failure = outcome.failure(limits: limits) {
                    result = .failure(ProjectError(description: "take \(take.id) not put in tune: " + Self.said(failure, by: "correct", of: path)))
                } else {
                    result = .success((file, outcome.output.split(separator: "\n").map(String.init)))
                }
            }
            corrected.withLock { $0.append(Corrected(take: take, file: file, result: result)) }
            wake.wake()
        }
    }

    /// How the parts' playing takes sang together (`acapella blend
    /// --for-box` in a process of its own), for the page: the JSON, or
    /// `{"error": …}`. One at a time: asked again while one is worked out,
    /// it is worked out once more after it (the takes may have changed).
    private let blends = VisibleLock<[[UInt8]]>([])
    private let blendAsked = VisibleLock<(running: Bool, again: Bool)>((false, false))

    func blend(project path: String) {
        let start = blendAsked.withLock { asked in
            if asked.running { asked.again = true } else { asked.running = true }
            return !asked.again
        }
        guard start else { return }
        queue.async { [self] in
            repeat {
                let json = Self.blended(analyzer, project: path)
                blends.withLock { $0.append(json) }
                wake.wake()
            } while blendAsked.withLock { asked in
                defer { asked = (asked.again, false) }
                return asked.again
            }
        }
    }

    /// `acapella blend --for-box` run once: its JSON, checked, or why not.
    static func blended(_ program: String, project path: String) -> [UInt8] {
        let limits = WebHub.childLimits
        switch BoundedChild.run(program, ["blend", path, "--for-box"], limits: limits, outputLimit: 8 << 20) {
        case .failure(let problem):
            return error(problem.description)
        case .success(let outcome):
            if let failure = outcome.failure(limits: limits) {
                return error(said(failure, by: "blend", of: path))
            }
            guard let object = TakeReport.lastJSONLine(Array(outcome.output.utf8)), object["chords"] is [Any],
                  let bytes = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
                return error("the blend said something else than expected")
            }
            return [UInt8](bytes)
        }
    }

    /// What a child (`acapella COMMAND PROJECT …`) said when it failed,
    /// without the program's and the project's names before it.
    static func said(_ failure: String, by command: String, of path: String) -> String {
        failure.replacingOccurrences(of: "acapella \(command): error: \(path): ", with: "")
    }

    static func error(_ text: String) -> [UInt8] {
        [UInt8]((try? JSONSerialization.data(withJSONObject: ["error": text], options: [.sortedKeys])) ?? Data())
    }

    /// The blends worked out since the last call (the newest last).
    func blendsFinished() -> [[UInt8]] {
        blends.withLock { done in
            defer { done = [] }
            return done
        }
    }

    /// The corrections finished since the last call.
    func correctionsFinished() -> [Corrected] {
        corrected.withLock { done in
            defer { done = [] }
            return done
        }
    }

    /// The analyses finished since the last call.
    func finished() -> [Finished] {
        results.withLock { results in
            defer { results = [] }
            return results
        }
    }
}
