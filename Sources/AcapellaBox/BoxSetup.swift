public import AcapellaControl
public import AcapellaDevices
public import AcapellaEngrave
public import AcapellaEngravePDF
import AcapellaProject
import AcapellaScore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the command line gave `acapella run` (nil: not given).
public struct BoxFlags: Sendable {
    /// `--config`: the settings file.
    public var settings: String?
    public var song: String?
    /// `--part`: a part's name, or its number from 1.
    public var part: String?
    public var device: String?
    /// `--project`: a project kept elsewhere, rehearsed first.
    public var project: String?
    /// `--data`: the data directory.
    public var data: String?
    /// `--controls`: the controls file.
    public var controls: String?
    public var seconds: Double?
    /// `--play`: start playing at once.
    public var play = false
    /// `--once`: play the song through once, then quit.
    public var once = false
    /// `--verse`: the verse the lyric line follows (1-based).
    public var verse: Int?
    /// `--web PORT|off`: the web page's port, or no page.
    public var web: String?
    /// `--parts`: the recording set (`Soprano=1,Alto=2,…`).
    public var together: [PartOnInput]?

    /// No flags.
    public init() {}
}

/// A problem resolving the box's set-up: one line naming the file and key
/// or the flag; `usage` when the words on the command line were wrong.
public struct BoxSetupError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public var usage: Bool
}

/// The files the program ships (songs, the default settings and controls),
/// found from the executable: a build tree has them a few folders above,
/// an install in `PREFIX/share/acapella` beside `PREFIX/bin`.
public enum ShippedFiles {
    /// The path of a shipped file, if it is there.
    public static func path(_ relative: String, installed: String) -> String? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        var candidates: [String] = [directory.appendingPathComponent("../" + installed).standardized.path]
        for _ in 0..<5 {
            directory = directory.deletingLastPathComponent()
            candidates.append(directory.appendingPathComponent(relative).path)
        }
        candidates.append(FileManager.default.currentDirectoryPath + "/" + relative)
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The song library.
    public static var songs: String? { path("Songs", installed: "share/acapella/songs") }
    /// The default controls.
    public static var controls: String? { path("Config/controls.json", installed: "share/acapella/controls.json") }
    /// The default settings.
    public static var settings: String? { path("Config/acapella.json", installed: "share/acapella/acapella.json") }

    /// Where the music font (Bravura) and its metadata are.
    static var musicFontFolder: String? { path("Fonts/bravura", installed: "share/acapella/fonts/bravura") }
    /// The music font's file (the web page's), without reading its metadata.
    public static var musicFontFile: String? { musicFontFolder.map { $0 + "/Bravura.otf" } }

    /// The music font (Bravura) read with its SMuFL metadata, and the path
    /// of its font file (for PDF and the web page).
    public static func musicFont() throws(EngraveError) -> (font: SMuFLFont, file: String) {
        guard let folder = musicFontFolder else {
            throw EngraveError("the music font is missing (Fonts/bravura beside the program, or share/acapella/fonts/bravura)")
        }
        let font = try SMuFLFont.load(metadata: folder + "/bravura_metadata.json", glyphNames: folder + "/glyphnames.json")
        return (font, folder + "/Bravura.otf")
    }

    /// The text font's faces, by style, and the names the page serves them at.
    public static let textFaces: [(style: TextStyle, file: String)] = [
        (.normal, "GentiumBookPlus-Regular.ttf"), (.italic, "GentiumBookPlus-Italic.ttf"), (.bold, "GentiumBookPlus-Bold.ttf"),
    ]

    /// The text font (Gentium Book Plus, SIL's OFL serif for the languages
    /// choirs sing in: Latin with every diacritic, Greek, Cyrillic) the engraver measures words in and
    /// the SVG and PDF set them in.
    public static func textFontFiles() throws(EngraveError) -> TextFontFiles {
        guard let folder = path("Fonts/gentium", installed: "share/acapella/fonts/gentium") else {
            throw EngraveError("the text font is missing (Fonts/gentium beside the program, or share/acapella/fonts/gentium)")
        }
        return TextFontFiles(family: "Gentium Book Plus", files: Dictionary(uniqueKeysWithValues: textFaces.map { ($0.style, folder + "/" + $0.file) }))
    }

    /// The fonts the web page's score asks for, by their paths on the page:
    /// Bravura and the text font's faces.
    /// Sent from their files, never held (`WebApp.files`).
    public static func webFonts() -> [String: (type: String, path: String)] {
        var fonts: [String: (type: String, path: String)] = [:]
        if let file = musicFontFile, FileManager.default.isReadableFile(atPath: file) { fonts["/bravura.otf"] = ("font/otf", file) }
        let files = (try? textFontFiles())?.files ?? [:]
        for face in textFaces {
            if let path = files[face.style], FileManager.default.isReadableFile(atPath: path) { fonts["/" + face.file] = ("font/ttf", path) }
        }
        return fonts
    }

    /// The engraver with both shipped fonts, and the text font's files.
    public static func engraver() throws(EngraveError) -> (engraver: Engraver, musicFile: String, textFiles: TextFontFiles) {
        let (font, file) = try musicFont()
        let textFiles = try textFontFiles()
        return (Engraver(font: font, text: try TextFont.load(textFiles)), file, textFiles)
    }
}

/// Everything `acapella run` needs, resolved once from the settings file,
/// the command line and the shipped defaults (the command line wins over
/// the file, the file over the defaults).
public struct BoxSetup: Sendable {
    public var options: BoxOptions
    public var controls: ControlConfig
    /// The device, parsed once from its words, and where they came from
    /// ("--device", "/etc/acapella/acapella.json: device").
    public var device: DeviceChoice
    public var deviceSource: String
    /// Lines to log at start.
    public var notes: [String] = []

    /// Where the settings are read from: `--config`, else
    /// `/etc/acapella/acapella.json`, else the shipped defaults.
    public static let systemSettings = "/etc/acapella/acapella.json"
    public static let systemControls = "/etc/acapella/controls.json"

    /// Resolves `flags` against the settings file and the defaults.
    public static func resolve(_ flags: BoxFlags) throws(BoxSetupError) -> BoxSetup {
        func failure(_ text: String) -> BoxSetupError { BoxSetupError(description: text, usage: false) }
        let settingsPath = flags.settings ?? (FileManager.default.fileExists(atPath: systemSettings) ? systemSettings : ShippedFiles.settings)
        var settings = BoxConfig()
        if let settingsPath {
            guard let data = FileManager.default.contents(atPath: settingsPath) else { throw failure("\(settingsPath): cannot read the settings") }
            do { settings = try BoxConfig.parse(data, file: settingsPath) } catch { throw failure(error.description) }
        }
        let fileKey = { (key: String) in "\(settingsPath ?? "settings"): \(key)" }
        // Songs: the library, with --song (or the setting) first or chosen.
        let library = ShippedFiles.songs
        var songs = library.map { folder in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".acasong") }.sorted().map { folder + "/" + $0 } } ?? []
        // The user's songs after the shipped ones: sent from the web page, and
        // dropped into songs/ (MusicXML there imported now, each said).
        let dataDirectory = flags.data ?? settings.dataDirectory ?? CalibrationStore.dataDirectory
        var arrivals: [String] = []
        let userSongs = SongLibrary.userFolder(dataDirectory)
        if FileManager.default.fileExists(atPath: userSongs) { arrivals = SongLibrary.importArrivals(in: userSongs).map(\.message) }
        // A song that would share its takes with another (one file name, or
        // a folder another song's project holds) is not offered, said.
        let users = SongProjects.admissible(SongLibrary.songs(in: SongLibrary.uploadFolder(dataDirectory)) + SongLibrary.songs(in: userSongs),
                                            after: songs, dataDirectory: dataDirectory)
        songs += users.songs
        arrivals += users.refused.map { $0 + "; not in the library" }
        var index = 0
        if let wanted = flags.song ?? settings.song {
            if FileManager.default.fileExists(atPath: wanted) {
                // The library's own song when it is that song's file, a copy
                // of it or the music it was imported from; any other song
                // whose takes would go where a library song's are, refused.
                let key = flags.song != nil ? "--song" : fileKey("song")
                if let same = songs.firstIndex(where: { SongProjects.stem($0) == SongProjects.stem(wanted) }) {
                    let sameSong = FileCopy.sameContents(songs[same], wanted)
                        || ((try? SongLibrary.score(of: songs[same])).flatMap { kept in (try? SongLibrary.score(of: wanted)).map { SongProjects.sameMusic(kept, $0) } } ?? false)
                    if sameSong {
                        index = same
                    } else if flags.song != nil {
                        throw BoxSetupError(description: "\(key): \(SafeText.printable(wanted)): the library's \(SafeText.printable(songs[same])) has the same name "
                                            + "and other music, and the two would share their takes; rename the file", usage: false)
                    } else {
                        arrivals.append("\(key): \(SafeText.printable(wanted)) is not the library's \(SafeText.printable(songs[same])), though it has its name: starting on the first song")
                    }
                } else if let refusal = SongProjects.refusal(ofArriving: wanted, dataDirectory: dataDirectory) {
                    if flags.song != nil { throw BoxSetupError(description: "\(key): \(refusal)", usage: false) }
                    arrivals.append("\(key): \(refusal); starting on the first song")
                } else {
                    songs.insert(wanted, at: 0)
                }
            } else if let found = songs.firstIndex(where: { ($0 as NSString).lastPathComponent.lowercased().hasPrefix(wanted.lowercased()) }) {
                index = found
            } else {
                throw BoxSetupError(description: "\(flags.song != nil ? "--song" : fileKey("song")): no song '\(wanted)' (a path, or the start of a file name in the library)",
                                    usage: flags.song != nil)
            }
        }
        var projectPaths: [String: String] = [:]
        if let project = flags.project {
            let song = project + "/score.acasong"
            guard FileManager.default.fileExists(atPath: project + "/manifest.json") || FileManager.default.fileExists(atPath: song) else {
                throw failure("\(project): not a project (make one with: acapella new \(project) --song SONG)")
            }
            songs.insert(song, at: 0)
            projectPaths[song] = project
            index = 0
        }
        guard !songs.isEmpty else { throw failure("no songs: give --song PATH, or run from the repository (Songs/)") }
        var options = BoxOptions(songs: songs, dataDirectory: dataDirectory)
        options.projectPaths = projectPaths
        options.calibrationStore = options.dataDirectory + "/calibration.json"
        do { options.origin = TakeOrigin(box: try BoxIdentity.current(dataDirectory: options.dataDirectory), singer: settings.singer) } catch { throw failure(error.description) }
        options.powerOffCommand = settings.powerOffCommand
        options.songIndex = index
        if let part = flags.part, Int(part) == nil {
            options.partName = part
        } else {
            options.partIndex = (flags.part.flatMap { Int($0) } ?? settings.part) - 1
        }
        options.partSource = flags.part != nil ? "--part" : fileKey("part")
        options.together = flags.together ?? settings.together.map { PartOnInput(part: $0.key, input: $0.value) }.sorted { $0.input < $1.input }
        options.togetherSource = flags.together != nil ? "--parts" : fileKey("together")
        options.rehearsal = Rehearsal(countIn: settings.countIn, metronome: settings.metronome, verse: flags.verse ?? 1)
        options.usbRoots = settings.usbRoots
        options.confirmations = settings.confirmations
        options.consoleReadout = settings.consoleReadout
        options.lcd = settings.lcdHost.map { LCDAddress(host: $0, port: UInt16(settings.lcdPort)) }
        options.seconds = flags.seconds
        options.autoplay = flags.play || flags.once
        options.playOnceAndQuit = flags.once
        options.webPort = settings.webEnabled ? settings.webPort : nil
        options.webBind = settings.webBind
        switch settings.webGuests {
        case .view: options.webGuests = .view
        case .none: options.webGuests = .none
        }
        options.webName = settings.webName
        if let web = flags.web {
            if web == "off" {
                options.webPort = nil
            } else if let port = Int(web), (1...65_535).contains(port) {
                options.webPort = port
            } else {
                throw BoxSetupError(description: "--web expects a port (1-65535) or off, not '\(web)'", usage: true)
            }
        }
        // Controls: --controls, else the data directory's (midi-learn writes
        // there), else /etc/acapella's, else the shipped defaults.
        let learned = options.dataDirectory + "/controls.json"
        let controlsPath = flags.controls ?? [learned, systemControls].first { FileManager.default.fileExists(atPath: $0) } ?? ShippedFiles.controls
        var controls: ControlConfig
        do {
            if let controlsPath { controls = try ControlConfig.load(controlsPath) } else { controls = try ControlConfig.parse(Data("{}".utf8), file: "(none)") }
        } catch {
            throw failure(error.description)
        }
        if let quantize = settings.quantize { controls.punchQuantize = quantize }
        // The device's words are checked now, naming where they came from.
        let deviceSource = flags.device != nil ? "--device" : fileKey("device")
        var device: DeviceChoice
        do { device = try DeviceChoice(parsing: flags.device ?? settings.device) } catch {
            throw BoxSetupError(description: "\(deviceSource): \(error.description)", usage: flags.device != nil)
        }
        // No card for the device: as a service (no terminal, no end) the box
        // waits for it and takes it when it is plugged in — the simulated
        // room is never a stand-in there. In a terminal, or a run with an
        // end (--seconds, --once), nobody having asked for a device, the
        // room in real time, said as a demo.
        let service = isatty(STDIN_FILENO) == 0 && flags.seconds == nil && !flags.once
        let asksForTheRoom = if case .simulated = device { true } else { false }
        options.waitForSoundCard = service && !asksForTheRoom
        if device == .automatic && !service && DeviceInventory.scan().cards.isEmpty { device = .simulated(SimulatedRoom.Options.realTime) }
        var setup = BoxSetup(options: options, controls: controls, device: device, deviceSource: deviceSource)
        setup.notes += arrivals
        if isatty(STDIN_FILENO) == 0 && flags.seconds == nil && !flags.once {
            setup.notes.append("no terminal: running until stopped (SIGTERM), driven by MIDI and the foot switch")
        }
        return setup
    }

    /// Opens the device the set-up names (a fresh one each call: the box
    /// opens one per session and again when a lost one returns), with an
    /// input for each part of the session's recording set (`inputs`, the
    /// highest input it names; a card with fewer is refused when the
    /// session rigs, and a set chosen on the page is checked first).
    public func openDevice(inputs: Int) throws(DeviceError) -> any AudioDevice {
        // Waiting for a card, the room is never a stand-in for it.
        if options.waitForSoundCard && device == .automatic {
            guard !DeviceInventory.scan().cards.isEmpty else { throw DeviceError(.lost, "no sound card") }
            var card = ALSADevice.Options()
            card.inputs = inputs
            return try DeviceChoice.alsa(card).open()
        }
        return try device.capturing(inputs: inputs).open()
    }
}

extension ControlConfig {
    /// Reads and parses a file (the parsing, pure, is `parse`).
    public static func load(_ path: String) throws(ControlConfigError) -> ControlConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ControlConfigError(description: "\(path): cannot read the file (\(FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"))")
        }
        return try parse(data, file: path)
    }
}
