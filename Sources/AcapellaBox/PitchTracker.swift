import AcapellaAnalysis
import AcapellaDSP
import AcapellaStatus
public import AcapellaEngine
import Foundation
import Synchronization
import AcapellaLock

/// What the needle shows: the latest pitch reading.
public struct PitchReading: Hashable, Sendable {
    /// The song sample the reading belongs to (the centre of its window,
    /// mapped through the round trip like the take).
    public var songSample: Int64
    /// The note the part has there (MIDI), nil: a rest.
    public var expectedMIDI: Int?
    /// Sung frequency, Hz (0: no voice).
    public var frequency: Double
    /// The needle: the steadied centre against the expected note, cents
    /// (nil when either is missing).
    public var cents: Double?
    /// The nearest note to the centre sung ("F#4").
    public var sungNote: String?
    /// 0…1.
    public var confidence: Double
    /// Loudest input sample in the window (linear), for the level meter.
    public var inputPeak: Float = 0
    /// This reading alone against the expected note, cents, before the
    /// needle's steadying (the page's faint trail).
    public var rawCents: Double?
    /// The needle's steadied pitch centre (fractional MIDI), nil when
    /// nobody sings.
    public var centre: Double?
    /// The last note sung, as the take's grade reads it (`NoteVerdicts`):
    /// shown after the note, until the next one's.
    public var lastNote: LastNote?

    /// A note's word: which of the part's notes, its written pitch (MIDI)
    /// and its centre against it, cents.
    public struct LastNote: Hashable, Sendable {
        public var index: Int
        public var midi: Int
        public var cents: Double
    }
}

/// The live pitch needle, off the render thread (STYLE.md habit 10): the
/// render loop hands tagged captured frames to a ring; this thread keeps a
/// window of the newest, runs score-informed YIN every hop, and publishes
/// the latest reading for the readouts. The score is looked up at the song
/// sample each captured frame was tagged with — the same mapping the take
/// uses — so the needle compares the voice with the note it was sung against.
public final class PitchTracker: @unchecked Sendable {
    // @unchecked: `latest` is behind a mutex; everything else is touched
    // only by the tracker thread between `start` and `stop`.
    /// The ring the engine feeds (`EngineCore.attachAnalysis`).
    public let ring: BulkRing<CapturedFrame>
    let detector: YINDetector
    /// The voice's spectrum and formants, for the page's panel.
    let spectrumAnalyser: VoiceSpectrum
    let tones: [ToneEvent]
    let hop: Int
    private let latest = VisibleLock<PitchReading?>(nil)
    private let latestSpectrum = VisibleLock<SpectrumReading?>(nil)
    /// Pitch readings since the last spectrum (a spectrum every fourth:
    /// about 23 a second, more than the page's 30 frames can tell apart
    /// from 93, at a quarter of the cost).
    private var sinceSpectrum = 0
    /// The needle's steadying of the raw readings (vibrato averaged out).
    private var steadier = PitchCentre()
    /// Each note's word after it, as the grade reads it.
    private var verdicts: NoteVerdicts
    private var lastNote: PitchReading.LastNote?
    /// The kind of the last frame heard, gaps aside (a start, a take's first frame).
    private var lastKind = FrameMark.Kind.none

    private func say(_ verdict: NoteVerdicts.Verdict?) {
        if let verdict { lastNote = PitchReading.LastNote(index: verdict.note, midi: tones[verdict.note].midi, cents: verdict.cents) }
    }
    /// Every reading, when collecting (`readings(of:tones:sampleRate:)`).
    private var collected: [PitchReading]?
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    /// A tracker for a part's tones at `sampleRate`.
    public init(tones: [ToneEvent], sampleRate: Int) {
        ring = BulkRing(capacity: sampleRate)
        detector = YINDetector(sampleRate: sampleRate)
        spectrumAnalyser = VoiceSpectrum(sampleRate: sampleRate)
        self.tones = tones
        hop = 512 * sampleRate / 48_000
        verdicts = NoteVerdicts(notes: tones.map { TargetNote(start: $0.startSample, end: $0.endSample, frequency: $0.frequency) }, sampleRate: sampleRate)
    }

    /// The newest reading (any thread), nil before the first.
    public var reading: PitchReading? { latest.withLock { $0 } }

    /// The newest spectrum (any thread), nil before the first or in silence.
    var spectrum: SpectrumReading? { latestSpectrum.withLock { $0 } }

    /// The part's note at a song sample.
    func expectedMIDI(at song: Int64) -> Int? {
        tones.tone(at: song)?.midi
    }

    /// Analyses what is in the ring now (the thread's loop body; tests call it directly).
    func drain(window: inout [CapturedFrame], sinceLast: inout Int) {
        var buffer = [CapturedFrame](repeating: CapturedFrame(value: 0, mark: .none), count: 4_096)
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { ring.pop(into: $0.baseAddress!, maximum: $0.count) }
            if count == 0 { return }
            for frame in buffer[0..<count] {
                window.append(frame)
                switch frame.mark.kind {
                case .playing, .armed, .recording:
                    if lastKind == .none { lastNote = nil }
                    // A take begins: heard afresh from its first frame, so
                    // the words are read on the take's own frames, as its grade is.
                    if frame.mark.kind != .playing && (lastKind == .none || lastKind == .playing) { verdicts.add(0, at: nil) }
                    verdicts.add(frame.value, at: frame.mark.songSample)
                    lastKind = frame.mark.kind
                case .none:
                    // Stopped: the last note's word stays until the next start.
                    if lastKind != .none { say(verdicts.stop()) }
                    lastKind = .none
                case .gap: break  // the next frame heard starts afresh
                }
                sinceLast += 1
                // Trimmed in bulk (a shift per frame would move the whole window 48,000 times a second).
                if window.count >= 2 * detector.window { window.removeFirst(window.count - detector.window) }
                if sinceLast >= hop && window.count >= detector.window {
                    sinceLast = 0
                    analyse(window[(window.count - detector.window)...])
                }
            }
        }
    }

    /// The lag last found (samples): YIN reads the first `window − maximumLag`
    /// samples and as many again one lag later, so its data is centred
    /// (integration + lag) / 2 into the window, not in its middle.
    private var lastLag: Double?

    private func analyse(_ window: ArraySlice<CapturedFrame>) {
        let integration = detector.window - detector.maximumLag
        func mark(lag: Double) -> FrameMark { window[window.startIndex + (integration + Int(lag.rounded())) / 2].mark }
        let centre = mark(lag: lastLag ?? Double(detector.maximumLag) / 2)
        let playing = centre.kind == .playing || centre.kind == .armed || centre.kind == .recording
        let expected = playing ? expectedMIDI(at: centre.songSample) : nil
        let frequencyExpected = expected.map { Tuning.frequency(midi: $0) }
        let values = window.map(\.value)
        var estimate = values.withUnsafeBufferPointer { detector.estimate($0.baseAddress!, centre: centre.songSample, expected: frequencyExpected) }
        // No note expected (a rest, or stopped) and a reading below a
        // voice's lowest pitch: mains hum or rumble, no singer.
        if estimate.voiced && expected == nil && estimate.frequency < YINDetector.lowestVoice {
            estimate = PitchEstimate(centreSample: estimate.centreSample, frequency: 0, aperiodicity: 1, voiced: false)
        }
        sinceSpectrum += 1
        if sinceSpectrum >= 4 && values.count >= spectrumAnalyser.window {
            sinceSpectrum = 0
            // Nobody singing: no panel (the room's noise has formants too).
            let spectrum = estimate.voiced
                ? values.withUnsafeBufferPointer { spectrumAnalyser.reading($0.baseAddress! + (values.count - spectrumAnalyser.window)) } : nil
            latestSpectrum.withLock { $0 = spectrum }
        }
        lastLag = estimate.voiced ? Double(detector.sampleRate) / estimate.frequency : nil
        let stamp = lastLag.map { mark(lag: $0) } ?? centre
        var reading = PitchReading(songSample: stamp.songSample, expectedMIDI: expected, frequency: 0, cents: nil, sungNote: nil, confidence: 0,
                                   inputPeak: values.reduce(0) { max($0, abs($1)) })
        reading.centre = steadier.add(estimate.voiced ? Tuning.midi(frequency: estimate.frequency) : nil)
        say(verdicts.verdict())
        reading.lastNote = lastNote
        if estimate.voiced {
            reading.frequency = estimate.frequency
            reading.confidence = estimate.confidence
            if let expected { reading.rawCents = NoteName.cents(estimate.frequency, from: expected) }
        }
        if let centre = reading.centre {
            reading.sungNote = NoteName.name(Int(centre.rounded()))
            if let expected { reading.cents = (centre - Double(expected)) * 100 }
        }
        latest.withLock { $0 = reading }
        collected?.append(reading)
    }

    /// The readings the live needle gives for `samples` sung from song
    /// sample 0 while playing (one per hop, as the tracker thread makes
    /// them): the same path, offline, for the tests and the benchmark.
    public static func readings(of samples: [Float], tones: [ToneEvent], sampleRate: Int) -> [PitchReading] {
        let tracker = PitchTracker(tones: tones, sampleRate: sampleRate)
        tracker.collected = []
        var window: [CapturedFrame] = []
        var sinceLast = 0
        var start = 0
        while start < samples.count {
            let end = min(samples.count, start + sampleRate / 4)
            let frames = (start..<end).map { CapturedFrame(value: samples[$0], mark: FrameMark(songSample: Int64($0), kind: .playing)) }
            frames.withUnsafeBufferPointer { _ = tracker.ring.push($0.baseAddress!, count: $0.count) }
            tracker.drain(window: &window, sinceLast: &sinceLast)
            start = end
        }
        // Stopped at the end: the last note's word.
        if let verdict = tracker.verdicts.stop(), var last = tracker.collected?.last {
            tracker.say(verdict)
            last.lastNote = tracker.lastNote
            tracker.collected?.append(last)
        }
        return tracker.collected ?? []
    }

    /// Starts the tracker thread.
    public func start() {
        let thread = Thread { [self] in
            var window: [CapturedFrame] = []
            window.reserveCapacity(2 * detector.window)
            var sinceLast = 0
            while !stopping.load(ordering: .relaxed) {
                drain(window: &window, sinceLast: &sinceLast)
                usleep(5_000)
            }
            done.signal()
        }
        thread.name = "acapella-pitch"
        thread.start()
    }

    /// Stops the thread.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        done.wait()
    }
}
