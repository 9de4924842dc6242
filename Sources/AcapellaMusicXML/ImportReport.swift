/// What an import skipped or changed, one line per kind of thing, with a
/// count and the first measure where it happened — written for a choir
/// director, not a programmer.
public struct ImportReport: Hashable, Sendable {
    /// One kind of change.
    public struct Entry: Hashable, Sendable {
        /// What happened, e.g. "chords: kept the top note".
        public var message: String
        /// How many times.
        public var count: Int
        /// First measure (in the imported song's numbering), when it is about one.
        public var firstMeasure: Int?
    }

    /// Entries in the order they first happened.
    public private(set) var entries: [Entry] = []
    private var index: [String: Int] = [:]

    /// An empty report.
    public init() {}

    mutating func note(_ message: String, measure: Int? = nil, count: Int = 1) {
        if let at = index[message] {
            entries[at].count += count
            if entries[at].firstMeasure == nil { entries[at].firstMeasure = measure }
        } else {
            index[message] = entries.count
            entries.append(Entry(message: message, count: count, firstMeasure: measure))
        }
    }

    /// The report as text lines: "chords: kept the top note ×12, first at
    /// measure 3"; a one-off fact without a measure has no count.
    public var lines: [String] {
        entries.map { entry in
            entry.message + (entry.count == 1 && entry.firstMeasure == nil ? "" : " ×\(entry.count)")
                + (entry.firstMeasure.map { ", first at measure \($0)" } ?? "")
        }
    }
}
