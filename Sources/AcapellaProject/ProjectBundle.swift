internal import CZip
import AcapellaEngine
import AcapellaScore
import Foundation

/// A project as one file to carry away: a zip of its folder as a reader
/// sees it — the manifest, the song and every finished take with its
/// sidecar, under `NAME.acaproj/`. A take still being recorded is left out
/// (it is not whole yet). Audio is stored, text compressed.
public enum ProjectBundle {
    /// Writes the bundle of `project` (opened for reading) to `output`;
    /// a partial file is removed on failure. (libzip writes a temporary file
    /// beside `output` and renames it into place when it closes: a bundle
    /// under its final name is always whole.)
    public static func write(_ project: Project, to output: String) throws(ProjectError) {
        let folder = (project.path as NSString).lastPathComponent
        var files = ["manifest.json", "score.acasong"]
        // The song it was made from (its mark) goes with it: imported on another box it is the same song's.
        var status = stat()
        if lstat(project.path + "/" + Project.songMarkFile, &status) == 0, status.st_mode & S_IFMT == S_IFREG { files.append(Project.songMarkFile) }
        // Only what is the project's own: a take whose record names a file
        // outside its takes folder (or a link) is not carried.
        for take in project.manifest.takes where take.state != .recording && (try? project.takePath(take)) != nil {
            files.append(take.file)
            let sidecar = (take.file as NSString).deletingPathExtension + ".json"
            if let path = try? project.sidecarPath(take.file), FileManager.default.fileExists(atPath: path) { files.append(sidecar) }
        }
        // The reference recording travels with its takes.
        if let reference = project.referenceRecord {
            files += [ReferenceRecord.recordFile, reference.file] + (reference.lyrics.map { [$0] } ?? [])
        }
        var code: Int32 = 0
        guard let archive = zip_open(output, ZIP_CREATE | ZIP_TRUNCATE, &code) else {
            throw ProjectError(description: "\(output): cannot make the bundle (libzip error \(code))")
        }
        func fail(_ what: String) -> ProjectError {
            let why = String(cString: zip_strerror(archive))
            zip_discard(archive)
            unlink(output)
            return ProjectError(description: "\(output): \(what): \(why)")
        }
        for file in files {
            guard let source = zip_source_file(archive, project.path + "/" + file, 0, -1) else { throw fail("cannot read \(file)") }
            let index = zip_file_add(archive, folder + "/" + file, source, zip_flags_t(ZIP_FL_ENC_UTF_8))
            guard index >= 0 else {
                zip_source_free(source)
                throw fail("cannot add \(file)")
            }
            if file.hasSuffix(".wav") { zip_set_file_compression(archive, zip_uint64_t(index), ZIP_CM_STORE, 0) }
        }
        guard zip_close(archive) == 0 else { throw fail("cannot write") }
    }

    /// Most entries a bundle may hold (the largest project's: two a take,
    /// the manifest, the song, the reference's three), and the most it may
    /// unpack to.
    public static let maximumEntries = 2 * Manifest.maximumTakes + 8
    public static let maximumBytes: UInt64 = 64 << 30
    /// The most a text entry may hold: the manifest (a largest project's is
    /// about 30 MB), the song, a sidecar or the reference's record or lyrics.
    static let maximumManifestBytes: UInt64 = 64 << 20
    static let maximumTextBytes: UInt64 = 1 << 20

    /// The most bytes a take's (or the reference's) audio may hold: what a
    /// recording of the whole song at a quarter of its tempo, with four
    /// measures of count-in and a minute to spare, holds as 32-bit float
    /// WAV at the project's rate — so a small bundle cannot unpack into a
    /// take bigger than any recording of its song could be.
    static func maximumAudioBytes(score: Score, sampleRate: Int) -> UInt64 {
        let rate = max(8_000, min(384_000, sampleRate))
        let seconds: Double
        if let schedule = try? Schedule(score: score, options: ScheduleOptions(sampleRate: rate, tempoScale: Rational(1, 4), countInMeasures: 4)) {
            seconds = Double(schedule.endSample - schedule.startSample) / Double(rate) + 60
        } else {
            seconds = 3_600
        }
        return UInt64(seconds * Double(rate)) * 4 + (1 << 16)
    }

    /// Unpacks the bundle `file` into `directory` as the project it holds
    /// (`directory/NAME.acaproj`), checked as any project is when opened:
    /// every entry must be the manifest, the song or a take's audio or
    /// sidecar under the one `NAME.acaproj/` folder (no other path, no
    /// "..", no links), within the size limits; it is unpacked into a
    /// hidden folder beside, opened for reading (the manifest and takes
    /// validated), and only then renamed to its name — an existing project
    /// of that name is never touched. Returns the project's path and what
    /// opening it reported.
    public static func unpack(_ file: String, into directory: String) throws(ProjectError) -> (path: String, report: [String]) {
        var error = zip_error_t()
        zip_error_init(&error)
        defer { zip_error_fini(&error) }
        var code: Int32 = 0
        guard let archive = zip_open(file, Int32(ZIP_RDONLY), &code) else {
            zip_error_init_with_code(&error, code)
            throw ProjectError(description: "\(file): not a project bundle (zip): \(String(cString: zip_error_strerror(&error)))")
        }
        defer { zip_discard(archive) }
        let count = zip_get_num_entries(archive, 0)
        guard count > 0, count <= maximumEntries else { throw ProjectError(description: "\(file): a bundle holds 1 to \(maximumEntries) files; this one \(count)") }
        // The entries, checked before anything is written.
        var folder: String?
        var entries: [(index: zip_uint64_t, name: String, size: UInt64)] = []
        var total: UInt64 = 0
        for index in 0..<zip_uint64_t(count) {
            var stat = zip_stat_t()
            guard zip_stat_index(archive, index, 0, &stat) == 0, let raw = stat.name else { throw ProjectError(description: "\(file): entry \(index) cannot be read") }
            let name = String(cString: raw)
            if name.hasSuffix("/") { continue }  // a folder entry
            let parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, parts[0].hasSuffix(".acaproj"), parts[0].count > 8, !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.hasPrefix(".") }),
                  folder == nil || folder == parts[0] else {
                throw ProjectError(description: "\(file): '\(name)' is not a file of one project (NAME.acaproj/…)")
            }
            let inside = parts.dropFirst().joined(separator: "/")
            let allowed = inside == "manifest.json" || inside == "score.acasong" || inside == Project.songMarkFile
                || (parts.count == 3 && parts[1] == "takes" && (inside.hasSuffix(".wav") || inside.hasSuffix(".json")))
                || [ReferenceRecord.recordFile, ReferenceRecord.audioFile, ReferenceRecord.lyricsFile].contains(inside)
            guard allowed else { throw ProjectError(description: "\(file): '\(name)' is not part of a project (the manifest, the song and its mark, takes/*.wav and *.json, the reference/ recording)") }
            // Only plain files: an entry made as a link (Unix mode in the external attributes) is refused.
            var system: zip_uint8_t = 0
            var attributes: zip_uint32_t = 0
            if zip_file_get_external_attributes(archive, index, 0, &system, &attributes) == 0, system == zip_uint8_t(ZIP_OPSYS_UNIX) {
                let type = (attributes >> 16) & 0o170000
                guard type == 0 || type == 0o100000 else { throw ProjectError(description: "\(file): '\(name)' is not a plain file") }
            }
            // One entry a name: a second manifest (or take) would be written over the first, or refused midway.
            guard !entries.contains(where: { $0.name == inside }) else { throw ProjectError(description: "\(file): '\(SafeText.printable(name))' is in the bundle twice") }
            folder = parts[0]
            total += stat.size
            guard total <= maximumBytes else { throw ProjectError(description: "\(file): unpacks to more than \(maximumBytes >> 30) GiB") }
            entries.append((index, inside, stat.size))
        }
        guard let folder, entries.contains(where: { $0.name == "manifest.json" }), entries.contains(where: { $0.name == "score.acasong" }) else {
            throw ProjectError(description: "\(file): holds no project (a NAME.acaproj/ folder with manifest.json and score.acasong)")
        }
        // A take's record travels with its audio: a record alone is nobody's take (10,000 of them, junk, would be kept for ever).
        let audio = Set(entries.filter { $0.name.hasSuffix(".wav") }.map { ($0.name as NSString).deletingPathExtension })
        let alone = entries.filter { $0.name.hasPrefix("takes/") && $0.name.hasSuffix(".json") && !audio.contains(($0.name as NSString).deletingPathExtension) }
        if let first = alone.first {
            throw ProjectError(description: "\(file): '\(SafeText.printable(folder + "/" + first.name))' is a take's record without its audio"
                               + (alone.count > 1 ? " (and \(alone.count - 1) more)" : "") + "; nothing was imported")
        }
        if let problem = Project.nameProblem(folder) { throw ProjectError(description: "\(file): \(SafeText.printable(folder)): \(problem)") }
        // Each entry no bigger than what it is could be: the text ones small,
        // the audio by the song's length (its manifest and song read first).
        func text(_ name: String, limit: UInt64) throws(ProjectError) -> [UInt8] {
            guard let entry = entries.first(where: { $0.name == name }) else { return [] }
            guard entry.size <= limit else { throw ProjectError(description: "\(file): \(name) is \(entry.size >> 20) MB; it can be \(limit >> 20) MB at most") }
            guard let member = zip_fopen_index(archive, entry.index, 0) else { throw ProjectError(description: "\(file): cannot open \(name) in it") }
            defer { zip_fclose(member) }
            var bytes = [UInt8](repeating: 0, count: Int(entry.size) + 1)
            let got = bytes.withUnsafeMutableBytes { zip_fread(member, $0.baseAddress!, zip_uint64_t($0.count)) }
            guard got >= 0, UInt64(got) == entry.size else { throw ProjectError(description: "\(file): \(name) is damaged or not the size it says") }
            return Array(bytes.prefix(Int(got)))
        }
        let song = try text("score.acasong", limit: UInt64(ScoreLimits.maximumFileBytes))
        let manifestBytes = try text("manifest.json", limit: maximumManifestBytes)
        let rate = (try? Manifest.decode(Data(manifestBytes)).get())?.sampleRate ?? 48_000
        guard let score = try? Acasong.parse(bytes: song, file: "score.acasong") else {
            throw ProjectError(description: "\(file): its song (score.acasong) is not a valid song")
        }
        let audioLimit = maximumAudioBytes(score: score, sampleRate: rate)
        for entry in entries where entry.name != "manifest.json" {
            let limit = entry.name.hasSuffix(".wav") ? audioLimit : entry.name == "score.acasong" ? UInt64(ScoreLimits.maximumFileBytes) : maximumTextBytes
            guard entry.size <= limit else {
                throw ProjectError(description: "\(file): \(entry.name) unpacks to \(entry.size >> 20) MB, more than any recording of the song could be (\(limit >> 20) MB at most)")
            }
        }
        let target = directory + "/" + folder
        guard !FileManager.default.fileExists(atPath: target) else {
            throw ProjectError(description: "\(target): already exists; nothing was changed (move it away or import elsewhere)")
        }
        let staging = directory + "/." + folder + ".importing-\(getpid())"
        try? FileManager.default.removeItem(atPath: staging)
        do {
            try FileManager.default.createDirectory(atPath: staging + "/takes", withIntermediateDirectories: true)
            if entries.contains(where: { $0.name.hasPrefix(ReferenceRecord.folder + "/") }) {
                try FileManager.default.createDirectory(atPath: staging + "/" + ReferenceRecord.folder, withIntermediateDirectories: true)
            }
        } catch {
            throw ProjectError(description: "\(directory): cannot unpack here: \(error.localizedDescription)")
        }
        func abandon(_ why: String) -> ProjectError {
            try? FileManager.default.removeItem(atPath: staging)
            return ProjectError(description: why)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for entry in entries {
            guard let member = zip_fopen_index(archive, entry.index, 0) else { throw abandon("\(file): cannot open \(entry.name) in it") }
            defer { zip_fclose(member) }
            let path = staging + "/" + entry.name
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
            guard descriptor >= 0 else { throw abandon("\(path): cannot write: \(String(cString: strerror(errno)))") }
            var written: UInt64 = 0
            var failure: String?
            while failure == nil {
                let got = buffer.withUnsafeMutableBytes { zip_fread(member, $0.baseAddress!, zip_uint64_t($0.count)) }
                if got < 0 { failure = "\(file): \(entry.name) is damaged: \(String(cString: zip_file_strerror(member)))"; break }
                if got == 0 { break }
                written += UInt64(got)
                if written > entry.size { failure = "\(file): \(entry.name) is longer than it says"; break }
                let put = buffer.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress!, Int(got)) }
                if put != Int(got) { failure = "\(path): cannot write: \(String(cString: strerror(errno)))" }
            }
            if failure == nil && fsync(descriptor) != 0 { failure = "\(path): cannot write: \(String(cString: strerror(errno)))" }
            close(descriptor)
            if let failure { throw abandon(failure) }
        }
        // Checked as any project is when opened, before it takes its name.
        let report: [String]
        do throws(ProjectError) {
            let opened = try Project.open(staging, for: .read)
            report = opened.report
            defer { opened.project.close() }
            // A record naming a file outside the takes folder came from a hostile or broken bundle.
            if let stray = opened.project.manifest.takes.first(where: { (try? opened.project.takePath($0)) == nil }) {
                throw ProjectError(description: "its manifest names take \(stray.id)'s file as '\(SafeText.printable(stray.file))', not a file in the project's takes folder")
            }
        } catch {
            // Said of the project as it would have been named (the hidden folder is gone with the refusal).
            throw abandon("\(file): \(error.description.replacingOccurrences(of: staging, with: target))")
        }
        guard rename(staging, target) == 0 else { throw abandon("\(target): cannot put the project in place: \(String(cString: strerror(errno)))") }
        return (target, report)
    }
}
