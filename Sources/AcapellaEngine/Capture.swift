import Synchronization

/// One captured frame, tagged on the render thread with what the singer
/// was hearing when they made it: the song sample of the output frame one
/// round trip earlier, and whether that moment was being recorded.
public struct CapturedFrame: BitwiseCopyable, Sendable {
    /// The microphone's sample.
    public var value: Float
    /// What the output frame one round trip earlier played.
    public var mark: FrameMark
    /// The device could not say how capture and playback lined up after
    /// its last restart (unlinked streams without timestamps): `mark` may
    /// be off by the streams' unknown skew.
    public var unaligned: Bool

    /// A tagged frame.
    public init(value: Float, mark: FrameMark, unaligned: Bool = false) {
        self.value = value
        self.mark = mark
        self.unaligned = unaligned
    }
}

/// How a period's capture lines up with its playback since the device's
/// last (re)start. Linked streams start on one trigger, so the round trip
/// measured once holds after every restart; unlinked streams start one
/// after the other, and the device measures by how much from the two
/// streams' trigger timestamps.
public struct StreamAlignment: BitwiseCopyable, Hashable, Sendable {
    /// (playback start − capture start) in frames at the latest start: a
    /// captured frame heard the output frame `roundTrip + captureSkewFrames`
    /// before it. 0 for linked streams.
    public var captureSkewFrames: Int64
    /// Whether the device knows it (false: unlinked streams whose start
    /// times it could not read).
    public var known: Bool

    /// Capture and playback started by one trigger (`snd_pcm_link`, the
    /// simulated room).
    public static let linked = StreamAlignment(captureSkewFrames: 0, known: true)
    /// The most skew the capture tagging follows (170 ms at 48 kHz; two
    /// streams started by hand one after the other are microseconds apart):
    /// beyond it, the alignment is unknown.
    public static let maximumSkewFrames: Int64 = 8_192

    /// Started apart, and nobody can say by how much.
    public static let unknown = StreamAlignment(captureSkewFrames: 0, known: false)

    /// An alignment.
    public init(captureSkewFrames: Int64, known: Bool) {
        self.captureSkewFrames = captureSkewFrames
        self.known = known
    }

    /// Measured from the streams' trigger times (nanoseconds, one clock):
    /// the playback's start less the capture's, in frames.
    public static func measured(playbackStart: Int64, captureStart: Int64, sampleRate: Int) -> StreamAlignment {
        let frames = (Double(playbackStart) - Double(captureStart)) * Double(sampleRate) / 1e9
        guard abs(frames) <= Double(maximumSkewFrames) else { return .unknown }
        return StreamAlignment(captureSkewFrames: Int64(frames.rounded()), known: true)
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
    /// A second consumer (the pitch tracker), fed the same frames — or,
    /// with `analysisInput`, that input's on its own (the part the needle
    /// follows in a set recorded at once, not the average of the singers).
    var analysisRing: BulkRing<CapturedFrame>?
    var analysisInput: Int?
    /// Rings fed one input each (the parts recorded at once, a microphone
    /// each): the same marks, the value from input `input`.
    var inputRings: [(ring: BulkRing<CapturedFrame>, input: Int)] = []
    let latencyFrames: Int64
    let history: UnsafeMutablePointer<FrameMark>
    let mask: Int
    let scratch: UnsafeMutablePointer<CapturedFrame>
    /// The device frame after the last one recorded in the history (nil before the first).
    var nextFrame: Int64?
    /// The first device frame after the latest jump of the frame clock (a
    /// restart): output from before it was dropped with the device's
    /// buffer, so nothing captured after it can have heard that.
    var restartFrame: Int64 = .min

    init(ring: BulkRing<CapturedFrame>, latencyFrames: Int, maximumFrames: Int) {
        // Room for the round trip, two periods and a skew between unlinked
        // streams (up to `maximumSkewFrames` either way).
        var size = 1
        while size < latencyFrames + 2 * maximumFrames + 2 * Int(StreamAlignment.maximumSkewFrames) + 1 { size *= 2 }
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
            restartFrame = frame
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
    /// the ring (dropping, and counting, what does not fit). A frame heard
    /// the output `latencyFrames + alignment.captureSkewFrames` before it;
    /// one whose output is no longer (or not yet) in the history, or was
    /// played before the device's latest restart (dropped unheard), is a gap.
    func capture(_ input: UnsafePointer<Float>, frame: Int64, count: Int, firstFrame: Int64, alignment: StreamAlignment,
                 inputs: UnsafePointer<Float>? = nil, inputCount: Int = 1) {
        let oldest = max((nextFrame ?? 0) - Int64(mask + 1), restartFrame)
        for index in 0..<count {
            let heard = frame + Int64(index) - latencyFrames - alignment.captureSkewFrames
            let mark: FrameMark
            if heard < firstFrame {
                mark = .none
            } else if heard < oldest || heard >= (nextFrame ?? 0) {
                mark = FrameMark(songSample: 0, kind: .gap)
            } else {
                mark = history[Int(heard & Int64(mask))]
            }
            scratch[index] = CapturedFrame(value: input[index], mark: mark, unaligned: !alignment.known)
        }
        ring.push(scratch, count: count)
        if analysisInput == nil { analysisRing?.push(scratch, count: count) }
        for (ring, channel) in inputRings {
            take(channel, count: count, input: input, inputs: inputs, inputCount: inputCount)
            ring.push(scratch, count: count)
        }
        if let channel = analysisInput, let analysisRing {
            take(channel, count: count, input: input, inputs: inputs, inputCount: inputCount)
            analysisRing.push(scratch, count: count)
        }
    }

    /// The scratch's values (their marks kept) from input `channel` on its
    /// own; a device with one input gives its mono input as input 0 (and
    /// silence for any other: the CLI and the box refuse that before
    /// anything plays).
    private func take(_ channel: Int, count: Int, input: UnsafePointer<Float>, inputs: UnsafePointer<Float>?, inputCount: Int) {
        for index in 0..<count {
            if let inputs, channel < inputCount {
                scratch[index].value = inputs[channel * count + index]
            } else {
                scratch[index].value = channel == 0 ? input[index] : 0
            }
        }
    }
}
