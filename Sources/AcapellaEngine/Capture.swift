import Synchronization

/// One captured frame, tagged on the render thread with what the singer
/// was hearing when they made it: the song sample of the output frame one
/// round trip earlier, and whether that moment was being recorded.
public struct CapturedFrame: BitwiseCopyable, Sendable {
    /// The microphone's sample.
    public var value: Float
    /// What the output frame one round trip earlier played.
    public var mark: FrameMark

    /// A tagged frame.
    public init(value: Float, mark: FrameMark) {
        self.value = value
        self.mark = mark
    }
}

/// What an output frame played, as far as recording is concerned.
public struct FrameMark: BitwiseCopyable, Hashable, Sendable {
    /// The song sample played (meaningless when `kind` is `.none` or `.gap`).
    public var songSample: Int64
    /// Recording state of that frame.
    public var kind: Kind

    /// Recording state of an output frame.
    public enum Kind: UInt8, BitwiseCopyable, Sendable {
        /// Stopped: no song sample.
        case none
        /// Playing, not part of a take.
        case playing
        /// Armed: count-in, pre-roll or post-roll — written to the take,
        /// outside its range.
        case armed
        /// Recording: inside the take's range.
        case recording
        /// Lost to an xrun: the device played nothing; the take skips it
        /// without ending.
        case gap
    }

    /// A frame outside any take.
    public static let none = FrameMark(songSample: 0, kind: .none)

    /// A mark.
    public init(songSample: Int64, kind: Kind) {
        self.songSample = songSample
        self.kind = kind
    }
}

/// A bounded single-producer, single-consumer ring of plain values moved in
/// bulk: captured frames from the render thread to the writer thread.
/// Wait-free; a full ring takes what fits and says how much (the rest is
/// dropped and counted, never waited for).
///
/// `@unchecked Sendable`: the storage is raw memory shared by exactly one
/// producer and one consumer. The producer writes slots then publishes with
/// a releasing store of `tail`; the consumer's acquiring load of `tail`
/// makes them visible, and the same pairing on `head` hands slots back.
public final class BulkRing<Element: BitwiseCopyable>: @unchecked Sendable {
    private let capacity: Int
    private let storage: UnsafeMutablePointer<Element>
    private let head = Atomic<Int>(0)  // total elements consumed
    private let tail = Atomic<Int>(0)  // total elements produced
    private let dropped = Atomic<Int>(0)

    /// A ring holding `capacity` elements. Allocates; off the render thread.
    public init(capacity: Int) {
        precondition(capacity > 0, "a ring needs room")
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// Appends as many of `count` elements as fit; the rest are dropped and
    /// counted. Producer only; render-thread safe.
    @discardableResult
    public func push(_ elements: UnsafePointer<Element>, count: Int) -> Int {
        let written = tail.load(ordering: .relaxed)
        let free = capacity - (written - head.load(ordering: .acquiring))
        let taken = min(count, free)
        for index in 0..<taken { storage[(written + index) % capacity] = elements[index] }
        tail.store(written + taken, ordering: .releasing)
        if taken < count { dropped.add(count - taken, ordering: .relaxed) }
        return taken
    }

    /// Moves up to `maximum` elements into `destination`; returns how many.
    /// Consumer only.
    public func pop(into destination: UnsafeMutablePointer<Element>, maximum: Int) -> Int {
        let read = head.load(ordering: .relaxed)
        let available = tail.load(ordering: .acquiring) - read
        let taken = min(available, maximum)
        for index in 0..<taken { destination[index] = storage[(read + index) % capacity] }
        head.store(read + taken, ordering: .releasing)
        return taken
    }

    /// Elements waiting to be consumed (any thread; a moment's estimate).
    public var waitingCount: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }

    /// Elements the ring holds at most.
    public var capacityCount: Int { capacity }

    /// Elements dropped because the ring was full, ever.
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }
}

/// The render thread's capture tagging: a history of what each output
/// frame played, so a captured frame can be tagged with the output frame
/// one round trip (`latencyFrames`) earlier.
struct CaptureTagger: ~Copyable {
    let ring: BulkRing<CapturedFrame>
    /// A second consumer (the pitch tracker), fed the same frames.
    var analysisRing: BulkRing<CapturedFrame>?
    let latencyFrames: Int64
    let history: UnsafeMutablePointer<FrameMark>
    let mask: Int
    let scratch: UnsafeMutablePointer<CapturedFrame>
    /// The device frame after the last one recorded in the history (nil before the first).
    var nextFrame: Int64?

    init(ring: BulkRing<CapturedFrame>, latencyFrames: Int, maximumFrames: Int) {
        var size = 1
        while size < latencyFrames + 2 * maximumFrames + 1 { size *= 2 }
        self.ring = ring
        self.latencyFrames = Int64(latencyFrames)
        history = .allocate(capacity: size)
        history.initialize(repeating: .none, count: size)
        mask = size - 1
        scratch = .allocate(capacity: maximumFrames)
    }

    deinit {
        history.deallocate()
        scratch.deallocate()
    }

    /// Notes that output frames `frame ..< frame + count` played `mark`
    /// (song samples counting up from `mark.songSample`). Frames skipped
    /// since the last call (an xrun) are marked as gaps.
    mutating func record(frame: Int64, count: Int, mark: FrameMark) {
        if let next = nextFrame, frame > next {
            let lost = min(frame - next, Int64(mask + 1))
            for offset in 0..<lost { history[Int((next + offset) & Int64(mask))] = FrameMark(songSample: 0, kind: .gap) }
        }
        for index in 0..<count {
            var entry = mark
            entry.songSample += Int64(index)
            history[Int((frame + Int64(index)) & Int64(mask))] = entry
        }
        nextFrame = frame + Int64(count)
    }

    /// What output frame `frame` played, while it is still in the history.
    func mark(frame: Int64) -> FrameMark? {
        guard let next = nextFrame, frame < next, frame >= next - Int64(mask + 1) + latencyFrames else { return nil }
        return history[Int(frame & Int64(mask))]
    }

    /// Tags captured frames `frame ..< frame + count` and hands them to
    /// the ring (dropping, and counting, what does not fit).
    func capture(_ input: UnsafePointer<Float>, frame: Int64, count: Int, firstFrame: Int64) {
        for index in 0..<count {
            let heard = frame + Int64(index) - latencyFrames
            let mark = heard >= firstFrame ? history[Int(heard & Int64(mask))] : .none
            scratch[index] = CapturedFrame(value: input[index], mark: mark)
        }
        ring.push(scratch, count: count)
        analysisRing?.push(scratch, count: count)
    }
}
