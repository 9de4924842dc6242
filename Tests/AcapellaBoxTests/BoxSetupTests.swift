@testable import AcapellaBox
import AcapellaDevices
import AcapellaProject
import Foundation
import Testing

/// `acapella run`'s set-up resolved from the settings file, the command
/// line and the shipped defaults, without starting a box: each wrong
/// setting refused in one line naming the file and key (or the flag), and
/// the settings handed on as one value.
@Suite struct BoxSetupTests {
    /// Flags with a data directory and a settings file of their own.
    func flags(settings: String) throws -> (BoxFlags, folder: String) {
        let folder = NSTemporaryDirectory() + "box-setup-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(settings.utf8).write(to: URL(fileURLWithPath: folder + "/settings.json"))
        var flags = BoxFlags()
        flags.settings = folder + "/settings.json"
        flags.data = folder + "/data"
        flags.seconds = 1
        return (flags, folder)
    }

    func refusal(_ flags: BoxFlags) -> BoxSetupError? {
        do {
            _ = try BoxSetup.resolve(flags)
            return nil
        } catch {
            return error
        }
    }

    /// `--song PATH` naming a song whose takes would go where a library
    /// song's are: the library's own file (or a copy) is that song; any
    /// other song of that name is refused, said, before anything is made.
    @Test func aSongGivenByPathNeverTakesALibrarySongsProject() throws {
        var (flags, folder) = try flags(settings: "{}")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let library = try #require(ShippedFiles.songs)
        flags.song = library + "/amazing-grace.acasong"
        let own = try BoxSetup.resolve(flags)
        #expect(own.options.songs[own.options.songIndex] == library + "/amazing-grace.acasong")
        #expect(own.options.songs.filter { ($0 as NSString).lastPathComponent == "amazing-grace.acasong" }.count == 1)
        let copy = folder + "/amazing-grace.acasong"
        try FileManager.default.copyItem(atPath: library + "/amazing-grace.acasong", toPath: copy)
        flags.song = copy
        let copied = try BoxSetup.resolve(flags)
        #expect(copied.options.songs[copied.options.songIndex] == library + "/amazing-grace.acasong")
        try Data(try SongIdentityTests.rowCalled("Not Amazing Grace").utf8).write(to: URL(fileURLWithPath: copy))
        #expect(refusal(flags)?.description == "--song: \(copy): the library's \(library)/amazing-grace.acasong has the same name and other music, and the two would share their takes; rename the file")
        // The MusicXML a library song was imported from is that song.
        let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/data/musicxml/liliuokalani_aloha_oe.mxl").path
        try FileManager.default.createDirectory(atPath: folder + "/data/songs", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: shared, toPath: folder + "/data/songs/aloha.mxl")
        try FileManager.default.copyItem(atPath: shared, toPath: folder + "/aloha.mxl")
        flags.song = folder + "/aloha.mxl"
        let imported = try BoxSetup.resolve(flags)
        #expect(imported.options.songs[imported.options.songIndex] == folder + "/data/songs/aloha.acasong", "\(imported.options.songs)")
        // The setting naming another song of a library song's name: said, and the box starts on the first song.
        let settings = folder + "/named.json"
        try Data(#"{ "song": "\#(copy)" }"#.utf8).write(to: URL(fileURLWithPath: settings))
        var named = flags
        named.song = nil
        named.settings = settings
        let started = try BoxSetup.resolve(named)
        #expect(started.options.songIndex == 0 && started.notes.contains { $0.hasPrefix("\(settings): song: \(copy) is not the library's") }, "\(started.notes)")
    }

    @Test func theSettingsAreHandedOnAsOneValue() throws {
        var (flags, folder) = try flags(settings: #"{ "countIn": 3, "metronome": true, "device": "sim:latency=240" }"#)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        flags.verse = 2
        let setup = try BoxSetup.resolve(flags)
        #expect(setup.options.rehearsal == Rehearsal(countIn: 3, metronome: true, verse: 2))
        #expect(setup.deviceSource == folder + "/settings.json: device")
        guard case .simulated(let room) = setup.device else {
            Issue.record("the device is \(setup.device)")
            return
        }
        #expect(room.latencyFrames == 240)
        #expect(!setup.options.songs.isEmpty && setup.options.dataDirectory == folder + "/data")
    }

    @Test(arguments: [
        (#"{ "countIn": 9 }"#, "settings.json: countIn: expected a whole number from 0 to 4"),
        (#"{ "device": "sim:latency=abc" }"#, "settings.json: device: device option 'latency=abc' is not NAME=NUMBER"),
        (#"{ "web": { "name": "my box" } }"#, "settings.json: web.name: expected a host name"),
        (#"{ "usb": 3 }"#, "settings.json: usb: expected true, false or a list of folders"),
        (#"{ "song": "nosuchsong" }"#, "settings.json: song: no song 'nosuchsong'"),
    ])
    func aWrongSettingIsRefusedNamingTheFileAndKey(settings: String, said: String) throws {
        let (flags, folder) = try flags(settings: settings)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let error = try #require(refusal(flags))
        #expect(error.description.hasPrefix(folder + "/") && error.description.contains(said), "\(error.description)")
        #expect(!error.usage && !error.description.contains("\n"))
    }

    @Test func aWrongFlagIsAUsageError() throws {
        var (flags, folder) = try flags(settings: "{}")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        flags.web = "99999"
        #expect(refusal(flags)?.description == "--web expects a port (1-65535) or off, not '99999'" && refusal(flags)?.usage == true)
        flags.web = nil
        flags.song = "nosuchsong"
        #expect(refusal(flags)?.description.hasPrefix("--song: no song 'nosuchsong'") == true && refusal(flags)?.usage == true)
        flags.song = nil
        flags.device = "frob"
        #expect(refusal(flags)?.description.hasPrefix("--device: unknown device 'frob'") == true, "\(String(describing: refusal(flags)))")
        flags.device = nil
        flags.project = folder + "/nothing.acaproj"
        #expect(refusal(flags)?.description.hasPrefix(folder + "/nothing.acaproj: not a project") == true)
    }

    @Test func aWrongControlsFileIsRefusedNamingIt() throws {
        var (flags, folder) = try flags(settings: "{}")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        flags.controls = folder + "/none.json"
        #expect(refusal(flags)?.description == folder + "/none.json: cannot read the file (no such file)")
        let twice = #"{"midi": {"bindings": [{"event":"note","note":36,"action":"stop"},{"event":"note","note":36,"channel":10,"action":"record"}]}}"#
        try Data(twice.utf8).write(to: URL(fileURLWithPath: folder + "/twice.json"))
        flags.controls = folder + "/twice.json"
        #expect(refusal(flags)?.description == folder + "/twice.json: midi.bindings[1]: note 36 is bound to stop by midi.bindings[0] already; one event, one action")
    }
}
