public import AcapellaEngine
import AcapellaScore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A practice room without a sound card: the box's playback comes back
/// into the microphone after a round trip of any length (whole and
/// fractional frames, by a windowed-sinc fractional delay), with the
/// room's singer and a little noise. Paced in real time (the live box) or
/// free-running (tests); faults injected on purpose: xruns and device loss.
public final class SimulatedRoom: AudioDevice {
    /// How the room keeps time.
    public enum Pacing: Sendable, Hashable {
        /// As fast as the callback allows.
        case freeRunning
        /// Like a sound card, `speed` times real time (1 = real time).
        case realTime(speed: Double)
    }

    /// Room settings.
    public struct Options: Sendable, Hashable {
        /// Samples per second.
        public var sampleRate = 48_000
        /// Frames per period.
        public var periodFrames = 128
        /// Round trip, frames (at least a period plus 8).
        public var latencyFrames = 317.4
        /// What the room reports as its round trip (nil: the truth), so a
        /// calibration has something to correct.
        public var reportedLatencyFrames: Double?
        /// How loud the playback is at the microphone.
        public var bleed: Float = 0.5
        /// Noise at the microphone (amplitude).
        public var noise: Float = 0.000_5
        /// Pacing.
        public var pacing = Pacing.freeRunning
        /// Injected xruns: period index (counted from the room's first
        /// period, across runs) → frames lost in both directions.
        public var xruns: [Int: Int] = [:]
        /// At real time (speed 1 or slower): the room's buffer, frames. A
        /// period that comes later than this (a stalled box, `SIGSTOP`, a
        /// loaded CPU) is an xrun, as on a card: the frames the room's clock
        /// ran on meanwhile are lost both ways.
        public var bufferFrames: Int?
        /// Capture and playback started apart at each (re)start, as an
        /// unlinked pair of streams is: by a few frames either way, drawn
        /// from the seed. The room reports each skew (as a card's trigger
        /// timestamps do) unless `skewUnknown`.
        public var unlinked = false
        /// With `unlinked`: the room cannot say by how much (a card without
        /// timestamps).
        public var skewUnknown = false
        /// Injected device loss at this period.
        public var loseDeviceAtPeriod: Int?
        /// Seed for the noise.
        public var seed: UInt64 = 1
        /// At real time, lock the process's memory as the card path does
        /// (`mlockall`): the box's room does (`--device sim…`), a test's not.
        public var lockMemory = false
        /// Microphones, one a singer (a quartet: 4); each is an input.
        public var inputs = 1
        /// Whether a recording set may give the room more microphones
        /// (up to `growableInputs`): a room not given its number (`sim`,
        /// not `sim:inputs=2`), as `DeviceChoice.capturing` opens it.
        public var growable = false
        /// Its microphones were given (`sim:inputs=1` too): it is never grown.
        public var inputsGiven = false
        /// The most microphones a growable room is given: an octet.
        public static let growableInputs = 8
        /// How loud singer s is at microphone c (`crosstalk[c][s]`; the
        /// diagonal is each singer at their own microphone). Nil: 1 on the
        /// diagonal, `crosstalkGain` elsewhere.
        public var crosstalk: [[Float]]?
        /// The other singers at a microphone, when `crosstalk` is nil.
        public var crosstalkGain: Float = 0
        /// How much later singer s reaches microphone c than their own
        /// (`crosstalkDelays[c][s]`, frames: the path across the room, a
        /// metre a 140 at 48 kHz). Nil: every path as long as the singer's own.
        public var crosstalkDelays: [[Int]]?

        /// How much later singer `singer` reaches microphone `microphone` than their own, frames.
        public func delay(singer: Int, microphone: Int) -> Int {
            guard let crosstalkDelays, microphone < crosstalkDelays.count, singer < crosstalkDelays[microphone].count else { return 0 }
            return max(0, crosstalkDelays[microphone][singer])
        }

        /// How loud singer `singer` is at microphone `microphone`.
        public func gain(singer: Int, microphone: Int) -> Float {
            if let crosstalk, microphone < crosstalk.count, singer < crosstalk[microphone].count { return crosstalk[microphone][singer] }
            return singer == microphone ? 1 : crosstalkGain
        }

        /// Defaults: 48 kHz, 128-frame periods, 317.4-frame round trip, free-running.
        public init() {}

        /// The room at real time (`sim:speed=1`): the demo in a terminal without a card.
        public static var realTime: Options {
            var options = Options()
            options.pacing = .realTime(speed: 1)
            return options
        }

        /// Whether the room waits for the box's consumers (see `backpressure`).
        public var waitsForConsumers: Bool {
            switch pacing {
            case .freeRunning: true
            case .realTime(let speed): speed > 1
            }
        }

        /// Parses `sim` or `sim:latency=317.4,period=128,speed=1,bleed=0.5` (a `--device` value).
        public init(parsing text: String) throws(DeviceError) {
            lockMemory = true
            guard text == "sim" || text.hasPrefix("sim:") else { throw DeviceError(.configuration, "unknown device '\(text)'; use sim or sim:latency=FRAMES,period=FRAMES,speed=X") }
            for item in text.dropFirst(4).split(separator: ",") where !item.isEmpty {
                let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2, let value = Double(pair[1]), value.isFinite else {
                    throw DeviceError(.configuration, "device option '\(item)' is not NAME=NUMBER")
                }
                // Each value within what a room can be, checked before it is
                // converted (a huge number must never trap).
                func within(_ range: ClosedRange<Double>, _ what: String) throws(DeviceError) -> Double {
                    guard range.contains(value) else { throw DeviceError(.configuration, "device option '\(item)': \(what)") }
                    return value
                }
                switch pair[0] {
                case "latency": latencyFrames = try within(1...192_000, "the round trip is from 1 to 192000 frames")
                case "reported": reportedLatencyFrames = try within(0...192_000, "the reported round trip is from 0 to 192000 frames")
                case "period": periodFrames = Int(try within(16...8_192, "a period is from 16 to 8192 frames"))
                case "rate": sampleRate = Int(try within(8_000...192_000, "the rate is from 8000 to 192000 Hz"))
                case "bleed": bleed = Float(try within(0...4, "bleed is a gain from 0 to 4"))
                case "noise": noise = Float(try within(0...1, "noise is an amplitude from 0 to 1"))
                case "lose": loseDeviceAtPeriod = Int(try within(1...100_000_000, "lose is the period the room goes away at (tests)"))
                case "lock": lockMemory = try within(0...1, "lock is 1 (memory locked at real time, the default) or 0") == 1
                case "inputs":
                    inputs = Int(try within(1...32, "inputs is from 1 to 32 microphones"))
                    inputsGiven = true
                case "crosstalk": crosstalkGain = Float(try within(0...1, "crosstalk is a gain from 0 to 1 (the other singers at each microphone)"))
                case "buffer": bufferFrames = Int(try within(32...65_536, "the buffer is from 32 to 65536 frames"))
                case "unlinked":
                    let mode = try within(0...2, "unlinked is 0 (linked), 1 (started apart, skew reported) or 2 (started apart, skew unknown)")
                    unlinked = mode >= 1
                    skewUnknown = mode == 2
                case "speed":
                    guard value == 0 || (0.01...1_000).contains(value) else {
                        throw DeviceError(.configuration, "device option '\(item)': speed is 0 (as fast as possible) or from 0.01 to 1000 times real time")
                    }
                    pacing = value > 0 ? .realTime(speed: value) : .freeRunning
                default: throw DeviceError(.configuration, "unknown device option '\(pair[0])'; known: latency, reported, period, rate, bleed, noise, speed, lose, lock, buffer, unlinked, inputs, crosstalk")
                }
                if value != value.rounded() && ["period", "rate", "lose", "lock", "buffer", "unlinked", "inputs"].contains(pair[0]) {
                    throw DeviceError(.configuration, "device option '\(item)': a whole number, please")
                }
            }
            guard (16...8_192).contains(periodFrames) else { throw DeviceError(.configuration, "period \(periodFrames) frames is outside 16…8192") }
            guard (8_000...192_000).contains(sampleRate) else { throw DeviceError(.configuration, "rate \(sampleRate) Hz is outside 8000…192000") }
            if let bufferFrames, bufferFrames < 2 * periodFrames {
                throw DeviceError(.configuration, "a buffer of \(bufferFrames) frames is shorter than two \(periodFrames)-frame periods")
            }
        }

        /// The buffer a stall has to outlast to be an xrun (three periods unless set).
        public var effectiveBufferFrames: Int { bufferFrames ?? 3 * periodFrames }
    }

    /// The settings.
    public let options: Options
    public var sampleRate: Int { options.sampleRate }
    public var periodFrames: Int { options.periodFrames }
    public var inputCount: Int { options.inputs }
    public var mostInputs: Int { options.growable ? max(options.inputs, Options.growableInputs) : options.inputs }
    public var roundTripFrames: Double { reportedRoundTripFrames + calibrationTrimFrames }
    public var reportedRoundTripFrames: Double { options.reportedLatencyFrames ?? options.latencyFrames }
    public var calibrationTrimFrames = 0.0
    public var route: String { "sim:latency=\(options.latencyFrames),reported=\(reportedRoundTripFrames),rate=\(options.sampleRate),period=\(options.periodFrames)" }
    public var name: String {
        let pace: String
        switch options.pacing {
        case .freeRunning: pace = "free-running"
        case .realTime(let speed): pace = speed == 1 ? "real time" : "\(speed)× real time"
        }
        return "simulated room (\(options.latencyFrames)-frame round trip, \(options.periodFrames)-frame periods, \(pace))"
    }

    /// Free-running or faster than real time: asked before each period
    /// whether the rest of the box has caught up (a recorder's ring not too
    /// full); the room waits until it has. A clock sped up for a test would
    /// otherwise make a busy machine's disk writer look too slow (at 24× a
    /// 4-second ring is gone in 170 ms). Real time and slower never wait
    /// for anyone, like a sound card.
    public var backpressure: (@Sendable () -> Bool)?

    /// Real time only: whether the room's thread got SCHED_FIFO, as a card's
    /// would (at speed 1 or slower).
    public private(set) var realTimeScheduled = false
    /// Whether its memory was locked (`mlockall`) as the card path's is.
    public private(set) var memoryLocked = false
    /// Real time only: periods finished more than a period after their
    /// deadline (an xrun on a card with two periods of buffer), so far.
    public var latePeriods: Int { late.load(ordering: .relaxed) }
    private let late = Atomic<Int>(0)
    /// Xruns so far: injected ones, and at real time the stalls that
    /// outlasted the room's buffer.
    public var xrunCount: Int { xrunsSoFar.load(ordering: .relaxed) }
    private let xrunsSoFar = Atomic<Int>(0)
    /// Periods run by earlier `run` calls (injected faults count from the first).
    private var periodsBefore = 0

    /// Half the fractional-delay filter's length.
    static let halfTaps = 8
    /// How far apart an unlinked room's streams start, at most, frames.
    static let maximumSkew: Int64 = 32
    private let wholeDelay: Int
    private let taps: [Float]
    /// What reached the microphone's position, by device frame (a ring).
    private var acoustic: [Float]
    private let mask: Int

    /// A room. Throws when the round trip is shorter than the device could
    /// ever be (a period plus the filter's reach).
    public init(_ options: Options = Options()) throws(DeviceError) {
        let latency = options.latencyFrames
        // Unlinked streams may start up to `maximumSkew` frames apart either way.
        let reach = options.periodFrames + Self.halfTaps + (options.unlinked ? Int(Self.maximumSkew) : 0)
        guard latency.isFinite, latency >= Double(reach) else {
            throw DeviceError(.configuration, "a round trip of \(latency) frames is shorter than one period plus \(reach - options.periodFrames) frames")
        }
        self.options = options
        let whole = Int(latency.rounded(.down))
        let fraction = latency - Double(whole)
        wholeDelay = whole
        // y[c] = Σ x[c − D + j] · sinc(j + φ) · window(j + φ), j = −8…7:
        // a linear-phase filter centred on a delay of D + φ.
        taps = (-Self.halfTaps..<Self.halfTaps).map { j in
            let u = Double(j) + fraction
            let sinc = abs(u) < 1e-12 ? 1 : sin(Double.pi * u) / (Double.pi * u)
            let window = abs(u) < Double(Self.halfTaps) ? 0.5 * (1 + cos(Double.pi * u / Double(Self.halfTaps))) : 0
            return Float(sinc * window)
        }
        var size = 1
        while size < whole + options.periodFrames + 4 * Self.halfTaps + 2 * Int(Self.maximumSkew) { size *= 2 }
        acoustic = [Float](repeating: 0, count: size * options.inputs)
        mask = size - 1
    }

    public func run(keepRunning: () -> Bool, period: (PeriodBuffers) -> Void) throws(DeviceError) {
        let frames = options.periodFrames
        if case .realTime(let speed) = options.pacing, speed <= 1 {
            // As a card's thread: real-time priority, and memory locked (as
            // it is touched) so that no page is faulted back in while a
            // period is due.
            realTimeScheduled = scheduleAudioThread() == nil
            memoryLocked = options.lockMemory && lockMemory()
        }
        let microphones = options.inputs
        let size = mask + 1
        let gains = (0..<microphones).map { microphone in (0..<microphones).map { options.gain(singer: $0, microphone: microphone) } }
        let delays = (0..<microphones).map { microphone in (0..<microphones).map { options.delay(singer: $0, microphone: microphone) } }
        // Each singer's voice, kept as long as the longest path across the room.
        var sung = 1
        while sung < frames + (delays.joined().max() ?? 0) + 1 { sung *= 2 }
        let voices = UnsafeMutablePointer<Float>.allocate(capacity: sung * microphones)
        voices.initialize(repeating: 0, count: sung * microphones)
        defer { voices.deallocate() }
        let input = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let voice = UnsafeMutablePointer<Float>.allocate(capacity: frames * microphones)
        let inputs = UnsafeMutablePointer<Float>.allocate(capacity: frames * microphones)
        defer {
            inputs.deallocate()
            input.deallocate()
            left.deallocate()
            right.deallocate()
            voice.deallocate()
        }
        // Each microphone's own noise (the first's as a one-microphone room's).
        // (Not seeds a multiple of SplitMix64's own step apart: each microphone's
        // noise was then the first's a sample or three later, the same noise in
        // every microphone.)
        var noises = (0..<options.inputs).map { SplitMix64(seed: options.seed &+ UInt64($0) &* 0xD1B5_4A32_D192_ED03) }
        var skews = SplitMix64(seed: options.seed &+ 0x5EED)
        var frame: Int64 = 0
        var index = periodsBefore
        defer { periodsBefore = index }
        let clock = ContinuousClock()
        let start = clock.now
        // Unlinked: the capture starts a few frames before or after the playback, anew at each start.
        func startSkew() -> Int64 { options.unlinked ? Int64(skews.next() % UInt64(2 * Self.maximumSkew + 1)) - Self.maximumSkew : 0 }
        var skew = startSkew()
        func alignment() -> StreamAlignment {
            guard options.unlinked else { return .linked }
            return options.skewUnknown ? .unknown : StreamAlignment(captureSkewFrames: skew, known: true)
        }
        var streams = alignment()
        let stallFrames: Int64?
        if case .realTime(let speed) = options.pacing, speed <= 1 { stallFrames = Int64(options.effectiveBufferFrames) } else { stallFrames = nil }
        while keepRunning() {
            if options.waitsForConsumers, let ready = backpressure {
                while !ready() && keepRunning() { usleep(500) }
            }
            var lost = Int64(options.xruns[index] ?? 0)
            if let stallFrames, case .realTime(let speed) = options.pacing {
                // The room's clock ran on while the box was away: past the buffer, an xrun, as on a card.
                let elapsed = start.duration(to: clock.now)
                let seconds: Double = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                let now = Int64(seconds * Double(options.sampleRate) * speed)
                if now - frame > stallFrames { lost = max(lost, now - frame) }
            }
            if lost > 0 {
                // Nothing played, nothing captured: the frames are gone; both
                // streams start again, the playback's buffer dropped unheard.
                for offset in acoustic.indices { acoustic[offset] = 0 }
                voices.update(repeating: 0, count: sung * microphones)
                frame += lost
                xrunsSoFar.add(1, ordering: .relaxed)
                skew = startSkew()
                streams = alignment()
            }
            if index == options.loseDeviceAtPeriod { throw DeviceError(.lost, "\(name): the device went away") }
            // Each microphone hears its own acoustic history (the playback and
            // the singers at their gains) one round trip late, and its own noise.
            for microphone in 0..<microphones {
                let base = microphone * size
                for sample in 0..<frames {
                    let c = frame + Int64(sample)
                    var value: Float = 0
                    for (tap, weight) in taps.enumerated() {
                        let source = c - Int64(wholeDelay) - skew + Int64(tap - Self.halfTaps)
                        if source >= 0 { value += acoustic[base + Int(source & Int64(mask))] * weight }
                    }
                    let random = Float(noises[microphone].next() >> 40) / Float(1 << 24) * 2 - 1
                    inputs[microphone * frames + sample] = value + options.noise * random
                }
            }
            for sample in 0..<frames {
                var sum: Float = 0
                for microphone in 0..<microphones { sum += inputs[microphone * frames + sample] }
                input[sample] = sum / Float(microphones)
            }
            left.update(repeating: 0, count: frames)
            right.update(repeating: 0, count: frames)
            voice.update(repeating: 0, count: frames * microphones)
            period(PeriodBuffers(input: input, left: left, right: right, frames: frames, deviceFrame: frame, roomVoice: voice,
                                 hostNanoseconds: MonotonicClock.nanoseconds(), alignment: streams,
                                 inputs: microphones > 1 ? UnsafePointer(inputs) : nil, inputCount: microphones, roomVoiceCount: microphones))
            for singer in 0..<microphones {
                for sample in 0..<frames { voices[singer * sung + Int((frame + Int64(sample)) & Int64(sung - 1))] = voice[singer * frames + sample] }
            }
            for microphone in 0..<microphones {
                let base = microphone * size
                for sample in 0..<frames {
                    var value = options.bleed * (left[sample] + right[sample]) / 2
                    for singer in 0..<microphones {
                        value += gains[microphone][singer] * voices[singer * sung + Int((frame + Int64(sample) - Int64(delays[microphone][singer])) & Int64(sung - 1))]
                    }
                    acoustic[base + Int((frame + Int64(sample)) & Int64(mask))] = value
                }
            }
            frame += Int64(frames)
            index += 1
            if case .realTime(let speed) = options.pacing {
                // The simulated sound card's clock: wait for the period's deadline.
                let due = start + .seconds(Double(frame) / Double(options.sampleRate) / speed)
                let wait = clock.now.duration(to: due)
                // More than a period behind: a card's two-period buffer would have run dry.
                if wait < .seconds(-Double(frames) / Double(options.sampleRate) / speed) { late.add(1, ordering: .relaxed) }
                if wait > .zero {
                    let (seconds, attoseconds) = wait.components
                    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
                    nanosleep(&request, nil)
                }
            }
        }
    }
}

/// The room's singer: sings one part of the score in time with what they
/// hear, a little out of tune, with vibrato, a timing error and breath
/// noise. Every sample is a pure function of the song sample, so tests can
/// compute exactly what was sung.
public struct SyntheticSinger: Sendable {
    /// The notes sung (the part's tones at the engine rate).
    public let tones: [ToneEvent]
    /// Samples per second.
    public let sampleRate: Int
    /// Sharp (+) or flat (−), cents.
    public var detuneCents = 0.0
    /// Vibrato depth, cents, and rate, Hz.
    public var vibratoCents = 30.0
    public var vibratoHz = 5.5
    /// How late the singer is, samples (negative: early).
    public var timingErrorSamples: Int64 = 0
    /// Breath noise (amplitude).
    public var noise: Float = 0.005
    /// Whose breath: singers of different parts breathe differently (with
    /// one seed, every singer of a quartet had the same breath noise, at
    /// once in every microphone).
    public var breathSeed: UInt64 = 0
    /// Loudness.
    public var level: Float = 0.5
    /// How far the singer's pitch wanders over the song: cents a minute
    /// (− sinking), each note held at where it began.
    public var driftCentsPerMinute = 0.0

    /// A singer for `tones`.
    public init(tones: [ToneEvent], sampleRate: Int) {
        self.tones = tones
        self.sampleRate = sampleRate
    }

    /// What the singer sings at song sample `song`.
    public func sample(atSong song: Int64) -> Float {
        let s = song - timingErrorSamples
        var value: Float = 0
        if let tone = tones.tone(at: s) {
            let rate = Double(sampleRate)
            let t = Double(s - tone.startSample) / rate
            let drift = driftCentsPerMinute * Double(tone.startSample) / rate / 60
            let frequency = tone.frequency * pow(2, (detuneCents + drift) / 1200)
            // Vibrato as phase modulation: index = frequency deviation / rate.
            let deviation = frequency * (pow(2, vibratoCents / 1200) - 1)
            let phase = 2 * Double.pi * frequency * t + deviation / vibratoHz * sin(2 * Double.pi * vibratoHz * Double(s) / rate)
            // 10 ms in, 10 ms out, inside the note.
            let ramp = 0.01 * rate
            let envelope = min(1, Double(s - tone.startSample) / ramp, Double(tone.endSample - s) / ramp)
            var wave = sin(phase)
            if 2 * frequency < 0.45 * rate { wave += 0.3 * sin(2 * phase) }
            if 3 * frequency < 0.45 * rate { wave += 0.15 * sin(3 * phase) }
            value = Float(wave / 1.45 * envelope) * level
        }
        var hash = SplitMix64(seed: UInt64(bitPattern: song) &* 0x9E37_79B9 &+ breathSeed &* 0xD1B5_4A32_D192_ED03)
        return value + noise * (Float(hash.next() >> 40) / Float(1 << 24) * 2 - 1)
    }
}

/// How a synthetic singer gets one note wrong: the ground truth the take
/// analysis must find again.
public struct SungNoteError: Hashable, Sendable {
    /// Sharp (+) or flat (−), cents.
    public var cents: Double
    /// Late (+) or early (−), samples.
    public var lateSamples: Int64
    /// Not sung at all.
    public var missed: Bool

    public init(cents: Double = 0, lateSamples: Int64 = 0, missed: Bool = false) {
        self.cents = cents
        self.lateSamples = lateSamples
        self.missed = missed
    }
}

extension SyntheticSinger {
    /// `tones` as a singer with `errors` (one per tone) sings them: each
    /// detuned, moved early or late (an early note cuts the one before
    /// short; a late one leaves a gap), missed ones left out.
    public static func tones(_ tones: [ToneEvent], with errors: [SungNoteError]) -> [ToneEvent] {
        var sung: [ToneEvent] = []
        for (index, tone) in tones.enumerated() {
            let error = index < errors.count ? errors[index] : SungNoteError()
            guard !error.missed else { continue }
            var moved = tone
            moved.startSample += error.lateSamples
            moved.endSample += error.lateSamples
            moved.frequency *= pow(2, error.cents / 1_200)
            if let last = sung.last, last.endSample > moved.startSample {
                sung[sung.count - 1].endSample = max(last.startSample + 1, moved.startSample)
            }
            sung.append(moved)
        }
        return sung
    }
}
