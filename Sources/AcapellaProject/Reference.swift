import AcapellaJSON
import AcapellaEngine
public import AcapellaScore
import CSndFile
import CSoxr
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A recording to sing with (a director's recording of the song), kept in
/// the project as `reference/reference.wav` (one channel at the project's
/// rate) with this record in `reference/reference.json`, and its lyrics in
/// time (`reference/reference.lrc`) when an `.lrc` came with it. It plays
/// on the song's timeline like a part (after the song's parts), at the
/// written tempo and key only: a recording cannot follow a tempo change.
public struct ReferenceRecord: Codable, Hashable, Sendable {
    /// Always "acapella-reference".
    public var format = "acapella-reference"
    /// The recording's audio in the project.
    public var file = ReferenceRecord.audioFile
    /// The file it was made from (its name only).
    public var source: String
    /// The recording's frame (at the project rate) that holds song sample
    /// 0; negative when the recording starts after the song has begun.
    public var songStartFrame: Int64
    /// How the offset was found: "given" (`--offset`) or "aligned".
    public var found: String
    /// The alignment's confidence (0…1), when aligned.
    public var confidence: Double?
    /// The lyrics in time, when an `.lrc` came with it.
    public var lyrics: String?
    /// The source's rate and channels, and the frames kept.
    public var sourceRate: Int
    public var sourceChannels: Int
    public var frames: Int64
    /// When it was added (`RecordStamp`).
    public var added: String

    public static let folder = "reference"
    public static let audioFile = "reference/reference.wav"
    public static let recordFile = "reference/reference.json"
    public static let lyricsFile = "reference/reference.lrc"
    /// The track's name in the mix, the readouts and the session.
    public static let trackName = "Reference"

    /// A record (`frames` and `lyrics` are set when it is stored).
    public init(source: String, songStartFrame: Int64, found: String, confidence: Double? = nil, sourceRate: Int, sourceChannels: Int, frames: Int64, added: String) {
        self.source = source
        self.songStartFrame = songStartFrame
        self.found = found
        self.confidence = confidence
        self.sourceRate = sourceRate
        self.sourceChannels = sourceChannels
        self.frames = frames
        self.added = added
    }

    /// The name a singer knows it by: the source without its extension.
    public var name: String { (source as NSString).deletingPathExtension }

    /// Seconds into the recording where the song starts, at `sampleRate`.
    public func offsetSeconds(sampleRate: Int) -> Double { Double(songStartFrame) / Double(sampleRate) }

    /// The first impossible value, as `KEY: what`, or nil.
    func problem() -> String? {
        if format != "acapella-reference" { return "format: '\(format.oneLine)' is not acapella-reference" }
        if file != Self.audioFile { return "file: expected \(Self.audioFile)" }
        if let lyrics, lyrics != Self.lyricsFile { return "lyrics: expected \(Self.lyricsFile)" }
        if !["given", "aligned"].contains(found) { return "found: '\(found.oneLine)' is not given or aligned" }
        if let confidence, !(0...1).contains(confidence) { return "confidence: \(confidence) is outside 0…1" }
        if frames <= 0 { return "frames: \(frames) is not a length" }
        if !(-(1 << 36)...(1 << 36)).contains(songStartFrame) { return "songStartFrame: \(songStartFrame) is out of range" }
        return nil
    }

    /// "director.mp3, the song 2.350 s in (aligned, confidence 0.74)".
    public func describe(sampleRate: Int) -> String {
        let offset = String(format: "%.3f", offsetSeconds(sampleRate: sampleRate))
        let how = found == "aligned" ? "aligned" + (confidence.map { String(format: ", confidence %.2f", $0) } ?? "") : "offset given"
        let start = songStartFrame >= 0 ? "the song starts \(offset) s into it" : "it starts \(offset.dropFirst()) s into the song"
        return "\(source): \(start) (\(how))\(lyrics != nil ? ", with lyrics" : ""), \(String(format: "%.1f", Double(frames) / Double(sampleRate))) s"
    }
}

/// Reading a recording for a reference: any file libsndfile reads (or
/// FFmpeg, for a phone's `.m4a`), the channels averaged, converted to the
/// project rate by libsoxr.
public enum ReferenceAudio {
    /// The recording at `path` as one channel at `sampleRate`, with the
    /// source's rate and channels.
    public static func load(_ path: String, sampleRate: Int) throws(ProjectError) -> (samples: [Float], sourceRate: Int, channels: Int) {
        var status = stat()
        guard stat(path, &status) == 0 else { throw ProjectError(description: "\(path): no such file") }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw ProjectError(description: "\(path): not a file") }
        // libsndfile's MP3 decoder (mpg123) writes notes about a damaged
        // stream to stderr: the command says what matters in one line.
        let (opened, channels) = quietly { () -> (Bool, Int32) in
            if AudioFile.readThroughFFmpeg(path) { return FFmpegDecoder.channels(path).map { (true, Int32($0)) } ?? (false, 0) }
            var info = SF_INFO()
            guard let file = sf_open(path, Int32(SFM_READ), &info) else { return (false, 0) }
            sf_close(file)
            return (true, info.channels)
        }
        guard opened else { throw ProjectError(description: "\(path): not audio libsndfile or FFmpeg can read (an unknown format, or damaged)") }
        let decoded: (samples: [Float], sampleRate: Int)
        do { decoded = try quietly { () throws(AudioFileError) in try AudioFile.readMono(path) } } catch { throw ProjectError(description: error.description) }
        guard !decoded.samples.isEmpty else { throw ProjectError(description: "\(path): holds no audio") }
        guard decoded.sampleRate >= 4_000, decoded.sampleRate <= 768_000 else {
            throw ProjectError(description: "\(path): a rate of \(decoded.sampleRate) Hz is not one a recording has")
        }
        let converted = try convert(decoded.samples, from: decoded.sampleRate, to: sampleRate, file: path)
        return (converted, decoded.sampleRate, Int(channels))
    }

    /// Runs `body` with stderr sent to /dev/null (a command's own thread;
    /// never in the box, whose log is stderr).
    static func quietly<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        fflush(nil)
        let saved = dup(STDERR_FILENO)
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        if saved >= 0 && null >= 0 { dup2(null, STDERR_FILENO) }
        defer {
            fflush(nil)
            if saved >= 0 {
                dup2(saved, STDERR_FILENO)
                close(saved)
            }
            if null >= 0 { close(null) }
        }
        return try body()
    }

    /// `samples` at `to` Hz (the same when the rates agree), through
    /// libsoxr's high quality converter; its delay is taken out, so frame
    /// times keep their place. The corresponding C function is `soxr_oneshot`.
    public static func convert(_ samples: [Float], from: Int, to: Int, file: String = "audio") throws(ProjectError) -> [Float] {
        guard from != to else { return samples }
        let wanted = Int((Double(samples.count) * Double(to) / Double(from)).rounded())
        var output = [Float](repeating: 0, count: wanted)
        var done = 0
        var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        let error: String? = samples.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                soxr_oneshot(Double(from), Double(to), 1, input.baseAddress, input.count, nil, out.baseAddress, out.count, &done, &io, &quality, nil)
                    .map { String(cString: $0) }
            }
        }
        if let error { throw ProjectError(description: "\(file): cannot convert \(from) Hz to \(to) Hz: \(error)") }
        if done < wanted { output.removeLast(wanted - done) }
        return output
    }

    /// Writes one channel of float audio to `path` atomically (beside it,
    /// flushed, renamed).
    static func writeMono(_ samples: [Float], sampleRate: Int, to path: String) throws(ProjectError) {
        let temporary = (path as NSString).deletingLastPathComponent + "/." + (path as NSString).lastPathComponent + ".tmp"
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = 1
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        unlink(temporary)
        guard let file = sf_open(temporary, Int32(SFM_WRITE), &info) else {
            throw ProjectError(description: "\(path): cannot write: \(String(cString: sf_strerror(nil)))")
        }
        let written = samples.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t($0.count)) }
        let failure = written != sf_count_t(samples.count) ? String(cString: sf_strerror(file)) : nil
        sf_write_sync(file)
        let closed = sf_close(file)
        if failure != nil || closed != 0 {
            unlink(temporary)
            throw ProjectError(description: "\(path): write failed: \(failure ?? "code \(closed) while closing") (nothing else in the project changed)")
        }
        do { try AtomicFile.moveIntoPlace(temporary, path) } catch {
            unlink(temporary)
            throw ProjectError(description: error.description)
        }
    }
}

extension Project {
    /// The reference recording's record: nil when there is none; a damaged
    /// one is an error naming the file and key.
    public func reference() -> Result<ReferenceRecord?, ProjectError> {
        let file = path + "/" + ReferenceRecord.recordFile
        guard let data = FileManager.default.contents(atPath: file) else {
            return FileManager.default.fileExists(atPath: file) ? .failure(ProjectError(description: "\(file): cannot be read")) : .success(nil)
        }
        switch JSONFile.decode(ReferenceRecord.self, from: data, file: file) {
        case .failure(let error): return .failure(ProjectError(description: error.description))
        case .success(let record):
            if let problem = record.problem() { return .failure(ProjectError(description: "\(file): \(problem)")) }
            return .success(record)
        }
    }

    /// The reference when there is a usable one (a damaged record: none).
    public var referenceRecord: ReferenceRecord? { (try? reference().get()) ?? nil }

    /// The schedule options of this project's tracks: the reference's
    /// name when it has one.
    public var audioTracks: [String] { referenceRecord == nil ? [] : [ReferenceRecord.trackName] }

    /// Its lyrics in time, parsed (nil without; an error names the line).
    public func referenceLyrics() -> Result<LRC?, ProjectError> {
        guard let record = referenceRecord, let lyrics = record.lyrics else { return .success(nil) }
        let file = path + "/" + lyrics
        guard let data = FileManager.default.contents(atPath: file) else { return .failure(ProjectError(description: "\(file): missing")) }
        do { return .success(try LRC.parse(Array(data), file: file)) } catch { return .failure(ProjectError(description: error.description)) }
    }

    /// Puts a reference recording in place (`samples`: one channel at the
    /// project rate), replacing one there was, with its lyrics (the `.lrc`
    /// file's bytes, already checked). Audio first, lyrics, then the record.
    public func setReference(_ samples: [Float], record: ReferenceRecord, lyrics: [UInt8]?) throws(ProjectError) {
        try requireWriter()
        let folder = path + "/" + ReferenceRecord.folder
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw ProjectError(description: "\(folder): cannot create: \(String(cString: strerror(errno)))")
        }
        var record = record
        record.frames = Int64(samples.count)
        record.lyrics = lyrics == nil ? nil : ReferenceRecord.lyricsFile
        if let problem = record.problem() { throw ProjectError(description: "\(path)/\(ReferenceRecord.recordFile): \(problem)") }
        // The old record goes first: never a record naming audio it was not made for.
        unlink(path + "/" + ReferenceRecord.recordFile)
        try ReferenceAudio.writeMono(samples, sampleRate: manifest.sampleRate, to: path + "/" + ReferenceRecord.audioFile)
        let document = try Self.documentBytes(record, file: ReferenceRecord.recordFile)
        do throws(FileError) {
            if let lyrics { try AtomicFile.write(lyrics, to: path + "/" + ReferenceRecord.lyricsFile) } else { unlink(path + "/" + ReferenceRecord.lyricsFile) }
            try AtomicFile.write(document, to: path + "/" + ReferenceRecord.recordFile)
        } catch {
            throw ProjectError(description: error.description)
        }
        AtomicFile.syncDirectory(of: path + "/" + ReferenceRecord.recordFile)
    }

    /// Changes where the song starts in the reference.
    public func setReferenceOffset(_ songStartFrame: Int64, found: String, confidence: Double?) throws(ProjectError) {
        try requireWriter()
        guard var record = try reference().get() else { throw ProjectError(description: "\(path): has no reference recording") }
        record.songStartFrame = songStartFrame
        record.found = found
        record.confidence = confidence
        if let problem = record.problem() { throw ProjectError(description: "\(path)/\(ReferenceRecord.recordFile): \(problem)") }
        let document = try Self.documentBytes(record, file: ReferenceRecord.recordFile)
        do { try AtomicFile.write(document, to: path + "/" + ReferenceRecord.recordFile) } catch { throw ProjectError(description: error.description) }
    }

    /// Removes the reference recording (record first, then its files).
    public func removeReference() throws(ProjectError) -> ReferenceRecord {
        try requireWriter()
        let record = try? reference().get()
        guard record != nil || FileManager.default.fileExists(atPath: path + "/" + ReferenceRecord.recordFile) else {
            throw ProjectError(description: "\(path): has no reference recording")
        }
        for file in [ReferenceRecord.recordFile, ReferenceRecord.audioFile, ReferenceRecord.lyricsFile] { unlink(path + "/" + file) }
        AtomicFile.syncDirectory(of: path + "/" + ReferenceRecord.recordFile)
        // A damaged record is removed with its files, and said.
        guard let record = record ?? nil else { throw ProjectError(description: "\(path): its reference record was damaged; it and its files are removed") }
        return record
    }

    /// The reference as a part's takes, for `options` (which name it as an
    /// audio track). At another tempo or key it is stretched from the
    /// song's start (it is one recording at the written tempo and key: its
    /// own timing is the choir's, so no entries anchor it).
    func referenceTakes(for options: ScheduleOptions, loading: TakeLoading, quality: StretchQuality = .realTime) -> (takes: PartTakes, problem: String?) {
        guard let record = referenceRecord else { return (.none, nil) }
        let stretch = TakeStretch(recordedTempo: Rational(1), recordedTranspose: 0, playingTempo: options.tempoScale, playingTranspose: options.transpose)
        let offset = TakeStretch.scaled(record.songStartFrame, stretch.ratio)
        let anchors = [StretchAnchor(input: record.songStartFrame, output: offset)]
        let file = path + "/" + record.file
        if case .streamed(let slots, let throttle) = loading {
            do {
                let source = try SoundFileBlockSource(path: file)
                guard source.sampleRate == options.sampleRate else { return (.none, "the reference recording is at \(source.sampleRate) Hz, this runs at \(options.sampleRate) Hz") }
                var read: any TakeBlockSource = throttle.map { ThrottledBlockSource(source, budget: $0) } ?? source
                if !stretch.isIdentity, case .offline(let folder) = quality {
                    read = try SpooledTake(stretching: read, sampleRate: options.sampleRate, stretch: stretch, anchors: anchors, in: folder)
                } else if !stretch.isIdentity {
                    read = try StretchedBlockSource(read, sampleRate: options.sampleRate, stretch: stretch, anchors: anchors)
                }
                let name = stretch.isIdentity ? "the reference recording" : "the reference recording at \(stretch)"
                return (PartTakes([TakePlayback(stream: TakeStream(source: read, name: name, slots: slots), alignmentOffsetSamples: offset)]), nil)
            } catch {
                return (.none, "the reference recording cannot be read: \(error)")
            }
        }
        do {
            let decoded = try AudioFile.readMono(file)
            guard decoded.sampleRate == options.sampleRate else { return (.none, "the reference recording is at \(decoded.sampleRate) Hz, this runs at \(options.sampleRate) Hz") }
            let samples = try OfflineStretcher.process(decoded.samples, sampleRate: options.sampleRate, stretch: stretch, anchors: anchors)
            return (PartTakes([TakePlayback(samples: samples, alignmentOffsetSamples: offset)]), nil)
        } catch {
            return (.none, "the reference recording cannot be read: \(error)")
        }
    }

    /// The song's guide tones, every part at one level, as one channel from
    /// song sample 0: what a recording is aligned against.
    public func guideTones() throws(ProjectError) -> [Float] { try Self.guideTones(of: score, sampleRate: manifest.sampleRate) }

    /// `score`'s guide tones at `sampleRate` (see `guideTones()`).
    public static func guideTones(of score: Score, sampleRate: Int) throws(ProjectError) -> [Float] {
        let schedule: Schedule
        do { schedule = try Schedule(score: score, options: ScheduleOptions(sampleRate: sampleRate)) } catch {
            throw ProjectError(description: error.description)
        }
        let rendered = OfflineRender.render(schedule, mixes: score.parts.map { _ in PartMix(gain: 0.3, pan: 0) })
        let skip = Int(-rendered.firstSample)
        return (skip..<rendered.left.count).map { rendered.left[$0] + rendered.right[$0] }
    }
}
