// Renders 10,000 periods of an 8-part song with clicks and counts the heap
// allocations the render thread makes meanwhile: it must be zero (STYLE.md
// habit 7). A self-check first proves the counter sees allocations at all.
import AcapellaEngine
import AcapellaScore
import CAllocCounter
#if canImport(Glibc)
import Glibc
#endif

var rng = SplitMix64(seed: 7)
let score = ScoreGenerator.random(using: &rng, options: .init(parts: 8, measures: 400))
let schedule = try Schedule(score: score, options: ScheduleOptions(countInMeasures: 2))
let mixes = score.parts.indices.map { PartMix(gain: 0.2, pan: -0.7 + Float($0) * 0.2) }
let frames = 128
let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)

// The counter must notice an allocation, or a zero below would mean nothing.
acapella_alloc_begin()
let probe = [Int](repeating: 1, count: Int(CommandLine.arguments.count + 100))
let probeCount = acapella_alloc_end()
guard probeCount > 0, probe.count > 0 else {
    print("alloc-check: the counter saw no allocation in its self-check; it is not working")
    exit(2)
}

// Part 3 plays a take (a rendered sine), the others their tones.
var takes: [TakePlayback?] = score.parts.map { _ in nil }
takes[3] = TakePlayback(samples: (0..<2_000_000).map { Float($0 % 100) / 100 }, alignmentOffsetSamples: 317, nudgeSamples: -5)
var renderer = SongRenderer(schedule: schedule, mixes: mixes, takes: takes, clickGain: 0.5, maximumFrames: frames)
// A short loop, so the wrap (a seek) happens many times on the render path.
renderer.setLoop(schedule.loopRange(measures: 3...5))
var periods = 0
acapella_alloc_begin()
while periods < 10_000 {
    renderer.render(left: left, right: right, frames: frames)
    periods += 1
}
let allocations = acapella_alloc_end()
print("alloc-check: \(allocations) allocations on the render path over \(periods) periods of \(frames) frames (8 parts, one of them a take, clicks, looping)")
exit(allocations == 0 ? 0 : 1)
