import AcapellaAnalysis
import AcapellaEngine
import AcapellaProject

/// A take sung at once with others (`ensemble`: a microphone a singer, one
/// capture) read with the other singers and the guide taken out. First
/// `CrosstalkFit` finds where each other singer's path puts them in this
/// microphone (their delay: a singer a metre further away arrives 140
/// frames later); then each other microphone, at each delay found, and the
/// guide the speakers played are a source each, their gains found by least
/// squares where this singer's own voice is not, and subtracted sample by
/// sample as the take is read. The sources are read forward beside the
/// take, in bounded memory, however long it is.
final class Unmixing {
    /// The guide's gain, then each other microphone's.
    let gains: [Double]
    private let guide: GuideReader
    /// Each other take's file and where its frames sit: its frame for this
    /// take's frame f is f + shift.
    private let others: [(file: SoundFileBlockSource, shift: Int64)]
    /// Song sample of this take's frame 0.
    private let origin: Int64
    /// Each source's samples while a read takes it out.
    private var scratch: [Float] = []

    private init(gains: [Double], guide: GuideReader, others: [(file: SoundFileBlockSource, shift: Int64)], origin: Int64) {
        self.gains = gains
        self.guide = guide
        self.others = others
        self.origin = origin
    }

    /// The takes sung with `take` (its `ensemble` mark, another part, a
    /// file that opens; one set aside still heard its singer), the guide
    /// as the microphones heard it (every part of the set muted: their
    /// guides were not played, their singers sang), fitted over the take.
    /// Nil for a take sung alone, or when nothing could be fitted.
    static func fit(_ take: TakeRecord, part: Int, in project: Project, schedule: Schedule, file: SoundFileBlockSource, playing: [PartTakes]) -> Unmixing? {
        guard let mark = take.ensemble else { return nil }
        let origin = -(take.alignmentOffsetSamples + take.nudgeSamples)
        var mixes = PartMix.spread(count: schedule.tones.count)
        var heard = playing
        var others: [(file: SoundFileBlockSource, shift: Int64)] = []
        for other in project.manifest.takes where other.ensemble == mark && other.id != take.id && other.part != take.part {
            // Its part was not played while the set sang, whatever became of its file.
            guard let index = project.score.parts.firstIndex(where: { $0.name == other.part }) else { continue }
            mixes[index].muted = true
            if index < heard.count { heard[index] = .none }
            guard other.state != .recording, let path = try? project.takePath(other), let source = try? SoundFileBlockSource(path: path),
                  source.sampleRate == file.sampleRate else { continue }
            // One capture: the same moment is where the recording put it in each (a nudge moves how a take plays, not what it heard).
            others.append((source, other.alignmentOffsetSamples - take.alignmentOffsetSamples))
        }
        guard !others.isEmpty else { return nil }
        mixes[part].muted = true
        if part < heard.count { heard[part] = .none }
        // First where each other singer's path puts them (their delay in this microphone), then how loud.
        let found = CrosstalkFit(sampleRate: file.sampleRate, sourceCount: 1 + others.count)
        scan(found, file: file, others: others, guide: GuideReader(schedule: schedule, mixes: mixes, takes: heard), tones: schedule.tones[part], origin: origin)
        // Paths up to 20 ms (7 m), and less than half a window (beyond it a delay and its alias tie).
        let delays = found.delays(maximum: min(file.sampleRate / 50, CrosstalkFit.window / 2 - 1))
        others = zip(others, delays.dropFirst()).flatMap { other, lags in lags.map { (other.file, other.shift - Int64($0)) } }
        let fit = CrosstalkFit(sampleRate: file.sampleRate, sourceCount: 1 + others.count, findsDelays: false)
        scan(fit, file: file, others: others, guide: GuideReader(schedule: schedule, mixes: mixes, takes: heard), tones: schedule.tones[part], origin: origin)
        guard let gains = fit.gains() else { return nil }
        return Unmixing(gains: gains, guide: GuideReader(schedule: schedule, mixes: mixes, takes: heard), others: others, origin: origin)
    }

    /// Every frame of the take into `fit`, beside the guide and the others
    /// at the same moment, with the notes the singer may be on there (a
    /// tenth of a second either side). A window of each, slid forward a hop
    /// at a time: each read once, in order.
    private static func scan(_ fit: CrosstalkFit, file: SoundFileBlockSource, others: [(file: SoundFileBlockSource, shift: Int64)], guide: GuideReader, tones: [ToneEvent], origin: Int64) {
        let (window, hop) = (CrosstalkFit.window, CrosstalkFit.hop)
        let frames = (0..<(2 + others.count)).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: window) }
        defer { for frame in frames { frame.deallocate() } }
        for frame in frames { frame.initialize(repeating: 0, count: window) }
        let reach = Int64(file.sampleRate / 10)
        var firstTone = 0
        var at = -window + hop
        while at < Int(file.frameCount) {
            let from = at + window - hop
            for (index, frame) in frames.enumerated() {
                frame.update(from: frame + hop, count: window - hop)
                let fresh = frame + (window - hop)
                fresh.update(repeating: 0, count: hop)
                switch index {
                case 0: _ = file.read(from: Int64(from), count: hop, into: fresh)
                case 1: guide.read(from: origin + Int64(from), count: hop, into: fresh)
                default: read(others[index - 2], from: Int64(from), count: hop, into: fresh)
                }
            }
            let span = (origin + Int64(at) - reach)..<(origin + Int64(at + window) + reach)
            while firstTone < tones.count, tones[firstTone].endSample <= span.lowerBound { firstTone += 1 }
            var pitches: [Double] = []
            var tone = firstTone
            while tone < tones.count, tones[tone].startSample < span.upperBound {
                pitches.append(tones[tone].frequency)
                tone += 1
            }
            fit.add(target: frames[0], sources: frames.dropFirst().map { UnsafePointer($0) }, pitches: pitches)
            at += hop
        }
    }

    /// Another take's frames for this take's `from ..< from + count` (zeros where it has none).
    private static func read(_ other: (file: SoundFileBlockSource, shift: Int64), from: Int64, count: Int, into destination: UnsafeMutablePointer<Float>) {
        destination.update(repeating: 0, count: count)
        let first = from + other.shift
        let skip = Int(max(0, -first))
        guard skip < count, first + Int64(skip) < other.file.frameCount else { return }
        _ = other.file.read(from: first + Int64(skip), count: count - skip, into: destination + skip)
    }

    /// This take's frames `from ..< from + count` with the guide and the
    /// other singers taken out; returns how many were read.
    func read(_ file: SoundFileBlockSource, from: Int, count: Int, into destination: UnsafeMutablePointer<Float>) -> Int {
        let got = file.read(from: Int64(from), count: count, into: destination)
        guard got > 0 else { return got }
        if scratch.count < got { scratch = [Float](repeating: 0, count: got) }
        scratch.withUnsafeMutableBufferPointer { buffer in
            let source = buffer.baseAddress!
            guide.read(from: origin + Int64(from), count: got, into: source)
            for index in 0..<got { destination[index] -= Float(gains[0]) * source[index] }
            for (number, other) in others.enumerated() where gains[number + 1] != 0 {
                Self.read(other, from: Int64(from), count: got, into: source)
                for index in 0..<got { destination[index] -= Float(gains[number + 1]) * source[index] }
            }
        }
        return got
    }
}
