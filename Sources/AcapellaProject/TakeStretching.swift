public import AcapellaEngine
import AcapellaScore

/// How a take sung at one tempo and key is heard at another: the stretch,
/// the anchors that keep its entries on the beat (every written entry of
/// its part, and the song's start), and where it then sits on the song's
/// timeline.
public struct StretchPlan: Sendable {
    public var stretch: TakeStretch
    /// Take frames on the stretched take's frames.
    public var anchors: [StretchAnchor]
    /// The stretched take's frame of song sample 0 (the nudge included).
    public var alignmentOffsetSamples: Int64
    /// A punch-in's song samples at the playing tempo.
    public var range: Range<Int64>?
}

/// How takes are stretched when they must be: on the butler as they play
/// (the box), or whole at the finer quality first (a mixdown, an export).
public enum StretchQuality: Sendable {
    case realTime
    case offline
}

extension Project {
    /// What hearing `take` (sung at its tempo and key) at `options`' takes;
    /// nil when it is heard as sung.
    public func stretchPlan(_ take: TakeRecord, at options: ScheduleOptions) -> StretchPlan? {
        let sung = take.scheduleOptions(sampleRate: options.sampleRate)
        let stretch = TakeStretch(recordedTempo: sung.tempoScale, recordedTranspose: sung.transpose, playingTempo: options.tempoScale,
                                  playingTranspose: options.transpose)
        guard !stretch.isIdentity else { return nil }
        let offset = take.alignmentOffsetSamples + take.nudgeSamples
        let stretchedOffset = TakeStretch.scaled(offset, stretch.ratio)
        var anchors = [StretchAnchor(input: offset, output: stretchedOffset)]
        // Each written entry of its part at the tempo sung, on the same entry at the tempo heard.
        if stretch.ratio != Rational(1), let part = score.parts.firstIndex(where: { $0.name == take.part }),
           let from = try? Schedule(score: score, options: ScheduleOptions(sampleRate: options.sampleRate, tempoScale: sung.tempoScale)),
           let to = try? Schedule(score: score, options: ScheduleOptions(sampleRate: options.sampleRate, tempoScale: options.tempoScale)) {
            anchors += zip(from.tones[part], to.tones[part]).map { StretchAnchor(input: $0.startSample + offset, output: $1.startSample + stretchedOffset) }
        }
        let range = take.range.map { TakeStretch.scaled($0.start, stretch.ratio)..<TakeStretch.scaled(max($0.start, $0.end), stretch.ratio) }
        return StretchPlan(stretch: stretch, anchors: anchors, alignmentOffsetSamples: stretchedOffset, range: range)
    }

    /// `take`'s frames (`source`: its file, gain applied) as a stream heard
    /// through `plan`, stretched by the butler as it plays.
    func stretchedStream(_ take: TakeRecord, source: any TakeBlockSource, plan: StretchPlan, slots: Int) -> Result<TakePlayback, LeftOutTake> {
        do {
            let stretched = try StretchedBlockSource(source, sampleRate: manifest.sampleRate, stretch: plan.stretch, anchors: plan.anchors)
            let stream = TakeStream(source: stretched, name: "take \(take.id) (\(take.part)) at \(plan.stretch)", slots: slots)
            return .success(TakePlayback(stream: stream, alignmentOffsetSamples: plan.alignmentOffsetSamples, range: plan.range))
        } catch {
            return .failure(LeftOutTake(take: take, reason: error.description))
        }
    }

    /// `take`'s decoded samples (gain applied) stretched whole through
    /// `plan`, at the finer quality.
    func stretchedWhole(_ take: TakeRecord, _ samples: [Float], plan: StretchPlan) -> Result<TakePlayback, LeftOutTake> {
        do {
            let stretched = try OfflineStretcher.process(samples, sampleRate: manifest.sampleRate, stretch: plan.stretch, anchors: plan.anchors)
            return .success(TakePlayback(samples: stretched, alignmentOffsetSamples: plan.alignmentOffsetSamples, range: plan.range))
        } catch {
            return .failure(LeftOutTake(take: take, reason: error.description))
        }
    }
}
