@testable import AcapellaBox
import AcapellaDevices
import AcapellaProject
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A project as a hand editor, a bad copy or a crash can leave it: one of
/// 70 damages to the manifest, a sidecar, a take's audio or the song, each
/// applied to a fresh copy of the same three-take project. Every case
/// asserts exactly what the project holds after a writer opens it (which
/// takes, their state and whether each can play), the line the opening
/// reports, that every take's audio the damage did not touch is still
/// sample for sample what was recorded, that a reader opening it first
/// changes not one byte, and that a second writer's open finds it settled.
@Suite struct ProjectDamageTests {
    /// The fixture: Alto full (take 1), Soprano punch over measures 2–3
    /// (take 2), Bass full (take 3), all kept and playing.
    static let fixture: String? = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-damage-fixture-\(getpid()).acaproj").path
        guard let project = try? Project.create(at: path, songText: try songText("amazing-grace.acasong")) else { return nil }
        for (part, measures) in [("Alto", nil), ("Soprano", 2...3), ("Bass", nil)] as [(String, ClosedRange<Int>?)] {
            var request = RecordingRequest(part: part)
            request.measures = measures
            request.singer = quietSinger()
            guard let room = try? quietRoom(), (try? RecordingSession.record(project: project, request: request, device: room)) != nil else { return nil }
        }
        project.close()
        return path
    }()

    static let base = ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* ok"]

    /// One damage and what must come of it.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        /// Damages the copy at the path given.
        var damage: @Sendable (String) throws -> Void
        /// `ID PART STATE[*=active] CONDITION` for every take, by id.
        var takes: [String]
        /// A line the writer's report must contain ("" — an empty report).
        var report: String
        /// Take files whose audio the damage itself changed.
        var damagedAudio: Set<String> = []
        /// The writer's open fails with this message instead.
        var openError: String?
        var testDescription: String { name }
    }

    // MARK: The table

    static let cases: [Case] = manifestCases + fieldCases + sidecarCases + audioCases + songCases + leftoverCases

    static let manifestCases: [Case] = [
        Case(name: "manifest truncated", damage: { try truncate("\($0)/manifest.json", keeping: 0.5) }, takes: base,
             report: "manifest.json: not valid JSON (truncated or damaged); rebuilt from the take files"),
        Case(name: "manifest cut to one byte", damage: { try truncate("\($0)/manifest.json", keeping: 0) }, takes: base,
             report: "manifest.json: not valid JSON (truncated or damaged); rebuilt from the take files"),
        Case(name: "manifest empty", damage: { try Data().write(to: url("\($0)/manifest.json")) }, takes: base,
             report: "manifest.json: not valid JSON (truncated or damaged); rebuilt"),
        Case(name: "manifest garbage", damage: { try Data((0..<700).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(to: url("\($0)/manifest.json")) },
             takes: base, report: "manifest.json: not valid JSON (truncated or damaged); rebuilt"),
        Case(name: "manifest a list", damage: { try Data("[1, 2]".utf8).write(to: url("\($0)/manifest.json")) }, takes: base,
             report: "manifest.json: not a JSON object with format and version; rebuilt"),
        Case(name: "manifest a directory", damage: { try FileManager.default.removeItem(atPath: "\($0)/manifest.json"); try FileManager.default.createDirectory(atPath: "\($0)/manifest.json", withIntermediateDirectories: false) },
             takes: base, report: "manifest.json: cannot be read; rebuilt"),
        Case(name: "manifest missing", damage: { try FileManager.default.removeItem(atPath: "\($0)/manifest.json") }, takes: base,
             report: "manifest.json: missing; rebuilt from the take files"),
        Case(name: "another format", damage: { try editManifest($0) { $0["format"] = "wavpack" } }, takes: base,
             report: "manifest.json: not an acaproj manifest; rebuilt"),
        Case(name: "a future version", damage: { try editManifest($0) { $0["version"] = 99 } }, takes: base,
             report: "manifest.json: schema version 99, this build reads 1; rebuilt"),
        Case(name: "no version", damage: { try editManifest($0) { $0["version"] = nil } }, takes: base,
             report: "manifest.json: schema version missing, this build reads 1; rebuilt"),
        Case(name: "sample rate 0", damage: { try editManifest($0) { $0["sampleRate"] = 0 } }, takes: base,
             report: "manifest.json: sampleRate: 0 is outside 8000…384000; rebuilt"),
        Case(name: "sample rate as text", damage: { try editManifest($0) { $0["sampleRate"] = "48000" } }, takes: base,
             report: "manifest.json: sampleRate: expected a whole number; rebuilt"),
        Case(name: "another song file", damage: { try editManifest($0) { $0["song"] = "../other.acasong" } }, takes: base,
             report: "manifest.json: song: '../other.acasong' is not score.acasong; rebuilt"),
        Case(name: "takes not a list", damage: { try editManifest($0) { $0["takes"] = "none" } }, takes: base,
             report: "manifest.json: takes: expected a list; rebuilt"),
        Case(name: "nextTakeID 0", damage: { try editManifest($0) { $0["nextTakeID"] = 0 } }, takes: base,
             report: "manifest.json: nextTakeID: 0 is outside 1…1000000000; the next take is 4"),
        Case(name: "nextTakeID below a take", damage: { try editManifest($0) { $0["nextTakeID"] = 2 } }, takes: base,
             report: "manifest.json: nextTakeID: 2 is not above take 3's id; the next take is 4"),
        Case(name: "nextTakeID at Int.max", damage: { try editManifest($0) { $0["nextTakeID"] = Int.max } }, takes: base,
             report: "manifest.json: nextTakeID: 9223372036854775807 is outside 1…1000000000; the next take is 4"),
        Case(name: "nextTakeID negative", damage: { try editManifest($0) { $0["nextTakeID"] = -1 } }, takes: base,
             report: "manifest.json: nextTakeID: -1 is outside 1…1000000000; the next take is 4"),
        Case(name: "nextTakeID beyond Int64", damage: { try replaceInManifest($0, "\"nextTakeID\" : 4", "\"nextTakeID\" : 1e30") }, takes: base,
             report: "manifest.json: nextTakeID: 1e+30 is out of range; rebuilt"),
        Case(name: "an unknown key (a newer build's)", damage: { try editTake($0, 0) { $0["mood"] = "happy" } }, takes: base, report: ""),
    ]

    static let fieldCases: [Case] = [
        Case(name: "id as text", damage: { try editTake($0, 0) { $0["id"] = "one" } }, takes: base, report: "manifest.json: takes[0].id: expected a whole number; rebuilt"),
        Case(name: "id 0", damage: { try editTake($0, 0) { $0["id"] = 0 } }, takes: ["0 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"],
             report: "manifest.json: takes[0].id: 0 is outside 1…999999999; take 0 is left out until that is put right"),
        Case(name: "id negative", damage: { try editTake($0, 0) { $0["id"] = -5 } }, takes: ["-5 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"],
             report: "manifest.json: takes[0].id: -5 is outside 1…999999999"),
        Case(name: "id at Int.max", damage: { try editTake($0, 0) { $0["id"] = Int.max } }, takes: ["2 Soprano kept* ok", "3 Bass kept* ok", "9223372036854775807 Alto kept* unusable"],
             report: "manifest.json: takes[0].id: 9223372036854775807 is outside 1…999999999"),
        // The take recorded first keeps the number; the other is numbered on, past every number given.
        Case(name: "two takes with one id", damage: { try editTake($0, 1) { $0["id"] = 1 } }, takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* ok"],
             report: "manifest.json: takes[1].id: take 1 is also takes[0] (takes/alto-1.wav), recorded first; this take (takes/soprano-2.wav) is take 2"),
        Case(name: "two takes with one file", damage: { try editTake($0, 2) { $0["file"] = "takes/alto-1.wav" } },
             takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* unusable", "4 Bass kept* ok"],
             report: "manifest.json: takes[2].file: takes/alto-1.wav belongs to takes[0] too; left out"),
        Case(name: "state misspelt", damage: { try editTake($0, 0) { $0["state"] = "keptt" } }, takes: base,
             report: "manifest.json: takes[0].state: 'keptt' is not one of recording, kept, recovered, discarded; rebuilt"),
        Case(name: "state missing", damage: { try editTake($0, 0) { $0["state"] = nil } }, takes: base, report: "manifest.json: takes[0].state: missing; rebuilt"),
        Case(name: "a part the song lacks", damage: { try editTake($0, 0) { $0["part"] = "Altoo" } }, takes: ["1 Altoo kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"],
             report: "manifest.json: takes[0].part: 'Altoo' is not a part of the song (its parts: Soprano, Alto, Tenor, Bass)"),
        Case(name: "an empty part", damage: { try editTake($0, 0) { $0["part"] = "" } }, takes: ["1  kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"],
             report: "manifest.json: takes[0].part: '' is not a part of the song"),
        Case(name: "a file outside the project", damage: { try editTake($0, 0) { $0["file"] = "../../../etc/passwd" } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok", "4 Alto kept* ok"],
             report: "manifest.json: takes[0].file: '../../../etc/passwd' is not a take file (takes/NAME.wav)"),
        Case(name: "an absolute file", damage: { try editTake($0, 0) { $0["file"] = "/etc/passwd" } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok", "4 Alto kept* ok"], report: "takes[0].file: '/etc/passwd' is not a take file"),
        Case(name: "a file of another kind", damage: { try editTake($0, 0) { $0["file"] = "takes/alto-1.mp3" } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok", "4 Alto kept* ok"], report: "takes[0].file: 'takes/alto-1.mp3' is not a take file"),
        Case(name: "a file with a newline", damage: { try editTake($0, 2) { $0["file"] = "takes/bass\n3.wav" } },
             takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* unusable", "4 Bass kept* ok"], report: "takes[2].file: 'takes/bass\\n3.wav' is not a take file"),
        Case(name: "offset at Int64.max", damage: { try editTake($0, 0) { $0["alignmentOffsetSamples"] = Int64.max } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].alignmentOffsetSamples: 9223372036854775807 is outside ±1099511627776"),
        Case(name: "offset at Int64.min", damage: { try editTake($0, 0) { $0["alignmentOffsetSamples"] = Int64.min } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].alignmentOffsetSamples: -9223372036854775808 is outside"),
        Case(name: "nudge at Int64.min", damage: { try editTake($0, 0) { $0["nudgeSamples"] = Int64.min } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].nudgeSamples: -9223372036854775808 is outside ±1099511627776"),
        Case(name: "nudge of 2^41", damage: { try editTake($0, 0) { $0["nudgeSamples"] = Int64(1) << 41 } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].nudgeSamples: 2199023255552 is outside"),
        Case(name: "negative frames", damage: { try editTake($0, 2) { $0["frames"] = -1 } },
             takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* unusable"], report: "takes[2].frames: -1 is outside 0…1099511627776"),
        Case(name: "a backwards range", damage: { try editTake($0, 1) { $0["range"] = [500_000, 100] } },
             takes: ["1 Alto kept* ok", "2 Soprano kept* unusable", "3 Bass kept* ok"], report: "takes[1].range: [500000, 100] is not a span of song samples"),
        Case(name: "a range of one number", damage: { try editTake($0, 1) { $0["range"] = [5] } }, takes: base,
             report: "manifest.json: takes[1].range: expected [start, end], two sample numbers; rebuilt"),
        Case(name: "a range to Int64.max", damage: { try editTake($0, 1) { $0["range"] = [0, Int64.max] } },
             takes: ["1 Alto kept* ok", "2 Soprano kept* unusable", "3 Bass kept* ok"], report: "takes[1].range: [0, 9223372036854775807] is not a span"),
        Case(name: "a backwards dropout", damage: { try editTake($0, 0) { $0["dropouts"] = [[3, 1]] } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].dropouts[0]: [3, 1] is not a span of song samples"),
        Case(name: "a dropout of one number", damage: { try editTake($0, 0) { $0["dropouts"] = [[1]] } }, takes: base,
             report: "manifest.json: takes[0].dropouts[0]: expected [start, end], two sample numbers; rebuilt"),
        Case(name: "tempo as words", damage: { try editTake($0, 0) { $0["tempoScale"] = "fast" } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].tempoScale: 'fast' is not a multiplier from 1/4 to 4"),
        Case(name: "tempo 0", damage: { try editTake($0, 0) { $0["tempoScale"] = "0" } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].tempoScale: '0' is not a multiplier"),
        Case(name: "tempo over zero", damage: { try editTake($0, 0) { $0["tempoScale"] = "1/0" } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].tempoScale: '1/0' is not a multiplier"),
        Case(name: "transposed by 99", damage: { try editTake($0, 0) { $0["transpose"] = 99 } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].transpose: 99 is outside −24…24"),
        Case(name: "a take at 44.1 kHz", damage: { try editTake($0, 0) { $0["sampleRate"] = 44_100 } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].sampleRate: recorded at 44100 Hz, the project runs at 48000 Hz"),
        Case(name: "a take at -1 Hz", damage: { try editTake($0, 0) { $0["sampleRate"] = -1 } },
             takes: ["1 Alto kept* unusable", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes[0].sampleRate: -1 is outside 8000…384000"),
        Case(name: "active as text", damage: { try editTake($0, 0) { $0["active"] = "yes" } }, takes: base,
             report: "manifest.json: takes[0].active: expected true or false; rebuilt"),
        Case(name: "a note as a number", damage: { try editTake($0, 0) { $0["note"] = 5 } }, takes: base,
             report: "manifest.json: takes[0].note: expected a string; rebuilt"),
    ]

    static let sidecarCases: [Case] = [
        Case(name: "a sidecar deleted", damage: { try FileManager.default.removeItem(atPath: "\($0)/takes/soprano-2.json") }, takes: base,
             report: "takes/soprano-2.json: missing; rewritten from the manifest"),
        Case(name: "a sidecar garbled", damage: { try Data("{\"id\": ".utf8).write(to: url("\($0)/takes/soprano-2.json")) }, takes: base,
             report: "takes/soprano-2.json: damaged; rewritten from the manifest"),
        Case(name: "a sidecar out of date", damage: { try editSidecar("\($0)/takes/soprano-2.json") { $0["nudgeSamples"] = 40 } }, takes: base,
             report: "takes/soprano-2.json: out of date; rewritten from the manifest"),
        Case(name: "manifest and a sidecar lost", damage: {
            try FileManager.default.removeItem(atPath: "\($0)/manifest.json")
            try Data("garbage".utf8).write(to: url("\($0)/takes/soprano-2.json"))
        }, takes: ["1 Alto kept* ok", "2 Soprano recovered ok", "3 Bass kept* ok"],
             report: "takes/soprano-2.json: not valid JSON (truncated or damaged); the take is added as take 2 (Soprano) with its alignment unknown"),
        Case(name: "manifest lost, a sidecar impossible", damage: {
            try FileManager.default.removeItem(atPath: "\($0)/manifest.json")
            try editSidecar("\($0)/takes/alto-1.json") { $0["nudgeSamples"] = Int64.min }
        }, takes: ["1 Alto recovered ok", "2 Soprano kept* ok", "3 Bass kept* ok"],
             report: "takes/alto-1.json: nudgeSamples: -9223372036854775808 is outside ±1099511627776; the take is added as take 1 (Alto) with its alignment unknown"),
        Case(name: "manifest and every sidecar lost", damage: {
            try FileManager.default.removeItem(atPath: "\($0)/manifest.json")
            for name in ["alto-1", "soprano-2", "bass-3"] { try FileManager.default.removeItem(atPath: "\($0)/takes/\(name).json") }
        }, takes: ["1 Alto recovered ok", "2 Soprano recovered ok", "3 Bass recovered ok"],
             report: "takes/alto-1.wav: a take file with no record; added as take 1 (Alto), alignment unknown"),
    ]

    static let audioCases: [Case] = [
        Case(name: "audio deleted", damage: { try FileManager.default.removeItem(atPath: "\($0)/takes/bass-3.wav") },
             takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* unreadable"], report: "take 3 (Bass): unreadable: its audio file is missing; left out",
             damagedAudio: ["takes/bass-3.wav"]),
        Case(name: "audio emptied", damage: { try Data().write(to: url("\($0)/takes/bass-3.wav")) },
             takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* unreadable"], report: "take 3 (Bass): unreadable: its audio file is empty; left out",
             damagedAudio: ["takes/bass-3.wav"]),
        Case(name: "audio garbage", damage: { try Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: url("\($0)/takes/bass-3.wav")) },
             takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* unreadable"], report: "take 3 (Bass): unreadable: not audio libsndfile can read",
             damagedAudio: ["takes/bass-3.wav"]),
        Case(name: "audio at 44.1 kHz", damage: { try writeWAV("\($0)/takes/bass-3.wav", rate: 44_100, channels: 1, frames: 4_410) },
             takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* unreadable"], report: "take 3 (Bass): unreadable: recorded at 44100 Hz, the project runs at 48000 Hz",
             damagedAudio: ["takes/bass-3.wav"]),
        Case(name: "audio in stereo", damage: { try writeWAV("\($0)/takes/bass-3.wav", rate: 48_000, channels: 2, frames: 4_800) },
             takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* unreadable"], report: "take 3 (Bass): unreadable: 2 channels, a take has 1",
             damagedAudio: ["takes/bass-3.wav"]),
        Case(name: "audio with a header only", damage: { try writeWAV("\($0)/takes/bass-3.wav", rate: 48_000, channels: 1, frames: 0) },
             takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* unreadable"], report: "take 3 (Bass): unreadable: it holds no audio",
             damagedAudio: ["takes/bass-3.wav"]),
        Case(name: "audio cut short", damage: { try truncate("\($0)/takes/bass-3.wav", keeping: 0.5) }, takes: base,
             report: "take 3 (Bass): its file holds 20.0 s of the 40.0 s recorded (cut short); it plays what is there",
             damagedAudio: ["takes/bass-3.wav"]),
        Case(name: "a take left recording by a crash", damage: {
            try setDataSize("\($0)/takes/alto-1.wav", 0)
            try editTake($0, 0) { $0["state"] = "recording"; $0["active"] = false }
        }, takes: ["1 Alto recovered* ok", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes/alto-1.wav: take 1 (Alto) recovered after an interruption:"),
        Case(name: "a crash in the middle of a frame", damage: {
            try setDataSize("\($0)/takes/alto-1.wav", 4_000)
            let handle = try FileHandle(forWritingTo: url("\($0)/takes/alto-1.wav"))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data([1, 2]))
            try handle.close()
            try editTake($0, 0) { $0["state"] = "recording"; $0["active"] = false }
        }, takes: ["1 Alto recovered* ok", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "take 1 (Alto) recovered after an interruption:"),
        Case(name: "a crash before any audio", damage: {
            try FileManager.default.removeItem(atPath: "\($0)/takes/alto-1.wav")
            try editTake($0, 0) { $0["state"] = "recording"; $0["active"] = false }
        }, takes: ["1 Alto discarded ok", "2 Soprano kept* ok", "3 Bass kept* ok"], report: "takes/alto-1.wav: take 1 (Alto) was interrupted before any audio was written",
             damagedAudio: ["takes/alto-1.wav"]),
        Case(name: "a recording take pointing outside", damage: {
            try editTake($0, 0) { $0["state"] = "recording"; $0["file"] = "../outside.wav" }
        }, takes: ["1 Alto recording* unusable", "2 Soprano kept* ok", "3 Bass kept* ok", "4 Alto kept* ok"], report: "takes[0].file: '../outside.wav' is not a take file"),
        Case(name: "a stray take file", damage: { try FileManager.default.copyItem(atPath: "\($0)/takes/alto-1.wav", toPath: "\($0)/takes/tenor-9.wav") },
             takes: ["1 Alto kept* ok", "2 Soprano kept* ok", "3 Bass kept* ok", "9 Tenor recovered ok"],
             report: "takes/tenor-9.wav: a take file with no record; added as take 9 (Tenor), alignment unknown"),
        Case(name: "a stray take with its sidecar", damage: {
            try FileManager.default.copyItem(atPath: "\($0)/takes/alto-1.wav", toPath: "\($0)/takes/alto-7.wav")
            try FileManager.default.copyItem(atPath: "\($0)/takes/alto-1.json", toPath: "\($0)/takes/alto-7.json")
            try editSidecar("\($0)/takes/alto-7.json") { $0["id"] = 7; $0["file"] = "takes/alto-7.wav" }
        }, takes: ["1 Alto kept ok", "2 Soprano kept* ok", "3 Bass kept* ok", "7 Alto kept* ok"],
             report: "takes/alto-7.wav: take 7 (Alto) was missing from the manifest; restored from its sidecar"),
    ]

    static let songCases: [Case] = [
        Case(name: "the song's notes changed", damage: { try replaceInSong($0, "part Alto [treble]\n", "part Alto [treble]\n", notesOf: "Alto") },
             takes: ["1 Alto kept* score changed", "2 Soprano kept* ok", "3 Bass kept* ok"],
             report: "take 1 (Alto): score changed since it was recorded; activate it to play it again; left out"),
        Case(name: "the song's title changed", damage: { try replaceInSong($0, "title: Amazing Grace", "title: Amazing Grace (new words)") }, takes: base, report: ""),
        Case(name: "the song's tempo changed", damage: { try replaceInSong($0, "tempo: 72", "tempo: 80") },
             takes: ["1 Alto kept* score changed", "2 Soprano kept* score changed", "3 Bass kept* score changed"], report: "take 2 (Soprano): score changed"),
        Case(name: "the song broken", damage: { try replaceInSong($0, "time: 3/4", "time: 3/") }, takes: [], report: "",
             openError: "/score.acasong:8:7: error: expected a time signature like 4/4, 3/4 or 6/8, found '3/'"),
        Case(name: "the song missing", damage: { try FileManager.default.removeItem(atPath: "\($0)/score.acasong") }, takes: [], report: "",
             openError: "/score.acasong: cannot read the song (missing)"),
    ]

    static let leftoverCases: [Case] = [
        Case(name: "a lock file with junk", damage: { try Data("\u{7}\u{0}junk\n-4\n".utf8).write(to: url("\($0)/.lock")) }, takes: base, report: ""),
        Case(name: "a temporary file from a crash", damage: { try Data("{".utf8).write(to: url("\($0)/.manifest.json.4242.tmp")) }, takes: base, report: ""),
        Case(name: "an old repair copy", damage: { try FileManager.default.copyItem(atPath: "\($0)/takes/alto-1.wav", toPath: "\($0)/takes/alto-1.wav.repair.wav") }, takes: base, report: ""),
        Case(name: "the reserve gone", damage: { try FileManager.default.removeItem(atPath: "\($0)/.reserve") }, takes: base, report: ""),
    ]

    // MARK: The check

    @Test(arguments: cases)
    func damageLosesNothing(_ damage: Case) throws {
        let fixture = try #require(Self.fixture, "the fixture could not be recorded")
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-damage-\(UUID().uuidString).acaproj").path
        try FileManager.default.copyItem(atPath: fixture, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let outside = (copy as NSString).deletingLastPathComponent + "/outside.wav"
        let original = try Self.audio(of: fixture)
        try damage.damage(copy)

        // A reader changes nothing, whatever it finds.
        let before = try Self.snapshot(copy)
        let readerResult = Result { try Project.open(copy, for: .read) }
        #expect(try Self.snapshot(copy) == before, "a reader changed the project")
        if let expected = damage.openError {
            #expect(throws: ProjectError.self) { try readerResult.get() }
            do {
                _ = try Project.open(copy, for: .write(owner: "test"))
                Issue.record("opened despite: \(expected)")
            } catch {
                #expect(error.description.hasPrefix(copy) && error.description.contains(expected), "\(error.description)")
            }
            return
        }
        let (reader, _) = try readerResult.get()
        reader.close()

        let (project, report) = try Project.open(copy, for: .write(owner: "test"))
        #expect(Self.describe(project) == damage.takes, "\(report)")
        if damage.report.isEmpty {
            #expect(report.isEmpty, "\(report)")
        } else {
            #expect(report.contains { $0.contains(damage.report) }, "\(report)")
        }
        #expect(!report.contains { $0.contains("\n") })
        // Every recorded sample the damage did not touch is still there.
        for (file, samples) in original where !damage.damagedAudio.contains(file) {
            let now = try AudioFile.readMono(copy + "/" + file).samples
            let same = now == samples  // (compared here: a failing #expect would diff every sample)
            #expect(same, "\(file): \(now.count) samples, \(samples.count) recorded")
        }
        #expect(!FileManager.default.fileExists(atPath: outside), "a file outside the project was made")
        #expect(!((try? FileManager.default.contentsOfDirectory(atPath: copy + "/takes")) ?? []).contains { $0.hasSuffix(".tmp") || $0.hasSuffix(".repair.wav") && !$0.hasPrefix("alto-1.wav") })
        // The mix leaves out exactly the takes that cannot play.
        let (_, leftOut) = project.activeTakes(for: .init())
        #expect(Set(leftOut.map(\.take.id)) == Set(project.manifest.takes.filter { $0.active && project.conditions[$0.id] != nil }.map(\.id)))
        let settled = Self.describe(project)
        project.close()

        // Settled: a second writer finds the same takes, and nothing more to repair.
        let (again, secondReport) = try Project.open(copy, for: .write(owner: "test"))
        #expect(Self.describe(again) == settled)
        #expect(!secondReport.contains { $0.contains("rebuilt") || $0.contains("recovered after") || $0.contains("rewritten") || $0.contains("missing from the manifest") },
                "\(secondReport)")
        again.close()
    }

    /// A take's audio in the fixture (a project's own copy when given).
    static func audio(of project: String) throws -> [String: [Float]] {
        var audio: [String: [Float]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: project + "/takes") where name.hasSuffix(".wav") {
            audio["takes/" + name] = try AudioFile.readMono(project + "/takes/" + name).samples
        }
        return audio
    }

    /// Every file of a project and its bytes.
    static func snapshot(_ project: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: project)
        while let name = enumerator?.nextObject() as? String {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: project + "/" + name, isDirectory: &isFolder)
            files[name] = isFolder.boolValue ? Data() : FileManager.default.contents(atPath: project + "/" + name) ?? Data([0xFF])
        }
        return files
    }

    static func describe(_ project: Project) -> [String] {
        project.manifest.takes.map { "\($0.id) \($0.part) \($0.state.rawValue)\($0.active ? "*" : "") \(project.conditions[$0.id]?.word ?? "ok")" }
    }
}

// MARK: Damage tools

func url(_ path: String) -> URL { URL(fileURLWithPath: path) }

func truncate(_ path: String, keeping fraction: Double) throws {
    let data = try Data(contentsOf: url(path))
    try data.prefix(max(1, Int(Double(data.count) * fraction))).write(to: url(path))
}

func editJSON(_ path: String, _ change: (inout [String: Any]) -> Void) throws {
    var object = try JSONSerialization.jsonObject(with: Data(contentsOf: url(path))) as! [String: Any]
    change(&object)
    try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(to: url(path))
}

func editManifest(_ project: String, _ change: (inout [String: Any]) -> Void) throws {
    try editJSON(project + "/manifest.json", change)
}

func replaceInManifest(_ project: String, _ old: String, _ new: String) throws {
    let text = try String(contentsOfFile: project + "/manifest.json", encoding: .utf8)
    precondition(text.contains(old), "the manifest has no \(old)")
    try Data(text.replacingOccurrences(of: old, with: new).utf8).write(to: url(project + "/manifest.json"))
}

/// Changes the manifest's take `index` (the sidecar, its backup copy, is
/// left as it was: what a hand editor does).
func editTake(_ project: String, _ index: Int, _ change: (inout [String: Any]) -> Void) throws {
    try editManifest(project) { manifest in
        var takes = manifest["takes"] as! [[String: Any]]
        change(&takes[index])
        manifest["takes"] = takes
    }
}

func editSidecar(_ path: String, _ change: (inout [String: Any]) -> Void) throws {
    try editJSON(path, change)
}

/// Rewrites the song, optionally changing one part's first note.
func replaceInSong(_ project: String, _ old: String, _ new: String, notesOf part: String? = nil) throws {
    var text = try String(contentsOfFile: project + "/score.acasong", encoding: .utf8)
    precondition(text.contains(old))
    text = text.replacingOccurrences(of: old, with: new)
    if let part, let range = text.range(of: "part \(part) ") {
        // The part's first note a whole tone higher: same rhythm, new pitch.
        let notes = text[range.upperBound...]
        if let firstPitch = notes.range(of: #"[A-G][#b]?[0-9]"#, options: .regularExpression) {
            let old = String(text[firstPitch])
            let raised = old.hasPrefix("G") ? "A" + old.dropFirst() : "G" + old.dropFirst()
            text.replaceSubrange(firstPitch, with: raised)
        }
    }
    try Data(text.utf8).write(to: url(project + "/score.acasong"))
}

/// A float WAV of silence through libsndfile.
func writeWAV(_ path: String, rate: Int, channels: Int, frames: Int) throws {
    try? FileManager.default.removeItem(atPath: path)
    if channels == 1 {
        let writer = try TakeFileWriter(path: path, sampleRate: rate)
        try writer.writeSilence(frames)
        try writer.finish()
    } else {
        let silence = [Float](repeating: 0, count: frames)
        let temporary = path + ".stereo.wav"
        try AudioFile.write(left: silence, right: silence, sampleRate: rate, to: temporary, bits: 16)
        try FileManager.default.moveItem(atPath: temporary, toPath: path)
    }
}

/// Sets the `data` chunk's size in a WAV header, as a crash leaves it
/// (the header last updated before the audio written since).
func setDataSize(_ path: String, _ bytes: UInt32) throws {
    var data = try Data(contentsOf: url(path))
    guard let range = data.range(of: Data("data".utf8)) else { throw CocoaError(.fileReadCorruptFile) }
    var little = bytes.littleEndian
    data.replaceSubrange(range.upperBound..<range.upperBound + 4, with: Data(bytes: &little, count: 4))
    try data.write(to: url(path))
}
