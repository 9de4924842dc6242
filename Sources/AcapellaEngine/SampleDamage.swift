/// Samples of a recording that are not numbers — NaN or ±∞, a damaged
/// file (a disk fault, a broken copy, a tool that wrote garbage): each is
/// read as silence, and counted where it is, so that whoever plays, mixes
/// or analyses the take can name it instead of failing on it ("the mix is
/// silent") or passing it on (a NaN sent to a card plays at full scale).
public struct SampleDamage: Hashable, Sendable {
    /// Where, in frames of the file: apart, in order (at most `mostSpans`:
    /// past that, the last one grows to cover what comes).
    public private(set) var spans: [Range<Int64>] = []
    static let mostSpans = 4_096
    /// The frames of the file it was read from (0: not known).
    public var fileFrames: Int64 = 0

    public init() {}

    public var isEmpty: Bool { spans.isEmpty }
    /// Samples that were not numbers (a frame read twice counts once).
    public var count: Int { spans.reduce(0) { $0 + $1.count } }

    /// Replaces each sample of `samples` (frames `first`…) that is not a
    /// number by 0, and notes it. Returns whether any was.
    @discardableResult
    public mutating func clean(_ samples: UnsafeMutablePointer<Float>, count frames: Int, from first: Int64) -> Bool {
        var found = false
        var run: Int?
        for index in 0...frames {
            let bad = index < frames && !samples[index].isFinite
            if bad {
                samples[index] = 0
                found = true
                if run == nil { run = index }
            } else if let start = run {
                note((first + Int64(start))..<(first + Int64(index)))
                run = nil
            }
        }
        return found
    }

    /// Notes the frames of `span` as damaged.
    public mutating func note(_ span: Range<Int64>) {
        guard !span.isEmpty else { return }
        // Read in order (the usual way): past the last, or touching it, at once.
        if let last = spans.last, last.lowerBound <= span.lowerBound {
            if span.lowerBound > last.upperBound {
                if spans.count < Self.mostSpans { spans.append(span) } else { spans[spans.count - 1] = last.lowerBound..<span.upperBound }
            } else if span.upperBound > last.upperBound {
                spans[spans.count - 1] = last.lowerBound..<span.upperBound
            }
            return
        }
        if spans.isEmpty {
            spans = [span]
            return
        }
        var merged = span
        var kept: [Range<Int64>] = []
        for existing in spans {
            if existing.upperBound < merged.lowerBound || existing.lowerBound > merged.upperBound {
                kept.append(existing)
            } else {
                merged = min(existing.lowerBound, merged.lowerBound)..<max(existing.upperBound, merged.upperBound)
            }
        }
        kept.append(merged)
        kept.sort { $0.lowerBound < $1.lowerBound }
        while kept.count > Self.mostSpans {
            let last = kept.removeLast()
            kept[kept.count - 1] = kept[kept.count - 1].lowerBound..<last.upperBound
        }
        spans = kept
    }

    /// Both noted.
    public mutating func note(_ other: SampleDamage) { for span in other.spans { note(span) } }

    /// "4,800 samples are not numbers (damaged audio) from 0:03.9 on; they
    /// are heard as silence" (a file all of whose frames are is said as such).
    public func describe(sampleRate: Int) -> String {
        guard let first = spans.first else { return "its audio is whole" }
        if fileFrames > 0, Int64(count) >= fileFrames { return "every sample of its audio is damaged (not a number): it is heard as silence" }
        let seconds = Double(first.lowerBound) / Double(max(1, sampleRate))
        let minutes = Int(seconds) / 60
        let rest = seconds - Double(minutes * 60)
        let at = "\(minutes):\(rest < 10 ? "0" : "")\(String(Int(rest * 10) / 10)).\(Int(rest * 10) % 10)"
        return "\(Self.grouped(count)) sample\(count == 1 ? " is" : "s are") damaged (not a number) from \(at) on; heard as silence there"
    }

    static func grouped(_ number: Int) -> String {
        let digits = String(number)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return out
    }
}
