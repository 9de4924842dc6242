import Synchronization

/// A bounded single-producer, single-consumer ring: how commands from a
/// control thread reach the render loop, and later how captured audio leaves
/// it. Lock-free and wait-free: `push` and `pop` never block, never
/// allocate; a full ring refuses (`push` returns false) rather than waits.
///
/// `@unchecked Sendable` because the storage is shared raw memory. The
/// invariant that makes it safe: exactly one thread ever calls `push` and
/// exactly one thread ever calls `pop`. The producer writes a slot, then
/// publishes it with a releasing store of `tail`; the consumer's acquiring
/// load of `tail` makes the slot visible before it reads it, and the same
/// pairing on `head` hands the slot back.
public final class CommandRing<Element: Sendable>: @unchecked Sendable {
    private let slots: Int
    private let storage: UnsafeMutablePointer<Element?>
    private let head = Atomic<Int>(0)  // next slot to read (consumer owns)
    private let tail = Atomic<Int>(0)  // next slot to write (producer owns)

    /// A ring holding up to `capacity` elements. Allocates; call it off the
    /// render thread.
    public init(capacity: Int) {
        precondition(capacity > 0, "a ring needs room")
        slots = capacity + 1  // one slot stays empty to tell full from empty
        storage = .allocate(capacity: slots)
        storage.initialize(repeating: nil, count: slots)
    }

    deinit {
        storage.deinitialize(count: slots)
        storage.deallocate()
    }

    /// Adds an element; false when full. Producer thread only.
    public func push(_ element: Element) -> Bool {
        let write = tail.load(ordering: .relaxed)
        let next = write + 1 == slots ? 0 : write + 1
        if next == head.load(ordering: .acquiring) { return false }
        storage[write] = element
        tail.store(next, ordering: .releasing)
        return true
    }

    /// Takes the oldest element, or nil when empty. Consumer thread only;
    /// render-thread safe.
    public func pop() -> Element? {
        let read = head.load(ordering: .relaxed)
        if read == tail.load(ordering: .acquiring) { return nil }
        let element = storage[read]
        storage[read] = nil
        head.store(read + 1 == slots ? 0 : read + 1, ordering: .releasing)
        return element
    }
}
