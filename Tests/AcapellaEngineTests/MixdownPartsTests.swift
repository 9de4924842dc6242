@testable import AcapellaEngine
@testable import AcapellaProject
import AcapellaDSP
import AcapellaScore
import Foundation
import Testing

/// A deterministic test signal: a few sines with bursts, loud enough to
/// need limiting in places.
func burstySignal(frames: Int, seed: UInt64, peak: Float) -> ([Float], [Float]) {
    var rng = SplitMix64(seed: seed)
    var left = [Float](repeating: 0, count: frames)
    var right = [Float](repeating: 0, count: frames)
    var envelope: Float = 0.2
    for index in 0..<frames {
        if index % 4_800 == 0 { envelope = Float(rng.next() % 1_000) / 1_000 * peak }
        let t = Float(index) / 48_000
        left[index] = envelope * (0.6 * sinf(2 * .pi * 220 * t) + 0.4 * sinf(2 * .pi * 11_999 * t))
        right[index] = envelope * (0.7 * sinf(2 * .pi * 330 * t + 1) + 0.3 * sinf(2 * .pi * 12_000 * t))
    }
    return (left, right)
}

@Suite struct LimiterTests {
    /// Straightforward reference: needed gain per sample, sliding minimum
    /// by brute force, the same attack/release glide.
    static func reference(_ left: [Float], _ right: [Float], gain inputGain: Float, ceiling: Float) -> ([Float], [Float]) {
        let kneeStart = ceiling * 0.5
        let span = 2 * (ceiling - kneeStart)
        let needed = zip(left, right).map { l, r -> Float in
            let peak = max(abs(l * inputGain), abs(r * inputGain))
            if peak <= kneeStart { return 1 }
            let over = peak - kneeStart
            return (over >= span ? ceiling : kneeStart + over - over * over / (2 * span)) / peak
        }
        let lookahead = 240
        var outLeft = left, outRight = right
        var gain: Float = 1
        for index in left.indices {
            let goal = needed[index..<min(left.count, index + lookahead + 1)].min()!
            if !(goal == 1 && gain == 1) {
                gain += (goal - gain) * (goal < gain ? 1 / Float(lookahead) : 1 / Float(2_400))
                if goal == 1 && gain > 0.999_988 { gain = 1 }
            }
            let applied = goal == 1 && gain == 1 ? 1 : min(gain, needed[index])
            outLeft[index] = left[index] * inputGain * applied
            outRight[index] = right[index] * inputGain * applied
        }
        return (outLeft, outRight)
    }

    static func limit(_ left: [Float], _ right: [Float], gain: Float, ceiling: Float) -> ([Float], [Float]) {
        var outLeft = [Float](repeating: 0, count: left.count)
        var outRight = outLeft
        left.withUnsafeBufferPointer { l in right.withUnsafeBufferPointer { r in
            outLeft.withUnsafeMutableBufferPointer { ol in outRight.withUnsafeMutableBufferPointer { or in
                Limiter.process(left: l, right: r, gain: gain, into: ol, or, ceiling: ceiling, sampleRate: 48_000)
            } }
        } }
        return (outLeft, outRight)
    }

    /// The streaming limiter gives exactly the brute-force reference's
    /// samples, never exceeds the ceiling, and leaves audio that stays
    /// below the knee exactly at input × gain.
    @Test func matchesTheReferenceAndHoldsTheCeiling() {
        let (left, right) = burstySignal(frames: 96_000, seed: 3, peak: 1.6)
        let ceiling: Float = 0.8
        let (outLeft, outRight) = Self.limit(left, right, gain: 1.25, ceiling: ceiling)
        let (refLeft, refRight) = Self.reference(left, right, gain: 1.25, ceiling: ceiling)
        let same = outLeft == refLeft && outRight == refRight
        #expect(same, "streaming limiter differs from the reference")
        // At most the ceiling, give or take the last bit of a float product.
        let loudest = max(outLeft.map(abs).max()!, outRight.map(abs).max()!)
        #expect(loudest <= ceiling * (1 + 2 * Float.ulpOfOne), "\(loudest)")
        #expect(outLeft.contains { abs($0) > ceiling * 0.9 }, "it limits, it does not just turn down")

        let (quiet, quietRight) = burstySignal(frames: 48_000, seed: 4, peak: 0.3)
        let (untouched, _) = Self.limit(quiet, quietRight, gain: 1, ceiling: ceiling)
        let identical = untouched == quiet
        #expect(identical, "below the knee the limiter does nothing")
    }
}

@Suite struct TruePeakTests {
    /// The skip-below-the-floor true peak equals the full measurement
    /// when the peak reaches the floor, and is an upper bound otherwise;
    /// the bound on libebur128's interpolator holds for a worst-case signal.
    @Test func boundedTruePeakIsExactAboveTheFloor() throws {
        // Quiet sines with one loud burst of a near-Nyquist tone whose
        // samples miss its crests (intersample peaks well above the samples).
        var samples = [Float](repeating: 0, count: 200_000)
        for index in samples.indices { samples[index] = 0.05 * sinf(Float(index) * 0.03) }
        for index in 100_000..<100_480 { samples[index] = 0.7 * sinf(Float.pi / 2 * Float(index) + .pi / 4) }
        let (full, fullExact) = try Loudness.channelTruePeak(samples, sampleRate: 48_000, floor: 0)
        #expect(fullExact)
        let samplePeak = Double(samples.map(abs).max()!)
        #expect(full > samplePeak * 1.3, "an intersample peak about 3 dB over the samples")
        let (bounded, boundedExact) = try Loudness.channelTruePeak(samples, sampleRate: 48_000, floor: 0.5)
        #expect(bounded == full && boundedExact)
        // A floor above everything: a bound, at least the true value.
        let (bound, boundIsExact) = try Loudness.channelTruePeak(samples, sampleRate: 48_000, floor: 5)
        #expect(!boundIsExact && bound >= full && bound <= samplePeak * Loudness.interpolatorGainBound(sampleRate: 48_000))
        #expect(Loudness.interpolatorGainBound(sampleRate: 48_000) > 1 && Loudness.interpolatorGainBound(sampleRate: 192_000) == 1)
    }

    /// Two half passes joined give the single pass's loudness.
    @Test func halvesMatchTheSinglePass() throws {
        let (left, right) = burstySignal(frames: 48_000 * 30, seed: 9, peak: 0.5)
        let single = try Loudness.measure(interleaved: Array(zip(left, right).flatMap { [$0, $1] }), channels: 2, sampleRate: 48_000)
        #expect(Loudness.integratedHalves(frames: left.count, sampleRate: 48_000).count == 2)
        let joined = try Loudness.measure(left: left, right: right, sampleRate: 48_000)
        #expect(abs(joined.integratedLUFS - single.integratedLUFS) < 0.001, "\(joined.integratedLUFS) vs \(single.integratedLUFS)")
        #expect(abs(joined.truePeakDBTP - single.truePeakDBTP) < 1e-9 && joined.truePeakIsExact)
    }
}

@Suite struct TakeRenderTests {
    /// Takes (a full one and a punch-in) with the voice waiting beneath:
    /// still bit-identical for any period size.
    @Test func takesRenderIdenticallyForAnyPeriodSize() throws {
        let score = try song("amazing-grace.acasong")
        let schedule = try Schedule(score: score)
        let (audio, _) = burstySignal(frames: Int(schedule.endSample) + 20_000, seed: 5, peak: 0.5)
        var takes = score.parts.map { _ in PartTakes.none }
        takes[0] = PartTakes([TakePlayback(samples: audio, alignmentOffsetSamples: 3_000)])
        takes[2] = PartTakes([TakePlayback(samples: audio, alignmentOffsetSamples: 700, range: schedule.loopRange(measures: 2...4))])
        takes[0].layers.append(TakePlayback(samples: audio, alignmentOffsetSamples: 5, range: schedule.loopRange(measures: 5...5)))
        let mixes = score.parts.indices.map { PartMix(gain: 0.4, pan: -0.6 + 0.4 * Float($0)) }
        let reference = OfflineRender.render(schedule, mixes: mixes, takes: takes, periodFrames: 64)
        for period in [128, 1_000, 4_096, 1_777] {
            let other = OfflineRender.render(schedule, mixes: mixes, takes: takes, periodFrames: period)
            let same = other.left == reference.left && other.right == reference.right
            #expect(same, "period \(period)")
        }
    }

    /// Takes load as mono through libsndfile: stereo files averaged.
    @Test func readMonoAveragesChannels() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-mono-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let left = (0..<100_000).map { Float($0 % 200) / 400 }
        let right = left.map { -$0 / 2 }
        try AudioFile.write(left: left, right: right, sampleRate: 44_100, to: path, bits: 24)
        let (mono, rate) = try AudioFile.readMono(path)
        #expect(rate == 44_100 && mono.count == 100_000)
        let worst = zip(mono, zip(left, right)).map { abs($0 - ($1.0 + $1.1) / 2) }.max()!
        #expect(worst < 1e-6)
        #expect(throws: AudioFileError.self) { try AudioFile.readMono(path + ".missing") }
    }
}

/// The mixdown in bounded memory: its pieces fed a chunk at a time give
/// what they give fed everything at once, and the file it writes is the
/// in-memory mix's.
@Suite struct StreamedMixdownTests {
    /// The limiter fed chunks of odd sizes gives the same samples, bit for
    /// bit, as fed the whole signal (which matches the reference above).
    @Test func theLimiterInChunksIsTheLimiterAtOnce() {
        let (left, right) = burstySignal(frames: 150_000, seed: 5, peak: 1.6)
        let (whole, wholeRight) = LimiterTests.limit(left, right, gain: 1.1, ceiling: 0.8)
        var limiter = StreamingLimiter(gain: 1.1, ceiling: 0.8, sampleRate: 48_000)
        var outLeft = [Float](repeating: 0, count: left.count)
        var outRight = outLeft
        var done = 0
        var written = 0
        var size = 1
        while done < left.count {
            let count = min(size, left.count - done)
            written += left.withUnsafeBufferPointer { l in right.withUnsafeBufferPointer { r in
                outLeft.withUnsafeMutableBufferPointer { ol in outRight.withUnsafeMutableBufferPointer { or in
                    limiter.process(left: l.baseAddress! + done, right: r.baseAddress! + done, count: count, into: ol.baseAddress! + written, or.baseAddress! + written)
                } }
            } }
            done += count
            size = size * 7 % 9_973 + 1
        }
        written += outLeft.withUnsafeMutableBufferPointer { ol in outRight.withUnsafeMutableBufferPointer { or in limiter.finish(into: ol.baseAddress! + written, or.baseAddress! + written) } }
        #expect(written == left.count)
        let same = outLeft == whole && outRight == wholeRight
        #expect(same, "chunked limiter differs")
    }

    /// The meter fed chunks (4096-frame blocks split across them) gives
    /// the whole-array measurement: loudness to a thousandth, the same
    /// true peak, exact above its floor and a bound below it.
    @Test func theMeterInChunksIsTheMeasurementAtOnce() throws {
        var (left, right) = burstySignal(frames: 48_000 * 20, seed: 11, peak: 0.5)
        for index in 500_000..<500_480 { left[index] = 0.9 * sinf(Float.pi / 2 * Float(index) + .pi / 4) }
        right[700_000] = 0.95
        for floor in [-1.0, -30.0, 6.0] {
            let whole = try Loudness.measure(left: left, right: right, sampleRate: 48_000, truePeakFloorDBTP: floor)
            let meter = try LoudnessMeter(sampleRate: 48_000, frames: left.count, truePeakFloorDBTP: floor)
            var done = 0
            for size in [1_000, 65_536, 4_096, 7, 100_003].cycled(until: left.count) {
                let count = min(size, left.count - done)
                try meter.add(left: Array(left[done..<done + count]), right: Array(right[done..<done + count]), count: count)
                done += count
                if done == left.count { break }
            }
            let chunked = try meter.result()
            #expect(abs(chunked.integratedLUFS - whole.integratedLUFS) < 0.001, "\(chunked.integratedLUFS) vs \(whole.integratedLUFS)")
            #expect(chunked.truePeakDBTP == whole.truePeakDBTP && chunked.truePeakIsExact == whole.truePeakIsExact, "floor \(floor): \(chunked) vs \(whole)")
        }
    }

    /// The gating blocks' energies, kept while fed in odd chunks (one pass
    /// and two joined), gated as libebur128 gates them, give libebur128's
    /// own integrated loudness: with silence (under the absolute gate) and
    /// quiet passages (under the relative gate) in the audio.
    @Test func blockEnergiesGateToLibebur128sLoudness() throws {
        var (left, right) = burstySignal(frames: 48_000 * 30, seed: 21, peak: 0.6)
        for index in 48_000..<(48_000 * 4) { left[index] = 0; right[index] = 0 }  // silence
        for index in (48_000 * 10)..<(48_000 * 14) { left[index] *= 0.01; right[index] *= 0.01 }  // 40 dB quieter
        let single = try Loudness.measure(interleaved: Array(zip(left, right).flatMap { [$0, $1] }), channels: 2, sampleRate: 48_000)
        for share in [1.0, 0.5, 0.65] {
            let meter = try LoudnessMeter(sampleRate: 48_000, frames: left.count, truePeakFloorDBTP: nil, blockEnergies: true, firstShare: share)
            var done = 0
            for size in [1_000, 65_536, 4_800, 7, 100_003].cycled(until: left.count) {
                let count = min(size, left.count - done)
                for job in 0..<meter.loudnessJobs {
                    try meter.add(job: job, left: Array(left[done..<done + count]), right: Array(right[done..<done + count]), count: count, at: done)
                }
                done += count
                if done == left.count { break }
            }
            let blocks = meter.blockEnergies()
            #expect(blocks.count == left.count / 4_800 - 3, "one energy per block")
            let gated = Loudness.gatedLoudness(blocks)
            #expect(abs(gated - (try meter.result().integratedLUFS)) < 1e-9, "share \(share): \(gated) vs libebur128 over the same states")
            #expect(abs(gated - single.integratedLUFS) < 0.001, "share \(share): \(gated) vs \(single.integratedLUFS)")
            // Both gates at work: the silence's blocks under −70 LUFS, the quiet passage's under the relative gate.
            let absolute = Loudness.energy(ofLoudness: -70), relative = Loudness.energy(ofLoudness: single.integratedLUFS - 20)
            #expect(blocks.filter { $0 < absolute }.count >= 25 && blocks.filter { $0 >= absolute && $0 < relative }.count >= 30)
        }
    }

    /// The blocks a lowered run of samples can change: those holding it
    /// and the one starting a step after it (the filter's memory); runs
    /// joined when less than five blocks apart; shares balanced.
    @Test func theBlocksTheLimiterTouched() {
        let step = 4_800
        #expect(Mixdown.touchedBlocks([10 * step + 5..<10 * step + 6], step: step, blocks: 100) == [7..<12])
        #expect(Mixdown.touchedBlocks([0..<1, 98 * step..<99 * step], step: step, blocks: 100) == [0..<2, 95..<100])
        #expect(Mixdown.touchedBlocks([10 * step..<10 * step + 1, 18 * step..<18 * step + 1], step: step, blocks: 100) == [7..<20])
        #expect(Mixdown.touchedBlocks([10 * step..<10 * step + 1, 20 * step..<20 * step + 1], step: step, blocks: 100) == [7..<12, 17..<22])
        #expect(Mixdown.share([0..<10, 20..<24], in: 2) == [[0..<7], [7..<10, 20..<24]])
        #expect(Mixdown.share([3..<4], in: 2) == [[3..<4]])
        #expect(Mixdown.share([], in: 2).isEmpty)
    }

    /// The loudness the streamed mixdown reports — the limiter's untouched
    /// blocks from the first pass times the gain, the touched ones measured
    /// again — is libebur128's measurement of the file it wrote, with the
    /// limiter working hard in places (a loud target).
    @Test func theReportedLoudnessIsTheFilesLoudness() throws {
        let score = try song("amazing-grace.acasong")
        for target in [-16.0, -9.0] {
            var options = MixdownOptions()
            options.targetLUFS = target
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-mix-\(UUID().uuidString).wav").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let (_, reported) = try Mixdown.mix(score, options: options, to: path, bits: 24)
            let written = try AudioFile.read(path)
            let measured = try Loudness.measure(interleaved: written.samples, channels: 2, sampleRate: 48_000)
            #expect(abs(reported.integratedLUFS - measured.integratedLUFS) < 0.001, "target \(target): reported \(reported.integratedLUFS), the file \(measured.integratedLUFS)")
            #expect(abs(measured.integratedLUFS - target) <= 0.051, "target \(target): \(measured.integratedLUFS)")
        }
    }

    /// `Mixdown.mix(…to:)` writes what the in-memory mix makes: the same
    /// length, samples within a 24-bit step, the loudness on target.
    @Test func theFileIsTheInMemoryMix() throws {
        let score = try song("amazing-grace.acasong")
        let options = MixdownOptions()
        let (memory, expected) = try Mixdown.mix(score, options: options)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-mix-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (frames, measured) = try Mixdown.mix(score, options: options, to: path, bits: 24)
        let written = try AudioFile.read(path)
        #expect(frames == memory.left.count && written.samples.count == 2 * frames)
        var largest: Float = 0
        for index in 0..<frames { largest = max(largest, abs(written.samples[2 * index] - memory.left[index]), abs(written.samples[2 * index + 1] - memory.right[index])) }
        #expect(largest < 2e-4, "largest difference \(largest)")
        #expect(abs(measured.integratedLUFS - options.targetLUFS) <= 0.05 && measured.truePeakDBTP <= options.truePeakCeiling, "\(measured) vs \(expected)")
        // Nothing left beside it.
        let folder = (path as NSString).deletingLastPathComponent
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("." + (path as NSString).lastPathComponent) }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}

/// Mixes shared to a phone: AAC in MP4 (`.m4a`) through FFmpeg.
@Suite struct PhoneShareTests {
    /// The mix as a phone decodes it: aligned from its first sample (the
    /// encoder's priming samples in the edit list), close to the mix
    /// itself, its reported loudness the decoded file's — on target, the
    /// true peak under the ceiling — tagged as iTunes reads tags, and read
    /// back by the box's own reader (a reference recording from a phone).
    @Test func anM4AIsTheMixAsAPhoneDecodesIt() throws {
        let score = try song("amazing-grace.acasong")
        let options = MixdownOptions()
        let (memory, _) = try Mixdown.mix(score, options: options)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-m4a-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/mix.m4a"
        let tags = AudioTags(title: "Amazing Grace", artist: "John Newton", album: "carry", comment: "mix", date: "2026-12-05", software: "Acapella box")
        let (frames, reported) = try Mixdown.mix(score, options: options, to: path, tags: tags)
        let decoded = try AudioFile.read(path)
        #expect(decoded.channels == 2 && decoded.sampleRate == 48_000)
        let decodedFrames = decoded.samples.count / 2
        #expect(decodedFrames >= frames && decodedFrames < frames + 1_024, "\(decodedFrames) decoded of \(frames)")
        // Aligned: at lag 0 the decoded file is the mix to within the codec's noise; a file
        // that kept the encoder's 1024 priming samples would be nowhere near it.
        func snr(lag: Int) -> Double {
            var signal = 0.0, noise = 0.0
            for index in 2_048..<(min(frames, decodedFrames) - 2_048) {
                let reference = Double(memory.left[index])
                let difference = Double(decoded.samples[2 * (index + lag)]) - reference
                signal += reference * reference
                noise += difference * difference
            }
            return 10 * log10(signal / noise)
        }
        #expect(snr(lag: 0) > 25, "\(snr(lag: 0)) dB")
        #expect(snr(lag: 1_024) < 10, "\(snr(lag: 1_024)) dB")
        let measured = try Loudness.measure(interleaved: decoded.samples, channels: 2, sampleRate: 48_000)
        #expect(abs(reported.integratedLUFS - measured.integratedLUFS) < 0.01, "reported \(reported), decoded \(measured)")
        #expect(abs(measured.integratedLUFS - options.targetLUFS) <= 0.1 && measured.truePeakDBTP <= options.truePeakCeiling, "\(measured)")
        // Tagged as iTunes reads it: the M4A brand, ©nam, ©ART, ©alb, ©cmt, ©day, ©too.
        let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
        func holds(_ atom: String, _ value: String) -> Bool {
            let wanted = Array(atom.unicodeScalars.map { UInt8($0.value) }) + [0, 0, 0, UInt8(16 + value.utf8.count)] + Array("data".utf8) + [0, 0, 0, 1, 0, 0, 0, 0] + Array(value.utf8)
            return bytes.indices.dropLast(wanted.count).contains { bytes[$0..<($0 + wanted.count)].elementsEqual(wanted) }
        }
        #expect(bytes.count > 8 && Array(bytes[4..<12]) == Array("ftypM4A ".utf8))
        #expect(holds("\u{a9}nam", "Amazing Grace") && holds("\u{a9}ART", "John Newton") && holds("\u{a9}alb", "carry"))
        #expect(holds("\u{a9}cmt", "mix") && holds("\u{a9}day", "2026-12-05") && holds("\u{a9}too", "Acapella box"))
        // Nothing left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["mix.m4a"])
    }

    /// The same song mixed twice is the same file: the page's download and
    /// the stick's are one (`OneMixPathTests`).
    @Test func anM4AIsTheSameFileEveryTime() throws {
        let score = try song("row-row-row-your-boat.acasong")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-m4a-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try Mixdown.mix(score, options: MixdownOptions(), to: folder + "/a.m4a")
        _ = try Mixdown.mix(score, options: MixdownOptions(), to: folder + "/b.m4a")
        let first = FileManager.default.contents(atPath: folder + "/a.m4a")
        #expect(first != nil && first == FileManager.default.contents(atPath: folder + "/b.m4a"))
    }

    /// What is not an M4A, named as one: one line naming the file, and the
    /// reader's reason; a writer dropped unfinished leaves nothing.
    @Test func aBrokenM4AIsOneLine() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-m4a-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (name, content) in [("text.m4a", Array("not audio at all\n".utf8)), ("empty.m4a", []), ("half.m4a", Array(repeating: UInt8(0x41), count: 5_000))] {
            let path = folder + "/" + name
            _ = FileManager.default.createFile(atPath: path, contents: Data(content))
            do {
                _ = try AudioFile.read(path)
                Issue.record("\(name) was read")
            } catch {
                #expect(error.description.hasPrefix(path + ": ") && !error.description.contains("\n"), "\(error)")
            }
        }
        do {
            let writer = try AudioFileWriter(path: folder + "/dropped.m4a", sampleRate: 48_000)
            let silence = [Float](repeating: 0, count: 5_000)
            try writer.write(left: silence, right: silence, frames: silence.count)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["empty.m4a", "half.m4a", "text.m4a"])
    }
}

extension Array where Element == Int {
    /// The sizes over and over, until they add up to at least `total`.
    func cycled(until total: Int) -> [Int] {
        var result: [Int] = []
        var sum = 0
        while sum < total { for size in self { result.append(size); sum += size } }
        return result
    }
}
