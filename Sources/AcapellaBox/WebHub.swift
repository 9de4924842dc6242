import AcapellaControl
import AcapellaEngine
import AcapellaMusicXML
import AcapellaProject
import Dispatch
public import AcapellaDevices
public import AcapellaEngrave
public import AcapellaScore
import AcapellaStatus
public import AcapellaWeb
import AcapellaWebServer
import Foundation
internal import CChild
import Synchronization
import AcapellaLock

/// What the web page reads and asks: the live state the control loop
/// publishes about 30 times a second, the current song engraved, its
/// takes and the library; changes queued for the control loop, which
/// carries them out and answers; downloads rendered on the asking web
/// thread from the project opened for reading. The web threads and the
/// control loop share this one mutex; the render thread never touches it.
public final class WebHub: WebBox {
    struct Shared {
        var live = WebLiveState()
        /// The score at each of the page's sizes, as each is engraved.
        var scores: [WebScoreSize: WebScore] = [:]
        var scoreVersion = 0
        var scoreVersions: [String: Int] = [:]
        /// Why the current song's score could not be engraved.
        var scoreProblem: String?
        /// Actions from the page, with when they arrived, for the control loop.
        var actions: [(action: ControlAction, nanoseconds: Int64)] = []
        /// Changes from the page, each with the reply its web thread waits for.
        var changes: [(change: WebChange, reply: Answer)] = []
        var takes = WebTakes()
        /// The takes' audio files by id (finished takes only).
        var takeFiles: [Int: String] = [:]
        /// The current song's project.
        var project: String?
        /// The library: every song's path and summary, and which is sung.
        var songs: [(path: String, summary: SongSummary)] = []
        /// Songs uploaded that the control loop has not taken into its library yet.
        var unlearned: [String] = []
        var currentSong = 0
        var takesVersion = 0
        var libraryVersion = 0
        /// The newest take's analysis for the page (JSON), and its count.
        var analysis: [UInt8]?
        var analysisVersion = 0
        /// How the parts sang together for the page (JSON), and its count.
        var blend: [UInt8]?
        var blendVersion = 0
        /// The name mDNS announced (`acapella.local`, or the next free one).
        var announcedHost: String?
    }

    /// A web thread's wait for the control loop's answer.
    final class Answer: Sendable {
        let done = DispatchSemaphore(value: 0)
        let result = VisibleLock<Result<String, WebFailure>?>(nil)

        func answer(_ result: Result<String, WebFailure>) {
            self.result.withLock { $0 = result }
            done.signal()
        }
    }

    private let shared = VisibleLock(Shared())
    /// Counts publications; the event streams wait on `published` for it to move.
    private let generation = Atomic<Int>(0)
    private let published = NSCondition()
    /// Wakes the control loop when an action arrives.
    private let wake: WakeDescriptor?
    /// Where uploaded songs go, and where downloads are rendered before sending.
    let libraryFolder: String
    /// Songs dropped into the data directory (shown as the user's too).
    let songsFolder: String
    let exportsFolder: String
    /// Renders running now (mixes, practice tracks, bundles): at most two.
    private let rendering = Atomic<Int>(0)
    /// Songs the library may hold from the page, and the most a render may run.
    static let maximumUploads = 200
    static let maximumRenders = 2
    /// The page's scores: engraved on this queue, kept in this folder, by this program.
    private let pageScores = DispatchQueue(label: "acapella-page-score")
    private let scoreRequest = Atomic<Int>(0)
    let pageCache: String
    /// The box's data folder (the pairing is kept there).
    let dataDirectory: String
    /// The program (`acapella`: this one) whose children engrave the page's
    /// scores and mix its downloads.
    let program: String

    /// `program`: the `acapella` that engraves and mixes (default: this one).
    public init(wake: WakeDescriptor? = nil, dataDirectory: String, program: String? = nil) {
        self.wake = wake
        self.dataDirectory = dataDirectory
        pageCache = dataDirectory + "/cache/page"
        self.program = program ?? ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        libraryFolder = SongLibrary.uploadFolder(dataDirectory)
        songsFolder = SongLibrary.userFolder(dataDirectory)
        exportsFolder = dataDirectory + "/exports"
        // Renders left by a crash are removed (nothing else is ever kept there).
        for name in (try? FileManager.default.contentsOfDirectory(atPath: exportsFolder)) ?? [] where name.hasPrefix("web-") {
            unlink(exportsFolder + "/" + name)
        }
    }

    /// The name mDNS announced the box under, once it has.
    /// The app serving the page, once started (its pairing's news is read
    /// by the control loop; its host names follow the announced name).
    private let servingApp = VisibleLock<WebApp?>(nil)
    /// The names the page may be asked for by (besides addresses).
    private let ownNames = VisibleLock<[String]>([])

    func serve(_ app: WebApp, names: [String]) {
        servingApp.withLock { $0 = app }
        ownNames.withLock { $0 = names }
        app.setHostNames(names + (announcedHost.map { [$0] } ?? []))
    }

    /// Wrong pairing codes and replaced codes since the last call.
    func takePairingEvents() -> [Pairing.Event] { servingApp.withLock { $0?.takePairingEvents() } ?? [] }

    /// The pairing code the page takes now.
    var pairingCode: String? { servingApp.withLock { $0?.pairingCode } }

    /// The pairing revision last saved to the data folder.
    private let savedPairingRevision = VisibleLock<Int?>(nil)

    /// Saves the pairing (the code, the paired phones by their tokens'
    /// hashes) when it changed since the last save; a failure is returned
    /// to be said (the phones then pair again after a restart; nothing else is lost).
    func savePairingIfChanged() -> String? {
        let last = savedPairingRevision.withLock { $0 }
        guard let app = servingApp.withLock({ $0 }), app.pairingRevision != last else { return nil }
        let (revision, saved) = app.savedPairing
        do {
            try PairingFile.save(saved, dataDirectory: dataDirectory)
            savedPairingRevision.withLock { $0 = revision }
            return nil
        } catch {
            savedPairingRevision.withLock { $0 = revision }  // said once, tried again at the next change
            return "web: the pairing could not be saved (\(error)); paired phones will pair again after a restart"
        }
    }

    var announcedHost: String? {
        get { shared.withLock { $0.announcedHost } }
        set {
            shared.withLock { $0.announcedHost = newValue }
            let names = ownNames.withLock { $0 }
            servingApp.withLock { $0?.setHostNames(names + (newValue.map { [$0] } ?? [])) }
        }
    }

    // MARK: Reads (web threads)

    public func live() -> WebLiveState { shared.withLock { $0.live } }

    public func score(_ size: WebScoreSize) -> WebScore? { shared.withLock { $0.scores[size] } }

    public func scoreProblem() -> String? { shared.withLock { $0.scoreProblem } }

    public func takes() -> WebTakes { shared.withLock { $0.takes } }

    public func library() -> [WebSong] {
        shared.withLock { shared in
            shared.songs.enumerated().map { index, song in
                WebSong(index: index, title: song.summary.title, tags: song.summary.tags, current: index == shared.currentSong,
                        uploaded: song.path.hasPrefix(libraryFolder + "/") || song.path.hasPrefix(songsFolder + "/"),
                        parts: song.summary.parts, measures: song.summary.measures, seconds: song.summary.seconds, verses: song.summary.verses)
            }
        }
    }

    // MARK: Changes (web threads ask, the control loop answers)

    /// An action from the page: queued for the control loop, which is woken.
    public func act(_ name: String) -> Bool {
        guard let action = ControlAction(rawValue: name) else { return false }
        let now = MonotonicClock.nanoseconds()
        shared.withLock { $0.actions.append((action, now)) }
        wake?.wake()
        return true
    }

    public func perform(_ change: WebChange) -> Result<String, WebFailure> {
        let reply = Answer()
        shared.withLock { $0.changes.append((change, reply)) }
        wake?.wake()
        guard reply.done.wait(timeout: .now() + 5) == .success, let result = reply.result.withLock({ $0 }) else {
            return .failure(WebFailure(503, "the box is busy (changing songs?); try again"))
        }
        return result
    }

    /// The page's actions since the last call, in order.
    func takeActions() -> [(action: ControlAction, nanoseconds: Int64)] {
        shared.withLock { shared in
            defer { shared.actions = [] }
            return shared.actions
        }
    }

    /// The page's changes since the last call, in order, each to be answered.
    func takeChanges() -> [(change: WebChange, reply: Answer)] {
        shared.withLock { shared in
            defer { shared.changes = [] }
            return shared.changes
        }
    }

    /// Answers changes nobody will carry out (the box is between songs or stopping).
    func refuseChanges(_ why: String) {
        for (_, reply) in takeChanges() { reply.answer(.failure(WebFailure(503, why))) }
    }

    // MARK: Publication (the control loop)

    /// The live state (cheap: one small struct); the versions are the hub's.
    public func publish(_ live: WebLiveState) {
        shared.withLock { shared in
            var live = live
            live.takesVersion = shared.takesVersion
            live.libraryVersion = shared.libraryVersion
            live.analysisVersion = shared.analysisVersion
            live.blendVersion = shared.blendVersion
            live.scoreVersion = shared.scoreVersion
            live.scoreVersions = shared.scoreVersions
            live.publishedNanoseconds = MonotonicClock.nanoseconds()
            shared.live = live
        }
        published.lock()
        generation.add(1, ordering: .relaxed)
        published.broadcast()
        published.unlock()
    }

    public func nextLive(after seen: Int, timeout: Duration) -> (state: WebLiveState, generation: Int) {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        published.lock()
        while generation.load(ordering: .relaxed) == seen && published.wait(until: deadline) {}
        let now = generation.load(ordering: .relaxed)
        published.unlock()
        return (live(), now)
    }

    /// The song's takes as the project says now.
    /// `measure` names the measure a song sample falls in (punch-ins are
    /// listed by their measures).
    /// `scores`: each take's analysis score when known; `heardFrom`: the
    /// song sample each is heard from with the others.
    func publishTakes(_ records: [TakeRecord], project: String, song: String, parts: [String], currentPart: Int, sampleRate: Int, reference: String? = nil,
                      scores: [Int?] = [], heardFrom: [Int64] = [], projects: [WebProject] = [], measure: (Int64) -> Int) {
        let takes = records.enumerated().map { index, record in
            var status = stat()
            let modified = stat(project + "/" + record.file, &status) == 0 ? status.st_mtim : nil
            return WebTake(id: record.id, part: record.part, state: record.state.rawValue, active: record.active,
                           seconds: Double(record.frames) / Double(max(1, sampleRate)),
                           recorded: modified.map { RecordStamp.stamp($0, milliseconds: false) },
                           measures: record.range.map { "\(measure($0.start))-\(measure(max($0.start, $0.end - 1)))" }, nudgeMilliseconds: Double(record.nudgeSamples) * 1_000 / Double(max(1, sampleRate)),
                           note: record.note, score: index < scores.count ? scores[index] : nil,
                           heardFromSeconds: index < heardFrom.count ? Double(heardFrom[index]) / Double(max(1, sampleRate)) : 0,
                           heardFromMeasure: record.range != nil && index < heardFrom.count ? measure(heardFrom[index]) : nil,
                           fileStartSeconds: -Double(record.alignmentOffsetSamples + record.nudgeSamples) / Double(max(1, sampleRate)), name: record.name)
        }
        let files = Dictionary(records.filter { $0.state != .recording }.map { ($0.id, project + "/" + $0.file) }) { first, _ in first }
        shared.withLock { shared in
            let changed = WebTakes(song: song, parts: parts, currentPart: currentPart, takes: takes, reference: reference, projects: projects,
                                   key: WebTakes.key(ofProject: project))
            guard changed != shared.takes || shared.project != project else { return }
            shared.takes = changed
            shared.takeFiles = files
            shared.project = project
            shared.takesVersion += 1
            shared.live.takesVersion = shared.takesVersion
        }
    }

    /// A take's analysis for the page (the page colours the notes).
    func publishAnalysis(_ json: [UInt8]) {
        shared.withLock { shared in
            shared.analysis = json
            shared.analysisVersion += 1
            shared.live.analysisVersion = shared.analysisVersion
        }
    }

    public func analysis() -> [UInt8]? { shared.withLock { $0.analysis } }

    /// How the parts sang together, for the page (the page marks the chords).
    func publishBlend(_ json: [UInt8]?) {
        shared.withLock { shared in
            shared.blend = json
            shared.blendVersion += 1
            shared.live.blendVersion = shared.blendVersion
        }
    }

    public func blend() -> [UInt8]? { shared.withLock { $0.blend } }

    /// The library: each song's title and tags, which one is sung.
    func publishLibrary(_ paths: [String], current: Int, reread: Set<String> = [], open: (path: String, score: Score)? = nil) {
        // A song new to the list (or changed) is read outside the lock (the web threads wait on it);
        // the open song from the score the session holds when its file's header says the same (a long
        // song is not parsed a second time beside it).
        let known = shared.withLock { shared in Dictionary(shared.songs.map { ($0.path, $0.summary) }) { first, _ in first } }
        let held = open.flatMap { open -> SongSummary? in
            let header = SongHeader.read(open.path)
            guard open.score.title.map({ $0 == header.title }) ?? false, open.score.tags == header.tags else { return nil }
            return SongSummary(open.score, title: header.title)
        }
        let songs = paths.map { path in
            (path, (reread.contains(path) ? nil : known[path]) ?? (path == open?.path ? held : nil) ?? SongSummary.read(path))
        }
        // Each song new to the list was parsed for its summary: what that took goes back.
        if songs.contains(where: { known[$0.0] == nil }) { _ = acapella_release_freed_memory() }
        shared.withLock { shared in
            // A song uploaded and not yet learned stays (the loop learns of it next turn).
            shared.unlearned.removeAll { paths.contains($0) }
            let uploaded = shared.songs.filter { shared.unlearned.contains($0.path) }
            if shared.songs.map(\.path) != paths + uploaded.map(\.path) || !reread.isEmpty {
                shared.songs = songs + uploaded
                shared.libraryVersion += 1
            }
            if shared.currentSong != current {
                shared.currentSong = current
                shared.libraryVersion += 1
            }
            shared.live.libraryVersion = shared.libraryVersion
        }
    }

    /// Songs uploaded since the loop last learned of them, in the order they came.
    func newUploads() -> [String] {
        shared.withLock { $0.unlearned }
    }

    /// A new song: its score for the page, the part highlighted, wide (a
    /// tablet, a computer) and narrow (a phone held upright), then at the
    /// page's two zoom steps (medium, large). Engraved by
    /// `acapella page-score` in a process of its own at a lower priority,
    /// one after the other, into files the page is served from: the box
    /// never holds a score (32 parts × 12 minutes engrave to hundreds of
    /// megabytes while laid out), and its threads never wait for one. Kept
    /// in the data directory's `cache/page` by the song's text, part and
    /// width (16 kept besides: four songs), so a song sung again is not engraved again. The
    /// page learns of each from `scoreVersion`.
    func show(_ score: Score, part: String, log: BoxLog) {
        let request = scoreRequest.add(1, ordering: .relaxed).newValue
        shared.withLock {
            $0.scores = [:]
            $0.scoreVersions = [:]
            $0.live.scoreVersions = [:]
            $0.scoreProblem = nil
            // Another song: the last take's analysis and the blend no longer apply.
            $0.analysis = nil
            $0.analysisVersion += 1
            $0.blend = nil
            $0.blendVersion += 1
        }
        let folder = pageCache
        let engraver = self.program
        var program = stat()
        stat(engraver, &program)
        let stamp = "\(program.st_size) \(program.st_mtim.tv_sec).\(program.st_mtim.tv_nsec)"
        pageScores.async { [self] in
            // The song's text made here, off the control loop (a long score takes a while).
            let text = Acasong.serialize(score)
            // Room first (the old entries beyond 8, a killed engraving's leftovers).
            Self.pruneCache(folder, keep: 16)
            // The two the page opens with first; the zoom steps after them.
            for size in [WebScoreSize.wide, .narrow, .medium, .large] {
                guard scoreRequest.load(ordering: .relaxed) == request else { return }
                let widthMM = size.widthMM
                let entry = folder + "/" + Self.cacheKey(text, part: part, widthMM: widthMM, program: stamp)
                var engraved = WebScore(folder: entry)
                if engraved == nil {
                    switch Self.engraveInProcess(text, part: part, widthMM: widthMM, into: entry, engraver: engraver) {
                    case .success(let said):
                        engraved = WebScore(folder: entry)
                        log("web: the score\(size.said) \(said)")
                    case .failure(let problem):
                        log("web: the score\(size.said) could not be engraved: \(problem)", .warning)
                        if scoreRequest.load(ordering: .relaxed) == request { shared.withLock { $0.scoreProblem = problem.description } }
                    }
                } else {
                    // Used again: the newest in the cache.
                    utime(entry, nil)
                }
                guard let engraved else { continue }
                shared.withLock {
                    // Checked under the lock `show` clears them under: another song's never stored over the next one's.
                    guard scoreRequest.load(ordering: .relaxed) == request else { return }
                    $0.scores[size] = engraved
                    $0.scoreVersion += 1
                    $0.scoreVersions[size.rawValue] = $0.scoreVersion
                    $0.live.scoreVersion = $0.scoreVersion
                    $0.live.scoreVersions = $0.scoreVersions
                }
            }
        }
    }

    /// The cache entry's name: a hash of everything the engraving depends on.
    /// (`program`: the engraver's size and date, so another build engraves again.)
    static func cacheKey(_ text: String, part: String, widthMM: Int?, program: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (text + "\u{0}" + part + "\u{0}" + (widthMM.map(String.init) ?? "wide") + "\u{0}" + program).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16) + "-" + (widthMM.map { "\($0)mm" } ?? "wide")
    }

    /// Runs `acapella page-score` on the song's text (written beside the
    /// entry first) and waits for it, bounded (`childLimits`) and tied to
    /// the box; what it said, or why it failed.
    static func engraveInProcess(_ text: String, part: String, widthMM: Int?, into entry: String, engraver: String) -> Result<String, WebFailure> {
        let song = entry + ".acasong"
        do {
            try FileManager.default.createDirectory(atPath: (entry as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try AtomicFile.write(Array(text.utf8), to: song)
        } catch {
            return .failure(WebFailure(500, "\(song): \(error)"))
        }
        defer { unlink(song) }
        let limits = childLimits
        let arguments = ["page-score", song, "--part", part, "--out", entry] + (widthMM.map { ["--width", String($0)] } ?? [])
        switch BoundedChild.run(engraver, arguments, limits: limits) {
        case .failure(let error):
            return .failure(WebFailure(500, error.description))
        case .success(let outcome):
            if let failure = outcome.failure(limits: limits) {
                try? FileManager.default.removeItem(atPath: entry)
                return .failure(WebFailure(500, "the engraver " + failure))
            }
            return .success(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// What a child of the box (the engraver, a take's analysis, a download's mix) may use: a
    /// quarter of the machine's memory, from 128 MB to 512 MB; two minutes of
    /// CPU; five minutes in all; ten steps below the box's priority.
    public static var childLimits: BoundedChild.Limits {
        let physical = Int(sysconf(Int32(_SC_PHYS_PAGES))) * Int(sysconf(Int32(_SC_PAGESIZE)))
        return BoundedChild.Limits(memoryBytes: min(512 << 20, max(128 << 20, physical / 4)), cpuSeconds: 120, wallSeconds: 300, niceIncrement: 10)
    }

    /// Removes all but the `keep` newest entries of the cache, and any
    /// song text an engraving killed midway left (run on the queue that
    /// engraves, so none is in use).
    static func pruneCache(_ folder: String, keep: Int) {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in all where name.hasSuffix(".acasong") { unlink(folder + "/" + name) }
        let names = all.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".acasong") }
        let dated = names.map { name -> (String, Date) in
            (name, ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + name))?[.modificationDate] as? Date) ?? .distantPast)
        }
        for (name, _) in dated.sorted(by: { $0.1 > $1.1 }).dropFirst(keep) { try? FileManager.default.removeItem(atPath: folder + "/" + name) }
    }

    /// The song as the page shows it, written into `folder`: the SVG with
    /// the part highlighted (gzip, written as it is made) and its time map
    /// as JSON (width of the scroll, every onset: tick, sample, measure,
    /// system, x; every system's top, bottom and first measure). What
    /// `acapella page-score` runs; returns a line saying what it made.
    public static func engravePage(_ score: Score, part: String, engraver: Engraver, widthMM: Double?, into folder: String) throws -> String {
        var options = EngraveOptions()
        options.highlight = part
        if let widthMM {
            options.pageWidthMM = widthMM
            options.marginMM = 4
        }
        let engraving = try engraver.engrave(score, options: options)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let onsets: [[String: Any]] = engraving.timeMap.map {
            ["tick": $0.tick, "sample": $0.sample, "measure": $0.measure, "system": $0.system, "x": $0.x]
        }
        let systems: [[String: Any]] = engraving.systems.map { ["top": $0.top, "bottom": $0.bottom, "first": $0.measures.lowerBound] }
        let map: [String: Any] = ["width": engraving.scroll.width, "onsets": onsets, "systems": systems]
        try AtomicFile.write([UInt8](try JSONSerialization.data(withJSONObject: map, options: [.sortedKeys])), to: folder + "/" + WebScore.timeMapName)
        let writer = try GzipFileWriter(path: folder + "/" + WebScore.svgName)
        var failure: WebFailure?
        let text = SVGWriter.TextFontSource(family: engraving.textFamily, faces: ShippedFiles.textFaces.map { ($0.style, .url("/" + $0.file)) })
        SVGWriter.write(engraving.scroll, staffSpaceMM: engraving.staffSpaceMM, fontName: engraving.fontName, font: .url("/bravura.otf"), text: text) { piece in
            guard failure == nil else { return }
            do { try writer.write(piece) } catch { failure = error as? WebFailure ?? WebFailure(500, "\(error)") }
        }
        if let failure { throw failure }
        try writer.finish()
        return "engraved: \(engraving.systems.count) system\(engraving.systems.count == 1 ? "" : "s"), \(engraving.timeMap.count) onsets"
    }

    // MARK: Uploads (web threads)

    public func upload(fileName: String, bytes: [UInt8]) -> Result<WebUpload, WebFailure> {
        let name = fileName.removingPercentEncoding ?? fileName
        let format = (name as NSString).pathExtension.lowercased()
        guard format == "acasong" || MusicXML.fileExtensions.contains(format) else {
            return .failure(WebFailure(415, "that file is not a song: send .acasong, .musicxml, .xml or .mxl"))
        }
        guard !bytes.isEmpty else { return .failure(WebFailure(400, "the file is empty")) }
        // The client's name only says the format and names the file in
        // messages (its last component, plain characters); never a path.
        let base = String(name.split(separator: "/").last ?? "")
        let plain = String(base.filter { $0.isLetter || $0.isNumber || " -_.()".contains($0) }.prefix(60))
        let shown = plain.lowercased().hasSuffix("." + format) ? plain : "upload.\(format)"
        let score: Score
        var report: [String] = []
        var text: String
        if format == "acasong" {
            do { score = try Acasong.parse(bytes: bytes, file: shown) } catch {
                return .failure(WebFailure(422, error.errors.prefix(3).map(\.description).joined(separator: "; ")))
            }
            text = String(decoding: bytes, as: UTF8.self)
        } else {
            do {
                let result = try MusicXML.importScore(bytes: bytes, fileName: shown)
                score = result.score
                report = result.report.lines
            } catch {
                return .failure(WebFailure(422, error.description))
            }
            text = Acasong.serialize(score)
        }
        let title = score.title ?? "Untitled"
        // Stored under a name of the box's making, inside the library folder only.
        let stem = String(title.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "-" }.prefix(40))
            .split(separator: "-").joined(separator: "-")
        do { try Folders.make(libraryFolder) } catch { return .failure(WebFailure(507, error.description)) }
        return shared.withLock { shared -> Result<WebUpload, WebFailure> in
            let uploads = shared.songs.filter { $0.path.hasPrefix(libraryFolder + "/") }.count
            guard uploads < Self.maximumUploads else {
                return .failure(WebFailure(507, "the library holds \(Self.maximumUploads) songs from the page; remove some from \(libraryFolder) first"))
            }
            // A name no song of the library has, whose projects are no other
            // song's: the library as the page knows it, and every song file
            // on the disk (one a sync or a stick brought that the loop has not taken in yet).
            let library = shared.songs.map(\.path) + SongLibrary.all(shipped: ShippedFiles.songs, dataDirectory: dataDirectory)
            let path = libraryFolder + "/" + SongProjects.freeName(stem: stem.isEmpty ? "song" : stem, ext: "acasong", in: libraryFolder, for: score,
                                                                   library: library, dataDirectory: dataDirectory)
            if !text.hasSuffix("\n") { text += "\n" }
            do { try AtomicFile.write(Array(text.utf8), to: path) } catch { return .failure(WebFailure(507, "cannot store the song: \(error)")) }
            shared.songs.append((path, SongSummary(score, title: title)))
            shared.unlearned.append(path)
            shared.libraryVersion += 1
            shared.live.libraryVersion = shared.libraryVersion
            return .success(WebUpload(title: title, index: shared.songs.count - 1, report: report))
        }
    }

    // MARK: Downloads (web threads)

    public func download(_ what: WebDownload) -> Result<WebFile, WebFailure> {
        let (project, files, takes) = shared.withLock { ($0.project, $0.takeFiles, $0.takes) }
        guard let project else { return .failure(WebFailure(404, "no song is open")) }
        let stem = ((project as NSString).lastPathComponent as NSString).deletingPathExtension
        // What is not there is a 404 at once, from what the control loop published.
        let arguments: [String], format: String, name: String
        switch what {
        case .take(let id):
            guard let file = files[id] else { return .failure(WebFailure(404, "no finished take \(id) in \(takes.song)")) }
            return .success(WebFile(path: file, contentType: "audio/wav", downloadName: "\(stem)-take-\(id).wav", temporary: false))
        case .takeWithOthers(let id):
            guard files[id] != nil else { return .failure(WebFailure(404, "no finished take \(id)")) }
            (arguments, format, name) = (["mix", project, "--take", String(id)], "wav", "\(stem)-take-\(id)-with-others")
        case .mix(let chosen):
            (arguments, format, name) = (["mix", project], chosen, "\(stem)-mix")
        case .practice(let part, let chosen):
            guard part < takes.parts.count else { return .failure(WebFailure(404, "no part \(part + 1) in \(takes.song)")) }
            (arguments, format, name) = (["mix", project, "--practice", takes.parts[part]], chosen, "\(stem)-part-\(part + 1)-practice")
        case .project:
            (arguments, format, name) = (["export", project], "zip", "\(stem).acaproj")
        }
        guard rendering.add(1, ordering: .relaxed).newValue <= Self.maximumRenders else {
            rendering.subtract(1, ordering: .relaxed)
            return .failure(WebFailure(503, "the box is already rendering \(Self.maximumRenders) downloads; try again in a moment"))
        }
        defer { rendering.subtract(1, ordering: .relaxed) }
        do { try Folders.make(exportsFolder) } catch { return .failure(WebFailure(507, error.description)) }
        // Time in proportion to the audio: a long project heard at another tempo or key is stretched whole first.
        let audio = takes.takes.filter(\.active).reduce(0) { $0 + $1.seconds }
        return make(arguments, to: exportsFolder + "/web-\(UUID().uuidString).\(format)", name: "\(name).\(format)", limits: Self.mixLimits(audioSeconds: audio))
    }

    /// What a download's mix may use: the children's memory, and CPU and
    /// time in proportion to the takes it plays (stretching one whole, at
    /// the finer quality, takes about a tenth of its length on a PC and
    /// several times that on a Pi).
    public static func mixLimits(audioSeconds: Double) -> BoundedChild.Limits {
        var limits = childLimits
        limits.cpuSeconds += Int(audioSeconds * 2)
        limits.wallSeconds += Int(audioSeconds * 4)
        return limits
    }

    /// A download made by `acapella` in a process of its own — `mix` (the
    /// one mix path, `ProjectExport`: as last rehearsed, takes streamed,
    /// what `acapella mix` and the USB stick write) or `export` (the
    /// bundle) — bounded, niced and tied to the box like the engraver, so
    /// the box's locked memory stays what playing needs; written to a
    /// temporary file the server sends and removes.
    func make(_ arguments: [String], to path: String, name: String, limits: BoundedChild.Limits = childLimits) -> Result<WebFile, WebFailure> {
        let failure: String?
        switch BoundedChild.run(program, arguments + ["-o", path], limits: limits) {
        case .failure(let error): failure = error.description
        case .success(let outcome): failure = outcome.failure(limits: limits)
        }
        if let failure {
            unlink(path)
            return .failure(WebFailure(500, "\(arguments[0]): " + failure))
        }
        let types = ["wav": "audio/wav", "flac": "audio/flac", "mp3": "audio/mpeg", "m4a": "audio/mp4", "zip": "application/zip"]
        return .success(WebFile(path: path, contentType: types[(path as NSString).pathExtension] ?? "application/octet-stream", downloadName: name, temporary: true))
    }
}

/// A song file's title and tags, from its first lines (the library lists
/// them without parsing every song).
public enum SongHeader {
    public static func read(_ path: String) -> (title: String, tags: [String]) {
        var title = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        var tags: [String] = []
        guard let handle = FileHandle(forReadingAtPath: path), let head = try? handle.read(upToCount: 4_096) else { return (title, tags) }
        try? handle.close()
        for line in String(decoding: head, as: UTF8.self).split(separator: "\n").prefix(20) {
            if line.hasPrefix("title:") { title = line.dropFirst(6).trimmingCharacters(in: .whitespaces) }
            if line.hasPrefix("tags:") { tags = line.dropFirst(5).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
        }
        return (title, tags)
    }
}

extension SongHeader {
    /// `text` with its `title:` and `tags:` lines (the header's, before the
    /// first part) replaced by these (nil: as they are), or added after
    /// the first line when it has none.
    public static func rewrite(_ text: String, title: String?, tags: [String]?) -> String {
        var lines = text.components(separatedBy: "\n")
        let header = lines.firstIndex { $0.hasPrefix("part ") } ?? lines.count
        for (key, value) in [("title:", title), ("tags:", tags?.joined(separator: ", "))] {
            guard let value else { continue }
            if let index = lines[..<header].firstIndex(where: { $0.hasPrefix(key) }) {
                lines[index] = value.isEmpty ? "" : "\(key) \(value)"
            } else if !value.isEmpty {
                lines.insert("\(key) \(value)", at: min(1, lines.count))
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// What the library lists of a song: its title and tags, its parts, how
/// many measures and seconds (at its written tempo, as sung: repeats
/// unfolded) and how many verses. A song that cannot be read keeps its
/// header's title and tags and says nothing more.
public struct SongSummary: Hashable, Sendable {
    public var title: String
    public var tags: [String]
    public var parts: [String] = []
    public var measures = 0
    public var seconds = 0
    public var verses = 0

    public init(_ score: Score, title: String) {
        self.title = title
        tags = score.tags
        parts = score.parts.map(\.name)
        measures = score.measureNumbers.map { $0.count } ?? 0
        if let map = try? TimeMap(tempos: score.tempos, sampleRate: 48_000) {
            seconds = Int((Double(map.sample(atTick: score.endTick)) / 48_000).rounded())
        }
        verses = score.verseCount
    }

    public static func read(_ path: String) -> SongSummary {
        if let score = try? SongLibrary.score(of: path) {
            // Untitled: its file's name, as the header's reading has it.
            return SongSummary(score, title: score.title ?? ((path as NSString).lastPathComponent as NSString).deletingPathExtension)
        }
        let header = SongHeader.read(path)
        var summary = SongSummary(Score(), title: header.title)
        summary.tags = header.tags
        return summary
    }
}

/// The page's files, read once at start from the shipped `Web/` folder
/// (the box adds the music font): the only files the server ever sends.
enum WebAssets {
    static func load() -> [String: (type: String, bytes: [UInt8])] {
        var assets: [String: (type: String, bytes: [UInt8])] = [:]
        if let folder = ShippedFiles.path("Web", installed: "share/acapella/web") {
            for (path, file, type) in [("/", "index.html", "text/html; charset=utf-8"), ("/app.js", "app.js", "text/javascript; charset=utf-8"),
                                       ("/style.css", "style.css", "text/css; charset=utf-8")] {
                if let data = FileManager.default.contents(atPath: folder + "/" + file) { assets[path] = (type, [UInt8](data)) }
            }
        }
        return assets
    }
}

extension WebLiveState {
    /// The page's view of a readout and the engine's snapshot.
    init(_ readout: ReadoutState, serial: Int64, sample: Int64) {
        self.init()
        self.serial = serial
        state = readout.mode.rawValue
        self.sample = sample
        measure = readout.measure
        beat = readout.beat
        song = readout.song
        part = readout.part
        note = readout.note
        cents = readout.cents
        lastNote = readout.lastNote
        lastCents = readout.lastCents
        level = readout.inputDB
        review = readout.mode == .review
        message = readout.message
        reference = readout.reference
        referenceLyric = readout.referenceLyric
    }
}

/// Work beside the box (renders for downloads, take analyses).
enum BackgroundWork {
    /// The calling thread niced to 10: below the control loop and far below
    /// the render thread (on Linux, `who` 0 is the calling thread).
    static func lowerThisThread() {
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
    }
}
