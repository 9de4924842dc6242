@testable import AcapellaBox
import AcapellaControl
import AcapellaDevices
import AcapellaEngine
import AcapellaProject
import AcapellaWeb
import Foundation
import Synchronization

/// The box's sessions in-process, turn by turn, on a clock the test moves:
/// the appliance's own `SessionLoop` with its sources and sinks — keys
/// through a pipe as the console reads them, the page's changes and
/// actions through the `WebHub`, songs arriving through the watched songs
/// folder, the recorder, the analyses (the `acapella` built beside these
/// tests), the log — on a simulated room running free (no real time) as
/// the device. Each `turn` is one turn of the loop with the clock 33 ms
/// on, like swift-nio's `EmbeddedEventLoop`; nothing waits for real time
/// except the room's own thread, which runs as fast as the machine goes.
/// Songs follow one another as `Box.sessions` has them (`Box.sessionIO`,
/// `Box.leaveOut`).
final class EmbeddedBox {
    /// The loop's clock: nanoseconds the test moves.
    final class Clock: Sendable {
        let nanoseconds = Atomic<Int64>(0)
        func read() -> Int64 { nanoseconds.load(ordering: .relaxed) }
    }

    let clock = Clock()
    let data: String
    /// The box's settings as the running session has them (the library
    /// grows, the tempo carries on); between sessions, as the last left them.
    var options: BoxOptions { loop?.options ?? between }
    private var between: BoxOptions
    private let shared: Box.SessionIO
    let web: WebHub
    private let keyPipe: (read: Int32, write: Int32)
    private(set) var loop: SessionLoop?
    private var first = true
    private var working: (song: Int, part: Int)?
    /// How the last session ended and the box with it (nil: running).
    private(set) var ended: SessionEnd?
    /// Sessions opened so far.
    private(set) var sessionsOpened = 0
    /// The room's microphones when the last session opened.
    private(set) var inputs = 1

    /// A box on `songs` (paths), part `part`, with its data in a fresh
    /// folder (or `data`: a box started again on another's); USB sticks
    /// looked for under `usbRoot` (nil: not looked for).
    /// `together`: a recording set, the room given a microphone for each input.
    init(songs: [String], part: Int = 0, usbRoot: String? = nil, data again: String? = nil, detune: Double = 0, together: [PartOnInput] = []) throws {
        data = again ?? NSTemporaryDirectory() + "embedded-box-\(UUID().uuidString)"
        try Folders.make(data + "/projects")
        var options = BoxOptions(songs: songs, dataDirectory: data)
        options.partIndex = part
        options.together = together
        options.singer.detuneCents = detune
        options.lcd = nil
        options.usbRoots = []
        options.webName = nil
        options.calibrationStore = data + "/calibrations.json"
        between = options
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw ProjectError(description: "no pipe for the keys") }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        keyPipe = (ends[0], ends[1])
        let log = BoxLog()
        log.divert(to: data + "/box.log")
        let wake = WakeDescriptor()
        let controls = try ControlConfig.parse(Data(#"{"midi": {"connect": []}}"#.utf8), file: "embedded.json")
        web = WebHub(wake: wake, dataDirectory: data, program: WebHubTests.program)
        var io = Box.SessionIO(hub: ControlHub(config: controls), console: ConsoleInput(reading: keyPipe.read), display: nil, lcd: nil, wake: wake,
                               service: ServiceNotifier(), log: log, feedback: controls.feedback, quantize: controls.punchQuantize, shortTitle: "", started: 0)
        io.web = web
        io.songsWatch = Box.watchSongs(options, log: log)
        io.program = WebHubTests.program
        let folder = data
        io.sticks = usbRoot.map { StickMonitor(roots: [$0], dataDirectory: folder, wake: wake) }
        shared = io
        try open()
    }

    deinit {
        close(keyPipe.read)
        close(keyPipe.write)
        try? FileManager.default.removeItem(atPath: data)
    }

    /// Opens the session of the song and part the options say (as
    /// `Box.sessions` does: a song that cannot be opened any more leaves
    /// the library, back to the last one that opened).
    private func open() throws {
        // As `Box.sessions` opens it: an input for each part of the set (chosen on the page, maybe).
        let inputs = between.capturedInputs
        self.inputs = inputs
        let room = try Self.room(inputs: inputs)
        let lastSong = between.songIndex, lastPart = between.partIndex
        let options = between
        do {
            let clock = clock
            let made = try SessionLoop(options: options, device: room, reopen: { [inputs] () throws(DeviceError) in try Self.room(inputs: inputs) }, io: Box.sessionIO(shared, options: options, web: nil),
                                       firstSession: first, clock: { clock.read() })
            made.start()
            loop = made
            sessionsOpened += 1
            working = (lastSong, lastPart)
            first = false
        } catch let error as ProjectError where !first && working != nil && working! != (lastSong, lastPart) {
            let next = Box.leaveOut(lastSong, error, options: &between, backTo: working!, log: shared.log)
            try follow(next)
        }
    }

    /// The room the box opens when it is not given its microphones (`sim`), running free.
    private static func room(inputs: Int) throws(DeviceError) -> any AudioDevice {
        var options = SimulatedRoom.Options()
        options.pacing = .freeRunning
        return try DeviceChoice.simulated(options).capturing(inputs: inputs).open()
    }

    /// One turn of the loop, the clock 33 ms on; a session that ended is
    /// finished and the next one opened.
    func turn() throws {
        guard let loop else { return }
        let ready = Poller.wait(loop.descriptors, timeoutMilliseconds: 0)
        clock.nanoseconds.add(Int64(Box.frameMilliseconds) * 1_000_000, ordering: .relaxed)
        guard let end = loop.turn(ready: ready) else { return }
        loop.finish()
        between = loop.options
        loop.close()
        self.loop = nil
        web.refuseChanges("the box is changing songs; try again")
        try follow(end)
    }

    private func follow(_ end: SessionEnd) throws {
        switch end {
        case .quit, .shutdown, .calibrate:
            ended = end
        case .switchTo(let song, let part):
            between.songIndex = song
            between.partIndex = part
            try open()
        }
    }

    /// Turns until `done` holds (true) or `turns` turns have passed (false).
    /// Between turns the other threads (the room, the writer, the needle)
    /// are given the processor.
    @discardableResult
    func run(turns: Int = 20_000, until done: (EmbeddedBox) -> Bool) throws -> Bool {
        for _ in 0..<turns {
            if done(self) { return true }
            try turn()
            usleep(300)
        }
        return done(self)
    }

    /// Keys typed on the console.
    func press(_ keys: String) {
        let bytes = Array(keys.utf8)
        _ = bytes.withUnsafeBufferPointer { write(keyPipe.write, $0.baseAddress, $0.count) }
    }

    /// A change from the page, answered once the loop has carried it out.
    func change(_ change: WebChange) throws -> Result<String, WebFailure> {
        let answer = Mutex<Result<String, WebFailure>?>(nil)
        let web = web
        Thread {
            let result = web.perform(change)
            answer.withLock { $0 = result }
        }.start()
        try run { _ in answer.withLock { $0 != nil } }
        return answer.withLock { $0 } ?? .failure(WebFailure(504, "not answered"))
    }

    /// The session running now.
    var session: BoxSession? { loop?.session }
    /// The engine as last published.
    var snapshot: EngineSnapshot? { loop?.rig.link.snapshot() }
    /// The project of the session running now (this thread owns it).
    var project: Project? { loop?.project }
    /// What the box has said so far.
    var lines: [String] { ((try? String(contentsOfFile: data + "/box.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
    /// Whether the box has said a line containing `text`.
    func said(_ text: String) -> Bool { lines.contains { $0.contains(text) } }
}
