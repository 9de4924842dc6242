#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Equal temperament at A4 = 440 Hz: the one place a MIDI note becomes a
/// frequency (guide tones, the needle, the singer, `acapella pitch`).
public enum Tuning {
    /// A4.
    public static let concertA = 440.0

    /// The frequency of MIDI note `midi` (69 is A4).
    public static func frequency(midi: Int) -> Double {
        concertA * pow(2, Double(midi - 69) / 12)
    }

    /// `frequency` as a fractional MIDI note number (69.5 is a quarter tone above A4).
    public static func midi(frequency: Double) -> Double {
        69 + 12 * log2(frequency / concertA)
    }

    /// Cents of `frequency` above MIDI note `midi` (negative: flat).
    public static func cents(_ frequency: Double, from midi: Int) -> Double {
        100 * (self.midi(frequency: frequency) - Double(midi))
    }
}
