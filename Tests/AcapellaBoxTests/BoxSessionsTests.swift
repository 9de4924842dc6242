@testable import AcapellaBox
import AcapellaControl
import AcapellaDevices
import AcapellaProject
import AcapellaStatus
import AcapellaWeb
import Foundation
import Synchronization
import Testing

/// `Box.sessions` itself, song after song, on a device opener the test
/// controls: a recording set chosen on the page that the device will not
/// open with its inputs (a card may offer more channels than it opens at
/// its rate) sends the box back to the set that worked, said — it neither
/// stops nor waits for a card that is plugged in.
@Suite struct BoxSessionsTests {
    @Test(.fullSuiteOnly) func aSetTheDeviceRefusesGoesBackToTheSetThatWorked() throws {
        let folder = NSTemporaryDirectory() + "box-sessions-\(UUID().uuidString)"
        try Folders.make(folder + "/projects")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let song = folder + "/simple-harmony.acasong"
        try FileManager.default.copyItem(atPath: songsDirectory.appendingPathComponent("simple-harmony.acasong").path, toPath: song)
        var options = BoxOptions(songs: [song], dataDirectory: folder)
        options.lcd = nil
        options.usbRoots = []
        options.webName = nil
        options.calibrationStore = folder + "/calibrations.json"
        options.seconds = 8
        let log = BoxLog()
        log.divert(to: folder + "/box.log")
        let wake = WakeDescriptor()
        let controls = try ControlConfig.parse(Data(#"{"midi": {"connect": []}}"#.utf8), file: "test.json")
        let web = WebHub(wake: wake, dataDirectory: folder, program: WebHubTests.program)
        var io = Box.SessionIO(hub: ControlHub(config: controls), console: nil, display: nil, lcd: nil, wake: wake, service: ServiceNotifier(), log: log,
                               feedback: controls.feedback, quantize: controls.punchQuantize, shortTitle: "", started: MonotonicClock.nanoseconds())
        io.web = web
        io.program = WebHubTests.program
        let shared = io
        // The device: a room that offers eight inputs, and will not open with more than one.
        let opened = Mutex<[Int]>([])
        let opener: @Sendable (Int) throws(DeviceError) -> any AudioDevice = { (inputs: Int) throws(DeviceError) -> any AudioDevice in
            opened.withLock { $0.append(inputs) }
            guard inputs == 1 else { throw DeviceError(.configuration, "hw:9: has 1 input, \(inputs) asked for (a part an input)") }
            var room = SimulatedRoom.Options()
            room.pacing = .freeRunning
            return try DeviceChoice.simulated(room).capturing(inputs: inputs).open()
        }
        // The page, from another thread: the set asked for once the session is up.
        let set = [WebPartInput(part: 0, input: 1), WebPartInput(part: 1, input: 2)]
        let answer = Mutex<Result<String, WebFailure>?>(nil)
        Thread {
            let deadline = Date().addingTimeInterval(30)
            while web.live().mostInputs != 8 && Date() < deadline { usleep(10_000) }
            let result = web.perform(.together(set))
            answer.withLock { $0 = result }
        }.start()
        var running = options
        let end = try Box.sessions(&running, shared: shared, web: (web, WebBanner(host: "box.local", port: 80, code: "042917")), openDevice: opener)
        #expect(answer.withLock { $0 } == .success("recording together Soprano (input 1), Bass (input 2) from now on: the song opens again with the set"))
        #expect(end == .quit, "the box ran on to its time limit")
        #expect(opened.withLock { $0 } == [1, 2, 1], "\(opened.withLock { $0 })")
        #expect(running.together.isEmpty && running.togetherSource == "together")
        let said = (try? String(contentsOfFile: folder + "/box.log", encoding: .utf8)) ?? ""
        #expect(said.contains("the page's recording set: hw:9: has 1 input, 2 asked for (a part an input); back to the recording set that worked"), "\(said.suffix(400))")
    }
}
