@testable import AcapellaEngine
import AcapellaScore
import Foundation
import Testing

/// Tones outside the song: a fixed pool, the oldest stolen, keys released,
/// references ending by themselves; through the engine, a keyboard's note
/// sounds from the first sample of the next period, whatever the transport.
@Suite struct VoicePoolTests {
    static func render(_ pool: inout VoicePool, frames: Int) -> [Float] {
        var buffer = [Float](repeating: 0, count: frames)
        buffer.withUnsafeMutableBufferPointer { pool.render(into: $0.baseAddress!, count: frames) }
        return buffer
    }

    @Test func theOldestIsStolenWhenEveryVoiceIsTaken() {
        var pool = VoicePool(sampleRate: 48_000)
        for key in 40..<60 { pool.noteOn(key: key, frequency: 110 + Double(key), level: 0.5) }
        #expect(pool.audible == VoicePool.size, "16 voices, no more")
        #expect((40..<44).allSatisfy { !pool.isSounding(key: $0) }, "the four oldest stolen")
        #expect((44..<60).allSatisfy { pool.isSounding(key: $0) })
        // A key pressed again takes its own voice back, stealing nothing.
        pool.noteOn(key: 50, frequency: 160, level: 1)
        #expect((44..<60).allSatisfy { pool.isSounding(key: $0) })
        // Released keys fade out over the release (25 ms), then the voices are free.
        pool.noteOff(keys: 44..<60)
        #expect(pool.audible == VoicePool.size && !pool.isSounding(key: 50))
        _ = Self.render(&pool, frames: 1_200)
        #expect(pool.audible == 0)
    }

    @Test func aReferenceEndsByItselfAndAHeldNoteWhenReleased() {
        var pool = VoicePool(sampleRate: 48_000)
        pool.noteOn(key: VoicePool.referenceKey, frequency: 440, level: 0.5, samples: 4_800)
        pool.noteOn(key: 60, frequency: 261.63, level: 1)
        let first = Self.render(&pool, frames: 4_800)
        #expect(first[0] != 0, "sounding from the first sample")
        #expect(!pool.isSounding(key: VoicePool.referenceKey) && pool.isSounding(key: 60), "the reference released at its end")
        _ = Self.render(&pool, frames: 4_800)
        #expect(pool.audible == 1)
        pool.noteOff(key: 60)
        _ = Self.render(&pool, frames: 1_200)
        #expect(pool.audible == 0)
        #expect(Self.render(&pool, frames: 100).allSatisfy { $0 == 0 })
    }

    @Test func aKeyboardNoteSoundsInTheNextPeriodWhateverTheTransport() throws {
        let score = try song("amazing-grace.acasong")
        let schedule = try Schedule(score: score)
        var core = EngineCore(schedule: schedule, mixes: PartMix.spread(count: 4).map { var mix = $0; mix.muted = true; return mix }, maximumFrames: 128)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 128)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 128)
        defer {
            left.deallocate()
            right.deallocate()
        }
        core.process(left: left, right: right, frames: 128)
        #expect((0..<128).allSatisfy { left[$0] == 0 }, "stopped and muted: silence")
        core.link.send(.tone(key: 60, frequency: 261.63, level: 1, samples: 0))
        core.process(left: left, right: right, frames: 128)
        #expect(left[0] != 0 && right[0] == left[0], "the note from the period's first sample, centred")
        core.link.send(.releaseTones(60..<61))
        for _ in 0..<10 { core.process(left: left, right: right, frames: 128) }
        #expect((0..<128).allSatisfy { left[$0] == 0 }, "released: silence after 25 ms")
    }
}
