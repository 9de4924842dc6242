public import AcapellaEngine

/// Turns actions into engine commands, given what the engine last
/// published. Actions that belong to the box rather than the engine (part
/// and song selection, takes, tempo, calibration, shutdown) come back as
/// `.box` for the box to carry out. A value type: tested without threads.
public struct ActionDispatcher: Sendable {
    /// What a dispatched action becomes.
    public enum Outcome: Equatable, Sendable {
        /// Commands for the engine, in order.
        case engine([EngineCommand])
        /// The box's to carry out.
        case box(ControlAction)
        /// Nothing applies in this state (a punch-out while not recording…).
        case ignored
    }

    /// Where punches land.
    public var quantize: Quantize
    /// Metronome gain when on.
    public var metronomeGain: Float = 0.4
    /// Whether the metronome is on (what the next `metronome` action turns off).
    public private(set) var metronomeOn = false
    /// The loop being set up with loop-start-here / loop-end-here (measures).
    public private(set) var loopStart: Int?
    /// Its end.
    public private(set) var loopEnd: Int?

    /// A dispatcher punching on `quantize` (the next barline by default),
    /// the metronome starting `metronome` (as the engine was built).
    public init(quantize: Quantize = .bar, metronome: Bool = false) {
        self.quantize = quantize
        metronomeOn = metronome
    }

    /// A loop chosen as a whole (the web page's measures): remembered as
    /// if set with loop-start-here and loop-end-here; nil forgets it.
    public mutating func setLoop(_ measures: ClosedRange<Int>?) {
        loopStart = measures?.lowerBound
        loopEnd = measures?.upperBound
    }

    /// What `action` means now.
    public mutating func dispatch(_ action: ControlAction, snapshot: EngineSnapshot) -> Outcome {
        let state = snapshot.state
        switch action {
        case .playPause:
            guard state != .stopped else { return .engine([.play]) }
            // Pause: stop, and resume from the start of this measure.
            return .engine([.stop, .locate(measure: max(snapshot.measure, 0))])
        case .stop:
            return state == .stopped ? .ignored : .engine([.stop])
        case .record:
            return .engine([.record(quantize)])
        case .punchIn:
            return state == .playing || state == .stopped ? .engine([.record(quantize)]) : .ignored
        case .punchOut:
            return state == .recording ? .engine([.record(quantize)]) : .ignored
        case .loop:
            if snapshot.looping { return .engine([.loop(nil)]) }
            guard let start = loopStart else { return .ignored }
            return .engine([.loop(start...max(start, loopEnd ?? start))])
        case .loopStartHere:
            loopStart = snapshot.measure
            if let end = loopEnd, end < snapshot.measure { loopEnd = nil }
            return .ignored
        case .loopEndHere:
            loopEnd = snapshot.measure
            guard let start = loopStart, start <= snapshot.measure else { return .ignored }
            return .engine([.loop(start...snapshot.measure)])
        case .previousMeasure:
            return .engine([.locate(measure: snapshot.measure - 1)])
        case .nextMeasure:
            return .engine([.locate(measure: snapshot.measure + 1)])
        case .metronome:
            metronomeOn.toggle()
            return .engine([.metronome(metronomeOn ? metronomeGain : 0)])
        case .previousPart, .nextPart, .previousSong, .nextSong, .previousTag, .nextTag, .tempoUp, .tempoDown, .transposeUp, .transposeDown, .countIn, .mutePart, .soloPart,
             .keepTake, .discardTake, .undoTake, .giveMeMyNote, .giveMeMyChord, .drone, .reference, .recordLine, .stepWhole, .stepHalf, .stepQuarter, .stepEighth, .stepSixteenth, .stepRest, .nextVerse, .calibrate, .shutdown, .punchWorst:
            return .box(action)
        }
    }
}
