// Runs the engine's render path for 10,000 periods of an 8-part song —
// tones, a full take, a punch-in take, two takes streamed (blocks missed, a
// locate held for its blocks), clicks, a count-in, a loop, and
// every kind of live command (punches on barlines, mix glides, solo,
// metronome, a tempo change swapping the schedule, new takes, a reference tone) — and counts
// the heap allocations and frees the render thread makes meanwhile: both
// must be zero (STYLE.md habit 7). Only `process` is counted; sending
// commands and freeing retired values is the control thread's work. A
// self-check first proves the counter sees allocations and frees at all.
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import CAllocCounter
#if canImport(Glibc)
import Glibc
#endif

var rng = SplitMix64(seed: 7)
let score = ScoreGenerator.random(using: &rng, options: .init(parts: 8, measures: 400))
let schedule = try Schedule(score: score, options: ScheduleOptions(countInMeasures: 2))
let slower = try Schedule(score: score, options: ScheduleOptions(tempoScale: Rational(9, 10), countInMeasures: 2))
let mixes = score.parts.indices.map { PartMix(gain: 0.2, pan: -0.7 + Float($0) * 0.2) }
let frames = 128
let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)

// The counter must notice an allocation and a free, or zeros below would mean nothing.
acapella_alloc_reset()
acapella_alloc_begin()
var probe: [Int]? = [Int](repeating: 1, count: Int(CommandLine.arguments.count + 100))
probe = nil
let probeCount = acapella_alloc_end()
guard probeCount > 0, acapella_alloc_frees() > 0, probe == nil else {
    print("alloc-check: the counter saw no allocation or free in its self-check; it is not working")
    exit(2)
}

// Part 3 plays a full take, part 5 its tones with a punch-in over measures 4–5.
var takes = score.parts.map { _ in PartTakes.none }
let takeAudio = (0..<2_000_000).map { Float($0 % 100) / 100 }
takes[3] = PartTakes([TakePlayback(samples: takeAudio, alignmentOffsetSamples: 317, nudgeSamples: -5)])
takes[5] = PartTakes([TakePlayback(samples: takeAudio, alignmentOffsetSamples: 9_000, range: schedule.loopRange(measures: 4...5))])
// Parts 1 and 7 stream theirs from a "file" a block at a time, read by a
// butler between periods (not counted: it is another thread's work); it
// stays away now and then, so blocks go missing and a locate waits.
final class ArraySource: TakeBlockSource, @unchecked Sendable {
    let samples: [Float]
    init(_ samples: [Float]) { self.samples = samples }
    var frameCount: Int64 { Int64(samples.count) }
    func read(from first: Int64, count: Int, into destination: UnsafeMutablePointer<Float>) -> Int {
        let available = max(0, min(count, samples.count - Int(first)))
        for index in 0..<available { destination[index] = samples[Int(first) + index] }
        return available
    }
}
// Take 1 is heard at 80 % and two semitones down: Rubber Band stretches it on the butler, the render thread only copies.
let stretched = try StretchedBlockSource(ArraySource(takeAudio), sampleRate: 48_000, stretch: TakeStretch(ratio: Rational(5, 4), semitones: -2),
                                         anchors: [StretchAnchor(input: 500, output: 625)])
takes[1] = PartTakes([TakePlayback(stream: TakeStream(source: stretched, name: "take 1 at 80 %"), alignmentOffsetSamples: 625)])
takes[7] = PartTakes([TakePlayback(stream: TakeStream(source: ArraySource(takeAudio), name: "take 7"), alignmentOffsetSamples: 2_000, range: schedule.loopRange(measures: 3...4))])
let butler = TakeStreamButler(cue: StreamCue())
var core = EngineCore(schedule: schedule, mixes: mixes, takes: takes, clickGain: 0.5, maximumFrames: frames)
core.attachStreams(cue: butler.cue)
butler.watch(takes, fade: Int64(core.renderer.rampSamples))
let link = core.link
// A recorder listens: captured frames are tagged and pushed to its ring.
let captureRing = BulkRing<CapturedFrame>(capacity: 48_000)
core.attachCapture(ring: captureRing, latencyFrames: 317)
// And a quartet a microphone each: four inputs, a ring each.
let inputRings = (0..<4).map { _ in BulkRing<CapturedFrame>(capacity: 48_000) }
core.attachInputs(inputRings.enumerated().map { (ring: $1, input: $0) })
// The needle follows the third of them on its own.
let analysisRing = BulkRing<CapturedFrame>(capacity: 48_000)
core.attachAnalysis(ring: analysisRing, input: 2)
let inputs = UnsafeMutablePointer<Float>.allocate(capacity: 4 * frames)
inputs.initialize(repeating: 0.125, count: 4 * frames)
let input = UnsafeMutablePointer<Float>.allocate(capacity: frames)
input.initialize(repeating: 0.25, count: frames)
let drained = UnsafeMutablePointer<CapturedFrame>.allocate(capacity: 48_000)
var deviceFrame: Int64 = 0
var streams = StreamAlignment.linked
let newTakes = PartTakes([TakePlayback(samples: takeAudio, alignmentOffsetSamples: 100)])

// A short loop (the wrap is a seek, many times over), started through the count-in.
link.send(.loop(3...5))
link.send(.play)
var periods = 0
var events = 0
var capturedFrames = 0
var inputFrames = 0
var analysisFrames = 0
acapella_alloc_reset()
while periods < 10_000 {
    switch periods % 1_000 {
    case 100: link.send(.record(.bar))  // punch in on the next barline…
    case 400: link.send(.record(.beat))  // …and out on a beat
    case 450: link.send(.locate(measure: 4 + periods / 1_000))  // waits for its blocks while the butler is away
    case 500: link.send(.mix(part: 2, PartMix(gain: 0.05, pan: 0.3)))
    case 600: link.send(.solo(part: 1, periods % 2_000 == 600))
    case 700: link.send(.metronome(periods % 2_000 == 700 ? 0 : 0.5))
    case 800: link.send(.takes(part: 6, periods % 2_000 == 800 ? newTakes : .none))
    case 900: link.send(.schedule(periods % 2_000 == 900 ? slower : schedule))
    case 901: link.send(.takes(part: 6, newTakes))  // made for the schedule waiting: held until its barline
    case 950: link.send(.reference(frequency: 293.66, samples: 24_000))  // give me my note
    default: break
    }
    // A keyboard played fast: a note every 3 periods, each held for 60, so
    // 20 keys want the 16 voices and the oldest are stolen; the chord and the drone beside.
    if periods % 3 == 0 {
        let key = 36 + periods / 3 % 48
        link.send(.tone(key: key, frequency: 440 * Double(key - 33) / 36, level: 0.8, samples: 0))
        if periods >= 60 { let old = 36 + (periods - 60) / 3 % 48; link.send(.releaseTones(old..<(old + 1))) }
    }
    if periods % 1_000 == 975 { for part in 0..<4 { link.send(.tone(key: VoicePool.chordKey + part, frequency: 200 + 50 * Double(part), level: 1, samples: 24_000)) } }
    if periods % 2_000 == 10 { link.send(.tone(key: VoicePool.droneKey, frequency: 146.83, level: 0.5, samples: 0)) }
    if periods % 2_000 == 1_010 { link.send(.releaseTones(VoicePool.droneKey..<(VoicePool.droneKey + 1))) }
    // An xrun now and then; after each, unlinked streams that started a
    // few frames apart, or could not say.
    if periods % 997 == 500 {
        deviceFrame += 77
        streams = periods % 3 == 0 ? .unknown : StreamAlignment(captureSkewFrames: Int64(periods % 61) - 30, known: true)
    }
    if !(440..<470).contains(periods % 1_000) { butler.service() }
    acapella_alloc_begin()
    core.process(input: input, left: left, right: right, frames: frames, deviceFrame: deviceFrame, alignment: streams, inputs: inputs, inputCount: 4)
    _ = acapella_alloc_end()
    deviceFrame += Int64(frames)
    capturedFrames += captureRing.pop(into: drained, maximum: 48_000)
    for ring in inputRings { inputFrames += ring.pop(into: drained, maximum: 48_000) }
    analysisFrames += analysisRing.pop(into: drained, maximum: 48_000)
    while link.nextEvent() != nil { events += 1 }
    link.collectRetired()
    periods += 1
}
let allocations = acapella_alloc_end()
let frees = acapella_alloc_frees()
let snapshot = link.snapshot()
print("alloc-check: \(allocations) allocations and \(frees) frees on the render path over \(periods) periods of \(frames) frames (8 parts, a take, a punch-in, two streamed takes, one stretched by Rubber Band (\(butler.watched.map(\.stream.missed).reduce(0, +)) frames missed), a keyboard's notes stealing voices from a pool of \(VoicePool.size), the chord, the drone, clicks, count-in, loop, \(events) engine events from live commands, \(capturedFrames) captured frames tagged (and \(inputFrames) from four inputs apart, \(analysisFrames) from the third for the needle), xruns, unlinked streams realigned); now at measure \(snapshot.measureBeat), \(snapshot.state)")
guard snapshot.serial == Int64(periods), events >= 10, capturedFrames == periods * frames else {
    print("alloc-check: the engine did not run as driven (serial \(snapshot.serial), \(events) events)")
    exit(2)
}
exit(allocations == 0 && frees == 0 ? 0 : 1)
