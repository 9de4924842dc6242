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
        // Marked as sung together, and only they.
        #expect(result.takes[0].ensemble != nil && Set(result.takes.map(\.ensemble)).count == 1, "\(result.takes.map(\.ensemble))")
        room.inputs = 1
        for take in result.takes {
            let alone = try temporaryProject("amazing-grace.acasong")
            defer { try? FileManager.default.removeItem(atPath: alone.path) }
            let single = try #require(try RecordingSession.record(project: alone, request: RecordingRequest(part: take.part), device: try SimulatedRoom(room)).takes.first)
            #expect(take.alignmentOffsetSamples == single.alignmentOffsetSamples && take.frames == single.frames, "\(take.part): \(take) against \(single)")
            #expect(single.ensemble == nil)
            let (sung, _) = try AudioFile.readMono(together.path + "/" + take.file)
            let (solo, _) = try AudioFile.readMono(alone.path + "/" + single.file)
            let differing = zip(sung, solo).filter { $0 != $1 }.count
            #expect(sung.count == solo.count && differing == 0, "\(take.part): \(differing) samples differ from the take sung alone")
            #expect(sung.contains { abs($0) > 0.1 }, "\(take.part): the take holds the singer")
        }
    }

    /// The quartet recorded at once in a room of four close microphones
    /// hearing each other as `crosstalk` says (no playback in them), each
    /// singer as `singers` (by part) says.
    static func recordQuartet(crosstalk: [[Float]], delays: [[Int]]? = nil, singers: [String: SingerSettings] = [:]) throws -> (Project, RecordingResult) {
        var room = SimulatedRoom.Options()
        room.inputs = 4
        room.bleed = 0
        room.crosstalk = crosstalk
        room.crosstalkDelays = delays
        let project = try temporaryProject("amazing-grace.acasong")
        var request = RecordingRequest(part: "")
        request.ensemble = quartet
        request.partSingers = singers
        let result = try RecordingSession.record(project: project, request: request, device: try SimulatedRoom(room))
        #expect(result.takes.count == 4, "\(result.problems)")
        return (project, result)
    }

    /// Microphones that hear the other singers (a crosstalk matrix the test
    /// chooses) and the playback: every take is on its own singer to the
    /// sample, and the others are in it at their chosen gains (measured by
    /// least squares against what each singer sang).
    @Test func crosstalkIsInEachTakeAtItsGainAndInTime() throws {
        let crosstalk: [[Float]] = [[1, 0.3, 0.1, 0.05], [0.25, 1, 0.2, 0.1], [0.1, 0.2, 1, 0.3], [0.05, 0.1, 0.35, 1]]
        let (project, result) = try Self.recordQuartet(crosstalk: crosstalk)
        defer { try? FileManager.default.removeItem(atPath: project.path) }
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
            let chosen = crosstalk[microphone]
            for singer in 0..<4 {
                let relative = gains[singer] / gains[microphone]
                #expect(abs(relative - Double(chosen[singer])) <= 0.01, "\(take.part): singer \(singer + 1) at \(relative), chosen \(chosen[singer])")
            }
        }
    }

    /// Four microphones that hear each other at up to 0.35 of their own
    /// singer (−9 dB: microphones too far apart), each singer detuned by a
    /// chosen amount, the other singers reaching each microphone as late as
    /// their own (the room's paths alike) or 140–330 frames later (1–2.4 m
    /// further, the paths the test chooses): every sung note's centre is
    /// read within 3 cents of the truth at p95 with each other singer taken
    /// out on their own (4 with the longer paths, found by the fit), and at
    /// least five times closer than with them fitted as one gain.
    @Test(.fullSuiteOnly, arguments: [nil, [[0, 140, 250, 330], [140, 0, 140, 250], [250, 140, 0, 140], [330, 250, 140, 0]]] as [[[Int]]?])
    func eachOtherSingerIsTakenOutOnTheirOwn(delays: [[Int]]?) throws {
        let crosstalk: [[Float]] = [[1, 0.3, 0.2, 0.1], [0.35, 1, 0.3, 0.15], [0.15, 0.3, 1, 0.35], [0.1, 0.2, 0.3, 1]]
        let detunes: [Double] = [7, -18, 12, -9]
        var singers: [String: SingerSettings] = [:]
        for (index, part) in ["Soprano", "Alto", "Tenor", "Bass"].enumerated() {
            var singer = SingerSettings()
            singer.detuneCents = detunes[index]
            singers[part] = singer
        }
        let (project, result) = try Self.recordQuartet(crosstalk: crosstalk, delays: delays, singers: singers)
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        func errors(unmixing: Bool) throws -> (p95: Double, missed: Int) {
            var errors: [Double] = []
            var missed = 0
            for (index, take) in result.takes.enumerated() {
                let (report, _) = try TakeReport.analyze(take, in: project, unmixing: unmixing)
                for note in report.notes where note.judged {
                    guard let cents = note.analysis.cents else { missed += 1; continue }
                    errors.append(abs(cents - detunes[index]))
                }
            }
            errors.sort()
            return (errors[Int(Double(errors.count - 1) * 0.95)], missed)
        }
        let unmixed = try errors(unmixing: true)
        let asOne = try errors(unmixing: false)
        // The bass set aside and the tenor nudged 30 ms: the soprano's reading is
        // the same (the bass's microphone still heard the bass; a nudge moves how
        // a take plays, not what the microphones heard at once).
        let soprano = try TakeReport.analyze(result.takes[0], in: project).report.notes.compactMap(\.analysis.cents)
        try project.discard(result.takes[3].id)
        _ = try project.nudge(result.takes[2].id, by: 1_440)
        let again = try TakeReport.analyze(try #require(project.manifest.takes.first { $0.id == result.takes[0].id }), in: project).report.notes.compactMap(\.analysis.cents)
        #expect(again == soprano, "the soprano read otherwise after the bass was set aside and the tenor nudged")
        print(String(format: "crosstalk up to 0.35, %@: note centres p95 %.2f cents, %d missed, each singer taken out on their own; %.2f cents, %d missed, fitted as one", delays == nil ? "no path delays" : "paths 1-2.4 m longer", unmixed.p95, unmixed.missed, asOne.p95, asOne.missed))
        #expect(unmixed.p95 <= (delays == nil ? 3 : 4) && unmixed.missed == 0, "unmixed: p95 \(unmixed.p95) cents, \(unmixed.missed) missed")
        #expect(unmixed.p95 * 5 <= asOne.p95, "unmixed p95 \(unmixed.p95) against \(asOne.p95) fitted as one")
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

/// A blend worked out while a take was replaced or set aside is not shown
/// (the box works it out again): it heard a take that no longer plays.
@Test func aBlendOfTakesThatNoLongerPlayIsStale() throws {
    func take(_ id: Int, _ part: String, state: TakeState = .kept, active: Bool = true) -> TakeRecord {
        var record = BoxSessionTests.take(id, state: state)
        record.part = part
        record.active = active
        return record
    }
    let blend = Array(#"{"chords":[],"parts":[{"name":"Soprano","take":1},{"name":"Alto","take":2}]}"#.utf8)
    #expect(!SessionLoop.blendIsStale(blend, takes: [take(1, "Soprano"), take(2, "Alto")]))
    // A third part's new take: what the blend heard still plays.
    #expect(!SessionLoop.blendIsStale(blend, takes: [take(1, "Soprano"), take(2, "Alto"), take(3, "Tenor")]))
    // The alto sang again (take 3 plays), or take 2 was set aside (no alto plays).
    #expect(SessionLoop.blendIsStale(blend, takes: [take(1, "Soprano"), take(2, "Alto", active: false), take(3, "Alto")]))
    #expect(SessionLoop.blendIsStale(blend, takes: [take(1, "Soprano"), take(2, "Alto", state: .discarded)]))
    // A refusal heard nothing.
    #expect(!SessionLoop.blendIsStale(Array(#"{"error":"one part has a take"}"#.utf8), takes: []))
}

/// The median a part's lead or lag is measured against: two parts entering
/// together are together whatever the third does.
@Test func blendMedianOfTheOthers() {
    #expect(Blend.median([0, 0, 60]) == 0)
    #expect(Blend.median([0, 60]) == 30)
    #expect(Blend.median([60, 0, 0, 10]) == 5)
    #expect(Blend.median([]) == 0)
}

/// `acapella blend` on a simulated choir whose errors the test chooses:
/// a quartet recorded at once (close microphones, the guide on headphones:
/// no playback in the microphones), one part detuned, one late, one early,
/// all sinking together.
@Suite(.serialized) struct BlendTests {
    @Test func theChoirsChosenErrorsAreFoundAgain() throws {
        let drift = -30.0
        // Per part: cents, ms late.
        let chosen: [(cents: Double, late: Double)] = [(0, 0), (-18, 0), (0, 70), (9, -30)]
        var singers: [String: SingerSettings] = [:]
        for (index, part) in ["Soprano", "Alto", "Tenor", "Bass"].enumerated() {
            var singer = SingerSettings()
            singer.detuneCents = chosen[index].cents
            singer.timingErrorSamples = Int64(chosen[index].late * 48)
            singer.driftCentsPerMinute = drift
            singers[part] = singer
        }
        let crosstalk: [[Float]] = [[1, 0.1, 0.05, 0.02], [0.1, 1, 0.1, 0.05], [0.05, 0.1, 1, 0.1], [0.02, 0.05, 0.1, 1]]
        let (project, _) = try EnsembleRecordingTests.recordQuartet(crosstalk: crosstalk, singers: singers)
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let blend = try Blend.analyze(project)
        let schedule = try Schedule(score: project.score)
        let minutes = { (sample: Int64) in Double(sample) / 48_000 / 60 }
        // Each chord: every upper part's interval against equal temperament, as the errors make it.
        var intervalErrors: [Double] = []
        for chord in blend.chords {
            for part in 0..<4 {
                guard let measured = chord.againstEqual[part], let midi = chord.midi[part], let bassMidi = chord.midi[chord.bass] else { continue }
                // The note each sings there begins where its tone does (drift is held from a note's start).
                func sung(_ index: Int) -> Double {
                    let tone = schedule.tones[index].first { $0.startSample <= chord.start && chord.start < $0.endSample }!
                    return chosen[index].cents + drift * minutes(tone.startSample)
                }
                #expect(midi > bassMidi || (midi == bassMidi && part < chord.bass), "the bass is the lowest part sounding")
                intervalErrors.append(abs(measured - (sung(part) - sung(chord.bass))))
            }
        }
        intervalErrors.sort()
        let p95 = intervalErrors[Int(Double(intervalErrors.count - 1) * 0.95)]
        // Each other singer taken out on their own: 0.1 here (2.6 with one gain for them all).
        #expect(intervalErrors.count > 50 && p95 <= 0.5, "intervals against equal temperament: p95 \(p95) cents off the truth over \(intervalErrors.count)")
        // Each part's offset from the ensemble.
        let mean = chosen.map(\.cents).reduce(0, +) / 4
        for (index, part) in blend.parts.enumerated() {
            #expect(abs(part.offsetCents - (chosen[index].cents - mean)) <= 3, "\(part.name): \(part.offsetCents) cents from the ensemble, chosen \(chosen[index].cents - mean)")
            #expect(abs(part.driftCentsPerMinute - drift) <= 3, "\(part.name): drifts \(part.driftCentsPerMinute) cents a minute, chosen \(drift)")
        }
        #expect(abs(blend.ensembleDriftCentsPerMinute - drift) <= 3, "the ensemble drifts \(blend.ensembleDriftCentsPerMinute) cents a minute, chosen \(drift)")
        // Entries: every part's entry at every common entry within 10 ms at p95.
        var entryErrors: [Double] = []
        for entry in blend.entries {
            for part in 0..<4 { if let measured = entry.milliseconds[part] { entryErrors.append(abs(measured - chosen[part].late)) } }
        }
        entryErrors.sort()
        let entryP95 = entryErrors[Int(Double(entryErrors.count - 1) * 0.95)]
        #expect(entryErrors.count > 50 && entryP95 <= 10, "entries: p95 \(entryP95) ms off the truth over \(entryErrors.count)")
        #expect(abs(blend.parts[2].entryMilliseconds - 70) <= 10 && abs(blend.parts[3].entryMilliseconds + 30) <= 10, "\(blend.parts.map(\.entryMilliseconds))")
        #expect(blend.lines.contains { $0.hasPrefix("Tenor (take 3): ") && $0.contains(" ms after the others") }, "\(blend.lines.prefix(5))")
        #expect(blend.lines.contains { $0.contains(": tenor entered ") && $0.contains(" ms after the others") }, "\(blend.lines)")
        #expect(blend.lines.contains { $0.contains(": alto ") && $0.contains("cents flat of the chord") }, "\(blend.lines)")
        // The sinking said with its rate; the same blend over a moment that moved 2 cents holds its pitch, no rate given.
        #expect(blend.lines.first?.contains("; the ensemble sank (-") == true && blend.lines.first?.contains(" cents a minute: ") == true, "\(blend.lines.first ?? "")")
        var moment = blend
        (moment.ensembleStartCents, moment.ensembleEndCents) = (0, -2)
        #expect(moment.lines.first?.hasSuffix("; the ensemble held its pitch (+0 at the first chord, -2 at the last)") == true, "\(moment.lines.first ?? "")")
        print(String(format: "blend: intervals p95 %.2f cents (%d), entries p95 %.1f ms (%d), ensemble drift %.1f cents a minute (chosen %.0f); ", p95, intervalErrors.count,
                     entryP95, entryErrors.count, blend.ensembleDriftCentsPerMinute, drift) + blend.parts.map { String(format: "%@ %+.1f ¢ %+.0f ms", $0.name, $0.offsetCents, $0.entryMilliseconds) }.joined(separator: ", "))
    }
}
