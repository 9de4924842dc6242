@testable import AcapellaEngine
import AcapellaScore
import Foundation
import Testing

/// Output and events of an engine run.
struct Run {
    var left: [Float] = []
    var right: [Float] = []
    var events: [(frame: Int, event: EngineEvent)] = []
    /// Snapshots after each period.
    var snapshots: [EngineSnapshot] = []

    func events(matching predicate: (EngineEvent) -> Bool) -> [EngineEvent] { events.map(\.event).filter(predicate) }
}

/// Drives an engine for `total` frames in periods of `period`; `control`
/// runs before each period with the number of frames done so far.
func drive(_ core: inout EngineCore, total: Int, period: Int, snapshots: Bool = false, control: (Int) -> Void = { _ in }) -> Run {
    var run = Run()
    run.left = [Float](repeating: 0, count: total)
    run.right = [Float](repeating: 0, count: total)
    var done = 0
    while done < total {
        control(done)
        let count = min(period, total - done)
        run.left.withUnsafeMutableBufferPointer { l in run.right.withUnsafeMutableBufferPointer { r in
            core.process(left: l.baseAddress! + done, right: r.baseAddress! + done, frames: count)
        } }
        while let event = core.link.nextEvent() { run.events.append((done, event)) }
        if snapshots { run.snapshots.append(core.link.snapshot()) }
        core.link.collectRetired()
        done += count
    }
    return run
}

/// Hard-left unity mixes: the left channel is exactly the parts' sum.
func leftMixes(_ count: Int, muted: Bool = false) -> [PartMix] {
    (0..<count).map { _ in PartMix(gain: 1, pan: -1, muted: muted) }
}

@Suite struct EngineCoreTests {
    /// A punch pressed mid-measure happens on the next barline's exact
    /// sample (or the next beat's), whatever the period size; a second
    /// press punches out on the barline after.
    @Test(arguments: [128, 1000, 333])
    func quantizedPunchLandsOnTheExactSample(period: Int) throws {
        let schedule = try Schedule(score: try song("simple-harmony.acasong"))
        var core = EngineCore(schedule: schedule, mixes: leftMixes(2), maximumFrames: period)
        let link = core.link
        let pressAt = Int(schedule.barlines[1]) + 5_000  // inside measure 2
        let punchOutPress = Int(schedule.barlines[2]) + 17
        var pressed = 0
        let run = drive(&core, total: Int(schedule.endSample), period: period) { done in
            if done == 0 { link.send(.play) }
            if pressed == 0 && done >= pressAt {
                link.send(.record(.bar))
                pressed = 1
            }
            if pressed == 1 && done >= punchOutPress {
                link.send(.record(.beat))
                pressed = 2
            }
        }
        let starts = run.events(matching: { if case .recordingStarted = $0 { true } else { false } })
        let stops = run.events(matching: { if case .recordingStopped = $0 { true } else { false } })
        #expect(starts == [.recordingStarted(at: schedule.barlines[2])])
        // Commands apply at the start of the period after the press; the
        // punch-out then waits for the first click at or after that.
        let applied = Int64((punchOutPress + period - 1) / period * period)
        let nextBeat = schedule.clicks.first { $0.sample >= applied }!.sample
        #expect(stops == [.recordingStopped(at: nextBeat)])
        #expect(nextBeat > schedule.barlines[2] && nextBeat < schedule.endSample)
    }

    /// A count-in before a loop at measures 3–4 clicks the measure before
    /// at the song's tempo with the parts silent, then the music starts on
    /// the loop's first barline; the loop wraps on its exact end sample and
    /// says so; without a loop the song stops itself at its end.
    @Test func countInLoopAndAutoStop() throws {
        let score = try song("amazing-grace.acasong")
        let schedule = try Schedule(score: score, options: ScheduleOptions(countInMeasures: 1))
        var core = EngineCore(schedule: schedule, mixes: leftMixes(score.parts.count), maximumFrames: 500)
        let link = core.link
        link.send(.loop(3...4))
        let loop = schedule.loopRange(measures: 3...4)!
        let barIndex = schedule.barlines.firstIndex(of: loop.lowerBound)!
        let countInStart = schedule.barlines[barIndex - 1]
        let total = Int(loop.lowerBound - countInStart) + 2 * Int(loop.count) + 700
        let run = drive(&core, total: total, period: 500) { done in if done == 0 { link.send(.play) } }
        #expect(run.events.first?.event == .countIn(from: countInStart, music: loop.lowerBound))
        #expect(run.events(matching: { if case .looped = $0 { true } else { false } }) == Array(repeating: .looped(from: loop.upperBound, to: loop.lowerBound), count: 2))
        // The parts are silent through the count-in: only clicks (which
        // decay within 30 ms of each beat) sound before the music.
        let musicFrame = Int(loop.lowerBound - countInStart)
        let clickFrames = schedule.clicks.filter { $0.sample >= countInStart && $0.sample < loop.lowerBound }.map { Int($0.sample - countInStart) }
        #expect(clickFrames.count == 3, "amazing grace is in 3/4")
        let lastClickEnd = clickFrames.last! + 48_000 * 30 / 1000
        #expect(run.left[lastClickEnd..<musicFrame].allSatisfy { $0 == 0 }, "no tone before the music")
        #expect(run.left[musicFrame] != 0, "the first note sounds on the loop's first sample")
        #expect(run.left[musicFrame - 1] == 0)

        // Without a loop: from stopped to the end, then stopped by itself
        // (a song whose last notes sound to its end).
        let endsOnNotes = try song("simple-harmony.acasong")
        var plain = EngineCore(schedule: try Schedule(score: endsOnNotes), mixes: leftMixes(2), maximumFrames: 4096)
        let plainLink = plain.link
        let end = try Schedule(score: endsOnNotes).endSample
        let whole = drive(&plain, total: Int(end) + 48_000, period: 4096) { done in if done == 0 { plainLink.send(.play) } }
        #expect(whole.events.map(\.event) == [.playing(at: 0), .stopped(at: end, returnTo: 0, finishedTake: false)])
        #expect(plain.transport.state == .stopped && plain.renderer.position == 0)
        // The last notes' release tails ring out after the stop, then silence.
        let tail = Int(end) + 48_000 * 25 / 1000
        #expect(whole.left[Int(end)] != 0 && whole.left[tail + 10..<whole.left.count].allSatisfy { $0 == 0 })
    }

    /// A tempo change sent mid-measure takes over on the next barline: the
    /// old schedule's barline becomes the new one's, and from there the
    /// audio is exactly the new schedule's (once the old notes' 25 ms
    /// release tails have died away).
    @Test(arguments: [128, 1001])
    func tempoChangeTakesOverOnTheNextBarline(period: Int) throws {
        let score = try song("simple-harmony.acasong")
        let old = try Schedule(score: score)
        let new = try Schedule(score: score, options: ScheduleOptions(tempoScale: Rational(3, 4)))
        var core = EngineCore(schedule: old, mixes: leftMixes(2), maximumFrames: period)
        let control = EngineControl(link: core.link, score: score, options: old.options)
        let switchBar = 2  // barline of measure 3
        let sendAt = Int(old.barlines[1]) + 10_000
        var sent = false
        var problem: EngineControlError?
        let total = Int(old.barlines[switchBar]) + 96_000
        let run = drive(&core, total: total, period: period) { done in
            if done == 0 { control.send(.play) }
            if !sent && done >= sendAt {
                do throws(EngineControlError) { try control.setTempo(Rational(3, 4)) } catch { problem = error }
                sent = true
            }
        }
        #expect(problem == nil)
        #expect(run.events(matching: { if case .scheduleChanged = $0 { true } else { false } })
            == [.scheduleChanged(old: old.barlines[switchBar], new: new.barlines[switchBar])])
        // Reference: the new schedule rendered from that barline.
        let switchFrame = Int(old.barlines[switchBar])
        var reference = SongRenderer(schedule: new, mixes: leftMixes(2), start: new.barlines[switchBar], maximumFrames: total - switchFrame)
        var refLeft = [Float](repeating: 0, count: total - switchFrame)
        var refRight = refLeft
        refLeft.withUnsafeMutableBufferPointer { l in refRight.withUnsafeMutableBufferPointer { r in
            reference.render(left: l.baseAddress!, right: r.baseAddress!, frames: total - switchFrame)
        } }
        let settled = 48_000 * 25 / 1000 + 1
        let after = Array(run.left[(switchFrame + settled)...])
        let expected = Array(refLeft[settled...])
        let identical = after == expected
        #expect(identical, "after the switch the engine plays the new schedule sample for sample")
        #expect(!expected.allSatisfy { $0 == 0 })
    }

    /// A tempo change under takes (issue 36): the takes sent after the
    /// schedule (made for the new tempo: stretched) wait with it for its
    /// barline, and are heard from there — not a period before, with the
    /// old schedule, nor the old takes after.
    @Test func takesSentAfterATempoChangeWaitForItsBarline() throws {
        let score = try song("simple-harmony.acasong")
        let old = try Schedule(score: score)
        let new = try Schedule(score: score, options: ScheduleOptions(tempoScale: Rational(3, 4)))
        let period = 256
        let oldTake = PartTakes([TakePlayback(samples: [Float](repeating: 0.25, count: 600_000), alignmentOffsetSamples: 0)])
        let newTake = PartTakes([TakePlayback(samples: [Float](repeating: -0.5, count: 800_000), alignmentOffsetSamples: 0)])
        var core = EngineCore(schedule: old, mixes: leftMixes(2), takes: [oldTake, .none], maximumFrames: period)
        let control = EngineControl(link: core.link, score: score, options: old.options)
        let switchBar = 2
        let sendAt = Int(old.barlines[1]) + 10_000
        var sent = false
        let total = Int(old.barlines[switchBar]) + 96_000
        let run = drive(&core, total: total, period: period) { done in
            if done == 0 { control.send(.play) }
            if !sent && done >= sendAt {
                try? control.setTempo(Rational(3, 4))
                control.send(.takes(part: 0, newTake))
                sent = true
            }
        }
        #expect(control.options.tempoScale == Rational(3, 4))
        let switchFrame = Int(old.barlines[switchBar])
        func rendered(_ schedule: Schedule, _ takes: [PartTakes], from start: Int64, frames: Int) -> [Float] {
            var renderer = SongRenderer(schedule: schedule, mixes: leftMixes(2), takes: takes, start: start, maximumFrames: frames)
            var left = [Float](repeating: 0, count: frames)
            var right = left
            left.withUnsafeMutableBufferPointer { l in right.withUnsafeMutableBufferPointer { r in renderer.render(left: l.baseAddress!, right: r.baseAddress!, frames: frames) } }
            return left
        }
        // Up to the barline: the old schedule with the old take, sample for sample.
        let before = rendered(old, [oldTake, .none], from: 0, frames: switchFrame)
        #expect(Array(run.left[sendAt..<switchFrame]) == Array(before[sendAt...]), "the old take until the barline")
        // From it: the new schedule with the new take.
        let settled = 48_000 * 25 / 1000 + 1
        let after = rendered(new, [newTake, .none], from: new.barlines[switchBar], frames: total - switchFrame)
        #expect(Array(run.left[(switchFrame + settled)...]) == Array(after[settled...]), "the new take from the barline")
        #expect(after[settled...].contains { $0 < -0.1 }, "the new take is heard")
    }

    /// A new tempo waiting for its barline while a punch-in begins there:
    /// a take is sung to one tempo, so the schedule waits for the first
    /// barline after the punch-out; and a loop that wraps before the barline
    /// a schedule waits for takes it on at the loop's start.
    @Test func aScheduleWaitsForTheTakeAndTheLoop() throws {
        let score = try song("amazing-grace.acasong")
        let old = try Schedule(score: score)
        let new = try Schedule(score: score, options: ScheduleOptions(tempoScale: Rational(3, 4)))
        var core = EngineCore(schedule: old, mixes: leftMixes(4), maximumFrames: 256)
        let control = EngineControl(link: core.link, score: score, options: old.options)
        let sendAt = Int(old.barlines[1]) + 10_000
        let outAt = Int(old.barlines[3]) + 10_000
        var sent = false, out = false
        let run = drive(&core, total: Int(old.barlines[6]), period: 256) { done in
            if done == 0 { control.send(.play) }
            if !sent && done >= sendAt {
                try? control.setTempo(Rational(3, 4))
                control.send(.record(.bar))  // punch in on the barline the schedule waits for
                sent = true
            }
            if !out && done >= outAt {
                control.send(.record(.bar))  // and out two measures later
                out = true
            }
        }
        let changes = run.events(matching: { if case .scheduleChanged = $0 { true } else { false } })
        let punchedOut = run.events.first { if case .recordingStopped = $0.1 { true } else { false } }?.0 ?? 0
        #expect(changes.count == 1, "\(changes)")
        if case .scheduleChanged(let from, let to)? = changes.first {
            #expect(from >= old.barlines[4] && old.barlines.contains(from) && new.barlines.contains(to), "after the take: \(from)")
            #expect(Int(from) >= punchedOut, "not while the take is sung")
        }

        // A loop over measures 2–3 wraps before measure 5's barline: the schedule takes over at the loop's start.
        var looping = EngineCore(schedule: old, mixes: leftMixes(4), maximumFrames: 256)
        let loopControl = EngineControl(link: looping.link, score: score, options: old.options)
        let range = try #require(old.loopRange(measures: 2...3))
        let (start, end) = (range.lowerBound, range.upperBound)
        let startIndex = try #require(old.barlines.firstIndex(of: start)), endIndex = try #require(old.barlines.firstIndex(of: end))
        let lastMeasure = old.barlines[endIndex - 1]
        var asked = false
        let looped = drive(&looping, total: Int(end) + 3 * Int(end - start), period: 256) { done in
            if done == 0 { loopControl.send(.loop(2...3)); loopControl.send(.play) }
            // In the loop's last measure: its next barline is the loop's end, never reached.
            if !asked && done >= Int(lastMeasure - start) + 5_000 {
                try? loopControl.setTempo(Rational(3, 4))
                asked = true
            }
        }
        let switched = looped.events(matching: { if case .scheduleChanged = $0 { true } else { false } })
        #expect(switched == [.scheduleChanged(old: start, new: new.barlines[startIndex])], "\(switched)")
    }

    /// Volume, mute and solo glide over 10 ms (480 samples at 48 kHz): no
    /// step in the audio, exactly silent after the ramp.
    @Test func mixChangesGlideOverTenMilliseconds() throws {
        let score = try song("simple-harmony.acasong")
        let schedule = try Schedule(score: score)
        var mixes = leftMixes(2)
        mixes[1].muted = true
        var core = EngineCore(schedule: schedule, mixes: mixes, maximumFrames: 256)
        let link = core.link
        // Soprano's first note (a quarter at 80 BPM) sounds from 0 to 36,000.
        let change = 256 * 40
        let run = drive(&core, total: change + 2_048, period: 256) { done in
            if done == 0 { link.send(.play) }
            if done == change { link.send(.solo(part: 1, true)) }  // the muted bass soloed: soprano glides out
        }
        let ramp = run.left[change..<(change + 479)]
        #expect(ramp.allSatisfy { $0 != 0 }, "still sounding during the glide")
        #expect(run.left[(change + 479)...].allSatisfy { $0 == 0 }, "silent from the glide's 480th sample")
        // No step: the largest sample-to-sample change in the glide is no
        // bigger than the tone's own.
        let steps = zip(ramp.dropFirst(), ramp).map { abs($0 - $1) }
        let before = run.left[(change - 480)..<change]
        let toneSteps = zip(before.dropFirst(), before).map { abs($0 - $1) }
        #expect(steps.max()! <= toneSteps.max()! * 1.01)
        // The gain went down linearly: halfway through, the envelope is about half.
        let firstHalfPeak = run.left[change..<(change + 60)].map(abs).max()!
        let lastPeak = run.left[(change + 420)..<(change + 480)].map(abs).max()!
        #expect(lastPeak < firstHalfPeak * 0.2)
    }

    /// Snapshots say where the song is: position, state, measure.beat and
    /// the sounding note; a reader thread racing the writer never sees a
    /// torn snapshot.
    @Test func snapshotsDescribeThePosition() throws {
        let score = try song("simple-harmony.acasong")
        let schedule = try Schedule(score: score)
        var core = EngineCore(schedule: schedule, mixes: leftMixes(2), maximumFrames: 480)
        let link = core.link
        #expect(link.snapshot().serial == 0)
        // To 10 ms past the second beat of measure 2.
        let target = Int(schedule.clicks.first { $0.sample > schedule.barlines[1] }!.sample) + 480
        let run = drive(&core, total: target, period: 480, snapshots: true) { done in if done == 0 { link.send(.play) } }
        let last = run.snapshots.last!
        #expect(last.position == Int64(target))
        #expect(last.state == .playing)
        #expect(last.measureBeat == "2.2")
        let sounding = schedule.tones[0].first { $0.startSample < Int64(target) && $0.endSample >= Int64(target) }!
        #expect(last.currentMIDI[0] == sounding.midi)
        #expect(last.partPeaks[0] > 0.1 && last.outputPeak >= last.partPeaks[0])
        #expect(run.snapshots.map(\.serial) == (1...run.snapshots.count).map(Int64.init))
    }

    @Test func snapshotReadsAreNeverTorn() async {
        let board = SnapshotBoard(partCount: 4)
        let writes = 200_000
        let writer = Task.detached {
            for index in 1...writes {
                // Every field derives from `index`: a torn read mixes two.
                board.publish(position: Int64(index), state: .playing, measure: index, beat: index % 7, looping: index % 2 == 0, outputPeak: Float(index),
                              refusedCommands: Int64(index), commandsApplied: Int64(2 * index), commandsAppliedAt: Int64(3 * index),
                              deviceGaps: Int64(5 * index)) { part in (index + part, Float(index)) }
            }
        }
        var torn = 0
        var reads = 0
        while reads < 50_000 {
            let snapshot = board.read()
            reads += 1
            let index = Int(snapshot.position)
            if index == 0 { continue }
            let consistent = snapshot.measure == index && snapshot.beat == index % 7 && snapshot.looping == (index % 2 == 0)
                && snapshot.refusedCommands == Int64(index) && snapshot.currentMIDI == (0..<4).map { index + $0 }
                && snapshot.partPeaks.allSatisfy { $0 == Float(index) } && snapshot.serial == Int64(index)
                && snapshot.commandsApplied == Int64(2 * index) && snapshot.commandsAppliedAtNanoseconds == Int64(3 * index)
                && snapshot.deviceGaps == Int64(5 * index)
            if !consistent { torn += 1 }
        }
        await writer.value
        #expect(torn == 0)
        #expect(board.read().position == Int64(writes))
    }

    /// A command naming something that is not there is refused with an
    /// event, never a crash; moving while recording is refused.
    @Test func badCommandsAreRefused() throws {
        let schedule = try Schedule(score: try song("simple-harmony.acasong"))
        let slower = try Schedule(score: try song("simple-harmony.acasong"), options: ScheduleOptions(tempoScale: Rational(1, 2)))
        var core = EngineCore(schedule: schedule, mixes: leftMixes(2), maximumFrames: 256)
        let link = core.link
        let run = drive(&core, total: 1_024, period: 256) { done in
            if done == 0 {
                link.send(.locate(measure: 99))
                link.send(.solo(part: 7, true))
                link.send(.loop(2...40))
                link.send(.record(.bar))
            }
            if done == 512 { link.send(.locate(measure: 2)) }
            if done == 768 { link.send(.schedule(slower)) }  // a tempo change mid-take
        }
        let refusals = run.events(matching: { if case .refused = $0 { true } else { false } })
        #expect(refusals == [.refused(.noSuchMeasure(99)), .refused(.noSuchPart(7)), .refused(.loopOutsideSong(2...40)), .refused(.notWhileRecording), .refused(.notWhileRecording)])
        #expect(link.snapshot().refusedCommands == 5)
        #expect(core.renderer.schedule.options.tempoScale == Rational(1) && core.transport.state == .recording)
        #expect(EngineRefusal.noSuchPart(7).description == "no part number 8")
    }
}

@Suite struct CaptureTaggingTests {
    /// A measure-range punch: played from a measure of pre-roll, recording
    /// on the range's barlines exactly, a post-roll, then a stop; every
    /// captured frame is tagged with the song sample played one round trip
    /// earlier and whether it was armed or recording.
    /// Parts recorded at once, a microphone each: every input's ring gets
    /// that input on its own, and the needle's ring the input of the part
    /// it follows (not the capture's average), with the recorder's marks.
    @Test func theNeedleHearsItsPartsOwnInput() throws {
        let schedule = try Schedule(score: try song("amazing-grace.acasong"))
        let period = 128
        var core = EngineCore(schedule: schedule, mixes: leftMixes(4), maximumFrames: period)
        let mixed = BulkRing<CapturedFrame>(capacity: 100_000), needle = BulkRing<CapturedFrame>(capacity: 100_000)
        let rings = (0..<3).map { _ in BulkRing<CapturedFrame>(capacity: 100_000) }
        core.attachCapture(ring: mixed, latencyFrames: 300)
        core.attachInputs(rings.enumerated().map { (ring: $1, input: $0) })
        core.attachAnalysis(ring: needle, input: 2)
        core.link.send(.play)
        // Input c at frame f holds c + f / 1e6; the average is what a mono capture gives.
        var inputs = [Float](repeating: 0, count: 3 * period), average = [Float](repeating: 0, count: period)
        var left = [Float](repeating: 0, count: period), right = left
        for start in stride(from: Int64(0), to: 50 * Int64(period), by: period) {
            for index in 0..<period {
                for channel in 0..<3 { inputs[channel * period + index] = Float(channel) + Float(start + Int64(index)) / 1e6 }
                average[index] = (0..<3).map { inputs[$0 * period + index] }.reduce(0, +) / 3
            }
            inputs.withUnsafeBufferPointer { all in average.withUnsafeBufferPointer { mono in left.withUnsafeMutableBufferPointer { l in right.withUnsafeMutableBufferPointer { r in
                core.process(input: mono.baseAddress!, left: l.baseAddress!, right: r.baseAddress!, frames: period, deviceFrame: start, inputs: all.baseAddress!, inputCount: 3)
            } } } }
        }
        func drain(_ ring: BulkRing<CapturedFrame>) -> [CapturedFrame] {
            var frames = [CapturedFrame](repeating: CapturedFrame(value: 0, mark: .none), count: 100_000)
            let count = frames.withUnsafeMutableBufferPointer { ring.pop(into: $0.baseAddress!, maximum: $0.count) }
            return Array(frames.prefix(count))
        }
        let heard = drain(needle), recorded = drain(mixed), third = drain(rings[2])
        #expect(heard.count == 50 * period && recorded.count == heard.count)
        #expect(heard.map(\.value) == third.map(\.value), "the needle hears input 3 on its own")
        #expect(heard.enumerated().allSatisfy { $1.value == 2 + Float($0) / 1e6 }, "not the average (1 + f / 1e6)")
        #expect(heard.map(\.mark) == recorded.map(\.mark) && heard.contains { $0.mark.kind == .playing }, "with the recorder's marks")
    }

    @Test(arguments: [128, 333])
    func punchRangeTagsCapturedFrames(period: Int) throws {
        let schedule = try Schedule(score: try song("amazing-grace.acasong"))
        var core = EngineCore(schedule: schedule, mixes: leftMixes(4), maximumFrames: period)
        let ring = BulkRing<CapturedFrame>(capacity: 4_000_000)
        let latency = 300
        core.attachCapture(ring: ring, latencyFrames: latency)
        let link = core.link
        link.send(.punch(measures: 3...4, prerollMeasures: 1))
        let range = schedule.loopRange(measures: 3...4)!
        let start = schedule.barlines[schedule.barlines.firstIndex(of: range.lowerBound)! - 1]
        let total = Int(range.upperBound - start) + 10_000
        let input = [Float](repeating: 0, count: period)
        var events: [EngineEvent] = []
        var frame: Int64 = 0
        var left = [Float](repeating: 0, count: period), right = left
        while frame < Int64(total) {
            input.withUnsafeBufferPointer { i in left.withUnsafeMutableBufferPointer { l in right.withUnsafeMutableBufferPointer { r in
                core.process(input: i.baseAddress!, left: l.baseAddress!, right: r.baseAddress!, frames: period, deviceFrame: frame)
            } } }
            while let event = link.nextEvent() { events.append(event) }
            frame += Int64(period)
        }
        let postRoll = core.postRollSamples
        #expect(events == [.playing(at: start), .recordingStarted(at: range.lowerBound), .recordingStopped(at: range.upperBound),
                           .stopped(at: range.upperBound + postRoll, returnTo: start, finishedTake: false)])
        var frames = [CapturedFrame](repeating: CapturedFrame(value: 0, mark: .none), count: Int(frame))
        let count = frames.withUnsafeMutableBufferPointer { ring.pop(into: $0.baseAddress!, maximum: $0.count) }
        #expect(count == Int(frame))
        // Capture frame c heard output frame c − 300, which played song sample start + (c − 300).
        var mismatches = 0
        for (c, captured) in frames.enumerated() {
            let heard = Int64(c - latency)
            let song = start + heard
            let expected: FrameMark.Kind
            if heard < 0 || song >= range.upperBound + postRoll { expected = .none }
            else if song < range.lowerBound || song >= range.upperBound { expected = .armed }
            else { expected = .recording }
            if captured.mark.kind != expected || (expected != .none && captured.mark.songSample != song) { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }
}

@Suite struct TakeLayerTests {
    /// A punch-in layered over a full take: the full take outside the
    /// range, the punch inside, and a linear 10 ms crossfade centred on
    /// each edge (halfway exactly at the edge).
    @Test func punchInLayersOverTheFullTakeWithCrossfades() throws {
        let score = try song("simple-harmony.acasong")
        let schedule = try Schedule(score: score)
        let length = Int(schedule.endSample) + 10_000
        let full = TakePlayback(samples: [Float](repeating: 0.5, count: length), alignmentOffsetSamples: 2_000)
        let range = schedule.loopRange(measures: 2...2)!
        let punch = TakePlayback(samples: [Float](repeating: -0.5, count: length), alignmentOffsetSamples: 1_000, range: range)
        var mixes = leftMixes(2)
        mixes[1].muted = true
        let audio = OfflineRender.render(schedule, mixes: mixes, takes: [PartTakes([full, punch]), .none], periodFrames: 777)
        func at(_ sample: Int64) -> Float { audio.left[Int(sample - audio.firstSample)] }
        let start = range.lowerBound, end = range.upperBound
        #expect(at(start - 241) == 0.5 && at(start - 240) == 0.5)
        #expect(at(start) == 0)
        #expect(at(start + 240) == -0.5 && at(start + 1_000) == -0.5)
        #expect(at(end - 240) == -0.5)
        #expect(at(end) == 0)
        #expect(at(end + 240) == 0.5 && at(end + 5_000) == 0.5)
        // Linear in between.
        #expect(abs(at(start - 120) - 0.25) < 1e-6)
        // The full take hides the tones entirely (they are 0.5 here, not tone + take).
        #expect(at(40_000) == 0.5)
    }

    /// A punch-in over a part with no full take layers over its tones.
    @Test func punchInOverTones() throws {
        let score = try song("simple-harmony.acasong")
        let schedule = try Schedule(score: score)
        let range = schedule.loopRange(measures: 2...2)!
        let punch = TakePlayback(samples: [Float](repeating: 0.25, count: Int(schedule.endSample)), alignmentOffsetSamples: 0, range: range)
        var mixes = leftMixes(2)
        mixes[1].muted = true
        let tones = OfflineRender.render(schedule, mixes: mixes, periodFrames: 512)
        let layered = OfflineRender.render(schedule, mixes: mixes, takes: [PartTakes([punch]), .none], periodFrames: 512)
        let before = Int(range.lowerBound) - 241
        let identicalBefore = Array(tones.left[..<before]) == Array(layered.left[..<before])
        #expect(identicalBefore)
        #expect(layered.left[Int(range.lowerBound) + 300] == 0.25)
        let after = Int(range.upperBound) + 241
        let identicalAfter = Array(tones.left[after...]) == Array(layered.left[after...])
        #expect(identicalAfter)
    }
}

@Suite struct ReferenceToneTests {
    /// "Give me my note" while stopped: the tone sounds at once, centred
    /// (left = right), at its frequency (zero crossings over its steady
    /// part), for its length, then dies away; nothing else moves.
    @Test func referenceToneWhileStopped() throws {
        let schedule = try Schedule(score: try song("simple-harmony.acasong"))
        var core = EngineCore(schedule: schedule, mixes: leftMixes(2), maximumFrames: 256)
        let link = core.link
        let run = drive(&core, total: 24_000, period: 256) { done in
            if done == 0 { link.send(.reference(frequency: 293.66, samples: 9_600)) }
        }
        #expect(run.left == run.right, "centred")
        let steady = Array(run.left[2_400..<9_600])
        var crossings = 0
        for index in 1..<steady.count where (steady[index - 1] < 0) != (steady[index] < 0) { crossings += 1 }
        // 293.66 Hz over 0.15 s: ≈ 88 cycles; the harmonics add no crossings.
        #expect(abs(Double(crossings) / 2 / 0.15 - 293.66) < 8, "\(crossings) zero crossings")
        #expect(steady.map(abs).max()! > 0.2)
        #expect(run.left[20_000...].allSatisfy { $0 == 0 }, "released and silent after")
        #expect(link.snapshot().state == .stopped)
        #expect(run.events.isEmpty, "\(run.events)")
    }
}
