/// One byte range of a file asked for with HTTP's `Range` header (RFC 9110
/// §14): what lets a phone's player seek in a take — Safari on an iPhone
/// plays audio only from a server that answers ranges, and a player seeks
/// ("with the others" from a punch-in's measure, A/B in time) only in a
/// file whose server does.
public enum ByteRange {
    /// A range outside the file: answered 416 with the file's size.
    public struct Unsatisfiable: Error, Hashable, Sendable {}

    /// The bytes of a file of `size` bytes that `header` asks for: nil for
    /// the whole file (no header, or one this server does not take — several
    /// ranges, another unit, bad syntax — which the RFC lets it ignore).
    public static func parse(_ header: String?, size: Int) -> Result<ClosedRange<Int>?, Unsatisfiable> {
        guard let header, header.hasPrefix("bytes=") else { return .success(nil) }
        let spec = header.dropFirst("bytes=".count).trimmingSpaces
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .success(nil) }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        func number(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(text)
        }
        if first.isEmpty {
            // The last n bytes.
            guard let count = number(last) else { return .success(nil) }
            guard count > 0, size > 0 else { return .failure(Unsatisfiable()) }
            return .success(max(0, size - count)...(size - 1))
        }
        guard let start = number(first) else { return .success(nil) }
        let end: Int
        if last.isEmpty {
            end = size - 1
        } else {
            guard let asked = number(last), asked >= start else { return .success(nil) }
            end = min(asked, size - 1)
        }
        guard start < size else { return .failure(Unsatisfiable()) }
        return .success(start...end)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
