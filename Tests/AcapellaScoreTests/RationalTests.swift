@testable import AcapellaScore
import Testing

/// Exact fractions: sums and comparisons agree with cross-multiplication,
/// on the whole-number and equal-denominator shortcuts as on the general path.
@Suite struct RationalTests {
    @Test func sumsAndComparisonsAreExact() throws {
        var rng = SplitMix64(seed: 17)
        func random() -> Rational {
            let numerator = Int128(Int(rng.next() % 2_001) - 1_000)
            // Whole numbers a third of the time, small shared denominators often.
            let denominator = Int128([1, 1, 2, 3, 4, 6, 7, 12, 960, 10_080][Int(rng.next() % 10)])
            return Rational(numerator, denominator)
        }
        for _ in 0..<20_000 {
            let (a, b) = (random(), random())
            let sum = try a.adding(b)
            // a/b + c/d = (ad + cb) / bd, reduced by the initializer.
            #expect(sum == Rational(a.numerator * b.denominator + b.numerator * a.denominator, a.denominator * b.denominator))
            #expect(sum.denominator > 0)
            let cross = a.numerator * b.denominator - b.numerator * a.denominator
            #expect(a.compare(b) == (cross == 0 ? 0 : cross < 0 ? -1 : 1))
        }
        #expect(throws: Rational.Overflow.self) { try Rational(Int128.max, 1).adding(Rational(1)) }
        #expect(Rational(6, 1) == Rational(12, 2))
        #expect(Rational(-3, -6) == Rational(1, 2))
    }
}
