internal import CSndFile
import Foundation

#if canImport(Glibc)
import Glibc
#endif

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

    /// Creates the file, which must not exist (`O_EXCL`: a take is never
    /// opened over another); `FileError.exists` when it does.
    /// `failAfterFrames` is for tests (a disk filling up). The
    /// corresponding C functions are `open` and `sf_open_fd`.
    public init(path: String, sampleRate: Int, syncFrames: Int64 = 12_000, failAfterFrames: Int64? = nil) throws(FileError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let failure = errno
            throw FileError(description: "\(path): cannot create the take: \(String(cString: strerror(failure)))", exists: failure == EEXIST)
        }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = 1
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        guard let file = sf_open_fd(descriptor, Int32(SFM_WRITE), &info, 1) else {
            let reason = String(cString: sf_strerror(nil))
            close(descriptor)
            unlink(path)  // empty, and ours: O_EXCL made it a moment ago
            throw FileError(description: "\(path): cannot create the take: \(reason)")
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
            let reason = allowed < count ? "No space left on device" : Self.words(String(cString: sf_strerror(file)))
            try? finish()
            throw FileError(description: "\(path): \(reason); the take is kept up to \(String(format: "%.2f", Double(frames) / Double(sampleRate))) s")
        }
        if sinceSync >= syncFrames {
            sinceSync = 0
            _ = sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
            sf_write_sync(file)
        }
    }

    /// libsndfile's "System error : No space left on device." as "No space left on device".
    static func words(_ message: String) -> String {
        var text = message.hasPrefix("System error : ") ? String(message.dropFirst(15)) : message
        if text.hasSuffix(".") { text.removeLast() }
        return text
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

    /// Repairs a take left behind by a crash, in place: the header is
    /// rewritten to cover the whole frames really in the file (a torn last
    /// frame is cut off). Nothing is copied, so a full disk cannot stop it.
    /// A file whose header already covers its audio is left as it is.
    /// Returns the frames kept. The corresponding C functions are `open`,
    /// `pread`, `pwrite`, `ftruncate` and `fsync`.
    public static func repair(_ path: String) throws(FileError) -> Int64 {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError(description: "\(path): cannot open the take to recover it: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let layout: WAVLayout
        do { layout = try WAVLayout(descriptor: descriptor) } catch { throw FileError(description: "\(path): \(error.description); nothing to recover") }
        if layout.complete { return layout.headerFrames }
        let frames = layout.framesOnDisk
        let dataBytes = frames * layout.blockAlign
        func put(_ value: UInt32, at offset: Int64) -> Bool {
            var little = value.littleEndian
            return withUnsafeBytes(of: &little) { pwrite(descriptor, $0.baseAddress, 4, off_t(offset)) } == 4
        }
        guard ftruncate(descriptor, off_t(layout.dataOffset + dataBytes)) == 0,
              put(UInt32(clamping: layout.dataOffset - 8 + dataBytes), at: 4),
              put(UInt32(clamping: dataBytes), at: layout.dataOffset - 4),
              layout.factOffset.map({ put(UInt32(clamping: frames), at: $0) }) ?? true,
              fsync(descriptor) == 0
        else {
            throw FileError(description: "\(path): cannot rewrite its header: \(String(cString: strerror(errno)))")
        }
        return frames
    }

    /// The whole frames a take file holds on disk now (a take still being
    /// written: what has reached the file so far), or nil when it is not a
    /// WAV file.
    public static func framesOnDisk(_ path: String) -> Int64? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard let layout = try? WAVLayout(descriptor: descriptor) else { return nil }
        return layout.complete ? layout.headerFrames : layout.framesOnDisk
    }
}

/// Where a RIFF/WAVE file keeps its audio: enough of its chunk list to
/// rewrite the sizes after a crash.
struct WAVLayout {
    /// Bytes in the file.
    var fileSize: Int64
    /// Bytes per frame.
    var blockAlign: Int64
    /// Where the audio starts.
    var dataOffset: Int64
    /// Frames the `data` chunk's size promises.
    var headerFrames: Int64
    /// Where the `fact` chunk's frame count is, if there is one.
    var factOffset: Int64?
    /// The header covers the audio exactly (and whatever follows it is a
    /// well-formed chunk list): the file was closed properly.
    var complete: Bool

    /// Whole frames between the start of the audio and the end of the file.
    var framesOnDisk: Int64 { max(0, fileSize - dataOffset) / blockAlign }

    /// A problem with the file's layout.
    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads the chunk list of the open file `descriptor`.
    init(descriptor: Int32) throws(Problem) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Problem(description: "cannot read its size (\(String(cString: strerror(errno))))") }
        fileSize = Int64(status.st_size)
        func bytes(_ offset: Int64, _ count: Int) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: count)
            let got = buffer.withUnsafeMutableBufferPointer { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
            return got > 0 ? Array(buffer[0..<got]) : []
        }
        func word(_ data: [UInt8], _ at: Int) -> Int64 {
            Int64(data[at]) | Int64(data[at + 1]) << 8 | Int64(data[at + 2]) << 16 | Int64(data[at + 3]) << 24
        }
        let riff = bytes(0, 12)
        guard riff.count == 12, riff[0..<4].elementsEqual("RIFF".utf8), riff[8..<12].elementsEqual("WAVE".utf8) else {
            throw Problem(description: fileSize == 0 ? "the file is empty (cut before its header was written)" : "not a WAV file")
        }
        var at: Int64 = 12
        var align: Int64?
        var fact: Int64?
        while at + 8 <= fileSize, at < 1 << 20 {
            let header = bytes(at, 8)
            guard header.count == 8 else { break }
            let size = word(header, 4)
            if header[0..<4].elementsEqual("fmt ".utf8) {
                let format = bytes(at + 8, 16)
                guard format.count == 16 else { break }
                align = Int64(format[12]) | Int64(format[13]) << 8
            } else if header[0..<4].elementsEqual("fact".utf8) {
                fact = at + 8
            } else if header[0..<4].elementsEqual("data".utf8) {
                guard let align, align > 0 else { throw Problem(description: "no usable format chunk before the audio") }
                blockAlign = align
                dataOffset = at + 8
                factOffset = fact
                headerFrames = size / align
                // Finished properly: the header's size reaches a well-formed
                // chunk list (or the end), rather than audio written past it.
                var end = dataOffset + size + (size & 1)
                var fits = size > 0 && end <= fileSize
                while fits && end < fileSize {
                    let next = bytes(end, 8)
                    guard next.count == 8, next[0..<4].allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                        fits = false
                        break
                    }
                    let chunk = word(next, 4)
                    end += 8 + chunk + (chunk & 1)
                }
                complete = fits && end == fileSize
                return
            }
            at += 8 + size + (size & 1)
        }
        throw Problem(description: "no audio chunk in its header")
    }
}
