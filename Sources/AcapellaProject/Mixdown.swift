public import AcapellaEngine
public import AcapellaScore
import AcapellaDSP
import Foundation
import AcapellaLock

/// How to mix a song down.
public struct MixdownOptions: Sendable {
    /// Integrated loudness target, LUFS (EBU R128).
    public var targetLUFS = -16.0
    /// True-peak ceiling, dBTP.
    public var truePeakCeiling = -1.0
    /// Include the guide tones of parts (a song alone has nothing else).
    public var includeTones = true
    /// The part brought forward in a practice track.
    public var practicePart: String?
    /// How much quieter the other parts are in a practice track, dB.
    public var practiceOthersDB: Float = -9
    /// Tempo multiplier.
    public var tempoScale = Rational(1)
    /// Transposition, semitones.
    public var transpose = 0
    /// Samples per second.
    public var sampleRate = 48_000
    /// The parts' levels, places and mutes to start from (a project's
    /// session); nil: spread evenly at the default level.
    public var baseMixes: [PartMix]?
    /// Audio tracks mixed after the parts (the reference recording), by name.
    public var audioTracks: [String] = []

    /// Defaults: −16 LUFS, −1 dBTP, tones, written tempo and pitch, 48 kHz.
    public init() {}

    /// The song compiled as these mix it: rate, tempo and key.
    public var scheduleOptions: ScheduleOptions { ScheduleOptions(sampleRate: sampleRate, tempoScale: tempoScale, transpose: transpose, audioTracks: audioTracks) }

    /// As a project was last rehearsed: the session's part levels, places,
    /// mutes and solos, its tempo and its key.
    public mutating func rehearse(_ session: SessionState, score: Score) {
        baseMixes = session.partMixes(for: score, tracks: audioTracks)
        tempoScale = session.tempoScale
        transpose = session.transpose
    }
}

/// A mixdown problem, said in one line.
public struct MixdownError: Error, CustomStringConvertible {
    /// What is wrong.
    public var description: String
}

/// Offline mixdown: the live renderer run as fast as possible, then a
/// soft-knee limiter and loudness normalization to the target with the
/// true-peak ceiling.
public enum Mixdown {
    /// Part mixes: spread across the stereo field; in a practice track the
    /// chosen part centred and the others quieter.
    public static func partMixes(for score: Score, options: MixdownOptions) throws(MixdownError) -> [PartMix] {
        let count = score.parts.count + options.audioTracks.count
        var mixes = options.baseMixes.flatMap { $0.count == count ? $0 : nil }
            ?? PartMix.defaults(parts: score.parts.count, tracks: options.audioTracks.count)
        if let practice = options.practicePart {
            guard let chosen = score.parts.firstIndex(where: { $0.name.lowercased() == practice.lowercased() }) else {
                throw MixdownError(description: "no part named '\(practice)'; the parts are: " + score.parts.map(\.name).joined(separator: ", "))
            }
            let quieter = powf(10, options.practiceOthersDB / 20)
            for index in mixes.indices where index != chosen { mixes[index].gain *= quieter }
            mixes[chosen].pan = 0
        }
        if !options.includeTones { for index in mixes.indices { mixes[index].muted = true } }
        return mixes
    }

    /// Renders and normalizes. `progress` receives 0…1 while rendering.
    /// Parts with a take play it; the others play their tones (unless tones
    /// are omitted).
    public static func mix(_ score: Score, options: MixdownOptions, takes: [PartTakes]? = nil, progress: ((Double) -> Void)? = nil) throws(MixdownError) -> (audio: OfflineRender.Stereo, loudness: LoudnessMeasurement) {
        let schedule: Schedule
        do {
            schedule = try Schedule(score: score, options: options.scheduleOptions)
        } catch {
            throw MixdownError(description: error.description)
        }
        var mixes = try partMixes(for: score, options: options)
        // Parts with takes sound even with the tones omitted (unless the session mutes them).
        for (index, take) in (takes ?? []).enumerated() where !take.layers.isEmpty && index < mixes.count && options.baseMixes?[index].muted != true { mixes[index].muted = false }
        if mixes.allSatisfy(\.muted) {
            throw MixdownError(description: "nothing to mix: the song has no takes and tones are omitted")
        }
        var stereo = OfflineRender.render(schedule, mixes: mixes, takes: takes, progress: progress)
        let loudness = try normalize(&stereo, sampleRate: options.sampleRate, targetLUFS: options.targetLUFS, ceilingDBTP: options.truePeakCeiling)
        return (stereo, loudness)
    }

    /// Gain to the loudness target, then the limiter to the true-peak
    /// ceiling; repeated until both hold (the limiter lowers loudness a
    /// little, the gain then makes it up). The limiter reads the raw mix and
    /// writes one output pair, reused on every attempt.
    /// Returns the measurement of the result.
    @discardableResult
    public static func normalize(_ stereo: inout OfflineRender.Stereo, sampleRate: Int, targetLUFS: Double, ceilingDBTP: Double) throws(MixdownError) -> LoudnessMeasurement {
        // True peaks below the ceiling need not be exact: the measurement
        // skips audio that provably stays under it.
        func measure(_ left: [Float], _ right: [Float], truePeak: Bool = true) throws(MixdownError) -> LoudnessMeasurement {
            do { return try Loudness.measure(left: left, right: right, sampleRate: sampleRate, truePeak: truePeak, truePeakFloorDBTP: ceilingDBTP) } catch {
                throw MixdownError(description: error.description)
            }
        }
        let raw = try measure(stereo.left, stereo.right, truePeak: false)
        guard raw.integratedLUFS.isFinite else { throw MixdownError(description: "the mix is silent") }
        var gainDB = targetLUFS - raw.integratedLUFS
        var ceilingDB = ceilingDBTP - 0.5  // sample-peak ceiling, below the true-peak one
        // The limiter writes every sample: no need to zero them first.
        var left = [Float](unsafeUninitializedCapacity: stereo.left.count) { $1 = $0.count }
        var right = [Float](unsafeUninitializedCapacity: stereo.right.count) { $1 = $0.count }
        for _ in 0..<8 {
            let gain = Float(pow(10, gainDB / 20))
            let ceiling = Float(pow(10, ceilingDB / 20))
            stereo.left.withUnsafeBufferPointer { inLeft in stereo.right.withUnsafeBufferPointer { inRight in
                left.withUnsafeMutableBufferPointer { outLeft in right.withUnsafeMutableBufferPointer { outRight in
                    Limiter.process(left: inLeft, right: inRight, gain: gain, into: outLeft, outRight, ceiling: ceiling, sampleRate: sampleRate)
                } }
            } }
            let result = try measure(left, right)
            let loudnessOK = abs(result.integratedLUFS - targetLUFS) <= 0.05
            let peakOK = result.truePeakDBTP <= ceilingDBTP
            if loudnessOK && peakOK {
                stereo.left = left
                stereo.right = right
                return result
            }
            gainDB += targetLUFS - result.integratedLUFS
            if !peakOK { ceilingDB -= result.truePeakDBTP - ceilingDBTP + 0.05 }
        }
        throw MixdownError(description: "could not reach \(targetLUFS) LUFS under \(ceilingDBTP) dBTP; the material is too dense for that target")
    }
}

extension Mixdown {
    /// Frames handled at a time by `mix(_:options:takes:to:…)`.
    static let chunkFrames = 65_536

    /// Renders, normalizes and writes `path` in bounded memory — a few
    /// chunks of 65,536 frames, whatever the song's length — in two passes
    /// over two cores: the render, its loudness measured beside it and the
    /// raw mix kept in a temporary file next to `path`; then that file read
    /// back through the gain and the limiter, measured (loudness and true
    /// peak) beside the encoding. When the result misses the target (the
    /// limiter took away loudness, or a true peak is over the ceiling) the
    /// second pass runs again with the gain or ceiling corrected, as
    /// `normalize` does. The file appears under its name only when done.
    /// Streamed takes are read by a butler serviced between periods.
    /// The two temporary files go in `scratch` (nil: beside `path`; a USB
    /// stick's export keeps them on the box's own disk).
    /// Returns the frames written and the measurement of the result.
    public static func mix(
        _ score: Score, options: MixdownOptions, takes: [PartTakes]? = nil, to path: String, bits: Int = 16, tags: AudioTags = AudioTags(),
        scratch: String? = nil, progress: ((Double) -> Void)? = nil
    ) throws(MixdownError) -> (frames: Int, loudness: LoudnessMeasurement) {
        let schedule: Schedule
        do { schedule = try Schedule(score: score, options: options.scheduleOptions) } catch { throw MixdownError(description: error.description) }
        var mixes = try partMixes(for: score, options: options)
        for (index, take) in (takes ?? []).enumerated() where !take.layers.isEmpty && index < mixes.count && options.baseMixes?[index].muted != true { mixes[index].muted = false }
        if mixes.allSatisfy(\.muted) { throw MixdownError(description: "nothing to mix: the song has no takes and tones are omitted") }
        let rate = options.sampleRate
        let directory = scratch ?? (path as NSString).deletingLastPathComponent
        let hidden = (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent)"
        let rawFile = try ChunkFile(path: hidden + ".raw")

        // Pass 1: render into the raw file; each half's loudness measured by
        // a reader following the file (the render never waits for them).
        let rawMeter: OnOneQueue<LoudnessMeter>
        do { rawMeter = OnOneQueue(try LoudnessMeter(sampleRate: rate, frames: OfflineRender.frameCount(schedule), truePeakFloorDBTP: nil, blockEnergies: true,
                                                      firstShare: 0.65)) } catch {
            throw MixdownError(description: error.description)
        }
        for job in 0..<rawMeter.value.loudnessJobs {
            rawFile.follow(from: rawMeter.value.firstFrame(ofJob: job)) { chunk, position in try rawMeter.value.add(job: job, chunk, at: position) }
        }
        var chunk = Stereo(capacity: chunkFrames)
        let butler = takes.map { takes -> TakeStreamButler? in
            takes.contains { $0.layers.contains { $0.stream != nil } } ? TakeStreamButler(cue: StreamCue()) : nil
        } ?? nil
        let total = OfflineRender.frameCount(schedule)
        var done = 0
        var offset = DCWatch(sampleRate: rate)
        do {
            defer { rawFile.finishWriting() }
            try OfflineRender.stream(schedule, mixes: mixes, takes: takes, periodFrames: 1_024, butler: butler, progress: progress.map { report in { report($0 / 2) } }) {
                (left, right, frames) throws(MixdownError) in
                chunk.append(left, right, frames)
                offset.add(left, right, frames)
                done += frames
                if chunk.count == chunkFrames || done == total {
                    try rawFile.append(chunk)
                    chunk.count = 0
                }
            }
        }
        try rawFile.waitForReaders()
        let measured: LoudnessMeasurement
        do { measured = try rawMeter.value.result() } catch { throw MixdownError(description: error.description) }
        guard measured.integratedLUFS.isFinite else { throw MixdownError(description: "the mix is silent") }
        let rawBlocks = rawMeter.value.blockEnergies()

        // Pass 2: gain, limiter, measure and encode; again if the target is missed.
        var gainDB = options.targetLUFS - measured.integratedLUFS
        var ceilingDB = options.truePeakCeiling - 0.5  // sample-peak ceiling, below the true-peak one
        // A lossy file (MP3, Vorbis, Opus, AAC) is measured as a player decodes it: the encoding
        // moves the loudness a little and the true peak more; the pass runs again for either.
        let lossy = AudioFileFormat(path: path).map { $0 != .wav && $0 != .flac } ?? false
        // How far the encoding moved the loudness, last time it was decoded (the next pass aims past it).
        var encodingShift = 0.0
        // The ceiling is hard; the loudness is the aim. A pass over the
        // ceiling lowers the limiter's ceiling and the gain makes up the
        // loudness again; over a second time (an encoder whose overshoot
        // grows as the limiter works harder), the gain only comes down from
        // then on. Every pass under the ceiling is a candidate, and when the
        // passes do not land on the target the one nearest it under the
        // ceiling stands (never a file over the ceiling).
        var best: (gainDB: Double, ceilingDB: Double, loudness: Double)?
        var overs = 0
        // A DC offset in the mix (a take with one, or damaged) is taken out before the gain: loudness
        // cannot hear it, so it would be raised to the ceiling, and an encoder rebuilds its edges over it.
        let blockDC = offset.largest > DCWatch.limit
        func pass(gainDB: Double, ceilingDB: Double) throws(MixdownError) -> (writer: AudioFileWriter, measurement: LoudnessMeasurement) {
            try limitAndWrite(rawFile, blocks: rawBlocks, limited: hidden + ".limited", frames: total, rate: rate, gain: Float(pow(10, gainDB / 20)),
                              ceiling: Float(pow(10, ceilingDB / 20)), ceilingDBTP: options.truePeakCeiling, to: path, bits: bits, tags: tags, blockDC: blockDC,
                              progress: progress)
        }
        /// The pass kept: finished, and measured as a player decodes it when lossy.
        func keep(_ result: (writer: AudioFileWriter, measurement: LoudnessMeasurement)) throws(MixdownError) -> LoudnessMeasurement {
            do { try result.writer.finish() } catch { throw MixdownError(description: error.description) }
            guard lossy else { return result.measurement }
            do { return try AudioFile.decodedLoudness(path, frames: total, sampleRate: rate, truePeakFloorDBTP: options.truePeakCeiling) } catch {
                throw MixdownError(description: error.description)
            }
        }
        let tolerance = lossy ? 0.1 : 0.05
        for _ in 0..<8 {
            let result = try pass(gainDB: gainDB, ceilingDB: ceilingDB)
            var measurement = result.measurement
            var peakOK = measurement.truePeakDBTP <= options.truePeakCeiling
            var change = options.targetLUFS - (measurement.integratedLUFS + encodingShift)
            if peakOK {
                // Under the ceiling before encoding: kept and measured as it decodes (a candidate either way).
                let encoded = measurement.integratedLUFS
                measurement = try keep(result)
                if lossy { encodingShift = measurement.integratedLUFS - encoded }
                peakOK = measurement.truePeakDBTP <= options.truePeakCeiling
                change = options.targetLUFS - measurement.integratedLUFS
                if peakOK {
                    if abs(change) <= tolerance { return (total, measurement) }
                    if best.map({ abs(change) < abs(options.targetLUFS - $0.loudness) }) ?? true { best = (gainDB, ceilingDB, measurement.integratedLUFS) }
                    // Too quiet with the gain held: as loud as it comes under the ceiling (this pass, when it is the nearest).
                    if overs >= 2 && change > 0 {
                        if best?.gainDB == gainDB && best?.ceilingDB == ceilingDB { return (total, measurement) }
                        break
                    }
                }
            }
            if !peakOK {
                // Over: the limiter's ceiling comes down by as much (the encoder's overshoot with it); over again, the gain too.
                let over = measurement.truePeakDBTP - options.truePeakCeiling + 0.05
                overs += 1
                ceilingDB -= over
                if overs >= 2 { gainDB -= over }
            }
            gainDB += overs >= 2 ? min(0, change) : change
        }
        // The pass nearest the target under the ceiling, written again (the same bytes: every pass is a function of its gain and ceiling).
        if let best {
            let measurement = try keep(try pass(gainDB: best.gainDB, ceilingDB: best.ceilingDB))
            if measurement.truePeakDBTP <= options.truePeakCeiling { return (total, measurement) }
        }
        unlink(path)
        throw MixdownError(description: "could not reach \(options.targetLUFS) LUFS under \(options.truePeakCeiling) dBTP, nor keep under that ceiling at all; the material is too dense for that target")
    }

    /// One second pass: the raw mix read back a chunk at a time, through
    /// the gain and the limiter into `limited` (a temporary file); the true
    /// peaks and the encoding each on a thread of their own. The loudness
    /// of the result is measured where the limiter changed the audio:
    /// every other sample is the raw one times the gain, so a gating block
    /// the limiter left alone (and the 100 ms before it, where the
    /// K-weighting filter's memory reaches) has the raw block's energy
    /// (`blocks`, from the first pass) times the gain squared; the blocks
    /// it touched are read back and measured by libebur128, on two threads
    /// while the encoding goes on, and all are gated together. The writer
    /// is returned unfinished (finish it to keep it).
    private static func limitAndWrite(
        _ raw: ChunkFile, blocks rawBlocks: [Double], limited path: String, frames: Int, rate: Int, gain: Float, ceiling: Float, ceilingDBTP: Double, to output: String,
        bits: Int, tags: AudioTags, blockDC: Bool = false, progress: ((Double) -> Void)?
    ) throws(MixdownError) -> (writer: AudioFileWriter, measurement: LoudnessMeasurement) {
        let writer: OnOneQueue<AudioFileWriter>
        let peaks: OnOneQueue<LoudnessMeter>
        do {
            writer = OnOneQueue(try AudioFileWriter(path: output, sampleRate: rate, bits: bits, tags: tags))
            peaks = OnOneQueue(try LoudnessMeter(sampleRate: rate, frames: frames, truePeakFloorDBTP: ceilingDBTP, loudness: false))
        } catch {
            throw MixdownError(description: "\(error)")
        }
        let limitedFile = try ChunkFile(path: path)
        let pipeline = ChunkPipeline(jobs: 2) { job, out, position in
            if job == 0 {
                try peaks.value.add(job: 0, out, at: position)
            } else {
                try out.left.withUnsafeBufferPointer { (left) throws in
                    try out.right.withUnsafeBufferPointer { (right) throws in try writer.value.write(left: left.baseAddress!, right: right.baseAddress!, frames: out.count) }
                }
            }
        }
        var limiter = StreamingLimiter(gain: gain, ceiling: ceiling, sampleRate: rate)
        var blockers = (DCBlocker(sampleRate: rate), DCBlocker(sampleRate: rate))
        var written = 0
        do {
            defer { limitedFile.finishWriting() }
            for index in 0..<raw.count {
                var chunk = try raw.read(index)
                if blockDC {
                    blockers.0.process(&chunk.left, count: chunk.count)
                    blockers.1.process(&chunk.right, count: chunk.count)
                }
                var out = Stereo(capacity: chunk.count + limiter.latency)
                out.count = chunk.left.withUnsafeBufferPointer { left in
                    chunk.right.withUnsafeBufferPointer { right in
                        out.left.withUnsafeMutableBufferPointer { outLeft in
                            out.right.withUnsafeMutableBufferPointer { outRight in
                                limiter.process(left: left.baseAddress!, right: right.baseAddress!, count: chunk.count, into: outLeft.baseAddress!, outRight.baseAddress!)
                            }
                        }
                    }
                }
                if index == raw.count - 1 {
                    out.count += out.left.withUnsafeMutableBufferPointer { outLeft in
                        out.right.withUnsafeMutableBufferPointer { outRight in limiter.finish(into: outLeft.baseAddress! + out.count, outRight.baseAddress! + out.count) }
                    }
                }
                if out.count > 0 {
                    try limitedFile.append(out)
                    pipeline.handOver(out, at: written)
                    written += out.count
                }
                progress?(0.5 + 0.5 * Double(index + 1) / Double(max(raw.count, 1)))
            }
        }
        // The blocks the limiter touched, measured again (the encoding goes on meanwhile); all of them
        // when the DC was taken out (the raw blocks' energies no longer hold).
        let step = Loudness.blockStep(sampleRate: rate)
        let work = share(touchedBlocks(blockDC ? [0..<written] : limiter.lowered, step: step, blocks: rawBlocks.count), in: 2)
        let remeasured = VisibleLock<[(first: Int, energies: [Double])]>([])
        let failure = VisibleLock<String?>(nil)
        DispatchQueue.concurrentPerform(iterations: work.count) { part in
            for run in work[part] {
                do {
                    let energies = try limitedFile.blockEnergies(run, step: step, sampleRate: rate)
                    remeasured.withLock { $0.append((run.lowerBound, energies)) }
                } catch {
                    failure.withLock { $0 = $0 ?? "\(error)" }
                }
            }
        }
        try pipeline.finish()
        if let problem = failure.withLock({ $0 }) { throw MixdownError(description: problem) }
        let squared = Double(gain) * Double(gain)
        var blocks = rawBlocks.map { $0 * squared }
        for (first, energies) in remeasured.withLock({ $0 }) { blocks.replaceSubrange(first..<(first + energies.count), with: energies) }
        do {
            var measurement = try peaks.value.result()
            measurement.integratedLUFS = Loudness.gatedLoudness(blocks)
            return (writer.value, measurement)
        } catch {
            throw MixdownError(description: error.description)
        }
    }

    /// The gating blocks (step-long steps; block `i` spans steps `i`…`i`+3)
    /// whose energy samples in `lowered` can change: those holding one, and
    /// those starting within a step after one (the K-weighting filter's
    /// memory, which dies away within a few ms). Runs of blocks, in order,
    /// runs less than five blocks apart joined (a run measured on its own
    /// needs a step before it to warm the filter).
    static func touchedBlocks(_ lowered: [Range<Int>], step: Int, blocks: Int) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        for samples in lowered where !samples.isEmpty {
            let first = max(0, samples.lowerBound / step - 3)
            let last = min(blocks - 1, (samples.upperBound - 1) / step + 1)
            guard first <= last else { continue }
            if let previous = runs.last, first < previous.upperBound + 5 {
                runs[runs.count - 1] = previous.lowerBound..<max(previous.upperBound, last + 1)
            } else {
                runs.append(first..<(last + 1))
            }
        }
        return runs
    }

    /// `runs` of blocks shared out in `parts` lists of about the same
    /// number of blocks (a run cut where a share is full), in order.
    static func share(_ runs: [Range<Int>], in parts: Int) -> [[Range<Int>]] {
        let total = runs.reduce(0) { $0 + $1.count }
        var shares: [[Range<Int>]] = Array(repeating: [], count: parts)
        var part = 0
        var filled = 0
        for whole in runs {
            var run = whole
            while !run.isEmpty {
                let room = (total * (part + 1) + parts - 1) / parts - filled
                let taken = part == parts - 1 ? run.count : min(run.count, room)
                guard taken > 0 else {
                    part += 1
                    continue
                }
                shares[part].append(run.lowerBound..<(run.lowerBound + taken))
                filled += taken
                run = (run.lowerBound + taken)..<run.upperBound
            }
        }
        return shares.filter { !$0.isEmpty }
    }

    /// The largest mean (DC) of the mix over any 400 ms, either channel.
    struct DCWatch {
        /// A mean above −40 dBFS is an offset to take out.
        static let limit = 0.01
        let window: Int
        var sums = (0.0, 0.0)
        var filled = 0
        var largest = 0.0

        init(sampleRate: Int) { window = max(1, sampleRate * 2 / 5) }

        mutating func add(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, _ frames: Int) {
            for frame in 0..<frames {
                sums.0 += Double(left[frame])
                sums.1 += Double(right[frame])
                filled += 1
                if filled == window {
                    largest = max(largest, abs(sums.0) / Double(window), abs(sums.1) / Double(window))
                    sums = (0, 0)
                    filled = 0
                }
            }
        }
    }

    /// A DC blocker: a one-pole high-pass at 5 Hz (y = x − x₋₁ + R·y₋₁),
    /// far below any sung note, run through the whole mix in order.
    struct DCBlocker {
        let pole: Float
        var last: (input: Float, output: Float) = (0, 0)

        init(sampleRate: Int) { pole = Float(1 - 2 * Double.pi * 5 / Double(sampleRate)) }

        mutating func process(_ samples: inout [Float], count: Int) {
            for index in 0..<count {
                let output = samples[index] - last.input + pole * last.output
                last = (samples[index], output)
                samples[index] = output
            }
        }
    }

    /// A temporary file of chunks (each chunk's left samples, then its
    /// right) appended by one thread while readers follow behind it: each
    /// reader is handed every chunk from a given frame on, in order, as
    /// soon as it is written. A job that needs every chunk never holds the
    /// writer back, and what it has not read yet waits in the file, not in
    /// memory. It has no name once opened (its space is freed when closed).
    final class ChunkFile: @unchecked Sendable {
        // @unchecked: `chunks` and `closed` are guarded by `state`.
        let path: String
        private let descriptor: Int32
        private let state = NSCondition()
        private var chunks: [(frame: Int, count: Int)] = []
        private var closed = false
        private let failure = VisibleLock<String?>(nil)
        private let readers = DispatchGroup()

        init(path: String) throws(MixdownError) {
            self.path = path
            descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw MixdownError(description: "\(path): cannot write the mix's temporary file (\(String(cString: strerror(errno))))") }
            // Nameless from the start: used through the descriptor only, so
            // nothing is left behind by a failure, a kill or a crash.
            unlink(path)
        }

        // Closing frees the file's space, which takes the kernel a while
        // for a long mix: not on the way out of the mixdown.
        deinit { DispatchQueue.global(qos: .utility).async { [descriptor] in close(descriptor) } }

        /// The chunks written.
        var count: Int {
            state.lock()
            defer { state.unlock() }
            return chunks.count
        }

        /// Appends a chunk (from one thread).
        func append(_ chunk: Stereo) throws(MixdownError) {
            state.lock()
            let frame = chunks.last.map { $0.frame + $0.count } ?? 0
            state.unlock()
            let bytes = chunk.count * 4
            let wrote = chunk.left.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, bytes, off_t(frame * 8)) } == bytes
                && chunk.right.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, bytes, off_t(frame * 8 + bytes)) } == bytes
            guard wrote else { throw MixdownError(description: "\(path): the disk refused the mix's temporary file (full?)") }
            state.lock()
            chunks.append((frame, chunk.count))
            state.broadcast()
            state.unlock()
        }

        /// No more chunks: the readers end after the last.
        func finishWriting() {
            state.lock()
            closed = true
            state.broadcast()
            state.unlock()
        }

        /// Chunk `index`, read back.
        func read(_ index: Int) throws(MixdownError) -> Stereo {
            state.lock()
            let (frame, count) = chunks[index]
            state.unlock()
            var chunk = Stereo(capacity: count)
            try read(frame..<(frame + count), into: &chunk)
            return chunk
        }

        /// The energies of gating blocks `blocks` (see `BlockMeter`) of the
        /// audio written, read back 65,536 frames at a time from a step
        /// before the first (the filter warmed there, as in one pass).
        func blockEnergies(_ blocks: Range<Int>, step: Int, sampleRate: Int) throws(MixdownError) -> [Double] {
            let first = max(0, blocks.lowerBound - 1) * step
            let end = (blocks.upperBound + 3) * step
            do {
                let meter = try BlockMeter(sampleRate: sampleRate, from: first, keepingBlocksFrom: blocks.lowerBound)
                var frame = first
                var piece = Stereo(capacity: Mixdown.chunkFrames)
                while frame < end {
                    try read(frame..<min(end, frame + Mixdown.chunkFrames), into: &piece)
                    try piece.left.withUnsafeBufferPointer { (left) throws(LoudnessError) in
                        try piece.right.withUnsafeBufferPointer { (right) throws(LoudnessError) in try meter.add(left: left.baseAddress!, right: right.baseAddress!, count: piece.count) }
                    }
                    frame += piece.count
                }
                return meter.energies
            } catch let error as MixdownError {
                throw error
            } catch {
                throw MixdownError(description: "\(error)")
            }
        }

        /// Frames `range` of the audio written into `piece` (which has room).
        func read(_ range: Range<Int>, into piece: inout Stereo) throws(MixdownError) {
            state.lock()
            let layout = chunks
            state.unlock()
            piece.count = 0
            for (frame, count) in layout where frame < range.upperBound && frame + count > range.lowerBound {
                let from = max(frame, range.lowerBound)
                let length = min(frame + count, range.upperBound) - from
                let bytes = length * 4
                let offset = piece.count
                // A chunk holds its left channel, then its right.
                let leftAt = off_t(frame * 8 + (from - frame) * 4)
                let rightAt = leftAt + off_t(count * 4)
                let gotLeft: Int = piece.left.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + offset * 4, bytes, leftAt) }
                let gotRight: Int = piece.right.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + offset * 4, bytes, rightAt) }
                guard gotLeft == bytes && gotRight == bytes else { throw MixdownError(description: "\(path): the mix could not be read back") }
                piece.count += length
            }
            guard piece.count == range.count else { throw MixdownError(description: "\(path): the mix could not be read back (frames \(range) not written)") }
        }

        /// `body` on a thread of its own for every chunk holding frames at
        /// or after `first`, in order, with the chunk's first frame.
        func follow(from first: Int, _ body: @escaping @Sendable (Stereo, Int) throws -> Void) {
            DispatchQueue(label: "acapella-mix-reader").async(group: readers) { [self] in
                var index = 0
                while true {
                    state.lock()
                    while index >= chunks.count && !closed { state.wait() }
                    let next = index < chunks.count ? chunks[index] : nil
                    state.unlock()
                    guard let next else { return }
                    defer { index += 1 }
                    guard next.frame + next.count > first else { continue }
                    do { try body(try read(index), next.frame) } catch {
                        failure.withLock { $0 = $0 ?? "\(error)" }
                        return
                    }
                }
            }
        }

        /// Waits for the readers (call after `finishWriting`); throws the first failure.
        func waitForReaders() throws(MixdownError) {
            readers.wait()
            if let problem = failure.withLock({ $0 }) { throw MixdownError(description: problem) }
        }
    }

    /// Chunks handed to jobs that each run on a serial queue of their own
    /// (so each job sees the chunks in order, and the jobs run at once on
    /// the cores there are), at most three chunks in flight; the first
    /// failure is kept.
    final class ChunkPipeline: Sendable {
        private let queues: [DispatchQueue]
        private let done = DispatchQueue(label: "acapella-mix-chunk-done")
        private let inFlight = DispatchSemaphore(value: depth)
        private let failure = VisibleLock<String?>(nil)
        private let work: @Sendable (Int, Stereo, Int) throws -> Void
        private static let depth = 3

        init(jobs: Int, work: @escaping @Sendable (_ job: Int, _ chunk: Stereo, _ position: Int) throws -> Void) {
            queues = (0..<jobs).map { DispatchQueue(label: "acapella-mix-job-\($0)") }
            self.work = work
        }

        /// Every job of `chunk`, whose first frame is `position`, queued
        /// (waits while three chunks are in flight).
        func handOver(_ chunk: Stereo, at position: Int) {
            inFlight.wait()
            let group = DispatchGroup()
            for (job, queue) in queues.enumerated() {
                queue.async(group: group) { [self] in
                    do { try work(job, chunk, position) } catch { failure.withLock { $0 = $0 ?? "\(error)" } }
                }
            }
            group.notify(queue: done) { [inFlight] in inFlight.signal() }
        }

        /// Waits for every chunk's jobs; throws the first failure.
        func finish() throws(MixdownError) {
            for _ in 0..<Self.depth { inFlight.wait() }
            for _ in 0..<Self.depth { inFlight.signal() }
            if let problem = failure.withLock({ $0 }) { throw MixdownError(description: problem) }
        }
    }

    /// A value used by one serial queue at a time (a meter, a file writer),
    /// handed to it by the queue's ordering.
    struct OnOneQueue<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// A stereo chunk: two channel arrays, `count` frames of them in use.
    struct Stereo: @unchecked Sendable {
        var left: [Float]
        var right: [Float]
        var count = 0

        init(capacity: Int) {
            left = [Float](repeating: 0, count: capacity)
            right = [Float](repeating: 0, count: capacity)
        }

        mutating func append(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>, _ frames: Int) {
            for index in 0..<frames {
                left[count + index] = l[index]
                right[count + index] = r[index]
            }
            count += frames
        }
    }
}

extension LoudnessMeter {
    /// Job `job`'s share of a chunk whose first frame is `position`.
    func add(job: Int, _ chunk: Mixdown.Stereo, at position: Int) throws(LoudnessError) {
        try chunk.left.withUnsafeBufferPointer { (left) throws(LoudnessError) in
            try chunk.right.withUnsafeBufferPointer { (right) throws(LoudnessError) in
                try add(job: job, left: left.baseAddress!, right: right.baseAddress!, count: chunk.count, at: position)
            }
        }
    }
}
