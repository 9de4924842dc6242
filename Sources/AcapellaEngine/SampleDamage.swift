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

    /// Notes the frames of `span` as damaged: merged with the spans it
    /// touches, found by a binary search (a section played again over
    /// damage already noted costs a search, no more).
    public mutating func note(_ span: Range<Int64>) {
        guard !span.isEmpty else { return }
        // The first span that ends at or after this one begins.
        var low = 0, high = spans.count
        while low < high {
            let middle = (low + high) / 2
            if spans[middle].upperBound < span.lowerBound { low = middle + 1 } else { high = middle }
        }
        if low < spans.count, spans[low].lowerBound <= span.lowerBound, spans[low].upperBound >= span.upperBound { return }
        var merged = span
        var end = low
        while end < spans.count, spans[end].lowerBound <= merged.upperBound {
            merged = min(spans[end].lowerBound, merged.lowerBound)..<max(spans[end].upperBound, merged.upperBound)
            end += 1
        }
        spans.replaceSubrange(low..<end, with: CollectionOfOne(merged))
        // Past the most kept: the last grows over what comes after it.
        while spans.count > Self.mostSpans {
            let last = spans.removeLast()
            spans[spans.count - 1] = spans[spans.count - 1].lowerBound..<last.upperBound
        }
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
