public import AcapellaScore
import AcapellaDSP

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A guide tone: one sounding note (tied notes merged), in samples.
public struct ToneEvent: Hashable, Sendable {
    /// First sample of the note.
    public var startSample: Int64
    /// First sample after it (the release begins here).
    public var endSample: Int64
    /// Frequency in Hz after transposition.
    public var frequency: Double
    /// MIDI pitch after transposition.
    public var midi: Int
}

extension Array where Element == ToneEvent {
    /// The index of the first tone not ended at `sample`: the one sounding
    /// there, or else the next (`count` after the last).
    public func indexOfTone(notEndedAt sample: Int64) -> Int {
        partitionIndex { $0.endSample > sample }
    }

    /// The tone sounding at `sample`, if any: the one lookup of "which note
    /// is this part singing here" (the needle, the singer, `acapella pitch`).
    public func tone(at sample: Int64) -> ToneEvent? {
        let index = indexOfTone(notEndedAt: sample)
        return index < count && self[index].startSample <= sample ? self[index] : nil
    }

    /// The tone sounding at `sample`, else the next one, else the last:
    /// "give me my note".
    public func toneToSing(at sample: Int64) -> ToneEvent? {
        let index = indexOfTone(notEndedAt: sample)
        return index < count ? self[index] : last
    }
}

/// A metronome click.
public struct ClickEvent: Hashable, Sendable {
    /// The sample it starts on (negative during the count-in).
    public var sample: Int64
    /// A downbeat.
    public var accent: Bool
}

/// What to compile a score for.
public struct ScheduleOptions: Hashable, Sendable {
    /// Samples per second.
    public var sampleRate: Int
    /// Tempo multiplier (9/10 = 10 % slower).
    public var tempoScale: Rational
    /// Transposition in semitones.
    public var transpose: Int
    /// Measures of count-in clicks before sample 0.
    public var countInMeasures: Int
    /// Names of tracks that play like parts but have no notes (a reference
    /// recording), after the score's parts: each gets a part slot with no
    /// tones, so its audio plays as that part's take.
    public var audioTracks: [String]

    /// Options; defaults are 48 kHz, written tempo and pitch, no count-in.
    public init(sampleRate: Int = 48_000, tempoScale: Rational = Rational(1), transpose: Int = 0, countInMeasures: Int = 0, audioTracks: [String] = []) {
        self.sampleRate = sampleRate
        self.tempoScale = tempoScale
        self.transpose = transpose
        self.countInMeasures = countInMeasures
        self.audioTracks = audioTracks
    }
}

/// A score compiled onto the sample timeline: every tone and click at its
/// exact sample, computed through the exact `TimeMap` (one rounding per
/// event, no accumulated drift). Built off the render thread; the render
/// loop only reads it.
public struct Schedule: Sendable {
    /// Part names, in score order, then the audio tracks' (no tones).
    public let partNames: [String]
    /// Tones per part, in time order.
    public private(set) var tones: [[ToneEvent]]
    /// For each part, the index in the part's notes of the note each tone
    /// begins with (a tie chain is one tone): measures, beats and words of tones.
    public private(set) var toneNotes: [[Int]]
    /// Clicks (count-in first, at negative samples), in time order.
    public let clicks: [ClickEvent]
    /// Sample of each barline, measure by measure from the first.
    public let barlines: [Int64]
    /// The measure number of `barlines[0]` (0 with a pickup, else 1).
    public let firstMeasureNumber: Int
    /// The end of the music.
    public let endSample: Int64
    /// The options compiled for.
    public let options: ScheduleOptions
    /// The tick ↔ sample map used.
    public let timeMap: TimeMap

    /// The measure number `sample` falls in (the count-in is before the
    /// first; a pickup is measure 0).
    public func measure(at sample: Int64) -> Int {
        barlines.partitionIndex { $0 > sample } - 1 + firstMeasureNumber
    }

    /// Compiles a valid score.
    public init(score: Score, options: ScheduleOptions = ScheduleOptions()) throws(TimeMap.Inexact) {
        let timeMap = try TimeMap(tempos: score.tempos, sampleRate: options.sampleRate, tempoScale: options.tempoScale)
        self.timeMap = timeMap
        self.options = options
        partNames = score.parts.map(\.name) + options.audioTracks
        var toneNotes: [[Int]] = []
        tones = score.parts.map { part in
            var events: [ToneEvent] = []
            var starts: [Int] = []
            defer { toneNotes.append(starts) }
            var index = 0
            while index < part.notes.count {
                let note = part.notes[index]
                guard let pitch = note.pitch else {
                    index += 1
                    continue
                }
                // A tie chain sounds as one note: no re-attack.
                var end = note.endTick
                var last = index
                while part.notes[last].tieToNext && last + 1 < part.notes.count && !part.isAttack(at: last + 1) {
                    last += 1
                    end = part.notes[last].endTick
                }
                let midi = pitch.midi + options.transpose
                events.append(ToneEvent(startSample: timeMap.sample(atTick: note.startTick), endSample: timeMap.sample(atTick: end),
                                        frequency: Tuning.frequency(midi: midi), midi: midi))
                starts.append(index)
                index = last + 1
            }
            return events
        } + options.audioTracks.map { _ in [] }
        self.toneNotes = toneNotes + options.audioTracks.map { _ in [] }

        // Barlines and clicks follow the meter map; the count-in extends the
        // first meter backwards from the first downbeat (or the pickup's start).
        let meterMap = score.meterMap
        let endTick = score.endTick
        let firstMeasure = score.pickupTicks > 0 ? 0 : 1
        let lastMeasure = endTick > 0 ? meterMap.measure(containing: endTick - 1) : 1
        var barlines: [Int64] = []
        var clicks: [ClickEvent] = []
        // Count-in: N whole measures of the first meter, ending on the
        // downbeat of measure 1 less the pickup, so a pickup enters on its
        // beat. Clicks before tick 0 only.
        let firstMeter = meterMap.meter(atMeasure: 1)
        let measureTicks = firstMeter.measureTicks
        let countInStartTick = (score.pickupTicks > 0 ? score.pickupTicks - measureTicks : 0) - options.countInMeasures * measureTicks
        var tick = countInStartTick
        while options.countInMeasures > 0 && tick < 0 {
            clicks.append(ClickEvent(sample: timeMap.sample(atTick: tick), accent: (tick - countInStartTick) % measureTicks == 0))
            tick += firstMeter.pulseTicks
        }
        for measure in firstMeasure...max(firstMeasure, lastMeasure) {
            let start = meterMap.startTick(ofMeasure: measure)
            barlines.append(timeMap.sample(atTick: start))
            let meter = meterMap.meter(atMeasure: measure)
            let measureEnd = meterMap.startTick(ofMeasure: measure + 1)
            // In a pickup, beats count back from the barline of measure 1.
            var tick = measure == 0 ? measureEnd - ((measureEnd - start) / meter.pulseTicks) * meter.pulseTicks : start
            while tick < min(measureEnd, endTick) {
                clicks.append(ClickEvent(sample: timeMap.sample(atTick: tick), accent: tick == start && measure > 0))
                tick += meter.pulseTicks
            }
        }
        self.barlines = barlines
        self.firstMeasureNumber = firstMeasure
        self.clicks = clicks
        endSample = timeMap.sample(atTick: endTick)
    }

    /// The same schedule without one tone (tests find each onset in the
    /// audio as the first sample where the two renders differ).
    func removingTone(part: Int, index: Int) -> Schedule {
        var copy = self
        var tones = copy.tones
        tones[part].remove(at: index)
        copy.tones = tones
        copy.toneNotes[part].remove(at: index)
        return copy
    }

    /// The samples a loop over measures `first…last` spans: from the first
    /// measure's barline to the barline after the last (the song's end
    /// after the last measure); nil when the measures are not all in the song.
    public func loopRange(measures: ClosedRange<Int>) -> Range<Int64>? {
        let firstIndex = measures.lowerBound - firstMeasureNumber
        let endIndex = measures.upperBound + 1 - firstMeasureNumber
        guard firstIndex >= 0, firstIndex < barlines.count, endIndex > firstIndex, endIndex <= barlines.count else { return nil }
        let end = endIndex < barlines.count ? barlines[endIndex] : endSample
        return barlines[firstIndex]..<end
    }

    /// The barline where measure `measure` starts; nil when the song has no such measure.
    public func barline(ofMeasure measure: Int) -> Int64? {
        let index = measure - firstMeasureNumber
        return index >= 0 && index < barlines.count ? barlines[index] : nil
    }

    /// Where a punch over `measures` starts playing: `prerollMeasures`
    /// before them (not before the song); nil when the measures are not
    /// all in the song.
    public func punchStart(measures: ClosedRange<Int>, prerollMeasures: Int) -> Int64? {
        guard let range = loopRange(measures: measures) else { return nil }
        let index = max(0, measures.lowerBound - max(0, prerollMeasures) - firstMeasureNumber)
        return min(barlines[index], range.lowerBound)
    }

    /// The sample of the count-in's first click (0 without count-in).
    public var startSample: Int64 { min(0, clicks.first?.sample ?? 0) }
}
