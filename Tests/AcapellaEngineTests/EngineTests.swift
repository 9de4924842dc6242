@testable import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation
import Testing

let songsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Songs")

func song(_ name: String) throws -> Score {
    try Acasong.parse(String(contentsOf: songsDirectory.appendingPathComponent(name), encoding: .utf8))
}

/// Independent reference: the exact sample of a tick, summed tempo segment
/// by tempo segment as fractions, rounded half up once.
func referenceSample(tick: Int, tempos: [TempoChange], rate: Int) -> Int64 {
    var numerator: Int128 = 0  // in units of 1/(960·milliBPM…) — keep a common denominator
    var denominator: Int128 = 1
    func add(_ n: Int128, _ d: Int128) {
        numerator = numerator * d + n * denominator
        denominator *= d
        var a = numerator.magnitude, b = denominator.magnitude
        while b != 0 { (a, b) = (b, a % b) }
        numerator /= Int128(a)
        denominator /= Int128(a)
    }
    if tick < 0 {  // before the first tempo change: the first tempo, backwards
        add(Int128(tick) * 60 * Int128(rate) * 1000, 960 * Int128(tempos[0].tempo.milliBPM))
    }
    for (index, change) in tempos.enumerated() where change.tick < tick {
        let end = min(tick, index + 1 < tempos.count ? tempos[index + 1].tick : Int.max)
        add(Int128(end - change.tick) * 60 * Int128(rate) * 1000, 960 * Int128(change.tempo.milliBPM))
    }
    let n = 2 * numerator + denominator, d = 2 * denominator
    return Int64(n >= 0 ? n / d : -((-n + d - 1) / d))
}

func firstDifference(_ a: [Float], _ b: [Float]) -> Int? {
    a.indices.first { $0 < b.count && a[$0] != b[$0] }
}

/// Renders a window of a schedule, solo on one part.
func renderWindow(_ schedule: Schedule, part: Int, from start: Int64, frames: Int) -> [Float] {
    var mixes = schedule.tones.indices.map { _ in PartMix(gain: 1, pan: -1, muted: true) }
    mixes[part].muted = false
    var renderer = SongRenderer(schedule: schedule, mixes: mixes, start: start, maximumFrames: frames)
    var left = [Float](repeating: 0, count: frames)
    var right = [Float](repeating: 0, count: frames)
    left.withUnsafeMutableBufferPointer { l in right.withUnsafeMutableBufferPointer { r in
        renderer.render(left: l.baseAddress!, right: r.baseAddress!, frames: frames)
    } }
    return left
}

@Suite struct OnsetTests {
    /// Every note onset in the rendered audio lands on the sample exact
    /// arithmetic gives: for each attack, the first sample where the audio
    /// with and without that note differ is exactly its scheduled sample.
    @Test(arguments: ["simple-harmony.acasong", "amazing-grace.acasong", "row-row-row-your-boat.acasong", "bach-bwv26.6-ach-wie-fluechtig.acasong"])
    func onsetsLandOnExactSamples(name: String) throws {
        let score = try song(name)
        let schedule = try Schedule(score: score)
        var checked = 0
        for (partIndex, part) in score.parts.enumerated() {
            let attacks = part.notes.indices.filter { part.isAttack(at: $0) }
            #expect(attacks.count == schedule.tones[partIndex].count, "one tone per attack (ties merged)")
            for (toneIndex, noteIndex) in attacks.enumerated() {
                let expected = referenceSample(tick: part.notes[noteIndex].startTick, tempos: score.tempos, rate: 48_000)
                let start = max(0, expected - 1000)
                let with = renderWindow(schedule, part: partIndex, from: start, frames: 2000)
                let without = renderWindow(schedule.removingTone(part: partIndex, index: toneIndex), part: partIndex, from: start, frames: 2000)
                let first = firstDifference(with, without)
                #expect(first.map { start + Int64($0) } == expected, "\(name) part \(part.name) note \(noteIndex)")
                checked += 1
            }
        }
        #expect(checked > 10)
    }

    @Test func tempoChangesLandOnExactSamples() throws {
        // Random scores with mid-measure tempo changes, fractional tempos.
        for seed in 1...4 {
            var rng = SplitMix64(seed: UInt64(seed))
            let score = ScoreGenerator.random(using: &rng, options: .init(parts: 1, measures: 12))
            let schedule = try Schedule(score: score)
            let part = score.parts[0]
            let attacks = part.notes.indices.filter { part.isAttack(at: $0) }
            for (toneIndex, noteIndex) in attacks.enumerated() where toneIndex % 3 == 0 {
                let expected = referenceSample(tick: part.notes[noteIndex].startTick, tempos: score.tempos, rate: 48_000)
                let start = max(0, expected - 500)
                let with = renderWindow(schedule, part: 0, from: start, frames: 1000)
                let without = renderWindow(schedule.removingTone(part: 0, index: toneIndex), part: 0, from: start, frames: 1000)
                #expect(firstDifference(with, without).map { start + Int64($0) } == expected, "seed \(seed) note \(noteIndex)")
            }
        }
    }

    @Test func tiesDoNotReAttack() throws {
        let tied = try Acasong.parse("acasong 1\npart A\nC4 2~ C4 2 | D4 1\n")
        let long = try Acasong.parse("acasong 1\npart A\nC4 1 | D4 1\n")
        let a = try Schedule(score: tied), b = try Schedule(score: long)
        #expect(a.tones == b.tones)
        let identical = OfflineRender.render(a, mixes: [PartMix()]).left == OfflineRender.render(b, mixes: [PartMix()]).left
        #expect(identical)
    }
}

@Suite struct RenderTests {
    /// The same bits whatever the period size.
    @Test func outputIsBitIdenticalForAnyPeriodSize() throws {
        let score = try song("amazing-grace.acasong")
        let schedule = try Schedule(score: score, options: ScheduleOptions(countInMeasures: 1))
        let mixes = score.parts.indices.map { PartMix(gain: 0.3, pan: -0.5 + Float($0) / 3) }
        let reference = OfflineRender.render(schedule, mixes: mixes, clickGain: 0.5, periodFrames: 64)
        #expect(reference.left.contains { $0 != 0 })
        for period in [128, 1000, 4096, 317] {
            let other = OfflineRender.render(schedule, mixes: mixes, clickGain: 0.5, periodFrames: period)
            let identical = other.left == reference.left && other.right == reference.right
            #expect(identical, "period \(period)")
        }
    }

    /// Count-in and metronome clicks, found in the audio as the first
    /// non-zero sample after silence, on their exact samples.
    @Test(arguments: [0, 1, 2])
    func countInAndClicksLandOnExactSamples(countIn: Int) throws {
        for name in ["simple-harmony.acasong", "amazing-grace.acasong", "row-row-row-your-boat.acasong", "silent-night.acasong"] {
            let score = try song(name)
            let schedule = try Schedule(score: score, options: ScheduleOptions(countInMeasures: countIn))
            let audio = OfflineRender.render(schedule, mixes: score.parts.map { _ in PartMix(muted: true) }, clickGain: 1)
            var found: [Int64] = []
            var silent = 0
            for (index, value) in audio.left.enumerated() {
                if value != 0 {
                    if silent > 100 || found.isEmpty && index == silent { found.append(audio.firstSample + Int64(index)) }
                    silent = 0
                } else {
                    silent += 1
                }
            }
            // Expected, independently: beats of the count-in, then of every measure.
            let meter = score.meters[0].meter
            // 6/8 is felt in two: clicks on dotted quarters; simple meters click every beat.
            let pulse = meter.denominator == 8 && meter.numerator == 6 ? 1440 : meter.beatTicks
            var ticks: [Int] = []
            let pickup = score.pickupTicks
            var tick = (pickup > 0 ? pickup - meter.measureTicks : 0) - countIn * meter.measureTicks
            while tick < 0 && countIn > 0 {
                ticks.append(tick)
                tick += pulse
            }
            tick = pickup > 0 ? pickup - (pickup / pulse) * pulse : 0
            while tick < score.endTick {
                ticks.append(tick)
                tick += pulse  // these songs keep one meter
            }
            let expected = ticks.map { referenceSample(tick: $0, tempos: score.tempos, rate: 48_000) }
            #expect(found == expected, "\(name), count-in \(countIn)")
            // The count-in starts on a downbeat; without one, a pickup's first beat is not a downbeat.
            #expect(schedule.clicks.first?.accent == (countIn > 0 || score.pickupTicks == 0), "\(name)")
        }
    }
}

@Suite struct LoudnessTests {
    /// EBU Tech 3341 (2016) minimum requirements, cases 1–6: 1 kHz sines
    /// generated here; each must measure −23.0 ± 0.1 LUFS (case 2: −33).
    static func sine(dBFS: Double, seconds: Double, channels: [Bool] = [true, true], rate: Int = 48_000) -> [[Float]] {
        let count = Int(seconds * Double(rate))
        let amplitude = pow(10, dBFS / 20)
        let wave = (0..<count).map { Float(amplitude * sin(2 * Double.pi * 1000 * Double($0) / Double(rate))) }
        return channels.map { $0 ? wave : [Float](repeating: 0, count: count) }
    }

    static func measure(_ segments: [[[Float]]], surround: Bool = false) throws -> Double {
        let channels = segments[0].count
        var interleaved: [Float] = []
        for segment in segments {
            for frame in 0..<segment[0].count {
                for channel in 0..<channels { interleaved.append(segment[channel][frame]) }
            }
        }
        return try Loudness.measure(interleaved: interleaved, channels: channels, sampleRate: 48_000, surround5: surround).integratedLUFS
    }

    @Test func tech3341Case1() throws { #expect(abs(try Self.measure([Self.sine(dBFS: -23, seconds: 20)]) + 23) <= 0.1) }
    @Test func tech3341Case2() throws { #expect(abs(try Self.measure([Self.sine(dBFS: -33, seconds: 20)]) + 33) <= 0.1) }
    @Test func tech3341Case3() throws {
        let value = try Self.measure([Self.sine(dBFS: -36, seconds: 10), Self.sine(dBFS: -23, seconds: 60), Self.sine(dBFS: -36, seconds: 10)])
        #expect(abs(value + 23) <= 0.1)
    }
    @Test func tech3341Case4() throws {
        let value = try Self.measure([Self.sine(dBFS: -72, seconds: 10), Self.sine(dBFS: -36, seconds: 10), Self.sine(dBFS: -23, seconds: 60),
                                      Self.sine(dBFS: -36, seconds: 10), Self.sine(dBFS: -72, seconds: 10)])
        #expect(abs(value + 23) <= 0.1)
    }
    @Test func tech3341Case5() throws {
        let value = try Self.measure([Self.sine(dBFS: -26, seconds: 20), Self.sine(dBFS: -20, seconds: 20.1), Self.sine(dBFS: -26, seconds: 20)])
        #expect(abs(value + 23) <= 0.1)
    }
    @Test func tech3341Case6() throws {
        // 5.0: L and R at −28 dBFS, C at −24 dBFS, Ls and Rs at −30 dBFS
        // (surrounds weighted +1.5 dB by BS.1770).
        let side = Self.sine(dBFS: -28, seconds: 20, channels: [true])[0]
        let centre = Self.sine(dBFS: -24, seconds: 20, channels: [true])[0]
        let surround = Self.sine(dBFS: -30, seconds: 20, channels: [true])[0]
        let value = try Self.measure([[side, side, centre, surround, surround]], surround: true)
        #expect(abs(value + 23) <= 0.1, "measured \(value)")
    }

    /// A real mixdown file, read back through libsndfile: −16 ± 0.1 LUFS,
    /// true peak at most −1 dBTP.
    @Test(arguments: [("ode-to-joy.acasong", "wav", nil as String?), ("my-bonnie.acasong", "flac", "Lead"), ("silent-night.acasong", "wav", "Soprano")])
    func mixdownLandsOnTarget(name: String, format: String, practice: String?) throws {
        var options = MixdownOptions()
        options.practicePart = practice
        let (stereo, reported) = try Mixdown.mix(try song(name), options: options)
        #expect(abs(reported.integratedLUFS + 16) <= 0.1 && reported.truePeakDBTP <= -1.0)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-mix-\(UUID().uuidString).\(format)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try AudioFile.write(left: stereo.left, right: stereo.right, sampleRate: 48_000, to: path, bits: 24)
        let decoded = try AudioFile.read(path)
        #expect(decoded.channels == 2 && decoded.sampleRate == 48_000)
        let measured = try Loudness.measure(interleaved: decoded.samples, channels: 2, sampleRate: 48_000)
        #expect(abs(measured.integratedLUFS + 16) <= 0.1, "\(name): \(measured.integratedLUFS) LUFS")
        #expect(measured.truePeakDBTP <= -1.0, "\(name): \(measured.truePeakDBTP) dBTP")
    }

    @Test func practiceTrackBringsThePartForward() throws {
        let score = try song("amazing-grace.acasong")
        var options = MixdownOptions()
        options.practicePart = "alto"
        let mixes = try Mixdown.partMixes(for: score, options: options)
        #expect(mixes[1].pan == 0 && mixes[1].gain == 0.3)
        #expect(abs(mixes[0].gain - 0.3 * powf(10, -9 / 20)) < 1e-6)
        options.practicePart = "Descant"
        #expect(throws: MixdownError.self) { try Mixdown.partMixes(for: score, options: options) }
    }
}

@Suite struct TakeTests {
    /// Lag (in samples) at which `b` best matches `a`: b[n] ≈ a[n + lag].
    static func bestLag(_ a: [Float], _ b: [Float], window: Range<Int>, maximumLag: Int) -> Int {
        var best = (lag: 0, score: -Double.infinity)
        for lag in -maximumLag...maximumLag {
            var sum = 0.0
            for n in window where n + lag >= 0 && n + lag < a.count && n < b.count { sum += Double(a[n + lag]) * Double(b[n]) }
            if sum > best.score { best = (lag, sum) }
        }
        return best.lag
    }

    /// A take recorded with a known alignment (317 samples of count-in
    /// before song sample 0) plays back in time with the tones: relative
    /// offset 0 samples by cross-correlation; a nudge moves it by exactly
    /// the nudge.
    @Test func takeWithKnownAlignmentLinesUpWithTheTones() throws {
        let score = try song("amazing-grace.acasong")
        let schedule = try Schedule(score: score)
        // Hard left: the left gain is exactly 1, so the rendered part is the
        // voice itself and can serve as the recorded take.
        var solo = score.parts.map { _ in PartMix(gain: 1, pan: -1, muted: true) }
        solo[1].muted = false
        let altoTones = OfflineRender.render(schedule, mixes: solo).left
        let takeSamples = [Float](repeating: 0, count: 317) + altoTones
        var takes = score.parts.map { _ in PartTakes.none }
        for nudge: Int64 in [0, 10, -25] {
            takes[1] = PartTakes([TakePlayback(samples: takeSamples, alignmentOffsetSamples: 317, nudgeSamples: nudge)])
            let mixed = OfflineRender.render(schedule, mixes: solo, takes: takes).left
            let lag = Self.bestLag(altoTones, mixed, window: 48_000..<96_000, maximumLag: 200)
            #expect(lag == Int(nudge), "nudge \(nudge)")
            if nudge == 0 {
                let identical = mixed == altoTones  // compared outside #expect: a failure would diff 1.7 M samples
                #expect(identical, "an exactly aligned take reproduces the part sample for sample")
            }
        }
    }
}

@Suite struct LoopTests {
    static func renderLooped(_ schedule: Schedule, loop: Range<Int64>, frames: Int, period: Int, clicksOnly: Bool) -> [Float] {
        let mixes = schedule.tones.map { _ in PartMix(gain: 0.3, pan: -1, muted: clicksOnly) }
        var renderer = SongRenderer(schedule: schedule, mixes: mixes, clickGain: 1, start: 0, maximumFrames: period)
        renderer.setLoop(loop)
        var left = [Float](repeating: 0, count: frames)
        var right = [Float](repeating: 0, count: frames)
        var done = 0
        left.withUnsafeMutableBufferPointer { l in right.withUnsafeMutableBufferPointer { r in
            while done < frames {
                let count = min(period, frames - done)
                renderer.render(left: l.baseAddress! + done, right: r.baseAddress! + done, frames: count)
                done += count
            }
        } }
        return left
    }

    /// The wrap lands on the exact sample: clicks found in the audio over
    /// three passes of a loop (measures 2–3 of a song whose tempo changes at
    /// measure 3) sit where the loop arithmetic puts them.
    @Test func loopWrapLandsOnTheExactSample() throws {
        let score = try song("simple-harmony.acasong")
        let schedule = try Schedule(score: score)
        let loop = try #require(schedule.loopRange(measures: 2...3))
        #expect(loop.lowerBound == referenceSample(tick: 3840, tempos: score.tempos, rate: 48_000))
        #expect(loop.upperBound == referenceSample(tick: 3 * 3840, tempos: score.tempos, rate: 48_000))
        let passes = 3
        let frames = Int(loop.upperBound) + (passes - 1) * Int(loop.upperBound - loop.lowerBound) + 1000
        let audio = Self.renderLooped(schedule, loop: loop, frames: frames, period: 256, clicksOnly: true)
        var found: [Int] = []
        var silent = 1000
        for (index, value) in audio.enumerated() {
            if value != 0 {
                if silent > 100 { found.append(index) }
                silent = 0
            } else {
                silent += 1
            }
        }
        var expected = schedule.clicks.filter { $0.sample < loop.upperBound }.map { Int($0.sample) }
        let inLoop = schedule.clicks.filter { loop.contains($0.sample) }.map { Int($0.sample - loop.lowerBound) }
        for pass in 1...passes {
            let passStart = Int(loop.upperBound) + (pass - 1) * Int(loop.upperBound - loop.lowerBound)
            expected += inLoop.map { passStart + $0 }
        }
        #expect(found == expected.filter { $0 < frames })
    }

    @Test func loopedOutputIsBitIdenticalForAnyPeriodSize() throws {
        let score = try song("amazing-grace.acasong")
        let schedule = try Schedule(score: score)
        let loop = try #require(schedule.loopRange(measures: 3...5))
        let frames = Int(loop.upperBound) * 2
        let reference = Self.renderLooped(schedule, loop: loop, frames: frames, period: 64, clicksOnly: false)
        for period in [128, 1000, 4096, 317] {
            let other = Self.renderLooped(schedule, loop: loop, frames: frames, period: period, clicksOnly: false)
            let identical = other == reference
            #expect(identical, "period \(period)")
        }
    }
}

@Suite struct CommandRingTests {
    @Test func fifoAndBounds() {
        let ring = CommandRing<Int>(capacity: 3)
        #expect(ring.pop() == nil)
        #expect(ring.push(1) && ring.push(2) && ring.push(3))
        #expect(!ring.push(4), "a full ring refuses")
        #expect(ring.pop() == 1)
        #expect(ring.push(4))
        #expect([ring.pop(), ring.pop(), ring.pop(), ring.pop()] == [2, 3, 4, nil])
    }

    /// One producer thread, one consumer thread, a small ring: a million
    /// elements arrive in order, none lost or duplicated.
    @Test func twoThreadsHandOverEverythingInOrder() async {
        let ring = CommandRing<Int>(capacity: 16)
        let count = 1_000_000
        let producer = Thread {
            var next = 0
            while next < count {
                if ring.push(next) { next += 1 }
            }
        }
        producer.start()
        var expected = 0
        var outOfOrder = 0
        while expected < count {
            if let value = ring.pop() {
                if value != expected { outOfOrder += 1 }
                expected += 1
            }
        }
        #expect(outOfOrder == 0)
        #expect(ring.pop() == nil)
    }
}

@Suite struct TransportTests {
    @Test func playCountsInThenPlaysAndStopReturns() {
        var transport = Transport(countInSamples: 96_000)
        #expect(transport.play() == .beginCountIn(from: -96_000, music: 0))
        #expect(transport.state == .countIn)
        #expect(transport.play() == .none)
        #expect(transport.countInFinished(at: 0) == .none)
        #expect(transport.state == .playing)
        #expect(transport.stop() == .stop(returnTo: 0, finishTake: false))
        #expect(transport.state == .stopped)
        #expect(transport.stop() == .none)
    }

    @Test func recordFromStoppedCountsInThenRecords() {
        var transport = Transport(countInSamples: 48_000)
        #expect(transport.record(at: 0) == .beginCountIn(from: -48_000, music: 0))
        #expect(transport.countInFinished(at: 0) == .beginRecording(at: 0))
        #expect(transport.state == .recording)
        #expect(transport.stop() == .stop(returnTo: 0, finishTake: true))
    }

    @Test func punchInAndOutWhilePlaying() {
        var transport = Transport()
        #expect(transport.play() == .beginPlayback(at: 0))
        #expect(transport.record(at: 144_000) == .beginRecording(at: 144_000))
        #expect(transport.state == .recording)
        #expect(transport.record(at: 288_000) == .endRecording(at: 288_000))
        #expect(transport.state == .playing)
    }

    @Test func stopDuringARecordingCountInKeepsTheTake() {
        var transport = Transport(countInSamples: 48_000)
        _ = transport.record(at: 0)
        #expect(transport.stop() == .stop(returnTo: 0, finishTake: true))
    }

    @Test func loopsMoveTheReturnPointAndPreventAutoStop() {
        var transport = Transport()
        #expect(transport.setLoop(144_000..<413_217) == .setLoop(144_000..<413_217))
        #expect(transport.play() == .beginPlayback(at: 144_000))
        #expect(transport.reachedEnd() == .none, "a loop wraps; it never reaches the end")
        #expect(transport.stop() == .stop(returnTo: 144_000, finishTake: false))
        _ = transport.setLoop(nil)
        #expect(transport.play() == .beginPlayback(at: 0))
        #expect(transport.reachedEnd() == .stop(returnTo: 0, finishTake: false))
    }

    @Test func endOfSongWhileRecordingFinishesTheTake() {
        var transport = Transport()
        _ = transport.record(at: 0)
        #expect(transport.state == .recording)
        #expect(transport.reachedEnd() == .stop(returnTo: 0, finishTake: true))
    }
}
