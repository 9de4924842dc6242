internal import CSndFile
public import AcapellaScore
public import AcapellaEngine
import Foundation

/// An audio file problem, with the file's name.
public struct AudioFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `PATH: what went wrong`.
    public var description: String
}

/// Output formats, chosen by the file extension.
public enum AudioFileFormat: String, Sendable, CaseIterable {
    case wav, flac, ogg, opus, mp3, m4a

    /// The extensions, as an error message lists them.
    public static let listed = ".wav, .flac, .ogg, .opus, .mp3 or .m4a"

    /// The format for a path's extension, if supported.
    public init?(path: String) {
        self.init(rawValue: (path as NSString).pathExtension.lowercased())
    }

    /// libsndfile's format code; nil for `.m4a` (written through FFmpeg).
    func sndfileFormat(bits: Int) -> Int32? {
        let pcm = bits == 24 ? SF_FORMAT_PCM_24 : SF_FORMAT_PCM_16
        switch self {
        case .wav: return Int32(SF_FORMAT_WAV | pcm)
        case .flac: return Int32(SF_FORMAT_FLAC | pcm)
        case .ogg: return Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        case .opus: return Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS)
        case .mp3: return Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III)
        case .m4a: return nil
        }
    }
}

/// What an exported file says it is, written as its format's tags (WAV
/// LIST/INFO, FLAC and Ogg comments, MP3 ID3) through libsndfile; M4A's
/// iTunes-style atoms through FFmpeg.
public struct AudioTags: Hashable, Sendable {
    public var title: String?
    /// From the composer and the arranger.
    public var artist: String?
    /// The project (or the song).
    public var album: String?
    /// What it holds: "mix", a part's name, "practice: Alto"…
    public var comment: String?
    /// When it was made (YYYY-MM-DD).
    public var date: String?
    public var software: String?

    public init(title: String? = nil, artist: String? = nil, album: String? = nil, comment: String? = nil, date: String? = nil, software: String? = nil) {
        self.title = title
        self.artist = artist
        self.album = album
        self.comment = comment
        self.date = date
        self.software = software
    }

    /// Each tag with libsndfile's string kind.
    var strings: [(Int32, String)] {
        var all: [(Int32, String?)] = []
        all.append((Int32(SF_STR_TITLE), title))
        all.append((Int32(SF_STR_ARTIST), artist))
        all.append((Int32(SF_STR_ALBUM), album))
        all.append((Int32(SF_STR_COMMENT), comment))
        all.append((Int32(SF_STR_DATE), date))
        all.append((Int32(SF_STR_SOFTWARE), software))
        return all.compactMap { entry in entry.1.flatMap { $0.isEmpty ? nil : (entry.0, $0) } }
    }
}

extension AudioTags {
    /// The tags of an export of `score`: its title; its composer and
    /// arranger as the artist; `album` (the project); what it holds ("mix",
    /// "practice: Alto", "take 3 (Alto)"); the date (a take's: when it was
    /// recorded; else today's); the program.
    public static func export(of score: Score, album: String?, holding: String, recorded: String? = nil) -> AudioTags {
        let artist = [score.composer, score.arranger.map { "arr. " + $0 }].compactMap { $0 }.joined(separator: "; ")
        // Today as the stamps have it (gmtime_r: no time-zone data loaded for a date).
        return AudioTags(title: score.title, artist: artist.isEmpty ? nil : artist, album: album, comment: holding,
                         date: String((recorded ?? RecordStamp.now()).prefix(10)), software: "Acapella box")
    }
}

/// Audio files through libsndfile.
public enum AudioFile {
    /// Writes stereo float audio. The file appears complete or not at all
    /// (written beside it, then renamed). `bits` applies to WAV and FLAC.
    public static func write(left: [Float], right: [Float], sampleRate: Int, to path: String, bits: Int = 16, tags: AudioTags = AudioTags()) throws(AudioFileError) {
        let writer = try AudioFileWriter(path: path, sampleRate: sampleRate, bits: bits, tags: tags)
        let count = min(left.count, right.count)
        let failure: AudioFileError? = left.withUnsafeBufferPointer { l in right.withUnsafeBufferPointer { r in
            do throws(AudioFileError) {
                try writer.write(left: l.baseAddress!, right: r.baseAddress!, frames: count)
                return nil
            } catch { return error }
        } }
        if let failure { throw failure }
        try writer.finish()
    }

    /// A stereo file written again in another format (by `path`'s
    /// extension) with `tags`, a chunk at a time: a mix encoded twice
    /// without mixing it twice.
    public static func transcode(_ source: String, to path: String, bits: Int = 16, tags: AudioTags = AudioTags()) throws(AudioFileError) {
        var info = SF_INFO()
        guard let header = sf_open(source, Int32(SFM_READ), &info) else {
            throw AudioFileError(description: "\(source): cannot read: \(String(cString: sf_strerror(nil)))")
        }
        sf_close(header)
        let sampleRate = Int(info.samplerate)
        var writer: AudioFileWriter?
        var left: [Float] = [], right: [Float] = []
        var failure: AudioFileError?
        _ = try decode(source) { chunk, frames, channels, _ in
            guard failure == nil else { return }
            do throws(AudioFileError) {
                if writer == nil { writer = try AudioFileWriter(path: path, sampleRate: sampleRate, bits: bits, tags: tags) }
                split(chunk, frames: frames, channels: channels, into: &left, &right)
                try writer!.write(left: left, right: right, frames: frames)
            } catch { failure = error }
        }
        if let failure { throw failure }
        guard let writer else { throw AudioFileError(description: "\(source): no audio to write to \(path)") }
        try writer.finish()
    }

    /// Decoded audio: interleaved floats.
    public struct Decoded: Sendable {
        /// Interleaved samples.
        public var samples: [Float]
        /// Channels per frame.
        public var channels: Int
        /// Samples per second.
        public var sampleRate: Int
    }

    /// Reads any file libsndfile decodes. The corresponding C functions are
    /// `sf_open` and `sf_readf_float`.
    public static func read(_ path: String) throws(AudioFileError) -> Decoded {
        var samples: [Float] = []
        let (channels, sampleRate) = try decode(path) { chunk, _, channels, frameHint in
            if samples.isEmpty { samples.reserveCapacity(frameHint * channels) }
            samples += chunk
        }
        return Decoded(samples: samples, channels: channels, sampleRate: sampleRate)
    }

    /// Opens `path` and hands its interleaved audio to `body` a chunk at a
    /// time (chunk, frames in it, channels, the header's frame count);
    /// returns channels and rate. An `.m4a`/`.mp4`/`.aac` (a phone's
    /// recording, the box's own share) is read through FFmpeg, the rest
    /// through libsndfile. The corresponding C functions are `sf_open`,
    /// `sf_readf_float` and `sf_close`.
    private static func decode(
        _ path: String, _ body: (ArraySlice<Float>, Int, Int, Int) -> Void
    ) throws(AudioFileError) -> (channels: Int, sampleRate: Int) {
        var damage = SampleDamage()
        return try decode(path, damage: &damage, body)
    }

    /// `decode`, noting in `damage` the frames that held a sample that was
    /// not a number (each such sample handed on as silence).
    private static func decode(
        _ path: String, damage: inout SampleDamage, _ body: (ArraySlice<Float>, Int, Int, Int) -> Void
    ) throws(AudioFileError) -> (channels: Int, sampleRate: Int) {
        var frame: Int64 = 0
        var found = SampleDamage()
        defer { damage.note(found) }
        if readThroughFFmpeg(path) {
            return try FFmpegDecoder.decode(path) { chunk, frames, channels, hint in
                if chunk.allSatisfy(\.isFinite) {
                    body(chunk, frames, channels, hint)
                } else {
                    var clean = Array(chunk)
                    Self.clean(&clean, channels: channels, from: frame, into: &found)
                    body(clean[...], frames, channels, hint)
                }
                frame += Int64(frames)
            }
        }
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError(description: "\(path): cannot read: \(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(file) }
        let channels = Int(info.channels)
        let chunkFrames = 65_536
        var chunk = [Float](repeating: 0, count: chunkFrames * channels)
        while true {
            let frames = Int(chunk.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(chunkFrames)) })
            if frames <= 0 { break }
            Self.clean(&chunk, channels: channels, count: frames * channels, from: frame, into: &found)
            body(chunk[0..<(frames * channels)], frames, channels, Int(max(0, info.frames)))
            frame += Int64(frames)
        }
        return (channels, Int(info.samplerate))
    }

    /// Samples of `samples` (interleaved, `channels` a frame, frames from
    /// `first`) that are not numbers made silence, their frames noted.
    static func clean(_ samples: inout [Float], channels: Int, count: Int? = nil, from first: Int64, into damage: inout SampleDamage) {
        let count = count ?? samples.count
        guard samples.withUnsafeBufferPointer({ $0[0..<count].contains { !$0.isFinite } }) else { return }
        for index in 0..<count where !samples[index].isFinite {
            samples[index] = 0
            let at = first + Int64(index / max(1, channels))
            damage.note(at..<(at + 1))
        }
    }

    /// Reads any file libsndfile decodes as one channel (the channels
    /// averaged), a chunk at a time into one array: how takes are loaded.
    public static func readMono(_ path: String) throws(AudioFileError) -> (samples: [Float], sampleRate: Int) {
        let (samples, sampleRate, _) = try readMonoNamingDamage(path)
        return (samples, sampleRate)
    }

    /// `readMono`, and the frames whose samples were not numbers (a damaged
    /// file: they read as silence), for whoever must name the take.
    public static func readMonoNamingDamage(_ path: String) throws(AudioFileError) -> (samples: [Float], sampleRate: Int, damage: SampleDamage) {
        var samples: [Float] = []
        var done = 0
        var damage = SampleDamage()
        let (_, sampleRate) = try decode(path, damage: &damage) { chunk, frames, channels, frameHint in
            // The header's length is a hint (a damaged one may promise far more than there is).
            if samples.isEmpty { samples = [Float](repeating: 0, count: max(min(frameHint, 1 << 26), frames)) }
            if done + frames > samples.count { samples += [Float](repeating: 0, count: done + frames - samples.count) }
            chunk.withUnsafeBufferPointer { input in
                samples.withUnsafeMutableBufferPointer { output in
                    let out = output.baseAddress! + done
                    if channels == 1 {
                        out.update(from: input.baseAddress!, count: frames)
                    } else if channels == 2 {
                        for frame in 0..<frames { out[frame] = (input[2 * frame] + input[2 * frame + 1]) * 0.5 }
                    } else {
                        let scale = 1 / Float(channels)
                        for frame in 0..<frames {
                            var sum: Float = 0
                            for channel in 0..<channels { sum += input[frame * channels + channel] }
                            out[frame] = sum * scale
                        }
                    }
                }
            }
            done += frames
        }
        if done < samples.count { samples.removeLast(samples.count - done) }
        damage.fileFrames = Int64(done)
        return (samples, sampleRate, damage)
    }
}

extension AudioFile {
    /// A file's loudness and true peak as a player decodes it (a lossy
    /// encoding moves both), read a chunk at a time in bounded memory.
    /// `frames` and `sampleRate`: what was encoded.
    static func decodedLoudness(_ path: String, frames: Int, sampleRate: Int, truePeakFloorDBTP: Double) throws(AudioFileError) -> LoudnessMeasurement {
        let meter: LoudnessMeter
        do { meter = try LoudnessMeter(sampleRate: sampleRate, frames: frames, truePeakFloorDBTP: truePeakFloorDBTP) } catch {
            throw AudioFileError(description: "\(path): \(error.description)")
        }
        var left: [Float] = [], right: [Float] = []
        var failure: String?
        let (_, rate) = try decode(path) { chunk, count, channels, _ in
            guard failure == nil else { return }
            split(chunk, frames: count, channels: channels, into: &left, &right)
            do throws(LoudnessError) { try meter.add(left: left, right: right, count: count) } catch { failure = error.description }
        }
        if let failure { throw AudioFileError(description: "\(path): \(failure)") }
        guard rate == sampleRate else { throw AudioFileError(description: "\(path): decodes at \(rate) Hz, written at \(sampleRate) Hz") }
        do { return try meter.result() } catch { throw AudioFileError(description: "\(path): \(error.description)") }
    }

    /// Interleaved frames as left and right (mono as both; past two
    /// channels, the first two).
    private static func split(_ chunk: ArraySlice<Float>, frames: Int, channels: Int, into left: inout [Float], _ right: inout [Float]) {
        left.removeAll(keepingCapacity: true)
        right.removeAll(keepingCapacity: true)
        for frame in 0..<frames {
            let at = chunk.startIndex + frame * channels
            left.append(chunk[at])
            right.append(chunk[at + min(1, channels - 1)])
        }
    }

    /// Whether `path` is read through FFmpeg (AAC in MP4: `.m4a`, `.mp4`,
    /// `.aac`), not libsndfile.
    static func readThroughFFmpeg(_ path: String) -> Bool {
        ["m4a", "mp4", "aac"].contains((path as NSString).pathExtension.lowercased())
    }

    /// Why the file at `path` cannot play as a take of `channels` channels
    /// at `sampleRate`, or nil when it can: missing, empty, not audio, or
    /// of another rate or channel count. Reads only the header. The
    /// corresponding C function is `sf_open`.
    public static func problem(_ path: String, sampleRate: Int, channels: Int) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return "its audio file is missing" }
        guard status.st_size > 0 else { return "its audio file is empty" }
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { return "not audio libsndfile can read (\(String(cString: sf_strerror(nil))))" }
        sf_close(file)
        if Int(info.channels) != channels { return "\(info.channels) channels, a take has \(channels)" }
        if Int(info.samplerate) != sampleRate { return "recorded at \(info.samplerate) Hz, the project runs at \(sampleRate) Hz" }
        if info.frames <= 0 { return "it holds no audio" }
        return nil
    }
}

/// A stereo audio file written a piece at a time through libsndfile (or
/// FFmpeg for `.m4a`): it appears under its name only when `finish`
/// succeeds (written beside it, then renamed); dropped unfinished, the
/// partial file is removed. The corresponding C functions are `sf_open`,
/// `sf_writef_float`, `sf_close`.
public final class AudioFileWriter {
    private var file: OpaquePointer?
    private var aac: AACEncoder?
    private let path: String
    private let temporary: String
    private var interleaved: [Float]

    /// Opens `path` (format from its extension) for writing, with `tags`.
    public init(path: String, sampleRate: Int, bits: Int = 16, tags: AudioTags = AudioTags()) throws(AudioFileError) {
        guard let format = AudioFileFormat(path: path) else {
            throw AudioFileError(description: "\(path): unknown audio format; use \(AudioFileFormat.listed)")
        }
        let directory = (path as NSString).deletingLastPathComponent
        self.path = path
        temporary = (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).partial"
        guard let code = format.sndfileFormat(bits: bits) else {
            interleaved = []
            do { aac = try AACEncoder(writing: temporary, named: path, sampleRate: sampleRate, tags: tags) } catch {
                try? FileManager.default.removeItem(atPath: temporary)
                throw error
            }
            return
        }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = 2
        info.format = code
        guard sf_format_check(&info) != 0 else {
            throw AudioFileError(description: "\(path): libsndfile cannot write \(format.rawValue) at \(sampleRate) Hz")
        }
        interleaved = [Float](repeating: 0, count: 2 * 65_536)
        guard let file = sf_open(temporary, Int32(SFM_WRITE), &info) else {
            throw AudioFileError(description: "\(path): cannot write: \(String(cString: sf_strerror(nil)))")
        }
        self.file = file
        // Before any audio: some formats write their tags at the head.
        for (kind, value) in tags.strings { _ = sf_set_string(file, kind, value) }
        var clipping = Int32(SF_TRUE)
        _ = sf_command(file, Int32(SFC_SET_CLIPPING), &clipping, Int32(MemoryLayout<Int32>.size))
    }

    deinit {
        if let file {
            sf_close(file)
            try? FileManager.default.removeItem(atPath: temporary)
        }
        if aac != nil {
            aac = nil
            try? FileManager.default.removeItem(atPath: temporary)
        }
    }

    /// Appends `frames` stereo frames, interleaving a chunk at a time.
    public func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
        if let aac { return try aac.write(left: left, right: right, frames: frames) }
        guard let file else { throw AudioFileError(description: "\(path): already finished") }
        let chunkFrames = interleaved.count / 2
        var start = 0
        while start < frames {
            let count = min(chunkFrames, frames - start)
            for index in 0..<count {
                interleaved[2 * index] = left[start + index]
                interleaved[2 * index + 1] = right[start + index]
            }
            let written = interleaved.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t(count)) }
            if written != sf_count_t(count) { throw AudioFileError(description: "\(path): write failed: \(String(cString: sf_strerror(file)))") }
            start += count
        }
    }

    /// Closes the file and moves it into place.
    public func finish() throws(AudioFileError) {
        if let aac {
            self.aac = nil
            do { try aac.finish() } catch {
                try? FileManager.default.removeItem(atPath: temporary)
                throw error
            }
        } else {
            guard let file else { return }
            self.file = nil
            let closed = sf_close(file)
            guard closed == 0 else {
                try? FileManager.default.removeItem(atPath: temporary)
                throw AudioFileError(description: "\(path): write failed while closing (code \(closed))")
            }
        }
        if rename(temporary, path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: temporary)
            throw AudioFileError(description: "\(path): cannot move the finished file into place: \(reason)")
        }
    }
}
