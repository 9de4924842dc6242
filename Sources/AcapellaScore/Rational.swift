/// An exact fraction with 128-bit parts, always reduced, denominator > 0.
///
/// Musical time is converted to samples through this type so that no rounding
/// happens until the very last step: the sample a tick lands on is the exact
/// rational position rounded once, never a sum of rounded pieces.
public struct Rational: Hashable, Sendable, CustomStringConvertible {
    /// The reduced numerator; carries the sign.
    public let numerator: Int128
    /// The reduced denominator; always positive.
    public let denominator: Int128

    /// Arithmetic left the 128-bit range; callers turn this into a domain error.
    public struct Overflow: Error, Hashable, Sendable {}

    /// A whole number.
    public init(_ value: Int) {
        numerator = Int128(value)
        denominator = 1
    }

    /// Already reduced parts (denominator positive).
    init(reduced numerator: Int128, _ denominator: Int128) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// `numerator / denominator`, reduced. The denominator must not be zero.
    public init(_ numerator: Int128, _ denominator: Int128) {
        precondition(denominator != 0, "Rational with zero denominator")
        if denominator == 1 {
            self.numerator = numerator
            self.denominator = 1
            return
        }
        let divisor = Rational.gcd(numerator, denominator)
        let sign: Int128 = denominator < 0 ? -1 : 1
        self.numerator = sign * numerator / divisor
        self.denominator = sign * denominator / divisor
    }

    static func gcd(_ a: Int128, _ b: Int128) -> Int128 {
        var x = a.magnitude
        var y = b.magnitude
        while y != 0 { (x, y) = (y, x % y) }
        return x == 0 ? 1 : Int128(x)
    }

    static func checked(_ pair: (partialValue: Int128, overflow: Bool)) throws(Overflow) -> Int128 {
        if pair.overflow { throw Overflow() }
        return pair.partialValue
    }

    /// Exact sum, or `Overflow`.
    public func adding(_ other: Rational) throws(Overflow) -> Rational {
        // Whole numbers (most musical positions): no reduction needed.
        if denominator == 1 && other.denominator == 1 {
            return Rational(reduced: try Rational.checked(numerator.addingReportingOverflow(other.numerator)), 1)
        }
        let divisor = Rational.gcd(denominator, other.denominator)
        let left = try Rational.checked(numerator.multipliedReportingOverflow(by: other.denominator / divisor))
        let right = try Rational.checked(other.numerator.multipliedReportingOverflow(by: denominator / divisor))
        let sum = try Rational.checked(left.addingReportingOverflow(right))
        let commonDenominator = try Rational.checked(
            denominator.multipliedReportingOverflow(by: other.denominator / divisor))
        return Rational(sum, commonDenominator)
    }

    /// Exact product, or `Overflow`.
    public func multiplied(by other: Rational) throws(Overflow) -> Rational {
        let crossA = Rational.gcd(numerator, other.denominator)
        let crossB = Rational.gcd(other.numerator, denominator)
        let top = try Rational.checked(
            (numerator / crossA).multipliedReportingOverflow(by: other.numerator / crossB))
        let bottom = try Rational.checked(
            (denominator / crossB).multipliedReportingOverflow(by: other.denominator / crossA))
        return Rational(top, bottom)
    }

    /// Exact difference, or `Overflow`.
    public func subtracting(_ other: Rational) throws(Overflow) -> Rational {
        try adding(Rational(-other.numerator, other.denominator))
    }

    /// Zero.
    public static let zero = Rational(0)

    /// Whether the value is a whole number.
    public var isInteger: Bool { denominator == 1 }

    /// Sign of `self − other`: −1, 0 or 1. Exact when the difference fits in
    /// 128 bits, which it does for every musical quantity here; otherwise
    /// compared through their floors and then as doubles.
    public func compare(_ other: Rational) -> Int {
        if denominator == other.denominator { return numerator == other.numerator ? 0 : (numerator < other.numerator ? -1 : 1) }
        if let difference = try? subtracting(other) { return difference.numerator.signum() == 0 ? 0 : (difference.numerator < 0 ? -1 : 1) }
        if floor != other.floor { return floor < other.floor ? -1 : 1 }
        let left = Double(numerator) / Double(denominator)
        let right = Double(other.numerator) / Double(other.denominator)
        return left == right ? 0 : (left < right ? -1 : 1)
    }

    /// The largest integer not greater than the value.
    public var floor: Int128 {
        let quotient = numerator / denominator
        return (numerator % denominator != 0 && numerator < 0) ? quotient - 1 : quotient
    }

    /// Nearest integer; an exact half rounds up (towards +∞), so the rule is
    /// the same on both sides of sample 0.
    public var roundedHalfUp: Int128 {
        // floor(x + 1/2) = floor((2n + d) / 2d)
        Rational(2 * numerator + denominator, 2 * denominator).floor
    }

    public var description: String {
        denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)"
    }
}
