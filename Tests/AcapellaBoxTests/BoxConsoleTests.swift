@testable import AcapellaBox
import AcapellaDevices
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The box under a real terminal: `acapella run` in a tmux pane (a
/// pseudo-terminal, as over SSH), keys typed into it, its readout read
/// back from the screen. tmux comes from deploy/test-packages.txt.
final class BoxTerminal {
    let socket = "acapella-test-\(UUID().uuidString.prefix(8))"
    let data: String
    var log: String { (try? String(contentsOfFile: data + "/log", encoding: .utf8)) ?? "" }

    /// Starts the box in an 80×24 pane on the simulated room at `speed`× real
    /// time; its stderr goes to `log`, or (`stderrOnTheTerminal`) to the pane.
    init(speed: Int, extra: [String] = [], settings extraSettings: String = "", stderrOnTheTerminal: Bool = false) throws {
        data = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-box-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        // `DATA` in extra settings stands for this terminal's data folder.
        let settings = #"{ "countIn": 1, "part": 2, "readouts": { "console": true, "lcd": false }"# + extraSettings.replacingOccurrences(of: "DATA", with: data) + " }"
        try settings.write(toFile: data + "/acapella.json", atomically: true, encoding: .utf8)
        let executable = try acapellaExecutable()
        let arguments = ["run", "--data", data, "--config", data + "/acapella.json", "--song", songsDirectory.appendingPathComponent("amazing-grace.acasong").path,
                         "--device", "sim:speed=\(speed)"] + extra
        // The pid for signals, the exit status and the terminal's settings after the box has gone.
        let script = "echo $$ > \(data)/pid; ACAPELLA_DATA_DIR=\(data) exec \(executable) \(arguments.joined(separator: " "))" + (stderrOnTheTerminal ? "" : " 2> \(data)/log")
        let command = "sh -c '\(script)'; echo $? > \(data)/status; stty -a > \(data)/stty; sleep 30"
        try tmux(["new-session", "-d", "-s", "box", "-x", "80", "-y", "24", command])
    }

    deinit {
        _ = try? tmux(["kill-server"])
        try? FileManager.default.removeItem(atPath: data)
    }

    /// Runs tmux on this terminal's own server and returns what it printed
    /// (through `DetachedCommand`: tmux leaves its server behind).
    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        let path = data + "/tmux-out"
        guard DetachedCommand.run(["tmux", "-L", socket] + arguments, output: path) != nil else {
            struct NoTmux: Error, CustomStringConvertible { var description = "tmux will not start (deploy/test-packages.txt installs it)" }
            throw NoTmux()
        }
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// What the pane shows now.
    func screen() -> String { (try? tmux(["capture-pane", "-p", "-t", "box"])) ?? "" }

    /// Types `keys` (literally).
    func type(_ keys: String) throws { try tmux(["send-keys", "-t", "box", "-l", keys]) }

    /// Waits (≤ `seconds`) until `condition` holds for the screen and log.
    @discardableResult
    func wait(_ what: String, seconds: Double = 20, _ condition: (_ screen: String, _ log: String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(screen(), log) { return true }
            usleep(40_000)
        }
        Issue.record("timed out waiting for \(what); screen:\n\(screen())\nlog:\n\(log)")
        return false
    }

    /// The box's exit status once it has gone.
    func exitStatus(seconds: Double = 20) -> Int? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: data + "/status", encoding: .utf8), let status = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                usleep(200_000)  // stty runs next
                return status
            }
            usleep(50_000)
        }
        return nil
    }

    /// Waits for the box to be ready at the pickup, then moves to measure 1.
    func readyAtMeasureOne() throws {
        #expect(wait("ready") { screen, log in log.contains("ready: Amazing Grace") && screen.contains("STOP  bar 0.1") })
        try type(".")
        #expect(wait("measure 1") { screen, _ in screen.contains("STOP  bar 1.1") })
    }

    var pid: pid_t? { (try? String(contentsOfFile: data + "/pid", encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) } }
}

@Suite(.serialized) struct BoxConsoleTests {
    /// Hands-free on the console, as a singer would: locate to measure 1,
    /// record (count-in, then the Alto from measure 1), punch out during
    /// measure 4 (it lands on the barline of 5), stop, keep, quit. The
    /// project then holds one kept, active Alto take over exactly measures
    /// 1–4 that lines up with what the room's singer sang within a sample,
    /// and the terminal is back as it was.
    @Test func recordMeasuresOneToFourThenKeep() throws {
        let box = try BoxTerminal(speed: 3)
        try box.readyAtMeasureOne()
        try box.type("r")
        #expect(box.wait("the count-in") { screen, _ in screen.contains("COUNT") || screen.contains("REC ") })
        #expect(box.wait("measure 4 recording") { screen, _ in screen.contains("REC   bar 4.") })
        try box.type("o")
        #expect(box.wait("the punch-out at the barline") { screen, _ in screen.contains("PLAY  bar 5.") })
        try box.type("s")
        #expect(box.wait("the take under review") { screen, log in screen.contains("TAKE?") && log.contains("take 1 recorded") })
        #expect(box.screen().contains("space hears it with the others, k keeps, d discards"))
        try box.type("k")
        #expect(box.wait("kept") { _, log in log.contains("take 1 kept") })
        try box.type("q")
        #expect(box.exitStatus() == 0, "\(box.log)")
        let stty = try String(contentsOfFile: box.data + "/stty", encoding: .utf8)
        #expect(stty.contains(" icanon") && stty.contains(" echo ") && !stty.contains("-icanon"), "the terminal is put back: \(stty)")

        let (project, report) = try Project.open(box.data + "/projects/amazing-grace.acaproj", for: .write(owner: "test"))
        #expect(report.isEmpty, "\(report)")
        let takes = project.manifest.takes
        #expect(takes.count == 1, "\(takes)")
        let take = try #require(takes.first)
        let schedule = try Schedule(score: project.score, options: ScheduleOptions(countInMeasures: 1))
        let measures = try #require(schedule.loopRange(measures: 1...4))
        #expect(take.part == "Alto" && take.state == .kept && take.active)
        #expect(take.range == SongRange(measures.lowerBound, measures.upperBound), "take over \(String(describing: take.range)), measures 1–4 are \(measures)")
        let (samples, _) = try AudioFile.readMono(project.path + "/" + take.file)
        #expect(Int64(samples.count) == take.frames)
        func taken(_ song: Int64) -> Float {
            let frame = song + take.alignmentOffsetSamples
            return frame >= 0 && frame < Int64(samples.count) ? samples[Int(frame)] : 0
        }
        let singer = SyntheticSinger(tones: schedule.tones[1], sampleRate: 48_000)
        let window = (measures.lowerBound + 20_000)..<(measures.lowerBound + 80_000)
        let lag = bestLag({ singer.sample(atSong: $0) }, taken, over: window, maximumLag: 40)
        #expect(abs(lag) <= 1, "the take is \(lag) samples off the singer")
        print("box on the console: take \(take.id) over \(measures), \(lag) samples off the singer")
    }

    /// SIGTERM (a stop) or SIGHUP (the terminal closed) while recording:
    /// the box finishes the take, writes the manifest and exits 0; the
    /// project opens with nothing to repair and the take's file holds what
    /// the manifest says.
    @Test(.fullSuiteOnly, arguments: [SIGTERM, SIGHUP])
    func aStopSignalDuringATakeLeavesAValidTake(signal: Int32) throws {
        let box = try BoxTerminal(speed: 3)
        #expect(box.wait("ready") { screen, log in log.contains("ready: Amazing Grace") && screen.contains("STOP") })
        try box.type("r")
        #expect(box.wait("recording in measure 3") { screen, _ in screen.contains("REC   bar 3.") })
        let pid = try #require(box.pid)
        #expect(kill(pid, signal) == 0)
        #expect(box.exitStatus() == 0, "\(box.log)")
        #expect(box.log.contains("take 1 (Alto) kept"), "\(box.log)")
        let stty = try String(contentsOfFile: box.data + "/stty", encoding: .utf8)
        #expect(!stty.contains("-icanon") && !stty.contains("-echo "), "the terminal is put back after a signal: \(stty)")
        let (project, report) = try Project.open(box.data + "/projects/amazing-grace.acaproj", for: .write(owner: "test"))
        #expect(report.isEmpty, "\(report)")
        let take = try #require(project.manifest.takes.first)
        #expect(take.state == .kept && take.active, "\(take)")
        let (samples, _) = try AudioFile.readMono(project.path + "/" + take.file)
        #expect(Int64(samples.count) == take.frames)
        // Count-in (2.5 s) + pickup and two measures at least.
        #expect(Double(take.frames) / 48_000 > 5.5, "\(take.frames) frames")
    }

    /// The box's own actions from the keys: give me my note (the Alto's
    /// first note, B3), tempo +5 %, count-in 2, the guide on, the part
    /// alone, calibration in the room (the round trip measured, stored and
    /// used by the next session), then safe shutdown running the
    /// configured power-off command once everything is on disk.
    @Test func boxActionsAndSafeShutdown() throws {
        let box = try BoxTerminal(speed: 4, settings: #", "powerOff": ["touch", "DATA/powered-off"]"#)
        let marker = box.data + "/powered-off"
        #expect(box.wait("ready") { _, log in log.contains("ready: Amazing Grace") })
        for (key, said) in [("n", "your note: B3"), ("+", "tempo 105 % (76 bpm) from the next barline"), ("c", "count-in: 2 measures"),
                            ("M", "Alto guide on"), ("S", "Alto alone")] {
            try box.type(key)
            #expect(box.wait("'\(key)'") { _, log in log.contains(said) })
        }
        #expect(box.wait("the new tempo on the readout") { screen, _ in screen.contains("♩=76") })
        try box.type("C")
        #expect(box.wait("calibration") { _, log in log.contains("calibrated sim:") })
        #expect(box.wait("the session after it") { _, log in log.components(separatedBy: "ready: Amazing Grace").count == 3 && log.contains("317.40 frames reported + 0.00 calibrated trim") })
        try box.type("Q")
        #expect(box.exitStatus() == 0, "\(box.log)")
        #expect(box.log.contains("safe shutdown: everything is on disk; running touch \(marker)"), "\(box.log)")
        #expect(FileManager.default.fileExists(atPath: marker), "the power-off command ran")
    }

    /// Loop recording from the console: measure 1 looped (`[` `]`), `r`:
    /// each pass is a take, and none is put up for review (which unmutes
    /// the part) while the singer is still singing the next pass; `s` stops
    /// and the last pass is the one under review.
    @Test func loopPassesAreReviewedOnlyAfterTheStop() throws {
        let box = try BoxTerminal(speed: 4)
        try box.readyAtMeasureOne()
        try box.type("[]")
        #expect(box.wait("the loop on the readout") { screen, _ in screen.contains("loop 1-1") })
        try box.type("r")
        #expect(box.wait("three passes") { _, log in log.components(separatedBy: "transport: loop back to measure 1").count >= 4 })
        #expect(!box.log.contains("recorded ("), "a take was put up for review during loop recording:\n\(box.log)")
        #expect(!box.log.contains("not kept"), "a finished pass was reported as not kept:\n\(box.log)")
        #expect(!box.log.contains("Alto guide on"))
        try box.type("s")
        #expect(box.wait("review of the last pass") { screen, log in screen.contains("TAKE?") && log.contains("recorded (") })
        try box.type("q")
        #expect(box.exitStatus() == 0, "\(box.log)")
        let (project, _) = try Project.open(box.data + "/projects/amazing-grace.acaproj", for: .write(owner: "test"))
        let kept = project.manifest.takes.filter { $0.state == .kept }
        #expect(kept.count >= 3, "one take per pass: \(project.manifest.takes.map { "\($0.id) \($0.state)" })")
        // Whole passes cover measure 1 (samples 40,000..<160,000): of those only
        // the newest plays; the pass cut short by the stop plays over it.
        let whole = kept.filter { $0.range == SongRange(40_000, 160_000) }
        #expect(whole.count >= 2 && whole.filter { $0.active }.map { $0.id } == [whole.last!.id], "\(kept.map { "\($0.id) \(String(describing: $0.range)) \($0.active)" })")
        #expect(kept.last?.active == true, "the last pass plays")
        // Only the pass the stop cut short is put up (each review unmutes the
        // part and says so): the pass before it, finished while the singer
        // sang the last, was put up first on every stop before.
        let reviews = box.log.split(separator: "\n").filter { $0.contains(" recorded (") }
        #expect(reviews.count == 1 && reviews.first?.contains("take \(kept.last?.id ?? -1) recorded (") == true, "the review is of the last pass only:\n\(box.log)")
    }

    /// With stderr on the same terminal as the readout, log lines go to
    /// box.log and the readout shows the latest: nothing scribbles over it.
    @Test func logLinesNeverDrawOverTheReadout() throws {
        let box = try BoxTerminal(speed: 3, stderrOnTheTerminal: true)
        #expect(box.wait("ready") { screen, _ in screen.contains("STOP  bar") })
        try box.type("m")
        #expect(box.wait("the metronome message on the readout") { screen, _ in screen.contains("  metronome on") })
        let screen = box.screen()
        #expect(!screen.contains("acapella: "), "a raw log line on the readout:\n\(screen)")
        #expect(screen.split(separator: "\n").first?.hasPrefix("Amazing Grace — Alto") == true, "the frame starts at the top:\n\(screen)")
        let diverted = (try? String(contentsOfFile: box.data + "/box.log", encoding: .utf8)) ?? ""
        #expect(diverted.contains("ready: Amazing Grace") && diverted.contains("metronome on"), "\(diverted)")
        try box.type("q")
        #expect(box.exitStatus() == 0)
    }

    /// d after a take: the log ends saying the take was discarded, never kept;
    /// ? shows the keys and the footer follows the state.
    @Test func discardedIsNeverLoggedAsKept() throws {
        let box = try BoxTerminal(speed: 3)
        try box.readyAtMeasureOne()
        try box.type("?")
        #expect(box.wait("the key help") { screen, _ in screen.contains("keys, page 1 of") && screen.contains("play-pause") })
        try box.type("r")
        #expect(box.wait("recording") { screen, _ in screen.contains("REC   bar 2.") && screen.contains("o punch out  s stop") })
        try box.type("s")
        #expect(box.wait("the review") { screen, _ in screen.contains("TAKE?") && screen.contains("k keep  d discard  space listen") })
        try box.type("d")
        #expect(box.wait("discarded") { _, log in log.contains("take 1 (Alto) discarded; its file stays in the project") })
        try box.type("q")
        #expect(box.exitStatus() == 0, "\(box.log)")
        #expect(box.log.contains("take 1 (Alto) discarded:"), "\(box.log)")
        #expect(!box.log.contains("take 1 (Alto) kept") && !box.log.contains("take 1 kept"), "\(box.log)")
    }
}
