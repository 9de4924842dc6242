import Synchronization

/// What the render loop last published: read by the console, the LCD, the
/// pitch tracker and the recorder, never written by them.
public struct EngineSnapshot: Hashable, Sendable {
    /// How many snapshots the render loop has published (0: none yet).
    public var serial: Int64
    /// The song sample of the next frame to render.
    public var position: Int64
    /// Transport state.
    public var state: Transport.State
    /// Current measure number (during a count-in before the song, the
    /// measure before the first).
    public var measure: Int
    /// Beat within the measure, from 1 (during a count-in: the count-in
    /// click, from 1).
    public var beat: Int
    /// Whether a loop is set.
    public var looping: Bool
    /// The MIDI pitch each part's guide tone sounds now (nil: rest).
    public var currentMIDI: [Int?]
    /// Peak level of each part over the last period (linear, after gain).
    public var partPeaks: [Float]
    /// Peak of the output over the last period (linear).
    public var outputPeak: Float
    /// Commands the render loop could not take (a full queue), ever.
    public var refusedCommands: Int64

    /// "12.3" — measure and beat.
    /// Commands the render loop has applied, ever.
    public var commandsApplied: Int64 = 0
    /// `PeriodBuffers.hostNanoseconds` of the period that applied the
    /// latest of them (diagnostics: input-to-engine latency).
    public var commandsAppliedAtNanoseconds: Int64 = 0
    /// Times the device's frame clock jumped (xruns, a device lost and
    /// reopened), ever: each one put capture and playback back on the same
    /// sample (or, for unlinked streams without timestamps, said it could not).
    public var deviceGaps: Int64 = 0

    public var measureBeat: String { "\(measure).\(beat)" }
}

/// The lock-free board snapshots are published on: a sequence lock over
/// atomic words. The render loop (the only writer) bumps the sequence to
/// odd, stores the words, bumps it to even; a reader copies the words and
/// retries when the sequence was odd or moved meanwhile. The writer never
/// waits; every word is an atomic, so there is no data race to reason
/// about, only a torn read to retry.
public final class SnapshotBoard: @unchecked Sendable {
    private static let fixedWords = 11
    private let sequence = Atomic<Int64>(0)
    private let words: UnsafeMutablePointer<Atomic<Int64>>
    private let wordCount: Int
    /// Number of parts published.
    public let partCount: Int

    /// A board for `partCount` parts. Allocates; call it off the render thread.
    public init(partCount: Int) {
        self.partCount = partCount
        wordCount = Self.fixedWords + 2 * partCount
        words = .allocate(capacity: wordCount)
        for index in 0..<wordCount { (words + index).initialize(to: Atomic(0)) }
    }

    deinit {
        words.deinitialize(count: wordCount)
        words.deallocate()
    }

    /// Publishes a snapshot (render thread: no allocation, no wait). The
    /// per-part values come from `part`, called once per part.
    func publish(
        position: Int64, state: Transport.State, measure: Int, beat: Int, looping: Bool, outputPeak: Float, refusedCommands: Int64,
        commandsApplied: Int64, commandsAppliedAt: Int64, deviceGaps: Int64, part: (Int) -> (midi: Int?, peak: Float)
    ) {
        let serial = sequence.load(ordering: .relaxed) / 2 + 1
        sequence.store(serial * 2 - 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        words[0].store(serial, ordering: .relaxed)
        words[1].store(position, ordering: .relaxed)
        words[2].store(Int64(state.code), ordering: .relaxed)
        words[3].store(Int64(measure), ordering: .relaxed)
        words[4].store(Int64(beat), ordering: .relaxed)
        words[5].store(looping ? 1 : 0, ordering: .relaxed)
        words[6].store(Int64(outputPeak.bitPattern), ordering: .relaxed)
        words[7].store(refusedCommands, ordering: .relaxed)
        words[8].store(commandsApplied, ordering: .relaxed)
        words[9].store(commandsAppliedAt, ordering: .relaxed)
        words[10].store(deviceGaps, ordering: .relaxed)
        for index in 0..<partCount {
            let value = part(index)
            words[Self.fixedWords + 2 * index].store(Int64(value.midi ?? -1), ordering: .relaxed)
            words[Self.fixedWords + 2 * index + 1].store(Int64(value.peak.bitPattern), ordering: .relaxed)
        }
        sequence.store(serial * 2, ordering: .releasing)
    }

    /// The latest consistent snapshot. Any thread; never blocks the writer.
    public func read() -> EngineSnapshot {
        var values = [Int64](repeating: 0, count: wordCount)
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before % 2 == 0 {
                for index in 0..<wordCount { values[index] = words[index].load(ordering: .relaxed) }
                atomicMemoryFence(ordering: .acquiring)
                if sequence.load(ordering: .relaxed) == before { break }
            }
            Thread.yieldNow()
        }
        return EngineSnapshot(
            serial: values[0], position: values[1], state: Transport.State(code: Int(values[2])), measure: Int(values[3]), beat: Int(values[4]),
            looping: values[5] != 0,
            currentMIDI: (0..<partCount).map { values[Self.fixedWords + 2 * $0] < 0 ? nil : Int(values[Self.fixedWords + 2 * $0]) },
            partPeaks: (0..<partCount).map { Float(bitPattern: UInt32(truncatingIfNeeded: values[Self.fixedWords + 2 * $0 + 1])) },
            outputPeak: Float(bitPattern: UInt32(truncatingIfNeeded: values[6])), refusedCommands: values[7], commandsApplied: values[8],
            commandsAppliedAtNanoseconds: values[9], deviceGaps: values[10])
    }
}

extension Transport.State {
    var code: Int {
        switch self {
        case .stopped: 0
        case .countIn: 1
        case .playing: 2
        case .recording: 3
        }
    }

    init(code: Int) {
        switch code {
        case 1: self = .countIn
        case 2: self = .playing
        case 3: self = .recording
        default: self = .stopped
        }
    }
}

enum Thread {
    /// Lets the writer finish a publish a reader raced with.
    static func yieldNow() {
        #if canImport(Glibc)
        sched_yield()
        #endif
    }
}

#if canImport(Glibc)
import Glibc
#endif
