import AcapellaMusicXML
public import AcapellaProject
public import AcapellaScore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The songs a box offers: the shipped ones (read-only), and the user's —
/// `songs/` in the data directory (files dropped there by a copy, a share
/// or a USB stick) and `library/` (songs sent from the web page).
/// MusicXML dropped into `songs/` is imported on arrival: `Hymn.mxl` gives
/// `Hymn.acasong` and its import report `Hymn.import.txt` beside it; a file
/// that cannot be imported stays as it is, its error in `Hymn.mxl.error.txt`.
public enum SongLibrary {
    /// The user's folder in a data directory.
    public static func userFolder(_ dataDirectory: String) -> String { dataDirectory + "/songs" }
    /// Songs sent from the web page.
    public static func uploadFolder(_ dataDirectory: String) -> String { dataDirectory + "/library" }

    /// A MusicXML file met in the folder.
    public struct Arrival: Hashable, Sendable {
        /// The file dropped in.
        public var source: String
        /// The song made of it (nil when it failed).
        public var song: String?
        /// One line: "Hymn.mxl: imported as 'Hymn' (4 parts; 2 notes in the report)", or the error.
        public var message: String
    }

    /// The `.acasong` files of a folder (hidden ones aside), by name.
    public static func songs(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(".acasong") && !$0.hasPrefix(".") }.sorted().map { folder + "/" + $0 }
    }

    /// Every song a box with `dataDirectory` offers: shipped first, then the user's.
    public static func all(shipped: String?, dataDirectory: String) -> [String] {
        (shipped.map { songs(in: $0) } ?? []) + songs(in: uploadFolder(dataDirectory)) + songs(in: userFolder(dataDirectory))
    }

    /// Whether a song path is the user's (not shipped).
    public static func isUsers(_ path: String, dataDirectory: String) -> Bool {
        path.hasPrefix(userFolder(dataDirectory) + "/") || path.hasPrefix(uploadFolder(dataDirectory) + "/")
    }

    static func modified(_ path: String) -> timespec? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mtim
    }

    static func newer(_ a: timespec, than b: timespec) -> Bool { (a.tv_sec, a.tv_nsec) > (b.tv_sec, b.tv_nsec) }

    /// Imports every MusicXML file in `folder` that has no up-to-date song
    /// (or error) beside it. A song the user wrote of the same name is never
    /// overwritten: only a song this import made (its report beside it) is
    /// replaced when its MusicXML changes.
    public static func importArrivals(in folder: String) -> [Arrival] {
        var arrivals: [Arrival] = []
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        for name in names where MusicXML.isFile(name) {
            let source = folder + "/" + name
            guard let arrived = modified(source) else { continue }
            let stem = (name as NSString).deletingPathExtension
            let song = folder + "/" + stem + ".acasong", report = folder + "/" + stem + ".import.txt", errorFile = source + ".error.txt"
            if let made = modified(song), !newer(arrived, than: made) { continue }
            if let failed = modified(errorFile), !newer(arrived, than: failed) { continue }
            if modified(song) != nil && modified(report) == nil {
                let message = "\(name): not imported: \(stem).acasong is already there and was not made from it; rename one of them"
                try? AtomicFile.write(Array((message + "\n").utf8), to: errorFile)
                arrivals.append(Arrival(source: source, song: nil, message: message))
                continue
            }
            do {
                let data = try readLimited(source)
                let result = try MusicXML.importScore(bytes: data, fileName: name)
                var text = Acasong.serialize(result.score)
                if !text.hasSuffix("\n") { text += "\n" }
                let lines = result.report.lines
                let header = "Imported from \(name) (\(result.score.parts.count) parts: \(result.score.parts.map(\.name).joined(separator: ", ")))."
                try AtomicFile.write(Array(([header] + (lines.isEmpty ? ["Nothing needed changing."] : lines)).joined(separator: "\n").utf8) + [10], to: report)
                try AtomicFile.write(Array(text.utf8), to: song)
                unlink(errorFile)
                let title = result.score.title ?? stem
                arrivals.append(Arrival(source: source, song: song, message: "\(name): imported as '\(title)' (\(result.score.parts.count) parts)"
                                        + (lines.isEmpty ? "" : "; \(lines.count) note\(lines.count == 1 ? "" : "s") in \(stem).import.txt")))
            } catch {
                let reason = "\(error)".split(separator: "\n").first.map(String.init) ?? "unreadable"
                let message = (reason.hasPrefix(name) ? reason : "\(name): \(reason)") + "; not imported (the file stays; mend or replace it)"
                try? AtomicFile.write(Array((message + "\n").utf8), to: errorFile)
                arrivals.append(Arrival(source: source, song: nil, message: message))
            }
        }
        return arrivals
    }

    /// A file's bytes, refused over the song size limit.
    static func readLimited(_ path: String) throws -> [UInt8] {
        do { return try SongFileReader.read(path) } catch { throw ProjectError(description: error.description) }
    }

    /// A song file's score: `.acasong` parsed, MusicXML imported in memory.
    public static func score(of path: String) throws(ProjectError) -> Score {
        let bytes: [UInt8]
        do { bytes = try readLimited(path) } catch { throw ProjectError(description: "\(error)") }
        if MusicXML.isFile(path) {
            do { return try MusicXML.importScore(bytes: bytes, fileName: path).score } catch {
                throw ProjectError(description: "\(error)".split(separator: "\n").first.map(String.init) ?? "\(path): not a song")
            }
        }
        // Parsed once (a long song's notes are megabytes).
        do { return try Acasong.parse(bytes: bytes, file: path) } catch { throw ProjectError(description: error.errors.first.map { "\($0)" } ?? path) }
    }

    /// A song file's text: `.acasong` as it is, MusicXML imported in memory.
    public static func songText(_ path: String) throws(ProjectError) -> String {
        let bytes: [UInt8]
        do { bytes = try readLimited(path) } catch { throw ProjectError(description: "\(error)") }
        if MusicXML.isFile(path) {
            do { return Acasong.serialize(try MusicXML.importScore(bytes: bytes, fileName: path).score) } catch {
                throw ProjectError(description: "\(error)".split(separator: "\n").first.map(String.init) ?? "\(path): not a song")
            }
        }
        do { _ = try Acasong.parse(bytes: bytes, file: path) } catch { throw ProjectError(description: error.errors.first.map { "\($0)" } ?? path) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What the singer removes goes to the data folder's trash, kept there 30
/// days, never straight to nothing; the box empties what is older at
/// start. A song (`trash/songs/YYYYMMDD-HHMMSS-NAME/`) goes with the files
/// beside it of the same name — the MusicXML it was imported from, its
/// report — and its projects (its takes) stay; a project goes whole, takes
/// and all (`trash/projects/YYYYMMDD-HHMMSS-NAME.acaproj`).
public enum Trash {
    public static func songsFolder(_ dataDirectory: String) -> String { dataDirectory + "/trash/songs" }
    public static func projectsFolder(_ dataDirectory: String) -> String { dataDirectory + "/trash/projects" }
    public static let keptDays = 30

    /// Whether `path` is one of the user's songs (uploaded or dropped into
    /// songs/), which may be removed; a shipped song may not.
    public static func isUsers(_ path: String, dataDirectory: String) -> Bool {
        [SongLibrary.userFolder(dataDirectory), SongLibrary.uploadFolder(dataDirectory)].contains((path as NSString).deletingLastPathComponent)
    }

    /// Whether a song of the file name `file` was removed (and is still in the trash).
    public static func holdsSong(named file: String, dataDirectory: String) -> Bool {
        let folder = songsFolder(dataDirectory)
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains { FileManager.default.fileExists(atPath: folder + "/" + $0 + "/" + file) }
    }

    /// Moves `song` and its files of the same name into a new folder of the
    /// trash; returns that folder.
    static func move(song: String, dataDirectory: String, now: Date = Date()) throws -> String {
        let folder = (song as NSString).deletingLastPathComponent
        let stem = ((song as NSString).lastPathComponent as NSString).deletingPathExtension
        guard FileManager.default.fileExists(atPath: song) else { throw ProjectError(description: "\(song): no such song") }
        let target = unused(songsFolder(dataDirectory) + "/" + fitted("\(stamp(now))-\(stem)"))
        try Folders.make(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let sources = Set(["acasong", "musicxml", "xml", "mxl"].map { "\(stem).\($0)" })
        let beside = names.filter { sources.contains($0) || ($0.hasPrefix(stem + ".") && ($0.hasSuffix(".import.txt") || $0.hasSuffix(".error.txt"))) }
        // The song first: once it is gone the library no longer lists it.
        for name in [(song as NSString).lastPathComponent] + beside.filter({ $0 != (song as NSString).lastPathComponent }).sorted() {
            try moveInto(folder + "/" + name, target + "/" + name)
        }
        return target
    }

    /// Moves a project, whole, into the trash (one rename: it is in the
    /// projects folder or in the trash, never half in each); returns where.
    /// The caller holds it for writing, so nobody is recording into it.
    static func move(project: String, dataDirectory: String, now: Date = Date()) throws -> String {
        let folder = projectsFolder(dataDirectory)
        try Folders.make(folder)
        let target = unused(folder + "/" + fitted("\(stamp(now))-\((project as NSString).lastPathComponent)"))
        try moveInto(project, target)
        return target
    }

    /// A name for the trash that fits a file name (255 bytes) with room
    /// for `unused`'s "-2": a long one loses the end of its stem, never its
    /// stamp or its extension (a project of a 200-byte song's name goes to
    /// the trash as any other).
    static func fitted(_ name: String, bytes: Int = 250) -> String {
        guard name.utf8.count > bytes else { return name }
        let ext = (name as NSString).pathExtension
        let suffix = ext.isEmpty ? "" : "." + ext
        var stem = Substring((name as NSString).deletingPathExtension)
        while stem.utf8.count + suffix.utf8.count > bytes { stem = stem.dropLast() }
        return String(stem) + suffix
    }

    /// `path`, or `path-2`, `path-3`… the first that is not there (two
    /// removed in the same second never land in one place).
    static func unused(_ path: String) -> String {
        var candidate = path, number = 2
        while FileManager.default.fileExists(atPath: candidate) {
            candidate = path + "-\(number)"
            number += 1
        }
        return candidate
    }

    static func moveInto(_ from: String, _ to: String) throws {
        guard rename(from, to) == 0 else {
            throw ProjectError(description: "\(from): cannot be moved to the trash (\(String(cString: strerror(errno))))")
        }
    }

    /// Empties what was put in the trash more than `keptDays` ago; returns
    /// what was removed ("songs/NAME", "projects/NAME").
    @discardableResult
    static func purge(dataDirectory: String, now: Date = Date()) -> [String] {
        var removed: [String] = []
        for (kind, trash) in [("songs", songsFolder(dataDirectory)), ("projects", projectsFolder(dataDirectory))] {
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: trash)) ?? []).sorted() {
                guard let put = putAt(String(name.prefix(15))), now.timeIntervalSince(put) > Double(keptDays) * 86_400 else { continue }
                if (try? FileManager.default.removeItem(atPath: trash + "/" + name)) != nil { removed.append(kind + "/" + name) }
            }
        }
        return removed
    }

    /// `YYYYMMDD-HHMMSS` in UTC (gmtime_r and timegm: no time-zone data
    /// loaded into the box for its trash).
    static func stamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d%02d%02d-%02d%02d%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// When a name's stamp (`stamp`) says it was put in the trash; nil: no stamp.
    static func putAt(_ text: String) -> Date? {
        let digits = Array(text.utf8)
        guard digits.count == 15, digits[8] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for digit in digits[range] {
                guard (48...57).contains(digit) else { return nil }
                value = value * 10 + Int32(digit - 48)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11), let minute = number(11..<13),
              let second = number(13..<15), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}

/// A song's projects: the one every song has (`projects/STEM.acaproj`,
/// called Main) and those the singer names beside it
/// (`projects/STEM (Choir).acaproj`) — a singer's own, the choir's, a
/// second try. Each is a whole project: its own takes and session.
public enum SongProjects {
    /// What the page and the log call the song's first project.
    public static let firstName = "Main"
    /// Names are short words: letters, digits, spaces and - _ ' . , &.
    public static let longestName = 40

    public static func stem(_ song: String) -> String {
        Project.name(forSong: ((song as NSString).lastPathComponent as NSString).deletingPathExtension)
    }

    /// Where the song's project called `name` is (nil or Main: the first).
    public static func path(song: String, name: String?, dataDirectory: String) -> String {
        let named = name.flatMap { $0.caseInsensitiveCompare(firstName) == .orderedSame ? nil : " (\($0))" } ?? ""
        return dataDirectory + "/projects/\(stem(song))\(named).acaproj"
    }

    /// The name of the song's project at `path` (Main for the first; nil:
    /// not one of the song's).
    public static func name(of path: String, song: String, dataDirectory: String) -> String? {
        if path == self.path(song: song, name: nil, dataDirectory: dataDirectory) { return firstName }
        // By bytes, not by characters: a name's first mark never merges with the "(" before it.
        let file = Array((path as NSString).lastPathComponent.utf8)
        let prefix = Array((stem(song) + " (").utf8), suffix = Array(").acaproj".utf8)
        guard (path as NSString).deletingLastPathComponent == dataDirectory + "/projects", file.starts(with: prefix),
              file.reversed().starts(with: suffix.reversed()), file.count > prefix.count + suffix.count else { return nil }
        let name = String(decoding: file[prefix.count..<(file.count - suffix.count)], as: UTF8.self)
        // Read leniently, as a manifest's names are: a project made under
        // older rules (or another box's) is still found; only what would
        // garble a line is not.
        return name.isEmpty || name.unicodeScalars.contains(where: SafeText.isControl) ? nil : name
    }

    /// The song's projects by name: Main first (whether or not it exists
    /// yet: it is made when first opened), then the named ones as found —
    /// only those made from this song (their mark names its file): a
    /// project that is another song's first (a song called "Hymn (Choir)",
    /// in the library or removed from it) is that song's, not this one's.
    public static func names(song: String, dataDirectory: String, library: [String]) -> [String] {
        let others = Set(library.filter { $0 != song }.map { path(song: $0, name: nil, dataDirectory: dataDirectory) })
        let folder = dataDirectory + "/projects"
        let found = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            .map { folder + "/" + $0 }.filter { !others.contains($0) }
            .compactMap { project in name(of: project, song: song, dataDirectory: dataDirectory).map { (project, $0) } }
            .filter { $0.1 != firstName && madeFrom($0.0) == (song as NSString).lastPathComponent }.map(\.1)
        return [firstName] + found.sorted { $0.localizedStandardCompare($1) == .orderedAscending }
    }

    /// Which project each song last opened in on this box
    /// (`projects-chosen.json` in the data folder, by the song's file
    /// name; Main is not written): a restart comes back to it.
    static func chosenFile(_ dataDirectory: String) -> String { dataDirectory + "/projects-chosen.json" }

    static func chosenNames(_ dataDirectory: String) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: chosenFile(dataDirectory)), data.count < 1 << 20,
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        return object.compactMapValues { $0 as? String }
    }

    /// The project `song` last opened in, when it is still one of its own (nil: Main).
    public static func chosen(song: String, dataDirectory: String, library: [String]) -> String? {
        guard let name = chosenNames(dataDirectory)[(song as NSString).lastPathComponent], name != firstName,
              names(song: song, dataDirectory: dataDirectory, library: library).contains(name) else { return nil }
        return path(song: song, name: name, dataDirectory: dataDirectory)
    }

    /// Remembers that `song` opened in the project `name`.
    public static func remember(song: String, name: String, dataDirectory: String) throws {
        var names = chosenNames(dataDirectory)
        names[(song as NSString).lastPathComponent] = name == firstName ? nil : name
        let data = try JSONSerialization.data(withJSONObject: names, options: [.sortedKeys, .prettyPrinted])
        try AtomicFile.write([UInt8](data) + [0x0A], to: chosenFile(dataDirectory))
    }

    /// The file a named project says it was made from (`song.txt`).
    public static let markName = Project.songMarkFile

    /// Marks a named project as made from `song` (its file's name).
    public static func mark(_ project: String, song: String) throws {
        try AtomicFile.write(Array(((song as NSString).lastPathComponent + "\n").utf8), to: project + "/" + markName)
    }

    /// The song file a project says it was made from (nil: no mark — a
    /// song's first project from before every project was marked): its
    /// mark's first line exactly (a file name may begin with a space); an
    /// empty mark is no mark; a mark that is not a plain file (a FIFO, a
    /// link) is never waited on nor followed, and reads as a mark of no song.
    public static func madeFrom(_ project: String) -> String? {
        let descriptor = open(project + "/" + markName, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT ? nil : unreadableMark }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return unreadableMark }
        var head = [UInt8](repeating: 0, count: 1_024)
        let got = read(descriptor, &head, head.count)
        guard got >= 0 else { return unreadableMark }
        let line = head[..<got].split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        let text = String(decoding: line, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// What a mark that cannot be read says: no song's file is called this.
    static let unreadableMark = "(an unreadable mark)/"

    // MARK: A project is its song's only

    /// Why the folder at `project` is not `song`'s to record into (nil: it
    /// is): it was made from another song. Each song's takes go to folders
    /// named from its file's name, and a song called "Hymn (Yak)" has its
    /// first project where Hymn's project 'Yak' is; the mark in the folder
    /// (`song.txt`, the song's file name) tells whose it is. A folder
    /// without one is a song's first project from before the marks: the
    /// song whose first project is there.
    public static func belongsElsewhere(_ project: String, song: String) -> String? {
        let file = (song as NSString).lastPathComponent
        guard let from = madeFrom(project), from != file else { return nil }
        let folder = "projects/" + (project as NSString).lastPathComponent
        if from == unreadableMark {
            return "\(SafeText.printable(file)): its takes would go into \(SafeText.printable(folder)), whose mark (\(markName)) cannot be read as a plain file; "
                + "see that it is one, readable by the box"
        }
        let which = name(of: project, song: from, dataDirectory: ((project as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent)
            .map { $0 == firstName ? "the takes of \(SafeText.printable(from))" : "the takes of \(SafeText.printable(from))'s project '\($0)'" }
            ?? "the takes of \(SafeText.printable(from))"
        return "\(SafeText.printable(file)): its takes would go into \(SafeText.printable(folder)), which holds \(which); rename the song's file to keep them apart"
    }

    /// Why `song` cannot join a library holding `earlier` (nil: it can):
    /// a song there shares its projects (their file names' stems make one
    /// folder name: Hymn.mxl and Hymn.acasong, or one file in two
    /// folders), or `refusal(ofArriving:)` says why not.
    public static func conflict(song: String, earlier: [String], dataDirectory: String) -> String? {
        if let same = earlier.first(where: { $0 != song && stem($0) == stem(song) }) {
            return "\(SafeText.printable(song)): a song of this name is already in the library (\(SafeText.printable(same))), and the two would share their takes; rename one of them"
        }
        return refusal(ofArriving: song, dataDirectory: dataDirectory)
    }

    /// Why `song`, new to the library, may not have the first project its
    /// name gives it (nil: it may): another song's mark is there, or a song
    /// of its file name was removed (it is in the trash) and the takes kept
    /// there are of other parts — another song sent under a removed one's
    /// name. A song already in the library is never refused for its parts
    /// (one whose parts were edited keeps its takes).
    public static func refusal(ofArriving song: String, dataDirectory: String) -> String? {
        let first = path(song: song, name: nil, dataDirectory: dataDirectory)
        if let elsewhere = belongsElsewhere(first, song: song) { return elsewhere }
        guard Trash.holdsSong(named: (song as NSString).lastPathComponent, dataDirectory: dataDirectory) else { return nil }
        return otherMusic(first, song: song)
    }

    /// Why the project at `project` is not `song`'s though its mark says so
    /// (or it has none): the music it keeps has other parts — a song
    /// removed, and another sent under its file name, must not open the
    /// removed one's takes. A song corrected (its notes, its title) keeps
    /// its parts and its takes. nil: the same parts, or nothing to compare.
    public static func otherMusic(_ project: String, song: String) -> String? {
        guard let kept = keptScore(project), let score = try? SongLibrary.score(of: song) else { return nil }
        let keptParts = kept.parts.map(\.name), parts = score.parts.map(\.name)
        guard keptParts != parts else { return nil }
        return "\(SafeText.printable((song as NSString).lastPathComponent)): its takes would go into \(SafeText.printable("projects/" + (project as NSString).lastPathComponent)), "
            + "which holds the takes of another song (its parts: \(SafeText.printable(keptParts.joined(separator: ", "))); this song's: \(SafeText.printable(parts.joined(separator: ", ")))); "
            + "rename the song's file to keep them apart"
    }

    /// The songs of `candidates` that may join a library holding
    /// `earlier`, in order, and why each of the others may not.
    public static func admissible(_ candidates: [String], after earlier: [String], dataDirectory: String) -> (songs: [String], refused: [String]) {
        var songs: [String] = [], refused: [String] = []
        for song in candidates {
            if let why = conflict(song: song, earlier: earlier + songs, dataDirectory: dataDirectory) { refused.append(why) } else { songs.append(song) }
        }
        return (songs, refused)
    }

    /// Whether a new song with `score` may be stored as `file` (a file
    /// name) beside `library`: no song there has that file name, and the
    /// first project it would open in is not there — or is this very music
    /// come back (a song removed and sent again finds its takes), and not
    /// another song's.
    public static func isFreeName(_ file: String, for score: Score, library: [String], dataDirectory: String) -> Bool {
        guard !library.contains(where: { stem($0) == stem(file) }) else { return false }
        let project = path(song: file, name: nil, dataDirectory: dataDirectory)
        guard FileManager.default.fileExists(atPath: project) else { return true }
        if belongsElsewhere(project, song: file) != nil { return false }
        guard let kept = keptScore(project) else { return false }
        return sameMusic(kept, score)
    }

    /// The music a project keeps (its `score.acasong`; nil: none readable).
    static func keptScore(_ project: String) -> Score? {
        guard let data = FileManager.default.contents(atPath: project + "/score.acasong") else { return nil }
        return try? Acasong.parse(bytes: [UInt8](data), file: "score.acasong")
    }

    /// Whether two scores are one song's music (titles and tags aside:
    /// those may be changed from the page).
    public static func sameMusic(_ a: Score, _ b: Score) -> Bool {
        a.parts.map(\.name) == b.parts.map(\.name) && a.parts.allSatisfy { a.fingerprint(ofPart: $0.name) == b.fingerprint(ofPart: $0.name) }
    }

    /// A free file name for a new song (`isFreeName`): `stem.ext`, else
    /// `stem-2.ext`, `stem-3.ext`…, none of them a file in `folder` either.
    public static func freeName(stem: String, ext: String, in folder: String, for score: Score, library: [String], dataDirectory: String) -> String {
        var name = "\(stem).\(ext)", number = 2
        while FileManager.default.fileExists(atPath: folder + "/" + name) || !isFreeName(name, for: score, library: library, dataDirectory: dataDirectory) {
            name = "\(stem)-\(number).\(ext)"
            number += 1
        }
        return name
    }

    /// Projects one song may have.
    public static let most = 50

    /// Why `name` cannot name a new project (nil: it can).
    public static func nameProblem(_ name: String, taken: [String]) -> String? {
        if name.isEmpty || name.trimmingCharacters(in: .whitespaces) != name { return "a project's name is a word or a few, without spaces around them" }
        if let problem = SafeText.nameProblem(name, most: longestName) { return "a project's name \(problem)" }
        let allowed = CharacterSet.letters.union(.decimalDigits).union(CharacterSet(charactersIn: " -_'.,&\u{200C}\u{200D}"))
        if !name.unicodeScalars.allSatisfy({ allowed.contains($0) }) { return "a project's name is letters, digits, spaces and - _ ' . , & only" }
        if let first = name.unicodeScalars.first, !CharacterSet.alphanumerics.subtracting(.nonBaseCharacters).contains(first) {
            return "a project's name starts with a letter or a digit"
        }
        if let same = taken.first(where: { lookAlike($0) == lookAlike(name) }) { return "this song already has a project called '\(same)'" }
        return nil
    }

    /// What two names that read alike share: the same letters whatever
    /// their case, width or compatibility form (Ａ and A, ﬁ and fi), the
    /// accents kept (Á is not A).
    static func lookAlike(_ name: String) -> String {
        String(String.UnicodeScalarView(name.precomposedStringWithCompatibilityMapping.folding(options: [.caseInsensitive, .widthInsensitive], locale: nil)
            .unicodeScalars.filter { !SafeText.isJoiner($0) }))
    }
}
