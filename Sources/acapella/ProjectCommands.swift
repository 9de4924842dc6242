import AcapellaAnalysis
import AcapellaBox
import AcapellaCLI
import AcapellaControl
import AcapellaDevices
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation

/// Opens a project for reading or for writing (refused at once when
/// another program writes it), printing what the opening found or repaired.
/// `origin`: who records (this box's id when not given); a take another box
/// of a synchronised project is recording is left to it, unless asked to
/// repair every take (`takes recover`, the override for a box gone for good).
func openProject(_ path: String, for access: Project.Access, origin: TakeOrigin? = nil, everyBoxsTakes: Bool = false) throws -> Project {
    let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
    do {
        let origin = everyBoxsTakes ? TakeOrigin(singer: origin?.singer) : origin ?? TakeOrigin(box: try? BoxIdentity.current())
        let (project, report) = try Project.open(trimmed, for: access, origin: origin)
        for line in report { writeError("\(trimmed): \(line)") }
        return project
    } catch {
        throw CLIError(error.description, exitCode: 1)
    }
}

func runNew(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    guard path.hasSuffix(".acaproj") else { throw CLIError("a project's name ends in .acaproj, not '\(path)'") }
    guard let song = arguments.value("--song") else { throw CLIError("new needs --song SONG") }
    let score = try loadScore(song)
    do {
        let project = try Project.create(at: path, songText: Acasong.serialize(score))
        print("created \(project.path): \(score.title ?? song), parts \(score.parts.map(\.name).joined(separator: ", "))")
    } catch {
        throw CLIError(error.description, exitCode: 1)
    }
    return 0
}

func runRecord(_ arguments: ParsedArguments) throws -> Int32 {
    var ensemble: [PartOnInput] = []
    if let parts = arguments.value("--parts") {
        guard arguments.value("--part") == nil else { throw CLIError("record takes --part NAME or --parts PART=INPUT,…, not both") }
        do { ensemble = try PartOnInput.list(parsing: parts) } catch { throw CLIError(error.description) }
    }
    guard let part = arguments.value("--part") ?? ensemble.first?.part else { throw CLIError("record needs --part NAME (or --parts PART=INPUT,… for several at once)") }
    var request = RecordingRequest(part: part)
    request.ensemble = ensemble
    if let range = try arguments.measures("--range") { request.measures = range }
    request.countInMeasures = try arguments.int("--count-in", default: 1, range: 0...4)
    request.tempoPercent = try arguments.tempoPercent(percents: SessionState.tempoPercents) ?? 100
    request.transpose = try arguments.int("--transpose", default: 0, range: -12...12)
    request.ownGuide = arguments.flags.contains("--guide")
    if arguments.value("--loop") != nil {
        guard request.measures != nil else { throw CLIError("--loop needs --range A-B: the measures to loop") }
        request.loopPasses = try arguments.int("--loop", default: 1, range: 1...50)
    }
    if try arguments.choice("--singer", default: OnOff.on) == .off { request.singer = nil }
    // The simulated singer off pitch (a take with known flat notes: demos, 'acapella correct' tests).
    if arguments.value("--detune") != nil { request.singer?.detuneCents = Double(try arguments.int("--detune", default: 0, range: -100...100)) }
    let lateMilliseconds = try arguments.int("--late", default: 0, range: -500...500)
    if arguments.value("--drift") != nil { request.singer?.driftCentsPerMinute = Double(try arguments.int("--drift", default: 0, range: -100...100)) }
    request.takeLoading = try takeLoading(arguments)
    let origin = try localOrigin(singer: arguments.value("--as"), source: "--as")
    let device = try openDevice(arguments.value("--device"), inputs: ensemble.map(\.input).max() ?? 1)
    request.singer?.timingErrorSamples = Int64(lateMilliseconds * device.sampleRate / 1_000)
    let project = try openProject(arguments.positionals[0], for: .write(owner: "acapella record"), origin: origin)
    defer { project.close() }
    // Ctrl-C, a stop or a closed terminal finishes the take, as the stop button does.
    StopSignals.install()
    let what = ensemble.isEmpty ? part : ensemble.map { "\($0.part) (input \($0.input))" }.joined(separator: ", ")
    let showProgress = arguments.flags.contains("--progress")
    let result: RecordingResult
    do {
        // Said once every part, range and input is checked: a refusal is the only line.
        result = try RecordingSession.record(project: project, request: request, device: device, announce: {
            writeError("recording \(what) on the \(device.name)\(device is SimulatedRoom ? "; no sound card is used" : "")")
        }) { frames in
            if showProgress { FileHandle.standardOutput.write(Data("captured \(frames)\n".utf8)) }
        }
    } catch {
        throw CLIError(error.description, exitCode: 1)
    }
    for problem in result.problems { writeError("\(project.path): \(problem)") }
    if result.deviceGaps > 0 {
        writeError("\(project.path): the device dropped frames \(result.deviceGaps) time\(result.deviceGaps == 1 ? "" : "s") (xruns: the machine was busy, or the program was stopped); "
            + "each is silence in the take where the audio was lost, and the take stays on the song's samples; see its dropouts")
    }
    if result.overrunFrames > 0 { writeError("\(project.path): \(result.overrunFrames) captured frames were lost (the take's writer fell behind: a slow disk, or a machine too busy to run it); see the take's dropouts") }
    for take in result.takes { print(describe(project.manifest.takes.first { $0.id == take.id } ?? take, rate: project.manifest.sampleRate)) }
    if result.takes.isEmpty { writeError("\(project.path): no take was recorded") }
    return result.problems.isEmpty && !result.takes.isEmpty ? 0 : 1
}

/// This box (its id from the data directory) and the singer named by `source`.
func localOrigin(singer: String?, source: String) throws -> TakeOrigin {
    if let singer, let problem = TakeOrigin.singerProblem(singer) { throw CLIError("\(source): \(problem)") }
    do { return TakeOrigin(box: try BoxIdentity.current(), singer: singer) } catch { throw CLIError(error.description, exitCode: 1) }
}

/// One line per take: id, part, state, length, range, alignment,
/// dropouts, who sang it on which box and when, and why it cannot play
/// when it cannot.
func describe(_ take: TakeRecord, rate: Int, condition: TakeCondition? = nil, framesOnDisk: Int64? = nil) -> String {
    let frames = framesOnDisk ?? take.frames
    let seconds = Double(frames) / Double(rate)
    let state = condition?.word ?? take.state.rawValue
    var text = String(format: "take %d  %@  %@%@  %.2f s", take.id, take.part, state, take.active ? ", active" : "", seconds)
    if let name = take.name { text += "  '\(name.oneLine)'" }
    if let range = take.range { text += "  punch \(range.start)..<\(range.end)" } else { text += "  full" }
    text += "  offset \(take.alignmentOffsetSamples)"
    if take.nudgeSamples != 0 { text += " nudge \(take.nudgeSamples)" }
    if !take.dropouts.isEmpty { text += "  \(take.dropouts.count) dropout\(take.dropouts.count == 1 ? "" : "s")" }
    if let gain = take.gainDB { text += String(format: "  gain %+.1f dB", gain) }
    let by = [take.singer, take.box.map { "box " + $0 }, take.recorded.map { String($0.prefix(16)).replacingOccurrences(of: "T", with: " ") }].compactMap { $0 }
    if !by.isEmpty { text += "  " + by.joined(separator: ", ") }
    text += "  \(take.file)"
    if let condition, case .live = condition {
        text += "  (\(condition.description); \(String(format: "%.2f", seconds)) s so far)"
    } else if let condition {
        text += "  (\(condition.description))"
    } else if let note = take.note {
        text += "  (\(note))"
    }
    return text
}

/// The project's takes, one line each, conditions included.
func listTakes(_ project: Project) {
    if project.manifest.takes.isEmpty { print("no takes yet") }
    for take in project.manifest.takes {
        let condition = project.conditions[take.id]
        var onDisk: Int64?
        if case .live = condition { onDisk = TakeFile.framesOnDisk(project.path + "/" + take.file) }
        print(describe(take, rate: project.manifest.sampleRate, condition: condition, framesOnDisk: onDisk))
    }
    switch project.reference() {
    case .success(let record?): print("reference: \(record.describe(sampleRate: project.manifest.sampleRate)) ('acapella reference remove' removes it)")
    case .success(nil): break
    case .failure(let error): print("reference: \(error.description)")
    }
}

func runTakes(_ arguments: ParsedArguments) throws -> Int32 {
    let action = arguments.positionals.count > 1 ? arguments.positionals[1] : "list"
    func id(_ index: Int) throws -> Int {
        guard arguments.positionals.count > index, let value = Int(arguments.positionals[index]), value > 0 else {
            throw CLIError("takes \(action) needs a take id (see 'acapella takes PROJECT list')")
        }
        return value
    }
    // Check the words before touching the project.
    switch action {
    case "list", "recover", "undo":
        guard arguments.positionals.count <= 2 else { throw CLIError("takes \(action) takes no more arguments") }
    case "activate", "delete":
        guard arguments.positionals.count == 3 else { throw CLIError("takes \(action) needs exactly one take id") }
        _ = try id(2)
    case "nudge":
        guard arguments.positionals.count == 4, let samples = Int64(arguments.positionals[3]), (-48_000...48_000).contains(samples) else {
            throw CLIError("takes nudge needs ID and ±SAMPLES (within ±48000), e.g. 'nudge 3 -12'")
        }
        _ = try id(2)
    case "gain":
        guard arguments.positionals.count == 4, let decibels = Double(arguments.positionals[3]), TakeRecord.gains.contains(decibels) else {
            throw CLIError("takes gain needs ID and ±DB (from -60 to +12), e.g. 'gain 3 -2.5'")
        }
        _ = try id(2)
    case "name":
        guard (3...4).contains(arguments.positionals.count) else { throw CLIError("takes name needs ID and a name (no name, or '', takes it away), e.g. name 3 'the good one'") }
        _ = try id(2)
        if arguments.positionals.count == 4, !arguments.positionals[3].isEmpty, let problem = TakeRecord.nameProblem(arguments.positionals[3]) {
            throw CLIError("takes name: \(problem)")
        }
    default:
        throw CLIError("unknown takes action '\(action)'; use list, activate, nudge, gain, name, delete, undo or recover")
    }
    // Listing only reads (it never repairs, and works while another
    // program records); every other action writes, and waits for no one.
    let project = try openProject(arguments.positionals[0], for: action == "list" ? .read : .write(owner: "acapella takes"), everyBoxsTakes: action == "recover")
    defer { project.close() }
    do {
        switch action {
        case "undo":
            for undone in try project.undoLastTake() { writeError("take \(undone.id) (\(undone.part)) discarded") }
        case "activate":
            let target = try id(2)
            let wasChanged = project.conditions[target] == .scoreChanged
            try project.activate(target)
            if wasChanged { writeError("take \(target) was recorded against an earlier version of the song; it plays again") }
        case "delete":
            try project.discard(try id(2))
        case "nudge":
            try project.nudge(try id(2), by: Int64(arguments.positionals[3]) ?? 0)
        case "gain":
            try project.setGain(try id(2), decibels: Double(arguments.positionals[3]) ?? 0)
        case "name":
            let name = arguments.positionals.count == 4 ? arguments.positionals[3] : ""
            try project.name(try id(2), name.isEmpty ? nil : name)
        default:
            break
        }
    } catch let error as ProjectError {
        throw CLIError(error.description, exitCode: 1)
    }
    listTakes(project)
    return 0
}

/// The device named by `--device`: `sim[:…]`, `alsa[:NAME][@…]`, or by
/// default the first sound card, or the simulated room when there is none
/// (and it says so). `source` names where the words came from.
func openDevice(_ text: String?, source: String = "--device", inputs: Int = 1) throws -> any AudioDevice {
    var choice: DeviceChoice
    // Bad words are usage errors (2); a device that will not open is a failure (1).
    do { choice = try DeviceChoice(parsing: text) } catch { throw CLIError("\(source): \(error.description)") }
    if inputs > 1 { choice = choice.capturing(inputs: inputs) }
    if case .automatic = choice, case .simulated = choice.resolved { writeError("no sound card found: using the simulated room") }
    do { return try choice.open() } catch {
        throw CLIError("\(source): \(error.description)", exitCode: error.kind == .configuration && !(text ?? "").hasPrefix("alsa") ? 2 : 1)
    }
}

func runDevices(_ arguments: ParsedArguments) throws -> Int32 {
    print(DeviceInventory.scan().report)
    return 0
}

func runCalibrate(_ arguments: ParsedArguments) throws -> Int32 {
    let device = try openDevice(arguments.value("--device"))
    var store: CalibrationStore
    do { store = try CalibrationStore(path: arguments.value("--store") ?? CalibrationStore.dataDirectory + "/calibration.json") } catch {
        throw CLIError(error.description, exitCode: 1)
    }
    writeError("calibrating \(device.name): connect the output to the input (a cable, or headphones held to the microphone)")
    let clock = ContinuousClock()
    let started = clock.now
    let result: CalibrationResult
    let stored: RouteCalibration
    do { (result, stored) = try store.calibrate(device, retried: { writeError($0) }) } catch let error as CalibrationError {
        throw CLIError("calibration refused: \(error.description)", exitCode: 1)
    } catch {
        throw CLIError("\(error)", exitCode: 1)
    }
    let elapsed = clock.now - started
    print(String(format: "round trip %.2f frames (%.3f ms) on %@; the device reports %.2f, trim %+.2f frames stored in %@", result.roundTripFrames,
                 result.roundTripFrames * 1000 / Double(device.sampleRate), device.route, stored.reportedFrames, stored.trimFrames, store.path))
    print(String(format: "signal %.0f dB over the background; %d-point FFT; %.2f s", result.clarityDB, result.fftSize, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
    return 0
}

func runMIDILearn(_ arguments: ParsedArguments) throws -> Int32 {
    let word = arguments.positionals[0]
    let target: MIDILearn.Target
    let what: String
    if word == "part-level" || word == "part-pan" {
        guard arguments.positionals.count == 2 else { throw CLIError("\(word) needs a part: its number (1, 2, …) or reference") }
        let part = arguments.positionals[1]
        let whose: MIDIFader.Target
        if part == "reference" {
            whose = .reference
        } else if let number = Int(part), (1...64).contains(number) {
            whose = .part(number)
        } else {
            throw CLIError("\(word) needs a part's number (1 to 64) or reference, not '\(part)'")
        }
        target = .fader(word == "part-level" ? .level : .pan, whose)
        what = "\(whose)'s \(word == "part-level" ? "level" : "pan")"
    } else {
        guard let action = ControlAction(rawValue: word) else {
            throw CLIError("unknown action '\(word)'; actions: \(ControlAction.names), or part-level N, part-pan N")
        }
        guard arguments.positionals.count == 1 else { throw CLIError("\(word) takes no part") }
        target = .action(action)
        what = action.rawValue
    }
    let seconds = try arguments.int("--timeout", default: 30, range: 1...600)
    let path = arguments.value("--config") ?? CalibrationStore.dataDirectory + "/controls.json"
    let learned: MIDILearn.Learned
    do {
        learned = try MIDILearn.learn(target, into: path, seconds: seconds) { ports in
            writeError("press, play or move the control for \(what) (listening on \(ports))")
        }
    } catch {
        throw CLIError(error.description, exitCode: 1)
    }
    print("bound \(learned.event) to \(what) in \(learned.file)")
    return 0
}

func runBox(_ arguments: ParsedArguments) throws -> Int32 {
    var flags = BoxFlags()
    flags.settings = arguments.value("--config")
    flags.song = arguments.value("--song")
    if let part = arguments.value("--part") {
        // A number is checked as one; anything else is a part's name, found in the first song.
        if Int(part) != nil { _ = try arguments.int("--part", default: 1, range: 1...64) }
        guard !part.trimmingCharacters(in: .whitespaces).isEmpty else { throw CLIError("--part expects a part's name or number, like Tenor or 3") }
        flags.part = part
    }
    flags.device = arguments.value("--device")
    flags.project = arguments.value("--project")
    flags.data = arguments.value("--data")
    flags.controls = arguments.value("--controls")
    if let seconds = arguments.value("--seconds") {
        guard let value = Double(seconds), value > 0, value <= 31_536_000 else { throw CLIError("--seconds expects a number of seconds from 0 to 31536000 (a year), not '\(seconds)'") }
        flags.seconds = value
    }
    flags.play = arguments.flags.contains("--play")
    flags.once = arguments.flags.contains("--once")
    flags.web = arguments.value("--web")
    flags.verse = arguments.value("--verse") != nil ? try arguments.int("--verse", default: 1, range: 1...Score.maximumVerses) : nil
    if let parts = arguments.value("--parts") {
        do { flags.together = try PartOnInput.list(parsing: parts) } catch { throw CLIError(error.description, exitCode: 2) }
    }
    let setup: BoxSetup
    do {
        var resolved = try BoxSetup.resolve(flags)
        resolved.options.takeLoading = try takeLoading(arguments)
        setup = resolved
    } catch let error as BoxSetupError {
        throw CLIError(error.description, exitCode: error.usage ? 2 : 1)
    }
    let log = BoxLog()
    for note in setup.notes { log(note) }
    do {
        try Box.run(options: setup.options, controls: setup.controls, openDevice: { (inputs: Int) throws(DeviceError) -> any AudioDevice in try setup.openDevice(inputs: inputs) }, log: log)
    } catch let error as DeviceError {
        throw CLIError("\(setup.deviceSource): \(error.description)", exitCode: 1)
    } catch {
        throw CLIError("\(error)", exitCode: 1)
    }
    return 0
}

/// `acapella session PROJECT [changes]`: the mix and settings the project
/// was last rehearsed with (what the box resumes and `mix` uses); with
/// options, changes them (a writer, refused while the box has the project).
func runSession(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    let changing = ["--part", "--volume", "--pan", "--mute", "--solo", "--takes", "--tempo", "--transpose", "--loop", "--count-in", "--metronome", "--line-grid", "--reset"]
        .contains { arguments.value($0) != nil || arguments.flags.contains($0) }
    func onOff(_ name: String) throws -> Bool? { try arguments.choice(name, as: OnOff.self)?.isOn }
    // The words are checked before the project is touched.
    let volume = try arguments.value("--volume").map { text -> Double in
        guard let value = Double(text), SessionState.volumes.contains(value) else { throw CLIError("--volume expects dB from -60 to +12, not '\(text)'") }
        return value
    }
    let pan = try arguments.value("--pan").map { text -> Double in
        guard let value = Double(text), (-1...1).contains(value) else { throw CLIError("--pan expects -1 (left) to 1 (right), not '\(text)'") }
        return value
    }
    let mute = try onOff("--mute"), solo = try onOff("--solo"), metronome = try onOff("--metronome"), takes = try onOff("--takes")
    if (volume != nil || pan != nil || mute != nil || solo != nil || takes != nil) && arguments.value("--part") == nil {
        throw CLIError("--volume, --pan, --mute, --solo and --takes need --part NAME")
    }
    let tempo = try arguments.tempoPercent(percents: SessionState.tempoPercents)
    let transpose = arguments.value("--transpose") == nil ? nil : try arguments.int("--transpose", default: 0, range: SessionState.transpositions)
    let countIn = arguments.value("--count-in") == nil ? nil : try arguments.int("--count-in", default: 1, range: 0...4)
    let lineGrid = try arguments.value("--line-grid").map { text -> KeyboardLine.Grid in
        guard let grid = KeyboardLine.Grid(rawValue: text) else { throw CLIError("--line-grid expects 8, 16, 8t or 16t, not '\(text)'") }
        return grid
    }
    let loop = try arguments.measures("--loop", offWord: "off")
    let project = try openProject(path, for: changing ? .write(owner: "acapella session") : .read)
    defer { project.close() }
    var (state, problem) = project.sessionState()
    if let problem { writeError("\(path): \(problem)") }
    if changing {
        if arguments.flags.contains("--reset") { state = SessionState() }
        if let name = arguments.value("--part") {
            // The reference recording's level, pan, mute and solo too.
            let names = project.score.parts.map(\.name) + project.audioTracks
            guard let part = names.first(where: { $0.lowercased() == name.lowercased() }) else {
                throw CLIError("no part named '\(name)'; the parts are: \(names.joined(separator: ", "))", exitCode: 1)
            }
            var mix = state.parts[part] ?? SessionState.Part()
            if let volume { mix.volumeDB = volume }
            if let pan { mix.pan = pan }
            if let mute { mix.mute = mute }
            if let solo { mix.solo = solo }
            if let takes {
                guard project.score.parts.contains(where: { $0.name == part }) else {
                    throw CLIError("--takes: the \(part.lowercased()) recording is not takes; --mute it instead", exitCode: 1)
                }
                mix.takes = takes
            }
            state.parts[part] = mix == SessionState.Part() ? nil : mix
        }
        if let tempo { state.tempoPercent = tempo }
        if let transpose { state.transpose = transpose }
        if let countIn { state.countIn = countIn }
        if let lineGrid { state.lineGrid = lineGrid }
        if let metronome { state.metronome = metronome }
        if let loop {
            if let measures = loop {
                let schedule = try? Schedule(score: project.score, options: ScheduleOptions())
                guard schedule?.loopRange(measures: measures) != nil else { throw CLIError("--loop: measures \(measures.lowerBound)-\(measures.upperBound) are not in the song", exitCode: 1) }
                state.loop = [measures.lowerBound, measures.upperBound]
                state.looping = true
            } else {
                state.looping = false
            }
        }
        do { try project.saveSession(state) } catch { throw CLIError(error.description, exitCode: 1) }
    }
    let words = state.describe(partNames: project.score.parts.map(\.name) + [ReferenceRecord.trackName])
    print(words.isEmpty ? "as written: every part at its level and place, tempo 100 %, no transposition" : words)
    print("count-in \(state.countIn), metronome \(state.metronome ? "on" : "off"), verse \(state.verse), loop " + (state.loopMeasures.map { "\($0.lowerBound)-\($0.upperBound) \(state.looping ? "on" : "off")" } ?? "none")
          + (state.lineGrid.map { ", a keyboard line on \($0.words)" } ?? ""))
    return 0
}

/// `acapella web forget`: every paired phone signed out, a new code.
func runWeb(_ arguments: ParsedArguments) throws -> Int32 {
    guard arguments.positionals[0] == "forget" else { throw CLIError("web: unknown action '\(arguments.positionals[0])'; the one action is 'forget'") }
    let data = arguments.value("--data") ?? CalibrationStore.dataDirectory
    guard FileManager.default.fileExists(atPath: data) else { throw CLIError("\(data): no such data directory; nothing to forget", exitCode: 1) }
    do {
        let (phones, code) = try PairingFile.forget(dataDirectory: data)
        print("web: \(phones == 0 ? "no phone was" : phones == 1 ? "1 phone" : "\(phones) phones") signed out; the next start pairs with code \(code)")
        return 0
    } catch let error as PairingFileError {
        throw CLIError(error.description, exitCode: 1)
    }
}

/// `acapella songs [--tag TAG]`: the box's library — the shipped songs and
/// the user's (songs/ in the data directory, MusicXML there imported
/// first, as the box does; songs sent from the web page) — with their tags.
func runSongs(_ arguments: ParsedArguments) throws -> Int32 {
    let data = arguments.value("--data") ?? CalibrationStore.dataDirectory
    let folder = SongLibrary.userFolder(data)
    var failed = false
    if FileManager.default.fileExists(atPath: folder) {
        let arrivals = SongLibrary.importArrivals(in: folder)
        for arrival in arrivals {
            writeError(arrival.message)
            failed = failed || arrival.song == nil
        }
        // Files that failed before stay, their errors beside them.
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() where name.hasSuffix(".error.txt") {
            let source = folder + "/" + String(name.dropLast(".error.txt".count))
            if FileManager.default.fileExists(atPath: source) && !arrivals.contains(where: { $0.source == source }) {
                writeError("\((try? String(contentsOfFile: folder + "/" + name, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "\(source): see \(name)")")
                failed = true
            }
        }
    }
    let wanted = arguments.value("--tag")?.lowercased()
    var shown = 0
    for path in SongLibrary.all(shipped: ShippedFiles.songs, dataDirectory: data) {
        let header = SongHeader.read(path)
        guard wanted == nil || header.tags.contains(where: { $0.lowercased() == wanted }) else { continue }
        let whose = SongLibrary.isUsers(path, dataDirectory: data) ? "yours  " : "shipped"
        print("\(whose)  \(header.title)" + (header.tags.isEmpty ? "" : "  [\(header.tags.joined(separator: ", "))]") + "  \(path)")
        shown += 1
    }
    if shown == 0 { writeError(wanted.map { "no song is tagged '\($0)'" } ?? "no songs") }
    return failed ? 1 : 0
}

/// `--takes stream|memory`: how the takes play (streamed unless told).
func takeLoading(_ arguments: ParsedArguments) throws -> TakeLoading {
    try arguments.choice("--takes", default: TakeLoadingChoice.stream).loading
}
