import AcapellaProject
import Foundation

/// Each take's analysis score as the takes list shows it, kept in the data
/// folder's cache (`cache/take-scores.json`, by project and take: its file,
/// length and nudge, so a nudged take is scored again) so that a restart
/// does not analyse again. A kept take without a score is analysed on first
/// need, one at a time, beside the loop; a damaged cache is started afresh
/// (it only saves work).
struct TakeScores: Equatable {
    /// By project path, then `key(take)`.
    private(set) var scores: [String: [String: Int]] = [:]

    static func path(dataDirectory: String) -> String { dataDirectory + "/cache/take-scores.json" }

    /// The analysis the scores come from: raised when it judges differently
    /// (2: the centre of the pitch held, issue 52; 3: a short note read at
    /// the singer's vibrato rate heard so far, the needle's word), so that a
    /// box updated scores its takes again rather than show the old analysis's figures.
    static let analysisRevision = 3

    /// What the score was measured on: a take changed (nudged) is another,
    /// and so is a score from another analysis.
    static func key(_ take: TakeRecord) -> String { "a\(analysisRevision) \(take.id) \(take.file) \(take.frames) \(take.nudgeSamples)" }

    func score(of take: TakeRecord, project: String) -> Int? { scores[project]?[Self.key(take)] }

    mutating func set(_ score: Int, for take: TakeRecord, project: String) {
        scores[project, default: [:]][Self.key(take)] = max(0, min(100, score))
    }

    /// Keeps only the scores of takes the project still has as they are now
    /// (a take nudged or removed leaves no stale score behind).
    mutating func keepOnly(_ takes: [TakeRecord], project: String) {
        let now = Set(takes.map(Self.key))
        scores[project] = scores[project]?.filter { now.contains($0.key) }
        if scores[project]?.isEmpty == true { scores[project] = nil }
    }

    /// The next take to analyse: the newest kept (or recovered) take with
    /// no score, none of `skipping` (in flight, or not analysable).
    func next(in takes: [TakeRecord], project: String, skipping: Set<Int>) -> TakeRecord? {
        takes.last { take in
            (take.state == .kept || take.state == .recovered) && !skipping.contains(take.id) && score(of: take, project: project) == nil
                && !Self.setStillRecording(take, in: takes)
        }
    }

    /// Whether another take sung with `take` (its `ensemble` mark) is still
    /// being written: its analysis would not hear that singer taken out.
    static func setStillRecording(_ take: TakeRecord, in takes: [TakeRecord]) -> Bool {
        guard let mark = take.ensemble else { return false }
        return takes.contains { $0.ensemble == mark && $0.state == .recording }
    }

    /// The cache as saved; empty when there is none or it is damaged.
    static func load(dataDirectory: String) -> TakeScores {
        guard let data = FileManager.default.contents(atPath: path(dataDirectory: dataDirectory)), data.count <= 8 << 20,
              let scores = try? JSONDecoder().decode([String: [String: Int]].self, from: data) else { return TakeScores() }
        return TakeScores(scores: scores)
    }

    func save(dataDirectory: String) throws {
        let file = Self.path(dataDirectory: dataDirectory)
        try Folders.make((file as NSString).deletingLastPathComponent)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.write([UInt8](try encoder.encode(scores)), to: file)
    }
}
