@testable import AcapellaBox
import AcapellaDevices
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// A quartet recorded at once, a microphone each, through one capture and
/// one clock (`record --parts`).
@Suite(.serialized) struct EnsembleRecordingTests {
    static let quartet = [PartOnInput(part: "Soprano", input: 1), PartOnInput(part: "Alto", input: 2),
                          PartOnInput(part: "Tenor", input: 3), PartOnInput(part: "Bass", input: 4)]

    /// Each microphone hearing only its singer (no playback, no noise): the
    /// four takes are, sample for sample and offset for offset, the takes
    /// the same singers give recorded one at a time.
    @Test func fourInputsGiveTheTakesFourSingersGiveAlone() throws {
        var room = SimulatedRoom.Options()
        room.bleed = 0
        room.noise = 0
        let together = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: together.path) }
        var request = RecordingRequest(part: "")
        request.ensemble = Self.quartet
        room.inputs = 4
        let result = try RecordingSession.record(project: together, request: request, device: try SimulatedRoom(room))
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.takes.map(\.part) == ["Soprano", "Alto", "Tenor", "Bass"])
        #expect(result.takes.allSatisfy { $0.state == .kept && $0.active && $0.range == nil })
        room.inputs = 1
        for take in result.takes {
            let alone = try temporaryProject("amazing-grace.acasong")
            defer { try? FileManager.default.removeItem(atPath: alone.path) }
            let single = try #require(try RecordingSession.record(project: alone, request: RecordingRequest(part: take.part), device: try SimulatedRoom(room)).takes.first)
            #expect(take.alignmentOffsetSamples == single.alignmentOffsetSamples && take.frames == single.frames, "\(take.part): \(take) against \(single)")
            let (sung, _) = try AudioFile.readMono(together.path + "/" + take.file)
            let (solo, _) = try AudioFile.readMono(alone.path + "/" + single.file)
            let differing = zip(sung, solo).filter { $0 != $1 }.count
            #expect(sung.count == solo.count && differing == 0, "\(take.part): \(differing) samples differ from the take sung alone")
            #expect(sung.contains { abs($0) > 0.1 }, "\(take.part): the take holds the singer")
        }
    }

    /// Microphones that hear the other singers (a crosstalk matrix the test
    /// chooses) and the playback: every take is on its own singer to the
    /// sample, and the others are in it at their chosen gains (measured by
    /// least squares against what each singer sang).
    @Test func crosstalkIsInEachTakeAtItsGainAndInTime() throws {
        var room = SimulatedRoom.Options()
        room.inputs = 4
        room.bleed = 0
        room.crosstalk = [[1, 0.3, 0.1, 0.05], [0.25, 1, 0.2, 0.1], [0.1, 0.2, 1, 0.3], [0.05, 0.1, 0.35, 1]]
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        var request = RecordingRequest(part: "")
        request.ensemble = Self.quartet
        let result = try RecordingSession.record(project: project, request: request, device: try SimulatedRoom(room))
        #expect(result.takes.count == 4, "\(result.problems)")
        let schedule = try Schedule(score: project.score)
        let singers = (0..<4).map { SyntheticSinger(tones: schedule.tones[$0], sampleRate: 48_000) }
        let window: Range<Int64> = 100_000..<400_000
        for (microphone, take) in result.takes.enumerated() {
            let (samples, _) = try AudioFile.readMono(project.path + "/" + take.file)
            func taken(_ song: Int64) -> Float {
                let frame = song + take.alignmentOffsetSamples
                return frame >= 0 && frame < Int64(samples.count) ? samples[Int(frame)] : 0
            }
            let lag = bestLag({ singers[microphone].sample(atSong: $0) }, taken, over: window.lowerBound..<window.lowerBound + 20_000, maximumLag: 40)
            #expect(abs(lag) <= 1, "\(take.part): \(lag) samples off its singer")
            // The room's fractional delay (0.4 of a frame) softens each voice a little; the gains compare.
            let gains = leastSquares(columns: singers.map { singer in window.map { singer.sample(atSong: $0 + lag) } }, target: window.map { taken($0) })
            let chosen = room.crosstalk![microphone]
            for singer in 0..<4 {
                let relative = gains[singer] / gains[microphone]
                #expect(abs(relative - Double(chosen[singer])) <= 0.01, "\(take.part): singer \(singer + 1) at \(relative), chosen \(chosen[singer])")
            }
        }
    }

    /// An input the device does not have is refused before anything plays
    /// (nothing recorded, nothing listed); one part twice, or one input
    /// twice, is refused as the words are read.
    @Test func anInputTheDeviceLacksIsRefusedBeforeAnythingPlays() throws {
        var room = SimulatedRoom.Options()
        room.inputs = 2
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        var request = RecordingRequest(part: "")
        request.ensemble = [PartOnInput(part: "Soprano", input: 1), PartOnInput(part: "Alto", input: 3)]
        #expect(throws: ProjectError.self) { try RecordingSession.record(project: project, request: request, device: try SimulatedRoom(room)) }
        let device = try SimulatedRoom(room)
        do {
            _ = try RecordingSession.record(project: project, request: request, device: device)
        } catch {
            #expect(error.description.hasPrefix("Alto on input 3: simulated room") && error.description.hasSuffix("has 2 inputs"), "\(error)")
        }
        #expect(project.manifest.takes.isEmpty)
        #expect(try PartOnInput.list(parsing: "Soprano=1, Alto = 2") == [PartOnInput(part: "Soprano", input: 1), PartOnInput(part: "Alto", input: 2)])
        for bad in ["Soprano=1,Alto=1", "Soprano=1,soprano=2", "Soprano", "Soprano=0", "=1", "Soprano=1,"] {
            #expect(throws: ProjectError.self, "\(bad)") { try PartOnInput.list(parsing: bad) }
        }
    }
}

/// The coefficients x minimising |Σ x_j · columns_j − target|² (normal
/// equations, Gaussian elimination with partial pivoting).
func leastSquares(columns: [[Float]], target: [Float]) -> [Double] {
    let n = columns.count
    var matrix = [[Double]](repeating: [Double](repeating: 0, count: n + 1), count: n)
    for i in 0..<n {
        for j in 0..<n { matrix[i][j] = zip(columns[i], columns[j]).reduce(0) { $0 + Double($1.0) * Double($1.1) } }
        matrix[i][n] = zip(columns[i], target).reduce(0) { $0 + Double($1.0) * Double($1.1) }
    }
    for pivot in 0..<n {
        let best = (pivot..<n).max { abs(matrix[$0][pivot]) < abs(matrix[$1][pivot]) }!
        matrix.swapAt(pivot, best)
        for row in 0..<n where row != pivot {
            let factor = matrix[row][pivot] / matrix[pivot][pivot]
            for column in pivot...n { matrix[row][column] -= factor * matrix[pivot][column] }
        }
    }
    return (0..<n).map { matrix[$0][n] / matrix[$0][$0] }
}
