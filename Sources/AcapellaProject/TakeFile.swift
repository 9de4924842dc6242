internal import CSndFile
import Foundation

/// A take being recorded: a mono 32-bit float WAV written in place through
/// libsndfile. Every `syncFrames` frames the header is rewritten and the
/// file flushed to disk, so a crash or power cut loses at most that much
/// (the recovery reads what the last header says). The corresponding C
/// functions are `sf_open`, `sf_writef_float`, `sf_command`
/// (`SFC_UPDATE_HEADER_NOW`), `sf_write_sync` and `sf_close`.
public final class TakeFileWriter {
    private var file: OpaquePointer?
    /// Where the take is written.
    public let path: String
    /// Frames written so far.
    public private(set) var frames: Int64 = 0
    private var sinceSync: Int64 = 0
    /// Frames between header updates (0.25 s at 48 kHz by default).
    public let syncFrames: Int64
    /// Fault injection: fail like a full disk once this many frames are written.
    let failAfterFrames: Int64?
    let sampleRate: Int

    /// Creates the file. `failAfterFrames` is for tests (a disk filling up).
    public init(path: String, sampleRate: Int, syncFrames: Int64 = 12_000, failAfterFrames: Int64? = nil) throws(FileError) {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = 1
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw FileError(description: "\(path): cannot create the take: \(String(cString: sf_strerror(nil)))")
        }
        self.file = file
        self.path = path
        self.syncFrames = syncFrames
        self.failAfterFrames = failAfterFrames
        self.sampleRate = sampleRate
        _ = sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
        sf_write_sync(file)
        AtomicFile.syncDirectory(of: path)
    }

    deinit { if let file { sf_close(file) } }

    /// Appends samples; a short write (disk full) throws after keeping
    /// everything written before it.
    public func write(_ samples: UnsafePointer<Float>, count: Int) throws(FileError) {
        guard let file else { throw FileError(description: "\(path): the take is already closed") }
        var allowed = count
        if let limit = failAfterFrames { allowed = Int(max(0, min(Int64(count), limit - frames))) }
        let written = allowed > 0 ? sf_writef_float(file, samples, sf_count_t(allowed)) : 0
        frames += Int64(written)
        sinceSync += Int64(written)
        if written < count {
            let reason = allowed < count ? "No space left on device" : String(cString: sf_strerror(file))
            try? finish()
            throw FileError(description: "\(path): \(reason); the take is kept up to \(String(format: "%.2f", Double(frames) / Double(sampleRate))) s")
        }
        if sinceSync >= syncFrames {
            sinceSync = 0
            _ = sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
            sf_write_sync(file)
        }
    }

    /// Writes `count` zeros (a dropout keeps its place in the take).
    public func writeSilence(_ count: Int) throws(FileError) {
        var remaining = count
        let zeros = [Float](repeating: 0, count: min(count, 4_096))
        while remaining > 0 {
            let chunk = min(remaining, zeros.count)
            try zeros.withUnsafeBufferPointer { (buffer) throws(FileError) in try write(buffer.baseAddress!, count: chunk) }
            remaining -= chunk
        }
    }

    /// Final header, flush, close.
    public func finish() throws(FileError) {
        guard let file else { return }
        self.file = nil
        _ = sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
        sf_write_sync(file)
        let closed = sf_close(file)
        guard closed == 0 else { throw FileError(description: "\(path): closing the take failed (code \(closed))") }
    }
}

/// Take files after the fact.
public enum TakeFile {
    /// Frames the file's header promises, or nil when libsndfile cannot open it.
    public static func frameCount(_ path: String) -> Int64? {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { return nil }
        sf_close(file)
        return Int64(info.frames)
    }

    /// Repairs a take left behind by a crash: the audio its last header
    /// update covers is read and rewritten atomically with a correct header.
    /// Returns the frames kept.
    public static func repair(_ path: String) throws(FileError) -> Int64 {
        let decoded: (samples: [Float], sampleRate: Int)
        do { decoded = try AudioFile.readMono(path) } catch {
            throw FileError(description: "\(path): cannot read the take to recover it: \(error.description)")
        }
        let temporary = path + ".repair.wav"
        let writer = try TakeFileWriter(path: temporary, sampleRate: decoded.sampleRate)
        try decoded.samples.withUnsafeBufferPointer { (buffer) throws(FileError) in
            if buffer.count > 0 { try writer.write(buffer.baseAddress!, count: buffer.count) }
        }
        try writer.finish()
        guard rename(temporary, path) == 0 else { throw FileError(description: "\(path): cannot replace the damaged take: \(String(cString: strerror(errno)))") }
        AtomicFile.syncDirectory(of: path)
        return Int64(decoded.samples.count)
    }
}
