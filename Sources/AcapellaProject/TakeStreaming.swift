internal import CSndFile
public import AcapellaEngine
import Foundation
import Synchronization
import AcapellaLock

/// A take file read a block at a time through libsndfile for a
/// `TakeStream`: mono, at the project rate, its gain applied the way
/// `TakeRecord.playback` applies it to a decoded take (the same float
/// product, so streamed and decoded takes are the same samples). The
/// corresponding C functions are `sf_open`, `sf_seek`, `sf_readf_float`.
public final class SoundFileBlockSource: TakeBlockSource, @unchecked Sendable {
    // @unchecked: the handle is used by one reader at a time (the stream's
    // butler, or whoever primes it before handing it over).
    private let file: OpaquePointer
    public let frameCount: Int64
    /// Samples per second.
    public let sampleRate: Int
    private let gain: Float
    /// The file read ahead of the blocks read (`POSIX_FADV_WILLNEED`, the
    /// kernel reading asynchronously): a cold file's next half second is on its
    /// way from the disk before the butler asks for it, so one thread
    /// serving many streams waits on the page cache, not on the disk.
    private let hints: Int32
    private let dataStart: Int64
    private let bytesPerFrame: Int64
    /// Bytes of the file asked for ahead so far.
    private var hinted: Int64 = 0
    /// Samples read that were not numbers (read as silence).
    private let damaged = VisibleLock(SampleDamage())
    public var damage: SampleDamage { damaged.withLock { $0 } }

    /// Opens `path`; nil (with why) when it is not a one-channel file
    /// libsndfile reads.
    public init(path: String, gain: Float = 1) throws(AudioFileError) {
        var info = SF_INFO()
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw AudioFileError(description: "\(path): cannot read: \(String(cString: strerror(errno)))") }
        guard let file = sf_open_fd(descriptor, Int32(SFM_READ), &info, 1) else {
            close(descriptor)
            throw AudioFileError(description: "\(path): cannot read: \(String(cString: sf_strerror(nil)))")
        }
        guard info.channels == 1, info.seekable != 0 else {
            sf_close(file)
            throw AudioFileError(description: "\(path): \(info.channels) channels\(info.seekable == 0 ? ", not seekable" : ""); a streamed take has one")
        }
        self.file = file
        frameCount = Int64(max(0, info.frames))
        sampleRate = Int(info.samplerate)
        self.gain = gain
        // Where frame k is in the file, for PCM and float (the header is
        // what the samples leave over); other formats get no hints.
        let sampleBytes: [Int32: Int64] = [Int32(SF_FORMAT_PCM_16): 2, Int32(SF_FORMAT_PCM_24): 3, Int32(SF_FORMAT_PCM_32): 4, Int32(SF_FORMAT_FLOAT): 4,
                                           Int32(SF_FORMAT_DOUBLE): 8]
        bytesPerFrame = sampleBytes[info.format & Int32(SF_FORMAT_SUBMASK)] ?? 0
        hints = bytesPerFrame > 0 ? descriptor : -1
        var status = stat()
        dataStart = hints >= 0 && fstat(hints, &status) == 0 ? max(0, Int64(status.st_size) - frameCount * bytesPerFrame) : 0
    }

    deinit { sf_close(file) }

    /// Asks the kernel for the second of audio after `frame` (again when
    /// half of it has been read), once the stream reads on from where it
    /// was: the first block after a move is read alone, so that after a
    /// locate every stream's urgent block is read before anyone's
    /// read-ahead.
    private func readAhead(from frame: Int64, sequential: Bool) {
        guard hints >= 0 else { return }
        let at = dataStart + frame * bytesPerFrame
        let second = Int64(sampleRate) * bytesPerFrame
        guard sequential else {
            hinted = at
            return
        }
        guard at + second / 2 > hinted else { return }
        _ = posix_fadvise(hints, off_t(max(hinted, at)), off_t(at + second - max(hinted, at)), POSIX_FADV_WILLNEED)
        hinted = at + second
    }

    /// Where the last read ended.
    private var lastEnd: Int64 = -1

    public func read(from first: Int64, count: Int, into destination: UnsafeMutablePointer<Float>) -> Int {
        defer {
            readAhead(from: first + Int64(count), sequential: first == lastEnd)
            lastEnd = first + Int64(count)
        }
        guard sf_seek(file, sf_count_t(first), SEEK_SET) == sf_count_t(first) else { return 0 }
        let read = Int(sf_readf_float(file, destination, sf_count_t(count)))
        // A damaged file's NaN or ∞ never reaches a mix or a card: silence, noted.
        var found = SampleDamage()
        if found.clean(destination, count: max(0, read), from: first) {
            damaged.withLock { damage in
                damage.note(found)
                damage.fileFrames = frameCount
            }
        }
        if gain != 1 { for index in 0..<max(0, read) { destination[index] = destination[index] * gain } }
        return max(0, read)
    }
}

/// A block source slowed to `bytesPerSecond` of the file's bytes (a slow
/// card, simulated): each read waits until the rate allows it. For the
/// benchmark and the dropout tests.
public final class ThrottledBlockSource: TakeBlockSource, @unchecked Sendable {
    // @unchecked: read by one reader at a time, like the source it wraps.
    let inner: any TakeBlockSource
    let bytesPerFrame: Double
    let budget: ReadBudget
    public var frameCount: Int64 { inner.frameCount }

    /// `inner` read through `budget` (shared by every stream of one disk),
    /// `bytesPerFrame` of the file per frame (4: a take is 32-bit float mono).
    public init(_ inner: any TakeBlockSource, budget: ReadBudget, bytesPerFrame: Double = 4) {
        self.inner = inner
        self.budget = budget
        self.bytesPerFrame = bytesPerFrame
    }

    public func read(from first: Int64, count: Int, into destination: UnsafeMutablePointer<Float>) -> Int {
        budget.spend(Double(count) * bytesPerFrame)
        return inner.read(from: first, count: count, into: destination)
    }

    public var damage: SampleDamage { inner.damage }
}

/// A disk's read rate, shared by every stream read from it: `spend`
/// sleeps until the bytes would have arrived at `bytesPerSecond`.
public final class ReadBudget: Sendable {
    private let nextFree = VisibleLock<Double>(0)
    /// Bytes per second.
    public let bytesPerSecond: Double

    public init(bytesPerSecond: Double) {
        self.bytesPerSecond = bytesPerSecond
    }

    /// Waits for `bytes` at the budget's rate.
    public func spend(_ bytes: Double) {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        // Time overslept in earlier waits is made up (within 20 ms): the
        // budget is the rate, not the rate less the scheduler's overhead.
        let done = nextFree.withLock { next -> Double in
            next = max(next, now - 0.02) + bytes / bytesPerSecond
            return next
        }
        let wait = done - now
        if wait > 0 { usleep(useconds_t(min(wait, 10) * 1e6)) }
    }
}

/// Runs a butler's passes on a thread of its own (a few milliseconds
/// apart; at once again after a pass that read something).
public final class ButlerThread: Sendable {
    public let butler: TakeStreamButler
    private let running = Atomic<Bool>(false)
    private let ended = Atomic<Bool>(true)

    public init(butler: TakeStreamButler) {
        self.butler = butler
    }

    /// Starts the thread (once).
    public func start(intervalMilliseconds: Int = 4) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        ended.store(false, ordering: .releasing)
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                if butler.service(limit: 8) == 0 { usleep(useconds_t(intervalMilliseconds * 1_000)) }
            }
            ended.store(true, ordering: .releasing)
        }
        thread.name = "acapella-butler"
        thread.qualityOfService = .userInitiated
        thread.start()
    }

    /// Stops the thread; returns once it has.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        while !ended.load(ordering: .acquiring) { usleep(1_000) }
    }

    deinit { stop() }
}

/// How takes are loaded for playing.
public enum TakeLoading: Sendable {
    /// Decoded whole into memory (the mixdown's and the analysis' way).
    case memory
    /// Streamed from the file a block at a time (the box's way), with
    /// `slots` blocks of room each; `throttle` slows the reads (tests and
    /// the benchmark).
    case streamed(slots: Int = TakeStream.defaultSlots, throttle: ReadBudget? = nil)
}

extension TakeStreamButler {
    /// Where the butler's streams missed blocks since `seen` (stream
    /// identity → frames missed then): one line each, and the new counts.
    /// `describe` turns a song sample into words ("measure 12").
    public func misses(since seen: [ObjectIdentifier: Int64], describe: (Int64) -> String) -> (lines: [String], seen: [ObjectIdentifier: Int64]) {
        var now = seen
        var lines: [String] = []
        for use in watched {
            let key = ObjectIdentifier(use.stream)
            let missed = use.stream.missed
            guard missed > (now[key] ?? 0) else { continue }
            let new = missed - (now[key] ?? 0)
            now[key] = missed
            let at = use.stream.lastMissAt
            lines.append("\(use.stream.name): \(new) frames were not read from the disk in time\(at == Int64.min ? "" : " (\(describe(at)))"); they played as silence")
        }
        return (lines, now)
    }
}

/// A take already in memory, read a block at a time (a take decoded whole
/// and then stretched, the benchmark's and the tests' takes).
public final class MemoryBlockSource: TakeBlockSource, @unchecked Sendable {
    // @unchecked: the samples never change after init.
    private let samples: [Float]
    public var frameCount: Int64 { Int64(samples.count) }

    public init(_ samples: [Float]) {
        self.samples = samples
    }

    public func read(from first: Int64, count: Int, into destination: UnsafeMutablePointer<Float>) -> Int {
        guard first >= 0, first < frameCount else { return 0 }
        let n = Int(min(Int64(count), frameCount - first))
        samples.withUnsafeBufferPointer { destination.update(from: $0.baseAddress! + Int(first), count: n) }
        return n
    }
}
