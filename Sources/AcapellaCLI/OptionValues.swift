public import AcapellaProject
public import AcapellaScore

/// An option whose value is one of a few words (`--tones include|omit`):
/// parsed once, refused in one line naming the words it takes.
public protocol ArgumentChoice: RawRepresentable, CaseIterable, Sendable where RawValue == String {}

/// `include` or `omit`.
public enum IncludeOmit: String, ArgumentChoice {
    case include, omit
    public var included: Bool { self == .include }
}

/// `on` or `off`.
public enum OnOff: String, ArgumentChoice {
    case on, off
    public var isOn: Bool { self == .on }
}

/// `stream` or `memory` (`--takes`).
public enum TakeLoadingChoice: String, ArgumentChoice {
    case stream, memory
    public var loading: TakeLoading { self == .stream ? .streamed() : .memory }
}

extension SessionUse: ArgumentChoice {}

extension ParsedArguments {
    /// The words an `ArgumentChoice` takes: "include or omit", "a, b or c".
    static func words<T: ArgumentChoice>(_ type: T.Type) -> String {
        let all = T.allCases.map(\.rawValue)
        return all.count <= 1 ? all.joined() : all.dropLast().joined(separator: ", ") + " or " + all.last!
    }

    /// The option's value as one of its words (nil: not given).
    public func choice<T: ArgumentChoice>(_ name: String, as type: T.Type = T.self) throws -> T? {
        guard let text = value(name) else { return nil }
        guard let chosen = T(rawValue: text) else { throw CLIError("\(name) expects \(Self.words(T.self)), not '\(text)'") }
        return chosen
    }

    /// The option's value as one of its words, `fallback` when not given.
    public func choice<T: ArgumentChoice>(_ name: String, default fallback: T) throws -> T {
        try choice(name) ?? fallback
    }

    /// Measures "5-8" (nil: not given); `offWord` (`off`) gives `.some(nil)`.
    public func measures(_ name: String, offWord: String? = nil) throws -> ClosedRange<Int>?? {
        guard let text = value(name) else { return nil }
        if let offWord, text == offWord { return .some(nil) }
        guard let range = MeasureRange.parse(text) else {
            throw CLIError("\(name) expects measures like 5-8\(offWord.map { ", or \($0)" } ?? ""), not '\(text)'")
        }
        return range
    }

    /// `--tempo`, the same in every command: a percent of the written
    /// tempo (90 or 90%) or, read the same, a multiplier (0.9) — a number
    /// under 10 is a multiplier (no tempo is under 10 % or over 4×).
    /// The multiplier in thousandths (900), within `percents`; nil: not given.
    public func tempoThousandths(_ name: String = "--tempo", percents: ClosedRange<Int>) throws -> Int? {
        guard let text = value(name) else { return nil }
        let refusal = CLIError("\(name) expects a tempo from \(percents.lowerBound) to \(percents.upperBound) % of the written one, like 90 (or 0.9), not '\(text)'")
        let percent = text.hasSuffix("%")
        guard let number = Tempo.thousandths(percent ? String(text.dropLast()).trimmingCharacters(in: .whitespaces) : text) else { throw refusal }
        let thousandths: Int
        if percent || number >= 10_000 {
            // A percent to a tenth: 90.5 % is 0.905.
            guard number % 100 == 0 else { throw refusal }
            thousandths = number / 100
        } else {
            thousandths = number
        }
        guard thousandths >= percents.lowerBound * 10, thousandths <= percents.upperBound * 10 else { throw refusal }
        return thousandths
    }

    /// `--tempo` as a multiplier, 25 to 400 % (nil: not given).
    public func tempoMultiplier(_ name: String = "--tempo") throws -> Rational? {
        try tempoThousandths(name, percents: 25...400).map { Rational(Int128($0), 1000) }
    }

    /// `--tempo` as a whole percent within `percents` (nil: not given).
    public func tempoPercent(_ name: String = "--tempo", percents: ClosedRange<Int>) throws -> Int? {
        guard let thousandths = try tempoThousandths(name, percents: percents) else { return nil }
        guard thousandths % 10 == 0 else { throw CLIError("\(name) expects a whole percent here (\(percents.lowerBound) to \(percents.upperBound)), not '\(value(name) ?? "")'") }
        return thousandths / 10
    }
}

/// Measures as written on the command line and on the page: "5-8".
public enum MeasureRange {
    /// "5-8" → 5...8; nil unless two whole numbers, the first ≤ the last, from 0.
    public static func parse(_ text: String) -> ClosedRange<Int>? {
        let pieces = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard pieces.count == 2, let first = pieces[0], let last = pieces[1], first >= 0, first <= last else { return nil }
        return first...last
    }
}

/// `acapella mix`'s options, as the one mix path takes them.
public enum MixCommandOptions {
    public static func parse(_ arguments: ParsedArguments) throws -> ProjectMixRequest {
        var request = ProjectMixRequest()
        if let lufs = arguments.value("--lufs") {
            guard let value = Double(lufs), value.isFinite, (-40.0...(-5.0)).contains(value) else {
                throw CLIError("--lufs expects a loudness from -40 to -5, not '\(lufs)'")
            }
            request.targetLUFS = value
        }
        request.includeTones = try arguments.choice("--tones", default: IncludeOmit.include).included
        if let part = arguments.value("--practice") { request.purpose = .practice(part: part) }
        if arguments.value("--take") != nil {
            guard request.purpose == .mix else { throw CLIError("--take and --practice: one or the other") }
            request.purpose = .takeWithOthers(take: try arguments.int("--take", default: 1, range: 1...(Manifest.maximumTakeID - 1)))
        }
        request.tempoScale = try arguments.tempoMultiplier()
        request.transpose = arguments.value("--transpose") == nil ? nil : try arguments.int("--transpose", default: 0, range: -24...24)
        request.session = try arguments.choice("--session", default: SessionUse.use)
        let bits = try arguments.int("--bits", default: 16, range: 16...24)
        guard bits == 16 || bits == 24 else { throw CLIError("--bits expects 16 or 24") }
        request.bits = bits
        request.includeReference = try arguments.choice("--reference", default: IncludeOmit.omit).included
        if let text = arguments.value("--verse") {
            guard let choice = VerseChoice(text) else { throw CLIError("--verse expects a verse number or all, not '\(text)'") }
            request.verse = choice
        }
        if request.includeReference && request.verse != nil { throw CLIError("--reference include plays the recording once, as it is; it cannot go with --verse") }
        return request
    }
}
