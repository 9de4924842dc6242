import AcapellaTrials
@testable import AcapellaBox
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// Takes streamed from their files by the butler play exactly what the
/// same takes decoded into memory play: the engine's output compared
/// sample for sample over a script of play, loop, locate, stop, punch
/// and a period size that keeps changing. A butler that falls behind
/// gives located silence, never a stall or a shift.
@Suite struct TakeStreamingTests {
    /// Amazing Grace with a full take on every part (noise, so a shift of
    /// one sample shows), two punch-ins over the Alto and one over the
    /// Bass, a nudge and a gain: every kind of layer there is.
    static func project() throws -> Project {
        let project = try temporaryProject("amazing-grace.acasong")
        let options = ScheduleOptions(sampleRate: project.manifest.sampleRate)
        let schedule = try Schedule(score: project.score, options: options)
        let frames = Int(schedule.endSample) + 20_000
        for (part, name) in project.score.parts.map(\.name).enumerated() {
            var random = SplitMix64(seed: UInt64(part + 7))
            let noise = (0..<frames).map { _ in Float(random.next() >> 40) / Float(1 << 24) * 0.4 - 0.2 }
            _ = try ChoirMerge.record(noise, part: name, into: project, options: options, offset: 317 + Int64(part))
        }
        func punch(_ part: String, measures: ClosedRange<Int>, seed: UInt64, nudge: Int64 = 0, gain: Double? = nil) throws {
            let range = try #require(schedule.loopRange(measures: measures))
            var random = SplitMix64(seed: seed)
            let start = range.lowerBound - 24_000
            let noise = (0..<Int(range.count + 48_000)).map { _ in Float(random.next() >> 40) / Float(1 << 24) * 0.6 - 0.3 }
            _ = try ChoirMerge.record(noise, part: part, into: project, options: options, offset: -start) {
                $0.range = SongRange(range.lowerBound, range.upperBound)
                $0.nudgeSamples = nudge
                $0.gainDB = gain
            }
        }
        try punch("Alto", measures: 3...4, seed: 99, nudge: -37)
        try punch("Alto", measures: 8...8, seed: 98, gain: -4.5)
        try punch("Bass", measures: 4...6, seed: 97, nudge: 12)
        return project
    }

    /// The commands of the script, by period.
    static let script: [Int: [EngineCommand]] = [
        0: [.play],
        300: [.loop(2...3)],
        2_600: [.loop(nil)],
        2_700: [.locate(measure: 8)],
        3_600: [.locate(measure: 3)],
        5_000: [.stop],
        5_010: [.locate(measure: 6)],
        5_020: [.play],
        6_500: [.stop],
        6_510: [.punch(measures: 4...4, prerollMeasures: 1)],
        9_200: [.loop(1...1), .locate(measure: 12)],
        9_600: [.locate(measure: 1)],
    ]
    static let periods = 11_000
    /// Period sizes in turn: the device's, and odd ones.
    static let sizes = [128, 100, 257, 128, 64]

    /// The engine's output over the script; with `butler`, it reads for
    /// the streams (serviced before each period unless `stalled` says not).
    static func render(_ project: Project, takes: [PartTakes], butler: TakeStreamButler? = nil, stalled: (Int) -> Bool = { _ in false },
                       serviced: (Int) -> Void = { _ in }) throws -> [Float] {
        let options = ScheduleOptions(sampleRate: project.manifest.sampleRate)
        let schedule = try Schedule(score: project.score, options: options)
        var core = EngineCore(schedule: schedule, mixes: PartMix.spread(count: takes.count), takes: takes, maximumFrames: 512)
        let control = EngineControl(link: core.link, score: project.score, options: options)
        if let butler {
            core.attachStreams(cue: butler.cue)
            control.cue = butler.cue
            control.initialSchedule = schedule
            butler.watch(takes, fade: Int64(core.renderer.rampSamples))
        }
        var output: [Float] = []
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer {
            left.deallocate()
            right.deallocate()
        }
        for period in 0..<periods {
            for command in script[period] ?? [] { control.send(command) }
            if let butler, !stalled(period) {
                butler.service()
                serviced(period)
            }
            let frames = sizes[period % sizes.count]
            core.process(left: left, right: right, frames: frames)
            for index in 0..<frames { output += [left[index], right[index]] }
            core.link.collectRetired()
        }
        return output
    }

    static func streamed(_ project: Project, slots: Int = TakeStream.defaultSlots) -> (takes: [PartTakes], streams: [TakeStream]) {
        let takes = project.activeTakes(for: ScheduleOptions(sampleRate: project.manifest.sampleRate), loading: .streamed(slots: slots)).takes
        return (takes, takes.flatMap { $0.layers.compactMap(\.stream) })
    }

    @Test func streamedTakesPlayExactlyLikeDecodedOnes() throws {
        let project = try Self.project()
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let memory = project.activeTakes(for: ScheduleOptions(sampleRate: project.manifest.sampleRate)).takes
        #expect(memory.map(\.layers.count) == [1, 3, 1, 2])
        let reference = try Self.render(project, takes: memory)
        for slots in [TakeStream.defaultSlots, TakeStream.minimumSlots] {
            let (takes, streams) = Self.streamed(project, slots: slots)
            #expect(streams.count == 7 && takes.allSatisfy { $0.layers.allSatisfy { $0.samples.isEmpty } })
            let output = try Self.render(project, takes: takes, butler: TakeStreamButler(cue: StreamCue()))
            let firstDifference = zip(output, reference).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(output.count == reference.count && firstDifference == nil, "\(slots) slots: first difference at frame \((firstDifference ?? 0) / 2)")
            #expect(streams.map(\.missed) == Array(repeating: 0, count: 7), "\(slots) slots")
            // Read a block at a time, and only where the song went: every take's blocks read, none of them all at once.
            #expect(streams.allSatisfy { $0.reads > 0 }, "\(streams.map(\.reads))")
        }
    }

    /// The streams share the butler's budget of blocks: with room for 40,
    /// the four full takes heard alone get 10 blocks each, and where the
    /// punch-ins sound too each take gets the fewest it can play from (9);
    /// the song plays the same sample for sample with nothing missed
    /// (through a locate onto a punch-in's measure); a take not heard there
    /// holds no memory (a punch-in before its measures, a take once the
    /// song has left it), so the memory held follows the takes sounding at
    /// once, not the takes there are.
    @Test func theStreamsShareABudgetAndATakeNotHeardHoldsNone() throws {
        let project = try Self.project()
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let memory = project.activeTakes(for: ScheduleOptions(sampleRate: project.manifest.sampleRate)).takes
        let reference = try Self.render(project, takes: memory)
        let (takes, streams) = Self.streamed(project)
        let punches = takes.flatMap { $0.layers.dropFirst().compactMap(\.stream) }
        #expect(punches.count == 3 && streams.allSatisfy { $0.heldSlots == 0 })
        let butler = TakeStreamButler(cue: StreamCue(), budget: 40)
        var most = 0
        var early = 0
        var punchesHeld: [Int] = []
        let output = try Self.render(project, takes: takes, butler: butler, serviced: { period in
            most = max(most, butler.heldSlots)
            // Measures 1–2 (period 200): the four full takes alone, their share of the 40 each.
            if period == 200 { (early, punchesHeld) = (butler.heldSlots, punches.map(\.heldSlots)) }
        })
        let firstDifference = zip(output, reference).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(output.count == reference.count && firstDifference == nil, "first difference at frame \((firstDifference ?? 0) / 2)")
        #expect(streams.map(\.missed) == Array(repeating: 0, count: 7))
        // Early on only the four full takes are heard: the punch-ins (measures 3–8) hold nothing, the full takes 10 each.
        #expect(punchesHeld == [0, 0, 0] && punches.allSatisfy { $0.reads > 0 })
        #expect(early == 40, "\(early) slots held in measures 1–2")
        // Six takes sound at once at most (measure 4: the full takes, the Alto's and the Bass's punch-ins),
        // each with the fewest slots, and a take the song has just left keeps its blocks for
        // `quietPasses` passes: at most the seven at their fewest, never their 16 each (112).
        #expect(most > 40 && most <= 7 * TakeStream.minimumSlots, "\(most) slots held at most, \(butler.heldSlots) at the end")
        // Where the script ends (looping measure 1 from measure 1) the punch-ins hold nothing again.
        #expect(punches.map(\.heldSlots) == [0, 0, 0], "\(punches.map(\.heldSlots))")
    }

    /// The butler stops for 1.5 s of song: the take under the playing
    /// position runs dry, the misses are counted and located, the output
    /// there is silence where the takes were, and from the first period
    /// after the butler is back the output is the same sample for sample.
    @Test func aButlerThatFallsBehindGivesSilenceNotAShift() throws {
        let project = try Self.project()
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let memory = project.activeTakes(for: ScheduleOptions(sampleRate: project.manifest.sampleRate)).takes
        let reference = try Self.render(project, takes: memory)
        let (takes, streams) = Self.streamed(project)
        // Periods 5,040–5,700: after the play at 5,020 from measure 6 (no loop), 660 periods ≈ 1.5 s.
        let stall = 5_040..<5_700
        let butler = TakeStreamButler(cue: StreamCue())
        let output = try Self.render(project, takes: takes, butler: butler) { stall.contains($0) }
        let missed = streams.map(\.missed).reduce(0, +)
        #expect(missed > 0)
        // Said once per stream, and not again until it misses more.
        let (lines, seen) = butler.misses(since: [:]) { _ in "in measure 6" }
        #expect(lines.count == streams.filter { $0.missed > 0 }.count && lines.allSatisfy { $0.hasSuffix("frames were not read from the disk in time (in measure 6); they played as silence") },
                "\(lines)")
        #expect(lines.first?.hasPrefix("take ") == true && butler.misses(since: seen) { _ in "" }.lines.isEmpty)
        var frameOfPeriod = [0]
        for period in 0..<Self.periods { frameOfPeriod.append(frameOfPeriod.last! + Self.sizes[period % Self.sizes.count]) }
        let differing = zip(output, reference).enumerated().filter { $0.element.0 != $0.element.1 }.map { $0.offset / 2 }
        #expect(!differing.isEmpty)
        // Nothing differs before the stall, nor after the period the butler came back in.
        #expect(differing.allSatisfy { $0 >= frameOfPeriod[stall.lowerBound] && $0 < frameOfPeriod[stall.upperBound + 1] },
                "differences from frame \(differing.first ?? 0) to \(differing.last ?? 0); stall \(frameOfPeriod[stall.lowerBound])..<\(frameOfPeriod[stall.upperBound + 1])")
        // The misses are located where the song was while the butler was away.
        let schedule = try Schedule(score: project.score, options: ScheduleOptions(sampleRate: project.manifest.sampleRate))
        let located = streams.filter { $0.missed > 0 }.map(\.lastMissAt)
        let measure6 = try #require(schedule.loopRange(measures: 6...6)).lowerBound
        #expect(located.allSatisfy { $0 > measure6 && $0 < measure6 + Int64(stall.count * 160) }, "\(located) after \(measure6)")
    }

    /// A locate while playing waits for the blocks where it lands (the
    /// butler not there yet), and is made as soon as they are read.
    @Test func aLocateWaitsForItsBlocks() throws {
        let project = try Self.project()
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let options = ScheduleOptions(sampleRate: project.manifest.sampleRate)
        let schedule = try Schedule(score: project.score, options: options)
        let (takes, _) = Self.streamed(project)
        let butler = TakeStreamButler(cue: StreamCue())
        var core = EngineCore(schedule: schedule, mixes: PartMix.spread(count: 4), takes: takes, maximumFrames: 128)
        core.attachStreams(cue: butler.cue)
        butler.watch(takes, fade: Int64(core.renderer.rampSamples))
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 128)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 128)
        defer {
            left.deallocate()
            right.deallocate()
        }
        butler.service()
        core.link.send(.play)
        for _ in 0..<10 {
            core.process(left: left, right: right, frames: 128)
            butler.service()
        }
        #expect(core.link.snapshot().state == .playing)
        core.link.send(.locate(measure: 10))  // not announced: the butler learns of it from the engine
        for _ in 0..<5 { core.process(left: left, right: right, frames: 128) }
        #expect(core.link.snapshot().measure < 10, "the locate was made before its blocks were read")
        butler.service()
        core.process(left: left, right: right, frames: 128)
        #expect(core.link.snapshot().measure == 10 && core.link.snapshot().position == schedule.barlines[10] + 128)
        // Never read, it is made after `moveHoldSeconds` regardless (the misses then said).
        core.link.send(.locate(measure: 2))
        var periods = 0
        while core.link.snapshot().measure != 2 && periods < 1_000 {
            core.process(left: left, right: right, frames: 128)
            periods += 1
        }
        // Held in the period that took it, then 375 periods of 128 frames (a second at 48 kHz), made in the next.
        let holding = (options.sampleRate * EngineCore.moveHoldSeconds + 127) / 128
        #expect(holding == 375 && periods == holding + 2, "\(periods) periods")
    }
}

/// End to end through the real threads (the butler on its own, the
/// simulated room's device thread): `acapella record` of the Tenor over
/// the others' takes, streamed and decoded, in two copies of one project.
/// The room hears the playback, so the two new takes are the same sample
/// for sample only when the streamed playback was; a whole take and a
/// punch-in (its pre-roll announced and read before it starts), and loop
/// recording (the loop's start kept ready for each wrap).
@Suite(.serialized) struct StreamedPlaybackEndToEndTests {
    @Test(.fullSuiteOnly, arguments: [["--range", "6-7"], ["--range", "6-7", "--loop", "2"], []])
    func aTakeRecordedOverStreamedTakesEqualsOneOverDecodedTakes(range: [String]) throws {
        let original = try TakeStreamingTests.project()
        original.close()
        defer { try? FileManager.default.removeItem(atPath: original.path) }
        var takes: [[Float]] = []
        for loading in ["memory", "stream"] {
            let copy = original.path + "-" + loading + ".acaproj"
            try FileManager.default.copyItem(atPath: original.path, toPath: copy)
            defer { try? FileManager.default.removeItem(atPath: copy) }
            let recorder = try Spawned(["record", copy, "--part", "Tenor", "--device", "sim:speed=24", "--takes", loading] + range)
            #expect(recorder.wait() == 0, "\(loading): \(recorder.err)")
            #expect(!recorder.err.contains("not read from the disk in time"), "\(recorder.err)")
            let (project, _) = try Project.open(copy, for: .read)
            let take = try #require(project.manifest.takes.last { $0.part == "Tenor" })
            takes.append(try AudioFile.readMono(copy + "/" + take.file).samples)
        }
        #expect(takes[0].count > 48_000 && takes[0] == takes[1], "\(takes.map(\.count)) frames")
    }
}
