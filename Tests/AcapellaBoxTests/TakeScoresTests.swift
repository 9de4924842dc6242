@testable import AcapellaBox
import AcapellaProject
import Foundation
import Testing

/// The takes list's scores: by project and take as it is now (a nudged
/// take is scored again), kept across restarts, the next take to score
/// the newest kept one without a score.
@Suite struct TakeScoresTests {
    static func take(_ id: Int, state: TakeState = .kept, nudge: Int64 = 0) -> TakeRecord {
        var take = BoxSessionTests.take(id, state: state, frames: 96_000)
        take.nudgeSamples = nudge
        return take
    }

    @Test func scoresFollowTheTakesAsTheyAre() throws {
        var scores = TakeScores()
        let takes = [Self.take(1), Self.take(2, state: .discarded), Self.take(3), Self.take(4, state: .recording)]
        #expect(scores.next(in: takes, project: "/p", skipping: [])?.id == 3)
        #expect(scores.next(in: takes, project: "/p", skipping: [3])?.id == 1)
        scores.set(93, for: takes[2], project: "/p")
        scores.set(140, for: takes[0], project: "/p")
        #expect(scores.score(of: takes[2], project: "/p") == 93 && scores.score(of: takes[0], project: "/p") == 100)
        #expect(scores.score(of: takes[2], project: "/other") == nil)
        #expect(scores.next(in: takes, project: "/p", skipping: []) == nil, "discarded and recording takes are not scored")
        // Nudged: another take as far as its score goes.
        let nudged = Self.take(3, nudge: 480)
        #expect(scores.score(of: nudged, project: "/p") == nil)
        #expect(scores.next(in: [takes[0], nudged], project: "/p", skipping: [])?.id == 3)
        // Only the takes the project has now are kept.
        scores.keepOnly([takes[0], nudged], project: "/p")
        #expect(scores.scores["/p"]?.count == 1 && scores.score(of: takes[0], project: "/p") == 100)
        scores.keepOnly([], project: "/p")
        #expect(scores.scores["/p"] == nil)
    }

    @Test func keptAcrossARestartAndADamagedCacheIsStartedAfresh() throws {
        let data = NSTemporaryDirectory() + "scores-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: data) }
        #expect(TakeScores.load(dataDirectory: data) == TakeScores())
        var scores = TakeScores()
        scores.set(77, for: Self.take(5), project: "/box/projects/a.acaproj")
        try scores.save(dataDirectory: data)
        #expect(TakeScores.load(dataDirectory: data) == scores)
        try Data("{\"/p\": [1, 2".utf8).write(to: URL(fileURLWithPath: TakeScores.path(dataDirectory: data)))
        #expect(TakeScores.load(dataDirectory: data) == TakeScores())
    }

    /// A score the analysis before this one made (a box updated: the cache
    /// as it wrote it, keyed without the analysis's revision) is not shown:
    /// the take is scored again, and the old entry leaves the cache.
    @Test func aScoreFromTheAnalysisBeforeIsScoredAgain() throws {
        let data = NSTemporaryDirectory() + "scores-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: data) }
        let take = Self.take(5)
        let project = "/box/projects/a.acaproj"
        try FileManager.default.createDirectory(atPath: data + "/cache", withIntermediateDirectories: true)
        let before = "{\"\(project)\": {\"\(take.id) \(take.file) \(take.frames) \(take.nudgeSamples)\": 100}}"
        try Data(before.utf8).write(to: URL(fileURLWithPath: TakeScores.path(dataDirectory: data)))
        var scores = TakeScores.load(dataDirectory: data)
        #expect(scores.scores[project]?.count == 1, "the old cache is read: \(scores.scores)")
        #expect(scores.score(of: take, project: project) == nil)
        #expect(scores.next(in: [take], project: project, skipping: [])?.id == 5)
        scores.keepOnly([take], project: project)
        #expect(scores.scores[project] == nil)
    }
}
