public import AcapellaEngine
import AcapellaScore
import Foundation
internal import CChild

#if canImport(Glibc)
import Glibc
#endif

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
/// (the box), or whole at the finer quality first (a mixdown, an export),
/// each into a nameless file in `scratch` that is then streamed like any
/// take (`SpooledTake`): the memory a mix takes is the same whatever the
/// song's length, tempo or key.
public enum StretchQuality: Sendable, Equatable {
    case realTime
    case offline(scratch: String)
}

/// A take stretched whole at the finer quality (`OfflineStretcher.run`)
/// into a file of its own that has no name (its space is freed when the
/// last reader lets it go; nothing is left behind by a failure, a kill or
/// a crash), read back a block at a time as the mix plays it.
public final class SpooledTake: TakeBlockSource, @unchecked Sendable {
    // @unchecked: the descriptor is written once in init; pread needs no lock.
    private let descriptor: Int32
    public let frameCount: Int64
    /// What the take's file held that was not a number (silence here).
    public let damage: SampleDamage

    /// `source`'s frames (its gain applied) stretched by `stretch` with
    /// `anchors`, spooled in `folder`.
    public init(stretching source: any TakeBlockSource, sampleRate: Int, stretch: TakeStretch, anchors: [StretchAnchor], in folder: String) throws(StretchError) {
        let count = Int(source.frameCount)
        let needed = TakeStretch.scaled(Int64(count), stretch.ratio) * 4
        if let free = Project.freeBytes(at: folder), free < needed + (64 << 20) {
            throw StretchError(description: "no room to stretch it: \(needed >> 20) MB needed in \(folder), \(free >> 20) MB free")
        }
        let path = folder + "/.stretch-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let made = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard made >= 0 else { throw StretchError(description: "\(folder): cannot write a stretched take there (\(String(cString: strerror(errno))))") }
        unlink(path)
        descriptor = made
        var written: Int64 = 0
        do {
            try OfflineStretcher.run(count: count, sampleRate: sampleRate, stretch: stretch, anchors: anchors, read: { at, n, into in
                let got = max(0, source.read(from: Int64(at), count: n, into: into))
                if got < n { (into + got).initialize(repeating: 0, count: n - got) }
            }, write: { piece throws(StretchError) in
                let bytes = piece.count * 4
                guard pwrite(made, piece.baseAddress, bytes, off_t(written * 4)) == bytes else {
                    throw StretchError(description: "\(folder): the disk refused a stretched take (\(String(cString: strerror(errno))))")
                }
                written += Int64(piece.count)
            })
        } catch {
            close(made)
            throw error
        }
        frameCount = written
        damage = source.damage
        // The stretcher is gone: its buffers back to the system before the mix goes on.
        _ = acapella_release_freed_memory()
    }

    deinit { close(descriptor) }

    public func read(from first: Int64, count: Int, into destination: UnsafeMutablePointer<Float>) -> Int {
        guard first >= 0, first < frameCount, count > 0 else { return 0 }
        let frames = Int(min(Int64(count), frameCount - first))
        let got = pread(descriptor, destination, frames * 4, off_t(first * 4))
        return got > 0 ? got / 4 : 0
    }
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

    /// `take`'s frames (`source`: its file, gain applied) stretched whole
    /// through `plan` at the finer quality into a spool in `folder`, and
    /// streamed from there.
    func spooledStream(_ take: TakeRecord, source: any TakeBlockSource, plan: StretchPlan, slots: Int, in folder: String) -> Result<TakePlayback, LeftOutTake> {
        do {
            let spooled = try SpooledTake(stretching: source, sampleRate: manifest.sampleRate, stretch: plan.stretch, anchors: plan.anchors, in: folder)
            let stream = TakeStream(source: spooled, name: "take \(take.id) (\(take.part)) at \(plan.stretch)", slots: slots)
            return .success(TakePlayback(stream: stream, alignmentOffsetSamples: plan.alignmentOffsetSamples, range: plan.range))
        } catch {
            return .failure(LeftOutTake(take: take, reason: error.description, stopsTheMix: true))
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
