import AcapellaDSP

/// Note names and cents for the needle.
public enum NoteName {
    static let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]

    /// "A4" for 440 Hz (nearest equal-tempered note).
    public static func nearest(_ frequency: Double) -> (name: String, midi: Int, cents: Double) {
        let exact = Tuning.midi(frequency: frequency)
        let midi = Int(exact.rounded())
        return (name(midi), midi, (exact - Double(midi)) * 100)
    }

    /// "C4" for MIDI 60.
    public static func name(_ midi: Int) -> String {
        names[((midi % 12) + 12) % 12] + String(midi / 12 - 1 - (midi < 0 && midi % 12 != 0 ? 1 : 0))
    }

    /// "F#" for pitch class 6 (0: C).
    public static func pitchClassName(_ pitchClass: Int) -> String { names[(pitchClass % 12 + 12) % 12] }

    /// Cents of `frequency` above MIDI note `midi` (negative: flat).
    public static func cents(_ frequency: Double, from midi: Int) -> Double {
        Tuning.cents(frequency, from: midi)
    }
}
