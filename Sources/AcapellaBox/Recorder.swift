public import AcapellaEngine
public import AcapellaProject
import Foundation
import Synchronization

/// The writer thread's half of recording: takes tagged capture frames off
/// the ring and turns them into take files, keeping the invariant *take
/// frame f holds song sample f − alignmentOffsetSamples*:
///
/// - the first armed frame opens a take; its song sample fixes the offset;
/// - a frame whose song sample is ahead of the file's next frame (capture
///   lost to an overrun or an xrun) is preceded by silence, and the song
///   samples it skipped are logged as a dropout;
/// - a frame whose song sample goes back (a loop pass) starts a new take;
/// - frames the device never played (xrun gaps) are skipped;
/// - the first frame no longer armed closes the take.
///
/// Files are written through `TakeFileWriter` (header and fsync every
/// 0.25 s); a full disk ends the take, keeps what was written and lets
/// the box run on.
///
/// **The writer never touches the project.** The project belongs to the
/// thread that drives the recorder (the control loop: `ProjectOwnership`
/// checks it); the writer asks that thread to begin each take (the
/// record and its file made and listed before a sample is written, as a
/// crash needs) and hands each finished record back to be stored. The
/// owner serves both in `serve()`, called every turn of its loop and
/// while `finish` waits. Until a take's beginning is answered its frames
/// wait in the writer's memory: the capture ring is drained however long
/// the owner's turn takes (a large import, a slow disk).
public final class Recorder: @unchecked Sendable {
    // @unchecked: `current`, `buffer` and the writer side are touched only
    // by the writer thread between `start` and `finish`; `project` and
    // `finished` only by the owner thread; `mailbox` under its lock.
    /// The capture ring the engine fills.
    public let ring: BulkRing<CapturedFrame>
    let project: Project
    let part: String
    /// The tempo and key a take begun now is sung at (owner thread).
    private(set) var options: ScheduleOptions
    let failAfterFrames: Int64?
    /// Written into each take's record: the round trip its alignment used.
    let calibration: String?
    /// Every take is a punch-in over what it recorded, even one that starts
    /// on the song's first sample (`record --range 1-1`).
    let punchesOnly: Bool
    /// Shared by the recorders of parts sung at once (nil: one part).
    public var ensemble: String?
    /// Called (on the writer thread) when the writer has asked the owner
    /// something: the owner's loop wakes to serve it.
    let wakeOwner: @Sendable () -> Void
    private var current: OpenTake?
    /// Takes finished (kept, in the manifest), oldest first (owner thread).
    public private(set) var finished: [TakeRecord] = []
    /// What the writer asked and was answered, and the problems met.
    private var mailbox = Mailbox()
    private let mailboxLock = NSLock()
    /// Signalled when the owner has answered a take's beginning.
    private let answered = DispatchSemaphore(value: 0)
    private let stopRequested = Atomic<Bool>(false)
    /// Whether the writer holds a take still open, or has not yet read a
    /// frame of the transport idle since its last armed one (set after each
    /// batch of frames, once a take it closed has been handed back). A loop
    /// pass ends on a period's edge: between one pass's last batch and the
    /// next's first, no take is open, and a stop there must still wait for
    /// the pass it cut short (its frames are in the ring).
    private let takeOpen = Atomic<Bool>(false)
    /// Writer thread: the last frame read was of the transport idle.
    private var idleSeen = true
    private let received = Atomic<Int64>(0)
    private let done = DispatchSemaphore(value: 0)

    /// Between the writer and the owner.
    private struct Mailbox {
        /// The song sample of a take the writer waits to begin.
        var begin: Int64?
        /// The owner's answer to it.
        var begun: Result<(record: TakeRecord, writer: TakeFileWriter), ProjectError>?
        /// Takes the writer closed, for the owner to store.
        var closed: [TakeRecord] = []
        /// Problems met (one line each: disk full, …), on either side.
        var problems: [String] = []
    }

    struct OpenTake {
        var writer: TakeFileWriter?
        /// Nil when the take could not be started (nothing is written), or
        /// while its beginning is awaited.
        var record: TakeRecord?
        var offset: Int64
        var position: Int64 = 0
        var lastSong: Int64
        var recordingStart: Int64?
        var recordingEnd: Int64?
        var pending: [Float] = []
        /// The first song sample captured while the device could not say
        /// how its capture lined up with its playback.
        var unalignedFrom: Int64?
        /// Asked of the owner and not answered yet: the frames (and any
        /// silence for lost capture) wait in `pending`, the dropouts here,
        /// and the ring keeps being drained meanwhile.
        var awaitingBegin = false
        var stagedDropouts: [SongRange] = []
    }

    /// A recorder of `part` into `project`, which the calling thread owns.
    /// `failAfterFrames` injects a full disk (tests).
    public init(project: Project, part: String, options: ScheduleOptions, calibration: String? = nil, punchesOnly: Bool = false, ringSeconds: Int = 4,
                failAfterFrames: Int64? = nil, wakeOwner: @escaping @Sendable () -> Void = {}) {
        self.calibration = calibration
        self.punchesOnly = punchesOnly
        ring = BulkRing(capacity: ringSeconds * options.sampleRate)
        self.project = project
        self.part = part
        self.options = options
        self.failAfterFrames = failAfterFrames
        self.wakeOwner = wakeOwner
    }

    /// Serves the writer (owner thread): begins the take it waits for and
    /// stores the takes it closed. Returns whether a take was still being
    /// written when called — after the transport stops, a writer that fell
    /// behind may still be finishing loop passes; false means every take
    /// so far is among `finished`.
    @discardableResult
    public func serve() -> Bool {
        let writing = takeOpen.load(ordering: .acquiring)
        let (begin, closed) = withMailbox { mailbox in
            defer { mailbox.closed = [] }
            return (mailbox.begin, mailbox.closed)
        }
        // In the writer's order: a take closed (a loop pass) before the next began.
        for record in closed { store(record) }
        if let song = begin {
            let answer = beginTake(at: song)
            withMailbox { mailbox in
                mailbox.begin = nil
                mailbox.begun = answer
            }
            answered.signal()
        }
        return writing
    }

    /// The problems met so far (any thread).
    public func problemsSoFar() -> [String] { withMailbox { $0.problems } }

    /// The problems met (after `finish`).
    public var problems: [String] { problemsSoFar() }

    private func withMailbox<T>(_ body: (inout Mailbox) -> T) -> T {
        mailboxLock.lock()
        defer { mailboxLock.unlock() }
        return body(&mailbox)
    }

    /// Armed frames received from the ring so far (any thread).
    public var receivedFrames: Int64 { received.load(ordering: .relaxed) }

    /// Starts the writer thread.
    public func start() {
        let thread = Thread { [self] in
            var buffer = [CapturedFrame](repeating: CapturedFrame(value: 0, mark: .none), count: 4_096)
            while true {
                let stopping = stopRequested.load(ordering: .acquiring)
                let count = buffer.withUnsafeMutableBufferPointer { ring.pop(into: $0.baseAddress!, maximum: $0.count) }
                for index in 0..<count { take(buffer[index]) }
                receiveBegin(waiting: false)
                takeOpen.store(current != nil || !idleSeen, ordering: .releasing)
                if count == 0 {
                    if stopping { break }
                    flushPending()
                    usleep(2_000)
                }
            }
            close()
            takeOpen.store(false, ordering: .releasing)
            done.signal()
        }
        thread.name = "acapella-recorder"
        thread.start()
    }

    /// Drains the ring, closes the open take and stops the thread; returns
    /// once everything is on disk and in the manifest (owner thread: it
    /// serves the writer meanwhile).
    public func finish() {
        stopRequested.store(true, ordering: .releasing)
        while done.wait(timeout: .now() + .milliseconds(2)) == .timedOut { serve() }
        serve()
    }

    private func take(_ frame: CapturedFrame) {
        switch frame.mark.kind {
        case .gap:
            return
        case .none, .playing:
            idleSeen = true
            if current != nil { close() }
            return
        case .armed, .recording:
            idleSeen = false
        }
        received.add(1, ordering: .relaxed)
        let song = frame.mark.songSample
        if let lastSong = current?.lastSong, song <= lastSong { close() }  // a loop pass ends: the next take begins
        if current == nil { open(at: song) }
        guard current != nil else { return }
        // In place: the open take is not copied a frame at a time (a
        // quartet's four writers on a loaded box spent most of their time
        // copying it, and fell behind).
        append(frame, at: song, to: &current!)
    }

    /// Writer thread: one armed frame at song sample `song` into the open take.
    private func append(_ frame: CapturedFrame, at song: Int64, to open: inout OpenTake) {
        let target = song + open.offset
        if target > open.position {
            // Capture lost before this frame: silence keeps its place.
            if open.awaitingBegin {
                open.stagedDropouts.append(SongRange(open.lastSong + 1, song))
                open.pending.append(contentsOf: repeatElement(0, count: Int(target - open.position)))
            } else {
                open.record?.dropouts.append(SongRange(open.lastSong + 1, song))
                flush(&open)
                do { try open.writer?.writeSilence(Int(target - open.position)) } catch { fail(&open, error) }
            }
            open.position = target
        }
        if frame.unaligned, open.unalignedFrom == nil { open.unalignedFrom = song }
        if frame.mark.kind == .recording {
            if open.recordingStart == nil { open.recordingStart = song }
            open.recordingEnd = song + 1
        }
        open.pending.append(frame.value)
        open.position += 1
        open.lastSong = song
        if open.pending.count >= 4_096 { flush(&open) }
    }

    /// Writer thread: asks the owner to begin a take at `song`. The
    /// frames are kept in memory until it has (`receiveBegin`): the ring
    /// goes on being drained however long the owner's turn takes.
    private func open(at song: Int64) {
        withMailbox { $0.begin = song }
        wakeOwner()
        current = OpenTake(writer: nil, record: nil, offset: -song, lastSong: song - 1, awaitingBegin: true)
    }

    /// Writer thread: the owner's answer to the open take's beginning,
    /// when there is one (`waiting`: until there is). Begun, what waited
    /// in memory is written; refused, the take's frames are let go until
    /// the transport stops, and that is said.
    private func receiveBegin(waiting: Bool) {
        guard var open = current, open.awaitingBegin else { return }
        if waiting { answered.wait() } else if answered.wait(timeout: .now()) != .success { return }
        current = nil
        open.awaitingBegin = false
        switch withMailbox({ mailbox in defer { mailbox.begun = nil }; return mailbox.begun }) {
        case .success(let (record, writer)):
            open.record = record
            open.writer = writer
            open.record?.dropouts += open.stagedDropouts
            flush(&open)
        case .failure(let error):
            withMailbox { $0.problems.append("cannot start a take: \(error.description)") }
            open.pending = []
        case nil:
            open.pending = []
        }
        open.stagedDropouts = []
        current = open
    }

    /// Owner thread: the tempo and key are now `options`' (a take begun
    /// from now on is stamped with them: heard at another tempo later, it
    /// is stretched from these).
    public func follow(_ options: ScheduleOptions) {
        self.options.tempoScale = options.tempoScale
        self.options.transpose = options.transpose
    }

    /// Takes begun so far (owner thread): numbers an ensemble's takes alike.
    private var begun = 0

    /// Owner thread: the take's record listed and its file made.
    private func beginTake(at song: Int64) -> Result<(record: TakeRecord, writer: TakeFileWriter), ProjectError> {
        let calibration = calibration
        begun += 1
        let begun = begun
        do {
            return .success(try project.beginTake(part: part, options: options, failAfterFrames: failAfterFrames) { record in
                record.alignmentOffsetSamples = -song
                record.calibration = calibration
                // The k-th take of each recorder of an ensemble began together (one capture, one set of marks).
                if let ensemble { record.ensemble = "\(ensemble)-\(begun)" }
            })
        } catch {
            return .failure(error)
        }
    }

    private func flush(_ open: inout OpenTake) {
        guard !open.pending.isEmpty, !open.awaitingBegin else { return }
        let writer = open.writer
        do {
            try open.pending.withUnsafeBufferPointer { (buffer) throws(FileError) in try writer?.write(buffer.baseAddress!, count: buffer.count) }
        } catch { fail(&open, error) }
        open.pending.removeAll(keepingCapacity: true)
    }

    private func flushPending() {
        guard var open = current else { return }
        current = nil
        flush(&open)
        current = open
    }

    private func fail(_ open: inout OpenTake, _ error: FileError) {
        // Said relative to the project ("takes/alto-3.wav: No space left on device; …").
        let line = error.description.replacingOccurrences(of: project.path + "/", with: "")
        withMailbox { $0.problems.append(line) }
        open.record?.note = "stopped early: \(line)"
        open.writer = nil  // the writer closed the file after the short write
    }

    /// Ends the open take: file finished, record kept and made active. It
    /// counts as finished only once the manifest saying so is on disk.
    private func close() {
        receiveBegin(waiting: true)
        guard var open = current else { return }
        current = nil
        flush(&open)
        do { try open.writer?.finish() } catch { fail(&open, error) }
        guard var record = open.record else { return }
        if let from = open.unalignedFrom {
            // Said with the take: it may be off by the streams' start-up skew from there.
            let seconds = Double(max(0, from)) / Double(options.sampleRate)
            let said = String(format: "alignment not verified from %d:%04.1f on: this device's capture and playback start apart and it cannot say by how much (calibrate, or use a card whose streams link)",
                              Int(seconds) / 60, seconds.truncatingRemainder(dividingBy: 60))
            record.note = record.note.map { $0 + "; " + said } ?? said
        }
        record.frames = TakeFile.frameCount(project.path + "/" + record.file) ?? open.position
        if let start = open.recordingStart, let end = open.recordingEnd {
            // From the song's start it is a full take; later, or inside a
            // punch range asked for, a punch-in over its range.
            record.range = start <= 0 && !punchesOnly ? nil : SongRange(start, end)
            record.state = .kept
        } else {
            record.state = .discarded
            record.note = record.note ?? "stopped before anything was recorded (during the count-in or pre-roll)"
        }
        // The record goes to the owner, who lists it: only the manifest saying so makes it finished.
        withMailbox { $0.closed.append(record) }
        wakeOwner()
    }

    /// Owner thread: a closed take stored, and made active when kept.
    private func store(_ record: TakeRecord) {
        do {
            try project.store(record)
        } catch {
            let seconds = String(format: "%.2f", Double(record.frames) / Double(options.sampleRate))
            let full = [ENOSPC, EDQUOT].contains { error.description.contains(String(cString: strerror($0))) }
            let line = "\(record.file): \(seconds) s recorded, but the project could not be updated (\(error.description)); "
                + "the audio is safe: \(full ? "free some space, then " : "")'acapella takes \(project.path) recover' keeps it"
            withMailbox { $0.problems.append(line) }
            return
        }
        // Kept whatever happens next: only its being the take that plays may fail, said as such.
        if record.state == .kept {
            do { try project.activate(record.id) } catch {
                withMailbox { $0.problems.append("take \(record.id) (\(record.part)) is kept but does not play yet: \(error.description); 'acapella takes \(project.path) activate \(record.id)' makes it play") }
            }
        }
        finished.append(project.manifest.takes.first { $0.id == record.id } ?? record)
    }
}
