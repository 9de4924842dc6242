@testable import AcapellaEngine
import Testing

/// The engine's motion, transition by transition as `Motion`'s table
/// writes them down, without threads or a renderer: song samples in,
/// actions and phases out.
@Suite struct MotionTests {
    static let postRoll: Int64 = 960

    @Test func playCountsInThenRolls() {
        var motion = Motion(postRollSamples: Self.postRoll)
        #expect(motion.phase(at: 0) == .stopped)
        #expect(motion.play(countIn: 1_000) == .beginCountIn(from: -1_000, music: 0))
        #expect(motion.phase(at: -1_000) == .countingIn(music: 0, thenRecording: false))
        #expect(motion.markKind(at: -500) == .playing)
        #expect(motion.nextEvent(after: -1_000) == 0, "the hand-over is the next thing due")
        #expect(motion.musicStarts(at: -1) == nil, "not before its sample")
        #expect(motion.musicStarts(at: 0) == Transport.Action.none)
        #expect(motion.phase(at: 0) == .rolling && motion.musicStart == nil)
        #expect(motion.play(countIn: 1_000) == .none, "play while rolling does nothing")
    }

    @Test func recordFromStopCountsInIntoATakeAndAStopFinishesIt() {
        var motion = Motion(postRollSamples: Self.postRoll)
        #expect(motion.record(at: 0, countIn: 1_000, quantizedAt: 0) == .beginCountIn(from: -1_000, music: 0))
        #expect(motion.phase(at: -1_000) == .countingIn(music: 0, thenRecording: true))
        #expect(motion.markKind(at: -1_000) == .armed, "the count-in's frames are armed for the take")
        #expect(motion.isTakingATake)
        #expect(motion.musicStarts(at: 0) == .beginRecording(at: 0))
        #expect(motion.phase(at: 10) == .recording && motion.markKind(at: 10) == .recording)
        #expect(motion.stop() == .stop(returnTo: 0, finishTake: true), "a take in progress is finished, never dropped")
        #expect(motion.phase(at: 10) == .stopped && !motion.isTakingATake)
    }

    @Test func aToggledPunchArmsRecordsAndWritesItsPostRoll() {
        var motion = Motion(postRollSamples: Self.postRoll)
        #expect(motion.play(countIn: 0) == .beginPlayback(at: 0))
        #expect(motion.record(at: 100, countIn: 0, quantizedAt: 480) == .none, "quantized: nothing yet")
        #expect(motion.phase(at: 100) == .punching(.armed(punchIn: 480)) && motion.markKind(at: 100) == .armed)
        #expect(motion.nextEvent(after: 100) == 480)
        #expect(motion.punchStep(at: 479) == nil)
        #expect(motion.punchStep(at: 480) == .beginRecording(at: 480))
        #expect(motion.punchStep(at: 480) == nil, "one step a sample")
        #expect(motion.phase(at: 481) == .recording)
        #expect(motion.record(at: 900, countIn: 0, quantizedAt: 960) == .none)
        #expect(motion.punchStep(at: 960) == .endRecording(at: 960))
        #expect(motion.phase(at: 961) == .punching(.postRoll(until: 960 + Self.postRoll)) && motion.markKind(at: 961) == .armed)
        #expect(motion.nextEvent(after: 961) == 960 + Self.postRoll)
        #expect(motion.phase(at: 960 + Self.postRoll) == .rolling && motion.markKind(at: 960 + Self.postRoll) == .playing)
    }

    @Test func pressedAgainBeforeItsSampleThePunchIsCancelled() {
        var motion = Motion(postRollSamples: Self.postRoll)
        _ = motion.play(countIn: 0)
        _ = motion.record(at: 100, countIn: 0, quantizedAt: 480)
        _ = motion.record(at: 200, countIn: 0, quantizedAt: 480)
        #expect(motion.phase(at: 200) == .rolling)
        #expect(motion.punchStep(at: 480) == nil)
    }

    @Test func aRangePunchRunsItsStepsAndStopsItself() {
        var motion = Motion(postRollSamples: Self.postRoll)
        #expect(motion.punch(from: 0, in: 1_000, out: 2_000) == .beginPlayback(at: 0))
        #expect(motion.transport.countInSamples == 0 && motion.transport.returnPoint == 0)
        #expect(motion.phase(at: 0) == .punching(.armed(punchIn: 1_000)))
        #expect(motion.punchStep(at: 1_000) == .beginRecording(at: 1_000))
        #expect(motion.punchStep(at: 2_000) == .endRecording(at: 2_000))
        #expect(motion.phase(at: 2_000) == .punching(.postRoll(until: 2_000 + Self.postRoll)))
        #expect(motion.nextEvent(after: 2_000) == 2_000 + Self.postRoll)
        #expect(motion.punchStep(at: 2_000 + Self.postRoll) == .stop(returnTo: 0, finishTake: false))
        #expect(motion.phase(at: 2_000 + Self.postRoll) == .stopped)
        #expect(motion.punch(from: 0, in: 1_000, out: 2_000) == .beginPlayback(at: 0), "and again from stopped")
        #expect(motion.punch(from: 0, in: 1_000, out: 2_000) == .none, "but not while moving")
    }

    @Test func aStopClearsWhatTheMotionWaitedFor() {
        var motion = Motion(postRollSamples: Self.postRoll)
        _ = motion.play(countIn: 0)
        _ = motion.record(at: 0, countIn: 0, quantizedAt: 100)
        _ = motion.punchStep(at: 100)
        _ = motion.record(at: 150, countIn: 0, quantizedAt: 200)
        _ = motion.punchStep(at: 200)
        _ = motion.record(at: 250, countIn: 0, quantizedAt: 300)
        #expect(motion.postRollEnd != nil && motion.punch.isArmed)
        _ = motion.stop()
        #expect(motion.postRollEnd == nil && motion.punch == PunchPlan() && motion.musicStart == nil)
        #expect(motion.nextEvent(after: 0) == nil, "nothing left due")
        #expect(motion.stop() == .none, "stopping twice does nothing")
    }

    @Test func aMoveIsHeldUntilItsTakesAreRead() {
        var motion = Motion(postRollSamples: Self.postRoll)
        motion.hold(.play, target: 5_000)
        #expect(motion.phase(at: 0) == .waitingForLocate(target: 5_000) && motion.nextStreamPlace == 5_000)
        #expect(motion.releaseHeld(limit: 48_000, frames: 128) { _ in false } == nil)
        #expect(motion.releaseHeld(limit: 48_000, frames: 128) { $0 == 5_000 }?.target == 5_000)
        #expect(!motion.isHolding && motion.phase(at: 0) == .stopped)
        _ = motion.play(countIn: 0)
        motion.hold(.locate(measure: 3), target: 9_000)
        #expect(motion.phase(at: 100) == .waitingForBlocks(target: 9_000))
        // Never read: let go after the limit regardless.
        #expect(motion.releaseHeld(limit: 256, frames: 128) { _ in false } == nil)
        #expect(motion.releaseHeld(limit: 256, frames: 128) { _ in false } == nil)
        #expect(motion.releaseHeld(limit: 256, frames: 128) { _ in false }?.waited == 256)
        #expect(motion.phase(at: 100) == .rolling)
    }

    @Test func loopPassesStopAtTheLastAndTheSongsEndOnlyWithoutALoop() {
        var motion = Motion(postRollSamples: Self.postRoll)
        #expect(motion.setLoop(1_000..<2_000) == .setLoop(1_000..<2_000) && motion.transport.returnPoint == 1_000)
        _ = motion.record(at: 1_000, countIn: 0, quantizedAt: 1_000)
        motion.stopAfterPasses(2)
        #expect(motion.loopEnd() == .wrap && motion.passesLeft == 1)
        #expect(motion.loopEnd() == .stop(.stop(returnTo: 1_000, finishTake: true)) && motion.passesLeft == nil)
        _ = motion.play(countIn: 0)
        #expect(motion.loopEnd() == .wrap, "with no passes asked for, the loop goes on")
        #expect(motion.reachedEnd() == .none, "a loop wraps before the song's end")
        _ = motion.setLoop(nil)
        #expect(motion.reachedEnd() == .stop(returnTo: 0, finishTake: false))
        #expect(motion.reachedEnd() == .none, "stopped already")
    }

    @Test func aNewScheduleCarriesWhatWaitsOnTheMusic() {
        var motion = Motion(postRollSamples: Self.postRoll)
        _ = motion.play(countIn: 1_000)
        motion.carry { $0 * 2 }
        #expect(motion.musicStart == 0, "the hand-over on the song's start stays there")
        _ = motion.musicStarts(at: 0)
        _ = motion.record(at: 10, countIn: 0, quantizedAt: 480)
        motion.carry { $0 * 2 }
        #expect(motion.phase(at: 10) == .punching(.armed(punchIn: 960)))
    }
}
