import Synchronization
import AcapellaLock

/// Reads a take's audio a block at a time for a `TakeStream`. Called only
/// by the stream's reader (the butler thread, or the caller of `prime`).
public protocol TakeBlockSource: AnyObject, Sendable {
    /// Frames the take holds.
    var frameCount: Int64 { get }
    /// Reads `count` frames from frame `first` into `destination` (mono,
    /// gain applied); returns how many it read (the rest is zeroed by the
    /// caller). Never called on the render thread.
    func read(from first: Int64, count: Int, into destination: UnsafeMutablePointer<Float>) -> Int
    /// Samples read so far that were not numbers (read as silence): a
    /// damaged file. Asked for off the render thread, after reading.
    var damage: SampleDamage { get }
}

extension TakeBlockSource {
    /// None: a source that holds no file.
    public var damage: SampleDamage { SampleDamage() }
}

/// A take played from its file instead of from memory: a handful of
/// blocks of it are resident at a time, read ahead by the butler
/// (`TakeStreamButler`) around the places the song will be (the playing
/// position, the loop's start, a move waiting to happen).
///
/// Each slot holds one block, in memory of its own taken when the reader
/// first fills it and given back when the stream is not heard soon (see
/// `TakeStreamButler`): a take that is not sounding near the song's places
/// holds none. Its state is one atomic word: `empty`,
/// `busy` (the butler writing it) or the block index shifted left by one
/// with the low bit set while the render thread reads it. The render
/// thread takes a slot by a compare-and-exchange that sets that bit and
/// gives it back by clearing it; the butler only claims a slot whose bit
/// is clear, by a compare-and-exchange to `busy`. Neither ever waits: a
/// block the render thread does not find is a dropout — silence, counted
/// and located — never a stall and never a shift.
public final class TakeStream: @unchecked Sendable {
    // @unchecked: slot memory is handed between the threads by the
    // acquire/release pairs on `states`, as described above.

    /// Frames per block (85 ms at 48 kHz).
    public static let blockFrames = 4_096
    /// Blocks resident at a time at most (1.4 s at 48 kHz, 256 KiB).
    public static let defaultSlots = 16
    /// The fewest that keep two blocks ready at the position, the loop's
    /// start, a move waiting in the engine and one announced, with one free.
    public static let minimumSlots = 9

    static let empty: Int64 = -1
    static let busy: Int64 = -2

    /// Frames the take holds.
    public let frameCount: Int64
    /// Blocks held at once.
    public let slotCount: Int
    /// What the stream is, for messages ("take 3 (Alto)").
    public let name: String
    let source: any TakeBlockSource
    /// What its file held that was not a number, read so far (off the render thread).
    public var damage: SampleDamage { source.damage }
    /// Each slot's block of samples; nil while the slot is empty and has
    /// none. Written by the reader only while it holds the slot `busy`, read
    /// by the render thread only while it holds the slot pinned.
    let buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    let states: UnsafeMutablePointer<Atomic<Int64>>
    /// Slots holding memory now (the reader's count).
    private let held = Atomic<Int>(0)
    /// The butler's passes in a row that found the stream not heard near
    /// the song's places (the reader's count).
    let quietPasses = Atomic<Int>(0)
    private let missedFrames = Atomic<Int64>(0)
    private let lastMissedSong = Atomic<Int64>(Int64.min)
    private let blocksRead = Atomic<Int64>(0)

    /// A stream over `source` with room for `slots` blocks (their memory
    /// taken as they are read). Allocates; off the render thread.
    public init(source: any TakeBlockSource, name: String, slots: Int = TakeStream.defaultSlots) {
        precondition(slots >= Self.minimumSlots, "a stream needs room for two blocks at each place the song may go")
        self.source = source
        self.name = name
        frameCount = source.frameCount
        slotCount = slots
        buffers = .allocate(capacity: slots)
        buffers.initialize(repeating: nil, count: slots)
        states = .allocate(capacity: slots)
        for slot in 0..<slots { (states + slot).initialize(to: Atomic(Self.empty)) }
    }

    deinit {
        for slot in 0..<slotCount { buffers[slot]?.deallocate() }
        buffers.deinitialize(count: slotCount)
        buffers.deallocate()
        states.deinitialize(count: slotCount)
        states.deallocate()
    }

    // MARK: The render thread's side

    /// Copies take frames `first ..< first + count` into `destination`:
    /// frames outside the take are 0; frames of a block that is not
    /// resident are 0 and counted as missed at song sample `song` (the
    /// song sample of `first`). Render-thread safe: no allocation, no
    /// lock, no wait.
    public func read(into destination: UnsafeMutablePointer<Float>, from first: Int64, count: Int, song: Int64) {
        let blockFrames = Int64(Self.blockFrames)
        var done = 0
        var missed = 0
        var missedAt = Int64.min
        while done < count {
            let frame = first + Int64(done)
            if frame < 0 {
                let run = Int(min(Int64(count - done), -frame))
                (destination + done).update(repeating: 0, count: run)
                done += run
                continue
            }
            if frame >= frameCount {
                (destination + done).update(repeating: 0, count: count - done)
                break
            }
            let block = frame / blockFrames
            let offset = Int(frame - block * blockFrames)
            let run = Int(min(Int64(count - done), blockFrames - Int64(offset), frameCount - frame))
            if let slot = pin(block) {
                // A resident slot always has memory; were it ever without, silence, and the slot given back all the same.
                if let samples = buffers[slot] { (destination + done).update(from: samples + offset, count: run) } else { (destination + done).update(repeating: 0, count: run) }
                states[slot].store(block << 1, ordering: .releasing)
            } else {
                (destination + done).update(repeating: 0, count: run)
                if missed == 0 { missedAt = song + Int64(done) }
                missed += run
            }
            done += run
        }
        if missed > 0 {
            missedFrames.add(Int64(missed), ordering: .relaxed)
            lastMissedSong.store(missedAt, ordering: .relaxed)
        }
    }

    /// Whether take frame `frame` is resident now (frames outside the
    /// take always are). Render-thread safe.
    public func isResident(_ frame: Int64) -> Bool {
        guard frame >= 0 && frame < frameCount else { return true }
        return slot(holding: frame / Int64(Self.blockFrames)) != nil
    }

    /// Takes the slot holding `block` for reading, or nil.
    @inline(__always)
    private func pin(_ block: Int64) -> Int? {
        let free = block << 1
        for slot in 0..<slotCount where states[slot].load(ordering: .relaxed) == free {
            if states[slot].compareExchange(expected: free, desired: free | 1, ordering: .acquiring).exchanged { return slot }
        }
        return nil
    }

    private func slot(holding block: Int64) -> Int? {
        for slot in 0..<slotCount {
            let state = states[slot].load(ordering: .acquiring)
            if state >= 0 && state >> 1 == block { return slot }
        }
        return nil
    }

    // MARK: What went wrong, for the control side

    /// Frames the render thread wanted and did not find, ever.
    public var missed: Int64 { missedFrames.load(ordering: .relaxed) }
    /// The song sample of the latest miss (Int64.min: none).
    public var lastMissAt: Int64 { lastMissedSong.load(ordering: .relaxed) }
    /// Blocks read from the file, ever.
    public var reads: Int64 { blocksRead.load(ordering: .relaxed) }

    // MARK: The reader's side (the butler, or whoever primes the stream)

    /// The blocks resident now. Reader only.
    func residentBlocks() -> [Int64] {
        (0..<slotCount).compactMap { slot in
            let state = states[slot].load(ordering: .acquiring)
            return state >= 0 ? state >> 1 : nil
        }
    }

    /// Reads `block` into a slot whose block is not in `keep`: an empty
    /// one, given memory, while fewer than `most` slots hold any; else one
    /// whose block is not kept (its memory used again). An empty slot never
    /// holds memory: `trim` empties a slot as it frees it. False when every
    /// such slot is in use this instant. Reader only.
    @discardableResult
    func load(_ block: Int64, keeping keep: Set<Int64>, most: Int = Int.max) -> Bool {
        var claimed: Int?
        for slot in 0..<slotCount where claimed == nil && held.load(ordering: .relaxed) < most {
            if states[slot].compareExchange(expected: Self.empty, desired: Self.busy, ordering: .acquiringAndReleasing).exchanged { claimed = slot }
        }
        for slot in 0..<slotCount where claimed == nil {
            let state = states[slot].load(ordering: .relaxed)
            guard state >= 0, state & 1 == 0, !keep.contains(state >> 1) else { continue }
            if states[slot].compareExchange(expected: state, desired: Self.busy, ordering: .acquiringAndReleasing).exchanged { claimed = slot }
        }
        guard let slot = claimed else { return false }
        if buffers[slot] == nil {
            buffers[slot] = .allocate(capacity: Self.blockFrames)
            held.add(1, ordering: .relaxed)
        }
        let destination = buffers[slot]!
        let first = block * Int64(Self.blockFrames)
        let wanted = Int(max(0, min(Int64(Self.blockFrames), frameCount - first)))
        let read = max(0, min(wanted, source.read(from: first, count: wanted, into: destination)))
        if read < Self.blockFrames { (destination + read).update(repeating: 0, count: Self.blockFrames - read) }
        blocksRead.add(1, ordering: .relaxed)
        states[slot].store(block << 1, ordering: .releasing)
        return true
    }

    /// Slots holding memory now. Reader only.
    public var heldSlots: Int { held.load(ordering: .relaxed) }

    /// Gives back the memory of resident slots whose block is not in `keep`
    /// and that the render thread is not reading this instant, emptying
    /// them, until at most `most` slots hold any. Reader only.
    func trim(to most: Int, keeping keep: Set<Int64>) {
        for slot in 0..<slotCount where held.load(ordering: .relaxed) > most {
            let state = states[slot].load(ordering: .relaxed)
            guard state >= 0, state & 1 == 0, !keep.contains(state >> 1),
                  states[slot].compareExchange(expected: state, desired: Self.busy, ordering: .acquiringAndReleasing).exchanged else { continue }
            if let buffer = buffers[slot] {
                buffer.deallocate()
                buffers[slot] = nil
                held.subtract(1, ordering: .relaxed)
            }
            states[slot].store(Self.empty, ordering: .releasing)
        }
    }
}

/// Where the song is and will be, published by the render thread each
/// period for the butler: the position, the loop's start, and the next
/// place a move will take it (a locate waiting for its blocks, the end of
/// a count-in, a punch's pre-roll). Song samples; `Int64.min` is none.
public final class StreamCue: Sendable {
    let position = Atomic<Int64>(0)
    let loopStart = Atomic<Int64>(Int64.min)
    let loopEnd = Atomic<Int64>(Int64.min)
    let next = Atomic<Int64>(Int64.min)
    let announced = Atomic<Int64>(Int64.min)

    /// A cue at song sample 0.
    public init() {}

    /// The control thread says where a move it is sending will land (a
    /// locate, a punch's pre-roll), so the butler reads there before the
    /// render thread gets the command.
    public func announce(_ song: Int64) {
        announced.store(song, ordering: .relaxed)
    }

    /// The render thread made the move announced for `song`: no longer a
    /// place to keep ready (a newer announcement stays). Render-thread safe.
    public func arrived(at song: Int64) {
        _ = announced.compareExchange(expected: song, desired: Int64.min, ordering: .relaxed)
    }

    /// Publishes (render-thread safe: atomic stores only).
    public func publish(position: Int64, loop: Range<Int64>?, next: Int64?) {
        self.position.store(position, ordering: .relaxed)
        loopStart.store(loop?.lowerBound ?? Int64.min, ordering: .relaxed)
        loopEnd.store(loop?.upperBound ?? Int64.min, ordering: .relaxed)
        self.next.store(next ?? Int64.min, ordering: .relaxed)
    }

    /// What was published and announced last: the position, the loop,
    /// and the places a move will take the song to.
    public var places: (position: Int64, loop: Range<Int64>?, cues: [Int64]) {
        let start = loopStart.load(ordering: .relaxed)
        let end = loopEnd.load(ordering: .relaxed)
        let cues = [next.load(ordering: .relaxed), announced.load(ordering: .relaxed)].filter { $0 != Int64.min }
        return (position.load(ordering: .relaxed), start == Int64.min || end <= start ? nil : start..<end, cues)
    }
}

/// One use of a stream on the song's timeline: take frame = song sample +
/// `songToFile`, heard over `heard` (song samples, fades included).
public struct StreamUse: Sendable {
    /// The stream.
    public let stream: TakeStream
    /// Take frame minus song sample.
    public let songToFile: Int64
    /// The song samples where the take can sound.
    public let heard: Range<Int64>

    /// The blocks to have resident for the song's places, most urgent
    /// first: the position's next few, the loop's start and the next move's
    /// first few, then the rest ahead of the position (not past the loop's
    /// end while inside the loop). At most `slots − 1`, so a slot is always
    /// free to refill.
    func wanted(position: Int64, loop: Range<Int64>?, cues: [Int64], slots: Int) -> [Int64] {
        let blockFrames = Int64(TakeStream.blockFrames)
        let room = slots - 1
        let cueBlocks = 3
        var ordered: [Int64] = []
        // The blocks holding song samples from `song` for `blocks` blocks' worth, within what is heard.
        func add(from song: Int64, upTo limit: Int64, blocks: Int) {
            guard blocks > 0 else { return }
            let lookahead = Int64(blocks) * blockFrames
            let start = max(song, heard.lowerBound)
            let end = min(limit, heard.upperBound, song + lookahead)
            guard start < end else { return }
            let first = max(0, start + songToFile)
            let last = min(stream.frameCount, end + songToFile)
            guard first < last else { return }
            var block = first / blockFrames
            while block * blockFrames < last && ordered.count < room {
                if !ordered.contains(block) { ordered.append(block) }
                block += 1
            }
        }
        let inLoop = loop.map { $0.contains(position) } ?? false
        let limit = inLoop ? loop!.upperBound : Int64.max / 4
        let reserved = ((loop != nil ? 1 : 0) + cues.count) * cueBlocks
        // Two blocks' worth at every place first, then the position's
        // read-ahead, then the rest of each place's.
        for blocks in [2, 0] {
            add(from: position, upTo: limit, blocks: blocks == 0 ? room - reserved : blocks)
            if let loop { add(from: loop.lowerBound, upTo: loop.upperBound, blocks: blocks == 0 ? cueBlocks : blocks) }
            for cue in cues { add(from: cue, upTo: Int64.max / 4, blocks: blocks == 0 ? cueBlocks : blocks) }
        }
        return ordered
    }
}

/// The butler: keeps every playing stream's blocks read ahead of the
/// render thread. `service` does one pass; tests and the offline mix call
/// it themselves between periods, the box runs it on a thread of its own
/// (`ButlerThread`). The render thread never waits for it.
///
/// The streams share a budget of blocks: each stream heard near the song's
/// places gets an equal share of it (at least `TakeStream.minimumSlots`,
/// at most its own room), and a stream not heard there gives its memory
/// back. The box's memory for its takes is then the budget whatever the
/// song's length or its number of parts (beyond the budget, only when so
/// many takes sound at once that each is down to its fewest).
public final class TakeStreamButler: Sendable {
    private let uses = VisibleLock<[StreamUse]>([])
    /// Where the song is (shared with the renderer).
    public let cue: StreamCue
    /// Blocks the streams share (640: 10 MiB, 16 blocks for each of 40
    /// takes sounding at once, 10 for each of 64).
    public let budget: Int
    /// The default budget.
    public static let defaultBudget = 640
    /// Passes in a row a stream is not heard near the song's places before
    /// its memory is given back (the thread's passes are 4 ms apart when
    /// there is nothing to read: a quarter of a second at least).
    public static let quietPasses = 64
    /// After each pass: the position it read for, and the song sample up to
    /// which every take heard from there has its blocks resident.
    private let passPosition = Atomic<Int64>(Int64.max)
    private let horizon = Atomic<Int64>(Int64.min)

    /// A butler reading for `cue`, its streams sharing `budget` blocks.
    public init(cue: StreamCue, budget: Int = TakeStreamButler.defaultBudget) {
        self.cue = cue
        self.budget = budget
    }

    /// The streams to keep read ahead: every streamed layer of `takes`,
    /// heard with fades of `fade` samples.
    public func watch(_ takes: [PartTakes], fade: Int64) {
        let new = takes.flatMap { part in part.layers.compactMap { $0.streamUse(fade: fade) } }
        uses.withLock { $0 = new }
    }

    /// The streams to keep read ahead, as they are.
    public func watch(uses new: [StreamUse]) {
        uses.withLock { $0 = new }
    }

    /// Streams watched now.
    public var watched: [StreamUse] { uses.withLock { $0 } }

    /// One pass: reads every wanted block not yet resident, most urgent
    /// first across all streams (the first block of each, then the second…),
    /// stopping after `limit` blocks (the thread's passes are short, so a
    /// new place — a locate, a wrap — is seen within a few reads). Returns
    /// the blocks read.
    @discardableResult
    public func service(limit: Int = Int.max) -> Int {
        let current = watched
        let (position, loop, cues) = cue.places
        var wanted = current.map { $0.wanted(position: position, loop: loop, cues: cues, slots: $0.stream.slotCount) }
        // The budget shared by the streams heard near the song's places.
        var heard = Set<ObjectIdentifier>()
        for (index, use) in current.enumerated() where !wanted[index].isEmpty { heard.insert(ObjectIdentifier(use.stream)) }
        let share = max(TakeStream.minimumSlots, budget / max(1, heard.count))
        for (index, use) in current.enumerated() where share < use.stream.slotCount && !wanted[index].isEmpty {
            wanted[index] = use.wanted(position: position, loop: loop, cues: cues, slots: share)
        }
        // Several uses of one stream (a take repeated per verse) share its slots.
        var keep: [ObjectIdentifier: Set<Int64>] = [:]
        for (index, use) in current.enumerated() { keep[ObjectIdentifier(use.stream), default: []].formUnion(wanted[index]) }
        // What a stream holds beyond its share is given back, and all it
        // holds once it has not been heard soon for `quietPasses` passes in
        // a row (not at once: for a period after a move the places still
        // say where the song was, and its blocks where it went are wanted).
        var seen = Set<ObjectIdentifier>()
        for use in current where seen.insert(ObjectIdentifier(use.stream)).inserted {
            let stream = ObjectIdentifier(use.stream)
            if heard.contains(stream) {
                use.stream.quietPasses.store(0, ordering: .relaxed)
                use.stream.trim(to: share, keeping: keep[stream] ?? [])
            } else if use.stream.quietPasses.add(1, ordering: .relaxed).newValue >= Self.quietPasses {
                use.stream.trim(to: 0, keeping: [])
            }
        }
        var resident = current.map { Set($0.stream.residentBlocks()) }
        var loaded = 0
        let deepest = wanted.map(\.count).max() ?? 0
        ranks: for rank in 0..<deepest {
            for (index, use) in current.enumerated() where rank < wanted[index].count {
                if loaded >= limit { break ranks }
                let block = wanted[index][rank]
                guard !resident[index].contains(block) else { continue }
                if use.stream.load(block, keeping: keep[ObjectIdentifier(use.stream)] ?? [], most: share) {
                    resident[index].insert(block)
                    loaded += 1
                }
            }
        }
        publishHorizon(current, position: position, loop: loop)
        return loaded
    }

    /// Slots holding memory now, over every stream watched (each counted once).
    public var heldSlots: Int {
        var seen = Set<ObjectIdentifier>()
        return watched.reduce(0) { sum, use in seen.insert(ObjectIdentifier(use.stream)).inserted ? sum + use.stream.heldSlots : sum }
    }

    /// Whether the song can go on `margin` samples from where it is now
    /// without a block missing, as of the last pass (false after a jump
    /// back, until the next pass). For the simulated room running faster
    /// than real time, which waits for the box's readers; lock-free.
    public func isAhead(margin: Int64) -> Bool {
        let position = cue.position.load(ordering: .relaxed)  // (not `places`: no array on the device's thread)
        return position >= passPosition.load(ordering: .acquiring) && position + margin <= horizon.load(ordering: .acquiring)
    }

    private func publishHorizon(_ current: [StreamUse], position: Int64, loop: Range<Int64>?) {
        let blockFrames = Int64(TakeStream.blockFrames)
        // Inside a loop the song goes no further than its end (the wrap is a jump back: see `isAhead`).
        let limit = loop.flatMap { $0.contains(position) ? $0.upperBound : nil } ?? Int64.max
        var end = Int64.max
        for use in current where use.heard.upperBound > position {
            let start = max(position, use.heard.lowerBound)
            guard start - position < 8 * blockFrames, start < limit else { continue }  // not heard soon
            let resident = Set(use.stream.residentBlocks())
            let stop = min(use.heard.upperBound, limit)
            var frame = max(0, start + use.songToFile)
            while frame < use.stream.frameCount && frame - use.songToFile < stop && resident.contains(frame / blockFrames) {
                frame = (frame / blockFrames + 1) * blockFrames
            }
            // Beyond the take (or what is heard of it, or the loop's end) nothing more is needed.
            let reached = frame >= use.stream.frameCount || frame - use.songToFile >= stop ? Int64.max : frame - use.songToFile
            end = min(end, reached)
        }
        horizon.store(end, ordering: .releasing)
        passPosition.store(position, ordering: .releasing)
    }
}
