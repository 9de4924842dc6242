import AcapellaControl
import AcapellaDevices
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import AcapellaStatus
import AcapellaWeb
import Foundation
internal import CChild

/// One song and part, open: the control loop of a session. Each turn it
/// waits in one `poll` on every descriptor, asks each source what happened
/// (console, MIDI and foot switches, the page, the songs folder, the
/// recorder, the analyses, the device, USB sticks, signals and the
/// clock) as typed `BoxSession.Input`s, feeds them to the `BoxSession`
/// that decides, carries out the effects on the rig, the project and the
/// page, and publishes one frame to every readout (console, LCD, page,
/// systemd). Everything here runs on the control loop's thread, which owns
/// the session, the loop's state and the project (the recorder's writer
/// hands its takes to this thread: `Recorder.serve`).
final class SessionLoop {
    let io: Box.SessionIO
    var options: BoxOptions
    let project: Project
    /// Why nothing can be recorded (nil: this box writes the project).
    let refused: String?
    let rig: SessionRig
    let device: any AudioDevice
    var session: BoxSession
    /// The session as last saved in the project.
    var lastSaved: SessionState
    /// Whether the project's saved session was resumed.
    let resumed: Bool
    /// The loop's clock, nanoseconds (monotonic; never musical time).
    let clock: () -> Int64
    let analyses: TakeAnalyses

    var latency = LatencyLog(what: "input to engine", noun: "inputs")
    var keyLatency = LatencyLog(what: "keyboard to sound", noun: "keys")
    /// Problems said so far, per recorder.
    var problemsSeen: [Int] = []
    /// Takes said so far, per recorder.
    var takesSeen: [Int] = []
    /// Takes finished so far, per recorder (the page's list follows them).
    var takesListed: [Int] = []
    var lights: Set<String> = []
    var lastDraw: Int64 = 0
    var takesChanged = true
    /// The takes playing when the page's blend was worked out (nil: none shown).
    var blendTakes: Set<Int>?
    /// Blends worked out again since the page asked (their takes changed meanwhile).
    var blendRetries = 0
    /// Each take's score for the takes list, and the take being scored
    /// (one at a time) and those that could not be.
    var scores: TakeScores
    var scoring: Int?
    var unscorable: Set<Int> = []
    /// Corrections started this session (each writes a file of its own).
    var corrections = 0
    var lastTakesCount = 0
    var wrongCodes: (count: Int, groups: Set<String>, loggedAt: Int64) = (0, [], 0)
    var end = SessionEnd.quit
    /// Songs in the folder refused a place in the library, as said this session.
    var refusalsSaid: Set<String> = []
    /// The song's other projects' takes, as read once this session.
    var otherProjects: [String: Int] = [:]
    /// The page's change being carried out: its answer goes here.
    var reply: WebHub.Answer?

    var log: BoxLog { io.log }
    var partName: String { session.context.partName }

    /// Opens the song's project and wires its rig; throws when the song
    /// cannot be opened (or, at start, the part asked for is not in it).
    init(options: BoxOptions, device: any AudioDevice, reopen: @escaping @Sendable () throws(DeviceError) -> any AudioDevice, io: Box.SessionIO,
         firstSession: Bool, clock: @escaping () -> Int64 = MonotonicClock.nanoseconds) throws {
        var options = options
        let log = io.log
        let (project, refused) = try Box.openProject(song: options.songs[options.songIndex], options: options, sampleRate: device.sampleRate, log: log)
        let saved: SessionState, resuming: Bool, rig: SessionRig, context: BoxSession.Context
        do {
            (saved, resuming) = try Self.resume(project, options: &options, firstSession: firstSession, log: log)
            let together = Self.together(options, score: project.score)
            for note in together.notes { log(note, .warning) }
            // The part the box shows, mutes and follows with the needle is one of the set's.
            if let first = together.set.first, !together.set.contains(where: { $0.partIndex == options.partIndex }) { options.partIndex = first.partIndex }
            var rigOptions = Self.rigOptions(options)
            rigOptions.ensemble = together.set
            rigOptions.tones = saved.tonesParts(for: project.score)
            rigOptions.wakeOwner = { [wake = io.wake] in wake.wake() }
            rig = try SessionRig(project: project, device: device, reopen: reopen, options: rigOptions)
            for take in rig.leftOut { log(take.description, .warning) }
            var made = Self.context(options: options, io: io, project: project, rig: rig, saved: saved, refused: refused)
            made.mostInputs = device.mostInputs
            made.deviceName = device.name
            made.reference = Self.reference(project, rig: rig, saved: saved, options: options, log: log)
            context = made
        } catch {
            project.close()
            throw error
        }
        self.session = BoxSession(context)
        self.lastSaved = saved
        self.rig = rig
        self.resumed = resuming
        self.options = options
        self.io = io
        self.project = project
        self.refused = refused
        self.device = device
        self.clock = clock
        self.analyses = TakeAnalyses(wake: io.wake, analyzer: io.program)
        self.scores = TakeScores.load(dataDirectory: options.dataDirectory)
        if resuming { restore(saved) }
        // The song parsed and scheduled, the project read: what that took and freed goes back (a long song's is megabytes).
        _ = acapella_release_freed_memory()
    }

    /// The project closed (the next session may open it for writing).
    func close() { project.close() }

    /// The part checked against the song, and the project's last session:
    /// its tempo, key, count-in, metronome and verse start this one.
    static func resume(_ project: Project, options: inout BoxOptions, firstSession: Bool, log: BoxLog) throws -> (SessionState, Bool) {
        let score = project.score
        let song = score.title.map { "'\($0)'" } ?? project.path
        if firstSession, let name = options.partName {
            guard let index = PartOnInput.partIndex(named: name, in: score) else {
                throw ProjectError(description: "\(options.partSource): no part named '\(name)' in \(song); its parts: \(score.parts.map(\.name).joined(separator: ", "))")
            }
            options.partIndex = index
        }
        if options.partIndex >= score.parts.count {
            // Asked for at start: an error naming where it was asked. Later
            // (another song with fewer parts) the last part is the nearest.
            if firstSession {
                throw ProjectError(description: "\(options.partSource): part \(options.partIndex + 1), but \(song) has \(score.parts.count) parts")
            }
            options.partIndex = score.parts.count - 1
        }
        let (saved, savedProblem) = project.sessionState()
        if let savedProblem { log(savedProblem, .warning) }
        let resuming = FileManager.default.fileExists(atPath: project.path + "/" + SessionState.fileName) && savedProblem == nil
        if resuming { options.rehearsal = saved.rehearsal }
        return (saved, resuming)
    }

    /// The recording set as this song has it: each part named (or
    /// numbered) on its input; parts the song lacks left out and said.
    static func together(_ options: BoxOptions, score: Score) -> (set: [PartInput], notes: [String]) {
        guard !options.together.isEmpty else { return ([], []) }
        let (set, missing, twice) = PartOnInput.resolve(options.together, in: score)
        let song = score.title.map { "'\($0)'" } ?? "this song"
        let rest = set.isEmpty ? "; recording one part" : "; the others are recorded together"
        var notes = twice.map { "\(options.togetherSource): " + PartOnInput.namedTwice($0, in: score) + " in \(song): recorded once, on the input given first" }
        if !missing.isEmpty {
            notes.append("\(options.togetherSource): \(missing.joined(separator: ", ")) \(missing.count == 1 ? "is not a part" : "are not parts") of \(song) (its parts: \(score.parts.map(\.name).joined(separator: ", ")))" + rest)
        }
        return (set, notes)
    }

    /// A set chosen on the page as the settings name it: by part name, so
    /// the songs that follow record their parts of the same names (a name
    /// two parts share, or a number, by the part's number).
    static func together(_ set: [WebPartInput], score: Score) -> [PartOnInput] {
        set.map { part in
            // Whichever form `PartOnInput.partIndex` reads back as this part
            // (a name is read before a number: parts named "2", "1").
            let name = score.parts[part.part].name
            let named = PartOnInput.partIndex(named: name, in: score) == part.part
            return PartOnInput(part: named ? name : String(part.part + 1), input: part.input)
        }
    }

    /// What the rig is built with: the box's settings for this session.
    static func rigOptions(_ options: BoxOptions) -> RigOptions {
        var rig = RigOptions(partIndex: options.partIndex)
        rig.rehearsal = options.rehearsal
        rig.clickGain = 0.4
        rig.calibrationStore = options.calibrationStore
        rig.takeLoading = options.takeLoading
        rig.singer = options.singer
        return rig
    }

    /// What the session decides with: the song, the library, the settings.
    static func context(options: BoxOptions, io: Box.SessionIO, project: Project, rig: SessionRig, saved: SessionState, refused: String?) -> BoxSession.Context {
        let score = project.score
        var context = BoxSession.Context(score: score, schedule: rig.schedule, partIndex: options.partIndex, songIndex: options.songIndex,
                                         songCount: options.songs.count, shortTitle: io.shortTitle, countIn: options.rehearsal.countIn)
        context.adopt(options.rehearsal)
        context.confirmations = options.confirmations
        context.lineGrid = saved.lineGrid ?? .sixteenth
        context.quantize = io.quantize
        context.recordingRefused = refused.map { _ in "\(project.path) is in use by another program or read-only" }
        context.playOnceAndQuit = options.playOnceAndQuit
        context.web = io.webBanner
        let headers = options.songs.map { SongHeader.read($0) }
        context.songTags = headers.map(\.tags)
        context.songTitles = headers.map(\.title)
        context.tag = options.tagFilter
        context.ownMix = saved.partMixes(for: score)[options.partIndex]
        context.mixes = saved.partMixes(for: score, tracks: rig.schedule.options.audioTracks)
        context.tones = rig.tones
        context.recordingSet = rig.ensemble.map { WebPartInput(part: $0.partIndex, input: $0.input + 1) }
        // The set's parts open muted, as the box's own (the rig's mixes): each is a singer's guide.
        for part in rig.ensemble.map(\.partIndex) where part < context.mixes.count { context.mixes[part].muted = true }
        context.setInForce = !options.together.isEmpty
        return context
    }

    /// The project's reference recording, when it has one: its lyrics, its
    /// mix (silent unless at the written tempo and key), sent to the engine.
    static func reference(_ project: Project, rig: SessionRig, saved: SessionState, options: BoxOptions, log: BoxLog) -> BoxSession.Context.Reference? {
        guard let record = project.referenceRecord, !rig.schedule.options.audioTracks.isEmpty else { return nil }
        let score = project.score
        var lyrics: LRC?
        switch project.referenceLyrics() {
        case .success(let parsed): lyrics = parsed
        case .failure(let error): log("the reference's lyrics are not shown: \(error.description)", .warning)
        }
        // At another tempo or key it is stretched, like the takes.
        let mix = saved.partMixes(for: score, tracks: rig.schedule.options.audioTracks)[score.parts.count]
        log("reference recording: \(record.describe(sampleRate: project.manifest.sampleRate))\(mix.muted ? " (muted; R turns it on)" : "")")
        rig.control.send(.mix(part: score.parts.count, mix))
        return BoxSession.Context.Reference(name: record.name, part: score.parts.count, songStartFrame: record.songStartFrame,
                                            sampleRate: project.manifest.sampleRate, lyrics: lyrics, mix: mix)
    }

    /// The saved session's mix and loop, sent to the engine.
    private func restore(_ saved: SessionState) {
        for effect in session.restore(saved, score: project.score) {
            if case .engine(let commands) = effect { for command in commands { rig.control.send(command) } }
        }
    }

    /// Says what is open, shows it on the page, starts the engine.
    func start() {
        let context = session.context
        let recording = rig.recorders.count > 1
            ? "recording together " + rig.ensemble.map { "\(project.score.parts[$0.partIndex].name) (input \($0.input + 1))" }.joined(separator: ", ")
            : "recording part \(partName) (\(options.partIndex + 1) of \(project.score.parts.count))"
        log("ready: \(context.songTitle), \(recording); project \(project.path); \(rig.calibration)")
        io.web?.show(project.score, part: partName, log: io.log)
        io.web?.publishLibrary(options.songs, current: options.songIndex, open: (songPath, project.score))
        // Short enough for a 16×2 LCD's message line.
        if let banner = io.webBanner { log("web code \(banner.code)") }
        if resumed {
            let names = context.partNames + (context.reference == nil ? [] : [ReferenceRecord.trackName])
            log("resumed as last left: \(lastSaved.describe(partNames: names))")
        }
        if options.autoplay || options.playOnceAndQuit { rig.link.send(.play) }
        rig.start()
        io.service.ready(status: status("stopped"))
        if let web = io.web { publishTakes(web) }
    }

    func status(_ mode: String) -> String { "\(session.context.songTitle) — \(partName): \(mode)" }

    /// What the loop waits on: its wake-up, the console, the controllers, the songs folder.
    var descriptors: [PollDescriptor] {
        [PollDescriptor(fd: io.wake.fd)] + (io.console.map { [PollDescriptor(fd: $0.fileDescriptor)] } ?? []) + io.hub.descriptors
            + (io.songsWatch.map { [PollDescriptor(fd: $0.fileDescriptor)] } ?? [])
    }

    /// Runs the session to its end; says what comes next.
    func run() -> SessionEnd {
        let descriptors = descriptors
        while true {
            let ready = Poller.wait(descriptors, timeoutMilliseconds: Box.frameMilliseconds)
            if let ended = turn(ready: ready) { return StopSignals.received ? .quit : ended }
        }
    }

    /// One turn of the loop: every source asked, the frame published.
    /// Returns how the session ended, when it did.
    func turn(ready: Set<Int32>) -> SessionEnd? {
        if ready.contains(io.wake.fd) { io.wake.clear() }
        if StopSignals.received { feed(.stopSignal) }
        controlInputs(ready: ready)
        songsFolderInputs(ready: ready)
        webInputs()
        for line in io.hub.news() { log(line, .warning) }
        analysisInputs()
        correctionInputs()
        while let event = rig.link.nextEvent() {
            if case .scheduleChanged = event { rig.scheduleSwitched() }
            feed(.engine(event))
        }
        recorderInputs()
        for line in rig.streamMisses() { feed(.playbackProblem(line)) }
        for event in rig.deviceEvents() {
            switch event {
            case .lost(let why): feed(.deviceLost(why))
            case .reopened(let name): feed(.deviceBack(name))
            }
        }
        if rig.deviceEnded {
            log((rig.deviceFailure ?? "the device stopped") + "; the take so far is kept", .error)
            return .switchTo(song: options.songIndex, part: options.partIndex)
        }
        let now = clock()
        for line in io.sticks?.news(now: now) ?? [] { feed(.notice(line)) }
        feed(.tick(milliseconds: (now - io.started) / 1_000_000))
        if let seconds = options.seconds, Double(now - io.started) / 1e9 >= seconds { feed(.quit) }
        let snapshot = rig.link.snapshot()
        latency.observe(snapshot, commandsSent: rig.link.commandsSent)
        keyLatency.observe(snapshot, commandsSent: rig.link.commandsSent)
        rig.link.collectRetired()
        if let ended = session.ended { return ended }
        io.service.heartbeat(now: now)
        // The readouts, about 30 times a second.
        if now - lastDraw >= Int64(Box.frameMilliseconds) * 1_000_000 - 2_000_000 {
            lastDraw = now
            publish(frame(snapshot))
        }
        return nil
    }

    // MARK: Sources

    /// The console's keys, the controllers' actions, keys, locates and
    /// faders, and the page's actions: each stamped when it arrived.
    func controlInputs(ready: Set<Int32>) {
        if let console = io.console, ready.contains(console.fileDescriptor) {
            let now = clock()
            for key in console.take() {
                switch key {
                case .action(let action): feed(.action(action), stamp: now)
                case .help: feed(.help)
                case .quit: feed(.quit)
                case .unknown(let character): feed(.unknownKey(character))
                }
            }
        }
        let actions = io.hub.take(ready: ready)
        for arrival in ControlHub.inArrivalOrder(actions: actions, keys: io.hub.takeKeys()) {
            switch arrival {
            case .action(let stamped): feed(.action(stamped.action), stamp: stamped.nanoseconds)
            case .key(let key): feed(.key(note: key.note, velocity: key.velocity), stamp: key.nanoseconds)
            }
        }
        for milliseconds in io.hub.takeLocates() { feed(.locateTo(milliseconds: milliseconds)) }
        for (fader, value) in io.hub.takeFaders() { feed(.fader(fader, value: value)) }
        for stamped in io.web?.takeActions() ?? [] { feed(.action(stamped.action), stamp: stamped.nanoseconds) }
    }

    /// Songs dropped into songs/: MusicXML imported, each said; new songs join the library.
    func songsFolderInputs(ready: Set<Int32>) {
        guard let watch = io.songsWatch, ready.contains(watch.fileDescriptor), watch.drain() else { return }
        for arrival in SongLibrary.importArrivals(in: watch.folder) { feed(.notice(arrival.message)) }
        let candidates = SongLibrary.songs(in: watch.folder).filter { !options.songs.contains($0) }
        // After the library and every song the page stored (one the loop has not learned of yet too).
        let uploads = SongLibrary.songs(in: SongLibrary.uploadFolder(options.dataDirectory)).filter { !options.songs.contains($0) }
        let (added, refused) = SongProjects.admissible(candidates, after: options.songs + uploads, dataDirectory: options.dataDirectory)
        // Each refusal said once a session (the folder changes again and again while a stick is copied).
        for line in refused where refusalsSaid.insert(line).inserted { feed(.notice(line + "; not in the library")) }
        if !added.isEmpty { libraryGrew(to: options.songs + added) }
    }

    /// The library is now `songs` (songs arrived in the folder or from the
    /// page); those in `reread` changed where they are (renamed, tagged).
    func libraryGrew(to songs: [String], reread: Set<String> = []) {
        options.songs = songs
        let headers = songs.map { SongHeader.read($0) }
        session.libraryGrew(to: songs.count, tags: headers.map(\.tags), titles: headers.map(\.title))
        io.web?.publishLibrary(options.songs, current: options.songIndex, reread: reread)
    }

    /// One of the singer's songs to the trash (kept 30 days; its projects
    /// stay): never a shipped one, nor the one open now.
    func removeSong(_ song: Int) -> Result<String, WebFailure> {
        guard song < options.songs.count else { return .failure(WebFailure(404, "no song \(song + 1): the library has \(options.songs.count)")) }
        let path = options.songs[song]
        let title = SongHeader.read(path).title
        guard Trash.isUsers(path, dataDirectory: options.dataDirectory) else {
            return .failure(WebFailure(403, "'\(title)' came with the box: only songs you added can be removed"))
        }
        guard song != options.songIndex else { return .failure(WebFailure(409, "'\(title)' is open now: choose another song first")) }
        do {
            let trash = try Trash.move(song: path, dataDirectory: options.dataDirectory)
            log("library: '\(title)' moved to the trash (\(trash), kept \(Trash.keptDays) days); its projects stay")
        } catch {
            return .failure(WebFailure(500, "\(error)"))
        }
        options.songs.remove(at: song)
        if options.songIndex > song { options.songIndex -= 1 }
        let headers = options.songs.map { SongHeader.read($0) }
        session.libraryLost(song, tags: headers.map(\.tags), titles: headers.map(\.title))
        io.web?.publishLibrary(options.songs, current: options.songIndex)
        return .success("'\(title)' moved to the trash for \(Trash.keptDays) days; its takes stay")
    }

    // MARK: The song's projects

    /// The song open now (its path in the library).
    var songPath: String { options.songs[options.songIndex] }

    /// Whether the box was started on one project (`--project`): it keeps to it.
    var startedOnProject: Bool { options.projectPaths[songPath].map { $0 + "/score.acasong" == songPath } ?? false }

    /// The song's projects for the page, each with its takes (the open
    /// one's from its manifest as it is now, the others' as last read).
    func songProjects() -> [WebProject] {
        if startedOnProject { return [WebProject(name: (project.path as NSString).lastPathComponent, current: true, takes: Self.takesKept(project))] }
        let current = currentProjectName
        return SongProjects.names(song: songPath, dataDirectory: options.dataDirectory, library: options.songs).map { name in
            if name == current { return WebProject(name: name, current: true, takes: Self.takesKept(project)) }
            if let known = otherProjects[name] { return WebProject(name: name, current: false, takes: known) }
            let path = SongProjects.path(song: songPath, name: name, dataDirectory: options.dataDirectory)
            let takes = FileManager.default.fileExists(atPath: path) ? ((try? Project.open(path, for: .read)).map { Self.takesKept($0.project) } ?? 0) : 0
            otherProjects[name] = takes
            return WebProject(name: name, current: false, takes: takes)
        }
    }

    /// A project's takes as the page counts them: those not set aside.
    static func takesKept(_ project: Project) -> Int {
        project.manifest.takes.filter { $0.state != .discarded }.count
    }

    /// What a change to the song's projects comes to: answered here, or
    /// the project (by its name) the song opens in next.
    enum ProjectStep {
        case answer(Result<String, WebFailure>)
        case open(String)
    }

    /// A change to the song's projects: made or checked here (the disk is
    /// the loop's), answered here, or a project to open (the session
    /// answers as it ends). Never while a take is being recorded.
    func projectChange(_ change: WebProjectChange) -> ProjectStep {
        if startedOnProject { return .answer(.failure(WebFailure(409, "the box was started on one project (--project): start it without, to keep several"))) }
        if let why = BoxSession.takeUnderWay(rig.link.snapshot()) { return .answer(.failure(WebFailure(409, why))) }
        let names = SongProjects.names(song: songPath, dataDirectory: options.dataDirectory, library: options.songs)
        let asked: String
        switch change {
        case .create(let name):
            let name = name.precomposedStringWithCanonicalMapping
            return createProject(name, names: names).map(ProjectStep.answer) ?? .open(name)
        case .select(let name), .remove(let name): asked = name
        }
        guard let name = names.first(where: { $0.caseInsensitiveCompare(asked) == .orderedSame }) else {
            return .answer(.failure(WebFailure(404, "\(session.context.songTitle) has no project called '\(SafeText.printable(asked))' (it has \(names.joined(separator: ", ")))")))
        }
        if case .remove = change { return .answer(removeProject(name)) }
        return selectProject(name).map(ProjectStep.answer) ?? .open(name)
    }

    /// The name of the song's project open now (nil: not one of its own).
    var currentProjectName: String? { SongProjects.name(of: project.path, song: songPath, dataDirectory: options.dataDirectory) }

    /// A new project of the song, empty, to be opened (nil), or why not.
    func createProject(_ name: String, names: [String]) -> Result<String, WebFailure>? {
        let data = options.dataDirectory, song = songPath, title = session.context.songTitle
        if let problem = SongProjects.nameProblem(name, taken: names) { return .failure(WebFailure(422, problem)) }
        if names.count >= SongProjects.most { return .failure(WebFailure(507, "\(title) has \(names.count) projects, the most a song keeps: delete one first")) }
        let path = SongProjects.path(song: song, name: name, dataDirectory: data)
        // The folder's name holds the song's file name and this one: within what a project's name may be.
        let room = Project.longestName - (SongProjects.path(song: song, name: "", dataDirectory: data) as NSString).lastPathComponent.utf8.count
        if (path as NSString).lastPathComponent.utf8.count > Project.longestName {
            return .failure(WebFailure(422, room > 0 ? "this song's file name is long: its projects' names are \(room) letters at most (\(room / 2) for letters outside A–Z)"
                                                    : "this song's file name is too long for a project beside its first: rename the song's file"))
        }
        if options.songs.contains(where: { SongProjects.path(song: $0, name: nil, dataDirectory: data) == path }) {
            return .failure(WebFailure(409, "'\(name)' would be the project of the song \((path as NSString).lastPathComponent): choose another name"))
        }
        // A folder of that name already there is another song's (this one's are all listed): its takes stay its own.
        if FileManager.default.fileExists(atPath: path) {
            let whose = SongProjects.madeFrom(path).map { " (the takes of \(SafeText.printable($0)))" } ?? ""
            return .failure(WebFailure(409, "'\(name)' would be kept in projects/\(SafeText.printable((path as NSString).lastPathComponent)), which another song's takes are in\(whose): choose another name"))
        }
        do {
            let made = try Project.create(at: path, songText: try SongLibrary.songText(song), sampleRate: project.manifest.sampleRate, owner: "acapella run")
            defer { made.close() }
            do { try SongProjects.mark(path, song: song) } catch {
                // Unmarked it would be nobody's: the empty project made a moment ago goes again.
                try? FileManager.default.removeItem(atPath: path)
                throw error
            }
        } catch {
            return .failure(WebFailure(409, "\(error)"))
        }
        log("projects: '\(name)' made for \(title) (\(path))")
        options.projectPaths[song] = path
        rememberProject(name)
        return nil
    }

    /// Another of the song's projects, to be opened (nil), or why not.
    func selectProject(_ name: String) -> Result<String, WebFailure>? {
        if name == currentProjectName { return .failure(WebFailure(409, "'\(name)' is the project open now")) }
        let path = SongProjects.path(song: songPath, name: name, dataDirectory: options.dataDirectory)
        // Looked at first: one that cannot be opened is said here, and this song stays open.
        if FileManager.default.fileExists(atPath: path) {
            do { try Project.open(path, for: .read).project.close() } catch {
                return .failure(WebFailure(409, "'\(name)' cannot be opened: \(error.description)"))
            }
        }
        // Main chosen: the song's first, not a project another choice remembered.
        options.projectPaths[songPath] = path
        rememberProject(name)
        return nil
    }

    /// The project the song opens in after a restart.
    func rememberProject(_ name: String) {
        do { try SongProjects.remember(song: songPath, name: name, dataDirectory: options.dataDirectory) } catch {
            log("projects: cannot remember '\(name)' for the next start: \(error)", .warning)
        }
    }

    /// One of the song's projects, not the one open, to the trash.
    func removeProject(_ name: String) -> Result<String, WebFailure> {
        if name == currentProjectName { return .failure(WebFailure(409, "'\(name)' is open now: open another project first")) }
        let path = SongProjects.path(song: songPath, name: name, dataDirectory: options.dataDirectory)
        guard FileManager.default.fileExists(atPath: path) else { return .failure(WebFailure(404, "'\(name)' has nothing in it yet")) }
        // Held for writing while it moves: nobody else is recording into it.
        let held: Project
        do { held = try Project.open(path, for: .write(owner: "acapella run (moving it to the trash)"), origin: options.origin).project } catch {
            return .failure(WebFailure(409, "'\(name)' cannot be moved: \(error.description)"))
        }
        defer { held.close() }
        let takes = Self.takesKept(held)
        do {
            let trash = try Trash.move(project: path, dataDirectory: options.dataDirectory)
            log("projects: '\(name)' of \(session.context.songTitle) moved to the trash with its \(takes) take\(takes == 1 ? "" : "s") (\(trash), kept \(Trash.keptDays) days)")
        } catch {
            return .failure(WebFailure(500, "\(error)"))
        }
        otherProjects[name] = nil
        takesChanged = true
        return .success("project '\(name)' moved to the trash with its \(takes) take\(takes == 1 ? "" : "s"), kept \(Trash.keptDays) days")
    }

    /// One of the singer's songs given another title or tags: its file's
    /// header lines rewritten (whole, atomically; the file keeps its name,
    /// so its projects stay its own). Projects made before keep the song
    /// as they were made with it.
    func describeSong(_ song: Int, title: String?, tags: [String]?) -> Result<String, WebFailure> {
        guard song < options.songs.count else { return .failure(WebFailure(404, "no song \(song + 1): the library has \(options.songs.count)")) }
        let path = options.songs[song]
        let before = SongHeader.read(path).title
        guard Trash.isUsers(path, dataDirectory: options.dataDirectory) else {
            return .failure(WebFailure(403, "'\(before)' came with the box: only songs you added can be renamed or tagged"))
        }
        do {
            let text = try SongLibrary.songText(path)
            let changed = SongHeader.rewrite(text, title: title, tags: tags)
            do { _ = try Acasong.parse(changed) } catch { return .failure(WebFailure(422, "'\(before)': \(error.description)")) }
            try AtomicFile.write(Array(changed.utf8), to: path)
        } catch {
            return .failure(WebFailure(500, "\(error)"))
        }
        libraryGrew(to: options.songs, reread: [path])
        let said = title.map { "'\(before)' is now called '\($0)'" } ?? "'\(before)' tagged \(tags?.joined(separator: ", ") ?? "")"
        log("library: \(said)")
        return .success(said)
    }

    /// The page: songs uploaded, changes (each answered with its effect's
    /// result), pairing events (wrong codes logged at most every 10 s — a
    /// guesser sends thousands; a replaced code at once).
    func webInputs() {
        guard let web = io.web else { return }
        let uploads = web.newUploads().filter { !options.songs.contains($0) }
        if !uploads.isEmpty { libraryGrew(to: options.songs + uploads) }
        for (change, reply) in web.takeChanges() {
            if case .removeSong(let song) = change {
                reply.answer(removeSong(song))
                continue
            }
            if case .describeSong(let song, let title, let tags) = change {
                reply.answer(describeSong(song, title: title, tags: tags))
                continue
            }
            // A project made, found or moved to the trash here; an opened one is the session's end.
            var change = change
            if case .project(let asked) = change {
                switch projectChange(asked) {
                case .answer(let answer):
                    reply.answer(answer)
                    continue
                case .open(let name):
                    change = .project(.select(name))
                }
            }
            // What needs the disk is checked here: the chosen song's parts.
            if case .choose(let song, let part?) = change, song < options.songs.count, let refusal = Self.partRefusal(options.songs[song], song: song, part: part) {
                reply.answer(.failure(refusal))
                continue
            }
            self.reply = reply
            feed(.web(change))
            if let unanswered = self.reply {
                self.reply = nil
                unanswered.answer(.failure(WebFailure(500, "the box did not answer")))
            }
        }
        for event in web.takePairingEvents() {
            switch event {
            case .wrongCode(let group, _, _):
                wrongCodes.count += 1
                wrongCodes.groups.insert(group)
            case .codeReplaced(let code, _):
                feed(.pairingCodeReplaced(code, guessed: true))
            case .everyoneSignedOut(let code):
                feed(.pairingCodeReplaced(code, guessed: false))
            }
        }
        if let problem = web.savePairingIfChanged() { log(problem, .warning) }
        let now = clock()
        if wrongCodes.count > 0, now - wrongCodes.loggedAt >= 10_000_000_000 {
            let groups = wrongCodes.groups.sorted()
            log("web: \(wrongCodes.count) wrong pairing code\(wrongCodes.count == 1 ? "" : "s") from \(groups.prefix(3).joined(separator: ", "))"
                + (groups.count > 3 ? " and \(groups.count - 3) more" : ""), .warning)
            wrongCodes = (0, [], now)
        }
    }

    /// Why part `part` of the song at `path` cannot be chosen (refused,
    /// never clamped), if it cannot.
    static func partRefusal(_ path: String, song: Int, part: Int) -> WebFailure? {
        let parts: Int
        do { parts = try Acasong.parse(SongLibrary.songText(path)).parts.count } catch {
            return WebFailure(422, "song \(song + 1) cannot be loaded: \(error)")
        }
        return part < parts ? nil : WebFailure(404, "no part \(part + 1) in song \(song + 1): it has \(parts)")
    }

    /// Analyses finished beside the loop.
    func analysisInputs() {
        if let blend = analyses.blendsFinished().last {
            // Worked out on takes that no longer all play (one replaced or set
            // aside while the blend ran): worked out again, not shown.
            // At most twice more (takes replaced pass after pass: said, not chased).
            let stale = Self.blendIsStale(blend, takes: project.manifest.takes)
            if stale { blendRetries += 1 }
            if stale && blendRetries <= 2 {
                analyses.blend(project: project.path)
            } else {
                io.web?.publishBlend(stale ? TakeAnalyses.error("the takes changed while the blend was worked out: ask again when they are settled") : blend)
                blendTakes = playingTakes()
            }
        }
        for finished in analyses.finished() {
            if finished.quiet { scoring = nil }
            switch finished.result {
            case .success(let done):
                if !finished.quiet {
                    feed(.analyzed(done.summary))
                    io.web?.publishAnalysis(done.page)
                }
                scores.set(done.summary.score, for: finished.take, project: project.path)
                do { try scores.save(dataDirectory: options.dataDirectory) } catch { log("takes: scores not kept: \(error)", .warning) }
                takesChanged = true
            case .failure(let problem):
                if finished.quiet { unscorable.insert(finished.take.id) }
                log(problem.description, .warning)
            }
        }
    }

    /// Corrections finished beside the loop: the corrected audio kept as a
    /// new take (the loop is the project's writer), put up for review.
    func correctionInputs() {
        for done in analyses.correctionsFinished() {
            switch done.result {
            case .success(let (file, moved)):
                defer { unlink(done.file) }
                do throws(ProjectError) {
                    let samples: [Float]
                    do { samples = try AudioFile.readMono(file).samples } catch { throw ProjectError(description: "take \(done.take.id) not put in tune: \(error.description)") }
                    let record = try TakeCorrection.store(samples, copyOf: done.take, moved: moved.count, in: project)
                    for line in moved { log("take \(record.id) from take \(done.take.id): \(line)", .info) }
                    takesChanged = true
                    // The singer's own part, stopped: up for review; another part's (or while playing): it plays.
                    if record.part == project.score.parts[rig.partIndex].name && rig.link.snapshot().state == .stopped { feed(.takeFinished(record)) } else { perform(.reloadAllTakes) }
                    feed(.notice("take \(record.id): take \(done.take.id) with \(moved.count) note\(moved.count == 1 ? "" : "s") put in tune; take \(done.take.id) is kept as sung"))
                    analyses.start(record, project: project.path)
                    unscorable.insert(record.id)
                } catch {
                    log(error.description, .warning)
                    feed(.notice(error.description))
                }
            case .failure(let problem):
                unlink(done.file)
                log(problem.description, .warning)
                feed(.notice(problem.description))
            }
        }
    }

    /// The next take from before without a score analysed for the takes
    /// list (quietly: neither the page's colours nor the readout change).
    func scoreNextTake() {
        guard scoring == nil, io.web != nil,
              // Not a take about to be put up for review: its own analysis scores it.
              let take = scores.next(in: project.manifest.takes, project: project.path,
                                     skipping: unscorable.union(unsaidTakes(rig.recorders.map(\.finished)).joined().map(\.id))) else { return }
        scoring = take.id
        analyses.start(take, project: project.path, quiet: true)
    }

    /// Takes the recorders finished (one, or a take a part of the
    /// recording set), and their problems.
    func recorderInputs() {
        guard !rig.recorders.isEmpty else { return }
        // Loop passes finish takes while the singer sings the next, and
        // after the stop a writer that fell behind may still be finishing
        // them: a take is said (and put up for review) only once the
        // transport has stopped and every writer has written what it was
        // given. Then the newest is the pass the stop cut short, not the
        // one before it (which a stop just after a pass's edge put up when
        // each pass was said as it landed); a set's takes together.
        var writing = false
        for recorder in rig.recorders where recorder.serve() { writing = true }
        let finished = rig.recorders.map(\.finished)
        let counts = finished.map(\.count)
        if counts != takesListed {
            takesListed = counts
            takesChanged = true  // listed on the page as they land
        }
        let unsaid = unsaidTakes(finished)
        if !writing, rig.link.snapshot().state == .stopped, unsaid.contains(where: { !$0.isEmpty }) {
            let said = FinishedTakes(unsaid: unsaid, manifest: project.manifest.takes, ownPart: project.score.parts[rig.partIndex].name)
            takesSeen = counts
            takesChanged = true
            for take in said.notKept { feed(.takeFinished(take)) }
            if let newest = said.review { feed(.takeFinished(newest)) }
            // How it was sung, worked out beside the control loop while the singer listens (the take put up).
            if let newest = said.review, !TakeScores.setStillRecording(newest, in: project.manifest.takes) {
                analyses.start(newest, project: project.path)
                unscorable.insert(newest.id)  // scored by this analysis, not again quietly
            }
        }
        for problem in newProblems() { feed(.recorderProblem(problem)) }
    }

    /// Per recorder, the takes it finished that the session has not been told of.
    func unsaidTakes(_ finished: [[TakeRecord]]) -> [[TakeRecord]] {
        zip(finished, takesSeen + repeatElement(0, count: max(0, finished.count - takesSeen.count))).map { Array($0.dropFirst($1)) }
    }

    /// The recorders' problems not said yet.
    func newProblems() -> [String] {
        var new: [String] = []
        for (index, recorder) in rig.recorders.enumerated() {
            if problemsSeen.count <= index { problemsSeen.append(0) }
            let problems = recorder.problemsSoFar()
            new += problems.dropFirst(problemsSeen[index])
            problemsSeen[index] = problems.count
        }
        return new
    }

    // MARK: Deciding and doing

    /// Feeds one input to the session and carries out what it says (the
    /// results of effects fed back in turn), then saves the session.
    func feed(_ input: BoxSession.Input, stamp: Int64? = nil) {
        var queue: [BoxSession.Input] = [input]
        defer { saveSession() }
        while !queue.isEmpty {
            let effects = session.handle(queue.removeFirst(), snapshot: rig.link.snapshot())
            for effect in effects {
                if case .engine = effect, let stamp {
                    perform(effect)
                    if case .key = input { keyLatency.sent(stamp: stamp, commandsSent: rig.link.commandsSent) } else { latency.sent(stamp: stamp, commandsSent: rig.link.commandsSent) }
                } else if let result = perform(effect) {
                    queue.append(result)
                }
            }
        }
    }

    /// One effect carried out; an effect that answers returns its input.
    @discardableResult
    func perform(_ effect: BoxSession.Effect) -> BoxSession.Input? {
        switch effect {
        case .engine(let commands):
            for command in commands { rig.control.send(command) }
        case .retime(let retime):
            return .retimed(Result { () throws(EngineControlError) in
                try rig.retime(tempoScale: Rational(Int128(retime.tempoPercent), 100), countIn: retime.countIn, transpose: retime.transpose)
            })
        case .correct(let id, let measures):
            guard let take = project.manifest.takes.first(where: { $0.id == id && $0.state.isUsable && $0.state != .discarded }) else {
                return .notice("no take \(id) to put in tune here")
            }
            let notes = measures.map { "m.\($0.lowerBound)-\($0.upperBound)" } ?? "flagged"
            corrections += 1
            let file = options.dataDirectory + "/.correcting-\(getpid())-\(id)-\(corrections).wav"
            unlink(file)  // left by a box before this one with the same process id
            analyses.correct(take, notes: notes, project: project.path, into: file)
        case .blend:
            blendRetries = 0
            analyses.blend(project: project.path)
        case .reloadTakes:
            rig.tones = session.context.tones
            rig.reloadTakes()
            takesChanged = true
        case .reloadAllTakes:
            rig.tones = session.context.tones
            rig.reloadAllTakes()
            takesChanged = true
        case .writeLine(let played, let grid):
            return .lineWritten(onProject("\(project.path) is read-only here") { try $0.addLine(played, grid: grid) })
        case .undoLastTake:
            takesChanged = true
            return .undone(onProject("\(project.path) is read-only here: nothing to undo") { try $0.undoLastTake() })
        case .edit(let edit):
            return .edited(edit, onProject("recording is off here: \(refused ?? "read-only")") { try Self.apply(edit, to: $0) })
        case .answer(let result):
            reply?.answer(result)
            reply = nil
        case .say(let text):
            log(text)
        case .log(let text, let priority):
            log(text, priority)
        case .lights(let on):
            io.hub.showState(io.feedback, from: lights, to: on)
            lights = on
        case .tag(let tag):
            options.tagFilter = tag
        case .recordingSet(let set):
            options.together = Self.together(set, score: project.score)
            options.togetherSource = "the page's recording set"
        case .end:
            break
        }
        return nil
    }

    /// `body` on the project; `readOnly` when this box may not write it.
    func onProject<T>(_ readOnly: String, _ body: (Project) throws -> T) -> Result<T, ProjectError> {
        guard rig.recorder != nil else { return .failure(ProjectError(description: readOnly)) }
        do { return .success(try body(project)) } catch let error as ProjectError {
            return .failure(error)
        } catch {
            return .failure(ProjectError(description: "\(error)"))
        }
    }

    /// A change from the page, done to the project; what it says now.
    static func apply(_ edit: BoxSession.ProjectEdit, to project: Project) throws(ProjectError) -> String {
        switch edit {
        case .activate(let id):
            try project.activate(id)
            return "take \(id) plays"
        case .discard(let id):
            try project.discard(id)
            return "take \(id) discarded; its file stays in the project"
        case .nudge(let id, let milliseconds):
            let now = try project.nudge(id, by: Int64(milliseconds) * Int64(project.manifest.sampleRate) / 1_000)
            return String(format: "take %d nudged to %+.1f ms", id, Double(now) * 1_000 / Double(project.manifest.sampleRate))
        case .name(let id, let name):
            try project.name(id, name)
            return name.map { "take \(id) named '\($0)'" } ?? "take \(id) has no name now"
        case .removeReference:
            let record = try project.removeReference()
            return "the reference recording \(record.source) removed"
        }
    }

    /// The session as it stands, saved in the project when it changed
    /// (only where this box may write it). `final`: the session is ending,
    /// so a change made a moment before is saved even if the engine has
    /// not applied every command yet (the loop then as last known).
    func saveSession(final: Bool = false) {
        guard rig.recorder != nil else { return }
        // Whether the engine loops is read once it has applied every command sent (a later tick saves it).
        let snapshot = rig.link.snapshot()
        let settled = snapshot.commandsApplied >= rig.link.commandsSent
        guard settled || final else { return }
        let now = session.rehearsal(over: lastSaved, looping: settled ? snapshot.looping : lastSaved.looping)
        guard now != lastSaved else { return }
        lastSaved = now
        do { try project.saveSession(now) } catch {
            log("\(project.path): the session could not be saved (\(error)); it is kept in memory", .warning)
        }
    }

    // MARK: Readouts

    /// The project's takes as they are now.
    func currentTakes() -> [TakeRecord] { project.manifest.takes }

    /// The takes that play now (each part's active one), by id.
    func playingTakes() -> Set<Int> {
        Set(project.manifest.takes.filter { $0.active && $0.state.isUsable && $0.state != .discarded }.map(\.id))
    }

    /// Whether a blend's JSON heard a take of some part that is no longer
    /// the one playing (a refusal heard none).
    static func blendIsStale(_ blend: [UInt8], takes: [TakeRecord]) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(blend)) as? [String: Any], let parts = object["parts"] as? [[String: Any]] else { return false }
        return parts.contains { part in
            guard let name = part["name"] as? String, let take = part["take"] as? Int else { return false }
            return Blend.playingTake(of: name, in: takes)?.id != take
        }
    }

    /// The song's takes for the web page, as the project says now; a blend
    /// shown of takes that no longer all play is taken down.
    func publishTakes(_ web: WebHub) {
        takesChanged = false
        if let shown = blendTakes, shown != playingTakes() {
            web.publishBlend(nil)
            blendTakes = nil
        }
        let withReference = session.context.reference != nil
        let rate = project.manifest.sampleRate
        let (records, reference) = (project.manifest.takes, withReference ? project.referenceRecord?.describe(sampleRate: rate) : nil)
        let schedule = session.context.schedule
        scores.keepOnly(records, project: project.path)
        web.publishTakes(records, project: project.path, song: session.context.songTitle, parts: session.context.partNames, currentPart: options.partIndex,
                         sampleRate: rate, reference: reference, scores: records.map { scores.score(of: $0, project: project.path) },
                         heardFrom: records.map { Self.heardFrom($0, schedule: schedule) }, projects: songProjects()) { schedule.measure(at: $0) }
        scoreNextTake()
    }

    /// Where a take is heard from with the others (song samples): a
    /// punch-in a measure before its own first, a full take from the start.
    static func heardFrom(_ take: TakeRecord, schedule: Schedule) -> Int64 {
        guard let range = take.range else { return 0 }
        let first = schedule.measure(at: range.start)
        return schedule.barline(ofMeasure: first - 1) ?? schedule.barline(ofMeasure: first) ?? 0
    }

    /// One frame: what every readout shows now.
    struct Frame {
        var readout: ReadoutState
        var snapshot: EngineSnapshot
        /// The takes of the part, as the project says now (read once a frame).
        var takes: [TakeRecord]
        /// The needle's reading the readout was made from.
        var reading: PitchReading?
    }

    func frame(_ snapshot: EngineSnapshot) -> Frame {
        let takes = currentTakes()
        let count = takes.filter { $0.part == partName && $0.state != .discarded }.count
        let reading = rig.tracker?.reading
        var readout = session.readout(snapshot: snapshot, reading: reading, takes: count)
        if readout.message == nil, let line = log.takeLatest() { readout.message = line }
        return Frame(readout: readout, snapshot: snapshot, takes: takes, reading: reading)
    }

    /// The frame to every sink: the console, the LCD, systemd, the page.
    func publish(_ frame: Frame) {
        let readout = frame.readout
        defer { lastTakesCount = readout.takes }
        io.display?.draw(readout, keys: ConsoleKeys.helpLines)
        if let lcd = io.lcd { lcd.show(Readout.lcd(readout, columns: lcd.columns > 0 ? lcd.columns : 16, rows: lcd.rows > 0 ? lcd.rows : 2)) }
        io.service.status(status(readout.mode.rawValue))
        guard let web = io.web else { return }
        if takesChanged || frame.snapshot.state == .recording && readout.takes != lastTakesCount { publishTakes(web) }
        var live = WebLiveState(readout, serial: frame.snapshot.serial, sample: frame.snapshot.position)
        live.verse = session.context.verse
        if rig.recorders.count > 1 { live.together = rig.ensemble.map { "\(project.score.parts[$0.partIndex].name) \($0.input + 1)" } }
        live.loop = readout.loop
        live.punch = session.punchRange.map { "\($0.lowerBound)-\($0.upperBound)" }
        live.rawCents = readout.cents == nil ? nil : frame.reading?.rawCents
        let context = session.context
        live.mostInputs = context.mostInputs
        live.recordingSet = !context.setInForce ? [] : project.score.parts.indices.map { part in
            context.recordingSet.first { $0.part == part }?.input ?? 0
        }
        live.tempo = readout.tempo
        live.tempoPercent = context.tempoPercent
        live.countIn = context.countIn
        live.metronome = context.metronome
        live.transpose = context.schedule.options.transpose
        live.soloed = session.soloed
        live.guideMuted = session.guideMuted
        live.mixer = session.mixer
        if let take = session.review {
            live.reviewTake = take.id
            live.reviewSeconds = Double(take.frames) / Double(max(1, take.sampleRate))
        }
        if let tracker = rig.tracker, let spectrum = tracker.spectrum {
            live.spectrumLevels = spectrum.levels.map { Int($0.rounded()) }
            live.spectrumEnvelope = spectrum.envelope.map { $0.map { Int($0.rounded()) } }
            (live.spectrumFrom, live.spectrumTo) = (Int(tracker.spectrumAnalyser.bandRange.lowerBound), Int(tracker.spectrumAnalyser.bandRange.upperBound))
            live.formants = spectrum.formants.map { Int($0.rounded()) }
        }
        web.publish(live)
    }

    // MARK: The end

    /// The transport stopped (a take in progress finished and kept), what
    /// the session recorded and measured said; the settings that carry on
    /// to the next session handed back in `options`.
    func finish() {
        saveSession(final: true)
        rig.finish()
        for problem in newProblems() { log(problem, .warning) }
        // What this session recorded, as the project says now (discarded after d or u).
        let recorded = Set(rig.recorders.flatMap(\.finished).map(\.id))
        let rate = project.manifest.sampleRate
        for take in currentTakes() where recorded.contains(take.id) {
            let dropouts = take.dropouts.isEmpty ? "" : ", \(take.dropouts.count) dropout\(take.dropouts.count == 1 ? "" : "s") (silence in place)"
            log("take \(take.id) (\(take.part)) \(take.state.rawValue): \(String(format: "%.1f", Double(take.frames) / Double(rate))) s\(dropouts), \(take.file)")
        }
        let gaps = rig.link.board.read().deviceGaps
        if gaps > 0 {
            log("the device dropped frames \(gaps) time\(gaps == 1 ? "" : "s") this session (xruns: the machine was busy, or the box was stopped); a take keeps its place on the song across each", .warning)
        }
        for figures in [latency, keyLatency] {
            if let summary = figures.summary(periodFrames: device.periodFrames, sampleRate: device.sampleRate) { log(summary) }
        }
        if let summary = rig.renderSummary { log(summary) }
        let context = session.context
        // The verse carries on from a song that has verses to choose from.
        let verse = context.verseLines.count > 1 ? context.verse : options.rehearsal.verse
        options.rehearsal = session.rehearsal
        options.rehearsal.verse = verse
    }
}
