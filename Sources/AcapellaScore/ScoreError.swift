/// A problem with a score, with where it came from when that is known.
///
/// Rendered by `description` the way compilers do, so editors can jump to it:
/// `FILE:LINE:COL: error: MESSAGE (measure N)`.
public struct ScoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong and, where it helps, what was expected.
    public var message: String
    /// The file, when the score came from one.
    public var file: String?
    /// 1-based line, when known.
    public var line: Int?
    /// 1-based column in characters, when known.
    public var column: Int?
    /// The measure the problem is in, when it is in one.
    public var measure: Int?

    /// An error.
    public init(_ message: String, file: String? = nil, line: Int? = nil, column: Int? = nil, measure: Int? = nil) {
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.measure = measure
    }

    /// `FILE:LINE:COL: error: MESSAGE (measure N)`; parts that are unknown
    /// are left out.
    public var description: String {
        var origin = file ?? "<score>"
        if let line {
            origin += ":\(line)"
            if let column { origin += ":\(column)" }
        }
        let suffix = measure.map { " (measure \($0))" } ?? ""
        return "\(origin): error: \(message)\(suffix)"
    }
}

/// All the problems found in one score, in source order.
public struct ScoreErrors: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems; never empty when thrown.
    public var errors: [ScoreError]

    /// A list of problems.
    public init(_ errors: [ScoreError]) { self.errors = errors }

    /// One line per problem.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// Formats a tick length as a fraction of a whole note: 2880 → "3/4". With
/// `denominator`, in that note value when it divides evenly, the way a meter
/// reads: 7680 in quarters → "8/4", not "2".
func wholeNoteFraction(_ ticks: Int, denominator: Int? = nil) -> String {
    guard ticks != 0 else { return "0" }
    if let denominator, (ticks * denominator) % ticksPerWhole == 0 {
        return "\(ticks * denominator / ticksPerWhole)/\(denominator)"
    }
    var a = ticks
    var b = ticksPerWhole
    var x = abs(a)
    var y = b
    while y != 0 { (x, y) = (y, x % y) }
    a /= x
    b /= x
    return b == 1 ? "\(a)" : "\(a)/\(b)"
}
